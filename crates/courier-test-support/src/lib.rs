//! What courier's test files share, so that none rebuilds it: serving an axum app on an
//! ephemeral port of 127.0.0.1, a [`Recorder`] for an upstream to note what it received and hold
//! its answers, capturing what a `tracing` subscriber writes, and (in [`tls`]) a certificate
//! authority, TLS and plain servers and a `CONNECT` proxy for transport tests, and (in
//! [`redis`]) a real `redis-server` of a test's own, (in [`metrics`]) a recorder that keeps what
//! the `metrics` facade records, and (in [`writes`]) an upstream that
//! deduplicates writes by their idempotency key and drops its first connection. Dev-only; not
//! published.

pub mod metrics;
mod recorder;
pub mod redis;
pub mod tls;
pub mod writes;

pub use crate::recorder::{AbandonGuard, Received, Recorder, PATIENCE};

use axum::Router;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tracing_subscriber::fmt::MakeWriter;

/// The address a `courier serve` child prints on its first line of stdout (`listening on
/// http://ADDR`), which must be piped; waits up to 30 s for it.
///
/// # Panics
///
/// When no such line comes: the test cannot reach the server.
pub async fn listening_on(child: &mut tokio::process::Child) -> SocketAddr {
    use tokio::io::AsyncBufReadExt;
    let stdout = child.stdout.take().expect("the child's stdout is piped");
    let mut line = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        tokio::io::BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the listening line within 30 s")
    .expect("the child's stdout reads");
    line.trim()
        .strip_prefix("listening on http://")
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
}

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

/// Everything a `tracing_subscriber::fmt` subscriber writes, kept for the test to read: give a
/// clone to [`with_writer`](tracing_subscriber::fmt::SubscriberBuilder::with_writer), then read
/// [`Captured::text`].
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// What was written so far.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

/// A backend on 127.0.0.1 answering `GET /users/{id}` with `{"id": id}`: the upstream of the
/// source [`users_source`] describes.
///
/// # Panics
///
/// As [`serve`].
pub async fn users_backend() -> SocketAddr {
    use axum::extract::Path;
    use axum::routing::get;
    serve(Router::new().route(
        "/users/{id}",
        get(|Path(id): Path<u64>| async move {
            let body = format!("{{\"id\":{id}}}");
            ([(http::header::CONTENT_TYPE, "application/json")], body)
        }),
    ))
    .await
}

/// The `courier.toml` tables of a source `demo` on `backend` (a [`users_backend`]) with one
/// exposed endpoint, `users.get` (`GET /users/:id`).
pub fn users_source(backend: SocketAddr) -> String {
    format!(
        "[sources.demo]\nbase_url = \"http://{backend}\"\n\n\
         [sources.demo.groups.users]\nprefix = \"/users\"\nexpose = true\n\n\
         [sources.demo.groups.users.endpoints.get]\nget = \"/:id\"\n"
    )
}
