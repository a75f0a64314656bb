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
//! With a [`History`](courier_live::History) ([`RedisBusBuilder::history`]), the bus also keeps
//! the last messages of each topic in Redis (a stream per topic), each with its
//! [`Position`](courier_live::Position), so that a member that comes back — to this instance or
//! another — with the position of its last message recovers the ones it missed; then every
//! message reaches every instance, the one that published it included, from Redis, in the order
//! Redis gave them their positions.
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
//! With a history:
//!
//! ```no_run
//! use courier::live::{History, Hub};
//! use courier::live::redis::RedisBus;
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), courier::live::redis::RedisBusError> {
//! let bus = RedisBus::builder("redis://127.0.0.1:6379")
//!     .history(History::new(1_000, Duration::from_secs(300)))
//!     .connect()
//!     .await?;
//! let hub = Hub::new(bus);
//! # let _ = hub; Ok(()) }
//! ```
//!
//! # What it promises
//!
//! Without a history (the default):
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
//! ## With a history
//!
//! - **One order, positions from Redis.** A message published to a topic
//!   ([`TopicBus::publish`](courier_live::TopicBus::publish)) is given its offset by Redis, in
//!   one atomic script that also records it and publishes it: every subscriber on every
//!   instance gets the topic's messages in offset order, whoever published them, this
//!   instance's own included (they come back from Redis too; nothing is handed on before Redis
//!   has placed it). Messages a channel's handler sends to one subscriber, and a push
//!   channel's ([`publish_here`](courier_live::TopicBus::publish_here)), stay on this instance
//!   and have no position, as before.
//! - **Recovered for a while.** A member that comes back with `since` (its last position) gets
//!   [`Outbound::Start`](courier_live::Outbound::Start), then the messages after it, in order,
//!   each once, then the live ones — when the history still holds all of them: at most the
//!   history's **count** of messages a topic, none older than its **age** (by Redis's clock).
//!   Otherwise, or when `since` is of another epoch or past the latest position, its
//!   subscription's one item is [`Outbound::missed`](courier_live::Outbound::missed) (1012,
//!   `messages were missed: …`), and the hub refuses the join with `JoinError::Missed`.
//! - **Nothing skipped silently.** To an instance connected to Redis, delivery is complete or
//!   the gap is told.
//!   Each instance keeps the last position it handed on per topic; a message that skips ahead
//!   (pub/sub lost one, the inbox overflowed, the connection dropped and came back) has the
//!   missing ones fetched from the history and handed on first ([`RedisStats::recovered`]).
//!   When the history no longer holds them, or its epoch changed, the topic's subscribers
//!   here are told of the gap (1012, `messages were missed: …`).
//! - **The epoch.** A topic's history has an epoch, made by the first instance that uses the
//!   topic and kept in Redis. A Redis restarted without persistence, or a topic left unused
//!   (neither published to nor subscribed to) for longer than max(age, 24 h), begins a new one;
//!   returning members with a position of the old epoch are told they missed messages, which
//!   they did. A Redis that keeps its data (RDB, AOF, a replica promoted) keeps the epoch and
//!   the history, as far as it kept them.
//! - **A restart without persistence** is told to every member connected at the time (1012),
//!   once this instance has its subscription back; members then join afresh in the new epoch.
//! - **A message that did not go out** (Redis away, Redis refused it, the publish queue full)
//!   reaches nobody, this instance's subscribers included; once publishing works again, a gap
//!   entry takes the next offset of the topic's history, so that every subscriber of the topic
//!   is told, and a member recovering across it is told instead of skipping it silently.
//!
//! Still not promised: delivery while an instance cannot reach Redis (a subscription that
//! cannot reach it within a few seconds begins with the gap: `the topic bus cannot reach
//! Redis`), exactly-once delivery to a member across its reconnections beyond what the history
//! holds, or a history that outlives a Redis that forgets.
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
//!   With a history, what a returning member recovers is read at once (at most about the
//!   history's count of messages) and handed to it before the live ones.
//! - With a history, **memory in Redis** is about the history's count of entries (a stream
//!   trimmed with `MAXLEN ~`, so somewhat more) for each topic published to within the
//!   history's age — each entry the message's envelope and a time — plus one small hash per
//!   topic used within max(age, 24 h). Streams expire an age after their last message, hashes
//!   max(age, 24 h) after their last use. This instance keeps one position per topic it
//!   subscribes to.
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
//! With a history, each topic (any string) also has, under the same prefix:
//!
//! - `{prefix}h:{topic}`, a **stream**: one entry per message or gap, its id `OFFSET-0`, its
//!   fields `d` (the envelope above, without a position) and `t` (Redis's time, ms).
//! - `{prefix}m:{topic}`, a **hash**: `e` the epoch (16 hex digits), `s` the latest offset.
//!
//! A message is published by one Lua script (loaded once, run with `EVALSHA`): `HSETNX` the
//! epoch (the publisher's fresh one, taken only by a new hash, whose stream is then deleted),
//! `HINCRBY s 1` for the offset, `XADD … MAXLEN ~ COUNT OFFSET-0 d … t …`, `PEXPIRE` the stream
//! after the age and the hash after max(age, 24 h), then `PUBLISH` on the topic's channel the
//! envelope with its position first:
//!
//! ```json
//! {"at":"3f9a0c1d2b4e5f60:42","v":1,"from":"5f0c…","message":{"type":"message","data":{"text":"hi"}}}
//! {"at":"3f9a0c1d2b4e5f60:43","v":1,"from":"5f0c…","gap":true}
//! ```
//!
//! Reading (a subscription's start, a catch-up) is another script: it makes the hash (and so
//! the epoch the next message will have) when there is none, refreshes its expiry, and returns
//! the epoch, the latest offset, Redis's time and the stream's entries after a position, in one
//! step. The envelope's `at` is optional (`v` stays 1): an instance without a history reads
//! these payloads too.
//!
//! A payload or an entry that is not one of these (another program publishing on the prefix)
//! is logged and ignored.

mod bus;
mod envelope;
mod handed;
mod history;
mod shared;
mod subscription;
mod worker;

pub use bus::{RedisBus, RedisBusBuilder, RedisBusError, RedisStats};
