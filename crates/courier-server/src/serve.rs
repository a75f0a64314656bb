//! Serving the proxy's router on a TCP listener with the connection-level defences a server in
//! front of browsers needs, which `axum::serve` leaves out: a bound on how long a request's head
//! may take to arrive, and a graceful stop tied to the proxy's [`Shutdown`].
//!
//! Each connection is served by hyper-util's HTTP/1 + HTTP/2 server with upgrades (for the
//! channels' WebSockets) and a timer, so hyper's `header_read_timeout` holds: a connection that
//! sends half a request head, trickles it a byte at a time or sits idle between keep-alive
//! requests is closed once the timeout passes. The peer's address reaches the handlers as axum's
//! `ConnectInfo<SocketAddr>` (the proxy forwards it as the client address).

use crate::Shutdown;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use std::io;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

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
        .header_read_timeout(header_read_timeout);
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
        let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "a connection ended with an error");
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
