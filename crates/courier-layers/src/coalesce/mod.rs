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
//! - Those the layer's [`CoalesceFor`] allows. The default, [`FromMeta`], allows reads only: a
//!   request with an [`EndpointMeta`] when the endpoint reads and the call allows it
//!   ([`get_coalesce()`]), a request without one when its method reads (`GET`, `HEAD`,
//!   `OPTIONS`, `QUERY`); writes never. A closure `Fn(&Request<B>) -> bool` decides instead with
//!   [`CoalesceLayer::coalesce_for`] — to share a GraphQL query sent as a `POST`, say.
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
//! Each shared read's key is written once, in one buffer: the method, the URI and the body's
//! length first, then the body and headers. A call in flight is found by a hash of that first
//! part only, what is cheap to hash and tells reads apart; a hash hit is then checked against
//! the call's full key, so a hash collision never shares a response between different
//! requests.
//!
//! # How the answer is shared
//!
//! The first read leads: its response future calls the inner service and polls the inner
//! future itself, in the caller's task, tracing span and [served-request] scope. A read that
//! arrives while that call waits for its response head joins it: it does not call the inner
//! service, and waits for the leader's answer.
//!
//! When the response head arrives, the call is forgotten: a read joins a call until that
//! call's response head arrives, and a read arriving after that starts a new call. Coalescing
//! shares calls in flight; it is not a cache. (An inner future ready at its first poll, such as
//! an in-memory service's, leaves no time to join: reads made one after another, each polled
//! before the next is made, each make their own call.)
//!
//! - Nobody joined (the usual case): the leader gets the inner response as it is, its body
//!   streamed through as it arrives. Coalescing then costs a lock to register the call and one
//!   to forget it, the call's key, and one allocation for the inner future; no task, no
//!   channel, no copy.
//! - Others joined: the leader reads the body to its end once, and every caller, the leader
//!   included, gets its own `http::Response`: the status, version, headers, all extensions
//!   (http requires extension values to be `Clone`) and a [`CoalesceBody`] over the same
//!   bytes, trailers included. A shared response is therefore held in memory in full; turn
//!   coalescing off for a large download (`coalesce(false)` on the endpoint or the call).
//!
//! The shared call is the leader's request, extensions included: in courier's stack, the
//! leader's [`EndpointMeta`] sets the retry and `attempt_timeout` of the call the others wait
//! on; each caller's deadline (its `timeout`) sits above this layer and bounds its own wait.
//!
//! Like any future, the leader's does its work when it is polled: the readers that joined wait
//! on it. Await the response futures you make, or drop them; a leader kept and never polled
//! holds its waiters up.
//!
//! # Cancellation
//!
//! A caller that drops its future leaves the call, and the call goes on for the others,
//! whether the one leaving led it or joined it. A leader that leaves while others wait hands
//! what is left of the call (the inner future, or the body it was reading for them) to a task
//! (`tokio::spawn`, in the tracing span and served-request scope it was dropped in), which
//! finishes it and answers them: that is the only case coalescing spawns. When the last party
//! leaves (the leader and every waiter), the call is cancelled: the inner future, or the
//! response body, is dropped, which cancels the upstream call.
//!
//! Outside a tokio runtime, reads are shared all the same, but a leader that leaves while
//! others wait has no task to hand the call to: the call is cancelled, and the waiters end with
//! [`Interrupted`](error::Interrupted).
//!
//! # Errors
//!
//! A failure of a call others joined, from the inner service or while reading the response
//! body, reaches every caller (the leader included) as a [`Shared`](error::Shared) error whose
//! [`source()`](std::error::Error::source) is the original, so classifying an error by its
//! chain of causes works as without coalescing. A call nobody joined fails as an unshared one
//! does: with the inner service's own error, or its body's. Waiters of a call that stopped
//! without answering (the inner future panicked, the task went on with it panicked or lost its
//! runtime, or its leader left outside a runtime) end with [`Interrupted`](error::Interrupted).
//!
//! # Where it goes
//!
//! In courier's stack ([the order its client assembles](crate)) coalescing comes after the
//! layers that set the session and forwarded headers, so the key sees every credential, and
//! before retry, so the callers share one retried answer.
//!
//! A service and its clones share their calls in flight; each service [`CoalesceLayer`] makes
//! (each inner service it wraps) has its own.
//!
//! # Example: identical reads
//!
//! ```
//! use bytes::Bytes;
//! use courier::layers::coalesce::CoalesceLayer;
//! use http::{Request, Response};
//! use http_body_util::{BodyExt, Full};
//! use std::convert::Infallible;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! let calls = Arc::new(AtomicUsize::new(0));
//! let counted = Arc::clone(&calls);
//! let mut service = ServiceBuilder::new()
//!     .layer(CoalesceLayer::new())
//!     .service_fn(move |_request: Request<courier::transport::Body>| {
//!         counted.fetch_add(1, Ordering::SeqCst);
//!         async { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("ada")))) }
//!     });
//!
//! let get = || Request::get("http://127.0.0.1:8080/users/7").body(courier::transport::Body::empty());
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
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: a closure lets identical `POST /graphql` queries share a call, on a
//! client of hyper's commonest body, `Full<Bytes>`.
//!
//! ```
//! use bytes::Bytes;
//! use courier::layers::coalesce::CoalesceLayer;
//! use http::Request;
//! use http_body_util::{BodyExt, Full};
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! # use std::sync::atomic::{AtomicUsize, Ordering};
//! # use std::sync::Arc;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let calls = Arc::new(AtomicUsize::new(0));
//! # let counted = Arc::clone(&calls);
//! # let app = axum::Router::new().route("/graphql", axum::routing::post(move || async move {
//! #     counted.fetch_add(1, Ordering::SeqCst);
//! #     r#"{"data":{"user":"ada"}}"#
//! # }));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let mut service = ServiceBuilder::new()
//!     .layer(CoalesceLayer::new().coalesce_for(|request: &Request<Full<Bytes>>| {
//!         request.uri().path() == "/graphql"
//!     }))
//!     .service(client);
//!
//! let query = || {
//!     Request::post(format!("http://{addr}/graphql"))
//!         .body(Full::new(Bytes::from_static(br#"{"query":"{ user(id: 7) }"}"#)))
//! };
//! let first = service.ready().await?.call(query()?);
//! let second = service.ready().await?.call(query()?);
//! let (first, second) = tokio::try_join!(first, second)?;
//!
//! // One call upstream; both callers have the whole answer.
//! assert_eq!(calls.load(Ordering::SeqCst), 1);
//! assert_eq!(first.into_body().collect().await?.to_bytes(), second.into_body().collect().await?.to_bytes());
//! # Ok(())
//! # }
//! ```
//!
//! [`get_coalesce()`]: courier_core::EndpointMeta::get_coalesce
//! [served-request]: courier_core::context::ServedRequest

mod answer;
mod body;
pub mod error;
mod flight;
pub mod future;
mod lead;
#[cfg(test)]
mod tests;

pub use self::body::CoalesceBody;

use self::flight::{InFlight, Join};
use self::future::ResponseFuture;
use self::lead::Leader;
use crate::key::{self, Key};
use crate::{BufferedBody, FromMeta};
use bytes::Bytes;
use courier_core::{BoxError, EndpointMeta, Kind};
use http::{HeaderName, Request, Response};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// Makes identical in-flight reads share one upstream call; see the [module docs](self).
///
/// ```
/// use courier::layers::coalesce::CoalesceLayer;
/// use http::HeaderName;
///
/// let layer = CoalesceLayer::new().ignore_header(HeaderName::from_static("x-correlation-id"));
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct CoalesceLayer<C = FromMeta> {
    ignored: Vec<HeaderName>,
    coalesce_for: C,
}

/// Which requests [`Coalesce`] may share a call for (the layer still sends requests for an event
/// stream or an upgrade, and streamed bodies, unshared).
///
/// Implemented by [`FromMeta`] (reads whose [`EndpointMeta`] allows it; without one, reading
/// methods) and by any `Fn(&Request<B>) -> bool`.
pub trait CoalesceFor<B> {
    /// Whether `request` may share a call with identical ones.
    fn coalesce_for(&self, request: &Request<B>) -> bool;
}

impl<B> CoalesceFor<B> for FromMeta {
    fn coalesce_for(&self, request: &Request<B>) -> bool {
        Kind::of_request(request) == Kind::Query
            && request
                .extensions()
                .get::<EndpointMeta>()
                .is_none_or(EndpointMeta::get_coalesce)
    }
}

impl<B, F> CoalesceFor<B> for F
where
    F: Fn(&Request<B>) -> bool,
{
    fn coalesce_for(&self, request: &Request<B>) -> bool {
        self(request)
    }
}

impl CoalesceLayer {
    /// Shares identical reads, leaving `x-request-id`, `traceparent` and `tracestate` out of
    /// the comparison.
    pub fn new() -> Self {
        Self {
            ignored: key::TRACING_HEADERS.to_vec(),
            coalesce_for: FromMeta,
        }
    }
}

impl<C> CoalesceLayer<C> {
    /// Decides with `coalesce_for` which requests may share a call, instead of their
    /// [`EndpointMeta`] and method.
    pub fn coalesce_for<D>(self, coalesce_for: D) -> CoalesceLayer<D> {
        CoalesceLayer {
            ignored: self.ignored,
            coalesce_for,
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

impl<S, C: Clone> Layer<S> for CoalesceLayer<C> {
    type Service = Coalesce<S, C>;

    fn layer(&self, inner: S) -> Coalesce<S, C> {
        Coalesce {
            inner,
            in_flight: Arc::new(InFlight::new(self.ignored.clone().into_boxed_slice())),
            coalesce_for: self.coalesce_for.clone(),
        }
    }
}

/// Makes identical in-flight reads share one upstream call; see the [module docs](self).
///
/// Clones share their calls in flight.
#[derive(Clone)]
pub struct Coalesce<S, C = FromMeta> {
    inner: S,
    in_flight: Arc<InFlight>,
    coalesce_for: C,
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
}

impl<S, C> Coalesce<S, C> {
    define_inner_service_accessors!();

    /// How many distinct calls of this service and its clones a read can join now: those sent
    /// and still waiting for their response head.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

impl<S: fmt::Debug, C> fmt::Debug for Coalesce<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coalesce")
            .field("inner", &self.inner)
            .field("ignored_headers", &self.in_flight.ignored())
            .finish_non_exhaustive()
    }
}

impl<S, C, ReqBody, ResBody> Service<Request<ReqBody>> for Coalesce<S, C>
where
    C: CoalesceFor<ReqBody>,
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
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
        let join = self
            .coalesce_for
            .coalesce_for(&request)
            .then(|| {
                let body = request.body().buffered()?;
                let key = Key::new(&request, body.as_ref(), self.in_flight.ignored())?;
                Some(self.in_flight.join(self.in_flight.hash(&key), key))
            })
            .flatten();
        match join {
            // The inner service is called here, once, after `poll_ready` readied it: the
            // future owns no service, so none is cloned.
            None => ResponseFuture::passthrough(self.inner.call(request)),
            Some(Join::Leading(lead)) => {
                let inner = &mut self.inner;
                ResponseFuture::leading(Leader::new(move || inner.call(request), lead))
            }
            Some(Join::Waiting { waiter, waiters }) => {
                #[cfg(feature = "metrics")]
                crate::metrics::coalesced();
                // The ready inner service stays where it is, unused, for the next call.
                tracing::debug!(
                    endpoint = request.extensions().get::<EndpointMeta>().map(EndpointMeta::path),
                    method = %request.method(),
                    path = request.uri().path(),
                    waiters,
                    "joined an identical read in flight"
                );
                ResponseFuture::waiting(waiter)
            }
        }
    }
}
