//! The transport and the stack a call goes down.
//!
//! Every call ends in a transport: a `tower::Service` from `http::Request<Body>` to
//! `http::Response<Body>`, type-erased as an [`HttpService`]. By default it is courier's own
//! ([`Transport`]: hyper over rustls, pooled; its docs tell how it differs from a hyper-util
//! client), picked per call by the [`TransportCache`] from the call's, its groups' and its
//! source's [`TransportOptions`]. A source or group changes how it connects with a
//! [`Dispatcher`] (an HTTP proxy, a [`ClientIdentity`] for mutual TLS, extra roots), or replaces
//! it whole with a [`Fetch`]: any service of your own, a mock in a test included. Between the
//! call and the transport sit courier's layers and the source's [`Middleware`] (any tower layer,
//! type-erased); [`BodyService`] names what a courier stack can hold.
//!
//! ```
//! use courier::transport::{Body, Fetch};
//! use courier::{ApiDef, Client, GroupDef, HttpEndpoint};
//! use http::{Request, Response};
//! use serde_json::json;
//! use tower::service_fn;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // Every call of the source answered here, nothing sent.
//! let fetch = Fetch::new(service_fn(|request: Request<Body>| async move {
//!     let body = format!(r#"{{"path":"{}"}}"#, request.uri().path());
//!     Ok::<_, std::convert::Infallible>(Response::new(Body::from(body)))
//! }));
//! let api = ApiDef::builder()
//!     .base_url("https://api.example.com")
//!     .fetch(fetch)
//!     .group("users", GroupDef::new().endpoint("get", HttpEndpoint::get("/users/:id")))
//!     .build()?;
//! let user = Client::new(api)?.call("users.get", json!({ "id": 7 })).await?;
//! assert_eq!(user.data, json!({ "path": "/users/7" }));
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```

pub use courier_core::{
    Body, BodyService, ClientIdentity, Dispatcher, Fetch, HttpFuture, HttpService, Middleware,
    TransportOptions,
};

#[cfg(feature = "client")]
pub use courier_client::{Transport, TransportCache, TransportError};
