//! The pieces of the connector that hyper-util does not provide as we want them: a resolver whose
//! failures can be told apart, one shared connector for direct and tunnelled connections with a
//! timeout over the whole connect, and the proxy URI checks.

use super::error::TransportError;
use courier_core::BoxError;
use http::uri::{Authority, Uri};
use hyper_rustls::MaybeHttpsStream;
use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use hyper_util::rt::TokioIo;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use std::{fmt, io};
use tokio::net::TcpStream;
use tower::{Service, ServiceExt};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A host name that did not resolve. hyper-util's own DNS error is a private type known only by
/// its message, so the resolver wraps `getaddrinfo`'s error in this type, which
/// [`classify`](crate::classify) can recognise.
#[derive(Debug)]
pub(crate) struct DnsError {
    name: Box<str>,
    source: Option<io::Error>,
}

impl fmt::Display for DnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Some(_) => write!(f, "could not resolve host `{}`", self.name),
            None => write!(
                f,
                "host `{}` is under the reserved `.invalid` domain (RFC 6761) and never resolves",
                self.name
            ),
        }
    }
}

impl StdError for DnsError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// `getaddrinfo` on hyper-util's thread pool, answering names under `.invalid` with an immediate
/// failure as RFC 6761 §6.4 asks of resolver libraries: such a name never resolves, so no query
/// leaves the machine for it.
#[derive(Clone, Debug)]
pub(crate) struct Resolver {
    gai: GaiResolver,
}

impl Resolver {
    pub(crate) fn new() -> Self {
        Self {
            gai: GaiResolver::new(),
        }
    }
}

fn is_reserved_invalid(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    let tail = name.rsplit('.').next().unwrap_or(name);
    tail.eq_ignore_ascii_case("invalid")
}

impl Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = DnsError;
    type Future = BoxFuture<Result<Self::Response, DnsError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), DnsError>> {
        // Each call readies its own clone of the resolver (`oneshot`), so there is nothing to wait
        // for here.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let host: Box<str> = name.as_str().into();
        if is_reserved_invalid(&host) {
            return Box::pin(async move {
                Err(DnsError {
                    name: host,
                    source: None,
                })
            });
        }
        let gai = self.gai.clone();
        Box::pin(async move {
            match gai.oneshot(name).await {
                Ok(addrs) => Ok(addrs.collect::<Vec<_>>().into_iter()),
                Err(source) => Err(DnsError {
                    name: host,
                    source: Some(source),
                }),
            }
        })
    }
}

/// The connect did not finish within `connect_timeout`: TCP connect, proxy tunnel and TLS
/// handshake together.
#[derive(Debug)]
pub(crate) struct ConnectTimeout {
    pub(crate) timeout: Duration,
}

impl fmt::Display for ConnectTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connect timed out after {:?}", self.timeout)
    }
}

impl StdError for ConnectTimeout {}

/// What every connector of the default transport hands back: TCP, or TLS over TCP, possibly
/// through a proxy's tunnel.
pub(crate) type Stream = MaybeHttpsStream<TokioIo<TcpStream>>;

/// The connector of the default transport: the TLS connector over TCP or over a proxy's tunnel,
/// with the connect timeout over the whole connect, shared behind an `Arc`.
///
/// Each connect clones the connector (a `tower` connector is called by value), so a clone here
/// is one reference count however much the connector holds (TLS settings, resolver, proxy). The direct and the tunnelled connector are
/// one type, so the transport over either is one type too.
///
/// The timeout bounds the whole connect. hyper-util's own `set_connect_timeout` bounds only the
/// TCP connect, split across the addresses tried; a TLS handshake or a proxy that never answers
/// would still hang.
#[derive(Clone)]
pub(crate) struct Connector {
    dial: Arc<dyn Dial>,
    timeout: Option<Duration>,
}

/// A connector called through a shared reference, by cloning it first.
trait Dial: Send + Sync {
    fn dial(&self, dst: Uri) -> BoxFuture<Result<Stream, BoxError>>;
}

impl<C> Dial for C
where
    C: Service<Uri, Response = Stream> + Clone + Send + Sync + 'static,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    fn dial(&self, dst: Uri) -> BoxFuture<Result<Stream, BoxError>> {
        let connector = self.clone();
        Box::pin(async move { connector.oneshot(dst).await.map_err(Into::into) })
    }
}

impl Connector {
    pub(crate) fn new<C>(connector: C, timeout: Option<Duration>) -> Self
    where
        C: Service<Uri, Response = Stream> + Clone + Send + Sync + 'static,
        C::Error: Into<BoxError>,
        C::Future: Send + 'static,
    {
        Self {
            dial: Arc::new(connector),
            timeout,
        }
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Service<Uri> for Connector {
    type Response = Stream;
    type Error = BoxError;
    type Future = BoxFuture<Result<Stream, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Each connect readies its own clone of the connector.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let connecting = self.dial.dial(dst);
        match self.timeout {
            None => connecting,
            Some(timeout) => Box::pin(async move {
                match tokio::time::timeout(timeout, connecting).await {
                    Ok(result) => result,
                    Err(_elapsed) => Err(Box::new(ConnectTimeout { timeout }) as BoxError),
                }
            }),
        }
    }
}

/// Checks that a proxy URI is `http://host:port` (no credentials, path or query).
///
/// The port is required: proxies have no agreed default (curl assumes 1080, others 80 or 8080).
pub(crate) fn check_proxy(uri: &Uri) -> Result<(), TransportError> {
    let fail = |reason| {
        Err(TransportError::Proxy {
            uri: uri.clone(),
            reason,
        })
    };
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") => return fail("TLS to the proxy is not supported; use http://"),
        Some(_) => return fail("the scheme must be http://"),
        None => return fail("the scheme http:// is missing"),
    }
    let Some(authority) = uri.authority() else {
        return fail("the host is missing");
    };
    if authority.as_str().contains('@') {
        return fail("credentials in the proxy URI are not supported");
    }
    if authority.host().is_empty() {
        return fail("the host is missing");
    }
    if authority.port_u16().is_none() {
        return fail("the port is missing");
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return fail("a proxy URI has no path or query");
    }
    Ok(())
}

/// The destination with its port made explicit (80 for `http`, 443 otherwise): hyper-util's
/// `Tunnel` sends `CONNECT host:443` whenever the URI has no port, which is wrong for `http://`.
pub(crate) fn with_default_port(uri: Uri) -> Uri {
    if uri.port().is_some() {
        return uri;
    }
    let port = if uri.scheme_str() == Some("http") {
        80
    } else {
        443
    };
    let Some(host) = uri.host() else {
        return uri;
    };
    let Ok(authority) = Authority::try_from(format!("{host}:{port}")) else {
        return uri;
    };
    let mut parts = uri.clone().into_parts();
    parts.authority = Some(authority);
    Uri::from_parts(parts).unwrap_or(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy_reason(uri: &str) -> Option<&'static str> {
        match check_proxy(&uri.parse().unwrap()) {
            Ok(()) => None,
            Err(TransportError::Proxy { reason, .. }) => Some(reason),
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn proxy_must_be_http_host_port() {
        assert_eq!(proxy_reason("http://127.0.0.1:3128"), None);
        assert_eq!(proxy_reason("http://proxy.example:8080/"), None);
        assert_eq!(proxy_reason("http://[::1]:3128"), None);
        assert!(proxy_reason("https://proxy.example:8443").is_some());
        assert!(proxy_reason("socks5://proxy.example:1080").is_some());
        assert!(proxy_reason("proxy.example:8080").is_some());
        assert_eq!(
            proxy_reason("http://proxy.example"),
            Some("the port is missing")
        );
        assert!(proxy_reason("http://user:pw@proxy.example:8080").is_some());
        assert!(proxy_reason("http://proxy.example:8080/path").is_some());
        assert!(proxy_reason("http://proxy.example:8080/?q=1").is_some());
        assert!(proxy_reason("/just/a/path").is_some());
    }

    #[test]
    fn default_port_follows_the_scheme() {
        let port = |uri: &str| with_default_port(uri.parse().unwrap()).port_u16();
        assert_eq!(port("http://example.com/a?b"), Some(80));
        assert_eq!(port("https://example.com/a"), Some(443));
        assert_eq!(port("http://example.com:8080/"), Some(8080));
        assert_eq!(port("https://[::1]/"), Some(443));
        assert_eq!(
            with_default_port("http://example.com/a?b".parse().unwrap()).to_string(),
            "http://example.com:80/a?b"
        );
    }

    #[test]
    fn invalid_domain_is_reserved() {
        assert!(is_reserved_invalid("nonexistent.invalid"));
        assert!(is_reserved_invalid("a.b.INVALID."));
        assert!(is_reserved_invalid("invalid"));
        assert!(!is_reserved_invalid("invalid.example.com"));
        assert!(!is_reserved_invalid("example.com"));
    }

    #[tokio::test]
    async fn reserved_names_fail_without_a_lookup() {
        let name: Name = "nonexistent.invalid".parse().unwrap();
        let err = Resolver::new().oneshot(name).await.unwrap_err();
        assert!(err.to_string().contains("RFC 6761"), "{err}");
        assert!(err.source().is_none());
    }
}
