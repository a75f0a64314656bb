//! The topic bus: how the messages of a served channel's topic reach every subscriber, and the
//! history a member that comes back recovers what it missed from.

use futures_core::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// What a subscriber of a served channel is handed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outbound {
    /// A message of the channel.
    Message {
        /// The message, as JSON.
        data: Value,
        /// Where it sits in its topic's history, when the bus keeps one and the message was
        /// published to the topic ([`TopicBus::publish`]); `None` for a message to one
        /// subscriber, or one a bus without a history carried.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<Position>,
    },
    /// The subscription begins after this position: every message of the topic after it is
    /// owed to the subscriber, recovered ones first. Handed first, once, by a bus that keeps a
    /// history; a client keeps it as its position until a message gives it another.
    Start {
        /// The position the subscription begins after.
        at: Position,
    },
    /// The subscription is over: close the socket with this WebSocket close code and reason.
    Close {
        /// The close code (1000: the channel ended; 1011: its handler failed; 1013: the
        /// subscriber was too slow; 1012, [`MISSED`]: messages were missed).
        code: u16,
        /// Why, for people.
        reason: String,
    },
}

impl Outbound {
    /// A message without a position, as a subscriber's own and a push channel's are.
    pub fn message(data: Value) -> Self {
        Self::Message { data, at: None }
    }

    /// The close of a subscriber that missed messages: code 1012 ([`MISSED`]), the reason
    /// `messages were missed: ` and `why`.
    pub fn missed(why: impl fmt::Display) -> Self {
        Self::Close {
            code: MISSED,
            reason: format!("{MISSED_REASON}{why}"),
        }
    }
}

/// The close code a topic's subscribers are handed when messages they were owed are gone: the
/// bus lost them (it reconnected to its server), or a returning subscriber's position is no
/// longer in the history. 1012, "service restart", after which a client forgets its position
/// and reconnects, and a channel's `on_join` (or a followed stream's handler) can bring it up to
/// date.
pub const MISSED: u16 = 1012;

/// How the reason of a [`MISSED`] close begins (`docs/PROTOCOL.md`): a client that reads it
/// forgets its position.
pub const MISSED_REASON: &str = "messages were missed: ";

/// A subscriber fell behind its topic by more than its buffer and lost messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lagged {
    /// Messages it missed.
    pub missed: u64,
}

/// A subscription to one topic: what [`TopicBus::subscribe`] promises, in order — with a
/// history, [`Outbound::Start`] first, then the messages recovered after the subscriber's
/// position, then those published from the moment of subscribing — or [`Lagged`] once when the
/// subscriber fell behind (after which it should be dropped).
pub type BusStream = Pin<Box<dyn Stream<Item = Result<Outbound, Lagged>> + Send>>;

/// Where a message sits in its topic's history: the history's epoch, and the message's offset
/// in it (from 1; offset 0 is "before the first message"). Written `EPOCH:OFFSET`, the form
/// clients keep and hand back (`docs/PROTOCOL.md`, "Positions and recovery").
///
/// A history that is lost and begun again (a restarted process, a Redis restarted without
/// persistence, a topic left unused past its history's age) has a new epoch, so a position of
/// the old one is known to be gone rather than mistaken for one of the new.
///
/// ```
/// use courier::live::Position;
/// let at: Position = "3f9a0c1d:42".parse().unwrap();
/// assert_eq!((at.epoch(), at.offset()), ("3f9a0c1d", 42));
/// assert_eq!(at.to_string(), "3f9a0c1d:42");
/// assert!("3f9a0c1d".parse::<Position>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    epoch: Arc<str>,
    offset: u64,
}

impl Position {
    /// The position `offset` of the history `epoch`.
    ///
    /// # Errors
    ///
    /// [`BadPosition`] for an epoch that is empty, longer than 64 bytes, or holds anything but
    /// ASCII letters, digits, `-` and `_`.
    pub fn new(epoch: &str, offset: u64) -> Result<Self, BadPosition> {
        let fits = (1..=64).contains(&epoch.len())
            && epoch
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !fits {
            return Err(BadPosition);
        }
        Ok(Self {
            epoch: epoch.into(),
            offset,
        })
    }

    /// Reads a position a client sent (a hello's `since`, a `Last-Event-ID`); else the reason
    /// its subscriber is told, after [`MISSED_REASON`], quoting at most 64 characters of it.
    ///
    /// ```
    /// use courier::live::Position;
    /// assert_eq!(Position::from_client("e1:4").unwrap().offset(), 4);
    /// assert_eq!(
    ///     Position::from_client("nope").unwrap_err(),
    ///     "messages were missed: `nope` is not a position"
    /// );
    /// ```
    pub fn from_client(text: &str) -> Result<Self, String> {
        text.parse().map_err(|_| {
            let shown: String = text.chars().take(64).collect();
            format!("{MISSED_REASON}`{shown}` is not a position")
        })
    }

    /// The history's epoch.
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// The message's offset in the history.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next position of the same history.
    fn next(&self) -> Self {
        Self {
            epoch: Arc::clone(&self.epoch),
            offset: self.offset + 1,
        }
    }

    /// How many messages a subscriber that had `self` is owed by a history whose latest
    /// position is `latest`, when the history `holds` that many messages before `latest` (its
    /// newest ones, `latest` included); else why they cannot all be had: another epoch (the
    /// history was begun again), a position past the latest, or one older than what is held.
    /// The one rule every [`TopicBus`] with a history recovers by, its reasons the ones a
    /// subscriber is told after [`MISSED_REASON`].
    ///
    /// ```
    /// use courier::live::Position;
    /// let latest: Position = "e1:10".parse().unwrap();
    /// assert_eq!("e1:7".parse::<Position>().unwrap().owed(&latest, 3), Ok(3));
    /// assert!("e1:6".parse::<Position>().unwrap().owed(&latest, 3).unwrap_err().contains("no longer holds e1:7"));
    /// assert!("e2:7".parse::<Position>().unwrap().owed(&latest, 3).is_err());
    /// ```
    pub fn owed(&self, latest: &Position, holds: u64) -> Result<u64, String> {
        if self.epoch != latest.epoch {
            return Err(format!(
                "the topic's history was begun again (epoch {}, not {})",
                latest.epoch, self.epoch
            ));
        }
        let Some(owed) = latest.offset.checked_sub(self.offset) else {
            return Err(format!(
                "{self} is past the topic's latest position, {latest}"
            ));
        };
        if owed > holds {
            return Err(format!("the history no longer holds {}", self.next()));
        }
        Ok(owed)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.epoch, self.offset)
    }
}

impl FromStr for Position {
    type Err = BadPosition;

    fn from_str(text: &str) -> Result<Self, BadPosition> {
        let (epoch, offset) = text.rsplit_once(':').ok_or(BadPosition)?;
        // Digits only: `u64::from_str` would take a leading `+`.
        if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BadPosition);
        }
        Self::new(epoch, offset.parse().map_err(|_| BadPosition)?)
    }
}

impl Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Text that is not a [`Position`]: `EPOCH:OFFSET`, the epoch 1 to 64 ASCII letters, digits, `-`
/// or `_`, the offset a decimal `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadPosition;

impl fmt::Display for BadPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a position: EPOCH:OFFSET, the epoch 1 to 64 ASCII letters, digits, `-` or `_`, the offset a decimal number")
    }
}

impl std::error::Error for BadPosition {}

/// A fresh epoch: 16 hex digits from a randomly keyed hash, all but unique.
pub fn fresh_epoch() -> String {
    let hasher = RandomState::new();
    format!("{:016x}", hasher.hash_one(std::process::id()))
}

/// How much of each topic a bus keeps for subscribers that come back: at most `count` messages,
/// none older than `age`. A subscriber that returns with the position of its last message gets
/// what was published since, if the history still holds it; otherwise it is told of the gap
/// ([`MISSED`]).
///
/// ```
/// use courier::live::{History, Hub, LocalBus};
/// use std::time::Duration;
///
/// let hub = Hub::new(LocalBus::with_history(History::new(1_000, Duration::from_secs(60))));
/// # let _ = hub;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct History {
    count: usize,
    age: Duration,
}

impl History {
    /// At most `count` messages a topic (at least 1), none older than `age`.
    pub fn new(count: usize, age: Duration) -> Self {
        Self {
            count: count.max(1),
            age,
        }
    }

    /// The most messages kept a topic.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The oldest a kept message may be.
    pub fn age(&self) -> Duration {
        self.age
    }
}

/// How the messages of a topic reach its subscribers: in process ([`LocalBus`]), or across
/// machines (a service behind an implementation of this trait, such as
/// `courier::live::redis::RedisBus`).
///
/// A topic is a string: a channel's is the one [`Hub::channel_topic`](crate::Hub::channel_topic)
/// composes from its dotted path and the topic key; a stream follows any topic
/// ([`Hub::follow`](crate::Hub::follow)). Delivery is at most once, in publishing order per
/// publisher; a subscriber too slow for its buffer gets [`Lagged`]. A bus that lost messages
/// (its connection to its server dropped) tells the topics' subscribers with
/// [`Outbound::Close`] code 1012 ([`MISSED`]), after which they reconnect.
///
/// A bus may keep a [`History`] of each topic: then every message [published](Self::publish)
/// carries its [`Position`], and a subscriber that comes back with the position of the last
/// message it had gets the ones after it that the history holds, each once, in order, before
/// the ones published from then on.
pub trait TopicBus: Send + Sync + 'static {
    /// Sends `message` to every current subscriber of `topic`, on every instance sharing the
    /// bus, and into the topic's history when the bus keeps one; nobody subscribed is no error.
    fn publish(&self, topic: &str, message: Outbound);

    /// Sends `message` to this instance's subscribers of `topic` only, never into a history:
    /// what every instance computes for itself, such as a push channel's messages (its handler
    /// runs on each instance that has subscribers of the topic). The same as
    /// [`publish`](Self::publish) on a bus of one process without a history.
    fn publish_here(&self, topic: &str, message: Outbound) {
        self.publish(topic, message);
    }

    /// Subscribes to `topic`, keeping up to `buffer` messages this subscriber has not read yet.
    ///
    /// With a history, the stream begins with [`Outbound::Start`]: `since` when given and the
    /// history still holds every message after it (which follow, in order), else the topic's
    /// latest position. When `since` is given and cannot be honoured — another epoch, older
    /// than the oldest message kept, past the latest, or a bus that keeps no history — the
    /// stream's one item is [`Outbound::missed`] saying why.
    fn subscribe(&self, topic: &str, since: Option<&Position>, buffer: usize) -> BusStream;

    /// The history this bus keeps of each topic; `None` when it keeps none.
    fn history(&self) -> Option<History> {
        None
    }
}

/// The in-process [`TopicBus`]: a tokio `broadcast` channel per topic with subscribers and,
/// with [`LocalBus::with_history`], a bounded history per topic.
///
/// Without a history a topic is removed when its last subscriber goes, so topics never
/// accumulate. With one, a topic is kept after its last subscriber goes, or after a message is
/// published to a topic nobody follows, until its newest message and its last departure are
/// older than the history's age (so that a member that drops for a moment finds its epoch
/// again): memory is bounded by what is published within one age, at most the history's count
/// per topic. Its epoch is made afresh each time the topic is.
///
/// A topic's buffer is the one its first subscriber asked for (a `broadcast` channel's capacity
/// is fixed); a subscriber more than that many messages behind gets [`Lagged`]. Subscribers of
/// one channel ask for the same buffer (the server's `buffer`), so in practice every subscriber
/// has its own.
#[derive(Clone, Default)]
pub struct LocalBus {
    topics: Arc<Mutex<Topics>>,
}

#[derive(Default)]
struct Topics {
    map: HashMap<String, Topic>,
    history: Option<History>,
    /// Publishes and subscriptions since the last sweep of unused topics.
    since_sweep: usize,
}

struct Topic {
    /// `None` while nobody subscribes.
    sender: Option<broadcast::Sender<Outbound>>,
    log: Option<Log>,
    /// When the topic last lost its last subscriber, or was made.
    left: Instant,
}

/// A topic's history: its epoch, the offset of its latest message, and the messages kept.
struct Log {
    latest: Position,
    kept: VecDeque<(Instant, Outbound)>,
}

impl Log {
    fn new() -> Self {
        Self {
            latest: Position {
                epoch: fresh_epoch().into(),
                offset: 0,
            },
            kept: VecDeque::new(),
        }
    }

    /// Drops what is past the history's count or age.
    fn trim(&mut self, history: History, now: Instant) {
        while self.kept.len() > history.count
            || self
                .kept
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) > history.age)
        {
            self.kept.pop_front();
        }
    }

    /// The messages after `since`, or why they cannot all be had.
    fn after(&self, since: &Position) -> Result<Vec<Outbound>, String> {
        let owed = since.owed(&self.latest, self.kept.len() as u64)?;
        // `owed` is at most what is kept: the newest that many.
        let skip = self.kept.len() - owed as usize;
        Ok(self
            .kept
            .iter()
            .skip(skip)
            .map(|(_, m)| m.clone())
            .collect())
    }
}

impl Topic {
    fn new(history: Option<History>) -> Self {
        Self {
            sender: None,
            log: history.map(|_| Log::new()),
            left: Instant::now(),
        }
    }

    fn subscribers(&self) -> usize {
        self.sender
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }

    fn send(&self, message: Outbound) {
        if let Some(sender) = &self.sender {
            // No receiver left is not an error: the last one is leaving.
            let _ = sender.send(message);
        }
    }
}

impl Topics {
    /// Every so often (every max(1,024, topics) publishes and subscriptions), removes the
    /// topics nobody follows whose history has aged out.
    fn sweep(&mut self, now: Instant) {
        self.since_sweep += 1;
        if self.since_sweep < self.map.len().max(1024) {
            return;
        }
        self.since_sweep = 0;
        let age = self.history.map_or(Duration::ZERO, |h| h.age);
        self.map.retain(|_, topic| {
            if topic.subscribers() > 0 {
                return true;
            }
            let newest = topic
                .log
                .as_ref()
                .and_then(|log| log.kept.back().map(|(at, _)| *at));
            let quiet = newest.map_or(topic.left, |at| at.max(topic.left));
            now.duration_since(quiet) <= age
        });
    }
}

impl LocalBus {
    /// An empty bus, keeping no history.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty bus keeping `history` of each topic.
    pub fn with_history(history: History) -> Self {
        Self {
            topics: Arc::new(Mutex::new(Topics {
                history: Some(history),
                ..Topics::default()
            })),
        }
    }

    /// Topics with at least one subscriber.
    pub fn topics(&self) -> usize {
        self.lock()
            .map
            .values()
            .filter(|t| t.subscribers() > 0)
            .count()
    }

    /// Topics held, with subscribers or only a history.
    pub fn held(&self) -> usize {
        self.lock().map.len()
    }

    /// Subscriptions held now, over all topics.
    pub fn subscribers(&self) -> usize {
        self.lock().map.values().map(Topic::subscribers).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Topics> {
        self.topics.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let topics = self.lock();
        f.debug_struct("LocalBus")
            .field("topics", &topics.map.len())
            .field("history", &topics.history)
            .finish()
    }
}

impl TopicBus for LocalBus {
    fn publish(&self, topic: &str, message: Outbound) {
        let mut topics = self.lock();
        let Some(history) = topics.history else {
            if let Some(topic) = topics.map.get(topic) {
                topic.send(message);
            }
            return;
        };
        let Outbound::Message { data, .. } = message else {
            // A close is for those subscribed now; it has no place in the history.
            if let Some(topic) = topics.map.get(topic) {
                topic.send(message);
            }
            return;
        };
        let now = Instant::now();
        topics.sweep(now);
        let entry = topics
            .map
            .entry(topic.to_owned())
            .or_insert_with(|| Topic::new(Some(history)));
        let log = entry.log.get_or_insert_with(Log::new);
        log.latest = log.latest.next();
        let message = Outbound::Message {
            data,
            at: Some(log.latest.clone()),
        };
        log.kept.push_back((now, message.clone()));
        log.trim(history, now);
        entry.send(message);
    }

    fn publish_here(&self, topic: &str, message: Outbound) {
        if let Some(topic) = self.lock().map.get(topic) {
            topic.send(message);
        }
    }

    fn subscribe(&self, topic: &str, since: Option<&Position>, buffer: usize) -> BusStream {
        let mut topics = self.lock();
        let history = topics.history;
        let now = Instant::now();
        topics.sweep(now);
        let entry = topics
            .map
            .entry(topic.to_owned())
            .or_insert_with(|| Topic::new(history));
        let receiver = entry
            .sender
            .get_or_insert_with(|| broadcast::channel(buffer.max(1)).0)
            .subscribe();
        let first = match (history, entry.log.as_mut(), since) {
            (Some(history), Some(log), since) => {
                log.trim(history, now);
                match since.map(|since| (since, log.after(since))) {
                    None => vec![Outbound::Start {
                        at: log.latest.clone(),
                    }],
                    Some((since, Ok(recovered))) => {
                        let mut first = Vec::with_capacity(recovered.len() + 1);
                        first.push(Outbound::Start { at: since.clone() });
                        first.extend(recovered);
                        first
                    }
                    Some((_, Err(why))) => vec![Outbound::missed(why)],
                }
            }
            (_, _, Some(_)) => vec![Outbound::missed(
                "this server keeps no history of its topics",
            )],
            _ => Vec::new(),
        };
        let first = futures_util::stream::iter(first.into_iter().map(Ok));
        Box::pin(LocalSubscription {
            receiver: Some(Box::pin(futures_util::StreamExt::chain(
                first,
                into_stream(receiver),
            ))),
            topic: topic.to_owned(),
            topics: Arc::downgrade(&self.topics),
        })
    }

    fn history(&self) -> Option<History> {
        self.lock().history
    }
}

fn into_stream(
    receiver: broadcast::Receiver<Outbound>,
) -> impl Stream<Item = Result<Outbound, Lagged>> + Send {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        match receiver.recv().await {
            Ok(message) => Some((Ok(message), receiver)),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                Some((Err(Lagged { missed }), receiver))
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
}

/// One subscription of a [`LocalBus`]; dropping the last of a topic removes the topic, or,
/// with a history, keeps it until the history's age has passed.
struct LocalSubscription {
    receiver: Option<BusStream>,
    topic: String,
    topics: Weak<Mutex<Topics>>,
}

impl Stream for LocalSubscription {
    type Item = Result<Outbound, Lagged>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match &mut self.receiver {
            Some(receiver) => receiver.as_mut().poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

impl Drop for LocalSubscription {
    fn drop(&mut self) {
        // Drop the receiver first, so the count below no longer includes it.
        self.receiver = None;
        let Some(topics) = self.topics.upgrade() else {
            return;
        };
        let mut topics = topics.lock().unwrap_or_else(|e| e.into_inner());
        let Some(topic) = topics.map.get_mut(&self.topic) else {
            return;
        };
        if topic.subscribers() > 0 {
            return;
        }
        if topic.log.is_some() {
            topic.sender = None;
            topic.left = Instant::now();
        } else {
            topics.map.remove(&self.topic);
        }
    }
}
