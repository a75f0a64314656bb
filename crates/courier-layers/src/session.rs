//! [`SessionLayer`]: a call made while serving a user carries that user's session.
//!
//! For each outgoing request the layer looks for the request being served
//! ([`ServedRequest::for_request`]: one given in the request's extensions, else the one a
//! [`ContextLayer`](crate::context::ContextLayer) put in scope). Without one (a call made outside
//! any served request) or when the call's [`EndpointMeta`] says [`SessionMode::Off`], the request
//! passes untouched. Otherwise, from the [`SessionOptions`]:
//!
//! - **Session cookies.** The served request's cookies whose names match `cookies` (an exact
//!   name, or a prefix when the entry ends in `*`: `"sess_*"`; `"*"` alone matches every
//!   cookie) go upstream in one `cookie` header, in the order the browser sent them.
//! - **Bearer.** The value of the cookie named by `bearer` (surrounding double quotes removed) is
//!   sent as `Authorization: Bearer <value>`. The cookie itself goes upstream only if `cookies`
//!   names it too.
//! - **Checks on writes.** A write ([`EndpointMeta::is_read`] false; without meta, any method
//!   but GET, HEAD, OPTIONS and QUERY) in [`SessionMode::On`] is checked *before anything is
//!   sent*; a write in [`SessionMode::Unguarded`] and every read skip the checks. A failed check
//!   ends the call with a [`SessionRefused`] error (status 403) and the
//!   inner service is never called.
//! - **Set-cookie pass-back.** With `pass_set_cookie`, the upstream response's `set-cookie`
//!   headers for a session cookie (a name `cookies` matches, or the bearer or CSRF cookie) are
//!   added to the served response ([`ServedRequest::append_response_header`]; the context layer
//!   writes them out). They also stay on the response the caller sees: it is the upstream's
//!   answer, and a caller inspecting it should see all of it. A caller that copies upstream
//!   headers to its own response should leave `set-cookie` out, or the browser gets it twice.
//!
//! Sessions in this layer are per call and per served request: nothing is stored between calls,
//! so two users' concurrent calls can never see each other's cookies.
//!
//! # Headers already on the request win
//!
//! A `cookie` or `authorization` header already on the outgoing request (set by the source's
//! static headers, a middleware such as an `AuthLayer`, or an
//! endpoint's own closure) is left exactly as it is: the session neither replaces it nor adds to
//! it. Whoever set it chose the credentials for this call deliberately, and merging two cookie
//! sets could send a mix of two identities. The same holds for the CSRF header.
//!
//! # The write checks
//!
//! **CSRF double-submit** (with `csrf`): the served request must carry the `csrf.header` header
//! and the `csrf.cookie` cookie, both non-empty and equal (compared in constant time). A page of
//! another site can make the browser send the cookie but can neither read it nor set the header,
//! so a match shows the write comes from the site's own pages. When the check passes, the token
//! goes upstream in the same header and the CSRF cookie with the session cookies, so a backend
//! that runs the same check itself sees both. Reads and unguarded writes carry neither: no check
//! vouched for them. A `csrf.header` that is not a valid header name can never be present, so
//! every checked write is refused.
//!
//! **Trusted origins**: when the served request has an `Origin` header, it must be the served
//! request's own origin or one of `trusted_origins`. The own origin is compared by host and port
//! with the served request's `Host` header (or its URI's authority, as HTTP/2 sends it): the
//! scheme the browser used is not known behind a TLS-terminating proxy. A missing port means the
//! scheme's default. A proxy that rewrites `Host` hides the public origin: list that origin in
//! `trusted_origins` then. `trusted_origins` entries are compared by scheme, host and port; an
//! `Origin: null` (a sandboxed or privacy-redirected page) is never trusted.
//!
//! Without `Origin` (browsers leave it out of GET navigations, such as a link to a sign-out
//! page), `Sec-Fetch-Site` decides: `same-origin` and `none` (typed in the address bar, a
//! bookmark) pass; `same-site`, `cross-site` and any other value are refused. `same-site` is
//! refused because without `Origin` the sibling site cannot be matched against
//! `trusted_origins`, and a sibling subdomain (often hosting other people's content) is exactly
//! what the check is there to stop; a trusted sibling's own fetches and form posts carry
//! `Origin` and are matched normally.
//!
//! **Signed tokens** (`csrf` with a [`CsrfKey`], [`SessionOptions::csrf_signed`]): besides
//! header and cookie being equal, the token must be signed with the key for the served request's
//! session ([`csrf`]: an HMAC over the session cookies and a nonce), so a token planted by
//! whoever can write the user's cookies (a sibling subdomain) is refused.
//!
//! **Fetch Metadata** (`fetch_metadata`): a resource-isolation policy on every call that carries
//! the session in [`SessionMode::On`], reads included: a served request whose `Sec-Fetch-Site`
//! says another site sent it is refused, unless its `Origin` is trusted or it is a plain
//! top-level navigation.
//!
//! **Socket handshakes** cannot carry a CSRF header, and browsers apply no same-origin rule to
//! WebSockets: [`SessionLayer::check_handshake`] runs the origin check (and the Fetch Metadata
//! policy) on a handshake before a server opens a socket that will carry the session.
//!
//! A served request with neither header passes the origin check: it does not come from a
//! browser. Browsers send `Origin` on every cross-origin fetch and form post, and current ones
//! send `Sec-Fetch-Site` on every request, so a cross-site write through a victim's browser
//! always carries one of them; a client with neither (curl, another server) is acting for
//! itself, not being tricked by another site. The CSRF check still applies to it.
//!
//! # Compared with tower-http
//!
//! tower-http's `SetRequestHeader` sets a header from a fixed value or the request itself; this
//! layer takes its values from a different request, the one being served, and may refuse the
//! call. tower-http's `ValidateRequestHeader` refuses by answering with a response; this layer
//! refuses with an error before the request leaves, since it runs in a client stack.
//!
//! # Example
//!
//! ```
//! use courier_core::context::ServedRequest;
//! use courier_core::{Body, BoxError, EndpointMeta, Kind, SessionOptions};
//! use courier_layers::session::{error::SessionRefused, SessionLayer};
//! use http::{Request, Response};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), BoxError> {
//! let backend = tower::service_fn(|request: Request<Body>| async move {
//!     // What the backend receives, echoed back.
//!     let cookie = request.headers()["cookie"].to_str()?.to_owned();
//!     let bearer = request.headers()["authorization"].to_str()?.to_owned();
//!     Ok::<_, BoxError>(Response::new(Body::from(format!("{cookie} | {bearer}"))))
//! });
//! let client = ServiceBuilder::new()
//!     .layer(SessionLayer::new(
//!         SessionOptions::new()
//!             .cookies(["sid", "sess_*"])
//!             .bearer("access_token")
//!             .csrf("csrf_token", "x-csrf-token"),
//!     ))
//!     .service(backend);
//!
//! // The request a server is serving (normally put in scope by `ContextLayer`).
//! let (served, ()) = Request::post("/settings")
//!     .header("cookie", "sid=s1; theme=dark; sess_region=eu; access_token=t0k")
//!     .body(())?
//!     .into_parts();
//! let served = ServedRequest::new(served, None);
//!
//! let read = Request::get("http://127.0.0.1:9000/users/7")
//!     .extension(EndpointMeta::new("users.get", Kind::Query))
//!     .body(Body::empty())?;
//! let response = served.clone().scope(client.clone().oneshot(read)).await?;
//! let echoed = http_body_util::BodyExt::collect(response.into_body()).await?.to_bytes();
//! assert_eq!(echoed, "sid=s1; sess_region=eu | Bearer t0k");
//!
//! // A write from that request carries no CSRF token: refused before it is sent.
//! let write = Request::post("http://127.0.0.1:9000/users")
//!     .extension(EndpointMeta::new("users.create", Kind::Mutation))
//!     .body(Body::from("{}"))?;
//! let err = served.scope(client.oneshot(write)).await.unwrap_err();
//! let refused = err.downcast_ref::<SessionRefused>().expect("a session refusal");
//! assert_eq!(refused.status(), http::StatusCode::FORBIDDEN);
//! # Ok(())
//! # }
//! ```

use courier_core::context::ServedRequest;
use courier_core::{BoxError, CsrfKey, EndpointMeta, Kind, SessionMode, SessionOptions};
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};

use self::error::{RefusalReason, SessionRefused};
use self::site::Origin;

pub mod csrf;
mod site;

/// Carries the served user's session on outgoing calls; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct SessionLayer {
    config: Arc<Config>,
}

impl SessionLayer {
    /// A layer that keeps the session `options` describe.
    pub fn new(options: SessionOptions) -> Self {
        Self {
            config: Arc::new(Config::new(options)),
        }
    }
}

impl<S> Layer<S> for SessionLayer {
    type Service = Session<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Session {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}

/// The service [`SessionLayer`] makes.
#[derive(Clone, Debug)]
pub struct Session<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> Session<S> {
    /// Wraps `inner` with the session `options` describe.
    pub fn new(inner: S, options: SessionOptions) -> Self {
        SessionLayer::new(options).layer(inner)
    }

    /// A [`SessionLayer`], for `ServiceBuilder`.
    pub fn layer(options: SessionOptions) -> SessionLayer {
        SessionLayer::new(options)
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Session<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Error: Into<BoxError>,
{
    type Response = Response<ResBody>;
    type Error = BoxError;
    type Future = future::ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<ReqBody>) -> Self::Future {
        let mode = request
            .extensions()
            .get::<EndpointMeta>()
            .map_or(SessionMode::On, EndpointMeta::session_mode);
        let read = Kind::of_request(&request) == Kind::Query;
        let served = match ServedRequest::for_request(&request) {
            Some(served) if mode != SessionMode::Off => served,
            _ => return future::ResponseFuture::called(self.inner.call(request), None),
        };
        let guarded = mode == SessionMode::On && !read;
        if let Err(reason) = self
            .config
            .apply(&served, request.headers_mut(), mode, guarded)
        {
            let subject = if read { Subject::Read } else { Subject::Write };
            return future::ResponseFuture::refused(SessionRefused::new(reason, subject));
        }
        let pass_back = self.config.pass_set_cookie.then(|| future::PassBack {
            served,
            config: Arc::clone(&self.config),
        });
        future::ResponseFuture::called(self.inner.call(request), pass_back)
    }
}

impl SessionLayer {
    /// Checks the handshake of a WebSocket that will carry the session, as the proxy does
    /// before it opens a channel for a browser: the served request's `Origin` must be its own or
    /// trusted (or, without `Origin`, `Sec-Fetch-Site` must be `same-origin` or `none`), and
    /// with [`SessionOptions::fetch_metadata`] on, the Fetch Metadata policy applies too.
    ///
    /// Browsers apply no same-origin policy to WebSockets: a page of any site can open one to
    /// the proxy with the user's cookies and then read what comes back and send what it likes.
    /// The handshake is the one place to stop it, and it cannot carry a CSRF header, so the
    /// origin decides.
    ///
    /// ```
    /// use courier_core::context::ServedRequest;
    /// use courier_core::SessionOptions;
    /// use courier_layers::session::SessionLayer;
    ///
    /// let session = SessionLayer::new(SessionOptions::new().cookies(["sid"]));
    /// let handshake = |origin: &str| {
    ///     let (parts, ()) = http::Request::get("/api/ws")
    ///         .header("host", "app.example.com")
    ///         .header("origin", origin)
    ///         .body(())
    ///         .unwrap()
    ///         .into_parts();
    ///     ServedRequest::new(parts, None)
    /// };
    /// assert!(session.check_handshake(&handshake("https://app.example.com")).is_ok());
    /// assert!(session.check_handshake(&handshake("https://evil.example")).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// The [`SessionRefused`] (status 403) naming the failed check.
    pub fn check_handshake(&self, served: &ServedRequest) -> Result<(), SessionRefused> {
        let refused = |reason| SessionRefused::new(reason, Subject::Handshake);
        site::check_origin(&self.config.trusted_origins, served.headers(), served.uri())
            .map_err(refused)?;
        if self.config.fetch_metadata {
            site::check_fetch_metadata(&self.config.trusted_origins, served).map_err(refused)?;
        }
        Ok(())
    }
}

/// What a refusal refused, for its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    Read,
    Write,
    Handshake,
}

/// The options, parsed once.
#[derive(Debug)]
struct Config {
    cookies: Vec<CookieName>,
    bearer: Option<Box<str>>,
    csrf: Option<Csrf>,
    pass_set_cookie: bool,
    trusted_origins: Vec<Origin>,
    fetch_metadata: bool,
}

#[derive(Debug)]
struct Csrf {
    cookie: Box<str>,
    /// `None` when the configured name is not a valid header name: the check then always fails.
    header: Option<HeaderName>,
    /// The signing key of the signed form.
    key: Option<CsrfKey>,
}

#[derive(Debug)]
enum CookieName {
    Exact(Box<str>),
    Prefix(Box<str>),
}

impl CookieName {
    fn new(entry: &str) -> Self {
        match entry.strip_suffix('*') {
            Some(prefix) => Self::Prefix(prefix.into()),
            None => Self::Exact(entry.into()),
        }
    }

    fn matches(&self, name: &[u8]) -> bool {
        match self {
            Self::Exact(exact) => name == exact.as_bytes(),
            Self::Prefix(prefix) => name.starts_with(prefix.as_bytes()),
        }
    }
}

impl Config {
    fn new(options: SessionOptions) -> Self {
        Self {
            cookies: options.cookies.iter().map(|c| CookieName::new(c)).collect(),
            bearer: options.bearer.map(String::into_boxed_str),
            csrf: options.csrf.map(|csrf| Csrf {
                header: HeaderName::from_bytes(csrf.header.as_bytes()).ok(),
                cookie: csrf.cookie.into_boxed_str(),
                key: csrf.key,
            }),
            fetch_metadata: options.fetch_metadata,
            pass_set_cookie: options.pass_set_cookie,
            // An entry that is not an origin can never match; it is left out.
            trusted_origins: options
                .trusted_origins
                .iter()
                .filter_map(|origin| Origin::parse(origin.trim().as_bytes()))
                .collect(),
        }
    }

    fn is_session_cookie(&self, name: &[u8]) -> bool {
        self.cookies.iter().any(|pattern| pattern.matches(name))
    }

    /// The double-submit check (see the module docs); with a key, the token must also be
    /// signed for the served request's session. The token, marked sensitive, when it passes.
    fn check_csrf(&self, csrf: &Csrf, from: &HeaderMap) -> Result<HeaderValue, RefusalReason> {
        let header = csrf
            .header
            .as_ref()
            .and_then(|name| from.get(name))
            .filter(|value| !value.as_bytes().trim_ascii().is_empty())
            .ok_or(RefusalReason::CsrfHeaderMissing)?;
        let cookie = cookies(from)
            .find(|(name, _)| *name == csrf.cookie.as_bytes())
            .map(|(_, value)| value)
            .filter(|value| !value.is_empty())
            .ok_or(RefusalReason::CsrfCookieMissing)?;
        let token = header.as_bytes().trim_ascii();
        if !constant_time_eq(token, cookie) {
            return Err(RefusalReason::CsrfMismatch);
        }
        if let Some(key) = &csrf.key {
            let session = csrf::binding(cookies(from), |name| self.binds(name));
            let signed = std::str::from_utf8(token).is_ok_and(|t| csrf::verify(key, &session, t));
            if !signed {
                return Err(RefusalReason::CsrfSignatureInvalid);
            }
        }
        let mut token = header.clone();
        token.set_sensitive(true);
        Ok(token)
    }

    /// Whether a cookie named `name` is part of the session a signed token is bound to: a
    /// session cookie or the bearer cookie.
    fn binds(&self, name: &[u8]) -> bool {
        self.is_session_cookie(name) || self.bearer.as_deref().is_some_and(|b| b.as_bytes() == name)
    }

    /// Whether an upstream `set-cookie` for `name` goes back to the served response.
    fn passes_back(&self, name: &[u8]) -> bool {
        self.is_session_cookie(name)
            || self.bearer.as_deref().is_some_and(|b| b.as_bytes() == name)
            || self
                .csrf
                .as_ref()
                .is_some_and(|csrf| csrf.cookie.as_bytes() == name)
    }

    /// Runs the write checks when `guarded`, then adds the session to `headers`.
    fn apply(
        &self,
        served: &ServedRequest,
        headers: &mut HeaderMap,
        mode: SessionMode,
        guarded: bool,
    ) -> Result<(), RefusalReason> {
        let from = served.headers();
        if self.fetch_metadata && mode == SessionMode::On {
            site::check_fetch_metadata(&self.trusted_origins, served)?;
        }
        let mut token = None;
        if guarded {
            if let Some(csrf) = &self.csrf {
                token = Some((csrf, self.check_csrf(csrf, from)?));
            }
            site::check_origin(&self.trusted_origins, from, served.uri())?;
        }
        let csrf_cookie = token.as_ref().map(|(csrf, _)| csrf.cookie.as_bytes());

        if !headers.contains_key(COOKIE) {
            let mut cookie = Vec::new();
            for (name, value) in cookies(from) {
                if self.is_session_cookie(name) || csrf_cookie == Some(name) {
                    if !cookie.is_empty() {
                        cookie.extend_from_slice(b"; ");
                    }
                    cookie.extend_from_slice(name);
                    cookie.push(b'=');
                    cookie.extend_from_slice(value);
                }
            }
            if !cookie.is_empty() {
                if let Ok(value) = sensitive(&cookie) {
                    headers.insert(COOKIE, value);
                }
            }
        }

        if let Some(bearer) = &self.bearer {
            if !headers.contains_key(AUTHORIZATION) {
                let token = cookies(from)
                    .find(|(name, _)| *name == bearer.as_bytes())
                    .map(|(_, value)| unquote(value))
                    .filter(|value| !value.is_empty());
                if let Some(token) = token {
                    if let Ok(value) = sensitive(&[b"Bearer ", token].concat()) {
                        headers.insert(AUTHORIZATION, value);
                    }
                }
            }
        }

        if let Some((csrf, value)) = token {
            if let Some(name) = &csrf.header {
                if !headers.contains_key(name) {
                    headers.insert(name.clone(), value);
                }
            }
        }
        Ok(())
    }
}

/// Compares two tokens without stopping at the first difference, so the time taken says
/// nothing about how much of a guess was right. The length is not secret.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The `name=value` pairs of every `cookie` header, in order. Pairs without a name are skipped.
fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&[u8], &[u8])> {
    headers
        .get_all(COOKIE)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b';'))
        .filter_map(|pair| {
            let eq = pair.iter().position(|&b| b == b'=')?;
            let name = pair[..eq].trim_ascii();
            let value = pair[eq + 1..].trim_ascii();
            (!name.is_empty()).then_some((name, value))
        })
}

/// The cookie name a `set-cookie` value sets.
fn set_cookie_name(value: &[u8]) -> Option<&[u8]> {
    let pair = value.split(|&b| b == b';').next()?;
    let eq = pair.iter().position(|&b| b == b'=')?;
    let name = pair[..eq].trim_ascii();
    (!name.is_empty()).then_some(name)
}

/// A cookie value without the double quotes RFC 6265 allows around it.
fn unquote(value: &[u8]) -> &[u8] {
    value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(value)
}

fn sensitive(bytes: &[u8]) -> Result<HeaderValue, http::header::InvalidHeaderValue> {
    let mut value = HeaderValue::from_bytes(bytes)?;
    value.set_sensitive(true);
    Ok(value)
}

/// The future [`Session`] returns.
pub mod future {
    use super::error::SessionRefused;
    use super::{set_cookie_name, Config};
    use courier_core::context::ServedRequest;
    use courier_core::BoxError;
    use http::header::SET_COOKIE;
    use http::Response;
    use pin_project_lite::pin_project;
    use std::fmt;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{ready, Context, Poll};

    /// Where the upstream's session cookies go back to.
    pub(super) struct PassBack {
        pub(super) served: ServedRequest,
        pub(super) config: Arc<Config>,
    }

    impl PassBack {
        fn pass(&self, headers: &http::HeaderMap) {
            for value in headers.get_all(SET_COOKIE) {
                if set_cookie_name(value.as_bytes())
                    .is_some_and(|name| self.config.passes_back(name))
                {
                    self.served
                        .append_response_header(SET_COOKIE, value.clone());
                }
            }
        }
    }

    pin_project! {
        /// The response future of [`Session`](super::Session): the inner call, or the refusal
        /// of a write that failed a check.
        pub struct ResponseFuture<F> {
            #[pin]
            state: State<F>,
        }
    }

    pin_project! {
        #[project = StateProj]
        enum State<F> {
            Refused { error: SessionRefused },
            Called { #[pin] future: F, pass_back: Option<PassBack> },
        }
    }

    impl<F> ResponseFuture<F> {
        pub(super) fn called(future: F, pass_back: Option<PassBack>) -> Self {
            Self {
                state: State::Called { future, pass_back },
            }
        }

        pub(super) fn refused(error: SessionRefused) -> Self {
            Self {
                state: State::Refused { error },
            }
        }
    }

    impl<F, B, E> Future for ResponseFuture<F>
    where
        F: Future<Output = Result<Response<B>, E>>,
        E: Into<BoxError>,
    {
        type Output = Result<Response<B>, BoxError>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            match self.project().state.project() {
                StateProj::Refused { error } => Poll::Ready(Err(Box::new(*error))),
                StateProj::Called { future, pass_back } => {
                    let response = ready!(future.poll(cx)).map_err(Into::into)?;
                    if let Some(pass_back) = pass_back.take() {
                        pass_back.pass(response.headers());
                    }
                    Poll::Ready(Ok(response))
                }
            }
        }
    }

    impl<F> fmt::Debug for ResponseFuture<F> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let state = match &self.state {
                State::Refused { error } => error.reason().as_str(),
                State::Called { .. } => "called",
            };
            f.debug_struct("ResponseFuture")
                .field("state", &state)
                .finish()
        }
    }
}

/// The error a call that fails a session check ends with.
pub mod error {
    use super::Subject;
    use http::StatusCode;
    use std::fmt;

    /// A call was refused before it was sent: the served request failed the CSRF or the
    /// origin check (a write), the Fetch Metadata policy (any call, with `fetch_metadata`), or
    /// a socket's handshake failed the origin check ([`SessionLayer::check_handshake`]). Its
    /// status is 403.
    ///
    /// It reaches the caller as a [`BoxError`](courier_core::BoxError); find it with
    /// `err.downcast_ref::<SessionRefused>()`.
    ///
    /// [`SessionLayer::check_handshake`]: super::SessionLayer::check_handshake
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct SessionRefused {
        reason: RefusalReason,
        subject: Subject,
    }

    impl SessionRefused {
        pub(super) fn new(reason: RefusalReason, subject: Subject) -> Self {
            Self { reason, subject }
        }

        /// Which check failed.
        pub fn reason(&self) -> RefusalReason {
            self.reason
        }

        /// The status a server answers the served request with: 403 Forbidden.
        pub fn status(&self) -> StatusCode {
            StatusCode::FORBIDDEN
        }
    }

    impl fmt::Display for SessionRefused {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let subject = match self.subject {
                Subject::Read => "read",
                Subject::Write => "write",
                Subject::Handshake => "socket handshake",
            };
            write!(f, "{subject} refused by the session: {}", self.reason)
        }
    }

    impl std::error::Error for SessionRefused {}

    /// Which session check a call failed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum RefusalReason {
        /// The served request has no (or an empty) CSRF header.
        CsrfHeaderMissing,
        /// The served request has no (or an empty) CSRF cookie.
        CsrfCookieMissing,
        /// The CSRF header and cookie differ.
        CsrfMismatch,
        /// The CSRF token is not signed with the source's key for the served request's
        /// session (the signed form: [`csrf`](super::csrf)).
        CsrfSignatureInvalid,
        /// The served request's `Origin` is neither its own nor a trusted origin.
        UntrustedOrigin,
        /// Another site sent the served request: it has no `Origin` and its `Sec-Fetch-Site`
        /// is not `same-origin` or `none`, or (with `fetch_metadata`) its `Sec-Fetch-Site`
        /// says so and its `Origin` is not trusted.
        CrossSite,
    }

    impl RefusalReason {
        /// A short snake_case name, for logs and error codes.
        pub fn as_str(self) -> &'static str {
            match self {
                Self::CsrfHeaderMissing => "csrf_header_missing",
                Self::CsrfCookieMissing => "csrf_cookie_missing",
                Self::CsrfMismatch => "csrf_mismatch",
                Self::CsrfSignatureInvalid => "csrf_signature_invalid",
                Self::UntrustedOrigin => "untrusted_origin",
                Self::CrossSite => "cross_site",
            }
        }

        /// The stable code a refusal carries on the wire (`{"error": {"code", …}}`):
        /// `CSRF_CHECK_FAILED` for the CSRF checks, `ORIGIN_NOT_TRUSTED` for the others.
        pub fn code(self) -> &'static str {
            match self {
                Self::UntrustedOrigin | Self::CrossSite => "ORIGIN_NOT_TRUSTED",
                Self::CsrfHeaderMissing
                | Self::CsrfCookieMissing
                | Self::CsrfMismatch
                | Self::CsrfSignatureInvalid => "CSRF_CHECK_FAILED",
            }
        }
    }

    impl fmt::Display for RefusalReason {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                Self::CsrfHeaderMissing => {
                    "CSRF check failed: the served request carries no CSRF token header"
                }
                Self::CsrfCookieMissing => {
                    "CSRF check failed: the served request carries no CSRF token cookie"
                }
                Self::CsrfMismatch => {
                    "CSRF check failed: the CSRF token header does not match the CSRF cookie"
                }
                Self::CsrfSignatureInvalid => {
                    "CSRF check failed: the CSRF token is not signed for this session"
                }
                Self::UntrustedOrigin => {
                    "origin check failed: the served request's Origin is neither its own nor trusted"
                }
                Self::CrossSite => {
                    "origin check failed: the served request came from another site (Sec-Fetch-Site)"
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::error::{RefusalReason, SessionRefused};
    use super::*;
    use courier_core::{Body, Kind};
    use http::header::SET_COOKIE;
    use http::StatusCode;
    use std::sync::Mutex;
    use tower::ServiceExt;

    /// A backend that records the headers of every request it gets and answers with
    /// `set_cookies`.
    #[derive(Clone, Default)]
    struct Backend {
        seen: Arc<Mutex<Vec<HeaderMap>>>,
        set_cookies: Vec<&'static str>,
    }

    impl Backend {
        fn setting(set_cookies: &[&'static str]) -> Self {
            Self {
                set_cookies: set_cookies.to_vec(),
                ..Self::default()
            }
        }

        fn calls(&self) -> usize {
            self.seen.lock().unwrap().len()
        }

        fn last(&self) -> HeaderMap {
            self.seen
                .lock()
                .unwrap()
                .last()
                .cloned()
                .expect("the backend was called")
        }
    }

    impl Service<Request<Body>> for Backend {
        type Response = Response<Body>;
        type Error = BoxError;
        type Future = std::future::Ready<Result<Response<Body>, BoxError>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<Body>) -> Self::Future {
            self.seen.lock().unwrap().push(request.headers().clone());
            let mut response = Response::new(Body::empty());
            for cookie in &self.set_cookies {
                response
                    .headers_mut()
                    .append(SET_COOKIE, HeaderValue::from_static(cookie));
            }
            std::future::ready(Ok(response))
        }
    }

    fn options() -> SessionOptions {
        SessionOptions::new()
            .cookies(["sid", "sess_*"])
            .bearer("access_token")
            .csrf("csrf_token", "x-csrf-token")
    }

    /// A served request with these headers, from `app.example.com`.
    fn served(method: &str, headers: &[(&str, &str)]) -> ServedRequest {
        let mut builder = Request::builder()
            .method(method)
            .uri("/page")
            .header("host", "app.example.com");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let (parts, ()) = builder.body(()).unwrap().into_parts();
        ServedRequest::new(parts, None)
    }

    fn call(kind: Kind) -> Request<Body> {
        let method = if kind == Kind::Query { "GET" } else { "POST" };
        Request::builder()
            .method(method)
            .uri("http://127.0.0.1:9000/x")
            .extension(EndpointMeta::new("x.y", kind))
            .body(Body::empty())
            .unwrap()
    }

    fn write_with(mode: SessionMode) -> Request<Body> {
        Request::post("http://127.0.0.1:9000/x")
            .extension(EndpointMeta::new("x.y", Kind::Mutation).session(mode))
            .body(Body::empty())
            .unwrap()
    }

    async fn send(
        options: SessionOptions,
        backend: &Backend,
        served: &ServedRequest,
        request: Request<Body>,
    ) -> Result<Response<Body>, BoxError> {
        let service = SessionLayer::new(options).layer(backend.clone());
        served.clone().scope(service.oneshot(request)).await
    }

    async fn refusal(served: &ServedRequest, options: SessionOptions) -> RefusalReason {
        let backend = Backend::default();
        let err = send(options, &backend, served, call(Kind::Mutation))
            .await
            .expect_err("the write is refused");
        assert_eq!(backend.calls(), 0, "a refused write is never sent");
        err.downcast_ref::<SessionRefused>()
            .expect("a SessionRefused")
            .reason()
    }

    /// A write from the site's own page with a valid double-submit token.
    const GOOD_WRITE: [(&str, &str); 3] = [
        ("origin", "https://app.example.com"),
        ("cookie", "sid=s1; csrf_token=tok123"),
        ("x-csrf-token", "tok123"),
    ];

    #[tokio::test]
    async fn session_cookies_match_exact_names_and_prefixes() {
        let backend = Backend::default();
        let served = served(
            "GET",
            &[(
                "cookie",
                "sid=s1; theme=dark; sess_a=x; sessa=no; sess_b=y; sid2=no",
            )],
        );
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        let headers = backend.last();
        assert_eq!(headers["cookie"], "sid=s1; sess_a=x; sess_b=y");
        assert!(headers["cookie"].is_sensitive());
        assert_eq!(headers.get_all("cookie").iter().count(), 1);
    }

    #[tokio::test]
    async fn cookies_from_several_cookie_headers_go_in_one() {
        let backend = Backend::default();
        let served = served(
            "GET",
            &[("cookie", "theme=dark; sid=s1"), ("cookie", "sess_x=2")],
        );
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        let headers = backend.last();
        assert_eq!(
            headers.get_all("cookie").iter().collect::<Vec<_>>(),
            ["sid=s1; sess_x=2"]
        );
    }

    #[tokio::test]
    async fn a_star_alone_matches_every_cookie() {
        let backend = Backend::default();
        let served = served("GET", &[("cookie", "a=1; b=2")]);
        let options = SessionOptions::new().cookies(["*"]);
        send(options, &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        assert_eq!(backend.last()["cookie"], "a=1; b=2");
    }

    #[tokio::test]
    async fn no_cookie_header_when_no_cookie_matches() {
        let backend = Backend::default();
        let served = served("GET", &[("cookie", "theme=dark; =odd; novalue")]);
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        let headers = backend.last();
        assert!(headers.get("cookie").is_none());
        assert!(headers.get("authorization").is_none());
    }

    #[tokio::test]
    async fn bearer_cookie_becomes_a_sensitive_authorization_header() {
        let backend = Backend::default();
        let served = served("GET", &[("cookie", "theme=dark; access_token=abc.def")]);
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        let headers = backend.last();
        assert_eq!(headers["authorization"], "Bearer abc.def");
        assert!(headers["authorization"].is_sensitive());
        // The bearer cookie is not a session cookie here, so it does not go as a cookie.
        assert!(headers.get("cookie").is_none());
    }

    #[tokio::test]
    async fn bearer_cookie_value_loses_its_quotes_and_an_empty_one_is_not_sent() {
        let backend = Backend::default();
        let quoted = served("GET", &[("cookie", "access_token=\"q1\"")]);
        send(options(), &backend, &quoted, call(Kind::Query))
            .await
            .unwrap();
        assert_eq!(backend.last()["authorization"], "Bearer q1");

        let empty = served("GET", &[("cookie", "access_token=; sid=s1")]);
        send(options(), &backend, &empty, call(Kind::Query))
            .await
            .unwrap();
        assert!(backend.last().get("authorization").is_none());
    }

    #[tokio::test]
    async fn headers_already_on_the_request_win() {
        let backend = Backend::default();
        let served = served("GET", &[("cookie", "sid=s1; access_token=user")]);
        let request = Request::get("http://127.0.0.1:9000/x")
            .header("cookie", "service=1")
            .header("authorization", "Basic c3ZjOnB3")
            .body(Body::empty())
            .unwrap();
        send(options(), &backend, &served, request).await.unwrap();
        let headers = backend.last();
        assert_eq!(
            headers.get_all("cookie").iter().collect::<Vec<_>>(),
            ["service=1"]
        );
        assert_eq!(
            headers.get_all("authorization").iter().collect::<Vec<_>>(),
            ["Basic c3ZjOnB3"]
        );
    }

    #[tokio::test]
    async fn nothing_happens_without_a_served_request() {
        let backend = Backend::default();
        let service = SessionLayer::new(options()).layer(backend.clone());
        // A write without a served request: no checks, no session.
        service.oneshot(call(Kind::Mutation)).await.unwrap();
        let headers = backend.last();
        assert!(headers.get("cookie").is_none());
        assert!(headers.get("authorization").is_none());
    }

    #[tokio::test]
    async fn session_off_sends_no_session_and_checks_nothing() {
        let backend = Backend::setting(&["sid=new"]);
        let served = served(
            "POST",
            &[
                ("cookie", "sid=s1; access_token=t"),
                ("origin", "https://evil.example"),
            ],
        );
        let options = options().pass_set_cookie(true);
        send(options, &backend, &served, write_with(SessionMode::Off))
            .await
            .unwrap();
        let headers = backend.last();
        assert!(headers.get("cookie").is_none());
        assert!(headers.get("authorization").is_none());
        assert!(
            served.take_response_headers().is_empty(),
            "no pass-back either"
        );
    }

    #[tokio::test]
    async fn a_write_with_a_matching_token_carries_it_upstream() {
        let backend = Backend::default();
        let served = served("POST", &GOOD_WRITE);
        send(options(), &backend, &served, call(Kind::Mutation))
            .await
            .unwrap();
        let headers = backend.last();
        assert_eq!(headers["x-csrf-token"], "tok123");
        assert_eq!(headers["cookie"], "sid=s1; csrf_token=tok123");
    }

    #[tokio::test]
    async fn a_write_without_the_token_header_is_refused() {
        let served = served(
            "POST",
            &[
                ("cookie", "sid=s1; csrf_token=tok123"),
                ("x-csrf-token", " "),
            ],
        );
        assert_eq!(
            refusal(&served, options()).await,
            RefusalReason::CsrfHeaderMissing
        );
        let served = self::served("POST", &[("cookie", "sid=s1; csrf_token=tok123")]);
        assert_eq!(
            refusal(&served, options()).await,
            RefusalReason::CsrfHeaderMissing
        );
    }

    #[tokio::test]
    async fn a_write_without_the_token_cookie_is_refused() {
        let served = served("POST", &[("cookie", "sid=s1"), ("x-csrf-token", "tok123")]);
        assert_eq!(
            refusal(&served, options()).await,
            RefusalReason::CsrfCookieMissing
        );
        let served = self::served(
            "POST",
            &[("cookie", "csrf_token="), ("x-csrf-token", "tok123")],
        );
        assert_eq!(
            refusal(&served, options()).await,
            RefusalReason::CsrfCookieMissing
        );
    }

    #[tokio::test]
    async fn a_write_whose_token_differs_from_the_cookie_is_refused() {
        for header in ["tok124", "tok12", "tok1234", "TOK123"] {
            let served = served(
                "POST",
                &[("cookie", "csrf_token=tok123"), ("x-csrf-token", header)],
            );
            assert_eq!(
                refusal(&served, options()).await,
                RefusalReason::CsrfMismatch
            );
        }
    }

    #[tokio::test]
    async fn an_invalid_csrf_header_name_refuses_every_checked_write() {
        let options = SessionOptions::new().csrf("csrf_token", "bad header");
        let served = served("POST", &[("cookie", "csrf_token=t")]);
        assert_eq!(
            refusal(&served, options).await,
            RefusalReason::CsrfHeaderMissing
        );
    }

    #[tokio::test]
    async fn the_refusal_names_the_check_and_is_a_403() {
        let backend = Backend::default();
        let served = served("POST", &[("cookie", "sid=s1")]);
        let err = send(options(), &backend, &served, call(Kind::Mutation))
            .await
            .unwrap_err();
        let refused = err.downcast_ref::<SessionRefused>().unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert_eq!(refused.reason().as_str(), "csrf_header_missing");
        assert_eq!(
            err.to_string(),
            "write refused by the session: CSRF check failed: the served request carries no CSRF token header"
        );
    }

    #[tokio::test]
    async fn unguarded_writes_skip_the_checks_but_carry_the_session() {
        let backend = Backend::default();
        let served = served(
            "POST",
            &[
                ("cookie", "sid=s1; csrf_token=tok; access_token=t"),
                ("origin", "https://evil.example"),
            ],
        );
        send(
            options(),
            &backend,
            &served,
            write_with(SessionMode::Unguarded),
        )
        .await
        .unwrap();
        let headers = backend.last();
        assert_eq!(
            headers["cookie"], "sid=s1",
            "no CSRF cookie: nothing vouched for it"
        );
        assert_eq!(headers["authorization"], "Bearer t");
        assert!(headers.get("x-csrf-token").is_none());
    }

    #[tokio::test]
    async fn reads_are_never_checked() {
        let backend = Backend::default();
        let served = served(
            "GET",
            &[
                ("cookie", "sid=s1; csrf_token=tok"),
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "cross-site"),
            ],
        );
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        let headers = backend.last();
        assert_eq!(headers["cookie"], "sid=s1");
        assert!(headers.get("x-csrf-token").is_none());
    }

    #[tokio::test]
    async fn without_meta_the_method_decides_what_is_checked() {
        let served = served("POST", &[("cookie", "sid=s1")]);
        let backend = Backend::default();
        for method in ["GET", "HEAD", "OPTIONS"] {
            let request = Request::builder()
                .method(method)
                .uri("http://127.0.0.1:9000/x")
                .body(Body::empty())
                .unwrap();
            send(options(), &backend, &served, request).await.unwrap();
            assert_eq!(backend.last()["cookie"], "sid=s1");
        }
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            let request = Request::builder()
                .method(method)
                .uri("http://127.0.0.1:9000/x")
                .body(Body::empty())
                .unwrap();
            let err = send(options(), &backend, &served, request)
                .await
                .unwrap_err();
            assert!(err.is::<SessionRefused>(), "{method} is checked");
        }
        assert_eq!(backend.calls(), 3);
    }

    #[tokio::test]
    async fn own_origin_passes_by_host_and_port() {
        let own = [
            ("https://app.example.com", "app.example.com"),
            ("https://APP.example.com/", "app.example.com"),
            ("https://app.example.com", "app.example.com:443"),
            ("http://app.example.com", "app.example.com:80"),
            ("http://127.0.0.1:3000", "127.0.0.1:3000"),
            ("http://[::1]:3000", "[::1]:3000"),
        ];
        for (origin, host) in own {
            let (parts, ()) = Request::post("/page")
                .header("host", host)
                .header("origin", origin)
                .body(())
                .unwrap()
                .into_parts();
            let served = ServedRequest::new(parts, None);
            let backend = Backend::default();
            send(
                SessionOptions::new(),
                &backend,
                &served,
                call(Kind::Mutation),
            )
            .await
            .unwrap_or_else(|err| panic!("{origin} on {host}: {err}"));
        }
        let other = [
            ("https://app.example.com:8443", "app.example.com"),
            ("https://app.example.com", "app.example.com:8443"),
            ("https://evil.example.com", "app.example.com"),
            ("https://app.example.com.evil.example", "app.example.com"),
        ];
        for (origin, host) in other {
            let (parts, ()) = Request::post("/page")
                .header("host", host)
                .header("origin", origin)
                .body(())
                .unwrap()
                .into_parts();
            let served = ServedRequest::new(parts, None);
            assert_eq!(
                refusal(&served, SessionOptions::new()).await,
                RefusalReason::UntrustedOrigin,
                "{origin} on {host}"
            );
        }
    }

    #[tokio::test]
    async fn own_origin_comes_from_the_uri_without_a_host_header() {
        // HTTP/2 carries the authority in the URI.
        let (parts, ()) = Request::post("https://app.example.com/page")
            .header("origin", "https://app.example.com")
            .body(())
            .unwrap()
            .into_parts();
        let served = ServedRequest::new(parts, None);
        let backend = Backend::default();
        send(
            SessionOptions::new(),
            &backend,
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap();
        assert_eq!(backend.calls(), 1);
    }

    #[tokio::test]
    async fn trusted_origins_pass_and_others_are_refused() {
        let options = SessionOptions::new().trusted_origins([
            "https://admin.example.com/",
            "http://localhost:5173",
            "not an origin",
        ]);
        for origin in [
            "https://admin.example.com",
            "https://admin.example.com:443",
            "http://localhost:5173",
        ] {
            let backend = Backend::default();
            let served = served("POST", &[("origin", origin)]);
            send(options.clone(), &backend, &served, call(Kind::Mutation))
                .await
                .unwrap_or_else(|err| panic!("{origin}: {err}"));
        }
        for origin in [
            "http://admin.example.com",
            "https://admin.example.com:8443",
            "http://localhost:5174",
            "https://evil.example",
            "null",
            "https://admin.example.com/path",
            "not an origin",
        ] {
            let served = served("POST", &[("origin", origin)]);
            assert_eq!(
                refusal(&served, options.clone()).await,
                RefusalReason::UntrustedOrigin,
                "{origin}"
            );
        }
    }

    #[tokio::test]
    async fn without_origin_sec_fetch_site_decides() {
        for site in ["same-origin", "none"] {
            let backend = Backend::default();
            let served = served("GET", &[("sec-fetch-site", site)]);
            send(
                SessionOptions::new(),
                &backend,
                &served,
                call(Kind::Mutation),
            )
            .await
            .unwrap_or_else(|err| panic!("{site}: {err}"));
        }
        for site in ["cross-site", "same-site", "something-new"] {
            let served = served("GET", &[("sec-fetch-site", site)]);
            assert_eq!(
                refusal(&served, SessionOptions::new()).await,
                RefusalReason::CrossSite,
                "{site}"
            );
        }
    }

    #[tokio::test]
    async fn origin_wins_over_sec_fetch_site() {
        let backend = Backend::default();
        let served = served(
            "POST",
            &[
                ("origin", "https://app.example.com"),
                ("sec-fetch-site", "cross-site"),
            ],
        );
        send(
            SessionOptions::new(),
            &backend,
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap();
        let served = self::served(
            "POST",
            &[
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "same-origin"),
            ],
        );
        assert_eq!(
            refusal(&served, SessionOptions::new()).await,
            RefusalReason::UntrustedOrigin
        );
    }

    #[tokio::test]
    async fn a_client_without_origin_or_fetch_metadata_passes_the_origin_check() {
        let backend = Backend::default();
        let served = served("POST", &[("cookie", "sid=s1")]);
        send(
            SessionOptions::new().cookies(["sid"]),
            &backend,
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap();
        assert_eq!(backend.last()["cookie"], "sid=s1");
    }

    #[tokio::test]
    async fn session_set_cookies_pass_back_to_the_served_response() {
        let backend = Backend::setting(&[
            "sid=new; Path=/; HttpOnly",
            "sess_region=us",
            "theme=light",
            "access_token=t2; Secure",
            "csrf_token=c2",
            "broken",
        ]);
        let served = served("GET", &[("cookie", "sid=s1")]);
        let response = send(
            options().pass_set_cookie(true),
            &backend,
            &served,
            call(Kind::Query),
        )
        .await
        .unwrap();
        let passed = served.take_response_headers();
        assert_eq!(
            passed.get_all(SET_COOKIE).iter().collect::<Vec<_>>(),
            [
                "sid=new; Path=/; HttpOnly",
                "sess_region=us",
                "access_token=t2; Secure",
                "csrf_token=c2"
            ]
        );
        assert_eq!(passed.len(), 4);
        // The caller still sees the upstream's whole answer.
        assert_eq!(response.headers().get_all(SET_COOKIE).iter().count(), 6);
    }

    #[tokio::test]
    async fn set_cookies_stay_upstream_without_pass_set_cookie() {
        let backend = Backend::setting(&["sid=new"]);
        let served = served("GET", &[("cookie", "sid=s1")]);
        send(options(), &backend, &served, call(Kind::Query))
            .await
            .unwrap();
        assert!(served.take_response_headers().is_empty());
    }

    #[tokio::test]
    async fn an_explicit_context_wins_over_the_one_in_scope() {
        let backend = Backend::default();
        let in_scope = served("GET", &[("cookie", "sid=scoped")]);
        let explicit = served("GET", &[("cookie", "sid=explicit")]);
        let mut request = call(Kind::Query);
        request.extensions_mut().insert(explicit);
        send(options(), &backend, &in_scope, request).await.unwrap();
        assert_eq!(backend.last()["cookie"], "sid=explicit");

        // With only the explicit one, outside any scope.
        let service = SessionLayer::new(options()).layer(backend.clone());
        let mut request = call(Kind::Query);
        request
            .extensions_mut()
            .insert(served("GET", &[("cookie", "sid=alone")]));
        service.oneshot(request).await.unwrap();
        assert_eq!(backend.last()["cookie"], "sid=alone");
    }

    #[tokio::test]
    async fn inner_errors_come_through_boxed() {
        let service =
            SessionLayer::new(options()).layer(tower::service_fn(|_: Request<Body>| async {
                Err::<Response<Body>, _>(std::io::Error::other("down"))
            }));
        let err = service.oneshot(call(Kind::Query)).await.unwrap_err();
        assert!(err.is::<std::io::Error>());
    }

    fn signing_key() -> CsrfKey {
        CsrfKey::new(*b"0123456789abcdef0123456789abcdef")
    }

    fn signed_options() -> SessionOptions {
        SessionOptions::new().cookies(["sid"]).csrf_signed(
            "csrf_token",
            "x-csrf-token",
            signing_key(),
        )
    }

    fn write_with_token(session: &str, token: &str) -> ServedRequest {
        let cookie = format!("{session}; csrf_token={token}");
        served(
            "POST",
            &[
                ("origin", "https://app.example.com"),
                ("cookie", &cookie),
                ("x-csrf-token", token),
            ],
        )
    }

    #[tokio::test]
    async fn a_signed_token_passes_for_its_own_session() {
        let backend = Backend::default();
        let token = csrf::issue(&signing_key(), "sid=s1").unwrap();
        let served = write_with_token("sid=s1", &token);
        send(signed_options(), &backend, &served, call(Kind::Mutation))
            .await
            .expect("a token signed for this session passes");
        assert_eq!(backend.last()["x-csrf-token"], token.as_str());
    }

    #[tokio::test]
    async fn a_planted_or_foreign_token_is_refused_even_when_header_and_cookie_match() {
        // Someone who can write the victim's cookies (a sibling subdomain) sets a token of
        // their own choosing and makes the page repeat it: plain double-submit would pass.
        let planted = write_with_token("sid=s1", "attacker-chosen");
        assert_eq!(
            refusal(&planted, signed_options()).await,
            RefusalReason::CsrfSignatureInvalid
        );
        // The plain form cannot tell: header and cookie match, so the planted token passes.
        send(
            options(),
            &Backend::default(),
            &planted,
            call(Kind::Mutation),
        )
        .await
        .expect("plain double-submit takes a planted token");
        // A real token, but issued for another user's session.
        let theirs = csrf::issue(&signing_key(), "sid=attacker").unwrap();
        let served = write_with_token("sid=s1", &theirs);
        assert_eq!(
            refusal(&served, signed_options()).await,
            RefusalReason::CsrfSignatureInvalid
        );
        // A token signed with another key.
        let forged = csrf::issue(&CsrfKey::new([7u8; 32]), "sid=s1").unwrap();
        let served = write_with_token("sid=s1", &forged);
        let err = send(
            signed_options(),
            &Backend::default(),
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap_err();
        let refused = err.downcast_ref::<SessionRefused>().unwrap();
        assert_eq!(refused.reason().code(), "CSRF_CHECK_FAILED");
        assert_eq!(
            err.to_string(),
            "write refused by the session: CSRF check failed: the CSRF token is not signed for this session"
        );
    }

    fn fetch(method: &str, site: &str, extra: &[(&str, &str)]) -> ServedRequest {
        let mut headers = vec![("cookie", "sid=s1"), ("sec-fetch-site", site)];
        headers.extend_from_slice(extra);
        served(method, &headers)
    }

    #[tokio::test]
    async fn fetch_metadata_refuses_reads_another_site_sends() {
        let policy = || SessionOptions::new().cookies(["sid"]).fetch_metadata(true);
        let backend = Backend::default();
        let cross = fetch("GET", "cross-site", &[("sec-fetch-mode", "cors")]);
        let err = send(policy(), &backend, &cross, call(Kind::Query))
            .await
            .expect_err("a cross-site read is refused");
        let refused = err.downcast_ref::<SessionRefused>().unwrap();
        assert_eq!(refused.reason(), RefusalReason::CrossSite);
        assert!(
            err.to_string().starts_with("read refused by the session"),
            "{err}"
        );
        assert_eq!(backend.calls(), 0);
        let sibling = fetch(
            "GET",
            "same-site",
            &[("origin", "https://blog.example.com")],
        );
        assert!(send(policy(), &backend, &sibling, call(Kind::Query))
            .await
            .is_err());
        // Without the policy, reads are never checked.
        let plain = SessionOptions::new().cookies(["sid"]);
        send(plain, &backend, &cross, call(Kind::Query))
            .await
            .unwrap();
        assert_eq!(backend.last()["cookie"], "sid=s1");
    }

    #[tokio::test]
    async fn fetch_metadata_lets_through_own_trusted_navigations_and_non_browsers() {
        let policy = || {
            SessionOptions::new()
                .cookies(["sid"])
                .fetch_metadata(true)
                .trusted_origins(["https://admin.example.com"])
        };
        let backend = Backend::default();
        let passes = [
            fetch("GET", "same-origin", &[]),
            fetch("GET", "none", &[]),
            served("GET", &[("cookie", "sid=s1")]),
            fetch(
                "GET",
                "same-site",
                &[("origin", "https://admin.example.com")],
            ),
            fetch(
                "GET",
                "cross-site",
                &[
                    ("sec-fetch-mode", "navigate"),
                    ("sec-fetch-dest", "document"),
                ],
            ),
        ];
        for served in &passes {
            send(policy(), &backend, served, call(Kind::Query))
                .await
                .unwrap_or_else(|e| panic!("{:?}: {e}", served.headers()));
        }
        let refused = [
            fetch("POST", "cross-site", &[("sec-fetch-mode", "navigate")]),
            fetch(
                "GET",
                "cross-site",
                &[("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "embed")],
            ),
        ];
        for served in &refused {
            assert!(
                send(policy(), &backend, served, call(Kind::Query))
                    .await
                    .is_err(),
                "{:?}",
                served.headers()
            );
        }
        // An unguarded endpoint opted out of every cross-site check.
        let cross = fetch("POST", "cross-site", &[]);
        send(
            policy(),
            &backend,
            &cross,
            write_with(SessionMode::Unguarded),
        )
        .await
        .unwrap();
    }

    #[test]
    fn a_handshake_passes_from_its_own_or_a_trusted_origin_only() {
        let layer = SessionLayer::new(options().trusted_origins(["https://admin.example.com"]));
        let handshake = |headers: &[(&str, &str)]| layer.check_handshake(&served("GET", headers));
        assert!(handshake(&[("origin", "https://app.example.com")]).is_ok());
        assert!(handshake(&[("origin", "https://admin.example.com")]).is_ok());
        assert!(handshake(&[]).is_ok(), "not a browser");
        let refused = handshake(&[("origin", "https://evil.example")]).unwrap_err();
        assert_eq!(refused.reason(), RefusalReason::UntrustedOrigin);
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(refused
            .to_string()
            .starts_with("socket handshake refused by the session"));
        assert!(handshake(&[("origin", "null")]).is_err());
        assert!(handshake(&[("sec-fetch-site", "cross-site")]).is_err());
        // The handshake cannot carry a CSRF header: the origin alone decides.
        assert!(handshake(&[("origin", "https://app.example.com"), ("cookie", "sid=1")]).is_ok());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"xbc", b"abc"));
    }
}
