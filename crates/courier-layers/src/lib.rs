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

pub mod allow_headers;
pub mod auth;
pub mod cancel_previous;
pub mod coalesce;
pub mod context;
pub mod forward;
pub mod retry;
pub mod session;
pub mod timeout;
pub mod trace;
