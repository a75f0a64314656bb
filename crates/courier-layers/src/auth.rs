//! [`AuthLayer`]: sets `Authorization: Bearer <token>` from an async token supplier (the
//! spec's `authMiddleware({ getToken })`).
//!
//! Before each request the layer asks its supplier for a token, a [`GetToken`]: any
//! `Fn() -> impl Future<Output = Result<T, E>>` where the token `T` is a `String`, `&'static
//! str`, `Arc<str>`, `Box<str>` or [`HeaderValue`] (see [`IntoToken`]), and the error `E`
//! converts into a [`BoxError`]. The supplier runs on every call, so it decides how long a token
//! is reused (a cache behind an `Arc`) and when it is refreshed; acquiring, refreshing and
//! logging in are outside this layer, as they are outside the spec.
//!
//! The rules:
//!
//! - The header is `Authorization` unless [`header`](AuthLayer::header) names another, and its
//!   value is `Bearer <token>` unless [`scheme`](AuthLayer::scheme) names another scheme or
//!   [`raw`](AuthLayer::raw) sends the token alone. The value is marked
//!   [sensitive](HeaderValue::set_sensitive), so HTTP/2 never indexes it and well-behaved
//!   loggers hide it.
//! - A request that already has the header keeps it, and the supplier is not asked, unless the
//!   layer is [`overriding`](AuthLayer::overriding). A header on the request by the time it
//!   reaches this layer was put there by something nearer the call (the call's or the endpoint's
//!   own headers, the session of the user being served), and the spec's rule is that headers set
//!   by the source, a middleware or an endpoint are always sent: the more specific one stays.
//!   Use `overriding()` when the supplier's token must win over any header already set.
//!   Through the proxy, a browser's copy of the header (relayed because it is allow-listed) is
//!   not the call's own: the supplier's token replaces it, as the spec's rule that a
//!   middleware's header wins over the browser's copy asks
//!   ([`ServedRequest::is_relayed`](courier_core::context::ServedRequest::is_relayed)).
//! - A supplier that answers `Ok(None)` (`T = Option<_>`) means "no token now": the request
//!   goes without one, and any header it already has stays.
//! - A supplier that fails, or a token (or scheme) that is not a valid header value, fails the
//!   call with a [`TokenError`](error::TokenError) before the inner service is called. Its
//!   `source()` is the supplier's error or the header value's. Neither message ever contains
//!   the token.
//!
//! tower-http's `ValidateRequestHeaderLayer::bearer` checks a fixed token on the serving side,
//! and its `SetRequestHeaderLayer` sets a value it can compute synchronously; this layer is the
//! client's half, with a token that may take I/O to get.
//!
//! ```
//! use courier_layers::auth::AuthLayer;
//! use http::{header::AUTHORIZATION, Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier_core::BoxError> {
//! let get_token = || async {
//!     // A token store, an OAuth client, a secrets manager...
//!     Ok::<_, Infallible>("s3cr3t".to_string())
//! };
//! let upstream = service_fn(|request: Request<()>| async move {
//!     let value = request.headers()[AUTHORIZATION].clone();
//!     assert!(value.is_sensitive());
//!     Ok::<_, Infallible>(Response::new(value))
//! });
//!
//! let service = ServiceBuilder::new()
//!     .layer(AuthLayer::new(get_token))
//!     .service(upstream);
//! let response = service.oneshot(Request::get("/me").body(())?).await?;
//! assert_eq!(response.into_body(), "Bearer s3cr3t");
//! # Ok(())
//! # }
//! ```

use self::future::ResponseFuture;
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::BoxError;
use http::header::{HeaderName, HeaderValue, InvalidHeaderValue, AUTHORIZATION};
use http::Request;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// Supplies the token for each call: implemented by every `Fn() -> impl Future<Output =
/// Result<T, E>>` with `T: IntoToken` and `E: Into<BoxError>`.
///
/// Implement it by hand to give the supplier a nameable type.
pub trait GetToken {
    /// The token.
    type Token: IntoToken;
    /// Why no token could be had.
    type Error: Into<BoxError>;
    /// The future the token comes from.
    type Future: Future<Output = Result<Self::Token, Self::Error>>;

    /// Starts getting a token for one call.
    fn get_token(&self) -> Self::Future;
}

impl<F, Fut, T, E> GetToken for F
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: IntoToken,
    E: Into<BoxError>,
{
    type Token = T;
    type Error = E;
    type Future = Fut;

    fn get_token(&self) -> Fut {
        self()
    }
}

/// A token a [`GetToken`] supplier answers: the text after the scheme, or nothing (`None`) to
/// send the call without one.
pub trait IntoToken {
    /// The token's bytes.
    type Bytes: AsRef<[u8]>;

    /// The token, or `None` for "no token now".
    fn into_token(self) -> Option<Self::Bytes>;
}

macro_rules! into_token {
    ($($ty:ty),*) => {$(
        impl IntoToken for $ty {
            type Bytes = Self;

            fn into_token(self) -> Option<Self> {
                Some(self)
            }
        }
    )*};
}

into_token!(String, &'static str, Bytes, HeaderValue);

impl IntoToken for Arc<str> {
    type Bytes = Arc<[u8]>;

    fn into_token(self) -> Option<Arc<[u8]>> {
        Some(self.into())
    }
}

impl IntoToken for Box<str> {
    type Bytes = Box<[u8]>;

    fn into_token(self) -> Option<Box<[u8]>> {
        Some(self.into_boxed_bytes())
    }
}

impl<T: IntoToken> IntoToken for Option<T> {
    type Bytes = T::Bytes;

    fn into_token(self) -> Option<T::Bytes> {
        self.and_then(IntoToken::into_token)
    }
}

/// Sets a bearer token from an async supplier on each request; see the [module docs](self).
#[derive(Clone)]
#[must_use]
pub struct AuthLayer<G> {
    get_token: G,
    config: Arc<Config>,
}

#[derive(Clone, Debug)]
struct Config {
    header: HeaderName,
    /// `None` sends the token alone.
    scheme: Option<Arc<str>>,
    overriding: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            header: AUTHORIZATION,
            scheme: Some(Arc::from("Bearer")),
            overriding: false,
        }
    }
}

impl<G> AuthLayer<G> {
    /// Sets `Authorization: Bearer <token>` from `get_token` on requests that do not have an
    /// `Authorization` header yet.
    pub fn new(get_token: G) -> Self {
        Self {
            get_token,
            config: Arc::default(),
        }
    }

    /// Sends `<scheme> <token>` (`Token`, `Basic`, ...) instead of `Bearer <token>`.
    ///
    /// A scheme that is not a valid header value fails each call with a
    /// [`TokenError`](error::TokenError).
    pub fn scheme(mut self, scheme: impl Into<Arc<str>>) -> Self {
        Arc::make_mut(&mut self.config).scheme = Some(scheme.into());
        self
    }

    /// Sends the token as the whole header value, with no scheme before it (APIs that take
    /// an API key in a header of their own).
    pub fn raw(mut self) -> Self {
        Arc::make_mut(&mut self.config).scheme = None;
        self
    }

    /// Puts the token in `header` instead of `Authorization`. The scheme stays unless
    /// [`raw`](Self::raw) drops it.
    pub fn header(mut self, header: HeaderName) -> Self {
        Arc::make_mut(&mut self.config).header = header;
        self
    }

    /// Replaces the header when the request already has it, instead of keeping it.
    pub fn overriding(mut self) -> Self {
        Arc::make_mut(&mut self.config).overriding = true;
        self
    }

    /// Keeps the header when the request already has it, without asking the supplier: the
    /// default.
    pub fn if_not_present(mut self) -> Self {
        Arc::make_mut(&mut self.config).overriding = false;
        self
    }
}

impl<G> fmt::Debug for AuthLayer<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthLayer")
            .field("get_token", &std::any::type_name::<G>())
            .field("config", &self.config)
            .finish()
    }
}

impl<S, G: Clone> Layer<S> for AuthLayer<G> {
    type Service = Auth<S, G>;

    fn layer(&self, inner: S) -> Self::Service {
        Auth {
            inner,
            get_token: self.get_token.clone(),
            config: Arc::clone(&self.config),
        }
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Clone)]
pub struct Auth<S, G> {
    inner: S,
    get_token: G,
    config: Arc<Config>,
}

impl<S, G> Auth<S, G> {
    /// Wraps `inner` with [`AuthLayer::new`]'s defaults.
    pub fn new(inner: S, get_token: G) -> Self {
        Self {
            inner,
            get_token,
            config: Arc::default(),
        }
    }

    /// An [`AuthLayer`], for use with `ServiceBuilder`.
    pub fn layer(get_token: G) -> AuthLayer<G> {
        AuthLayer::new(get_token)
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

impl<S: fmt::Debug, G> fmt::Debug for Auth<S, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("inner", &self.inner)
            .field("get_token", &std::any::type_name::<G>())
            .field("config", &self.config)
            .finish()
    }
}

impl<S, G, B> Service<Request<B>> for Auth<S, G>
where
    S: Service<Request<B>> + Clone,
    S::Error: Into<BoxError>,
    G: GetToken,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S, B, G>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let header = &self.config.header;
        // A browser's copy relayed by the proxy is no header of the call's own: the
        // middleware's token replaces it (the specification's Authentication 1).
        if !self.config.overriding
            && request.headers().contains_key(header)
            && !ServedRequest::is_relayed(&request, header)
        {
            return ResponseFuture::call(self.inner.call(request));
        }
        // The inner service is called once the token is in; take the one that was made ready
        // and leave a clone in its place for the next call.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        ResponseFuture::after_token(
            self.get_token.get_token(),
            inner,
            request,
            Arc::clone(&self.config),
        )
    }
}

/// `<scheme> <token>`, or the token alone, marked sensitive.
fn header_value(scheme: Option<&str>, token: &[u8]) -> Result<HeaderValue, InvalidHeaderValue> {
    let mut value = match scheme {
        Some(scheme) => {
            let mut bytes = Vec::with_capacity(scheme.len() + 1 + token.len());
            bytes.extend_from_slice(scheme.as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(token);
            // Checked like `from_bytes`, without copying the bytes again.
            HeaderValue::from_maybe_shared(Bytes::from(bytes))?
        }
        None => HeaderValue::from_bytes(token)?,
    };
    value.set_sensitive(true);
    Ok(value)
}

pub mod future {
    //! The future [`Auth`](super::Auth) returns.

    use super::error::TokenError;
    use super::{header_value, Config, GetToken, IntoToken};
    use courier_core::BoxError;
    use http::Request;
    use pin_project_lite::pin_project;
    use std::fmt;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{ready, Context, Poll};
    use tower::Service;

    pin_project! {
        /// The response future of [`Auth`](super::Auth): the supplier's future, then the inner
        /// service's.
        pub struct ResponseFuture<S, B, G>
        where
            S: Service<Request<B>>,
            G: GetToken,
        {
            #[pin]
            state: State<S, B, G::Future, S::Future>,
        }
    }

    pin_project! {
        #[project = StateProj]
        #[project_replace = StateReplace]
        enum State<S, B, T, F> {
            Token {
                #[pin]
                token: T,
                inner: S,
                request: Request<B>,
                config: Arc<Config>,
            },
            Call {
                #[pin]
                future: F,
            },
            // Between the supplier's answer and the inner call, and for good once the supplier's
            // failure has been handed out.
            Done,
        }
    }

    impl<S, B, G> ResponseFuture<S, B, G>
    where
        S: Service<Request<B>>,
        G: GetToken,
    {
        /// Calls `inner` with `request` straight away.
        pub(super) fn call(future: S::Future) -> Self {
            Self {
                state: State::Call { future },
            }
        }

        /// Calls `inner` with `request` once `token` answers.
        pub(super) fn after_token(
            token: G::Future,
            inner: S,
            request: Request<B>,
            config: Arc<Config>,
        ) -> Self {
            Self {
                state: State::Token {
                    token,
                    inner,
                    request,
                    config,
                },
            }
        }
    }

    impl<S, B, G> Future for ResponseFuture<S, B, G>
    where
        S: Service<Request<B>>,
        S::Error: Into<BoxError>,
        G: GetToken,
    {
        type Output = Result<S::Response, BoxError>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            loop {
                let token = match self.as_mut().project().state.project() {
                    StateProj::Token { token, .. } => ready!(token.poll(cx)),
                    StateProj::Call { future } => return future.poll(cx).map_err(Into::into),
                    StateProj::Done => panic!("auth::ResponseFuture polled after completion"),
                };
                let StateReplace::Token {
                    mut inner,
                    mut request,
                    config,
                    ..
                } = self.as_mut().project().state.project_replace(State::Done)
                else {
                    unreachable!("the state was Token a moment ago");
                };
                let token = token.map_err(|e| TokenError::supplier(e.into()))?;
                if let Some(token) = token.into_token() {
                    let value = header_value(config.scheme.as_deref(), token.as_ref())
                        .map_err(TokenError::invalid_value)?;
                    request.headers_mut().insert(config.header.clone(), value);
                }
                let future = inner.call(request);
                self.as_mut()
                    .project()
                    .state
                    .project_replace(State::Call { future });
            }
        }
    }

    impl<S, B, G> fmt::Debug for ResponseFuture<S, B, G>
    where
        S: Service<Request<B>>,
        G: GetToken,
    {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let state = match &self.state {
                State::Token { .. } => "token",
                State::Call { .. } => "call",
                State::Done => "done",
            };
            f.debug_struct("ResponseFuture")
                .field("state", &state)
                .finish()
        }
    }
}

pub mod error {
    //! The error of [`Auth`](super::Auth).

    use courier_core::BoxError;
    use http::header::InvalidHeaderValue;
    use std::fmt;

    /// Why [`AuthLayer`](super::AuthLayer) failed a call before sending it: the supplier failed,
    /// or its token is not a valid header value. `source()` is the supplier's error or the header
    /// value's.
    #[derive(Debug)]
    pub struct TokenError {
        kind: TokenErrorKind,
        source: BoxError,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum TokenErrorKind {
        Supplier,
        InvalidValue,
    }

    impl TokenError {
        pub(super) fn supplier(source: BoxError) -> Self {
            Self {
                kind: TokenErrorKind::Supplier,
                source,
            }
        }

        pub(super) fn invalid_value(source: InvalidHeaderValue) -> Self {
            Self {
                kind: TokenErrorKind::InvalidValue,
                source: source.into(),
            }
        }

        /// Whether the supplier answered a token (or the layer has a scheme) that cannot be a
        /// header value, rather than failing itself.
        pub fn is_invalid_value(&self) -> bool {
            self.kind == TokenErrorKind::InvalidValue
        }
    }

    impl fmt::Display for TokenError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // Never the token itself: it is a secret.
            f.write_str(match self.kind {
                TokenErrorKind::Supplier => "the token supplier failed",
                TokenErrorKind::InvalidValue => "the token is not a valid header value",
            })
        }
    }

    impl std::error::Error for TokenError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&*self.source)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::error::TokenError;
    use super::*;
    use http::Response;
    use std::convert::Infallible;
    use std::error::Error as _;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::{service_fn, ServiceExt};

    /// An upstream that answers with the request's headers and counts its calls.
    fn upstream(
        calls: Arc<AtomicUsize>,
    ) -> impl Service<Request<()>, Response = Response<http::HeaderMap>, Error = Infallible> + Clone
    {
        service_fn(move |request: Request<()>| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(Response::new(request.headers().clone())) }
        })
    }

    fn token(
        value: &'static str,
    ) -> impl Fn() -> std::future::Ready<Result<&'static str, Infallible>> + Clone {
        move || std::future::ready(Ok(value))
    }

    async fn headers<S>(service: S, request: Request<()>) -> http::HeaderMap
    where
        S: Service<Request<()>, Response = Response<http::HeaderMap>, Error = BoxError>,
    {
        service.oneshot(request).await.unwrap().into_body()
    }

    fn get() -> Request<()> {
        Request::get("/me").body(()).unwrap()
    }

    #[tokio::test]
    async fn sets_a_sensitive_bearer_header() {
        let service = AuthLayer::new(token("abc")).layer(upstream(Arc::default()));
        let headers = headers(service, get()).await;
        let value = &headers[AUTHORIZATION];
        assert_eq!(value, "Bearer abc");
        assert!(value.is_sensitive());
    }

    #[tokio::test]
    async fn another_scheme_or_none() {
        let service = AuthLayer::new(token("abc"))
            .scheme("Token")
            .layer(upstream(Arc::default()));
        assert_eq!(headers(service, get()).await[AUTHORIZATION], "Token abc");

        let service = AuthLayer::new(token("abc"))
            .raw()
            .layer(upstream(Arc::default()));
        let headers = headers(service, get()).await;
        assert_eq!(headers[AUTHORIZATION], "abc");
        assert!(headers[AUTHORIZATION].is_sensitive());
    }

    #[tokio::test]
    async fn another_header() {
        let api_key = HeaderName::from_static("x-api-key");
        let service = AuthLayer::new(token("k-1"))
            .header(api_key.clone())
            .raw()
            .layer(upstream(Arc::default()));
        let headers = headers(service, get()).await;
        assert_eq!(headers[&api_key], "k-1");
        assert!(headers[&api_key].is_sensitive());
        assert!(!headers.contains_key(AUTHORIZATION));
    }

    #[tokio::test]
    async fn asks_the_supplier_on_every_call() {
        let asked = Arc::new(AtomicUsize::new(0));
        let supplier = {
            let asked = Arc::clone(&asked);
            move || {
                let n = asked.fetch_add(1, Ordering::SeqCst);
                async move {
                    tokio::task::yield_now().await;
                    Ok::<_, Infallible>(format!("t{n}"))
                }
            }
        };
        let mut service = AuthLayer::new(supplier).layer(upstream(Arc::default()));
        for n in 0..3 {
            let response = service.ready().await.unwrap().call(get()).await.unwrap();
            assert_eq!(
                response.into_body()[AUTHORIZATION],
                format!("Bearer t{n}").as_str()
            );
        }
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }

    #[derive(Debug)]
    struct NoToken;

    impl fmt::Display for NoToken {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the token store is locked")
        }
    }

    impl std::error::Error for NoToken {}

    #[tokio::test]
    async fn a_failing_supplier_fails_the_call_before_it_is_sent() {
        let calls = Arc::new(AtomicUsize::new(0));
        let supplier = || async { Err::<String, _>(NoToken) };
        let service = AuthLayer::new(supplier).layer(upstream(Arc::clone(&calls)));
        let err = service.oneshot(get()).await.unwrap_err();

        let token_error = err.downcast_ref::<TokenError>().expect("a TokenError");
        assert!(!token_error.is_invalid_value());
        assert_eq!(token_error.to_string(), "the token supplier failed");
        assert!(token_error.source().unwrap().is::<NoToken>());
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_invalid_token_is_an_error_not_a_panic() {
        let calls = Arc::new(AtomicUsize::new(0));
        let service =
            AuthLayer::new(token("abc\r\nx-injected: 1")).layer(upstream(Arc::clone(&calls)));
        let err = service.oneshot(get()).await.unwrap_err();

        let token_error = err.downcast_ref::<TokenError>().expect("a TokenError");
        assert!(token_error.is_invalid_value());
        assert!(
            !token_error.to_string().contains("abc"),
            "the token never shows"
        );
        assert!(token_error
            .source()
            .unwrap()
            .is::<http::header::InvalidHeaderValue>());
        assert_eq!(calls.load(Ordering::SeqCst), 0);

        // A bad scheme is caught the same way.
        let service = AuthLayer::new(token("abc"))
            .scheme("Bear\ner")
            .layer(upstream(Arc::clone(&calls)));
        let err = service.oneshot(get()).await.unwrap_err();
        assert!(err.downcast_ref::<TokenError>().unwrap().is_invalid_value());
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_existing_header_stays_unless_overriding() {
        let asked = Arc::new(AtomicUsize::new(0));
        let supplier = {
            let asked = Arc::clone(&asked);
            move || {
                asked.fetch_add(1, Ordering::SeqCst);
                std::future::ready(Ok::<_, Infallible>("from-supplier"))
            }
        };
        let with_header = || {
            Request::get("/me")
                .header(AUTHORIZATION, "Basic dXNlcg==")
                .body(())
                .unwrap()
        };

        let service = AuthLayer::new(supplier.clone()).layer(upstream(Arc::default()));
        assert_eq!(
            headers(service, with_header()).await[AUTHORIZATION],
            "Basic dXNlcg=="
        );
        assert_eq!(asked.load(Ordering::SeqCst), 0, "not asked when not needed");

        let service = AuthLayer::new(supplier.clone())
            .overriding()
            .layer(upstream(Arc::default()));
        let headers_sent = headers(service, with_header()).await;
        assert_eq!(
            headers_sent
                .get_all(AUTHORIZATION)
                .iter()
                .collect::<Vec<_>>(),
            ["Bearer from-supplier"]
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);

        let service = AuthLayer::new(supplier)
            .overriding()
            .if_not_present()
            .layer(upstream(Arc::default()));
        assert_eq!(
            headers(service, with_header()).await[AUTHORIZATION],
            "Basic dXNlcg=="
        );
    }

    #[tokio::test]
    async fn a_browsers_copy_relayed_by_the_proxy_is_replaced() {
        let (parts, ()) = Request::get("/api/request")
            .header(AUTHORIZATION, "Bearer from-the-browser")
            .body(())
            .unwrap()
            .into_parts();
        let relayed = |served: ServedRequest| {
            Request::get("/me")
                .header(AUTHORIZATION, "Bearer from-the-browser")
                .extension(served)
                .body(())
                .unwrap()
        };
        let served = ServedRequest::new(parts, None);
        let service = AuthLayer::new(token("t0k")).layer(upstream(Arc::default()));
        let sent = headers(service, relayed(served.clone().relaying([AUTHORIZATION]))).await;
        assert_eq!(
            sent.get_all(AUTHORIZATION).iter().collect::<Vec<_>>(),
            ["Bearer t0k"]
        );
        // Served but not relayed (a handler's own call header): it stays.
        let service = AuthLayer::new(token("t0k")).layer(upstream(Arc::default()));
        let sent = headers(service, relayed(served)).await;
        assert_eq!(sent[AUTHORIZATION], "Bearer from-the-browser");
    }

    #[tokio::test]
    async fn no_token_now_sends_without_one() {
        let supplier = || async { Ok::<Option<String>, Infallible>(None) };
        let calls = Arc::new(AtomicUsize::new(0));
        let service = AuthLayer::new(supplier).layer(upstream(Arc::clone(&calls)));
        assert!(!headers(service, get()).await.contains_key(AUTHORIZATION));
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        // And an overriding layer leaves an existing header alone.
        let service = AuthLayer::new(supplier)
            .overriding()
            .layer(upstream(Arc::default()));
        let request = Request::get("/me")
            .header(AUTHORIZATION, "Bearer kept")
            .body(())
            .unwrap();
        assert_eq!(
            headers(service, request).await[AUTHORIZATION],
            "Bearer kept"
        );
    }

    #[tokio::test]
    async fn tokens_of_every_kind() {
        async fn sent<T: IntoToken + Clone>(token: T) -> HeaderValue {
            let supplier = move || std::future::ready(Ok::<_, Infallible>(token.clone()));
            let service = AuthLayer::new(supplier).layer(upstream(Arc::default()));
            headers(service, get()).await[AUTHORIZATION].clone()
        }
        assert_eq!(sent(String::from("a")).await, "Bearer a");
        assert_eq!(sent(Arc::<str>::from("b")).await, "Bearer b");
        assert_eq!(sent(Box::<str>::from("c")).await, "Bearer c");
        assert_eq!(sent(Bytes::from_static(b"d")).await, "Bearer d");
        assert_eq!(sent(HeaderValue::from_static("e")).await, "Bearer e");
        assert_eq!(sent(Some("f")).await, "Bearer f");
    }

    #[tokio::test]
    async fn the_ready_service_is_the_one_called() {
        // A service that must be polled ready before each call, as tower's contract says.
        #[derive(Default)]
        struct Strict {
            ready: bool,
        }
        // A clone is a fresh handle that has not been polled ready, as with tower's `Buffer`.
        impl Clone for Strict {
            fn clone(&self) -> Self {
                Self::default()
            }
        }
        impl Service<Request<()>> for Strict {
            type Response = Response<()>;
            type Error = Infallible;
            type Future = std::future::Ready<Result<Response<()>, Infallible>>;

            fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
                self.ready = true;
                Poll::Ready(Ok(()))
            }

            fn call(&mut self, _: Request<()>) -> Self::Future {
                assert!(self.ready, "called without poll_ready");
                self.ready = false;
                std::future::ready(Ok(Response::new(())))
            }
        }

        let mut service = AuthLayer::new(token("abc")).layer(Strict::default());
        for _ in 0..2 {
            service.ready().await.unwrap().call(get()).await.unwrap();
        }
    }

    #[tokio::test]
    async fn fits_a_courier_stack_as_middleware() {
        use courier_core::{Body, HttpService, Middleware};

        let transport = HttpService::new(service_fn(|request: Request<Body>| async move {
            let value = request.headers()[AUTHORIZATION].as_bytes().to_vec();
            Ok::<_, BoxError>(Response::new(Body::from(value)))
        }));
        let get_token = || async { Ok::<_, BoxError>(String::from("abc")) };
        let middleware = Middleware::new("auth", AuthLayer::new(get_token));
        let request = Request::get("/me").body(Body::empty()).unwrap();
        let response = middleware.apply(transport).oneshot(request).await.unwrap();
        assert_eq!(response.into_body().as_bytes(), Some(&b"Bearer abc"[..]));
    }

    #[test]
    fn debug_shows_the_configuration_not_the_supplier() {
        let layer = AuthLayer::new(token("abc")).scheme("Token");
        let debug = format!("{layer:?}");
        assert!(debug.contains("AuthLayer") && debug.contains("Token"));
        assert!(!debug.contains("abc"));
    }
}
