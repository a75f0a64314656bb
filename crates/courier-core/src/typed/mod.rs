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
//! Names that are the views' own methods are reserved: a group may not be named `raw` or `with`,
//! an endpoint not `options`, `raw` or `with`. The derive refuses them at compile time; the
//! runtime builder with `RESERVED_ENDPOINT_NAME`.

mod api;
mod channel;
mod common;
mod describe;
mod group;
mod http;
mod stream;
mod view;

pub use self::api::{Api, ApiMember, ApiSpec};
pub use self::channel::{channel, Channel, ChannelHandlers, ChannelHead, ChannelPeer, NoSend};
pub use self::describe::{Describe, TypeScript};
pub use self::group::{Group, GroupMember, GroupSpec, Member};
pub use self::http::{endpoint, EndpointHead, Http, HttpKind, Mutation, Query};
pub use self::stream::{stream, Stream, StreamHead};
pub use self::view::{
    ChannelCall, Data, Endpoint, HttpCall, InferResponse, InferVariables, Mode, Raw, Scope,
    StreamCall,
};
