//! A [`TopicBus`](courier_live::TopicBus) on Redis pub/sub: the hub of an app that runs as
//! several instances, so that a message published on one reaches the subscribers of every one.
//!
//! [`RedisBus`] keeps this instance's subscribers in a [`LocalBus`](courier_live::LocalBus) and
//! bridges it to Redis: one Redis subscription per topic that has a local subscriber, taken with
//! the first and dropped with the last; each message published here is handed to the local
//! subscribers at once and published to Redis, in an envelope naming this instance, so that when
//! Redis hands it back this instance skips it (its subscribers get it once). The connection is
//! redis-rs's reconnecting `ConnectionManager` over RESP3, which restores the subscriptions
//! after Redis comes back.
//!
//! ```no_run
//! use courier::live::Hub;
//! use courier::live::redis::RedisBus;
//!
//! # async fn run() -> Result<(), courier::live::redis::RedisBusError> {
//! let bus = RedisBus::connect("redis://127.0.0.1:6379").await?;
//! let hub = Hub::new(bus);
//! // Hand `hub` to the proxy (`Proxy::hub`) and to the clients serving channels in process.
//! # let _ = hub; Ok(()) }
//! ```
//!
//! # What it promises
//!
//! - **At most once across instances.** A message reaches each other instance's subscribers
//!   once or not at all. It is lost for the other instances while Redis is unreachable, and when
//!   the publish queue is full (below); the local subscribers get it either way.
//! - **Order per publisher.** The messages one instance publishes reach every subscriber in the
//!   order it published them: one connection, and one task that publishes them in turn. Messages
//!   of different instances are not ordered with each other.
//! - **Its own messages once.** An instance's subscribers get its own messages from it directly,
//!   never again from Redis.
//! - **A gap is told.** When this instance's connection to Redis drops, every topic it was
//!   subscribed to may miss messages: once Redis has it subscribed again, the topic's local
//!   subscribers are handed [`Outbound::Close`](courier_live::Outbound::Close) with code 1012
//!   ([`MISSED`](courier_live::MISSED)): a channel's socket closes with 1012 and its client
//!   reconnects (`on_join` runs again and can bring it up to date); a followed stream's response
//!   is cut and its client reconnects. The same when a message this instance meant for the
//!   others could not go out (Redis refused it, or the queue was full): the others' subscribers
//!   of that topic are told as soon as publishing works again.
//!
//! It does not promise delivery to an instance whose connection is down (it is told, above),
//! exactly-once delivery, a history to replay from (events carry no ids to resume by), an
//! order between publishers, or persistence: Redis pub/sub keeps nothing.
//!
//! # Bounds
//!
//! - The **publish queue** holds up to [`RedisBusBuilder::queue`] messages (1,024 by default)
//!   waiting for Redis. When it is full, a new message goes to the local subscribers only; it is
//!   counted ([`RedisStats::dropped`]), logged once per topic, and the topic is marked, so the
//!   other instances' subscribers are told of the gap before the next message that goes out.
//! - What Redis **hands this instance** waits in a queue of [`RedisBusBuilder::queue`] messages
//!   too; past it a message is dropped and the topic's local subscribers are told of the gap.
//! - Each **subscriber** has its own buffer (the hub's): past it, it is closed with 1013.
//!
//! # On the wire
//!
//! Redis channel: the prefix (`courier:` by default, [`RedisBusBuilder::prefix`]) then the
//! topic. Payload: JSON, either a message or a gap:
//!
//! ```json
//! {"v":1,"from":"5f0c…","message":{"type":"message","data":{"text":"hi"}}}
//! {"v":1,"from":"5f0c…","gap":true}
//! ```
//!
//! A payload that is not one of these (another program publishing on the prefix) is logged and
//! ignored.

mod bus;
mod envelope;
mod shared;
mod worker;

pub use bus::{RedisBus, RedisBusBuilder, RedisBusError, RedisStats};
