//! [`RetryLayer`]: sends a read or an idempotent call again when the upstream fails in a way
//! that another attempt may cure.
//!
//! # Which policy
//!
//! The layer asks its [`RetryFor`] which requests may be sent again, and by which policy, once
//! per call. The default, [`FromMeta`], keeps the rules of this section and the next; a
//! closure `Fn(&Request<B>) -> bool` decides instead with [`RetryLayer::retry_for`]: the
//! requests it names are retried by the layer's policy, whatever their method.
//!
//! A request's [`EndpointMeta`](courier_core::EndpointMeta) picks the policy through its
//! [`get_retry`](courier_core::EndpointMeta::get_retry): [`RetrySetting::Off`] never retries,
//! [`RetrySetting::Policy`] uses the endpoint's own [`RetryPolicy`], and [`RetrySetting::Inherit`], like a
//! request without meta, uses the layer's (by default [`RetryPolicy::default`]: 3 attempts in
//! all, statuses 0, 429, 502, 503 and 504, honouring `Retry-After`).
//!
//! [`RetrySetting::Off`]: courier_core::RetrySetting::Off
//! [`RetrySetting::Policy`]: courier_core::RetrySetting::Policy
//! [`RetrySetting::Inherit`]: courier_core::RetrySetting::Inherit
//!
//! # Which requests
//!
//! Reads and idempotent methods are retried: GET, HEAD, OPTIONS, QUERY, PUT, DELETE and TRACE,
//! and any request whose meta says it reads (a `.reads()` POST). A non-idempotent write (POST,
//! PATCH, any other method) is retried only when the policy sets
//! [`writes`](RetryPolicy::writes), since sending it twice may do it twice — or when its
//! endpoint sets `idempotency_key` and it carries its `Idempotency-Key` header
//! ([`IdempotencyKeyLayer`] puts one on, once per call): then on a connection failure, a 429 or
//! a 503, of the statuses the policy retries, since an upstream that deduplicates by the key
//! applies it once however often it arrives.
//!
//! A request is sent again as a copy: method, URI, version, headers, all its extensions (they
//! are `Clone` in `http` 1, so the [`EndpointMeta`](courier_core::EndpointMeta) and whatever
//! outer layers put there travel with every attempt) and its body, copied with
//! [`BufferedBody::try_clone_body`]. A request whose body cannot be copied (a streamed body) is
//! sent once, whatever the policy says.
//!
//! The copy is taken when the call is made, since the first attempt consumes the request, and
//! only for a call that may be retried. It is kept light: the body is shared, not duplicated
//! (a buffered body's bytes are reference-counted), and a request whose only extension is its
//! `EndpointMeta`, as every request a courier client sends, keeps that one value rather than a
//! copy of the whole extension map; the map is rebuilt only for an attempt that is actually
//! sent again.
//!
//! # Which outcomes
//!
//! A response whose status is in the policy's [`statuses`](RetryPolicy::statuses), and an
//! error from the inner service when those statuses include `0`. **Every inner error counts as
//! status 0**: a refused or reset connection, a DNS or TLS failure, and an attempt cut short by
//! a [`TimeoutLayer::per_attempt`](crate::timeout::TimeoutLayer::per_attempt) below this one
//! alike. A call's deadline (a `TimeoutLayer` above this one) ends the call, waits included,
//! wherever the retries are. A response that is
//! retried is dropped, its body unread; the last attempt's response or error is returned as is,
//! so a caller sees the upstream's own 503 when every attempt failed.
//!
//! # Delays
//!
//! Before retry *n* (the first retry is 1) the layer waits `initial_ms × factor^(n-1)`, capped
//! at `max_ms`. With [`jitter`](courier_core::Backoff::jitter) on, the wait is drawn uniformly
//! between zero and that value ("full jitter"), which spreads out clients that failed together
//! better than a fixed or half-fixed delay does. When the policy honours `Retry-After` and the
//! retried response carries one, in delta-seconds (`Retry-After: 2`) or as an HTTP-date, the
//! wait is exactly that, capped at `max_ms` and without jitter. Waits use
//! [`tokio::time::sleep`], so the layer needs a tokio runtime with time enabled.
//!
//! # The retry budget
//!
//! Attempts per call are not enough on their own: when an upstream starts failing, every
//! client retrying three times triples its load. All services made by one `RetryLayer` (and
//! their clones) share a [`TpsBudget`]: each call that may be retried deposits into it, each
//! retry withdraws, and once it is empty the failing outcome is returned instead of retried.
//! The default is tower's `TpsBudget::default()`: over a sliding 10-second window, 10 retries a
//! second plus one retry for every five calls. Set another with [`RetryLayer::budget`]; share
//! one `Arc<TpsBudget>` between layers to budget them together.
//!
//! Each retry is logged with `tracing::debug!` (endpoint, attempt, status or error, delay), and
//! so is a retry the budget refused.
//!
//! # Compared with tower's `Retry`
//!
//! [`tower::retry::Retry`] with a [`Policy`](tower::retry::Policy) could do the same, and this
//! layer does what such a policy would: it reads the policy from each request, decides by method
//! and status, honours `Retry-After`, waits with backoff and jitter and keeps tower's
//! [`TpsBudget`]. It is its own service because tower's copies the request through the policy
//! before every attempt, the first included, in full, and clones the whole service and policy
//! into each call's future: this one keeps the lighter copy described above, and a call that
//! cannot be retried (a write, a streamed body, a policy of one attempt) carries no copy and no
//! second service at all. Like tower's, it needs a `Clone` inner service, and it waits for the
//! inner service to be ready before each retry.
//!
//! What that is worth, measured in a direct call over a socket (`benches/client.rs`, the
//! `caller` client, callgrind, instructions per call): with the client's retry layer replaced by
//! tower's `Retry` and a `Policy` making the same decisions — the same rules, the request copied
//! in full before the first attempt as `clone_request` asks, none before the last — a call costs
//! 3.0 % more at concurrency 1 (33,399 → 34,396) and 5.4 % more at 64 (37,478 → 39,489). Over
//! the in-memory service of `benches/layers.rs` (`layer/tower_retry` against `layer/retry`),
//! tower's costs 16 % more instructions in the retry service itself.
//!
//! # Example: a transport that fails once
//!
//! ```
//! use courier::layers::retry::RetryLayer;
//! use courier::layers::timeout::TimeoutLayer;
//! use courier::options::RetryPolicy;
//! use courier::transport::Body;
//! use courier::BoxError;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//! use std::time::Duration;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), BoxError> {
//! # tokio::time::pause();
//! // A transport that is unavailable once, then answers.
//! let calls = Arc::new(AtomicUsize::new(0));
//! let transport = service_fn({
//!     let calls = calls.clone();
//!     move |_request: http::Request<Body>| {
//!         let status = if calls.fetch_add(1, Ordering::SeqCst) == 0 { 503 } else { 200 };
//!         async move {
//!             Ok::<_, BoxError>(http::Response::builder().status(status).body(Body::empty())?)
//!         }
//!     }
//! });
//!
//! // Retry outside, so that the per-attempt bound bounds each attempt.
//! let service = ServiceBuilder::new()
//!     .layer(RetryLayer::new(RetryPolicy::default().max_attempts(4)))
//!     .layer(TimeoutLayer::per_attempt().default_bound(Duration::from_secs(10)))
//!     .service(transport);
//!
//! let request = http::Request::get("http://127.0.0.1:3000/users/7").body(Body::empty())?;
//! let response = service.oneshot(request).await?;
//! assert_eq!(response.status(), 200);
//! assert_eq!(calls.load(Ordering::SeqCst), 2);
//! # Ok(())
//! # }
//! ```
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: a closure lets the layer retry `POST /jobs` too (an upstream that
//! deduplicates by the `idempotency-key` header), with the layer's policy.
//!
//! ```
//! use bytes::Bytes;
//! use courier::layers::retry::RetryLayer;
//! use courier::options::RetryPolicy;
//! use http::Request;
//! use http_body_util::Full;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! # use std::sync::atomic::{AtomicUsize, Ordering};
//! # use std::sync::Arc;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let calls = Arc::new(AtomicUsize::new(0));
//! # let counted = Arc::clone(&calls);
//! # let app = axum::Router::new().route("/jobs", axum::routing::post(move || async move {
//! #     // Unavailable once, then accepted.
//! #     let status = if counted.fetch_add(1, Ordering::SeqCst) == 0 { 503 } else { 202 };
//! #     http::StatusCode::from_u16(status).unwrap()
//! # }));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let backoff = courier::options::Backoff { initial_ms: 10, max_ms: 100, ..Default::default() };
//! let policy = RetryPolicy::default().backoff(backoff);
//! let service = ServiceBuilder::new()
//!     .layer(RetryLayer::new(policy).retry_for(|request: &Request<Full<Bytes>>| {
//!         request.headers().contains_key("idempotency-key")
//!     }))
//!     .service(client);
//!
//! let job = Request::post(format!("http://{addr}/jobs"))
//!     .header("idempotency-key", "job-41")
//!     .body(Full::new(Bytes::from_static(b"{}")))?;
//! assert_eq!(service.oneshot(job).await?.status(), 202);
//! # assert_eq!(calls.load(Ordering::SeqCst), 2);
//! # Ok(())
//! # }
//! ```

mod copy;
pub mod future;
mod idempotency;
mod policy;
mod retry_after;
#[cfg(test)]
mod tests;

pub use self::idempotency::{IdempotencyKeyLayer, IdempotencyKeys};
pub use self::policy::RetryFor;

use self::copy::Copy;
use self::future::ResponseFuture;
use crate::{BufferedBody, FromMeta};
use courier_core::RetryPolicy;
use http::{Request, Response};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::retry::budget::TpsBudget;
use tower::{Layer, Service};

/// Applies [`Retry`] to a service: retries reads and idempotent calls on the statuses of the
/// request's policy, with backoff, `Retry-After` and a shared budget.
///
/// See the [module docs](self).
#[derive(Clone, Debug)]
pub struct RetryLayer<R = FromMeta> {
    default: Arc<RetryPolicy>,
    budget: Arc<TpsBudget>,
    retry_for: R,
}

impl RetryLayer {
    /// Retries by `policy` the requests whose [`EndpointMeta`](courier_core::EndpointMeta)
    /// inherits the stack's policy, and requests without meta; with tower's default budget.
    pub fn new(policy: RetryPolicy) -> Self {
        Self {
            default: Arc::new(policy),
            budget: Arc::new(TpsBudget::default()),
            retry_for: FromMeta,
        }
    }
}

impl<R> RetryLayer<R> {
    /// Decides with `retry_for` which requests may be sent again, and by which policy, instead
    /// of their [`EndpointMeta`](courier_core::EndpointMeta) and method.
    pub fn retry_for<Q>(self, retry_for: Q) -> RetryLayer<Q> {
        RetryLayer {
            default: self.default,
            budget: self.budget,
            retry_for,
        }
    }

    /// Replaces the retry budget shared by every service this layer makes. Pass an
    /// `Arc<TpsBudget>` to share one budget with other layers.
    ///
    /// ```
    /// use courier::layers::retry::RetryLayer;
    /// use std::time::Duration;
    /// use tower::retry::budget::TpsBudget;
    ///
    /// // Over 10 s: one retry a second, plus one for every ten calls.
    /// let layer = RetryLayer::default().budget(TpsBudget::new(Duration::from_secs(10), 1, 0.1));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn budget(mut self, budget: impl Into<Arc<TpsBudget>>) -> Self {
        self.budget = budget.into();
        self
    }

    /// The policy for requests that do not bring their own.
    pub fn policy(&self) -> &RetryPolicy {
        &self.default
    }
}

impl Default for RetryLayer {
    /// [`RetryPolicy::default`], with tower's default budget.
    fn default() -> Self {
        Self::new(RetryPolicy::default())
    }
}

impl<S, R: Clone> Layer<S> for RetryLayer<R> {
    type Service = Retry<S, R>;

    fn layer(&self, inner: S) -> Self::Service {
        Retry {
            inner,
            shared: Arc::new(Shared {
                default: self.default.clone(),
                budget: self.budget.clone(),
            }),
            retry_for: self.retry_for.clone(),
        }
    }
}

/// What a service and its clones share: the default policy and the budget.
#[derive(Debug)]
pub(crate) struct Shared {
    default: Arc<RetryPolicy>,
    budget: Arc<TpsBudget>,
}

/// Retries failed reads and idempotent calls to the inner service.
///
/// See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Retry<S, R = FromMeta> {
    inner: S,
    shared: Arc<Shared>,
    retry_for: R,
}

impl<S> Retry<S> {
    /// Wraps `inner`, retrying by `policy` the requests that do not bring their own, with a
    /// budget of its own (tower's default).
    pub fn new(inner: S, policy: RetryPolicy) -> Self {
        RetryLayer::new(policy).layer(inner)
    }

    /// A [`RetryLayer`] with `policy` as its default.
    pub fn layer(policy: RetryPolicy) -> RetryLayer {
        RetryLayer::new(policy)
    }
}

impl<S, R> Retry<S, R> {
    define_inner_service_accessors!();
}

impl<S, R, ReqBody, ResBody> Service<Request<ReqBody>> for Retry<S, R>
where
    R: RetryFor<ReqBody>,
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    S::Error: fmt::Display,
    ReqBody: BufferedBody,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S, ReqBody, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The copy is taken before the first attempt consumes the request; the clone of the
        // inner service makes the later attempts, readied before each.
        let again = self
            .retry_for
            .retry_for(&request, &self.shared.default)
            .and_then(|policy| Copy::of_retryable(&request, policy))
            .map(|copy| future::Again::new(copy, self.inner.clone(), self.shared.clone()));
        // A deadline above counts the call's attempts, to say how many there were.
        if let Some(meta) = again.as_ref().and_then(future::Again::meta) {
            meta.count_attempt();
        }
        ResponseFuture::new(self.inner.call(request), again)
    }
}
