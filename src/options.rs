//! The option records: what the builders' setters take, at every level a setting exists.
//!
//! A source, a group, an endpoint and a call each have setters on their builder
//! ([`ApiBuilder`](crate::ApiBuilder), [`GroupDef`](crate::GroupDef), the endpoints,
//! [`CallOptions`](crate::CallOptions)); when a setting is more than one value, its setter takes
//! one of the records here. A record is plain data, built with its own setters and read back
//! with its getters; it is merged once, the nearest level winning.
//!
//! | record | set with | for |
//! |---|---|---|
//! | [`CacheOptions`] | `HttpEndpoint::cache` | a read's answer kept and answered from memory |
//! | [`RetryPolicy`], [`RetrySetting`], [`Backoff`] | `.retry(...)` at each level, `ClientBuilder::retry` | when and how a call is retried |
//! | [`LayerSettings`] | read from each level | the timeouts, coalescing and retry every level can set, as one value |
//! | [`SessionOptions`], [`Csrf`], [`CsrfKey`], [`SessionMode`] | `ApiBuilder::session`, an endpoint's `.session(...)` | the user's session on calls made while serving them |
//! | [`ForwardOptions`], [`HeaderToggle`] | `ApiBuilder::forward` | what a call carries from the request being served |
//! | [`ResponseType`] | `ApiBuilder::response_type`, `HttpEndpoint::response_type` | how a response body is read |
//! | [`WsOptions`], [`WsAuth`], [`Heartbeat`], [`MessageQueue`] | `ClientBuilder::ws` | the sockets a caller opens for its channels |
//! | [`UploadProgress`], [`Progress`] | `CallOptions::upload_progress` | an upload's progress |
//! | [`CancellationToken`] | `ApiBuilder::signal`, `CallOptions::signal` | cancelling a source's or a call's work |
//!
//! The options of the tree itself — a source's [`SourceOptions`](crate::tree::SourceOptions),
//! [`PathOptions`](crate::tree::PathOptions), an endpoint's
//! [`EndpointOptions`](crate::tree::EndpointOptions) — are in [`tree`](crate::tree); the
//! transport's ([`TransportOptions`](crate::transport::TransportOptions)) in
//! [`transport`](crate::transport).
//!
//! ```
//! use courier::options::{CacheOptions, RetryPolicy};
//! use courier::{ApiDef, GroupDef, HttpEndpoint};
//!
//! let get = HttpEndpoint::get("/:id")
//!     .cache(CacheOptions::new().revalidate(60))
//!     .retry(RetryPolicy::new().max_attempts(5));
//! let api = ApiDef::builder()
//!     .base_url("https://api.example.com")
//!     .group("users", GroupDef::new().prefix("/users").endpoint("get", get))
//!     .build()?;
//! assert!(api.endpoint("users.get").unwrap().meta().get_cache().is_some());
//! # Ok::<(), courier::ConfigurationError>(())
//! ```

pub use courier_core::{
    Backoff, CacheOptions, CancellationToken, Csrf, CsrfKey, ForwardOptions, HeaderToggle,
    Heartbeat, LayerSettings, MessageQueue, Progress, ResponseType, RetryPolicy, RetrySetting,
    SessionMode, SessionOptions, UploadProgress, WsAuth, WsOptions,
};
