//! [`TimeoutLayer`]: the deadline of a whole call, or the bound of each attempt.
//!
//! A call's `timeout` is its deadline, as ky's is: every attempt a retry layer makes, the waits
//! between them, and (in courier's clients) the reading of a buffered response body all fit in
//! it. Past it the call fails with an [`Elapsed`] error, boxed as a
//! [`BoxError`], that says how long the deadline was and how many attempts were made:
//! "the call did not finish within 1 s (3 attempts)". An `attempt_timeout`, for those who want
//! one, bounds each attempt inside the deadline: an attempt past it is cut short, and a retry
//! layer above counts it as a network failure (status 0) and may send the call again.
//!
//! Both are this layer, in two places:
//!
//! - [`TimeoutLayer::new`] / [`TimeoutLayer::from_meta`] above the retry layer: the call's
//!   deadline. Its default [`TimeoutFor`] is [`FromMeta`], the request's [`EndpointMeta`]'s
//!   [`get_timeout`](EndpointMeta::get_timeout) (the call's, else the endpoint's, its groups',
//!   the source's).
//! - [`TimeoutLayer::per_attempt`] under the retry layer: each attempt's bound, the
//!   `attempt_timeout` ([`AttemptFromMeta`]).
//!
//! A deadline counts its call's attempts in the request's [`EndpointMeta`]
//! ([`counting_attempts`](EndpointMeta::counting_attempts)); a
//! [`RetryLayer`](crate::retry::RetryLayer) under it counts each attempt it makes, which is how
//! the deadline's error can say how many there were.
//!
//! A closure `Fn(&Request<B>) -> Option<Duration>` decides instead of the meta with
//! [`TimeoutLayer::timeout_for`]. A request with no bound is passed through untouched: no timer
//! is created for it at all.
//!
//! # What the bound covers
//!
//! The layer bounds the inner service's response future: over an HTTP transport, sending the
//! request and receiving the response head, with whatever the inner layers do meanwhile
//! (retries and their waits, under a deadline). The response body streams after the layer has
//! handed the response on, so a long download or an event stream is never cut off by it; a
//! courier client bounds the reading of a *buffered* body by what is left of the same deadline
//! itself ([`Elapsed::reading_body`](error::Elapsed::reading_body)).
//!
//! # Where it goes
//!
//! The deadline goes above coalescing, so each caller's wait is bounded by its own timeout — a
//! caller that joined another's read in flight gives up at its own deadline and leaves the
//! shared call to the others — and the per-attempt bound under the retry layer ([the order
//! courier's client assembles](crate)).
//!
//! courier's clients keep the deadline around each call whole instead, with this module's
//! [`within`] (the same race), so that it also bounds the reading of a buffered body and costs a
//! call without a timeout nothing; their stacks have the per-attempt bound where an endpoint or
//! a call sets an `attempt_timeout`.
//!
//! # Compared with tower's `Timeout`
//!
//! [tower's `Timeout`](https://docs.rs/tower/0.5/tower/timeout/struct.Timeout.html) applies one
//! fixed duration to every request. This layer reads the bound from each request, so one stack
//! serves endpoints with different timeouts, and it adds no timer to a request without a bound.
//! Its error, [`Elapsed`], says which bound it was, how long, and how many
//! attempts the call made.
//!
//! # Example: a courier endpoint's bound
//!
//! ```
//! use courier::layers::timeout::{error::Elapsed, TimeoutLayer};
//! use courier::transport::Body;
//! use courier::tree::{EndpointMeta, Kind};
//! use courier::BoxError;
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
//!
//! # Example: a deadline over retries
//!
//! A transport that never answers; each attempt is cut at its `attempt_timeout` and sent again,
//! until the call's deadline ends it.
//!
//! ```
//! use courier::layers::retry::RetryLayer;
//! use courier::layers::timeout::{error::Elapsed, TimeoutLayer};
//! use courier::options::{Backoff, RetryPolicy};
//! use courier::transport::Body;
//! use courier::tree::{EndpointMeta, Kind};
//! use courier::BoxError;
//! use std::time::Duration;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), BoxError> {
//! # tokio::time::pause();
//! let transport = service_fn(|_request: http::Request<Body>| async {
//!     std::future::pending::<()>().await;
//!     Ok::<_, BoxError>(http::Response::new(Body::empty()))
//! });
//! let backoff = Backoff { initial_ms: 10, max_ms: 100, factor: 2.0, jitter: false };
//! let service = ServiceBuilder::new()
//!     .layer(TimeoutLayer::from_meta())
//!     .layer(RetryLayer::new(RetryPolicy::default().max_attempts(5).backoff(backoff)))
//!     .layer(TimeoutLayer::per_attempt())
//!     .service(transport);
//!
//! let meta = EndpointMeta::new("reports.daily", Kind::Query)
//!     .timeout(Duration::from_millis(250))
//!     .attempt_timeout(Duration::from_millis(100));
//! let request = http::Request::get("http://127.0.0.1:3000/daily").extension(meta).body(Body::empty())?;
//! let started = tokio::time::Instant::now();
//! let error = service.oneshot(request).await.unwrap_err();
//! // 0–100 ms, a 10 ms wait, 110–210 ms, a 20 ms wait, then the deadline at 250 ms (tokio's
//! // timers count whole milliseconds).
//! assert!(started.elapsed() >= Duration::from_millis(250));
//! assert!(started.elapsed() < Duration::from_millis(255));
//! let elapsed = error.downcast_ref::<Elapsed>().expect("the deadline's error");
//! assert_eq!(elapsed.attempts(), Some(3));
//! assert_eq!(error.to_string(), "the call did not finish within 250 ms (3 attempts)");
//! # Ok(())
//! # }
//! ```
//!
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

use self::error::Elapsed;
use self::future::ResponseFuture;
use crate::FromMeta;
use courier_core::{Attempts, BoxError, EndpointMeta};
use http::Request;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// Races `future` against the deadline `after`, as a [`TimeoutLayer`] does a call's response
/// future: its own output when it finishes first, else [`Elapsed`] (with the attempts
/// `attempts` counted by then, when given). For code that bounds more than one service's
/// response future: courier's clients bound each call whole — its stack, and the reading of a
/// buffered body — with it.
///
/// ```
/// use courier::layers::timeout::{error::Elapsed, within};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # tokio::time::pause();
/// let quick = within(async { 7 }, Duration::from_secs(1), None).await;
/// assert_eq!(quick, Ok(7));
/// let slow = within(std::future::pending::<()>(), Duration::from_millis(200), None).await;
/// assert_eq!(slow, Err(Elapsed::new(Duration::from_millis(200))));
/// # }
/// ```
pub fn within<F: std::future::Future>(
    future: F,
    after: Duration,
    attempts: Option<Attempts>,
) -> future::Within<F> {
    future::Within::new(future, Some((Elapsed::new(after), attempts)))
}

/// How [`Timeout`] finds a request's own bound; `None` leaves it to the layer's default.
///
/// Implemented by [`FromMeta`] (the request's [`EndpointMeta::get_timeout`], the call's
/// deadline), by [`AttemptFromMeta`] (its `attempt_timeout`, for a per-attempt layer) and by any
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

/// The [`TimeoutFor`] of [`TimeoutLayer::per_attempt`]: the request's [`EndpointMeta`]'s
/// `attempt_timeout` (the call's, else the endpoint's, its groups', the source's).
#[derive(Clone, Copy, Debug, Default)]
pub struct AttemptFromMeta;

impl<B> TimeoutFor<B> for AttemptFromMeta {
    fn timeout_for(&self, request: &Request<B>) -> Option<Duration> {
        request
            .extensions()
            .get::<EndpointMeta>()
            .and_then(|meta| meta.get_settings().get_attempt_timeout())
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

/// Applies [`Timeout`] to a service: bounds each call by its own deadline (its
/// [`EndpointMeta`]'s by default), else by the layer's default — or, made with
/// [`per_attempt`](TimeoutLayer::per_attempt), each attempt.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct TimeoutLayer<T = FromMeta> {
    default: Option<Duration>,
    timeout_for: T,
    per_attempt: bool,
}

impl TimeoutLayer {
    /// Bounds a call by its [`EndpointMeta`]'s timeout, and by `default` when it has none.
    pub const fn new(default: Duration) -> Self {
        Self {
            default: Some(default),
            timeout_for: FromMeta,
            per_attempt: false,
        }
    }

    /// Bounds a call by its [`EndpointMeta`]'s timeout only; a request without one is passed
    /// through untouched, with no timer. The same as [`TimeoutLayer::default`].
    pub const fn from_meta() -> Self {
        Self {
            default: None,
            timeout_for: FromMeta,
            per_attempt: false,
        }
    }
}

impl TimeoutLayer<AttemptFromMeta> {
    /// Bounds each attempt, under a retry layer: by its [`EndpointMeta`]'s `attempt_timeout`
    /// ([`AttemptFromMeta`]; none without one). Its error is an [`Elapsed`] that
    /// [`is_attempt`](error::Elapsed::is_attempt), which a retry policy counts as status 0.
    pub const fn per_attempt() -> Self {
        Self {
            default: None,
            timeout_for: AttemptFromMeta,
            per_attempt: true,
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
            per_attempt: self.per_attempt,
        }
    }

    /// The bound of a request for which its [`TimeoutFor`] says `None`.
    #[must_use]
    pub fn default_bound(mut self, default: Duration) -> Self {
        self.default = Some(default);
        self
    }
}

impl<S, T: Clone> Layer<S> for TimeoutLayer<T> {
    type Service = Timeout<S, T>;

    fn layer(&self, inner: S) -> Self::Service {
        Timeout {
            inner,
            default: self.default,
            timeout_for: self.timeout_for.clone(),
            per_attempt: self.per_attempt,
        }
    }
}

/// Bounds each call to the inner service by its own deadline (its [`EndpointMeta`]'s by
/// default), else by a default — or each attempt, under a retry layer; fails with
/// [`Elapsed`] when the bound runs out first.
///
/// See the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct Timeout<S, T = FromMeta> {
    inner: S,
    default: Option<Duration>,
    timeout_for: T,
    per_attempt: bool,
}

impl<S> Timeout<S> {
    /// Wraps `inner`, bounding calls without a timeout of their own by `default`.
    pub const fn new(inner: S, default: Duration) -> Self {
        Self {
            inner,
            default: Some(default),
            timeout_for: FromMeta,
            per_attempt: false,
        }
    }

    /// Wraps `inner`, bounding only calls whose [`EndpointMeta`] has a timeout.
    pub const fn from_meta(inner: S) -> Self {
        Self {
            inner,
            default: None,
            timeout_for: FromMeta,
            per_attempt: false,
        }
    }

    /// A [`TimeoutLayer`] with `default` as its default bound.
    pub const fn layer(default: Duration) -> TimeoutLayer {
        TimeoutLayer::new(default)
    }
}

impl<S, T> Timeout<S, T> {
    define_inner_service_accessors!();
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

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let bound = self.timeout_for.timeout_for(&request).or(self.default);
        if self.per_attempt {
            let bound = bound.map(|after| (Elapsed::attempt(after), None));
            return ResponseFuture::new(self.inner.call(request), bound);
        }
        let Some(after) = bound else {
            return ResponseFuture::new(self.inner.call(request), None);
        };
        // The attempts are counted (by a retry layer under this one) only for a call whose
        // deadline can say how many there were.
        let attempts = request
            .extensions_mut()
            .get_mut::<EndpointMeta>()
            .map(|meta| match meta.attempts() {
                Some(counting) => counting.clone(),
                None => {
                    let attempts = Attempts::new();
                    meta.counting_attempts(attempts.clone());
                    attempts
                }
            });
        ResponseFuture::new(
            self.inner.call(request),
            Some((Elapsed::new(after), attempts)),
        )
    }
}
