//! courier's cross-cutting behaviours, each its own tower [`Layer`](tower::Layer), usable alone
//! on any `Service<http::Request<B>>`.
//!
//! | module | layer | does |
//! |---|---|---|
//! | [`cancel_previous`] | `CancelPreviousLayer` | a newer read of a listed endpoint cancels the older in-flight one (status 499) |
//! | [`session`] | `SessionLayer` | the served user's session cookies and bearer token; CSRF and origin checks on writes; `set-cookie` pass-back |
//! | [`forward`] | `ForwardLayer` | request id, trace context, client address, user agent, locale and named headers from the served request |
//! | [`cache`] | `CacheLayer` | a read's successful answer kept for its `revalidate` time and answered from memory |
//! | [`coalesce`] | `CoalesceLayer` | identical in-flight reads share one upstream call |
//! | [`retry`] | `RetryLayer` | retries reads and idempotent calls on 0, 429, 502, 503, 504 with backoff |
//! | [`shed`] | `ShedLayer` | a bound on the calls in flight: one beyond it is refused at once (503, `Retry-After`) |
//! | [`timeout`] | `TimeoutLayer` | the deadline of a whole call, or (`per_attempt`) the bound of each attempt |
//! | [`allow_headers`] | `AllowHeadersLayer` | proxy only: allow-listed headers cross, both ways; `content-*` never from the lists; cookies only where named |
//! | [`auth`] | `AuthLayer` | sets `Authorization` from an async token supplier |
//! | [`trace`] | `trace_layer()` | tower-http's `TraceLayer` with `tracing`, set up for courier's calls |
//! | [`metrics`] | `MetricsLayer` | each call's duration by endpoint, method, status and error, through the `metrics` facade, named as OpenTelemetry's HTTP client conventions name them |
//! | [`context`] | `ContextLayer` | server side: the request being served (`ServedRequest`) in scope for the calls its handler makes |
//!
//! Each module is behind a cargo feature of its name (`allow-headers`, `auth`, `cache`,
//! `cancel-previous`, `coalesce`, `context`, `forward`, `metrics`, `retry`, `session`, `shed`, `timeout`,
//! `trace`; `axum` for `ContextLayer`'s peer address); `full`, the default, turns them all on. A
//! crate that uses a few names them: `default-features = false, features = ["coalesce"]`.
//!
//! On the server side, [`context`]'s `ContextLayer` puts the request being served (its
//! `ServedRequest`) in scope for its handler, so that [`session`] and [`forward`] find it. The
//! `context` module is always there, for `ServedRequest`; its feature brings the layer.
//!
//! # Per-request decisions
//!
//! What a layer decides for each request — the timeout's bound, whether a read may share a
//! call, which reads cancel each other, the retry policy, whether the session or forwarding
//! applies, which headers cross — it asks of a small trait of its module (`TimeoutFor`,
//! `CoalesceFor`, `CacheFor`, `CancelFor`, `RetryFor`, `SessionFor`, `ForwardFor`, `AllowFor`), as
//! tower-http's layers ask a `MakeRequestId` or a `Predicate`. A closure over the request
//! implements each, so a layer serves any `Service<http::Request<B>>` — a bare hyper-util client
//! included, as each module's docs show — with no courier definition at all.
//!
//! The default of each is [`FromMeta`]: the [`EndpointMeta`](courier_core::EndpointMeta) a
//! courier client puts in the request's extensions, and, for a request without one, the
//! request's method and the layer's own configuration.
//!
//! The order `Caller` assembles, outermost first:
//!
//! `CancelPrevious → Session → Forward → middleware (.use) → IdempotencyKey → Cache → Timeout → Coalesce → Shed → Retry → Timeout::per_attempt → transport`

#[macro_use]
mod macros;

mod body;
#[cfg(any(feature = "cache", feature = "coalesce"))]
mod key;
mod meta;

pub use crate::body::BufferedBody;
pub use crate::meta::FromMeta;

#[cfg(feature = "allow-headers")]
pub mod allow_headers;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "cache")]
pub mod cache;
#[cfg(feature = "cancel-previous")]
pub mod cancel_previous;
#[cfg(feature = "coalesce")]
pub mod coalesce;
pub mod context;
#[cfg(feature = "forward")]
pub mod forward;
#[cfg(feature = "metrics")]
pub mod metrics;
#[cfg(feature = "retry")]
pub mod retry;
#[cfg(feature = "session")]
pub mod session;
#[cfg(feature = "shed")]
pub mod shed;
#[cfg(feature = "timeout")]
pub mod timeout;
#[cfg(feature = "trace")]
pub mod trace;
