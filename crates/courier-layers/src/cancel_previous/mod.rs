//! [`CancelPreviousLayer`]: a newer read of an endpoint cancels the older one still in flight
//! (the browser package's `cancelPrevious`).
//!
//! A search box that calls `users.search` on every keystroke wants only the latest answer. When
//! a request of an endpoint marked [`cancels_previous`](EndpointMeta::cancels_previous) enters
//! the layer while an older request of the same endpoint is still in flight, the older one's
//! response future resolves at once to a [`Cancelled`](error::Cancelled) error (status 499) and
//! its inner future is dropped, which abandons the upstream request. The key is the endpoint's
//! dotted path alone: the newer call cancels the older whatever either's variables were.
//!
//! Which requests take part, and under which key, the layer asks of its [`CancelFor`]. The
//! default, [`FromMeta`], keeps these rules:
//!
//! - Only reads take part. A write ([`Kind::Mutation`](courier_core::Kind::Mutation)) is never
//!   cancelled and never cancels anything, whatever its `EndpointMeta` says.
//! - It has no effect on a server: a call made while a server serves a request
//!   ([`ServedRequest::for_request`] finds one, in the request's extensions or in scope on the
//!   task) passes through untouched. Two users' requests served at once must not cancel each
//!   other's calls.
//! - A request without an [`EndpointMeta`] passes through untouched. A bare stack has no other
//!   way to say which endpoints opt in, and keying every read by, say, its URI path would cancel
//!   unrelated concurrent reads. A hand-built request opts in by carrying an `EndpointMeta`
//!   (see the example).
//!
//! A closure `Fn(&Request<B>) -> Option<Arc<str>>` decides instead with
//! [`CancelPreviousLayer::cancel_for`]: the key of the calls that cancel each other, or `None`
//! for a request that takes no part (see the second example). Whatever decides:
//!
//! - Calls cancel each other only through the same layer: the services one
//!   `CancelPreviousLayer` (or a clone of it) makes share one table of in-flight calls;
//!   [`CancelPrevious::new`] starts a table of its own.
//!
//! Nothing in tower or tower-http does this: it is the opposite of a concurrency limit, which
//! makes the newer call wait; here the older call gives way.
//!
//! Each watched call holds a slot in the shared table: a generation number and the sending half
//! of a `oneshot` channel whose receiver the call's [`ResponseFuture`] polls before its inner
//! future. A newer call replaces the slot, which fires the older call's channel. A call that
//! finishes, or whose future is dropped, removes its slot only while the slot is still its own,
//! so the table holds exactly the calls in flight.
//!
//! ```
//! use courier::layers::cancel_previous::error::Cancelled;
//! use courier::layers::cancel_previous::CancelPreviousLayer;
//! use courier::tree::{EndpointMeta, Kind};
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! let mut search = ServiceBuilder::new()
//!     .layer(CancelPreviousLayer::new())
//!     .service(service_fn(|request: Request<()>| async move {
//!         if request.uri().query() == Some("q=a") {
//!             // An upstream that takes its time with the first query.
//!             std::future::pending::<()>().await;
//!         }
//!         Ok::<_, Infallible>(Response::new(request.uri().to_string()))
//!     }));
//!
//! let meta = EndpointMeta::new("users.search", Kind::Query).cancel_previous(true);
//! let call = |q: &str| {
//!     Request::get(format!("/users/search?q={q}"))
//!         .extension(meta.clone())
//!         .body(())
//! };
//!
//! let older = search.ready().await?.call(call("a")?);
//! let newer = search.ready().await?.call(call("ab")?);
//!
//! let err = older.await.unwrap_err();
//! let cancelled = err.downcast_ref::<Cancelled>().unwrap();
//! assert_eq!(cancelled.status().as_u16(), 499);
//! assert_eq!(err.to_string(), "cancelled by a newer call of `users.search`");
//! assert_eq!(newer.await?.into_body(), "/users/search?q=ab");
//! # Ok(())
//! # }
//! ```
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: a closure puts every `/search` request under one key, so a newer
//! search cancels the one still in flight.
//!
//! ```
//! use courier::layers::cancel_previous::{error::Cancelled, CancelPreviousLayer};
//! use http::Request;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use std::sync::Arc;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let app = axum::Router::new().route("/search", axum::routing::get(
//! #     |axum::extract::RawQuery(q): axum::extract::RawQuery| async move {
//! #         if q.as_deref() == Some("q=a") {
//! #             std::future::pending::<()>().await;
//! #         }
//! #         q.unwrap_or_default()
//! #     },
//! # ));
//! # let addr = courier_test_support::serve(app).await;
//! let search: Arc<str> = Arc::from("search");
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let mut service = ServiceBuilder::new()
//!     .layer(CancelPreviousLayer::new().cancel_for(move |request: &Request<String>| {
//!         (request.uri().path() == "/search").then(|| Arc::clone(&search))
//!     }))
//!     .service(client);
//!
//! let query = |q: &str| Request::get(format!("http://{addr}/search?q={q}")).body(String::new());
//! let older = service.ready().await?.call(query("a")?);
//! let newer = service.ready().await?.call(query("ab")?);
//!
//! let error = older.await.unwrap_err();
//! assert_eq!(error.to_string(), "cancelled by a newer call of `search`");
//! assert!(error.is::<Cancelled>());
//! assert_eq!(newer.await?.status(), 200);
//! # Ok(())
//! # }
//! ```

pub mod error;
pub mod future;
#[cfg(test)]
mod tests;

use self::future::ResponseFuture;
use crate::FromMeta;
use courier_core::context::ServedRequest;
use courier_core::{BoxError, EndpointMeta};
use http::Request;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use tokio::sync::oneshot;
use tower::{Layer, Service};

/// Lets a newer read of an endpoint cancel the older one still in flight; see the
/// [module docs](self).
///
/// The services this layer makes, and those its clones make, share one table of in-flight
/// calls.
#[derive(Clone, Debug)]
pub struct CancelPreviousLayer<K = FromMeta> {
    registry: Registry,
    cancel_for: K,
}

/// Which requests [`CancelPrevious`] watches, and the key under which a newer one cancels an
/// older one; `None` passes a request through untouched.
///
/// Implemented by [`FromMeta`] (the endpoint's path, for a read whose [`EndpointMeta`] is marked
/// `cancel_previous`, made outside a served request) and by any
/// `Fn(&Request<B>) -> Option<Arc<str>>`. The key also names the call in the
/// [`Cancelled`](error::Cancelled) error.
pub trait CancelFor<B> {
    /// The key `request` is watched under, or `None`.
    fn cancel_for(&self, request: &Request<B>) -> Option<Arc<str>>;
}

impl<B> CancelFor<B> for FromMeta {
    fn cancel_for(&self, request: &Request<B>) -> Option<Arc<str>> {
        let meta = request.extensions().get::<EndpointMeta>()?;
        if !meta.cancels_previous()
            || !meta.is_read()
            || ServedRequest::for_request(request).is_some()
        {
            return None;
        }
        Some(Arc::clone(meta.path_arc()))
    }
}

impl<B, F> CancelFor<B> for F
where
    F: Fn(&Request<B>) -> Option<Arc<str>>,
{
    fn cancel_for(&self, request: &Request<B>) -> Option<Arc<str>> {
        self(request)
    }
}

impl CancelPreviousLayer {
    /// A layer with an empty table of in-flight calls, watching the reads whose
    /// [`EndpointMeta`] is marked `cancel_previous`.
    pub fn new() -> Self {
        Self {
            registry: Registry::default(),
            cancel_for: FromMeta,
        }
    }
}

impl Default for CancelPreviousLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> CancelPreviousLayer<K> {
    /// Decides with `cancel_for` which requests are watched, and under which key, instead of
    /// their [`EndpointMeta`].
    pub fn cancel_for<L>(self, cancel_for: L) -> CancelPreviousLayer<L> {
        CancelPreviousLayer {
            registry: self.registry,
            cancel_for,
        }
    }
}

impl<S, K: Clone> Layer<S> for CancelPreviousLayer<K> {
    type Service = CancelPrevious<S, K>;

    fn layer(&self, inner: S) -> Self::Service {
        CancelPrevious {
            inner,
            registry: self.registry.clone(),
            cancel_for: self.cancel_for.clone(),
        }
    }
}

/// The service [`CancelPreviousLayer`] makes. Clones share the table of in-flight calls.
#[derive(Clone, Debug)]
pub struct CancelPrevious<S, K = FromMeta> {
    inner: S,
    registry: Registry,
    cancel_for: K,
}

impl<S> CancelPrevious<S> {
    /// Wraps `inner` with a table of in-flight calls of its own.
    pub fn new(inner: S) -> Self {
        CancelPreviousLayer::new().layer(inner)
    }

    /// A [`CancelPreviousLayer`], for use with `ServiceBuilder`.
    pub fn layer() -> CancelPreviousLayer {
        CancelPreviousLayer::new()
    }
}

impl<S, K> CancelPrevious<S, K> {
    define_inner_service_accessors!();
}

impl<S, K, B> Service<Request<B>> for CancelPrevious<S, K>
where
    S: Service<Request<B>>,
    K: CancelFor<B>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let Some(key) = self.cancel_for.cancel_for(&request) else {
            return ResponseFuture::unwatched(self.inner.call(request));
        };
        // The older call is cancelled here, when the newer one is made, not when it is first
        // polled: "newer" is the order of calls.
        let (ticket, cancelled) = self.registry.enter(key);
        ResponseFuture::watched(self.inner.call(request), cancelled, ticket)
    }
}

/// The table of watched calls in flight, shared by the services of one layer.
#[derive(Clone, Default)]
struct Registry(Arc<Mutex<Slots>>);

#[derive(Default)]
struct Slots {
    next_generation: u64,
    by_key: HashMap<Arc<str>, Slot>,
}

/// The call in flight for one key.
struct Slot {
    generation: u64,
    // Fired when a newer call takes the slot.
    cancel: oneshot::Sender<()>,
}

impl Registry {
    /// Registers a new call under `key`, cancelling the one in flight there.
    fn enter(&self, key: Arc<str>) -> (Ticket, oneshot::Receiver<()>) {
        let (cancel, cancelled) = oneshot::channel();
        let (generation, older) = {
            let mut slots = self.lock();
            let generation = slots.next_generation;
            slots.next_generation = generation.wrapping_add(1);
            let older = slots
                .by_key
                .insert(Arc::clone(&key), Slot { generation, cancel });
            (generation, older)
        };
        // Outside the lock: waking the older call's task is no business of the table's. The
        // older call may be gone already (its receiver dropped), which is fine.
        if let Some(older) = older {
            let _ = older.cancel.send(());
        }
        let ticket = Ticket {
            registry: self.clone(),
            key,
            generation,
        };
        (ticket, cancelled)
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        // Every change to the table is a single map operation, so a panic elsewhere while the
        // lock was held cannot leave it inconsistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.lock().by_key.len()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("in_flight", &self.lock().by_key.len())
            .finish()
    }
}

/// A watched call's claim on its slot; dropping it frees the slot if it is still this call's.
struct Ticket {
    registry: Registry,
    key: Arc<str>,
    generation: u64,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let slot = {
            let mut slots = self.registry.lock();
            match slots.by_key.get(&self.key) {
                Some(slot) if slot.generation == self.generation => slots.by_key.remove(&self.key),
                _ => None,
            }
        };
        // The slot's sender goes outside the lock, like everything that may touch a waker.
        drop(slot);
    }
}
