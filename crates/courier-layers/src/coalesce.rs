//! Identical in-flight reads share one upstream call.
//!
//! When a read is sent while an identical one is still waiting for its answer, [`Coalesce`]
//! does not send it again: the second caller waits for the first call's response and gets a
//! copy of it. A page that asks for the same user three times at once, or a hundred requests a
//! server serves at once that all need the same configuration, cost one upstream call.
//!
//! tower has no such layer (its [`Buffer`](https://docs.rs/tower/latest/tower/buffer/) shares a
//! service, not a call). The idea is Go's `singleflight`, applied to HTTP requests: it is not a
//! cache, and only calls in flight are shared.
//!
//! # Which requests are shared
//!
//! - Reads only. A request with an [`EndpointMeta`] is shared when
//!   the endpoint reads and the call allows it ([`coalesce_value()`]); a request without one
//!   when its method reads (`GET`, `HEAD`, `OPTIONS`, `QUERY`). Writes never are.
//! - Only requests whose body the layer can read ahead, a [`BufferedBody`] that answers
//!   [`buffered()`](BufferedBody::buffered). A streamed body goes through unshared.
//! - Not requests for an event stream (`accept: text/event-stream`) or a protocol upgrade (an
//!   `upgrade` header): their response cannot be read to its end and copied.
//!
//! Everything else goes straight to the inner service, and its response body through untouched
//! (the [`CoalesceBody`] for it is the inner body).
//!
//! # What makes two requests identical
//!
//! The same method, full URI, headers and body bytes. Credentials are headers like any other:
//! two users' identical reads carry different `authorization` or `cookie` headers, so they are
//! never shared. Headers compare as HTTP does: the order of different names does not matter,
//! the order of one name's values does.
//!
//! Per-request tracing headers name a request without changing its response, so they are left
//! out: `x-request-id`, `traceparent` and `tracestate`. Add more with
//! [`CoalesceLayer::ignore_header`].
//!
//! The key is hashed once, and a hash hit is checked against the full key, so a hash collision
//! never shares a response between different requests.
//!
//! # How the answer is shared
//!
//! The first caller leads: its request goes to the inner service in a task of its own
//! (`tokio::spawn`, in the leader's tracing span and [served-request] scope), which reads the
//! response to its end once. Every caller, the leader included, then gets its own
//! `http::Response`: the status, version, headers, all extensions (http requires extension
//! values to be `Clone`) and a [`CoalesceBody`] over the same bytes, trailers included. A
//! shared response is therefore held in memory in full; turn coalescing off for a large
//! download (`coalesce(false)` on the endpoint or the call).
//!
//! The shared call is the leader's request, extensions included: in courier's stack, the
//! leader's [`EndpointMeta`] sets the retry and timeout of the call
//! the others wait on.
//!
//! Outside a tokio runtime there is no task to run a shared call in, and requests go through
//! unshared.
//!
//! # Cancellation
//!
//! A caller that drops its future leaves the call, and the call goes on for the others, whether
//! the one leaving led it or joined it. When the last caller leaves, the task is aborted, which
//! drops the inner future and so cancels the upstream call.
//!
//! Once a call has answered it is forgotten: a request that arrives after that starts a new
//! call.
//!
//! # Errors
//!
//! A failure of the shared call, from the inner service or while reading the response body,
//! reaches every caller (the leader included) as a [`Shared`](error::Shared) error whose
//! [`source()`](std::error::Error::source) is the original, so classifying an error by its
//! chain of causes works as without coalescing. A call whose task panicked ends with
//! [`Interrupted`](error::Interrupted). Requests that are not shared fail with the inner
//! service's own error.
//!
//! # Where it goes
//!
//! In courier's stack coalescing comes after the layers that set the session and forwarded
//! headers, so the key sees every credential, and before retry, so the callers share one
//! retried answer:
//!
//! `CancelPrevious → Session → Forward → middleware → Coalesce → Retry → Timeout → transport`
//!
//! A service and its clones share their calls in flight; each service [`CoalesceLayer`] makes
//! (each inner service it wraps) has its own.
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use courier_layers::coalesce::CoalesceLayer;
//! use http::{Request, Response};
//! use http_body_util::{BodyExt, Full};
//! use std::convert::Infallible;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier_core::BoxError> {
//! let calls = Arc::new(AtomicUsize::new(0));
//! let counted = Arc::clone(&calls);
//! let mut service = ServiceBuilder::new()
//!     .layer(CoalesceLayer::new())
//!     .service_fn(move |_request: Request<courier_core::Body>| {
//!         counted.fetch_add(1, Ordering::SeqCst);
//!         async { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("ada")))) }
//!     });
//!
//! let get = || Request::get("http://127.0.0.1:8080/users/7").body(courier_core::Body::empty());
//! // Two identical reads in flight at once...
//! let first = service.ready().await?.call(get()?);
//! let second = service.ready().await?.call(get()?);
//! let (first, second) = tokio::try_join!(first, second)?;
//!
//! // ...cost one call, and each caller gets the whole answer.
//! assert_eq!(calls.load(Ordering::SeqCst), 1);
//! assert_eq!(first.into_body().collect().await?.to_bytes(), "ada");
//! assert_eq!(second.into_body().collect().await?.to_bytes(), "ada");
//! # Ok(())
//! # }
//! ```
//!
//! [`coalesce_value()`]: courier_core::EndpointMeta::coalesce_value
//! [served-request]: courier_core::context::ServedRequest

mod body;
pub mod error;
mod flight;
pub mod future;
mod key;
#[cfg(test)]
mod tests;

pub use self::body::CoalesceBody;

use self::flight::{InFlight, Join};
use self::future::ResponseFuture;
use self::key::Key;
use crate::BufferedBody;
use bytes::Bytes;
use courier_core::{BoxError, EndpointMeta};
use http::{HeaderName, Request, Response};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// Makes identical in-flight reads share one upstream call; see the [module docs](self).
///
/// ```
/// use courier_layers::coalesce::CoalesceLayer;
/// use http::HeaderName;
///
/// let layer = CoalesceLayer::new().ignore_header(HeaderName::from_static("x-correlation-id"));
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct CoalesceLayer {
    ignored: Vec<HeaderName>,
}

impl CoalesceLayer {
    /// Shares identical reads, leaving `x-request-id`, `traceparent` and `tracestate` out of
    /// the comparison.
    pub fn new() -> Self {
        Self {
            ignored: key::TRACING_HEADERS.to_vec(),
        }
    }

    /// Leaves `name` out of the comparison too: a header that varies from request to request
    /// without changing the response, such as another correlation id.
    ///
    /// Never name a header that carries credentials or selects what the response holds: two
    /// requests that differ only in it would share one answer.
    #[must_use]
    pub fn ignore_header(mut self, name: HeaderName) -> Self {
        if !self.ignored.contains(&name) {
            self.ignored.push(name);
        }
        self
    }
}

impl Default for CoalesceLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Layer<S> for CoalesceLayer {
    type Service = Coalesce<S>;

    fn layer(&self, inner: S) -> Coalesce<S> {
        Coalesce {
            inner,
            in_flight: Arc::new(InFlight::new(self.ignored.clone().into_boxed_slice())),
        }
    }
}

/// Makes identical in-flight reads share one upstream call; see the [module docs](self).
///
/// Clones share their calls in flight.
#[derive(Clone)]
pub struct Coalesce<S> {
    inner: S,
    in_flight: Arc<InFlight>,
}

impl<S> Coalesce<S> {
    /// Wraps `inner` with the default settings of [`CoalesceLayer::new`].
    pub fn new(inner: S) -> Self {
        CoalesceLayer::new().layer(inner)
    }

    /// A [`CoalesceLayer`] with the default settings.
    pub fn layer() -> CoalesceLayer {
        CoalesceLayer::new()
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// How many distinct upstream calls this service and its clones have in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

impl<S: fmt::Debug> fmt::Debug for Coalesce<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coalesce")
            .field("inner", &self.inner)
            .field("ignored_headers", &self.in_flight.ignored())
            .finish_non_exhaustive()
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Coalesce<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    ReqBody: BufferedBody,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<CoalesceBody<ResBody>>;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Whether a request will join a call in flight is only known in `call`, so readiness
        // is the inner service's.
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let shared = key::may_share(&request)
            .then(|| Key::of(&request, self.in_flight.ignored()))
            .flatten()
            .and_then(|key| Some((key, tokio::runtime::Handle::try_current().ok()?)));
        let Some((key, runtime)) = shared else {
            return ResponseFuture::passthrough(self.take_ready().call(request));
        };
        match self.in_flight.join(key) {
            Join::Waiting { waiter, waiters } => {
                // The ready inner service stays where it is, unused, for the next call.
                tracing::debug!(
                    endpoint = request.extensions().get::<EndpointMeta>().map(EndpointMeta::path),
                    method = %request.method(),
                    path = request.uri().path(),
                    waiters,
                    "joined an identical read in flight"
                );
                ResponseFuture::shared(waiter)
            }
            Join::Leading { waiter, lead } => {
                lead.start(self.take_ready().call(request), &runtime);
                ResponseFuture::shared(waiter)
            }
        }
    }
}

impl<S: Clone> Coalesce<S> {
    /// The inner service `poll_ready` made ready, leaving a clone in its place: the clone is
    /// polled ready before the next call (tower's pattern for services that call a clone).
    fn take_ready(&mut self) -> S {
        let clone = self.inner.clone();
        std::mem::replace(&mut self.inner, clone)
    }
}
