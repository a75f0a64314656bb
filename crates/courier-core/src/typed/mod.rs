//! The typed face: the shape of an API as Rust structs, with compile-time types on every call.
//!
//! Field names are the endpoint and group names; field types carry the types:
//! [`Http<R, V, K>`](Http) (response, variables, [`Query`] or [`Mutation`]),
//! [`Stream<R, V>`](Stream), [`Channel<R, V, S>`](Channel) and [`Group<T>`](Group). The derives
//! `courier::Group` and `courier::Api` write the registration into the runtime tree and the
//! typed views; they add nothing the runtime tree cannot do by hand.
//!
//! A view's methods take exactly the field's variables (none when they are `()`) and resolve to
//! its response type, so a wrong variable or response type does not compile. `.with(options)`
//! sets per-call options for every call below it, `.raw()` makes calls resolve to the whole
//! [`HttpResponse`](crate::HttpResponse).
//!
//! The views run on a caller that implements the traits of [`dispatch`]: courier's direct and
//! proxy clients do, and so can a caller of your own (a test double).
//!
//! Names that are the views' own methods are reserved: a group may not be named `raw` or `with`,
//! an endpoint not `options`, `raw` or `with`. The derive refuses them at compile time; the
//! runtime builder with `RESERVED_ENDPOINT_NAME`.
//!
//! # Endpoints as tower services
//!
//! A view's `.services()` gives the same endpoints as [`EndpointService`]s: each a
//! `tower::Service` of the endpoint's variables, answering what the view's method answers (the
//! body, the whole response after `.raw()`, a stream's subscription, a channel's connection),
//! owning its caller (cheap to clone, `'static`), over the direct caller and the proxy caller
//! alike. One endpoint can then take tower's and tower-http's layers of its own — a concurrency
//! limit, a load shed, a buffer shared by tasks — or be handed to code that takes any
//! `Service<UserId, Response = User>`. A runtime tree's endpoint is reached by dotted path with
//! [`EndpointService::at`] (`Client::service` over the direct client).
//!
//! The view's methods stay what they are, a call per endpoint taking its variables; the services
//! are a second view beside them (`UsersServices` for `Users`, one method per endpoint, no
//! argument), so that no endpoint needs a name of its own for its service. It is reached with
//! `.services()` after any `.with()` and `.raw()`, whose options and mode its services keep; a
//! group field may therefore not be named `services` (name it otherwise and keep the tree's name
//! with `#[courier(rename = "services")]`). Making a service finds the endpoint once: an endpoint
//! the caller cannot reach is an error then (`ENDPOINT_NOT_IN_ROUTES`), not at each call.
//!
//! The layers here guard this one endpoint, above the caller's own stack (the source's
//! middleware, coalescing, retry and timeout, which every endpoint shares): a call that a
//! concurrency limit admits still runs through all of them.
//!
//! ```
//! use courier::typed::{endpoint, Group, Http};
//! use courier::{ApiDef, Caller};
//! use serde::{Deserialize, Serialize};
//! use tower::load_shed::error::Overloaded;
//! use tower::{Service, ServiceBuilder, ServiceExt};
//!
//! #[derive(Debug, Deserialize)]
//! struct User { id: u64 }
//! #[derive(Serialize)]
//! struct UserId(u64);
//!
//! #[derive(courier::Group)]
//! struct Users { get: Http<User, UserId> }
//! #[derive(courier::Api)]
//! struct Example { users: Group<Users> }
//!
//! # async fn demo() -> Result<(), tower::BoxError> {
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let addr = listener.local_addr()?;
//! # let app = axum::Router::new().route(
//! #     "/users/{id}",
//! #     axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u64>| async move {
//! #         axum::Json(serde_json::json!({ "id": id }))
//! #     }),
//! # );
//! # tokio::spawn(async move { axum::serve(listener, app).await });
//! let users = Group::new(Users { get: endpoint().get("/:id") }).prefix("/users");
//! let api = ApiDef::builder()
//!     .base_url(format!("http://{addr}"))
//!     .build_typed(Example { users })?;
//! let caller = Caller::new(api)?;
//!
//! // One call of `users.get` in flight at a time; another is refused at once, not queued.
//! let mut get = ServiceBuilder::new()
//!     .load_shed()
//!     .concurrency_limit(1)
//!     .service(caller.users().services().get()?);
//!
//! let first = get.ready().await?.call(UserId(1));     // holds the one place until it ends…
//! let refused = get.ready().await?.call(UserId(2)).await.unwrap_err();
//! assert!(refused.is::<Overloaded>());                 // …so this one is shed
//! assert_eq!(first.await?.id, 1);
//! assert_eq!(get.ready().await?.call(UserId(3)).await?.id, 3);   // the place is free again
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

pub(crate) mod api;
mod channel;
pub mod dispatch;
mod group;
mod http;
mod service;
mod stream;
mod view;

pub use self::api::{ApiMember, ApiSpec};
pub use self::channel::{channel, Channel, ChannelHandlers, ChannelHead, ChannelPeer, NoSend};
pub use self::group::{Group, GroupMember, GroupSpec, Member};
pub use self::http::{endpoint, EndpointHead, Http, HttpKind, Mutation, Query};
pub use self::service::EndpointService;
pub use self::stream::{stream, Stream, StreamHead};
pub use self::view::{
    ChannelCall, Data, Endpoint, HttpCall, InferResponse, InferVariables, Mode, Raw, Scope,
    StreamCall,
};
