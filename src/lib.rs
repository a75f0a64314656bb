//! courier: declare remote HTTP APIs as typed data and call them, on tower.
//!
//! An API is declared once — a source with a base URL and options, groups of endpoints nested to
//! any depth — either as a runtime tree ([`ApiDef`], [`GroupDef`], [`HttpEndpoint`], …) or as
//! Rust structs with `#[derive(Group)]` and `#[derive(Api)]`, which write the same tree and add
//! typed views whose calls are checked at compile time.
//!
//! ```
//! use courier::typed::{endpoint, Group, Http, Mutation};
//! use courier::{Api, ApiDef};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize)]
//! pub struct User { pub id: u64, pub name: String }
//! #[derive(Serialize)]
//! pub struct UserId(pub u64);
//! #[derive(Serialize)]
//! pub struct NewUser { pub name: String }
//!
//! #[derive(courier::Group)]
//! pub struct Users {
//!     pub get: Http<User, UserId>,
//!     pub create: Http<User, NewUser, Mutation>,
//! }
//!
//! #[derive(courier::Api)]
//! pub struct Example {
//!     pub users: Group<Users>,
//! }
//!
//! pub fn api() -> Result<Api<Example>, courier::ConfigurationError> {
//!     let users = Group::new(Users {
//!         get: endpoint().get("/:id"),
//!         create: endpoint().post("").expose(),
//!     })
//!     .prefix("/users");
//!     ApiDef::builder()
//!         .base_url("http://127.0.0.1:9000")
//!         .build_typed(Example { users })
//! }
//!
//! let api = api()?;
//! assert_eq!(api.endpoint("users.get").unwrap().template().unwrap().as_str(), "/users/:id");
//! # Ok::<(), courier::ConfigurationError>(())
//! ```
//!
//! # What is where
//!
//! | names | for |
//! |---|---|
//! | [`ApiDef`], [`ApiBuilder`], [`GroupDef`], [`HttpEndpoint`], [`StreamEndpoint`], [`ChannelEndpoint`], [`Kind`], [`SourceOptions`], [`ResponseParser`], [`PathOptions`], [`ResolvedPathOptions`], [`Via`], [`WireCall`], [`Topic`], [`EndpointDef`], [`EndpointOptions`], [`HttpAddress`], [`StreamSource`], [`ChannelSource`], [`ResolvedEndpoint`], [`ResolvedGroup`] | the runtime tree: declaring a source, reading it back |
//! | [`CacheOptions`], [`RetryPolicy`], [`RetrySetting`], [`Backoff`], [`SessionOptions`], [`SessionMode`], [`Csrf`], [`CsrfKey`], [`ForwardOptions`], [`HeaderToggle`], [`ResponseType`], [`WsOptions`], [`WsAuth`], [`Heartbeat`], [`MessageQueue`] | the options of sources, groups and endpoints |
//! | [`Event`], [`EventStream`], [`MessageStream`], [`MissedEvents`], [`StreamHandler`], [`ChannelHandler`], [`ChannelHandlers`], [`Peer`], [`PeerHandler`], [`StreamRequest`], [`ChannelRequest`] | streams and channels served here (`.implement()`) |
//! | [`Caller`], [`Client`], [`ProxyCaller`], [`CallOptions`], [`HttpResponse`], [`Progress`], [`UploadProgress`], [`CancellationToken`] | calling |
//! | [`typed::EndpointService`] (a view's `.services()`, `Client::service`) | one endpoint as a `tower::Service` of its variables, for tower's layers around it |
//! | [`Dispatch`], [`StreamDispatch`], [`ChannelDispatch`], [`HttpCallRequest`], [`IntoVariables`] | what typed views run on: implemented by `Client`, for a caller of your own |
//! | [`Error`], [`HttpError`], [`Refused`], [`NetworkErrorKind`], [`ConfigurationError`], [`ErrorCode`], [`classify`] | what fails, and why |
//! | [`FromResponse`], [`ResponseBody`], [`BodyStream`], [`DecodeError`] | reading responses into your types |
//! | [`Transport`], [`TransportCache`], [`TransportError`], [`TransportOptions`], [`Dispatcher`], [`ClientIdentity`], [`Fetch`], [`Middleware`], [`HttpService`], [`BodyService`], [`Body`], [`BoxError`], [`EndpointMeta`] | the transport and the stack a call goes down |
//! | [`typed`], `#[derive(Group)]`, `#[derive(Api)]`, `#[derive(TypeScript)]`, [`Api`](struct@Api) | the typed face |
//! | [`layers`], [`server`], [`proxy`], [`sse`], [`ws`] | the layers, the proxy route, the proxy caller, streams, channels |
//! | [`config`], [`context`], [`encode`], [`headers`], [`live`], [`routes`], [`suggest`] | the config file, the served request, variable encoding, headers that never cross, the hub, the routes record, "did you mean" |
//!
//! # Features
//!
//! Everything is on by default (`full`). With `default-features = false`, the definitions, the
//! typed face, the config file and the routes record are always there; each feature adds one
//! part:
//!
//! | feature | adds |
//! |---|---|
//! | `full` | every feature below but `redis` (the default) |
//! | `client` | the callers: [`Caller`], [`Client`], [`ProxyCaller`], the transport, [`Error`], the [`sse`] and [`ws`] clients, the [`live`] hub of channels served in process; the layers of a call's stack come with it (`cancel-previous`, `session`, `forward`, `cache`, `coalesce`, `retry`, `timeout`) |
//! | `server` | [`server`]: the proxy route (`Proxy`), with `client`, `axum`, `allow-headers` and `session` |
//! | `axum` | [`Error`] as an axum response (`IntoResponse`), so that a handler can `?` a call; with `client` |
//! | `allow-headers` | [`layers::allow_headers`]: `AllowHeadersLayer` |
//! | `auth` | [`layers::auth`]: `AuthLayer` |
//! | `cache` | [`layers::cache`]: `CacheLayer` |
//! | `cancel-previous` | [`layers::cancel_previous`]: `CancelPreviousLayer` |
//! | `coalesce` | [`layers::coalesce`]: `CoalesceLayer` |
//! | `context` | [`layers::context`]: `ContextLayer`, for the served request in axum handlers |
//! | `forward` | [`layers::forward`]: `ForwardLayer` |
//! | `retry` | [`layers::retry`]: `RetryLayer` |
//! | `session` | [`layers::session`]: `SessionLayer`; [`session`]: `SessionCookies`, to sign a user in |
//! | `timeout` | [`layers::timeout`]: `TimeoutLayer` |
//! | `trace` | [`layers::trace`]: tower-http's `TraceLayer` set up for courier's calls, `log_middleware` |
//! | `redis` | `redis`: `RedisBus`, a topic bus on Redis pub/sub for a hub shared by several instances (redis-rs) |
//! | `typescript` | [`routes::types`]: the endpoints' TypeScript types in the routes module (ts-rs) |
//!
//! A layer needs no client: `default-features = false, features = ["coalesce"]` gives the
//! definitions and `CoalesceLayer`, to stack on any `tower::Service`.

pub use courier_core::{
    ApiBuilder, ApiDef, Backoff, Body, BodyService, BodyStream, BoxError, CacheOptions,
    CallOptions, CancellationToken, ChannelEndpoint, ChannelHandler, ChannelHandlers,
    ChannelRequest, ClientIdentity, ConfigurationError, Csrf, CsrfKey, DecodeError, Dispatch,
    Dispatcher, EndpointDef, EndpointMeta, EndpointOptions, ErrorCode, Event, EventStream, Fetch,
    ForwardOptions, FromResponse, GroupDef, HeaderToggle, Heartbeat, HttpEndpoint, HttpResponse,
    HttpService, Kind, LayerSettings, MessageQueue, MessageStream, Middleware, MissedEvents,
    PathOptions, Peer, PeerHandler, Progress, ResolvedEndpoint, ResolvedGroup, ResolvedPathOptions,
    ResponseBody, ResponseParser, ResponseType, RetryPolicy, RetrySetting, SessionMode,
    SessionOptions, SourceOptions, StreamEndpoint, StreamHandler, StreamRequest, TransportOptions,
    UploadProgress, WsAuth, WsOptions,
};
pub use courier_core::{
    ChannelDispatch, ChannelSource, HttpAddress, HttpCallRequest, IntoVariables, StreamDispatch,
    StreamSource, Topic, Via, WireCall,
};

pub use courier_core::{config, context, encode, headers, suggest, typed};

#[cfg(feature = "client")]
#[doc(inline)]
pub use courier_live as live;

#[cfg(feature = "redis")]
#[doc(inline)]
pub use courier_redis as redis;

/// What courier's own crates share and a user does not name: request building
/// (`build_request`, `call_transport`, `resolve_path_options`), the reserved names, the boxed
/// futures. Not an API; it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use courier_core::*;
}

pub mod routes;

#[cfg(feature = "client")]
pub use courier_client::{
    classify, Call, Caller, CallerBuilder, Client, ClientBuilder, Error, HttpError,
    NetworkErrorKind, Refused, Transport, TransportCache, TransportError,
};

// The modules below are inlined so that `cargo doc -p courier` has their pages: a user of
// `courier` reads `courier::server::Proxy`, not a link to another crate's docs.

#[doc(inline)]
pub use courier_layers as layers;

#[cfg(feature = "client")]
#[doc(inline)]
pub use courier_client::{sse, ws};

#[cfg(feature = "client")]
#[doc(inline)]
pub use courier_client::proxy;
#[cfg(feature = "client")]
pub use courier_client::proxy::ProxyCaller;

#[cfg(feature = "server")]
#[doc(inline)]
pub use courier_server as server;

/// Signing a user in and out: the session cookies of a source's [`SessionOptions`] written on
/// the app's own response ([`SessionCookies`](session::SessionCookies)), with a fresh CSRF token
/// signed for that session. The layer that carries the session on calls is
/// [`layers::session::SessionLayer`]; `docs/SESSION.md` tells the whole story.
#[cfg(feature = "session")]
pub mod session {
    pub use courier_layers::session::issue::{IssueRefused, IssuedSession, SessionCookies};
}

/// The typed API: `Api<T>` is a built source of shape `T`; `#[derive(Api)]` implements `T`.
pub use courier_core::typed::Api;
/// Derives [`typed::ApiSpec`] for a struct of groups: registration and the root client. The
/// guide: [`_derive`].
pub use courier_macros::Api;
/// Derives [`typed::GroupSpec`] for a struct of endpoints and groups: registration and the view.
/// The guide: [`_derive`].
pub use courier_macros::Group;

#[doc = include_str!("../docs/DERIVE.md")]
pub mod _derive {}
/// The guide, from nothing to a backend-for-frontend; here so that its examples are doc tests.
#[doc(hidden)]
#[doc = include_str!("../docs/GUIDE.md")]
pub mod _guide {}
/// Derives [`routes::types::TypeScript`] for a `Group` or `Api` struct: its endpoints' TypeScript types
/// for the browser's routes module ([`routes::types`]; the `typescript` feature).
pub use courier_macros::TypeScript;
