//! [`AuthLayer`]: sets `Authorization: Bearer <token>` from an async token supplier.
//!
//! Before each request the layer asks its supplier for a token, a [`GetToken`]: any
//! `Fn() -> impl Future<Output = Result<T, E>>` where the token `T` is a `String`, `&'static
//! str`, `Arc<str>`, `Box<str>` or [`HeaderValue`] (see [`IntoToken`]), and the error `E`
//! converts into a [`BoxError`]. The supplier runs on every call, so it decides how long a token
//! is reused (a cache behind an `Arc`) and when it is refreshed; acquiring, refreshing and
//! logging in are outside this layer.
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
//!   own headers, the session of the user being served), and headers set by the source, a
//!   middleware or an endpoint are always sent: the more specific one stays.
//!   Use `overriding()` when the supplier's token must win over any header already set.
//!   Through the proxy, a browser's copy of the header (relayed because it is allow-listed) is
//!   not the call's own: the supplier's token replaces it, since a middleware's header wins
//!   over the browser's copy
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
//! use courier::layers::auth::AuthLayer;
//! use http::{header::AUTHORIZATION, Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
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
//!
//! # Example: on a bare hyper-util client
//!
//! The layer reads nothing of courier's: on any client, each call asks the supplier.
//!
//! ```
//! use courier::layers::auth::AuthLayer;
//! use http::Request;
//! use http_body_util::BodyExt;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use std::sync::Arc;
//! use tokio::sync::RwLock;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let echo = |headers: http::HeaderMap| async move {
//! #     headers["authorization"].to_str().unwrap().to_owned()
//! # };
//! # let app = axum::Router::new().route("/me", axum::routing::get(echo));
//! # let addr = courier_test_support::serve(app).await;
//! // A token store that something else refreshes.
//! let store = Arc::new(RwLock::new(String::from("t0k-1")));
//! let tokens = Arc::clone(&store);
//! let get_token = move || {
//!     let tokens = Arc::clone(&tokens);
//!     async move { Ok::<_, std::convert::Infallible>(tokens.read().await.clone()) }
//! };
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let service = ServiceBuilder::new().layer(AuthLayer::new(get_token)).service(client);
//!
//! let me = || Request::get(format!("http://{addr}/me")).body(String::new());
//! let response = service.clone().oneshot(me()?).await?;
//! assert_eq!(response.into_body().collect().await?.to_bytes(), "Bearer t0k-1");
//!
//! *store.write().await = String::from("t0k-2");
//! let response = service.oneshot(me()?).await?;
//! assert_eq!(response.into_body().collect().await?.to_bytes(), "Bearer t0k-2");
//! # Ok(())
//! # }
//! ```

pub mod error;
pub mod future;
#[cfg(test)]
mod tests;

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

    define_inner_service_accessors!();
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
        // middleware's token replaces it, as a header a middleware sets is always sent and the
        // browser's copy dropped.
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
