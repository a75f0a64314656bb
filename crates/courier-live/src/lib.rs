//! Serving channels: the [`TopicBus`] that carries a topic's messages and the [`Hub`] that runs
//! implemented channels for their subscribers. The definitions (`courier-core`) hold the
//! channels' handlers and do no I/O; the hub is what runs them, spawning a task per topic and
//! per subscriber.
//!
//! Transport-agnostic: `courier-server` puts each member on a WebSocket, a `Caller` joins in
//! process; both go through the hub they are handed (`Proxy::hub`, `ClientBuilder::hub`), so
//! giving both the same hub makes them share topics.
//!
//! ```
//! use courier::live::{ChannelHandler, Hub, JoinOptions, Outbound};
//! use courier::ChannelEndpoint;
//! use serde_json::{json, Value};
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

mod bus;
mod hub;
#[cfg(test)]
mod tests;

pub use self::bus::{
    fresh_epoch, BadPosition, BusStream, History, Lagged, LocalBus, Outbound, Position, TopicBus,
    MISSED, MISSED_REASON,
};
pub use self::hub::{Hub, JoinError, JoinOptions, Member, NotAccepted, GAP_EVENT};
