//! The key that says two requests are identical: what coalescing shares a call by and the
//! cache finds an answer by.

use http::header::{ACCEPT, UPGRADE};
use http::{HeaderName, HeaderValue, Request};
use std::fmt;
use std::hash::{Hash, Hasher};

/// Per-request tracing headers: they name a request, never change its response.
pub(crate) const TRACING_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("traceparent"),
    HeaderName::from_static("tracestate"),
];

/// Whether a request header asks for a response that cannot be read to its end and copied: an
/// event stream, or a protocol upgrade.
fn wants_stream(name: &HeaderName, value: &HeaderValue) -> bool {
    name == UPGRADE
        || name == ACCEPT
            && value
                .as_bytes()
                .windows(b"text/event-stream".len())
                .any(|window| window.eq_ignore_ascii_case(b"text/event-stream"))
}

/// Everything that can change a read's response: method, full URI, headers (credentials
/// included) but the ignored ones, and body bytes, written into one buffer that compares as
/// bytes.
///
/// Headers are written in the order of their names, the values of one name in their own order,
/// so the order of different names does not matter while the order of one name's values does,
/// as on the wire.
///
/// The buffer starts with what is cheap to hash and tells one service's reads apart: the
/// method, the path and query, and the body's length. That part is [hashed](Key::hash) to find
/// a call in flight; the scheme and authority (the same for every read of an endpoint, almost
/// always), the body and the headers follow, and the whole buffer is compared on a hash hit, so
/// a hash collision never shares a call.
#[derive(PartialEq, Eq)]
pub(crate) struct Key {
    bytes: Vec<u8>,
    /// How much of `bytes` is hashed.
    hashed: usize,
}

/// Every field is written as its length (four bytes: a field of 4 GiB or more is never keyed)
/// then its bytes, so that no two different requests write the same bytes. An absent URI part
/// is written as this length, which no keyed field has.
const ABSENT: u32 = u32::MAX;

impl Key {
    /// The key of `request`, whose body is `body`; `None` when a header asks for an event
    /// stream or a protocol upgrade, whose response cannot be shared, or when a field is 4 GiB
    /// or longer (such a read is sent unshared).
    pub(crate) fn new<B>(
        request: &Request<B>,
        body: &[u8],
        ignored: &[HeaderName],
    ) -> Option<Self> {
        let mut headers = Vec::with_capacity(request.headers().len());
        for (name, value) in request.headers() {
            if wants_stream(name, value) {
                return None;
            }
            if !ignored.contains(name) {
                headers.push((name, value));
            }
        }
        // Stable: the values of one name keep their order.
        headers.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));

        let uri = request.uri();
        // Sized once: each field is its length (4 bytes) and its bytes.
        let path = uri.path_and_query().map_or(0, |p| p.as_str().len());
        let authority = uri.authority().map_or(0, |a| a.as_str().len());
        let headers_len: usize = headers
            .iter()
            .map(|(name, value)| 8 + name.as_str().len() + value.len())
            .sum();
        let mut key = Writer(Vec::with_capacity(
            24 + request.method().as_str().len()
                + path
                + uri.scheme_str().map_or(0, str::len)
                + authority
                + body.len()
                + headers_len,
        ));
        key.field(request.method().as_str().as_bytes())?;
        key.optional(uri.path_and_query().map(|p| p.as_str().as_bytes()))?;
        key.len(body.len())?;
        let hashed = key.0.len();
        key.optional(uri.scheme_str().map(str::as_bytes))?;
        key.optional(uri.authority().map(|a| a.as_str().as_bytes()))?;
        key.0.extend_from_slice(body);
        for (name, value) in headers {
            key.field(name.as_str().as_bytes())?;
            key.field(value.as_bytes())?;
        }
        Some(Self {
            bytes: key.0,
            hashed,
        })
    }

    /// The hash a call with this key is found by: of the method, path and query, and body
    /// length, written at the start of the key, hashed in one go.
    #[cfg(feature = "coalesce")]
    pub(crate) fn hash(&self, hasher: &impl std::hash::BuildHasher) -> u64 {
        let mut state = hasher.build_hasher();
        state.write(&self.bytes[..self.hashed]);
        state.finish()
    }

    /// The key of `request`, or `None` when its body is streamed (a streamed body cannot be
    /// compared, and is sent once, unshared) or it asks for a stream.
    #[cfg(test)]
    pub(crate) fn of<B: crate::BufferedBody>(
        request: &Request<B>,
        ignored: &[HeaderName],
    ) -> Option<Self> {
        Self::new(request, request.body().buffered()?.as_ref(), ignored)
    }
}

impl Hash for Key {
    /// The start of the key only, as [`Key::hash`]: equal keys have equal starts.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(&self.bytes[..self.hashed]);
    }
}

#[cfg(feature = "cache")]
impl Key {
    /// The key's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Key")
            .field(&String::from_utf8_lossy(&self.bytes))
            .finish()
    }
}

/// Writes a key's fields.
struct Writer(Vec<u8>);

impl Writer {
    /// Writes a length; `None` for one of 4 GiB or more.
    fn len(&mut self, len: usize) -> Option<()> {
        let len = u32::try_from(len).ok().filter(|&len| len != ABSENT)?;
        self.0.extend_from_slice(&len.to_ne_bytes());
        Some(())
    }

    fn field(&mut self, bytes: &[u8]) -> Option<()> {
        self.len(bytes.len())?;
        self.0.extend_from_slice(bytes);
        Some(())
    }

    fn optional(&mut self, bytes: Option<&[u8]>) -> Option<()> {
        match bytes {
            Some(bytes) => self.field(bytes),
            None => {
                self.0.extend_from_slice(&ABSENT.to_ne_bytes());
                Some(())
            }
        }
    }
}
