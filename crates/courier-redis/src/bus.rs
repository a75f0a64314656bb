//! [`RedisBus`]: the bus, its builder, its error and its figures.

use crate::envelope::Envelope;
use crate::history::Scripts;
use crate::shared::{Publish, Shared};
use crate::subscription::{self, Held};
use crate::worker::{self, Inbox};
use courier_live::{BusStream, History, LocalBus, Outbound, Position, TopicBus};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, ProtocolVersion};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A [`TopicBus`] on Redis pub/sub, for a hub shared by several instances of an app. See the
/// [crate docs](crate) for what it promises. Cheap to clone: clones share one connection.
#[derive(Clone)]
pub struct RedisBus {
    shared: Arc<Shared>,
}

/// Builds a [`RedisBus`]: [`RedisBus::builder`].
#[derive(Debug)]
#[must_use]
pub struct RedisBusBuilder {
    url: String,
    prefix: String,
    queue: usize,
    connect_timeout: Duration,
    history: Option<History>,
}

impl RedisBusBuilder {
    /// The prefix of every Redis channel the bus uses, before the topic. Default `courier:`:
    /// apps sharing one Redis keep their topics apart with their own.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How many messages may wait for Redis, each way (published here, and handed here);
    /// default 1,024. See the [crate docs](crate#bounds) for what happens past it.
    pub fn queue(mut self, messages: usize) -> Self {
        self.queue = messages.max(1);
        self
    }

    /// Keeps `history` of each topic in Redis, so that a member that comes back (to any
    /// instance) recovers what it missed: at most its count of messages a topic, none older
    /// than its age. Off by default. See the [crate docs](crate#with-a-history) for what it
    /// promises and what it costs in Redis.
    pub fn history(mut self, history: History) -> Self {
        self.history = Some(history);
        self
    }

    /// How long [`connect`](Self::connect) waits for Redis; default 5 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Connects to Redis and starts the bus's tasks (on the current tokio runtime).
    ///
    /// # Errors
    ///
    /// [`RedisBusError`], saying why: a URL that does not parse, a Redis that refuses the
    /// connection or the credentials (a wrong password), one that does not speak RESP3 (Redis 6
    /// or later), or one that does not answer within the connect timeout. Once connected, a
    /// Redis that goes away is reconnected to in the background.
    pub async fn connect(self) -> Result<RedisBus, RedisBusError> {
        let failed = |why: String| RedisBusError {
            url: redacted(&self.url),
            why,
        };
        let info = self
            .url
            .as_str()
            .into_connection_info()
            .map_err(|e| failed(e.to_string()))?;
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        let client = redis::Client::open(info.set_redis_settings(settings))
            .map_err(|e| failed(e.to_string()))?;
        // One plain connection first, so that what stops it (refused, a wrong password, a
        // Redis without RESP3) is told at once: the connection manager below retries without
        // end, and would only time out.
        let timeout = self.connect_timeout;
        drop(within(timeout, client.get_multiplexed_async_connection(), &failed).await?);
        let (inbox, received) = Inbox::new(self.queue);
        let config = ConnectionManagerConfig::new()
            .set_push_sender(inbox)
            .set_automatic_resubscription()
            .set_number_of_retries(usize::MAX)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_secs(2))
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(Duration::from_secs(5)));
        let connection = within(
            timeout,
            ConnectionManager::new_with_config(client, config),
            &failed,
        )
        .await?;

        let (publishes, publish_queue) = mpsc::channel(self.queue);
        let (wake, woken) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            instance: instance_id(),
            prefix: self.prefix,
            local: LocalBus::new(),
            wanted: Mutex::new(HashMap::new()),
            missed: Mutex::new(HashSet::new()),
            publishes,
            wake,
            dropped: AtomicU64::new(0),
            gaps: AtomicU64::new(0),
            recovered: AtomicU64::new(0),
            connected: AtomicBool::new(true),
            subscribed: AtomicUsize::new(0),
            history: self.history.map(Scripts::new),
            handed: Mutex::new(HashMap::new()),
            ready: watch::Sender::new(0),
            connection: connection.clone(),
        });
        let weak = Arc::downgrade(&shared);
        tokio::spawn(worker::publish_and_subscribe(
            connection,
            publish_queue,
            woken,
            weak.clone(),
        ));
        tokio::spawn(worker::hand_on(received, weak));
        Ok(RedisBus { shared })
    }
}

/// `work` within `timeout`: its Redis error, or the silence, as the bus's error.
async fn within<T>(
    timeout: Duration,
    work: impl std::future::Future<Output = redis::RedisResult<T>>,
    failed: &impl Fn(String) -> RedisBusError,
) -> Result<T, RedisBusError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(done) => done.map_err(|e| failed(e.to_string())),
        Err(_) => Err(failed(format!(
            "no answer within {} ms",
            timeout.as_millis()
        ))),
    }
}

/// A Redis URL without its password, for messages and logs.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// A fresh instance id: two randomly keyed hashes, unguessable and all but unique.
fn instance_id() -> String {
    let hasher = RandomState::new();
    let high = hasher.hash_one(std::process::id());
    let low = hasher.hash_one((std::process::id(), high));
    format!("{high:016x}{low:016x}")
}

impl RedisBus {
    /// A builder for a bus on the Redis at `url` (`redis://[:password@]host:port[/db]`).
    pub fn builder(url: impl Into<String>) -> RedisBusBuilder {
        RedisBusBuilder {
            url: url.into(),
            prefix: "courier:".to_owned(),
            queue: 1024,
            connect_timeout: Duration::from_secs(5),
            history: None,
        }
    }

    /// Connects to the Redis at `url` with the defaults: [`RedisBus::builder`]`(url).connect()`.
    ///
    /// # Errors
    ///
    /// As [`RedisBusBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<Self, RedisBusError> {
        Self::builder(url).connect().await
    }

    /// This instance's id, which its envelopes carry.
    pub fn instance(&self) -> &str {
        &self.shared.instance
    }

    /// The bus's figures now.
    pub fn stats(&self) -> RedisStats {
        let shared = &self.shared;
        RedisStats {
            topics: shared.subscribed.load(Ordering::Relaxed),
            local_topics: shared.wanted().len(),
            dropped: shared.dropped.load(Ordering::Relaxed),
            gaps: shared.gaps.load(Ordering::Relaxed),
            recovered: shared.recovered.load(Ordering::Relaxed),
            connected: shared.connected.load(Ordering::Relaxed),
        }
    }
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("instance", &self.shared.instance)
            .field("prefix", &self.shared.prefix)
            .field("stats", &self.stats())
            .finish()
    }
}

impl TopicBus for RedisBus {
    fn publish(&self, topic: &str, message: Outbound) {
        let shared = &self.shared;
        let job = match (&shared.history, message) {
            // With a history, a message reaches every subscriber, this instance's too, from
            // Redis, with the position Redis gives it.
            (Some(_), Outbound::Message { data, .. }) => Publish {
                topic: topic.to_owned(),
                payload: Envelope::message(&shared.instance, Outbound::message(data)).to_bytes(),
                record: true,
            },
            (_, message) => {
                let payload = Envelope::message(&shared.instance, message.clone()).to_bytes();
                shared.local.publish(topic, message);
                Publish {
                    topic: topic.to_owned(),
                    payload,
                    record: false,
                }
            }
        };
        if let Err(mpsc::error::TrySendError::Full(job)) = shared.publishes.try_send(job) {
            shared.dropped.fetch_add(1, Ordering::Relaxed);
            if shared.missed().insert(job.topic) {
                if job.record {
                    tracing::warn!(
                        topic,
                        "redis bus: the publish queue is full; this topic's messages are lost until it drains, and its subscribers told"
                    );
                } else {
                    tracing::warn!(
                        topic,
                        "redis bus: the publish queue is full; this topic's messages reach this instance only until it drains"
                    );
                }
            }
        }
    }

    fn publish_here(&self, topic: &str, message: Outbound) {
        self.shared.local.publish(topic, message);
    }

    fn subscribe(&self, topic: &str, since: Option<&Position>, buffer: usize) -> BusStream {
        // With a history, the local bus keeps none: it is the history in Redis that says
        // where a subscription begins.
        let local_since = if self.shared.history.is_some() {
            None
        } else {
            since
        };
        let mut stream = self.shared.local.subscribe(topic, local_since, buffer);
        let first = {
            let mut wanted = self.shared.wanted();
            let count = wanted.entry(topic.to_owned()).or_insert(0);
            *count += 1;
            *count == 1
        };
        if first {
            self.shared.wake();
        }
        if self.shared.history.is_some() {
            stream = subscription::recovering(&self.shared, topic, since.cloned(), stream);
        }
        Box::pin(Held::new(stream, topic, &self.shared))
    }

    fn history(&self) -> Option<History> {
        self.shared.history.as_ref().map(Scripts::history)
    }
}

/// A [`RedisBus`]'s figures: [`RedisBus::stats`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisStats {
    /// Redis subscriptions held: one per topic with a local subscriber, once the worker has
    /// taken it.
    pub topics: usize,
    /// Topics with a local subscriber.
    pub local_topics: usize,
    /// Messages published here that did not reach Redis because the publish queue was full.
    pub dropped: u64,
    /// Times a topic's local subscribers were told they may have missed messages.
    pub gaps: u64,
    /// With a history: messages the channel skipped (lost by pub/sub, dropped from a full
    /// queue, or sent while the connection was down) that were fetched from the history and
    /// handed on in their place.
    pub recovered: u64,
    /// Whether the connection to Redis is up, as far as the bus knows.
    pub connected: bool,
}

/// A [`RedisBus`] that could not start: the URL (its password left out), and why.
#[derive(Debug)]
pub struct RedisBusError {
    url: String,
    why: String,
}

impl fmt::Display for RedisBusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the Redis topic bus cannot reach `{}`: {}",
            self.url, self.why
        )
    }
}

impl std::error::Error for RedisBusError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(
            redacted("redis://:s3cret@cache:6379/2"),
            "redis://…@cache:6379/2"
        );
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_ne!(instance_id(), instance_id());
    }
}
