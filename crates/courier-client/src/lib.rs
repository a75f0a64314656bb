//! courier's direct client: the default HTTP transport, and the caller that runs a source's
//! endpoints over it.
//!
//! - [`Caller<A>`](Caller): the typed views of an API of shape `A` (`#[derive(courier::Api)]`)
//!   over a [`Client`]: `caller.users().get(UserId(7)).await`.
//! - [`Client`]: calls straight to the upstream — by dotted path with JSON variables, as the
//!   [`Dispatch`](courier_core::Dispatch) typed views run on, and as a `tower::Service<Call>`.
//! - [`ProxyCaller<A>`](ProxyCaller): the same typed views over a
//!   [`ProxyClient`](proxy::ProxyClient), which calls through an app server's proxy route.
//! - [`Transport`]: the default HTTP transport — hyper's `client::conn` in a connection pool of
//!   courier's, over rustls, HTTP/1.1 and HTTP/2 by ALPN — and [`TransportCache`], which picks
//!   each call's transport.
//! - [`Error`]: one error type for every way a call can fail.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use courier::{ApiDef, Client, GroupDef, HttpEndpoint};
//! use serde_json::json;
//!
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let addr = listener.local_addr()?;
//! # let app = axum::Router::new().route(
//! #     "/users/{id}",
//! #     axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u64>| async move {
//! #         axum::Json(json!({ "id": id }))
//! #     }),
//! # );
//! # tokio::spawn(async move { axum::serve(listener, app).await });
//! let api = ApiDef::builder()
//!     .base_url(format!("http://{addr}"))
//!     .group("users", GroupDef::new().prefix("/users").endpoint("get", HttpEndpoint::get("/:id")))
//!     .build()?;
//! let client = Client::new(api)?;
//! let user = client.call("users.get", json!({ "id": 7 })).await?;
//! assert_eq!(user.data, json!({ "id": 7 }));
//!
//! let err = client.call("users.get", json!({})).await.unwrap_err();
//! assert!(err.is_configuration()); // no `id`: nothing was sent
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
//!
//! # How a call runs
//!
//! 1. The path options resolve (source, then groups outer to inner), and
//!    [`build_request`](courier_core::build_request) encodes the variables into an
//!    `http::Request`: address, search parameters or body, the source's headers, the call's own
//!    headers over them.
//! 2. The request goes through the endpoint's service: its transport (the call's `fetch` or
//!    `dispatcher`, else the nearest group's, else the source's, else the default transport),
//!    wrapped in the endpoint's `.layer()`s, wrapped in the source's `middleware`.
//! 3. A status of 400 or above becomes an [`HttpError`] with the body parsed (JSON when it
//!    parses, else text). Otherwise the body is read as the endpoint's response type (JSON by
//!    default, text, bytes, an URL-encoded form, or the source's `response_parser`) and handed to
//!    the call's type ([`FromResponse`](courier_core::FromResponse)); status 204 and HEAD
//!    responses are `null`, so `()` and `Option<T>` take them; a `stream: true` endpoint's body
//!    is handed over unread as a [`BodyStream`](courier_core::BodyStream).
//!
//! # Choices this crate makes
//!
//! - **Timeouts**: a call's `timeout` is its deadline, as ky's is — every attempt, the waits
//!   between them and the reading of a buffered response body fit in it — and an
//!   `attempt_timeout` bounds each attempt inside it. The call's own wins over the endpoint's,
//!   which wins over its groups', then the source's. A timeout is [`Error::is_timeout`], never a
//!   network error, and says what happened: "the call did not finish within 1 s (3 attempts)".
//! - **Cancellation**: a call ends as soon as its own `signal` or its source's is cancelled
//!   ([`Error::is_cancelled`]); an already-cancelled signal sends nothing.
//! - **Status 0**: when no response came (refused, reset, DNS, TLS, timeout, cancellation),
//!   [`Error::status_code`] is `0`, as the browser package's `HTTPError` has it; the cause is
//!   kept as the error's `source()` and [`Error::network`] names its kind.
//! - **Upload progress** is reported as the connection reads the body, in slices of 64 KiB, from
//!   `0.0` to exactly one `1.0` when the body ends, which is before the response can complete.

mod caller;
mod error;
mod form;
#[cfg(feature = "mock")]
pub mod mock;
mod opener;
mod progress;
pub mod proxy;
mod read;
#[cfg(feature = "axum")]
mod response;
mod sent;
pub mod sse;
mod transport;
pub mod ws;

pub use caller::{Call, Caller, CallerBuilder, Client, ClientBuilder};
pub use error::{Close, Error, HttpError, Refused};
pub use proxy::ProxyCaller;
pub use transport::{classify, NetworkErrorKind, Transport, TransportCache, TransportError};
