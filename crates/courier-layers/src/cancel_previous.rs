//! [`CancelPreviousLayer`]: a newer read of an endpoint cancels the older one still in flight
//! (the spec's `cancelPrevious`).
//!
//! A search box that calls `users.search` on every keystroke wants only the latest answer. When
//! a request of an endpoint marked [`cancels_previous`](EndpointMeta::cancels_previous) enters
//! the layer while an older request of the same endpoint is still in flight, the older one's
//! response future resolves at once to a [`Cancelled`](error::Cancelled) error (status 499) and
//! its inner future is dropped, which abandons the upstream request. The key is the endpoint's
//! dotted path alone: the newer call cancels the older whatever either's variables were.
//!
//! The rules:
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
//! use courier_core::{EndpointMeta, Kind};
//! use courier_layers::cancel_previous::error::Cancelled;
//! use courier_layers::cancel_previous::CancelPreviousLayer;
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier_core::BoxError> {
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

use self::future::ResponseFuture;
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
#[derive(Clone, Debug, Default)]
pub struct CancelPreviousLayer {
    registry: Registry,
}

impl CancelPreviousLayer {
    /// A layer with an empty table of in-flight calls.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S> Layer<S> for CancelPreviousLayer {
    type Service = CancelPrevious<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CancelPrevious {
            inner,
            registry: self.registry.clone(),
        }
    }
}

/// The service [`CancelPreviousLayer`] makes. Clones share the table of in-flight calls.
#[derive(Clone, Debug)]
pub struct CancelPrevious<S> {
    inner: S,
    registry: Registry,
}

impl<S> CancelPrevious<S> {
    /// Wraps `inner` with a table of in-flight calls of its own.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            registry: Registry::default(),
        }
    }

    /// A [`CancelPreviousLayer`], for use with `ServiceBuilder`.
    pub fn layer() -> CancelPreviousLayer {
        CancelPreviousLayer::new()
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

impl<S, B> Service<Request<B>> for CancelPrevious<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let Some(key) = watched_key(&request) else {
            return ResponseFuture::unwatched(self.inner.call(request));
        };
        // The older call is cancelled here, when the newer one is made, not when it is first
        // polled: "newer" is the order of calls.
        let (ticket, cancelled) = self.registry.enter(key);
        ResponseFuture::watched(self.inner.call(request), cancelled, ticket)
    }
}

/// The key a request is watched under: its endpoint's path, when it is a read of an endpoint
/// marked `cancel_previous` made outside a served request.
fn watched_key<B>(request: &Request<B>) -> Option<Arc<str>> {
    let meta = request.extensions().get::<EndpointMeta>()?;
    if !meta.cancels_previous() || !meta.is_read() || ServedRequest::for_request(request).is_some()
    {
        return None;
    }
    Some(Arc::clone(meta.path_arc()))
}

pub mod future {
    //! The future [`CancelPrevious`](super::CancelPrevious) returns.

    use super::error::Cancelled;
    use super::Ticket;
    use courier_core::BoxError;
    use pin_project_lite::pin_project;
    use std::fmt;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{ready, Context, Poll};
    use tokio::sync::oneshot;

    pin_project! {
        /// The response future of [`CancelPrevious`](super::CancelPrevious): the inner future,
        /// unless a newer call of the same endpoint cancels it first.
        pub struct ResponseFuture<F> {
            #[pin]
            state: State<F>,
        }
    }

    pin_project! {
        #[project = StateProj]
        #[project_replace = StateReplace]
        enum State<F> {
            // Not a watched call: the inner future alone.
            Unwatched {
                #[pin]
                future: F,
            },
            Watched {
                #[pin]
                future: F,
                cancelled: oneshot::Receiver<()>,
                // Taken when the call finishes, so its slot goes as soon as it is done rather than
                // when the future is dropped.
                ticket: Option<Ticket>,
            },
            // Cancelled: the inner future is gone; polling again answers the same error.
            Cancelled {
                endpoint: Arc<str>,
            },
        }
    }

    impl<F> ResponseFuture<F> {
        pub(super) fn unwatched(future: F) -> Self {
            Self {
                state: State::Unwatched { future },
            }
        }

        pub(super) fn watched(future: F, cancelled: oneshot::Receiver<()>, ticket: Ticket) -> Self {
            Self {
                state: State::Watched {
                    future,
                    cancelled,
                    ticket: Some(ticket),
                },
            }
        }
    }

    impl<F, T, E> Future for ResponseFuture<F>
    where
        F: Future<Output = Result<T, E>>,
        E: Into<BoxError>,
    {
        type Output = Result<T, BoxError>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let endpoint = match self.as_mut().project().state.project() {
                StateProj::Unwatched { future } => {
                    return future.poll(cx).map_err(Into::into);
                }
                StateProj::Watched {
                    future,
                    cancelled,
                    ticket,
                } => {
                    // The cancellation first: a call cancelled while its answer is also ready is
                    // still cancelled, as the newer call already superseded it.
                    match (Pin::new(&mut *cancelled).poll(cx), ticket.as_ref()) {
                        // A newer call fires the channel. The sender is otherwise only dropped with
                        // the slot, which a newer call has taken too, so either outcome means
                        // cancelled.
                        (Poll::Ready(_), Some(ticket)) => Arc::clone(&ticket.key),
                        _ => {
                            let output = ready!(future.poll(cx));
                            drop(ticket.take());
                            return Poll::Ready(output.map_err(Into::into));
                        }
                    }
                }
                StateProj::Cancelled { endpoint } => {
                    return Poll::Ready(Err(Cancelled::new(Arc::clone(endpoint)).into()));
                }
            };
            // Drops the inner future, abandoning the upstream request, and the ticket, which finds
            // the slot taken by the newer call and leaves it alone.
            self.as_mut()
                .project()
                .state
                .project_replace(State::Cancelled {
                    endpoint: Arc::clone(&endpoint),
                });
            Poll::Ready(Err(Cancelled::new(endpoint).into()))
        }
    }

    impl<F> fmt::Debug for ResponseFuture<F> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let state = match &self.state {
                State::Unwatched { .. } => "unwatched",
                State::Watched { .. } => "watched",
                State::Cancelled { .. } => "cancelled",
            };
            f.debug_struct("ResponseFuture")
                .field("state", &state)
                .finish()
        }
    }
}

pub mod error {
    //! The error of [`CancelPrevious`](super::CancelPrevious).

    use http::StatusCode;
    use std::fmt;
    use std::sync::Arc;

    /// The error of a read cancelled by a newer call of the same endpoint. Its status is 499, as
    /// the spec's HTTPError of a cancelled read.
    ///
    /// It reaches the caller boxed in a [`BoxError`](courier_core::BoxError); find it with
    /// `downcast_ref::<Cancelled>()`, or by walking an error's `source()` chain when another layer
    /// wraps it.
    #[derive(Clone, Debug)]
    pub struct Cancelled {
        endpoint: Arc<str>,
    }

    impl Cancelled {
        pub(super) fn new(endpoint: Arc<str>) -> Self {
            Self { endpoint }
        }

        /// The dotted path of the endpoint whose newer call cancelled this one.
        pub fn endpoint(&self) -> &str {
            &self.endpoint
        }

        /// 499, the status of a call the client gave up on.
        pub fn status(&self) -> StatusCode {
            // 499 is within 100..=999, the only range `from_u16` checks.
            StatusCode::from_u16(499).expect("499 is a valid status code")
        }
    }

    impl fmt::Display for Cancelled {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "cancelled by a newer call of `{}`", self.endpoint)
        }
    }

    impl std::error::Error for Cancelled {}
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

#[cfg(test)]
mod tests {
    use super::error::Cancelled;
    use super::*;
    use courier_core::Kind;
    use futures_util::FutureExt;
    use http::Response;
    use http::StatusCode;
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use tokio::sync::Notify;
    use tower::{service_fn, ServiceExt};

    /// What the mock upstream does with a request: answer once `release` is notified, and set
    /// `dropped` if its future is dropped before answering.
    #[derive(Clone, Default)]
    struct Probe {
        release: Arc<Notify>,
        dropped: Arc<AtomicBool>,
    }

    /// Sets its flag when dropped, unless disarmed first.
    struct DropFlag(Option<Arc<AtomicBool>>);

    impl DropFlag {
        fn disarm(mut self) {
            self.0 = None;
        }
    }

    impl Drop for DropFlag {
        fn drop(&mut self) {
            if let Some(flag) = &self.0 {
                flag.store(true, Ordering::SeqCst);
            }
        }
    }

    /// What the tests wrap: a cloneable service whose futures can move to another task.
    trait Upstream:
        Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send> + Clone
    {
    }

    impl<S> Upstream for S where
        S: Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send>
            + Clone
    {
    }

    /// An upstream that answers with the request's URI, waiting for the request's `Probe` when
    /// it has one, and counts the requests it is given.
    fn upstream(calls: Arc<AtomicUsize>) -> impl Upstream {
        service_fn(move |request: Request<()>| {
            calls.fetch_add(1, Ordering::SeqCst);
            let probe = request.extensions().get::<Probe>().cloned();
            let guard = probe
                .as_ref()
                .map(|p| DropFlag(Some(Arc::clone(&p.dropped))));
            let uri = request.uri().to_string();
            async move {
                if let Some(probe) = probe {
                    probe.release.notified().await;
                }
                // Answered: not abandoned.
                if let Some(guard) = guard {
                    guard.disarm();
                }
                Ok::<_, Infallible>(Response::new(uri))
            }
        })
    }

    fn request(uri: &str, meta: Option<EndpointMeta>, probe: Option<&Probe>) -> Request<()> {
        let mut request = Request::get(uri).body(()).unwrap();
        if let Some(meta) = meta {
            request.extensions_mut().insert(meta);
        }
        if let Some(probe) = probe {
            request.extensions_mut().insert(probe.clone());
        }
        request
    }

    fn read(path: &str) -> EndpointMeta {
        EndpointMeta::new(path, Kind::Query).cancel_previous(true)
    }

    fn write(path: &str) -> EndpointMeta {
        EndpointMeta::new(path, Kind::Mutation).cancel_previous(true)
    }

    async fn call<S>(service: &mut S, request: Request<()>) -> S::Future
    where
        S: Service<Request<()>>,
        S::Error: fmt::Debug,
    {
        service.ready().await.unwrap().call(request)
    }

    #[tokio::test]
    async fn newer_read_cancels_older() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::clone(&calls)));
        let (first, second) = (Probe::default(), Probe::default());

        // The older call waits in its own task, as a caller would.
        let older = tokio::spawn(
            call(
                &mut service,
                request("/search?q=a", Some(read("users.search")), Some(&first)),
            )
            .await,
        );
        tokio::task::yield_now().await;
        assert!(!older.is_finished());

        let newer = call(
            &mut service,
            request("/search?q=ab", Some(read("users.search")), Some(&second)),
        )
        .await;

        let err = older.await.unwrap().unwrap_err();
        let cancelled = err.downcast_ref::<Cancelled>().expect("a Cancelled error");
        assert_eq!(cancelled.status(), StatusCode::from_u16(499).unwrap());
        assert_eq!(cancelled.endpoint(), "users.search");
        assert_eq!(
            err.to_string(),
            "cancelled by a newer call of `users.search`"
        );
        assert!(
            first.dropped.load(Ordering::SeqCst),
            "the older inner future is dropped"
        );

        second.release.notify_one();
        assert_eq!(newer.await.unwrap().into_body(), "/search?q=ab");
        assert!(!second.dropped.load(Ordering::SeqCst));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_cancelled_call_answers_the_same_error_if_polled_again() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let probe = Probe::default();
        let older = call(
            &mut service,
            request("/a", Some(read("users.search")), Some(&probe)),
        )
        .await;
        let _newer = call(
            &mut service,
            request("/b", Some(read("users.search")), Some(&probe)),
        )
        .await;

        let mut older = Box::pin(older);
        for _ in 0..2 {
            let err = older.as_mut().now_or_never().unwrap().unwrap_err();
            assert!(err.is::<Cancelled>());
        }
    }

    #[tokio::test]
    async fn each_newer_call_cancels_the_one_before() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let probes = [Probe::default(), Probe::default(), Probe::default()];
        let mut futures = Vec::new();
        for (i, probe) in probes.iter().enumerate() {
            let uri = format!("/search?q={i}");
            futures.push(call(&mut service, request(&uri, Some(read("s")), Some(probe))).await);
        }
        let last = futures.pop().unwrap();
        for older in futures {
            assert!(older.await.unwrap_err().is::<Cancelled>());
        }
        probes[2].release.notify_one();
        assert_eq!(last.await.unwrap().into_body(), "/search?q=2");
    }

    #[tokio::test]
    async fn different_endpoints_are_independent() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let (search, list) = (Probe::default(), Probe::default());
        let a = call(
            &mut service,
            request("/search", Some(read("users.search")), Some(&search)),
        )
        .await;
        let b = call(
            &mut service,
            request("/list", Some(read("users.list")), Some(&list)),
        )
        .await;
        assert_eq!(service.registry.in_flight(), 2);

        search.release.notify_one();
        list.release.notify_one();
        assert_eq!(a.await.unwrap().into_body(), "/search");
        assert_eq!(b.await.unwrap().into_body(), "/list");
    }

    #[tokio::test]
    async fn writes_are_never_cancelled_and_never_cancel() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let probes = [Probe::default(), Probe::default(), Probe::default()];

        // A read in flight, then two writes of the same path: nothing is cancelled.
        let read_call = call(
            &mut service,
            request("/r", Some(read("users.search")), Some(&probes[0])),
        )
        .await;
        let write_a = call(
            &mut service,
            request("/w1", Some(write("users.search")), Some(&probes[1])),
        )
        .await;
        let write_b = call(
            &mut service,
            request("/w2", Some(write("users.search")), Some(&probes[2])),
        )
        .await;
        // Only the read holds a slot.
        assert_eq!(service.registry.in_flight(), 1);

        for probe in &probes {
            probe.release.notify_one();
        }
        assert_eq!(read_call.await.unwrap().into_body(), "/r");
        assert_eq!(write_a.await.unwrap().into_body(), "/w1");
        assert_eq!(write_b.await.unwrap().into_body(), "/w2");
        assert!(probes.iter().all(|p| !p.dropped.load(Ordering::SeqCst)));
    }

    #[tokio::test]
    async fn a_write_in_flight_is_not_cancelled_by_a_read() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let (w, r) = (Probe::default(), Probe::default());
        let write_call = call(
            &mut service,
            request("/w", Some(write("users.search")), Some(&w)),
        )
        .await;
        let read_call = call(
            &mut service,
            request("/r", Some(read("users.search")), Some(&r)),
        )
        .await;
        w.release.notify_one();
        r.release.notify_one();
        assert_eq!(write_call.await.unwrap().into_body(), "/w");
        assert_eq!(read_call.await.unwrap().into_body(), "/r");
    }

    #[tokio::test]
    async fn no_effect_while_serving_a_request() {
        let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
        let served = ServedRequest::new(parts, None);
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let registry = service.registry.clone();
        let (a, b) = (Probe::default(), Probe::default());

        let (first, second) = served
            .scope(async {
                let first = call(
                    &mut service,
                    request("/a", Some(read("users.search")), Some(&a)),
                )
                .await;
                let second = call(
                    &mut service,
                    request("/b", Some(read("users.search")), Some(&b)),
                )
                .await;
                (first, second)
            })
            .await;
        assert_eq!(registry.in_flight(), 0);

        a.release.notify_one();
        b.release.notify_one();
        assert_eq!(first.await.unwrap().into_body(), "/a");
        assert_eq!(second.await.unwrap().into_body(), "/b");
    }

    #[tokio::test]
    async fn no_effect_for_a_request_carrying_a_served_request() {
        let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
        let served = ServedRequest::new(parts, None);
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let (a, b) = (Probe::default(), Probe::default());
        let mut first = request("/a", Some(read("users.search")), Some(&a));
        first.extensions_mut().insert(served.clone());
        let mut second = request("/b", Some(read("users.search")), Some(&b));
        second.extensions_mut().insert(served);

        let first = call(&mut service, first).await;
        let second = call(&mut service, second).await;
        a.release.notify_one();
        b.release.notify_one();
        assert_eq!(first.await.unwrap().into_body(), "/a");
        assert_eq!(second.await.unwrap().into_body(), "/b");
    }

    #[tokio::test]
    async fn no_effect_without_meta_or_without_cancel_previous() {
        let not_listed = EndpointMeta::new("users.search", Kind::Query);
        for meta in [None, Some(not_listed)] {
            let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
            let (a, b) = (Probe::default(), Probe::default());
            let first = call(&mut service, request("/a", meta.clone(), Some(&a))).await;
            let second = call(&mut service, request("/a", meta.clone(), Some(&b))).await;
            assert_eq!(service.registry.in_flight(), 0);
            a.release.notify_one();
            b.release.notify_one();
            assert_eq!(first.await.unwrap().into_body(), "/a");
            assert_eq!(second.await.unwrap().into_body(), "/a");
        }
    }

    #[tokio::test]
    async fn slots_are_removed_when_calls_finish_or_are_dropped() {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let registry = service.registry.clone();

        // A call that answers at once.
        let done = call(
            &mut service,
            request("/a", Some(read("users.search")), None),
        )
        .await;
        assert_eq!(registry.in_flight(), 1);
        let mut done = Box::pin(done);
        assert!(done.as_mut().await.is_ok());
        // Gone as soon as it answered, even though the future itself is still alive.
        assert_eq!(registry.in_flight(), 0);
        drop(done);

        // A cancelled call leaves the newer one's slot alone.
        let probe = Probe::default();
        let older = call(
            &mut service,
            request("/a", Some(read("users.search")), Some(&probe)),
        )
        .await;
        let newer = call(
            &mut service,
            request("/b", Some(read("users.search")), Some(&probe)),
        )
        .await;
        assert!(older.await.unwrap_err().is::<Cancelled>());
        assert_eq!(registry.in_flight(), 1);
        probe.release.notify_one();
        newer.await.unwrap();
        assert_eq!(registry.in_flight(), 0);

        // A call its caller gave up on.
        let abandoned = call(
            &mut service,
            request("/c", Some(read("users.search")), Some(&Probe::default())),
        )
        .await;
        assert_eq!(registry.in_flight(), 1);
        drop(abandoned);
        assert_eq!(registry.in_flight(), 0);
    }

    #[tokio::test]
    async fn clones_of_a_layer_share_calls_and_new_starts_afresh() {
        let layer = CancelPreviousLayer::new();
        let mut one = layer.layer(upstream(Arc::default()));
        let mut two = layer.clone().layer(upstream(Arc::default()));
        let probe = Probe::default();
        let older = call(&mut one, request("/a", Some(read("s")), Some(&probe))).await;
        let _newer = call(&mut two, request("/b", Some(read("s")), Some(&probe))).await;
        assert!(older.await.unwrap_err().is::<Cancelled>());

        // A service made with `new` keeps a table of its own.
        let mut own = CancelPrevious::new(upstream(Arc::default()));
        let probe = Probe::default();
        let mine = call(&mut own, request("/a", Some(read("s")), Some(&probe))).await;
        let _other = call(
            &mut one,
            request("/b", Some(read("s")), Some(&Probe::default())),
        )
        .await;
        probe.release.notify_one();
        assert_eq!(mine.await.unwrap().into_body(), "/a");
    }

    #[tokio::test]
    async fn fits_a_courier_stack() {
        use courier_core::{Body, HttpService};

        let transport = HttpService::new(service_fn(|_: Request<Body>| async {
            Ok::<_, BoxError>(Response::new(Body::from("ok")))
        }));
        let stack = HttpService::new(CancelPreviousLayer::new().layer(transport));
        let request = Request::get("/a")
            .extension(read("users.search"))
            .body(Body::empty())
            .unwrap();
        let response = stack.oneshot(request).await.unwrap();
        assert_eq!(response.into_body().as_bytes(), Some(&b"ok"[..]));
    }

    #[tokio::test]
    async fn inner_errors_pass_through_boxed() {
        #[derive(Debug)]
        struct Refused;
        impl fmt::Display for Refused {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("refused")
            }
        }
        impl std::error::Error for Refused {}

        let service = CancelPreviousLayer::new().layer(service_fn(|_: Request<()>| async {
            Err::<Response<()>, _>(Refused)
        }));
        let err = service
            .oneshot(request("/a", Some(read("s")), None))
            .await
            .unwrap_err();
        assert!(err.is::<Refused>());
    }
}
