//! courier's definition model: sources, groups and endpoints as data, validated when built, the
//! pure functions that encode a call's variables into a request, and the proxy's wire.
//!
//! This crate spawns no task and opens no connection; its only I/O is reading a config file and
//! writing a routes module, when asked. `courier-client` calls
//! what it defines; `courier-live` runs its implemented channels; `courier-server` serves it.
//! Most users depend on the facade crate `courier`, which re-exports what a user names here
//! under the modules a user looks in (`courier::options`, `courier::tree`, …); the rest is
//! shared by courier's own crates.
//!
//! # The runtime tree
//!
//! An [`ApiDef`] holds a source's options and its [`GroupDef`]s; a group holds endpoints and
//! nested groups to any depth; an endpoint is one of three heads: [`HttpEndpoint`],
//! [`StreamEndpoint`], [`ChannelEndpoint`]. [`ApiBuilder::build`] validates the whole tree and
//! resolves each endpoint's address, path options, exposure and transport.
//!
//! ```
//! use courier::options::CacheOptions;
//! use courier::{ApiDef, GroupDef, HttpEndpoint, StreamEndpoint};
//!
//! let api = ApiDef::builder()
//!     .base_url("https://api.example.com")
//!     .header("x-api-key", "secret")
//!     .cancel_previous(["users.search"])
//!     .group(
//!         "users",
//!         GroupDef::new()
//!             .prefix("/users")
//!             .expose(true)
//!             .endpoint("get", HttpEndpoint::get("/:id").cache(CacheOptions::new().revalidate(60)))
//!             .endpoint("search", HttpEndpoint::get("/search"))
//!             .endpoint("create", HttpEndpoint::post(""))
//!             .endpoint("events", StreamEndpoint::get("/events")),
//!     )
//!     .build()?;
//! assert!(api.endpoint("users.get").unwrap().is_exposed());
//! # Ok::<(), courier::ConfigurationError>(())
//! ```

mod body;
mod call;
pub mod config;
pub mod context;
pub mod encode;
mod error;
pub mod headers;
mod options;
mod request;
mod response;
pub mod routes;
mod settings;
pub mod suggest;
mod transport;
mod tree;
pub mod typed;
mod validate;
pub mod wire;

pub use crate::body::{Body, BoxError};
pub use crate::call::{
    call_transport, CallOptions, ChannelDispatch, Dispatch, HttpCallRequest, HttpResponse,
    IntoVariables, Progress, StreamDispatch, UploadProgress,
};
pub use crate::error::{ConfigurationError, ErrorCode};
pub use crate::options::{
    Backoff, CacheOptions, Csrf, CsrfKey, ForwardOptions, HeaderToggle, Heartbeat, MessageQueue,
    ResponseType, RetryPolicy, SessionMode, SessionOptions, WsAuth, WsOptions,
};
pub use crate::request::{build_request, RequestError};
pub use crate::response::{BodyStream, DecodeError, FromResponse, ResponseBody};
pub use crate::settings::{LayerSettings, RetrySetting};
pub use crate::transport::{
    BodyService, ClientIdentity, Dispatcher, Fetch, HttpFuture, HttpService, Middleware,
    TransportOptions,
};
pub use crate::tree::api::{ApiBuilder, ApiDef};
pub use crate::tree::endpoint::{
    ChannelEndpoint, ChannelHandler, ChannelHandlers, ChannelRequest, ChannelSource, EndpointDef,
    EndpointOptions, Event, EventStream, HttpAddress, HttpEndpoint, MessageStream, MissedEvents,
    Peer, PeerHandler, StreamEndpoint, StreamHandler, StreamRequest, StreamSource, Topic, Via,
    WireCall,
};
pub use crate::tree::group::GroupDef;
pub use crate::tree::meta::{Attempts, EndpointMeta, Kind};
pub use crate::tree::path_options::{
    resolve_path_options, BoxFuture, PathOptionCookies, PathOptions, ResolvedPathOptions,
};
pub use crate::tree::resolve::{ResolvedEndpoint, ResolvedGroup};
pub use crate::tree::source::{ResponseParser, SourceOptions};
pub use crate::typed::api::Api;
pub use crate::validate::{RESERVED_ENDPOINT_NAMES, RESERVED_GROUP_NAMES};
/// The cancellation signal of sources and calls, from tokio-util.
pub use tokio_util::sync::CancellationToken;

/// The header a write's idempotency key travels in, when its endpoint sets
/// [`idempotency_key`](LayerSettings::get_idempotency_key): the IETF httpapi draft's name.
pub const IDEMPOTENCY_KEY: http::HeaderName = http::HeaderName::from_static("idempotency-key");
