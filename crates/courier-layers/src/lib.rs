//! courier's cross-cutting behaviours, each its own tower [`Layer`](tower::Layer), usable alone
//! on any `Service<http::Request<B>>`.
//!
//! | module | layer | does |
//! |---|---|---|
//! | [`cancel_previous`] | `CancelPreviousLayer` | a newer read of a listed endpoint cancels the older in-flight one (status 499) |
//! | [`session`] | `SessionLayer` | the served user's session cookies and bearer token; CSRF and origin checks on writes; `set-cookie` pass-back |
//! | [`forward`] | `ForwardLayer` | request id, trace context, client address, user agent, locale and named headers from the served request |
//! | [`coalesce`] | `CoalesceLayer` | identical in-flight reads share one upstream call |
//! | [`retry`] | `RetryLayer` | retries reads and idempotent calls on 0, 429, 502, 503, 504 with backoff |
//! | [`timeout`] | `TimeoutLayer` | bounds each attempt |
//! | [`allow_headers`] | `AllowHeadersLayer` | proxy only: allow-listed headers cross, both ways; `content-*` never from the lists; cookies only where named |
//! | [`auth`] | `AuthLayer` | sets `Authorization` from an async token supplier |
//! | [`trace`] | `trace_layer()` | tower-http's `TraceLayer` with `tracing`, set up for courier's calls |
//!
//! Each module is behind a cargo feature of its name (`allow-headers`, `auth`,
//! `cancel-previous`, `coalesce`, `context`, `forward`, `retry`, `session`, `timeout`, `trace`;
//! `axum` for `ContextLayer`'s peer address); `full`, the default, turns them all on. A crate that
//! uses a few names them: `default-features = false, features = ["coalesce"]`.
//!
//! On the server side, [`context`]'s `ContextLayer` puts the request being served in scope for
//! its handler, so that [`session`] and [`forward`] find it.
//!
//! Each layer reads the [`EndpointMeta`](courier_core::EndpointMeta) a courier client puts in
//! the request's extensions; without one it decides from the request's method and its own
//! configuration.
//!
//! The order `Caller` assembles, outermost first:
//!
//! `CancelPrevious → Session → Forward → middleware (.use) → Coalesce → Retry → Timeout → transport`

mod body;

pub use crate::body::BufferedBody;

#[cfg(feature = "allow-headers")]
pub mod allow_headers;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "cancel-previous")]
pub mod cancel_previous;
#[cfg(feature = "coalesce")]
pub mod coalesce;
#[cfg(feature = "context")]
pub mod context;
#[cfg(feature = "forward")]
pub mod forward;
#[cfg(feature = "retry")]
pub mod retry;
#[cfg(feature = "session")]
pub mod session;
#[cfg(feature = "timeout")]
pub mod timeout;
#[cfg(feature = "trace")]
pub mod trace;
