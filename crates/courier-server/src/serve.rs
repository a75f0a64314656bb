//! Serving the proxy's router on a TCP listener with the connection-level defences a server in
//! front of browsers needs, which `axum::serve` leaves out: a bound on how long a request's head
//! may take to arrive, and a graceful stop tied to the proxy's [`Shutdown`].
//!
//! Each connection is served by hyper-util's HTTP/1 + HTTP/2 server with upgrades (for the
//! channels' WebSockets) and a timer, so hyper's `header_read_timeout` holds: a connection that
//! sends half a request head, trickles it a byte at a time or sits idle between keep-alive
//! requests is closed once the timeout passes. hyper's timer starts only once the HTTP version
//! is known, which takes the connection's first bytes, so the first request's head is bounded
//! here as well: a connection that sends nothing, or too little to tell the version, is closed
//! at the same timeout; that timer is dropped once the first request has come, so that later
//! wake-ups of the connection do not poll it. A request head is at most [`MAX_HEAD`] bytes (431
//! beyond). The peer's address reaches the router's handlers as axum's
//! `ConnectInfo<SocketAddr>` (the proxy forwards it as the client address). Each connection
//! holds a place of [`places`](crate::places)' bound on open connections: busy from a
//! request's head until its response is sent whole (a channel's socket until it closes), and
//! closed, idle, when a new connection at the bound takes its place.
//!
//! The one optimisation here: [`Proxy::serve`](crate::Proxy::serve) serves the proxy's own
//! router, so its call route is known, and a request at that path goes to the call's handler
//! directly rather than through axum's router, which matched the path,
//! recorded it and its parameters in the request's extensions and boxed the handler's future
//! for a route that has neither parameters nor layers: 64,968 → 61,186 instructions per proxied
//! read (callgrind, `courier serve --threads 1`, as `benches/proxy_hop.sh --callgrind`
//! counts). The handler is given the peer's address rather than a `ConnectInfo` (the request's
//! extensions stay empty, unallocated) and hyper's body rather than axum's (boxed): 59,248 →
//! 58,620, and 58,293 → 57,709 with the handler's future returned as it is rather than awaited
//! in one of its own. Every other path, and every request of an app's own router
//! ([`Proxy::serve_with`](crate::Proxy::serve_with)), goes through the router.

use crate::places::{Busy, Place, Places, Tracked};
use crate::{Proxy, Shutdown};
use axum::extract::ConnectInfo;
use axum::Router;
use futures_util::future::Either;
use futures_util::FutureExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tower::ServiceExt;

/// The largest request head (request line and headers) a connection may send, as nginx's
/// `large_client_header_buffers` bounds it (4 × 8 KiB there): anything longer is refused with
/// 431 before a handler sees it.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// Serves `app` on `listener` until `stop` is begun, then lets every connection finish its
/// request in flight (a stream or a socket is ended by `stop` itself) and returns.
///
/// With `threads`, the connections are served on that many threads of their own, each a
/// single-threaded tokio runtime ([`Workers`]); without, on the runtime this runs on.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    calls: Option<Arc<Proxy>>,
    edge: Edge,
    stop: Shutdown,
    threads: Option<NonZeroUsize>,
) -> io::Result<()> {
    let places = Places::new(edge.max_connections, edge.max_connections_per_client);
    tracing::debug!(
        max_connections = places.max(),
        per_client = places.per_client().map(NonZeroUsize::get),
        "serving with a bound on open connections"
    );
    let server = Server::new(app, calls, edge.header_read_timeout);
    let mut workers = match threads {
        Some(threads) => Some(Workers::start(threads, &server)?),
        None => None,
    };
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = stop.begun() => break,
        };
        // At the bound, the oldest idle connection makes room, or this one waits for a place
        // (and the listener's backlog for this one).
        let place = tokio::select! {
            place = places.place(peer.ip()) => place,
            () = stop.begun() => break,
        };
        let Some(place) = place else {
            tracing::debug!(
                %peer,
                "closed a new connection: its address holds as many busy ones as it may"
            );
            continue;
        };
        match &mut workers {
            Some(workers) => workers.hand(stream, peer, place),
            None => server.connection(stream, peer, place, &graceful, ()),
        }
    }
    drop(listener);
    if let Some(workers) = workers {
        workers.stop().await;
    }
    graceful.shutdown().await;
    Ok(())
}

/// The bounds of [`serve`]'s connections: how long a request's head may take, and how many
/// connections may be open at once, in all and from one client address ([`places`](crate::places)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub(crate) header_read_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_client: Option<NonZeroUsize>,
}

/// What serving one connection takes: the app, and hyper's server configured once.
#[derive(Clone)]
struct Server {
    app: Router,
    /// The proxy whose call route (`Proxy::http_path`) is served ahead of `app`, when `app` is
    /// its own router (the [module docs](self) say why).
    calls: Option<Arc<Proxy>>,
    builder: Builder<TokioExecutor>,
    header_read_timeout: Duration,
}

impl Server {
    fn new(app: Router, calls: Option<Arc<Proxy>>, header_read_timeout: Duration) -> Self {
        let mut builder = Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout)
            .max_buf_size(MAX_HEAD);
        builder.http2().timer(TokioTimer::new());
        Self {
            app,
            calls,
            builder,
            header_read_timeout,
        }
    }

    /// Serves `stream` in a task of the current runtime, watched by `graceful`, in `place`;
    /// `held` is dropped when the connection ends.
    fn connection(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        place: Place,
        graceful: &GracefulShutdown,
        held: impl Send + 'static,
    ) {
        // Small responses and SSE events go out at once, as nginx's `tcp_nodelay on` does.
        let _ = stream.set_nodelay(true);
        let app = self.app.clone();
        let calls = self.calls.clone();
        let spoke = Arc::new(AtomicBool::new(false));
        let first = Arc::clone(&spoke);
        let requests = place.clone();
        let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
            first.store(true, Ordering::Relaxed);
            // Busy until its response is sent whole: the connection is not closed for another.
            let busy = requests.busy();
            let answered = match &calls {
                Some(proxy) if request.uri().path() == proxy.http_path => {
                    let proxy = Arc::clone(proxy);
                    Either::Left(crate::call::serve_at_front(proxy, request, peer))
                }
                _ => {
                    let extensions = request.extensions_mut();
                    extensions.insert(ConnectInfo(peer));
                    // A channel's socket keeps the request's parts, so this keeps the
                    // connection busy for as long as the socket is open, past its 101.
                    extensions.insert(KeptBusy {
                        _busy: busy.clone(),
                    });
                    Either::Right(app.clone().oneshot(request.map(axum::body::Body::new)))
                }
            };
            answered.map(|answered| {
                answered.map(|response| response.map(|body| Tracked::new(body, busy)))
            })
        });
        let connection = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        let header_read_timeout = self.header_read_timeout;
        tokio::spawn(async move {
            let _held = held;
            tokio::pin!(connection);
            // Until the first request's head: hyper's own timer takes over from there. The
            // timer goes once the connection has spoken, so that none of its later wake-ups
            // polls it too (a `select!` over both polled it on every one).
            let mut first_head = Some(Box::pin(tokio::time::sleep(header_read_timeout)));
            let ended = poll_fn(|cx| {
                if let Poll::Ready(ended) = connection.as_mut().poll(cx) {
                    return Poll::Ready(Ended::Served(ended));
                }
                if let Some(timer) = &mut first_head {
                    if spoke.load(Ordering::Relaxed) {
                        first_head = None;
                    } else if timer.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Ended::NoHead);
                    }
                }
                // Idle, its place taken by a new connection: dropped here, closed.
                if place.poll_closing(cx).is_ready() {
                    return Poll::Ready(Ended::PlaceTaken);
                }
                Poll::Pending
            })
            .await;
            match ended {
                Ended::Served(Ok(())) => {}
                Ended::Served(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "a connection ended with an error");
                }
                Ended::NoHead => {
                    tracing::debug!(%peer, "no request head within the header read timeout");
                }
                Ended::PlaceTaken => {}
            }
        });
    }
}

/// How a connection's task ended.
enum Ended {
    /// hyper ended the connection.
    Served(Result<(), courier_core::BoxError>),
    /// No request head came within the header read timeout.
    NoHead,
    /// It was idle at the bound on open connections, and its place went to a new one.
    PlaceTaken,
}

/// Keeps a connection busy while a request's parts are kept: [`Server::connection`] puts it in
/// the extensions of the requests it hands to the router.
#[derive(Clone)]
struct KeptBusy {
    _busy: Busy,
}

/// Threads serving the connections handed to them, each a single-threaded tokio runtime, as
/// nginx's worker processes are: a connection is served start to end on the thread it was
/// handed to, so its tasks wake one another within one thread, without the cross-thread
/// wake-ups of a work-stealing runtime: 24.1–28.6 µs of CPU per proxied request on one
/// single-threaded runtime against 32.3–38.6 µs on tokio's two-worker runtime (wrk,
/// `benches/proxy_hop.sh`; docs/benchmarks-history.md, "One thread per connection's work").
///
/// The accepting runtime hands each connection to the thread with the fewest open, so
/// long-lived streams and sockets spread as requests do.
struct Workers {
    threads: Vec<Worker>,
}

/// A connection handed to a worker: its socket, its peer, its place and the worker's count.
type Handed = (std::net::TcpStream, SocketAddr, Place, Open);

struct Worker {
    /// `None` once the worker is told to stop.
    connections: Option<mpsc::UnboundedSender<Handed>>,
    open: Arc<AtomicUsize>,
    stopped: oneshot::Receiver<()>,
    /// Dropped before the worker has stopped (the serving future was dropped), it cuts the
    /// worker's connections off at once.
    _abort: oneshot::Sender<()>,
}

impl Workers {
    fn start(threads: NonZeroUsize, server: &Server) -> io::Result<Self> {
        let threads = (0..threads.get())
            .map(|index| Worker::start(index, server.clone()))
            .collect::<io::Result<_>>()?;
        Ok(Self { threads })
    }

    /// Hands `stream` to the worker with the fewest open connections. A worker whose thread
    /// has ended (it cannot take connections any more) is passed over from then on.
    fn hand(&mut self, stream: TcpStream, peer: SocketAddr, place: Place) {
        // The accepting runtime's registration goes; the worker's runtime registers it again.
        let Ok(stream) = stream.into_std() else {
            return;
        };
        let mut handed = (stream, peer, place);
        loop {
            let Some(worker) = self
                .threads
                .iter_mut()
                .filter(|worker| worker.connections.is_some())
                .min_by_key(|worker| worker.open.load(Ordering::Relaxed))
            else {
                return;
            };
            // Counted as the worker's from now, so the next connection goes elsewhere even
            // before this worker has taken it.
            let open = Open::count(&worker.open);
            let Some(connections) = &worker.connections else {
                return;
            };
            let (stream, peer, place) = handed;
            match connections.send((stream, peer, place, open)) {
                Ok(()) => return,
                Err(mpsc::error::SendError((stream, peer, place, _))) => {
                    worker.connections = None;
                    handed = (stream, peer, place);
                }
            }
        }
    }

    /// Tells every worker to stop, and waits until each has let its connections finish.
    async fn stop(mut self) {
        for worker in &mut self.threads {
            worker.connections = None;
        }
        for worker in &mut self.threads {
            let _ = (&mut worker.stopped).await;
        }
    }
}

impl Worker {
    fn start(index: usize, server: Server) -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (connections, mut handed) = mpsc::unbounded_channel();
        let (done, stopped) = oneshot::channel();
        let (abort, aborted) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("courier-worker-{index}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let graceful = GracefulShutdown::new();
                    let serving = async {
                        while let Some((stream, peer, place, open)) = handed.recv().await {
                            if let Ok(stream) = TcpStream::from_std(stream) {
                                server.connection(stream, peer, place, &graceful, open);
                            }
                        }
                        graceful.shutdown().await;
                    };
                    tokio::select! {
                        () = serving => {}
                        _ = aborted => {}
                    }
                });
                // The runtime goes here, and every task still on it.
                drop(runtime);
                let _ = done.send(());
            })?;
        Ok(Self {
            connections: Some(connections),
            open: Arc::new(AtomicUsize::new(0)),
            stopped,
            _abort: abort,
        })
    }
}

/// After a failed accept: a connection that went away before it was accepted is nothing; any
/// other failure (out of file descriptors) is logged, and accepting pauses for a second so the
/// loop does not spin while nothing can be accepted.
async fn accept_failed(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// One open connection of a worker's count, for as long as it is held.
struct Open(Arc<AtomicUsize>);

impl Open {
    fn count(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(open))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker fed by a channel of the test's: its thread is `receiver`.
    fn worker() -> (Worker, mpsc::UnboundedReceiver<Handed>) {
        let (connections, receiver) = mpsc::unbounded_channel();
        let (_done, stopped) = oneshot::channel();
        let (abort, _aborted) = oneshot::channel();
        let worker = Worker {
            connections: Some(connections),
            open: Arc::new(AtomicUsize::new(0)),
            stopped,
            _abort: abort,
        };
        (worker, receiver)
    }

    #[tokio::test]
    async fn a_worker_whose_thread_ended_is_passed_over() {
        let (ended, gone) = worker();
        drop(gone);
        let (live, mut handed) = worker();
        let mut workers = Workers {
            threads: vec![ended, live],
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let places = Places::new(16, None);
        for _ in 0..2 {
            let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (stream, peer) = listener.accept().await.unwrap();
            let place = places.admit(peer.ip()).unwrap();
            workers.hand(stream, peer, place);
        }
        // Both connections reached the live worker, and only its count holds them.
        assert!(workers.threads[0].connections.is_none());
        assert_eq!(workers.threads[0].open.load(Ordering::Relaxed), 0);
        assert_eq!(workers.threads[1].open.load(Ordering::Relaxed), 2);
        assert!(handed.try_recv().is_ok());
        assert!(handed.try_recv().is_ok());
        // A connection's count goes with it.
        assert_eq!(workers.threads[1].open.load(Ordering::Relaxed), 0);
    }
}
