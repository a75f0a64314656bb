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
//! at the same timeout. A request head is at most [`MAX_HEAD`] bytes (431 beyond). The peer's
//! address reaches the handlers as axum's `ConnectInfo<SocketAddr>` (the proxy forwards it as
//! the client address).

use crate::Shutdown;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// The largest request head (request line and headers) a connection may send, as nginx's
/// `large_client_header_buffers` bounds it (4 × 8 KiB there): anything longer is refused with
/// 431 before a handler sees it.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// Serves `app` on `listener` until `stop` is begun, then lets every connection finish its
/// request in flight (a stream or a socket is ended by `stop` itself) and returns.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    stop: Shutdown,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_buf_size(MAX_HEAD);
    builder.http2().timer(TokioTimer::new());
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
        // Small responses and SSE events go out at once, as nginx's `tcp_nodelay on` does.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let spoke = Arc::new(AtomicBool::new(false));
        let first = Arc::clone(&spoke);
        let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
            first.store(true, Ordering::Relaxed);
            request.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::pin!(connection);
            let first_head = tokio::time::sleep(header_read_timeout);
            tokio::pin!(first_head);
            loop {
                tokio::select! {
                    ended = &mut connection => {
                        if let Err(e) = ended {
                            tracing::debug!(%peer, error = %e, "a connection ended with an error");
                        }
                        return;
                    }
                    // Until the first request's head: hyper's own timer takes over from there.
                    () = &mut first_head, if !spoke.load(Ordering::Relaxed) => {
                        if !spoke.load(Ordering::Relaxed) {
                            tracing::debug!(%peer, "no request head within the header read timeout");
                            return;
                        }
                    }
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
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
