//! Which requests may share a call, and the key that says two of them are identical.

use crate::BufferedBody;
use bytes::Bytes;
use courier_core::{EndpointMeta, Kind};
use http::header::{ACCEPT, UPGRADE};
use http::{HeaderName, HeaderValue, Method, Request, Uri};

/// Per-request tracing headers: they name a request, never change its response.
pub(super) const TRACING_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("traceparent"),
    HeaderName::from_static("tracestate"),
];

/// Whether `request` is a read that may share a call: its `EndpointMeta` says it reads and
/// allows coalescing, or, without one, its method reads. A request for an event stream or a
/// protocol upgrade never shares: its response cannot be buffered and copied.
pub(super) fn may_share<B>(request: &Request<B>) -> bool {
    let reads = match request.extensions().get::<EndpointMeta>() {
        Some(meta) => meta.is_read() && meta.coalesce_value(),
        None => Kind::of_method(request.method()) == Kind::Query,
    };
    reads && !wants_stream(request)
}

fn wants_stream<B>(request: &Request<B>) -> bool {
    let headers = request.headers();
    headers.contains_key(UPGRADE)
        || headers.get_all(ACCEPT).iter().any(|accept| {
            accept
                .as_bytes()
                .windows(b"text/event-stream".len())
                .any(|window| window.eq_ignore_ascii_case(b"text/event-stream"))
        })
}

/// Everything that can change a read's response: method, full URI, headers (credentials
/// included) but the ignored ones, and body bytes.
///
/// Headers are sorted by name with a stable sort, so the order of different names does not
/// matter while the order of one name's values does, as on the wire.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    method: Method,
    uri: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
}

impl Key {
    /// The key of `request`, or `None` when its body is streamed: a streamed body cannot be
    /// compared, and is sent once, unshared.
    pub(super) fn of<B: BufferedBody>(
        request: &Request<B>,
        ignored: &[HeaderName],
    ) -> Option<Self> {
        let body = Bytes::copy_from_slice(request.body().buffered()?);
        let mut headers: Vec<_> = request
            .headers()
            .iter()
            .filter(|(name, _)| !ignored.contains(name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        headers.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
        Some(Self {
            method: request.method().clone(),
            uri: request.uri().clone(),
            headers,
            body,
        })
    }
}
