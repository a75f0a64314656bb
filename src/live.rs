//! Streams and channels: served by this process, run by its hub, and read by its clients.
//!
//! A stream (server-sent events) or a channel (a WebSocket) is declared like any endpoint, with
//! [`StreamEndpoint`](crate::StreamEndpoint) or [`ChannelEndpoint`](crate::ChannelEndpoint).
//! Either is somewhere else (`.get(path)`, `.connect(path)`, `.via()`) or served right here
//! (`.implement(handler)`); a caller subscribes to both the same way, and the proxy route serves
//! both to browsers.
//!
//! | names | for |
//! |---|---|
//! | [`StreamHandler`], [`StreamRequest`], [`Event`], [`EventStream`], [`MissedEvents`] | a stream served here: the handler `.implement()` takes, what it is called with, the events it yields |
//! | [`ChannelHandler`], [`ChannelHandlers`], [`ChannelRequest`], [`MessageStream`], [`Peer`], [`PeerHandler`] | a channel served here: a push-only stream of messages, or handlers for joins, messages and leaves |
//! | [`Hub`], [`TopicBus`], [`LocalBus`], [`JoinOptions`], [`Member`], [`Outbound`], … | the hub that runs the channels served here for their subscribers, over a bus that carries each topic's messages (the `client` feature) |
//! | [`sse`] ([`Events`](sse::Events)), [`ws`] ([`Connection`](ws::Connection), [`Sender`](ws::Sender)) | the clients: a stream subscription's events, a channel connection's messages (the `client` feature) |
//! | `redis` (`RedisBus`) | a bus on Redis pub/sub, for a hub shared by several instances (the `redis` feature) |
//!
//! [`Event`] is one type on both sides: what a handler yields and what a subscription hands
//! over.
//!
//! # Serving a stream
//!
//! ```
//! use courier::live::{Event, StreamHandler};
//! use courier::{ApiDef, Client, GroupDef, StreamEndpoint};
//! use futures_util::{stream, StreamExt};
//! use serde_json::{json, Value};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ticks = StreamHandler::new(|_request| {
//!     stream::iter((1..=3).map(|n| Ok(Event::new(json!({ "n": n })).id(n.to_string()))))
//! });
//! let api = ApiDef::builder()
//!     .group("live", GroupDef::new().endpoint("ticks", StreamEndpoint::implement(ticks)))
//!     .build()?;
//! // Subscribed in process: no connection, the handler's events decoded as a remote stream's.
//! let events = Client::new(api)?.stream("live.ticks", Value::Null, None).await?;
//! let data: Vec<Value> = events.map(|event| event.unwrap().data).collect().await;
//! assert_eq!(data, [json!({ "n": 1 }), json!({ "n": 2 }), json!({ "n": 3 })]);
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
//!
//! # The hub
//!
//! The definitions hold a channel's handlers and do no I/O; the [`Hub`] is what runs them,
//! spawning a task per topic and per subscriber. It is transport-agnostic: the proxy route puts
//! each member on a WebSocket, a caller joins in process; both go through the hub they are
//! handed (`Proxy::hub`, `ClientBuilder::hub`), so giving both the same hub makes them share
//! topics.
//!
//! ```
//! use courier::live::{ChannelHandler, Hub, JoinOptions, Outbound};
//! use courier::ChannelEndpoint;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ticker = ChannelEndpoint::implement(ChannelHandler::push(|request| {
//!     let room = request.topic.clone();
//!     futures_util::stream::iter((1..=2).map(move |n| Ok::<_, courier::BoxError>(json!({ "room": room, "n": n }))))
//! }));
//! let hub = Hub::local();
//! let mut member = hub.join("rooms.ticker", &ticker, json!("lobby"), JoinOptions::default()).await.unwrap();
//! assert_eq!(member.recv().await, Some(Outbound::message(json!({ "room": "\"lobby\"", "n": 1 }))));
//! assert_eq!(member.recv().await, Some(Outbound::message(json!({ "room": "\"lobby\"", "n": 2 }))));
//! assert!(matches!(member.recv().await, Some(Outbound::Close { code: 1000, .. })));
//! assert_eq!(member.recv().await, None);
//! # });
//! ```

pub use courier_core::{
    ChannelHandler, ChannelHandlers, ChannelRequest, Event, EventStream, MessageStream,
    MissedEvents, Peer, PeerHandler, StreamHandler, StreamRequest,
};

#[cfg(feature = "client")]
pub use courier_live::{
    fresh_epoch, BadPosition, BusStream, History, Hub, JoinError, JoinOptions, Lagged, LocalBus,
    Member, NotAccepted, Outbound, Position, TopicBus, GAP_EVENT, MISSED, MISSED_REASON,
};

#[cfg(feature = "client")]
#[doc(inline)]
pub use courier_client::{sse, ws};

#[cfg(feature = "redis")]
#[doc(inline)]
pub use courier_redis as redis;
