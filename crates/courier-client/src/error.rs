//! [`Error`]: everything a call can fail with, one type; [`HttpError`]: a response with status
//! 400 or above.

use crate::transport::{classify, NetworkErrorKind, TransportError};
use courier_core::{BoxError, ConfigurationError, RequestError};
use courier_layers::cancel_previous::error::Cancelled;
use courier_layers::session::error::SessionRefused;
use courier_layers::shed::Overloaded;
use courier_layers::timeout::error::Elapsed;
use http::{HeaderMap, Method, StatusCode, Uri};
use serde_json::Value;
use std::fmt;

/// A response with status 400 or above (the browser package's `HTTPError`): its status, headers
/// and body, parsed as JSON when it parses, else kept as text.
#[derive(Clone, Debug)]
pub struct HttpError {
    /// The status code.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body: JSON when it parses, else a JSON string of its text (`null` when empty).
    pub data: Value,
}

impl HttpError {
    /// Reads a failed response's body: JSON when it parses, else text.
    pub fn from_parts(status: StatusCode, headers: HeaderMap, body: &[u8]) -> Self {
        let data = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
        };
        Self {
            status,
            headers,
            data,
        }
    }
}

/// The [`HttpError`] a direct caller sees for a call a layer refused itself: no response came,
/// so its headers are empty and its data is `{"error": {"code", "message"}}` — the value a
/// proxied call of the same endpoint resolves to, since the proxy answers the refusal so.
fn refusal(refused: &Refused) -> HttpError {
    let mut headers = HeaderMap::new();
    if let Some(secs) = refused.retry_after_secs() {
        headers.insert(http::header::RETRY_AFTER, secs.into());
    }
    HttpError {
        status: refused.status(),
        headers,
        data: courier_core::wire::error_body(refused.code(), &refused.message()),
    }
}

/// A call a layer of the stack refused itself, before anything was sent: what
/// [`Error::refused`] gives, typed. A direct caller sees it as an [`HttpError`] (499, 403, or
/// 503 with `Retry-After`); a proxy answers it in its own words.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Refused {
    /// A newer call of the same read cancelled it (`CancelPreviousLayer`): 499.
    ByNewerCall(Cancelled),
    /// The session's checks refused it (`SessionLayer`): 403.
    Session(SessionRefused),
    /// The source had as many calls in flight as its `max_in_flight` allows (`ShedLayer`):
    /// 503, to be tried again after its `Retry-After`.
    Overloaded(Overloaded),
}

impl Refused {
    /// The status the refusal is answered with: 499, 403 or 503.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::ByNewerCall(cancelled) => cancelled.status(),
            Self::Session(refused) => refused.status(),
            Self::Overloaded(overloaded) => overloaded.status(),
        }
    }

    /// Its stable code: `CANCELLED_BY_NEWER_CALL`, the session's (`CSRF_CHECK_FAILED`,
    /// `ORIGIN_NOT_TRUSTED`, …), or `UPSTREAM_OVERLOADED`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ByNewerCall(_) => "CANCELLED_BY_NEWER_CALL",
            Self::Session(refused) => refused.reason().code(),
            Self::Overloaded(_) => "UPSTREAM_OVERLOADED",
        }
    }

    /// The refusal in one sentence.
    pub fn message(&self) -> String {
        match self {
            Self::ByNewerCall(cancelled) => cancelled.to_string(),
            Self::Session(refused) => refused.to_string(),
            Self::Overloaded(overloaded) => overloaded.to_string(),
        }
    }

    /// The seconds the caller is asked to wait before calling again (`Retry-After`), for a
    /// refusal that names them.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Self::Overloaded(overloaded) => Some(overloaded.retry_after_secs()),
            Self::ByNewerCall(_) | Self::Session(_) => None,
        }
    }

    /// `error` itself, when it is a layer's refusal.
    fn of(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        if let Some(cancelled) = error.downcast_ref::<Cancelled>() {
            return Some(Self::ByNewerCall(cancelled.clone()));
        }
        if let Some(overloaded) = error.downcast_ref::<Overloaded>() {
            return Some(Self::Overloaded(overloaded.clone()));
        }
        error
            .downcast_ref::<SessionRefused>()
            .map(|refused| Self::Session(refused.clone()))
    }

    /// The layer's refusal in the error chain of `error`, if any.
    fn find(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        std::iter::successors(Some(error), |e| e.source()).find_map(Self::of)
    }
}

/// Why a call failed. Nothing here is lost: the underlying error is kept as the
/// [`source`](std::error::Error::source).
///
/// Its message names the endpoint, the request's method and address when one was sent (without
/// the query, which may carry a key: [`url`](Error::url) has it whole), what went wrong, and its
/// cause — for a network failure or a timeout the innermost one, once, the transport's links
/// between staying on the `source` chain:
///
/// ```text
/// `todos.get`: GET http://127.0.0.1:9/todos/7: network error (connect): Connection refused (os error 111)
/// ```
///
/// Like reqwest's and hyper-util's errors, it is one type with predicates:
///
/// | predicate | the call failed because | [`status_code`](Error::status_code) |
/// |---|---|---|
/// | [`is_http`](Error::is_http) | the server answered 400 or above; [`http_error`](Error::http_error) has the response | the status |
/// | [`is_network`](Error::is_network) | no response: refused, reset, DNS, TLS ([`network`](Error::network) says which) | `0` |
/// | [`is_timeout`](Error::is_timeout) | a timeout elapsed (call, endpoint or source) | `0` |
/// | [`is_cancelled`](Error::is_cancelled) | a `signal` was cancelled | `0` |
/// | [`is_decode`](Error::is_decode) | the response did not fit the call's type | the status |
/// | [`is_configuration`](Error::is_configuration) | the definition or the call's variables cannot be used; nothing was sent | `0` |
/// | [`is_protocol`](Error::is_protocol) | a stream or channel server broke its protocol | the status |
/// | [`is_closed`](Error::is_closed) | the server closed a channel for good ([`close`](Error::close) says how) | `0` |
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: Kind,
    endpoint: Option<String>,
    /// The method and address of the request sent, once it was built.
    request: Option<(Method, Uri)>,
    source: Option<BoxError>,
}

#[derive(Debug)]
enum Kind {
    Http(HttpError),
    Network(NetworkErrorKind),
    Timeout,
    Cancelled,
    Decode(StatusCode),
    Configuration(Option<ConfigurationError>),
    Protocol(StatusCode),
    Closed(Close),
}

/// How the server closed a channel for good: the WebSocket close code and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Close {
    /// The close code (RFC 6455, section 7.4).
    pub code: u16,
    /// The reason the server gave, possibly empty.
    pub reason: String,
}

impl Error {
    fn new(kind: Kind, source: Option<BoxError>) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                endpoint: None,
                request: None,
                source,
            }),
        }
    }

    pub(crate) fn from_http(error: HttpError) -> Self {
        Self::new(Kind::Http(error), None)
    }

    /// A network failure: its kind is read off the error's cause chain.
    pub(crate) fn from_network(source: BoxError) -> Self {
        let kind = classify(&source);
        if kind == NetworkErrorKind::Timeout {
            return Self::new(Kind::Timeout, Some(source));
        }
        Self::new(Kind::Network(kind), Some(source))
    }

    /// An error from an endpoint's service stack: a layer's own refusal (cancelled by a newer
    /// call: HTTP 499; refused by the session's write checks: HTTP 403; over the source's
    /// `max_in_flight`: HTTP 503), an attempt's timeout,
    /// or a network failure; anything else a layer raises counts as a network failure of kind
    /// [`NetworkErrorKind::Other`] (no response came).
    pub(crate) fn from_stack(source: BoxError) -> Self {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&*source);
        while let Some(error) = current {
            if let Some(refused) = Refused::of(error) {
                let http = refusal(&refused);
                return Self::new(Kind::Http(http), Some(source));
            }
            if error.is::<Elapsed>() {
                return Self::new(Kind::Timeout, Some(source));
            }
            current = error.source();
        }
        Self::from_network(source)
    }

    /// The layer's refusal this call failed with, typed (its status, code and message), when a
    /// layer of the stack refused it before anything was sent.
    pub fn refused(&self) -> Option<Refused> {
        self.inner
            .source
            .as_deref()
            .and_then(|source| Refused::find(source))
    }

    pub(crate) fn timeout() -> Self {
        Self::new(Kind::Timeout, None)
    }

    /// A deadline or bound that ran out, saying which and how long.
    pub(crate) fn elapsed(elapsed: Elapsed) -> Self {
        Self::new(Kind::Timeout, Some(Box::new(elapsed)))
    }

    pub(crate) fn cancelled() -> Self {
        Self::new(Kind::Cancelled, None)
    }

    pub(crate) fn decode(status: StatusCode, source: impl Into<BoxError>) -> Self {
        Self::new(Kind::Decode(status), Some(source.into()))
    }

    pub(crate) fn request(source: RequestError) -> Self {
        Self::new(Kind::Configuration(None), Some(Box::new(source)))
    }

    pub(crate) fn variables(source: serde_json::Error) -> Self {
        Self::new(Kind::Configuration(None), Some(Box::new(source)))
    }

    pub(crate) fn path_options(source: BoxError) -> Self {
        Self::new(Kind::Configuration(None), Some(source))
    }

    pub(crate) fn transport(source: TransportError) -> Self {
        Self::new(Kind::Configuration(None), Some(Box::new(source)))
    }

    /// The server broke the protocol of a stream or channel (a handshake without the upgrade,
    /// an event stream of another content type); `status` is the response's.
    pub(crate) fn protocol(status: StatusCode, source: impl Into<BoxError>) -> Self {
        Self::new(Kind::Protocol(status), Some(source.into()))
    }

    /// The server closed a channel with a code that ends it.
    pub(crate) fn closed(code: u16, reason: impl Into<String>) -> Self {
        Self::new(
            Kind::Closed(Close {
                code,
                reason: reason.into(),
            }),
            None,
        )
    }

    pub(crate) fn with_endpoint(mut self, endpoint: &str) -> Self {
        self.inner.endpoint = Some(endpoint.to_owned());
        self
    }

    /// Notes the request the call sent: its method and address, which the message names.
    pub(crate) fn with_request(mut self, method: Method, uri: Uri) -> Self {
        self.inner.request = Some((method, uri));
        self
    }

    /// The dotted path of the endpoint called, when known.
    pub fn endpoint(&self) -> Option<&str> {
        self.inner.endpoint.as_deref()
    }

    /// The method of the request the call sent, when it got as far as sending one.
    pub fn method(&self) -> Option<&Method> {
        self.inner.request.as_ref().map(|(method, _)| method)
    }

    /// The address the call sent its request to, query included, when it got as far as sending
    /// one. The error's message names it without the query, which may carry a secret.
    pub fn url(&self) -> Option<&Uri> {
        self.inner.request.as_ref().map(|(_, uri)| uri)
    }

    /// The error without the request's address, for a message that leaves this process (a
    /// proxy's answer to a browser should not tell the upstream's host); as reqwest's
    /// `Error::without_url`.
    #[must_use]
    pub fn without_url(mut self) -> Self {
        self.inner.request = None;
        self
    }

    /// The innermost cause, whose words say what happened ("Connection refused (os error 111)"),
    /// where the links above it wrap it ("client error (Connect)").
    fn root_cause(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let mut cause: &(dyn std::error::Error + 'static) = self.inner.source.as_deref()?;
        // Real chains are under ten links; the bound only guards against a cycle.
        for _ in 0..32 {
            match cause.source() {
                Some(next) => cause = next,
                None => break,
            }
        }
        Some(cause)
    }

    /// The status: the response's for an HTTP or decode error, `0` when no response came
    /// (network failure, timeout, cancellation) or nothing was sent.
    pub fn status_code(&self) -> u16 {
        match &self.inner.kind {
            Kind::Http(e) => e.status.as_u16(),
            Kind::Decode(status) | Kind::Protocol(status) => status.as_u16(),
            _ => 0,
        }
    }

    /// The response's status, for an HTTP, decode or protocol error.
    pub fn status(&self) -> Option<StatusCode> {
        match &self.inner.kind {
            Kind::Http(e) => Some(e.status),
            Kind::Decode(status) | Kind::Protocol(status) => Some(*status),
            _ => None,
        }
    }

    /// The failed response, for an HTTP error.
    pub fn http_error(&self) -> Option<&HttpError> {
        match &self.inner.kind {
            Kind::Http(e) => Some(e),
            _ => None,
        }
    }

    /// Takes the failed response out, for an HTTP error.
    pub fn into_http_error(self) -> Result<HttpError, Self> {
        match self.inner.kind {
            Kind::Http(e) => Ok(e),
            _ => Err(self),
        }
    }

    /// The kind of network failure, when no response came.
    pub fn network(&self) -> Option<NetworkErrorKind> {
        match &self.inner.kind {
            Kind::Network(kind) => Some(*kind),
            _ => None,
        }
    }

    /// The configuration error, when the definition was at fault.
    pub fn configuration(&self) -> Option<&ConfigurationError> {
        match &self.inner.kind {
            Kind::Configuration(Some(e)) => Some(e),
            _ => None,
        }
    }

    /// The server answered with a status of 400 or above.
    pub fn is_http(&self) -> bool {
        matches!(self.inner.kind, Kind::Http(_))
    }

    /// No response came: connection refused or reset, DNS or TLS failure.
    pub fn is_network(&self) -> bool {
        matches!(self.inner.kind, Kind::Network(_))
    }

    /// The connection could not be made (refused, DNS, TLS handshake).
    pub fn is_connect(&self) -> bool {
        matches!(
            self.inner.kind,
            Kind::Network(
                NetworkErrorKind::Connect | NetworkErrorKind::Dns | NetworkErrorKind::Tls
            )
        )
    }

    /// A timeout elapsed.
    pub fn is_timeout(&self) -> bool {
        matches!(self.inner.kind, Kind::Timeout)
    }

    /// A cancellation signal ended the call.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.inner.kind, Kind::Cancelled)
    }

    /// The response did not fit the call's type.
    pub fn is_decode(&self) -> bool {
        matches!(self.inner.kind, Kind::Decode(_))
    }

    /// The definition, or the call's variables, could not be used; nothing was sent.
    pub fn is_configuration(&self) -> bool {
        matches!(self.inner.kind, Kind::Configuration(_))
    }

    /// A stream or channel server broke its protocol (a handshake without the upgrade, an
    /// event stream of another content type).
    pub fn is_protocol(&self) -> bool {
        matches!(self.inner.kind, Kind::Protocol(_))
    }

    /// The server closed a channel for good; [`Error::close`] tells how.
    pub fn is_closed(&self) -> bool {
        matches!(self.inner.kind, Kind::Closed(_))
    }

    /// How the server closed a channel for good.
    pub fn close(&self) -> Option<&Close> {
        match &self.inner.kind {
            Kind::Closed(close) => Some(close),
            _ => None,
        }
    }
}

/// An error out of a tower stack built around a caller's service (an endpoint's `.services()`,
/// a `Client`), back as the caller's own `Error`, so that `?` turns one into the other in a
/// handler (and, with the `axum` feature, into the response it is):
///
/// | the boxed error | becomes |
/// |---|---|
/// | a caller's `Error` (the call failed) | itself |
/// | tower's `load_shed` refusal (`Overloaded`) | an [`HttpError`] 503 `OVERLOADED`, nothing sent |
/// | tower's `timeout` (`Elapsed`), courier's `TimeoutLayer` | a timeout ([`Error::is_timeout`]) |
/// | a courier layer's refusal | its [`HttpError`] (499, 403), as in a caller's stack |
/// | anything else | a network failure of kind [`NetworkErrorKind::Other`] |
///
/// ```
/// use courier::{BoxError, Error};
///
/// let shed: BoxError = Box::new(tower::load_shed::error::Overloaded::new());
/// let error = Error::from(shed);
/// assert_eq!(error.status_code(), 503);
/// assert_eq!(error.http_error().unwrap().data["error"]["code"], "OVERLOADED");
/// ```
impl From<BoxError> for Error {
    fn from(error: BoxError) -> Self {
        let error = match error.downcast::<Error>() {
            Ok(own) => return *own,
            Err(other) => other,
        };
        if error.is::<tower::load_shed::error::Overloaded>() {
            let http = HttpError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                headers: HeaderMap::new(),
                data: courier_core::wire::error_body(
                    "OVERLOADED",
                    "the service is at its limit and refused the call (a load shed): nothing was sent",
                ),
            };
            return Self::new(Kind::Http(http), Some(error));
        }
        if error.is::<tower::timeout::error::Elapsed>() {
            return Self::new(Kind::Timeout, Some(error));
        }
        Self::from_stack(error)
    }
}

impl From<ConfigurationError> for Error {
    fn from(e: ConfigurationError) -> Self {
        Self::new(Kind::Configuration(Some(e)), None)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("courier::Error");
        d.field("kind", &self.inner.kind);
        if let Some(endpoint) = &self.inner.endpoint {
            d.field("endpoint", endpoint);
        }
        if let Some((method, uri)) = &self.inner.request {
            d.field("method", method);
            d.field("url", uri);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(endpoint) = &self.inner.endpoint {
            write!(f, "`{endpoint}`: ")?;
        }
        if let Some((method, uri)) = &self.inner.request {
            // The address without its query: a query may carry a key or a sensitive variable.
            write!(f, "{method} ")?;
            if let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) {
                write!(f, "{scheme}://{authority}")?;
            }
            write!(f, "{}: ", uri.path())?;
        }
        match &self.inner.kind {
            Kind::Http(e) => {
                write!(f, "HTTP status {}", e.status)?;
                // A courier refusal's body, `{"error": {"code", "message"}}` (the proxy's, or a
                // layer's), says what was refused and why: tell it.
                match courier_core::wire::read_error_body(&e.data) {
                    Some((code, Some(message))) => write!(f, ": {code}: {message}")?,
                    Some((code, None)) => write!(f, ": {code}")?,
                    None => {}
                }
            }
            Kind::Network(kind) => write!(f, "network error ({kind})")?,
            Kind::Timeout => f.write_str("timed out")?,
            Kind::Cancelled => f.write_str("cancelled")?,
            Kind::Decode(status) => write!(f, "cannot decode the {status} response")?,
            Kind::Configuration(Some(e)) => return write!(f, "{e}"),
            Kind::Configuration(None) => f.write_str("cannot build the request")?,
            Kind::Protocol(status) => write!(f, "protocol error (status {status})")?,
            Kind::Closed(close) if close.reason.is_empty() => {
                write!(f, "closed by the server (code {})", close.code)?;
            }
            Kind::Closed(close) => write!(
                f,
                "closed by the server (code {}: {})",
                close.code, close.reason
            )?,
        }
        // A transport's chain wraps its cause in links that say little ("client error
        // (Connect)", "tcp connect error"): the innermost cause is told, once, and `source()`
        // still walks them all. Other sources say what they add themselves.
        let cause = match self.inner.kind {
            Kind::Network(_) | Kind::Timeout => self.root_cause(),
            _ => self.inner.source.as_deref().map(|e| e as _),
        };
        if let Some(cause) = cause {
            write!(f, ": {cause}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.kind {
            Kind::Configuration(Some(e)) => Some(e),
            _ => self.inner.source.as_deref().map(|e| e as _),
        }
    }
}
