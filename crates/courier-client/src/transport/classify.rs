//! [`classify`]: which kind of network failure an error from the transport is.

use super::connect::{ConnectTimeout, DnsError};
use super::pool::ConnectFailed;
use courier_core::BoxError;
use std::error::Error as StdError;
use std::fmt;
use std::io;

/// The kind of network failure behind a transport error, as [`classify`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NetworkErrorKind {
    /// No connection could be made: refused, unreachable, or a proxy that would not tunnel.
    Connect,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake or session failed: an untrusted or invalid certificate, a refused
    /// client certificate, a peer that does not speak TLS.
    Tls,
    /// The peer closed or reset the connection before a complete response arrived.
    Reset,
    /// A time limit of the transport ran out: `connect_timeout`, or the operating system's own
    /// connect timeout.
    Timeout,
    /// Anything else: a protocol error, a body error, an error not from the transport.
    Other,
}

impl NetworkErrorKind {
    /// A short lowercase name: `connect`, `dns`, `tls`, `reset`, `timeout`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Reset => "reset",
            Self::Timeout => "timeout",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for NetworkErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How deep the chain walk goes; real chains are under ten links.
const MAX_DEPTH: usize = 64;

/// Tells which kind of network failure `err` is, by walking its chain of causes from the outside
/// in.
///
/// The first cause that decides the matter wins: our connect timeout or an `io::ErrorKind::TimedOut`
/// is [`Timeout`](NetworkErrorKind::Timeout); a name that did not resolve is
/// [`Dns`](NetworkErrorKind::Dns); a `rustls::Error` is [`Tls`](NetworkErrorKind::Tls); a
/// connection reset, aborted, broken pipe or unexpected end of file, or hyper's "connection closed
/// before the message completed", is [`Reset`](NetworkErrorKind::Reset); a refused connection is
/// [`Connect`](NetworkErrorKind::Connect). When nothing decides, an error hyper-util marks as a
/// connect error is [`Connect`](NetworkErrorKind::Connect), and anything else
/// [`Other`](NetworkErrorKind::Other).
///
/// A peer that accepts and then drops the connection is `Reset` whether the client reads an end of
/// file (hyper's incomplete message) or a TCP reset: which one arrives depends on timing, and to a
/// caller both mean the peer hung up mid-exchange.
///
/// `std::io::Error` hides the error it wraps from `source()`, so the walk looks inside it with
/// `get_ref()`; that is where rustls's errors sit.
///
/// ```
/// use courier::error::{classify, NetworkErrorKind};
/// use courier::transport::{Body, Transport};
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let transport = Transport::new().build()?;
/// let request = http::Request::get("http://nonexistent.invalid/").body(Body::empty())?;
/// let err = transport.oneshot(request).await.unwrap_err();
/// assert_eq!(classify(&err), NetworkErrorKind::Dns);
/// # Ok(())
/// # }
/// ```
pub fn classify(err: &BoxError) -> NetworkErrorKind {
    let mut connect = false;
    let mut current: Option<&(dyn StdError + 'static)> = Some(&**err);
    for _ in 0..MAX_DEPTH {
        let Some(error) = current else { break };
        if let Some(kind) = decide(error, &mut connect) {
            return kind;
        }
        current = next(error);
    }
    if connect {
        NetworkErrorKind::Connect
    } else {
        NetworkErrorKind::Other
    }
}

/// The kind this one link decides, if it decides one; notes a generic connect error on the way.
fn decide(error: &(dyn StdError + 'static), connect: &mut bool) -> Option<NetworkErrorKind> {
    if error.is::<ConnectTimeout>() || error.is::<tokio::time::error::Elapsed>() {
        return Some(NetworkErrorKind::Timeout);
    }
    if error.is::<DnsError>() {
        return Some(NetworkErrorKind::Dns);
    }
    if error.is::<rustls::Error>() {
        return Some(NetworkErrorKind::Tls);
    }
    if let Some(error) = error.downcast_ref::<io::Error>() {
        if is_rustls_text(error) {
            return Some(NetworkErrorKind::Tls);
        }
        return io_kind(error.kind());
    }
    if let Some(error) = error.downcast_ref::<hyper::Error>() {
        if error.is_incomplete_message() {
            return Some(NetworkErrorKind::Reset);
        }
        if error.is_timeout() {
            return Some(NetworkErrorKind::Timeout);
        }
        return None;
    }
    if let Some(error) = error.downcast_ref::<hyper_util::client::legacy::Error>() {
        *connect |= error.is_connect();
    }
    *connect |= error.is::<ConnectFailed>();
    None
}

fn io_kind(kind: io::ErrorKind) -> Option<NetworkErrorKind> {
    use io::ErrorKind as K;
    match kind {
        K::TimedOut => Some(NetworkErrorKind::Timeout),
        K::ConnectionRefused
        | K::HostUnreachable
        | K::NetworkUnreachable
        | K::AddrNotAvailable
        | K::NetworkDown => Some(NetworkErrorKind::Connect),
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            Some(NetworkErrorKind::Reset)
        }
        _ => None,
    }
}

/// The h2 crate keeps only the kind and message of an I/O error, so on an HTTP/2 connection a TLS
/// alert received after the handshake (how a TLS 1.3 server refuses a client certificate) reaches
/// us as `io::Error(InvalidData, text)`. rustls wraps its errors with that kind, so an
/// `InvalidData` error holding bare text in one of rustls's wordings is taken for one. Typed
/// errors never get here: a wrapped `rustls::Error` is found by type first.
fn is_rustls_text(error: &io::Error) -> bool {
    const RUSTLS_MESSAGES: &[&str] = &[
        "received fatal alert: ",
        "invalid peer certificate: ",
        "peer is incompatible: ",
        "peer misbehaved: ",
        "received corrupt message",
        "peer sent no certificates",
        "cannot decrypt peer's message",
        "peer sent excess record size",
        "peer doesn't support any known protocol",
    ];
    if error.kind() != io::ErrorKind::InvalidData {
        return false;
    }
    let Some(inner) = error.get_ref() else {
        return false;
    };
    if inner.is::<rustls::Error>() || inner.is::<io::Error>() || inner.source().is_some() {
        return false;
    }
    let text = inner.to_string();
    RUSTLS_MESSAGES.iter().any(|m| text.starts_with(m))
}

/// The next link: the error an `io::Error` wraps, else `source()`.
fn next<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    if let Some(io) = error.downcast_ref::<io::Error>() {
        if let Some(inner) = io.get_ref() {
            return Some(inner as &(dyn StdError + 'static));
        }
    }
    error.source()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(e: impl StdError + Send + Sync + 'static) -> BoxError {
        Box::new(e)
    }

    #[test]
    fn io_kinds() {
        let of = |kind| classify(&boxed(io::Error::from(kind)));
        assert_eq!(
            of(io::ErrorKind::ConnectionRefused),
            NetworkErrorKind::Connect
        );
        assert_eq!(of(io::ErrorKind::ConnectionReset), NetworkErrorKind::Reset);
        assert_eq!(of(io::ErrorKind::UnexpectedEof), NetworkErrorKind::Reset);
        assert_eq!(of(io::ErrorKind::TimedOut), NetworkErrorKind::Timeout);
        assert_eq!(of(io::ErrorKind::InvalidData), NetworkErrorKind::Other);
    }

    #[test]
    fn rustls_error_inside_nested_io_errors() {
        // The shape tokio-rustls and hyper-rustls give a failed handshake: io(other, io(InvalidData,
        // rustls::Error)).
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let inner = io::Error::new(io::ErrorKind::InvalidData, tls);
        let outer = io::Error::other(inner);
        assert_eq!(classify(&boxed(outer)), NetworkErrorKind::Tls);
    }

    #[test]
    fn rustls_text_from_h2_is_tls() {
        let text =
            rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired).to_string();
        let flattened = io::Error::new(io::ErrorKind::InvalidData, text.clone());
        assert_eq!(classify(&boxed(flattened)), NetworkErrorKind::Tls);
        // The same words under another kind, or from anything but a flattened error, are not.
        let other_kind = io::Error::other(text);
        assert_eq!(classify(&boxed(other_kind)), NetworkErrorKind::Other);
        let unrelated = io::Error::new(io::ErrorKind::InvalidData, "bad frame");
        assert_eq!(classify(&boxed(unrelated)), NetworkErrorKind::Other);
    }

    #[test]
    fn our_causes_are_recognised() {
        let timeout = ConnectTimeout {
            timeout: std::time::Duration::from_millis(5),
        };
        assert_eq!(classify(&boxed(timeout)), NetworkErrorKind::Timeout);
        assert_eq!(
            classify(&boxed(io::Error::other("plain"))),
            NetworkErrorKind::Other
        );
    }

    #[test]
    fn display_names() {
        assert_eq!(NetworkErrorKind::Tls.to_string(), "tls");
        assert_eq!(NetworkErrorKind::Connect.as_str(), "connect");
    }
}
