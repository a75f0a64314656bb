//! [`TimeoutLayer`]: bounds each attempt of a call.
//!
//! The bound for a request is what the layer's [`TimeoutFor`] says for it, else the layer's own
//! default. A request with neither is passed through untouched: no timer is created for it at
//! all. When the bound runs out first, the call fails with an [`Elapsed`](error::Elapsed) error,
//! boxed as a [`BoxError`].
//!
//! The default [`TimeoutFor`] is [`FromMeta`]: the request's [`EndpointMeta`]'s
//! [`get_timeout`](EndpointMeta::get_timeout) (already resolved: the call's, else the
//! endpoint's, else the source's). A closure `Fn(&Request<B>) -> Option<Duration>` decides
//! instead with [`TimeoutLayer::timeout_for`].
//!
//! # What the bound covers
//!
//! The bound covers the inner service's response future: over an HTTP transport, sending the
//! request and receiving the response head. The response body streams after the layer has
//! handed the response on and is not bounded by it, so a long download or an event stream is
//! never cut off. That is also all a [`RetryLayer`](crate::retry::RetryLayer) above it can act
//! on: a timed-out attempt is an error, which the retry policy counts as status 0.
//!
//! # Compared with tower's `Timeout`
//!
//! [tower's `Timeout`](https://docs.rs/tower/0.5/tower/timeout/struct.Timeout.html) applies one
//! fixed duration to every request. This layer reads the bound from each request, so one stack
//! serves endpoints with different timeouts, and it adds no timer to a request without a bound.
//! Its error, [`Elapsed`](error::Elapsed), says how long the bound was. It sits inside the retry
//! layer, so it bounds each attempt rather than the whole call.
//!
//! # Example: a courier endpoint's bound
//!
//! ```
//! use courier::layers::timeout::{error::Elapsed, TimeoutLayer};
//! use courier::{Body, BoxError, EndpointMeta, Kind};
//! use std::time::Duration;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), BoxError> {
//! # tokio::time::pause();
//! // A transport that takes a minute to answer.
//! let transport = service_fn(|_request: http::Request<Body>| async {
//!     tokio::time::sleep(Duration::from_secs(60)).await;
//!     Ok::<_, BoxError>(http::Response::new(Body::empty()))
//! });
//! let service = ServiceBuilder::new()
//!     .layer(TimeoutLayer::new(Duration::from_secs(30)))
//!     .service(transport);
//!
//! // The endpoint's own bound wins over the layer's default.
//! let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_millis(200));
//! let request = http::Request::get("http://127.0.0.1:3000/users/7")
//!     .extension(meta)
//!     .body(Body::empty())?;
//! let error = service.oneshot(request).await.unwrap_err();
//! let elapsed = error.downcast_ref::<Elapsed>().expect("an Elapsed error");
//! assert_eq!(elapsed.after(), Duration::from_millis(200));
//! assert_eq!(error.to_string(), "the call did not finish within 200 ms");
//! # Ok(())
//! # }
//! ```

//! # Example: on a bare hyper-util client
//!
//! No courier definition: the layer's default bounds every request, and a closure gives one
//! path a shorter bound.
//!
//! ```
//! use courier::layers::timeout::{error::Elapsed, TimeoutLayer};
//! use http::Request;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use std::time::Duration;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let app = axum::Router::new()
//! #     .route("/fast", axum::routing::get(|| async { "fast" }))
//! #     .route("/slow", axum::routing::get(|| async {
//! #         tokio::time::sleep(Duration::from_secs(5)).await;
//! #         "slow"
//! #     }));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let service = ServiceBuilder::new()
//!     .layer(TimeoutLayer::new(Duration::from_secs(10)).timeout_for(|request: &Request<String>| {
//!         (request.uri().path() == "/slow").then_some(Duration::from_millis(100))
//!     }))
//!     .service(client);
//!
//! let fast = Request::get(format!("http://{addr}/fast")).body(String::new())?;
//! assert_eq!(service.clone().oneshot(fast).await?.status(), 200);
//!
//! let slow = Request::get(format!("http://{addr}/slow")).body(String::new())?;
//! let error = service.oneshot(slow).await.unwrap_err();
//! assert_eq!(error.downcast_ref::<Elapsed>().map(Elapsed::after), Some(Duration::from_millis(100)));
//! # Ok(())
//! # }
//! ```

pub mod error;
pub mod future;
#[cfg(test)]
mod tests;

use self::future::ResponseFuture;
use crate::FromMeta;
use courier_core::{BoxError, EndpointMeta};
use http::Request;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// How [`Timeout`] finds a request's own bound; `None` leaves it to the layer's default.
///
/// Implemented by [`FromMeta`] (the request's [`EndpointMeta::get_timeout`]) and by any
/// `Fn(&Request<B>) -> Option<Duration>`.
pub trait TimeoutFor<B> {
    /// The bound for `request`, or `None` for the layer's default.
    fn timeout_for(&self, request: &Request<B>) -> Option<Duration>;
}

impl<B> TimeoutFor<B> for FromMeta {
    fn timeout_for(&self, request: &Request<B>) -> Option<Duration> {
        request
            .extensions()
            .get::<EndpointMeta>()
            .and_then(EndpointMeta::get_timeout)
    }
}

impl<B, F> TimeoutFor<B> for F
where
    F: Fn(&Request<B>) -> Option<Duration>,
{
    fn timeout_for(&self, request: &Request<B>) -> Option<Duration> {
        self(request)
    }
}

/// Applies [`Timeout`] to a service: bounds each request by its own timeout (its
/// [`EndpointMeta`]'s by default), else by the layer's default.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct TimeoutLayer<T = FromMeta> {
    default: Option<Duration>,
    timeout_for: T,
}

impl TimeoutLayer {
    /// Bounds a request by its [`EndpointMeta`]'s timeout, and by `default` when it has none.
    pub const fn new(default: Duration) -> Self {
        Self {
            default: Some(default),
            timeout_for: FromMeta,
        }
    }

    /// Bounds a request by its [`EndpointMeta`]'s timeout only; a request without one is passed
    /// through untouched, with no timer. The same as [`TimeoutLayer::default`].
    pub const fn from_meta() -> Self {
        Self {
            default: None,
            timeout_for: FromMeta,
        }
    }
}

impl Default for TimeoutLayer {
    fn default() -> Self {
        Self::from_meta()
    }
}

impl<T> TimeoutLayer<T> {
    /// Finds each request's own bound with `timeout_for` instead of its [`EndpointMeta`]; the
    /// layer's default still bounds a request for which it says `None`.
    pub fn timeout_for<U>(self, timeout_for: U) -> TimeoutLayer<U> {
        TimeoutLayer {
            default: self.default,
            timeout_for,
        }
    }
}

impl<S, T: Clone> Layer<S> for TimeoutLayer<T> {
    type Service = Timeout<S, T>;

    fn layer(&self, inner: S) -> Self::Service {
        Timeout {
            inner,
            default: self.default,
            timeout_for: self.timeout_for.clone(),
        }
    }
}

/// Bounds each request to the inner service by its own timeout (its [`EndpointMeta`]'s by
/// default), else by a default; fails with [`Elapsed`](error::Elapsed) when the bound runs out
/// first.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct Timeout<S, T = FromMeta> {
    inner: S,
    default: Option<Duration>,
    timeout_for: T,
}

impl<S> Timeout<S> {
    /// Wraps `inner`, bounding requests without a timeout of their own by `default`.
    pub const fn new(inner: S, default: Duration) -> Self {
        Self {
            inner,
            default: Some(default),
            timeout_for: FromMeta,
        }
    }

    /// Wraps `inner`, bounding only requests whose [`EndpointMeta`] has a timeout.
    pub const fn from_meta(inner: S) -> Self {
        Self {
            inner,
            default: None,
            timeout_for: FromMeta,
        }
    }

    /// A [`TimeoutLayer`] with `default` as its default bound.
    pub const fn layer(default: Duration) -> TimeoutLayer {
        TimeoutLayer::new(default)
    }
}

impl<S, T> Timeout<S, T> {
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

impl<S, T, B> Service<Request<B>> for Timeout<S, T>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    T: TimeoutFor<B>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Waiting for readiness is not part of an attempt: a bound here would fail calls that
        // were never sent.
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let bound = self.timeout_for.timeout_for(&request).or(self.default);
        ResponseFuture::new(self.inner.call(request), bound)
    }
}
