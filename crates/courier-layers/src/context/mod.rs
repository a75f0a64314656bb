//! The request a server is serving, in scope for the calls its handler makes: [`ServedRequest`],
//! and [`ContextLayer`], which puts it there (the `context` feature).
//!
//! A [`ServedRequest`] is the served request's head (method, address, headers, extensions) and
//! the peer's address, cheap to clone. The [session](crate::session) and
//! [forward](crate::forward) layers read it to carry the user's session and headers on a call;
//! the headers those calls ask for on the served response (the session's `set-cookie`
//! pass-back) wait in it until the server writes its response. A server puts it in scope around
//! its handler with [`ServedRequest::scope`]; [`ContextLayer`] does that for any tower server, an
//! axum `Router` included, and courier's proxy route does it for every call it makes.
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
//! [`SocketAddr`](std::net::SocketAddr), or, with the `axum` cargo feature (on by default), axum's
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
//! use courier::layers::context::{ContextLayer, ServedRequest};
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
//! use courier::options::ForwardOptions;
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
//! use courier::layers::context::{ContextLayer, ServedRequest};
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

pub use courier_core::context::ServedRequest;

#[cfg(feature = "context")]
pub mod future;
#[cfg(feature = "context")]
mod layer;
#[cfg(all(test, feature = "context"))]
mod tests;

#[cfg(feature = "context")]
pub use self::layer::{Context, ContextLayer, PeerAddress, PeerFromExtensions};
