//! The topic bus: how the messages of a served channel's topic reach every subscriber.

use futures_core::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use tokio::sync::broadcast;

/// What a subscriber of a served channel is handed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outbound {
    /// A message of the channel.
    Message {
        /// The message, as JSON.
        data: Value,
    },
    /// The subscription is over: close the socket with this WebSocket close code and reason.
    Close {
        /// The close code (1000: the channel ended; 1011: its handler failed; 1013: the
        /// subscriber was too slow).
        code: u16,
        /// Why, for people.
        reason: String,
    },
}

/// The close code a topic's subscribers are handed when their bus lost messages (it
/// reconnected to its server): 1012, "service restart", after which a client reconnects, and a
/// channel's `on_join` (or a followed stream's handler) can bring it up to date.
pub const MISSED: u16 = 1012;

/// A subscriber fell behind its topic by more than its buffer and lost messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lagged {
    /// Messages it missed.
    pub missed: u64,
}

/// A subscription to one topic: the messages published to it from the moment of subscribing,
/// or [`Lagged`] once when the subscriber fell behind (after which it should be dropped).
pub type BusStream = Pin<Box<dyn Stream<Item = Result<Outbound, Lagged>> + Send>>;

/// How the messages of a topic reach its subscribers: in process ([`LocalBus`]), or across
/// machines (a pub/sub service behind an implementation of this trait, such as
/// `courier::live::redis::RedisBus`).
///
/// A topic is a string: a channel's is the one [`Hub::channel_topic`](crate::Hub::channel_topic)
/// composes from its dotted path and the topic key; a stream follows any topic
/// ([`Hub::follow`](crate::Hub::follow)). Delivery is at most once, in publishing order per
/// publisher; a subscriber too slow for its buffer gets [`Lagged`]. A bus that lost messages
/// (its connection to its server dropped) tells the topics' subscribers with
/// [`Outbound::Close`] code 1012 ([`MISSED`]), after which they reconnect.
pub trait TopicBus: Send + Sync + 'static {
    /// Sends `message` to every current subscriber of `topic`, on every instance sharing the
    /// bus; nobody subscribed is no error.
    fn publish(&self, topic: &str, message: Outbound);

    /// Sends `message` to this instance's subscribers of `topic` only: what every instance
    /// computes for itself, such as a push channel's messages (its handler runs on each instance
    /// that has subscribers of the topic). The same as [`publish`](Self::publish) on a bus of
    /// one process.
    fn publish_here(&self, topic: &str, message: Outbound) {
        self.publish(topic, message);
    }

    /// Subscribes to `topic`, keeping up to `buffer` messages this subscriber has not read yet.
    fn subscribe(&self, topic: &str, buffer: usize) -> BusStream;
}

/// The in-process [`TopicBus`]: a tokio `broadcast` channel per topic, removed when its last
/// subscriber goes, so topics never accumulate.
///
/// A topic's buffer is the one its first subscriber asked for (the topic is opened then, and a
/// `broadcast` channel's capacity is fixed); a subscriber more than that many messages behind
/// gets [`Lagged`]. Subscribers of one channel ask for the same buffer (the server's
/// `buffer`), so in practice every subscriber has its own.
#[derive(Clone, Default)]
pub struct LocalBus {
    topics: Arc<Mutex<HashMap<String, broadcast::Sender<Outbound>>>>,
}

impl LocalBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }

    /// Topics with at least one subscriber.
    pub fn topics(&self) -> usize {
        self.lock().len()
    }

    /// Subscriptions held now, over all topics.
    pub fn subscribers(&self) -> usize {
        self.lock()
            .values()
            .map(broadcast::Sender::receiver_count)
            .sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Outbound>>> {
        self.topics.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalBus")
            .field("topics", &self.topics())
            .finish()
    }
}

impl TopicBus for LocalBus {
    fn publish(&self, topic: &str, message: Outbound) {
        let topics = self.lock();
        if let Some(sender) = topics.get(topic) {
            // No receiver left is not an error: the last one is leaving.
            let _ = sender.send(message);
        }
    }

    fn subscribe(&self, topic: &str, buffer: usize) -> BusStream {
        let mut topics = self.lock();
        let receiver = match topics.get(topic) {
            Some(sender) => sender.subscribe(),
            None => {
                let (sender, receiver) = broadcast::channel(buffer.max(1));
                topics.insert(topic.to_owned(), sender);
                receiver
            }
        };
        Box::pin(LocalSubscription {
            receiver: Some(Box::pin(into_stream(receiver))),
            topic: topic.to_owned(),
            topics: Arc::downgrade(&self.topics),
        })
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

/// One subscription of a [`LocalBus`]; dropping the last of a topic removes the topic.
struct LocalSubscription {
    receiver: Option<BusStream>,
    topic: String,
    topics: Weak<Mutex<HashMap<String, broadcast::Sender<Outbound>>>>,
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
        if let Some(topics) = self.topics.upgrade() {
            let mut topics = topics.lock().unwrap_or_else(|e| e.into_inner());
            if topics
                .get(&self.topic)
                .is_some_and(|sender| sender.receiver_count() == 0)
            {
                topics.remove(&self.topic);
            }
        }
    }
}
