//! [`TimeoutLayer`]: bounds each attempt of a call.
//!
//! The bound for a request is its [`EndpointMeta`]'s
//! [`get_timeout`](EndpointMeta::get_timeout) (already resolved: the call's, else the
//! endpoint's, else the source's) when it has one, else the layer's own default. A request with
//! neither is passed through untouched: no timer is created for it at all. When the bound runs
//! out first, the call fails with an [`Elapsed`](error::Elapsed) error, boxed as a
//! [`BoxError`].
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
//! # Example
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

pub mod error;
pub mod future;
#[cfg(test)]
mod tests;

use self::future::ResponseFuture;
use courier_core::{BoxError, EndpointMeta};
use http::Request;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// Applies [`Timeout`] to a service: bounds each request by its [`EndpointMeta`]'s timeout, else
/// by the layer's default.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeoutLayer {
    default: Option<Duration>,
}

impl TimeoutLayer {
    /// Bounds a request by its [`EndpointMeta`]'s timeout, and by `default` when it has none.
    pub const fn new(default: Duration) -> Self {
        Self {
            default: Some(default),
        }
    }

    /// Bounds a request by its [`EndpointMeta`]'s timeout only; a request without one is passed
    /// through untouched, with no timer. The same as [`TimeoutLayer::default`].
    pub const fn from_meta() -> Self {
        Self { default: None }
    }
}

impl<S> Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Timeout {
            inner,
            default: self.default,
        }
    }
}

/// Bounds each request to the inner service by its [`EndpointMeta`]'s timeout, else by a
/// default; fails with [`Elapsed`](error::Elapsed) when the bound runs out first.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct Timeout<S> {
    inner: S,
    default: Option<Duration>,
}

impl<S> Timeout<S> {
    /// Wraps `inner`, bounding requests without a timeout of their own by `default`.
    pub const fn new(inner: S, default: Duration) -> Self {
        Self {
            inner,
            default: Some(default),
        }
    }

    /// Wraps `inner`, bounding only requests whose [`EndpointMeta`] has a timeout.
    pub const fn from_meta(inner: S) -> Self {
        Self {
            inner,
            default: None,
        }
    }

    /// A [`TimeoutLayer`] with `default` as its default bound.
    pub const fn layer(default: Duration) -> TimeoutLayer {
        TimeoutLayer::new(default)
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

impl<S, B> Service<Request<B>> for Timeout<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
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
        let bound = request
            .extensions()
            .get::<EndpointMeta>()
            .and_then(EndpointMeta::get_timeout)
            .or(self.default);
        ResponseFuture::new(self.inner.call(request), bound)
    }
}
