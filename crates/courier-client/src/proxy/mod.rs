//! The proxy caller: the same typed views as [`Caller`](crate::Caller), over the proxy route of
//! an app server (`courier_server::Proxy`) instead of the upstream itself — what a browser does,
//! from Rust (a desktop or command-line front end, a test of the proxy, a service that may only
//! reach the app).
//!
//! It comes in three forms:
//!
//! - **Routes** ([`ProxyCaller::routes`]): built from the routes record
//!   ([`Routes`](courier_core::routes::Routes), written by `courier routes` or [`Routes::from_api`](courier_core::routes::Routes::from_api)). Only the routed
//!   endpoints can be called: the typed view is the API's whole shape (a Rust type cannot drop
//!   fields by a value read at run time), and calling an endpoint the routes do not name fails
//!   with `ENDPOINT_NOT_IN_ROUTES` before anything is sent. A read goes as GET when its route
//!   says `get: true` (a `.cache()`d read without sensitive variables).
//! - **Source** ([`ProxyCaller::source`]): built from the definition itself and the name the
//!   server registered it under. Every read goes as GET unless it has sensitive variables;
//!   exposure, `cancel_previous` and `coalesce` come from the definition; the response is read
//!   as the definition says (its response type or parser).
//! - **Boundary** ([`ProxyCaller::boundary`]): the source form's rules from a record written
//!   without the definition ([`Routes::boundary`](courier_core::routes::Routes::boundary), which lists the sensitive reads as POST
//!   reads), for a program that must not carry the definition.
//!
//! A typed caller finds its endpoints by name at run time, so there is no form with neither
//! routes, a source nor a boundary (the browser package has one, its name-only form, which sends
//! every call as POST). And a source's options hold no proxy paths — where the proxy is served
//! is the app's choice, not the API's — so the paths are the caller's own
//! ([`ProxyCallerBuilder::proxy_path`]), over the defaults.
//!
//! # The wire
//!
//! Calls go to the `http` path ([`ProxyPaths`], default `/api/request`) with `_s` (the source),
//! `_g` (the group path) and `_m` (the endpoint's name):
//!
//! - **GET**, the variables as JSON in `_v`: a read allowed GET (above), unless its variables are
//!   a [`Form`](courier_core::encode::Form), it watches its upload, or the address would be
//!   longer than 2 KB ([`MAX_GET_ADDRESS`]).
//! - **POST** otherwise: `{"variables": …}` as JSON, or the form as `multipart/form-data`.
//! - [`CallOptions::method`](courier_core::CallOptions::method) forces GET or POST (the proxy
//!   refuses a write or a sensitive read over GET with 405).
//! - A per-call [`CallOptions::timeout`](courier_core::CallOptions::timeout) is sent as `_t`
//!   (milliseconds); the proxy lets it shorten the upstream call's bound, never lengthen it. The
//!   caller's own [`ProxyCallerBuilder::timeout`] is not sent: it bounds how long the caller
//!   waits for the proxy.
//!
//! Streams go to the `sse` path (default `/api/sse`) and channels to the `ws` path (no default)
//! with the same parameters; a channel's first frame carries the caller's default headers and
//! [`WsOptions::auth`](courier_core::WsOptions)'s parameters (see `docs/PROTOCOL.md`).
//!
//! # Before anything is sent
//!
//! - An endpoint the routes do not name (or, in the source form, one not exposed):
//!   `ENDPOINT_NOT_IN_ROUTES`.
//! - A channel with no `ws` path: `WS_PATH_NOT_CONFIGURED`.
//! - Variables holding raw bytes (a `serialize_bytes` value such as `bytes::Bytes`):
//!   `PROXY_VARIABLE_NOT_SERIALIZABLE`, naming where they are. Files go in a `Form`.
//! - A stream (which JSON cannot carry either) cannot be variables at all: an endpoint's
//!   variables are `Serialize` or a [`Form`](courier_core::encode::Form), so an endpoint
//!   declared with a stream, or called with one, does not compile — earlier still than
//!   `PROXY_VARIABLE_NOT_SERIALIZABLE`. A `Form`, for its part, goes with an HTTP call only:
//!   given to a stream or a channel, it is `PROXY_VARIABLE_NOT_SERIALIZABLE`.
//!
//! # What runs where
//!
//! A [`ProxyCaller`] is a [`Caller`](crate::Caller) over a [`ProxyClient`], which writes each
//! call as the wire above and sends it through a stack of its own: the cookie jar, then
//! cancel-previous (the routes' or the source's `cancel_previous`, or every read with
//! [`ProxyCallerBuilder::deduplicate`]), then the caller's own layers, then coalescing
//! (identical reads in flight reach the proxy once), then the caller's timeout, then the
//! transport. The jar is outermost: it adds its cookies to a request before the other layers
//! see it (so coalescing tells two users' reads apart) and keeps what the response sets once
//! they answer. No retry: the proxy's own client retries the upstream call. Session, forwarded
//! headers, path options, the source's middleware and the endpoints' layers are the server's
//! and run there. A proxied call resolves to the same value as the direct call: the proxy
//! passes the upstream's status, allowed headers and body through.

mod caller;
mod client;
mod cookies;
mod hooks;
mod route;

pub use self::caller::{Credentials, ProxyCaller, ProxyCallerBuilder};
pub use self::client::ProxyClient;
pub use self::hooks::Success;
use self::route::not_serializable;
/// The proxy route's paths (the browser package's `proxyPath`): each a path on the caller's
/// base URL, or an absolute URL of its own.
#[doc(no_inline)]
pub use courier_core::config::ProxyPaths;

/// The longest address a read is sent as GET with, 2 KB as in the browser package; a longer one
/// goes as POST.
pub const MAX_GET_ADDRESS: usize = 2048;
