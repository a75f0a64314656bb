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
//!         create: endpoint().post("").expose(true),
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
//! The root holds what a first program names: the tree's builders, the derives, the callers,
//! a call's options and the errors it meets. Everything else sits in the module a user looks in
//! for it, one module per thing a user does — set an option, read a built tree, serve or read a
//! stream, swap the transport, build a caller, read an error's details, read a response — and
//! each name at one path. It is how axum keeps `Router` at its root and its server-sent events
//! in `response::sse`, and reqwest keeps `Client` at its root and `Part` in `multipart`: the
//! stream and channel clients are likewise [`live::sse`] and [`live::ws`], next to what serves
//! streams and channels.
//!
//! | where | names | for |
//! |---|---|---|
//! | the root | [`ApiDef`], [`ApiBuilder`], [`GroupDef`], [`HttpEndpoint`], [`StreamEndpoint`], [`ChannelEndpoint`] | declaring an API as a runtime tree |
//! | the root | [`Api`](struct@Api), `#[derive(Api)]`, `#[derive(Group)]` (with [the derives' guide](derive@Group)), `#[derive(TypeScript)]` | declaring it as Rust structs |
//! | the root | [`Caller`], [`Client`], [`ProxyCaller`], [`CallOptions`] | calling it: typed, by dotted path, through an app's proxy route; one call's options |
//! | the root | [`Error`], [`ConfigurationError`], [`BoxError`] | what fails: a call, a definition; any error, boxed |
//! | [`typed`] | `Http`, `Stream`, `Channel`, `Group`, `endpoint()`, the views, [`EndpointService`](typed::EndpointService) | the typed face: field types, views, endpoints as `tower::Service`s |
//! | [`typed::dispatch`] | `Dispatch`, `StreamDispatch`, `ChannelDispatch`, `HttpCallRequest`, `IntoVariables` | what typed views run on, for a caller of your own (a test double) |
//! | [`options`] | `CacheOptions`, `RetryPolicy`, `RetrySetting`, `Backoff`, `SessionOptions`, `SessionMode`, `Csrf`, `CsrfKey`, `ForwardOptions`, `HeaderToggle`, `ResponseType`, `WsOptions`, `WsAuth`, `Heartbeat`, `MessageQueue`, `LayerSettings`, `UploadProgress`, `Progress`, `CancellationToken` | the option records the builders' setters take |
//! | [`tree`] | `EndpointDef`, `EndpointOptions`, `ResolvedEndpoint`, `ResolvedGroup`, `SourceOptions`, `HttpAddress`, `Via`, `WireCall`, `StreamSource`, `ChannelSource`, `Topic`, `PathOptions`, `ResolvedPathOptions`, `ResponseParser`, `EndpointMeta`, `Attempts`, `Kind` | the tree's parts: an endpoint's address and sources, a built tree read back, the facts layers read |
//! | [`live`] | `StreamHandler`, `StreamRequest`, `Event`, `EventStream`, `MissedEvents`, `ChannelHandler`, `ChannelHandlers`, `ChannelRequest`, `MessageStream`, `Peer`, `PeerHandler`; `Hub`, `TopicBus`, `LocalBus`, …; [`live::sse`] (`Events`), [`live::ws`] (`Connection`, `Sender`) | streams and channels: served here (`.implement()`), the hub that runs them, and the clients that read them |
//! | [`transport`] | `Transport`, `TransportCache`, `TransportError`, `TransportOptions`, `Dispatcher`, `ClientIdentity`, `Fetch`, `Middleware`, `HttpService`, `HttpFuture`, `BodyService`, `Body` | the transport and the stack a call goes down |
//! | [`client`] | `ClientBuilder`, `CallerBuilder`, `Call`, `ProxyClient`, `ProxyCallerBuilder`, `Credentials`, `Success`, `MAX_GET_ADDRESS` | building the callers, and the clients under them |
//! | [`error`] | `HttpError`, `Refused`, `Close`, `NetworkErrorKind`, `classify`, `ErrorCode` | an error's details: what [`Error`]'s and [`ConfigurationError`]'s accessors return |
//! | [`response`] | `HttpResponse`, `FromResponse`, `ResponseBody`, `BodyStream`, `DecodeError` | reading responses into your types |
//! | [`encode`] | `Form`, `FilePart`, `Part`, `Variables`, `PathTemplate`, … | variables: files to upload, and how variables become a request |
//! | [`layers`] | one module per layer; [`layers::context`] (`ServedRequest`, `ContextLayer`), [`layers::session`] (`SessionLayer`, `SessionCookies` to sign a user in) | the layers, each usable alone on any `tower::Service` |
//! | [`mock`] | `Mock`, `Answer`, `When`, `Recorded` | testing an app that calls the API: its upstream mocked, typed |
//! | [`server`] | `Proxy`, `ProxyError`, `RateLimit`, `Shutdown` | the proxy route a browser calls an API through |
//! | [`config`], [`routes`] | `Config`, `ProxyPaths`; `Routes`, `Command`, `routes::types` | the config file; the routes record and the browser's routes module |
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
//! | `client` | the callers: [`Caller`], [`Client`], [`ProxyCaller`], [`client`], the transport ([`transport::Transport`]), [`Error`] and its details in [`error`], the stream and channel clients ([`live::sse`], [`live::ws`]) and the hub that runs channels served in process ([`live::Hub`]); the layers of a call's stack come with it (`cancel-previous`, `session`, `forward`, `cache`, `coalesce`, `retry`, `timeout`) |
//! | `server` | [`server`]: the proxy route (`Proxy`), with `client`, `axum`, `allow-headers` and `session` |
//! | `axum` | [`Error`] as an axum response (`IntoResponse`), so that a handler can `?` a call; with `client` |
//! | `allow-headers` | [`layers::allow_headers`]: `AllowHeadersLayer` |
//! | `auth` | [`layers::auth`]: `AuthLayer` |
//! | `cache` | [`layers::cache`]: `CacheLayer` |
//! | `cancel-previous` | [`layers::cancel_previous`]: `CancelPreviousLayer` |
//! | `coalesce` | [`layers::coalesce`]: `CoalesceLayer` |
//! | `context` | [`layers::context`]: `ContextLayer`, for the served request in axum handlers (`ServedRequest` is always there) |
//! | `forward` | [`layers::forward`]: `ForwardLayer` |
//! | `metrics` | [`layers::metrics`]: `MetricsLayer`, each call's duration through the `metrics` facade |
//! | `mock` | [`mock`]: `Mock`, an API's upstream mocked for the app's tests, behind a `Caller`, a `ProxyCaller` or a `Proxy`; with `client` |
//! | `retry` | [`layers::retry`]: `RetryLayer` |
//! | `session` | [`layers::session`]: `SessionLayer`, and `SessionCookies` to sign a user in |
//! | `shed` | [`layers::shed`]: `ShedLayer`, a bound on the calls in flight |
//! | `timeout` | [`layers::timeout`]: `TimeoutLayer` |
//! | `trace` | [`layers::trace`]: tower-http's `TraceLayer` set up for courier's calls, `log_middleware` |
//! | `redis` | `live::redis`: `RedisBus`, a topic bus on Redis pub/sub for a hub shared by several instances (redis-rs) |
//! | `typescript` | [`routes::types`]: the endpoints' TypeScript types in the routes module (ts-rs) |
//!
//! A layer needs no client: `default-features = false, features = ["coalesce"]` gives the
//! definitions and `CoalesceLayer`, to stack on any `tower::Service`.

pub use courier_core::{
    Api, ApiBuilder, ApiDef, BoxError, CallOptions, ChannelEndpoint, ConfigurationError, GroupDef,
    HttpEndpoint, StreamEndpoint,
};

#[cfg(feature = "client")]
pub use courier_client::{Caller, Client, Error, ProxyCaller};

/// Derives [`typed::ApiSpec`] for a struct of groups: registration and the root client. The
/// derives' guide is on [`Group`](derive@Group).
pub use courier_macros::Api;
/// Derives [`typed::GroupSpec`] for a struct of endpoints and groups: registration and the view.
/// Below, the guide to the derives (`docs/DERIVE.md`).
///
#[doc = include_str!("../docs/DERIVE.md")]
///
/// # `#[derive(Group)]` itself
///
pub use courier_macros::Group;
/// Derives [`routes::types::TypeScript`] for a `Group` or `Api` struct: its endpoints' TypeScript
/// types for the browser's routes module ([`routes::types`]; the `typescript` feature). The
/// derives' guide is on [`Group`](derive@Group).
pub use courier_macros::TypeScript;

#[cfg(feature = "client")]
pub mod client;
pub mod error;
pub mod live;
#[cfg(feature = "mock")]
#[doc(inline)]
pub use courier_client::mock;
pub mod options;
pub mod response;
pub mod routes;
pub mod transport;
pub mod tree;

// The modules below are inlined so that `cargo doc -p courier` has their pages: a user of
// `courier` reads `courier::server::Proxy`, not a link to another crate's docs.

pub use courier_core::{config, encode, typed};

#[doc(inline)]
pub use courier_layers as layers;

#[cfg(feature = "server")]
#[doc(inline)]
pub use courier_server as server;

/// What courier's own crates share and a user does not name: request building
/// (`build_request`, `call_transport`, `resolve_path_options`), the reserved names, the boxed
/// futures, the headers that never cross a proxy, "did you mean". Not an API; it may change in
/// any release.
#[doc(hidden)]
pub mod __private {
    pub use courier_core::*;
}

/// The guide, from nothing to a backend-for-frontend; here so that its examples are doc tests.
#[doc(hidden)]
#[doc = include_str!("../docs/GUIDE.md")]
pub mod _guide {}
