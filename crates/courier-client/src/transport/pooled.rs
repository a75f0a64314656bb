//! [`Pooled`]: the default transport as a concrete service, so the layers above it poll its
//! future in place rather than through a box of their own.

use super::connect::Connector;
use super::error::Missing;
use super::pool::{Pool, Settings};
use courier_core::{Body, BoxError, HttpFuture, HttpService};
use http::{Request, Response};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::thread::ThreadId;
use tokio::runtime::{Handle, RuntimeFlavor};

/// A transport as the client's layers call it: the default one ([`Pooled`]) concretely, or any
/// other ([`Fetch`](courier_core::Fetch)) type-erased.
pub(crate) type TransportService = tower::util::Either<Pooled, HttpService>;

/// The same transport behind courier's type-erased [`HttpService`], as the public API hands it
/// out.
pub(crate) fn erase(transport: TransportService) -> HttpService {
    match transport {
        tower::util::Either::Left(pooled) => HttpService::new(pooled),
        tower::util::Either::Right(service) => service,
    }
}

/// The default transport's connection pools ([`Pool`]) over courier's [`Connector`], as a
/// `tower::Service`: hyper's `Incoming` body wrapped (still streaming) in [`Body`], errors boxed
/// whole so their chain of causes stays intact. A clone is a reference count: the pools sit
/// behind an `Arc`.
#[derive(Clone)]
pub(crate) struct Pooled {
    pools: Arc<Pools>,
}

impl Pooled {
    /// Pools over `connector`, as `settings` say.
    pub(crate) fn new(connector: Connector, settings: Settings) -> Self {
        let pools = Pools {
            shared: Arc::new(Pool::new(connector.clone(), settings)),
            connector,
            settings,
            local: Mutex::new(Vec::new()),
        };
        Self {
            pools: Arc::new(pools),
        }
    }
}

/// The per-thread pools of one transport, with the thread each belongs to.
type ThreadPools = Vec<(ThreadId, Arc<Pool>)>;

/// The connection pools of one transport: one for the calls made on multi-threaded runtimes,
/// and one for each thread running a single-threaded runtime that made calls.
///
/// The one optimisation of the pools, and the reason there is more than one: a pool runs each
/// connection in a task of the runtime that opened it, and a call on another
/// thread then wakes that task across threads (a system call) to send, and is woken back across
/// threads for the answer. A single-threaded runtime's calls use connections its own thread
/// opened, so those wake-ups stay on the thread — what `courier serve`'s worker threads need:
/// two worker threads sharing one pool spent 39.6–48.9 µs of CPU per proxied request, with a
/// pool per thread 30.8–33.4 µs (wrk, `benches/proxy_hop.sh`; docs/benchmarks-history.md, "One
/// thread per connection's work"). A multi-threaded runtime moves tasks between its threads
/// anyway, so its calls share one pool.
struct Pools {
    shared: Arc<Pool>,
    connector: Connector,
    settings: Settings,
    /// The per-thread pools, owned here (a thread only refers to its own), each removed when
    /// its thread ends.
    local: Mutex<ThreadPools>,
}

/// A thread's reference to its pool of one transport.
struct LocalPool {
    pools: Weak<Pools>,
    pool: Weak<Pool>,
}

/// This thread's pools, of each transport a single-threaded runtime here called through. When
/// the thread ends, each is removed from its transport.
struct LocalPools(Vec<LocalPool>);

impl Drop for LocalPools {
    fn drop(&mut self) {
        let thread = std::thread::current().id();
        for local in &self.0 {
            if let Some(pools) = local.pools.upgrade() {
                pools.lock_local().retain(|(owner, _)| *owner != thread);
            }
        }
    }
}

thread_local! {
    static LOCAL_POOLS: RefCell<LocalPools> = const { RefCell::new(LocalPools(Vec::new())) };
}

impl Pools {
    fn lock_local(&self) -> std::sync::MutexGuard<'_, ThreadPools> {
        // The list stays whole whatever panicked while it was held: each change is one call.
        self.local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The pool for calls on the calling thread's kind of runtime.
    fn pool(self: &Arc<Self>, runtime: &Handle) -> Arc<Pool> {
        if runtime.runtime_flavor() != RuntimeFlavor::CurrentThread {
            return Arc::clone(&self.shared);
        }
        let pool = LOCAL_POOLS
            .try_with(|locals| {
                let mut locals = locals.borrow_mut();
                let found = locals
                    .0
                    .iter()
                    .find(|local| std::ptr::eq(local.pools.as_ptr(), Arc::as_ptr(self)))
                    .and_then(|local| local.pool.upgrade());
                found.unwrap_or_else(|| {
                    let pool = Arc::new(Pool::new(self.connector.clone(), self.settings));
                    self.lock_local()
                        .push((std::thread::current().id(), Arc::clone(&pool)));
                    // Entries of transports since dropped go as a new one comes.
                    locals.0.retain(|local| local.pool.strong_count() > 0);
                    locals.0.push(LocalPool {
                        pools: Arc::downgrade(self),
                        pool: Arc::downgrade(&pool),
                    });
                    pool
                })
            })
            .ok();
        // The thread is ending: the shared pool serves.
        pool.unwrap_or_else(|| Arc::clone(&self.shared))
    }
}

impl fmt::Debug for Pooled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").finish_non_exhaustive()
    }
}

impl tower::Service<Request<Body>> for Pooled {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = PooledFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Always ready: the pool waits for a connection inside the response future.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> PooledFuture {
        // The pool spawns connection tasks onto the current tokio runtime: without one, fail
        // the call rather than panic.
        let Ok(runtime) = Handle::try_current() else {
            return PooledFuture(None);
        };
        PooledFuture(Some(Box::pin(self.pools.pool(&runtime).send(request))))
    }
}

/// The response future of [`Pooled`]: `None` when the call was made outside a tokio runtime.
pub(crate) struct PooledFuture(Option<HttpFuture>);

impl Future for PooledFuture {
    type Output = Result<Response<Body>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            Some(response) => response.as_mut().poll(cx),
            None => Poll::Ready(Err(Box::new(Missing::RUNTIME))),
        }
    }
}
