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
//! The mode of each call the layer asks of its [`SessionFor`]. The default, [`FromMeta`], reads
//! the request's [`EndpointMeta::get_session`] (on, for a request without one); a closure
//! `Fn(&Request<B>) -> SessionMode` decides instead with [`SessionLayer::session_for`].
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
//! **Signed tokens** (`csrf` with a [`CsrfKey`](courier_core::CsrfKey), [`SessionOptions::csrf_signed`]): besides
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
//! # Issuing the session
//!
//! The layer checks a session; a sign-in route starts one. [`SessionCookies`] writes its
//! `set-cookie` headers from the same [`SessionOptions`]: the session cookies `HttpOnly; Secure;
//! SameSite=Lax`, and the CSRF cookie with a fresh token, signed for that session when the
//! options have a key; [`SessionCookies::clear`] writes the sign-out.
//!
//! # Compared with tower-http
//!
//! tower-http's `SetRequestHeader` sets a header from a fixed value or the request itself; this
//! layer takes its values from a different request, the one being served, and may refuse the
//! call. tower-http's `ValidateRequestHeader` refuses by answering with a response; this layer
//! refuses with an error before the request leaves, since it runs in a client stack.
//!
//! # Example: a courier endpoint's calls
//!
//! ```
//! use courier::layers::context::ServedRequest;
//! use courier::layers::session::{error::SessionRefused, SessionLayer};
//! use courier::options::SessionOptions;
//! use courier::transport::Body;
//! use courier::tree::{EndpointMeta, Kind};
//! use courier::BoxError;
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
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: the served request's session cookie goes upstream on every call but
//! those a closure marks [`SessionMode::Off`] (a public service that must not see it).
//!
//! ```
//! use courier::layers::context::ServedRequest;
//! use courier::layers::session::SessionLayer;
//! use courier::options::{SessionMode, SessionOptions};
//! use http::Request;
//! use http_body_util::BodyExt;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let echo = |headers: http::HeaderMap| async move {
//! #     headers.get("cookie").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
//! # };
//! # let app = axum::Router::new()
//! #     .route("/me", axum::routing::get(echo))
//! #     .route("/public/news", axum::routing::get(echo));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let session = SessionLayer::new(SessionOptions::new().cookies(["sid"])).session_for(
//!     |request: &Request<String>| match request.uri().path().starts_with("/public/") {
//!         true => SessionMode::Off,
//!         false => SessionMode::On,
//!     },
//! );
//! let service = ServiceBuilder::new().layer(session).service(client);
//!
//! // The request being served, as `ContextLayer` puts it in scope.
//! let (served, ()) = Request::get("/dashboard")
//!     .header("cookie", "sid=s1; theme=dark")
//!     .body(())?
//!     .into_parts();
//! let served = ServedRequest::new(served, None);
//!
//! let echoed = |path: &str| {
//!     let request = Request::get(format!("http://{addr}{path}")).body(String::new());
//!     let (service, served) = (service.clone(), served.clone());
//!     async move {
//!         let response = served.scope(service.oneshot(request?)).await?;
//!         Ok::<_, courier::BoxError>(response.into_body().collect().await?.to_bytes())
//!     }
//! };
//! assert_eq!(echoed("/me").await?, "sid=s1");
//! assert_eq!(echoed("/public/news").await?, "");
//! # Ok(())
//! # }
//! ```

use courier_core::context::ServedRequest;
use courier_core::{BoxError, EndpointMeta, Kind, PathOptionCookies, SessionMode, SessionOptions};
use http::{Request, Response};
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};

use self::config::Config;
use self::error::{SessionRefused, Subject};
use crate::FromMeta;

mod config;
mod cookies;
pub mod csrf;
pub mod error;
pub mod future;
mod issue;
mod site;
#[cfg(test)]
mod tests;

pub use self::issue::{IssueRefused, IssuedSession, SessionCookies};

/// Whether a served request's `Origin` is its own (by host and port, against its `Host`): a
/// page of the server's own origin made it. `false` without an `Origin` or with a malformed one.
///
/// What a proxy asks before it tells a page why it refused a WebSocket handshake (browsers
/// show a refused handshake as a close with 1006 and nothing else): it accepts the socket and
/// closes it with the reason only for its own pages, never for another site's.
///
/// ```
/// use courier::layers::session::is_own_origin;
///
/// let own = http::Request::get("/api/ws")
///     .header("host", "app.example.com")
///     .header("origin", "https://app.example.com")
///     .body(())
///     .unwrap();
/// assert!(is_own_origin(own.headers(), own.uri()));
/// let other = http::Request::get("/api/ws")
///     .header("host", "app.example.com")
///     .header("origin", "https://evil.example")
///     .body(())
///     .unwrap();
/// assert!(!is_own_origin(other.headers(), other.uri()));
/// ```
pub fn is_own_origin(headers: &http::HeaderMap, uri: &http::Uri) -> bool {
    headers
        .get(http::header::ORIGIN)
        .and_then(|origin| site::Origin::parse(origin.as_bytes()))
        .is_some_and(|origin| origin.is_own(headers, uri))
}

/// Carries the served user's session on outgoing calls; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct SessionLayer<M = FromMeta> {
    config: Arc<Config>,
    session_for: M,
}

/// The [`SessionMode`] of each call [`Session`] sees: on (checked writes), unguarded (no
/// checks), or off (the session is not carried).
///
/// Implemented by [`FromMeta`] (the request's [`EndpointMeta::get_session`]; on, without one)
/// and by any `Fn(&Request<B>) -> SessionMode`.
pub trait SessionFor<B> {
    /// The mode of the call `request` makes.
    fn session_for(&self, request: &Request<B>) -> SessionMode;
}

impl<B> SessionFor<B> for FromMeta {
    fn session_for(&self, request: &Request<B>) -> SessionMode {
        request
            .extensions()
            .get::<EndpointMeta>()
            .map_or(SessionMode::On, EndpointMeta::get_session)
    }
}

impl<B, F> SessionFor<B> for F
where
    F: Fn(&Request<B>) -> SessionMode,
{
    fn session_for(&self, request: &Request<B>) -> SessionMode {
        self(request)
    }
}

impl SessionLayer {
    /// A layer that keeps the session `options` describe.
    pub fn new(options: SessionOptions) -> Self {
        Self {
            config: Arc::new(Config::new(options)),
            session_for: FromMeta,
        }
    }
}

impl<M> SessionLayer<M> {
    /// Decides each call's [`SessionMode`] with `session_for`, instead of its
    /// [`EndpointMeta`].
    pub fn session_for<N>(self, session_for: N) -> SessionLayer<N> {
        SessionLayer {
            config: self.config,
            session_for,
        }
    }
}

impl<S, M: Clone> Layer<S> for SessionLayer<M> {
    type Service = Session<S, M>;

    fn layer(&self, inner: S) -> Self::Service {
        Session {
            inner,
            config: Arc::clone(&self.config),
            session_for: self.session_for.clone(),
        }
    }
}

/// The service [`SessionLayer`] makes.
#[derive(Clone, Debug)]
pub struct Session<S, M = FromMeta> {
    inner: S,
    config: Arc<Config>,
    session_for: M,
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
}

impl<S, M> Session<S, M> {
    define_inner_service_accessors!();
}

impl<S, M, ReqBody, ResBody> Service<Request<ReqBody>> for Session<S, M>
where
    M: SessionFor<ReqBody>,
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
        let mode = self.session_for.session_for(&request);
        let read = Kind::of_request(&request) == Kind::Query;
        if mode == SessionMode::Off {
            return future::ResponseFuture::called(self.inner.call(request), None);
        }
        let Some(served) = ServedRequest::for_request(&request) else {
            self.config.log_unserved(&request);
            return future::ResponseFuture::called(self.inner.call(request), None);
        };
        let guarded = mode == SessionMode::On && !read;
        let add_to_cookies = request.extensions().get::<PathOptionCookies>().is_some();
        if let Err(reason) = self.config.apply(
            &served,
            request.headers_mut(),
            mode,
            guarded,
            add_to_cookies,
        ) {
            let subject = if read { Subject::Read } else { Subject::Write };
            let hint = self.config.hint(reason, served.headers());
            let refused = SessionRefused::new(reason, subject).hinted(hint);
            return future::ResponseFuture::refused(refused);
        }
        let pass_back = self.config.pass_set_cookie.then(|| future::PassBack {
            served,
            config: Arc::clone(&self.config),
        });
        future::ResponseFuture::called(self.inner.call(request), pass_back)
    }
}

impl<M> SessionLayer<M> {
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
    /// use courier::layers::context::ServedRequest;
    /// use courier::layers::session::SessionLayer;
    /// use courier::options::SessionOptions;
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
        let refused = |reason| {
            let hint = self.config.hint(reason, served.headers());
            SessionRefused::new(reason, Subject::Handshake).hinted(hint)
        };
        site::check_origin(&self.config.trusted_origins, served.headers(), served.uri())
            .map_err(refused)?;
        if self.config.fetch_metadata {
            site::check_fetch_metadata(&self.config.trusted_origins, served).map_err(refused)?;
        }
        Ok(())
    }

    /// The session a served request's cookies carry (its session and bearer cookies as
    /// `name=value`, sorted: [`csrf::binding`]), when its CSRF cookie holds a token signed for
    /// that session with the options' key ([`SessionOptions::csrf_signed`]); `None` without a
    /// key, without session cookies, or when the token is missing or not signed for them.
    ///
    /// Only the app's sign-in, which holds the key, makes such a pair, so the session is one
    /// the app issued rather than cookie values a client made up: what a server may count a
    /// user's requests by (the proxy's rate limit does) without a client escaping the count by
    /// sending new values. It is the cookies' values, a credential: hash it before keeping it.
    ///
    /// ```
    /// use courier::layers::session::{csrf, SessionLayer};
    /// use courier::options::{CsrfKey, SessionOptions};
    ///
    /// let key = CsrfKey::new(*b"a 32-byte key, random in real use");
    /// let session = SessionLayer::new(
    ///     SessionOptions::new().cookies(["sid"]).csrf_signed("csrf", "x-csrf-token", key.clone()),
    /// );
    /// let token = csrf::issue(&key, "sid=s1")?;
    /// let cookies = |cookie: String| {
    ///     let mut headers = http::HeaderMap::new();
    ///     headers.insert("cookie", cookie.parse().unwrap());
    ///     headers
    /// };
    /// let issued = cookies(format!("sid=s1; csrf={token}"));
    /// assert_eq!(session.signed_session(&issued).as_deref(), Some("sid=s1"));
    /// // Another session's value with that token, or no token: not a session the app issued.
    /// assert_eq!(session.signed_session(&cookies(format!("sid=s2; csrf={token}"))), None);
    /// assert_eq!(session.signed_session(&cookies("sid=s1".to_owned())), None);
    /// # Ok::<(), csrf::IssueError>(())
    /// ```
    pub fn signed_session(&self, headers: &http::HeaderMap) -> Option<String> {
        self.config.signed_session(headers)
    }
}
