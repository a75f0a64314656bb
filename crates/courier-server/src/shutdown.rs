//! [`Shutdown`]: stopping a proxy gracefully, its long-lived responses included.

use courier_core::CancellationToken;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Stops a [`Proxy`](crate::Proxy)'s streams and channels, so a server can stop gracefully.
///
/// A graceful stop (axum's `with_graceful_shutdown`, hyper's `graceful_shutdown`) stops
/// accepting connections and waits for the responses in flight — and an event stream is a
/// response that never ends on its own, so one open stream would hold the server up for good.
/// [`Shutdown::begin`] ends them:
///
/// - every stream, implemented or proxied, is cut short: its response ends without the last
///   chunk, which a client (a browser's `EventSource`, courier's stream client) takes for a
///   dropped connection and reconnects after, with its `Last-Event-ID` — to another instance.
///   A clean end would tell it the stream is over;
/// - every socket, implemented or proxied, is closed with 1001 ("going away"; a courier client
///   reconnects with backoff);
/// - calls in flight are left alone: a graceful stop lets them finish.
///
/// Get the handle with [`Proxy::shutdown_handle`](crate::Proxy::shutdown_handle) before
/// [`Proxy::into_router`](crate::Proxy::into_router); clones share their state.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use courier::server::Proxy;
///
/// let proxy = Proxy::new();
/// let shutdown = proxy.shutdown_handle();
/// let app = proxy.into_router()?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let stop = shutdown.clone();
/// let server = tokio::spawn(async move {
///     axum::serve(listener, app)
///         .with_graceful_shutdown(stop.begun())
///         .await
/// });
/// // On SIGTERM, say:
/// shutdown.begin();
/// server.await??;
/// shutdown.closed().await; // every socket has sent its close frame
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    token: CancellationToken,
    sockets: Arc<Sockets>,
}

/// The sockets open now, and a wake-up for whoever waits for the last one to close; whether
/// the stop has begun, read without the token's lock (every served stream asks, on every poll).
#[derive(Debug, Default)]
struct Sockets {
    open: AtomicUsize,
    none_open: Notify,
    begun: AtomicBool,
}

/// One open socket; dropping it closes the count.
struct Open(Arc<Sockets>);

impl Drop for Open {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none_open.notify_waiters();
        }
    }
}

impl Shutdown {
    /// Ends every stream and closes every socket of the proxy, now and from now on.
    pub fn begin(&self) {
        self.sockets.begun.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// Whether [`Shutdown::begin`] has been called.
    pub fn is_begun(&self) -> bool {
        self.sockets.begun.load(Ordering::Acquire)
    }

    /// Resolves once [`Shutdown::begin`] is called: the signal to hand a graceful stop.
    pub fn begun(&self) -> impl Future<Output = ()> + Send + 'static {
        self.token.clone().cancelled_owned()
    }

    /// Resolves once shutdown has begun and every socket has closed (sent its close frame).
    pub async fn closed(&self) {
        self.token.cancelled().await;
        loop {
            let none_open = self.sockets.none_open.notified();
            tokio::pin!(none_open);
            // Registered before the count is read, so a last close in between still wakes us.
            none_open.as_mut().enable();
            if self.sockets.open.load(Ordering::Acquire) == 0 {
                return;
            }
            none_open.await;
        }
    }

    /// The token streams and sockets end on.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Runs a socket's future as one [`Shutdown::closed`] waits for.
    pub(crate) fn track<F: Future>(&self, socket: F) -> impl Future<Output = F::Output> {
        self.sockets.open.fetch_add(1, Ordering::AcqRel);
        let open = Open(Arc::clone(&self.sockets));
        async move {
            let _open = open;
            socket.await
        }
    }
}
