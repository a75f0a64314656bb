//! What courier's test files share, so that none rebuilds it: serving an axum app on an
//! ephemeral port of 127.0.0.1. Dev-only; not published.

use axum::Router;
use std::net::SocketAddr;

/// Serves `app` on 127.0.0.1 (any free port) in a spawned task, with the peer's address as
/// `ConnectInfo<SocketAddr>`, and returns where it listens. Call it from within a tokio runtime.
///
/// # Panics
///
/// When no port of 127.0.0.1 can be bound: a test cannot go on without its server.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port of 127.0.0.1 to serve the test's app on");
    let addr = listener.local_addr().expect("the bound listener's address");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    addr
}
