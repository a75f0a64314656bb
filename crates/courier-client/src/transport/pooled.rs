//! [`Pooled`]: the default transport as a concrete service, so the layers above it poll its
//! future in place rather than through a box of their own.

use super::connect::Connector;
use super::error::Missing;
use courier_core::{Body, BoxError, HttpService};
use http::header::{Entry, HOST};
use http::uri::Scheme;
use http::{HeaderValue, Request, Response};
use hyper_util::client::legacy::{Client, ResponseFuture};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A transport as the client's layers call it: the default one ([`Pooled`]) concretely, or any
/// other ([`Fetch`](courier_core::Fetch)) type-erased.
pub(crate) type TransportService = tower::util::Either<Pooled, HttpService>;

/// The same transport behind courier's type-erased [`HttpService`], as the public API hands it
/// out.
pub(crate) fn erase(transport: TransportService) -> HttpService {
    match transport {
        tower::util::Either::Left(pooled) => HttpService::new(pooled),
        tower::util::Either::Right(service) => service,
    }
}

/// hyper-util's pooled client over courier's [`Connector`], as a `tower::Service`: hyper's
/// `Incoming` body wrapped (still streaming) in [`Body`], hyper-util's error boxed whole so its
/// chain of causes stays intact. A clone is a reference count: the client sits behind an `Arc`.
#[derive(Clone)]
pub(crate) struct Pooled {
    client: Arc<Client<Connector, Body>>,
    /// Whether `http://` requests go over HTTP/1.1 (no HTTP/2 prior knowledge): then
    /// [`set_host`] names the host.
    plain_http1: bool,
}

impl Pooled {
    /// `client`, which speaks HTTP/2 with prior knowledge when `http2_only`.
    pub(crate) fn new(client: Client<Connector, Body>, http2_only: bool) -> Self {
        Self {
            client: Arc::new(client),
            plain_http1: !http2_only,
        }
    }
}

impl fmt::Debug for Pooled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").finish_non_exhaustive()
    }
}

impl tower::Service<Request<Body>> for Pooled {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = PooledFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // hyper-util's client is always ready: its pool waits inside the response future.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Body>) -> PooledFuture {
        // hyper-util spawns onto the current tokio runtime when the future is polled, and would
        // panic without one: fail the call instead.
        if tokio::runtime::Handle::try_current().is_err() {
            return PooledFuture { response: None };
        }
        if self.plain_http1 && request.uri().scheme() == Some(&Scheme::HTTP) {
            set_host(&mut request);
        }
        PooledFuture {
            response: Some(self.client.request(request)),
        }
    }
}

/// The response future of [`Pooled`].
pub(crate) struct PooledFuture {
    /// `None` when the call was made outside a tokio runtime.
    response: Option<ResponseFuture>,
}

impl Future for PooledFuture {
    type Output = Result<Response<Body>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(response) = &mut self.response else {
            return Poll::Ready(Err(Box::new(Missing(
                "the transport needs a tokio runtime",
            ))));
        };
        Pin::new(response).poll(cx).map(|result| match result {
            Ok(response) => Ok(response.map(Body::new)),
            Err(error) => Err(Box::new(error) as BoxError),
        })
    }
}

/// Names the host of an `http://` request sent over HTTP/1.1, unless it already has a `Host`
/// header: the URI's authority as it is, when it holds no user information and no port 80.
///
/// hyper-util adds the same header on an HTTP/1 connection (its `set_host`), from the host and
/// the port it parses out of the URI and formats again; the authority already is that text, so
/// this copies it. The one optimisation of the transport: leaving the header to hyper-util cost
/// 4.1 % of a call's instructions at concurrency 1 and at 64 (callgrind, `benches/client.rs`:
/// 38,870 → 40,470 and 42,930 → 44,700). Any other request (an authority
/// with `user@` or port 80, `https://`, whose connection may speak HTTP/2 by ALPN, or HTTP/2 with
/// prior knowledge, where `:authority` names the host) is left to hyper-util as before.
fn set_host(request: &mut Request<Body>) {
    let Some(authority) = request.uri().authority() else {
        return;
    };
    let text = authority.as_str();
    let bytes = text.as_bytes();
    // The port follows the last ':', unless a ']' closing an IPv6 address comes after it.
    let port = match bytes.iter().rposition(|&b| b == b':') {
        Some(colon) if !bytes[colon..].contains(&b']') => Some(&bytes[colon + 1..]),
        _ => None,
    };
    // An empty port, or 80 however written: hyper-util leaves either out of the header.
    let left_out = |port: &[u8]| {
        let digits = port
            .iter()
            .position(|&b| b != b'0')
            .map_or(&[][..], |i| &port[i..]);
        port.is_empty() || digits == b"80"
    };
    if bytes.contains(&b'@') || port.is_some_and(left_out) {
        return;
    }
    let Ok(value) = HeaderValue::from_str(text) else {
        return;
    };
    if let Entry::Vacant(entry) = request.headers_mut().entry(HOST) {
        entry.insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_set_for(uri: &str, host: Option<&str>) -> Option<String> {
        let mut request = Request::get(uri).body(Body::empty()).unwrap();
        if let Some(host) = host {
            request
                .headers_mut()
                .insert(HOST, HeaderValue::from_str(host).unwrap());
        }
        set_host(&mut request);
        request
            .headers()
            .get(HOST)
            .map(|value| value.to_str().unwrap().to_owned())
    }

    #[test]
    fn the_authority_names_the_host() {
        let cases = [
            ("http://127.0.0.1:8080/users/7", Some("127.0.0.1:8080")),
            ("http://example.com/", Some("example.com")),
            ("http://Example.COM:8000/a?b=c", Some("Example.COM:8000")),
            ("http://[::1]:9000/", Some("[::1]:9000")),
            ("http://[::1]/", Some("[::1]")),
        ];
        for (uri, host) in cases {
            assert_eq!(host_set_for(uri, None).as_deref(), host, "{uri}");
        }
    }

    #[test]
    fn what_hyper_util_would_write_otherwise_is_left_to_it() {
        for uri in [
            "http://example.com:80/",
            "http://example.com:0080/",
            "http://user:secret@example.com:8080/",
            "/relative",
        ] {
            assert_eq!(host_set_for(uri, None), None, "{uri}");
        }
    }

    #[test]
    fn a_host_the_caller_set_is_kept() {
        assert_eq!(
            host_set_for("http://127.0.0.1:8080/", Some("api.example.com")).as_deref(),
            Some("api.example.com")
        );
    }
}
