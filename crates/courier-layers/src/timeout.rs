//! [`TimeoutLayer`]: bounds each attempt of a call.
//!
//! The bound for a request is its [`EndpointMeta`]'s
//! [`timeout_value`](EndpointMeta::timeout_value) (already resolved: the call's, else the
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
//! use courier_core::{Body, BoxError, EndpointMeta, Kind};
//! use courier_layers::timeout::{error::Elapsed, TimeoutLayer};
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
            .and_then(EndpointMeta::timeout_value)
            .or(self.default);
        ResponseFuture::new(self.inner.call(request), bound)
    }
}

pub mod future {
    //! The future [`Timeout`](super::Timeout) returns.

    use super::error::Elapsed;
    use courier_core::BoxError;
    use pin_project_lite::pin_project;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};
    use std::time::Duration;
    use tokio::time::Sleep;

    pin_project! {
        /// The response future of [`Timeout`](super::Timeout): the inner future, raced against a
        /// timer when the request has a bound.
        #[derive(Debug)]
        pub struct ResponseFuture<F> {
            #[pin]
            inner: F,
            // `None` when the request has no bound: no timer is registered at all.
            #[pin]
            sleep: Option<Sleep>,
            after: Duration,
        }
    }

    impl<F> ResponseFuture<F> {
        pub(super) fn new(inner: F, bound: Option<Duration>) -> Self {
            Self {
                inner,
                sleep: bound.map(tokio::time::sleep),
                after: bound.unwrap_or_default(),
            }
        }

        /// Whether a timer bounds this attempt.
        #[cfg(test)]
        pub(super) fn is_bounded(&self) -> bool {
            self.sleep.is_some()
        }
    }

    impl<F, T, E> Future for ResponseFuture<F>
    where
        F: Future<Output = Result<T, E>>,
        E: Into<BoxError>,
    {
        type Output = Result<T, BoxError>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let this = self.project();
            // The inner future goes first, so an answer that is ready when the bound runs out
            // still wins.
            if let Poll::Ready(result) = this.inner.poll(cx) {
                return Poll::Ready(result.map_err(Into::into));
            }
            match this.sleep.as_pin_mut() {
                Some(sleep) => {
                    ready!(sleep.poll(cx));
                    Poll::Ready(Err(Box::new(Elapsed::new(*this.after))))
                }
                None => Poll::Pending,
            }
        }
    }
}

pub mod error {
    //! The error of [`Timeout`](super::Timeout).

    use std::fmt;
    use std::time::Duration;

    /// A request's bound ran out before the inner service answered.
    ///
    /// [`Timeout`](super::Timeout) returns it boxed as a [`BoxError`](courier_core::BoxError);
    /// find it with `error.downcast_ref::<Elapsed>()`, or by walking an error's `source()`
    /// chain when another layer wraps it.
    ///
    /// ```
    /// use courier_layers::timeout::error::Elapsed;
    /// use std::time::Duration;
    ///
    /// let error = Elapsed::new(Duration::from_millis(200));
    /// assert_eq!(error.to_string(), "the call did not finish within 200 ms");
    /// assert_eq!(Elapsed::new(Duration::from_secs(2)).to_string(), "the call did not finish within 2 s");
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Elapsed {
        after: Duration,
    }

    impl Elapsed {
        /// The error for a bound of `after`.
        pub const fn new(after: Duration) -> Self {
            Self { after }
        }

        /// The bound that ran out.
        pub const fn after(&self) -> Duration {
            self.after
        }
    }

    impl fmt::Display for Elapsed {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the call did not finish within ")?;
            let after = self.after;
            if after.subsec_nanos() == 0 && !after.is_zero() {
                write!(f, "{} s", after.as_secs())
            } else if after.subsec_nanos() % 1_000_000 == 0 {
                write!(f, "{} ms", after.as_millis())
            } else {
                write!(f, "{} µs", after.as_micros())
            }
        }
    }

    impl std::error::Error for Elapsed {}
}

#[cfg(test)]
mod tests {
    use super::error::Elapsed;
    use super::*;
    use courier_core::{Body, Kind};
    use http::Response;
    use std::io;
    use tokio::time::Instant;
    use tower::{service_fn, ServiceExt};

    /// A transport that answers after `delay`.
    fn answers_after(
        delay: Duration,
    ) -> impl Service<Request<Body>, Response = Response<Body>, Error = BoxError> + Clone {
        service_fn(move |_request: Request<Body>| async move {
            tokio::time::sleep(delay).await;
            Ok::<_, BoxError>(Response::new(Body::from("done")))
        })
    }

    fn request(meta: Option<EndpointMeta>) -> Request<Body> {
        let mut request = Request::get("http://127.0.0.1:1/users/7")
            .body(Body::empty())
            .unwrap();
        if let Some(meta) = meta {
            request.extensions_mut().insert(meta);
        }
        request
    }

    fn elapsed_of(result: Result<Response<Body>, BoxError>) -> Elapsed {
        *result
            .expect_err("the call should time out")
            .downcast_ref::<Elapsed>()
            .expect("an Elapsed error")
    }

    #[tokio::test(start_paused = true)]
    async fn the_meta_timeout_wins_over_the_default() {
        let service = TimeoutLayer::new(Duration::from_secs(10))
            .layer(answers_after(Duration::from_secs(60)));
        let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_millis(100));
        let start = Instant::now();
        let elapsed = elapsed_of(service.oneshot(request(Some(meta))).await);
        assert_eq!(elapsed.after(), Duration::from_millis(100));
        assert_eq!(start.elapsed(), Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn the_default_bounds_a_request_without_meta() {
        let service = TimeoutLayer::new(Duration::from_millis(300))
            .layer(answers_after(Duration::from_secs(60)));
        let start = Instant::now();
        let elapsed = elapsed_of(service.oneshot(request(None)).await);
        assert_eq!(elapsed.after(), Duration::from_millis(300));
        assert_eq!(start.elapsed(), Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn the_default_bounds_a_request_whose_meta_has_no_timeout() {
        let service = TimeoutLayer::new(Duration::from_millis(300))
            .layer(answers_after(Duration::from_secs(60)));
        let meta = EndpointMeta::new("users.get", Kind::Query);
        let elapsed = elapsed_of(service.oneshot(request(Some(meta))).await);
        assert_eq!(elapsed.after(), Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn no_timer_when_neither_meta_nor_default_has_a_bound() {
        let mut service = TimeoutLayer::from_meta().layer(answers_after(Duration::from_secs(3600)));
        let future = service.call(request(Some(EndpointMeta::new("users.get", Kind::Query))));
        assert!(!future.is_bounded());
        let start = Instant::now();
        let response = future.await.expect("no bound, so no timeout");
        assert_eq!(start.elapsed(), Duration::from_secs(3600));
        assert_eq!(response.status(), 200);

        let future = service.call(request(None));
        assert!(!future.is_bounded());
        let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_secs(1));
        assert!(service.call(request(Some(meta))).is_bounded());
    }

    #[tokio::test(start_paused = true)]
    async fn default_layer_bounds_nothing() {
        let service = TimeoutLayer::default().layer(answers_after(Duration::from_secs(3600)));
        assert!(service.oneshot(request(None)).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_within_the_bound_passes_through() {
        let service = TimeoutLayer::new(Duration::from_millis(300))
            .layer(answers_after(Duration::from_millis(299)));
        let response = service.oneshot(request(None)).await.expect("in time");
        assert_eq!(response.status(), 200);
    }

    #[tokio::test(start_paused = true)]
    async fn an_inner_error_is_passed_through_unchanged() {
        let service = TimeoutLayer::new(Duration::from_secs(1)).layer(service_fn(
            |_request: Request<Body>| async {
                Err::<Response<Body>, _>(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "refused",
                ))
            },
        ));
        let error = service.oneshot(request(None)).await.unwrap_err();
        let io = error
            .downcast_ref::<io::Error>()
            .expect("the inner io::Error");
        assert_eq!(io.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn elapsed_says_how_long_the_bound_was() {
        let message = |after| Elapsed::new(after).to_string();
        assert_eq!(
            message(Duration::from_millis(200)),
            "the call did not finish within 200 ms"
        );
        assert_eq!(
            message(Duration::from_secs(2)),
            "the call did not finish within 2 s"
        );
        assert_eq!(
            message(Duration::from_millis(1500)),
            "the call did not finish within 1500 ms"
        );
        assert_eq!(
            message(Duration::from_micros(250)),
            "the call did not finish within 250 µs"
        );
        assert_eq!(
            message(Duration::ZERO),
            "the call did not finish within 0 ms"
        );
        assert!(std::error::Error::source(&Elapsed::new(Duration::ZERO)).is_none());
    }
}
