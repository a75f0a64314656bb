//! [`Pooled`]: the default transport as a concrete service, so the layers above it poll its
//! future in place rather than through a box of their own.

use super::connect::Connector;
use super::error::Missing;
use super::http1::{Http1Pool, Limits};
use courier_core::{Body, BoxError, HttpService};
use http::uri::Scheme;
use http::{Method, Request, Response};
use hyper_util::client::legacy::{Builder, Client, ResponseFuture};
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

/// The default transport's connection pools over courier's [`Connector`], as a
/// `tower::Service`: `http://` requests over HTTP/1.1 go through courier's own pool
/// ([`Http1Pool`]), the others (`https://`, whose connection may speak HTTP/2 by ALPN, and
/// HTTP/2 with prior knowledge) through hyper-util's pooled client. hyper's `Incoming` body is
/// wrapped (still streaming) in [`Body`], errors are boxed whole so their chain of causes stays
/// intact. A clone is a reference count: the pools sit behind an `Arc`.
#[derive(Clone)]
pub(crate) struct Pooled {
    pools: Arc<Pools>,
    /// Whether `http://` requests go over HTTP/1.1 (no HTTP/2 prior knowledge), through
    /// [`Http1Pool`].
    plain_http1: bool,
}

impl Pooled {
    /// Pools over `connector`: hyper-util's as `builder` builds them, which speak HTTP/2 with
    /// prior knowledge when `http2_only`, and courier's HTTP/1.1 pools within `limits`.
    pub(crate) fn new(
        builder: Builder,
        connector: Connector,
        http2_only: bool,
        limits: Limits,
    ) -> Self {
        let pools = Pools {
            shared: Lanes::new(&builder, &connector, limits),
            builder,
            connector,
            limits,
            local: Mutex::new(Vec::new()),
        };
        Self {
            pools: Arc::new(pools),
            plain_http1: !http2_only,
        }
    }
}

/// hyper-util's client over courier's connector.
type HyperClient = Client<Connector, Body>;

/// One set of connection pools: courier's for `http://` over HTTP/1.1, hyper-util's for the rest.
struct Lanes {
    hyper: HyperClient,
    http1: Arc<Http1Pool>,
}

impl Lanes {
    fn new(builder: &Builder, connector: &Connector, limits: Limits) -> Self {
        Self {
            hyper: builder.build(connector.clone()),
            http1: Arc::new(Http1Pool::new(connector.clone(), limits)),
        }
    }

    fn send(&self, request: Request<Body>, http1: bool) -> Sending {
        if http1 {
            Sending::Http1(Box::pin(Arc::clone(&self.http1).send(request)))
        } else {
            Sending::Hyper(self.hyper.request(request))
        }
    }
}

/// The per-thread pools of one transport, with the thread each belongs to.
type ThreadPools = Vec<(ThreadId, Arc<Lanes>)>;

/// The connection pools of one transport: one for the calls made on multi-threaded runtimes,
/// and one for each thread running a single-threaded runtime that made calls.
///
/// The one optimisation of the pools, and the reason there is more than one: hyper-util's
/// client runs each connection in a task of the runtime that opened it, and a call on another
/// thread then wakes that task across threads (a system call) to send, and is woken back across
/// threads for the answer. A single-threaded runtime's calls use connections its own thread
/// opened, so those wake-ups stay on the thread — what `courier serve`'s worker threads need
/// (BENCHMARKS.md, "One thread per connection's work"). A multi-threaded runtime moves tasks
/// between its threads anyway, so its calls share one pool.
struct Pools {
    shared: Lanes,
    builder: Builder,
    connector: Connector,
    limits: Limits,
    /// The per-thread pools, owned here (a thread only refers to its own), each removed when
    /// its thread ends.
    local: Mutex<ThreadPools>,
}

/// A thread's reference to its pool of one transport.
struct LocalPool {
    pools: Weak<Pools>,
    lanes: Weak<Lanes>,
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

    /// Sends `request` through the pools of the calling thread's kind of runtime: courier's
    /// HTTP/1.1 pool when `http1`, hyper-util's otherwise.
    fn send(self: &Arc<Self>, runtime: &Handle, request: Request<Body>, http1: bool) -> Sending {
        if runtime.runtime_flavor() != RuntimeFlavor::CurrentThread {
            return self.shared.send(request, http1);
        }
        let lanes = LOCAL_POOLS
            .try_with(|locals| {
                let mut locals = locals.borrow_mut();
                let found = locals
                    .0
                    .iter()
                    .find(|local| std::ptr::eq(local.pools.as_ptr(), Arc::as_ptr(self)))
                    .and_then(|local| local.lanes.upgrade());
                found.unwrap_or_else(|| {
                    let lanes = Arc::new(Lanes::new(&self.builder, &self.connector, self.limits));
                    self.lock_local()
                        .push((std::thread::current().id(), Arc::clone(&lanes)));
                    // Entries of transports since dropped go as a new one comes.
                    locals.0.retain(|local| local.lanes.strong_count() > 0);
                    locals.0.push(LocalPool {
                        pools: Arc::downgrade(self),
                        lanes: Arc::downgrade(&lanes),
                    });
                    lanes
                })
            })
            .ok();
        match lanes {
            Some(lanes) => lanes.send(request, http1),
            // The thread is ending: the shared pools serve.
            None => self.shared.send(request, http1),
        }
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
        // hyper-util's client is always ready: its pool waits inside the response future.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> PooledFuture {
        // Both pools spawn connection tasks onto the current tokio runtime, and hyper-util's
        // would panic without one: fail the call instead.
        let Ok(runtime) = Handle::try_current() else {
            return PooledFuture(Sending::NoRuntime);
        };
        // CONNECT's target is an authority, not a path: hyper-util writes it.
        let http1 = self.plain_http1
            && request.uri().scheme() == Some(&Scheme::HTTP)
            && request.method() != Method::CONNECT;
        PooledFuture(self.pools.send(&runtime, request, http1))
    }
}

/// The response future of [`Pooled`].
pub(crate) struct PooledFuture(Sending);

/// A request on its way, through one pool or the other.
enum Sending {
    /// The call was made outside a tokio runtime.
    NoRuntime,
    Hyper(ResponseFuture),
    Http1(Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>),
}

impl Future for PooledFuture {
    type Output = Result<Response<Body>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            Sending::NoRuntime => Poll::Ready(Err(Box::new(Missing(
                "the transport needs a tokio runtime",
            )))),
            Sending::Hyper(response) => Pin::new(response).poll(cx).map(|result| match result {
                Ok(response) => Ok(response.map(Body::new)),
                Err(error) => Err(Box::new(error) as BoxError),
            }),
            Sending::Http1(response) => response.as_mut().poll(cx),
        }
    }
}
