//! The served-request context: the request a server is serving while a call is made.
//!
//! A call made while a server serves a user carries that user's session and forwarded headers
//! (the spec's Authentication 5 and 8). The server puts the served request in scope around its
//! handler's future with [`ServedRequest::scope`]; layers read it with
//! [`ServedRequest::current`]. The scope is a `tokio::task_local!`: a task spawned from the
//! handler does not inherit it, so carry it over with [`ServedRequest::scope`] again:
//!
//! ```
//! use courier_core::context::ServedRequest;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (parts, ()) = http::Request::get("/profile").header("cookie", "sid=abc").body(()).unwrap().into_parts();
//! let served = ServedRequest::new(parts, None);
//! served.scope(async {
//!     assert!(ServedRequest::is_serving());
//!     // Spawned work takes the context with it explicitly.
//!     let context = ServedRequest::current().unwrap();
//!     tokio::spawn(context.scope(async {
//!         assert_eq!(ServedRequest::current().unwrap().headers()["cookie"], "sid=abc");
//!     }))
//!     .await
//!     .unwrap();
//! })
//! .await;
//! assert!(!ServedRequest::is_serving());
//! # }
//! ```

use http::request::Parts;
use http::{HeaderMap, Method, Uri};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

tokio::task_local! {
    static SERVED: ServedRequest;
}

/// The request a server is serving: its method, address, headers and the peer's address.
/// Cloning is cheap (an `Arc` inside).
#[derive(Clone, Debug)]
pub struct ServedRequest {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    parts: Parts,
    peer: Option<SocketAddr>,
}

impl ServedRequest {
    /// The served request's head, and the peer's address when the server knows it.
    pub fn new(parts: Parts, peer: Option<SocketAddr>) -> Self {
        Self {
            inner: Arc::new(Inner { parts, peer }),
        }
    }

    /// Runs `future` with this request in scope.
    pub fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        SERVED.scope(self, future)
    }

    /// The request in scope, if a server is serving one on this task.
    pub fn current() -> Option<Self> {
        SERVED.try_with(Clone::clone).ok()
    }

    /// Whether a server is serving a request on this task.
    pub fn is_serving() -> bool {
        SERVED.try_with(|_| ()).is_ok()
    }

    /// The served request's head.
    pub fn parts(&self) -> &Parts {
        &self.inner.parts
    }

    /// Its method.
    pub fn method(&self) -> &Method {
        &self.inner.parts.method
    }

    /// Its address.
    pub fn uri(&self) -> &Uri {
        &self.inner.parts.uri
    }

    /// Its headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.inner.parts.headers
    }

    /// The peer's address.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.inner.peer
    }
}
