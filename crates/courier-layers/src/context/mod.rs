//! [`ContextLayer`]: puts the request a server is serving in scope for the calls its handler
//! makes.
//!
//! A call made while a server serves a user carries that user's session and forwarded headers
//! ([`SessionLayer`](crate::session::SessionLayer), [`ForwardLayer`](crate::forward::ForwardLayer)).
//! This layer wraps the *server's* service (an axum `Router`, or any tower server) and, for each
//! request it serves:
//!
//! 1. builds a [`ServedRequest`] from a copy of the request's head (method, address, headers,
//!    extensions) and the peer's address,
//! 2. adds that `ServedRequest` to the request's extensions too, so a handler can take it
//!    (axum's `Extension<ServedRequest>`) and hand it to a call explicitly,
//! 3. calls the inner service inside [`ServedRequest::scope`], so every call made while the
//!    handler runs finds it with [`ServedRequest::for_request`],
//! 4. when the response head is ready, appends the headers those calls asked for
//!    ([`ServedRequest::take_response_headers`], the session's `set-cookie` pass-back) to the
//!    served response, after any the handler set itself.
//!
//! # The peer's address
//!
//! By default ([`PeerFromExtensions`]) the peer is read from the request's extensions: a
//! [`SocketAddr`], or, with the `axum` cargo feature (on by default), axum's
//! `ConnectInfo<SocketAddr>`, which `Router::into_make_service_with_connect_info::<SocketAddr>()`
//! puts there. A server that knows the peer some other way gives a function of the request's
//! head with [`ContextLayer::peer_address`]. A request whose peer is unknown is still served;
//! only the client address is then left out of forwarded headers.
//!
//! # Compared with tower-http
//!
//! tower-http's `AddExtension` adds one fixed value to every request's extensions. This layer
//! adds a value made from each request, and also puts it in a task-local scope around the
//! handler's future, so code far from the handler (a client stack's layers) finds it without
//! the request being threaded through. Put tower-http's `SetRequestIdLayer` *outside* this layer
//! (before it in a `ServiceBuilder`), so the request id it sets is in the copied head.
//!
//! # Example
//!
//! ```
//! use courier::context::ServedRequest;
//! use courier::layers::context::ContextLayer;
//! use http::{HeaderValue, Request, Response};
//! use std::convert::Infallible;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let server = ServiceBuilder::new()
//!     .layer(ContextLayer::new())
//!     .service_fn(|_request: Request<String>| async {
//!         // Anything the handler calls sees the served request...
//!         let served = ServedRequest::current().expect("in scope");
//!         assert_eq!(served.headers()["cookie"], "sid=abc");
//!         assert_eq!(served.peer(), Some(([127, 0, 0, 1], 4000).into()));
//!         // ...and can add headers to the served response.
//!         served.append_response_header(
//!             http::header::SET_COOKIE,
//!             HeaderValue::from_static("sid=def; HttpOnly"),
//!         );
//!         Ok::<_, Infallible>(Response::new(String::new()))
//!     });
//!
//! let request = Request::get("/profile")
//!     .header("cookie", "sid=abc")
//!     .extension(std::net::SocketAddr::from(([127, 0, 0, 1], 4000)))
//!     .body(String::new())?;
//! let response = server.oneshot(request).await?;
//! assert_eq!(response.headers()["set-cookie"], "sid=def; HttpOnly");
//! # Ok(())
//! # }
//! ```
//!
//! With axum, add the layer to the router and serve it with the peer's address:
//!
//! ```no_run
//! # #[cfg(feature = "axum")]
//! # async fn serve() -> std::io::Result<()> {
//! use axum::{routing::get, Router};
//! use courier::layers::context::ContextLayer;
//! use std::net::SocketAddr;
//!
//! let app = Router::new()
//!     .route("/", get(|| async { "calls made here carry the user's session" }))
//!     .layer(ContextLayer::new());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
//! # }
//! ```
//!
//! # Example: an axum handler calling a bare hyper-util client
//!
//! No courier definition on either side: the handler's client carries a `ForwardLayer`, which
//! finds the served request this layer put in scope.
//!
//! ```
//! use axum::{routing::get, Router};
//! use courier::layers::context::ContextLayer;
//! use courier::layers::forward::ForwardLayer;
//! use courier::ForwardOptions;
//! use http::Request;
//! use http_body_util::BodyExt;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let backend = Router::new().route("/orders", get(|headers: http::HeaderMap| async move {
//! #     format!("orders of {}", headers["x-tenant"].to_str().unwrap())
//! # }));
//! # let backend = courier_test_support::serve(backend).await;
//! let client = ServiceBuilder::new()
//!     .layer(ForwardLayer::new(ForwardOptions::new().headers(["x-tenant"])))
//!     .service(Client::builder(TokioExecutor::new()).build_http::<String>());
//!
//! let dashboard = move || {
//!     let client = client.clone();
//!     async move {
//!         let call = Request::get(format!("http://{backend}/orders")).body(String::new());
//!         let response = client.oneshot(call.unwrap()).await.unwrap();
//!         response.into_body().collect().await.unwrap().to_bytes()
//!     }
//! };
//! let app = Router::new()
//!     .route("/dashboard", get(dashboard))
//!     .layer(ContextLayer::new());
//! let app = courier_test_support::serve(app).await;
//!
//! // A browser's request to the app, with its tenant header.
//! let page = Request::get(format!("http://{app}/dashboard"))
//!     .header("x-tenant", "acme")
//!     .body(String::new())?;
//! let browser = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let answer = browser.request(page).await?.into_body().collect().await?.to_bytes();
//! assert_eq!(answer, "orders of acme");
//! # Ok(())
//! # }
//! ```
//!
//! # Spawned tasks
//!
//! The scope is a `tokio::task_local!`: a task spawned from the handler does not inherit it.
//! Take the context with [`ServedRequest::current`] and run the task's future inside
//! [`ServedRequest::scope`] again:
//!
//! ```
//! use courier::context::ServedRequest;
//! use courier::layers::context::ContextLayer;
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let server = ServiceBuilder::new()
//!     .layer(ContextLayer::new())
//!     .service_fn(|_request: Request<String>| async {
//!         let context = ServedRequest::current().expect("in scope");
//!         let task = tokio::spawn(context.scope(async {
//!             // Calls made here carry the served request's session and headers.
//!             ServedRequest::current().map(|served| served.headers()["x-tenant"].clone())
//!         }));
//!         let tenant = task.await.expect("task ran").expect("carried over");
//!         Ok::<_, Infallible>(Response::new(tenant.to_str().unwrap_or_default().to_owned()))
//!     });
//!
//! let request = Request::get("/").header("x-tenant", "acme").body(String::new())?;
//! let response = server.oneshot(request).await?;
//! assert_eq!(response.into_body(), "acme");
//! # Ok(())
//! # }
//! ```
//!
//! Headers that calls add after the response head has been sent (from a spawned task that
//! outlives the handler, or while a streamed body is being written) are not added to it: the
//! head is gone by then.

pub mod future;
#[cfg(test)]
mod tests;

use courier_core::context::ServedRequest;
use http::request::Parts;
use http::{HeaderMap, Request, Response};
use std::fmt;
use std::net::SocketAddr;
use std::task::Poll;
use tower::{Layer, Service};

/// Where the peer's address of a served request comes from.
///
/// Implemented by [`PeerFromExtensions`] (the default) and by any
/// `Fn(&http::request::Parts) -> Option<SocketAddr>`:
///
/// ```
/// use courier::layers::context::ContextLayer;
/// use http::request::Parts;
/// use std::net::SocketAddr;
///
/// // A server behind a socket whose peer it stores in an extension type of its own.
/// #[derive(Clone)]
/// struct Remote(SocketAddr);
///
/// let layer = ContextLayer::new()
///     .peer_address(|parts: &Parts| parts.extensions.get::<Remote>().map(|remote| remote.0));
/// # let _ = layer;
/// ```
pub trait PeerAddress {
    /// The peer's address for the request with this head, if known.
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr>;
}

impl<F> PeerAddress for F
where
    F: Fn(&Parts) -> Option<SocketAddr>,
{
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr> {
        self(parts)
    }
}

/// Reads the peer's address from the request's extensions: a [`SocketAddr`], else (with the
/// `axum` feature) axum's `ConnectInfo<SocketAddr>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerFromExtensions;

impl PeerAddress for PeerFromExtensions {
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr> {
        if let Some(addr) = parts.extensions.get::<SocketAddr>() {
            return Some(*addr);
        }
        #[cfg(feature = "axum")]
        if let Some(info) = parts
            .extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
        {
            return Some(info.0);
        }
        None
    }
}

/// Puts each served request in scope for the calls its handler makes; see the
/// [module docs](self).
#[derive(Clone, Default)]
pub struct ContextLayer<P = PeerFromExtensions> {
    peer: P,
}

impl ContextLayer {
    /// A layer that reads the peer's address from the request's extensions.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<P> ContextLayer<P> {
    /// Reads the peer's address with `peer` instead.
    pub fn peer_address<Q: PeerAddress>(self, peer: Q) -> ContextLayer<Q> {
        ContextLayer { peer }
    }
}

impl<P> fmt::Debug for ContextLayer<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextLayer")
            .field("peer", &std::any::type_name::<P>())
            .finish()
    }
}

impl<S, P: Clone> Layer<S> for ContextLayer<P> {
    type Service = Context<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Context {
            inner,
            peer: self.peer.clone(),
        }
    }
}

/// The service [`ContextLayer`] makes: runs `S` with each served request in scope.
#[derive(Clone)]
pub struct Context<S, P = PeerFromExtensions> {
    inner: S,
    peer: P,
}

impl<S> Context<S> {
    /// Wraps `inner`, reading the peer's address from the request's extensions.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            peer: PeerFromExtensions,
        }
    }

    /// A [`ContextLayer`], for `ServiceBuilder`.
    pub fn layer() -> ContextLayer {
        ContextLayer::new()
    }
}

impl<S, P> Context<S, P> {
    define_inner_service_accessors!();
}

impl<S: fmt::Debug, P> fmt::Debug for Context<S, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("inner", &self.inner)
            .field("peer", &std::any::type_name::<P>())
            .finish()
    }
}

impl<S, P, ReqBody, ResBody> Service<Request<ReqBody>> for Context<S, P>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    P: PeerAddress,
    ReqBody: Send + 'static,
    ResBody: Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = future::ResponseFuture<Response<ResBody>, S::Error>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        let peer = self.peer.peer_address(&parts);
        // The copy is taken before the context joins the extensions, so the context never
        // holds itself.
        let served = ServedRequest::new(parts.clone(), peer);
        parts.extensions.insert(served.clone());
        let request = Request::from_parts(parts, body);

        // The inner service is called inside the scope too, not only polled there: a service
        // whose `call` starts an outgoing call right away must see the context. That needs the
        // instance `poll_ready` prepared, so it moves into the future and a clone stays here.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let scope = served.clone();
        future::ResponseFuture::new(scope.scope(async move {
            let mut response = inner.call(request).await?;
            append(response.headers_mut(), served.take_response_headers());
            Ok(response)
        }))
    }
}

/// Appends every value of `added` to `headers`, keeping what is there.
fn append(headers: &mut HeaderMap, added: HeaderMap) {
    let mut name = None;
    for (next, value) in added {
        if next.is_some() {
            name = next;
        }
        if let Some(name) = &name {
            headers.append(name, value);
        }
    }
}
