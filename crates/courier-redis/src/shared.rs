//! What the bus and its two tasks share: the bus's state, and the messages it queues for Redis.

use crate::history::Scripts;
use courier_live::{LocalBus, Outbound, Position, TopicBus, MISSED};
use redis::aio::ConnectionManager;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::{mpsc, watch};

/// A message for the other instances, on its way to Redis.
pub(crate) struct Publish {
    pub(crate) topic: String,
    /// The envelope.
    pub(crate) payload: Vec<u8>,
    /// Whether it goes into the topic's history (and to every instance, this one included,
    /// with its position), or only on the channel.
    pub(crate) record: bool,
}

/// What the bus, its worker and its reader share.
pub(crate) struct Shared {
    /// This instance's id, in every envelope it publishes.
    pub(crate) instance: String,
    pub(crate) prefix: String,
    /// This instance's subscribers.
    pub(crate) local: LocalBus,
    /// Local subscriptions per topic: a topic here is subscribed on Redis.
    pub(crate) wanted: Mutex<HashMap<String, usize>>,
    /// Topics whose messages for the other instances did not go out: a gap goes first.
    pub(crate) missed: Mutex<HashSet<String>>,
    pub(crate) publishes: mpsc::Sender<Publish>,
    pub(crate) wake: mpsc::Sender<()>,
    pub(crate) dropped: AtomicU64,
    pub(crate) gaps: AtomicU64,
    pub(crate) recovered: AtomicU64,
    pub(crate) connected: AtomicBool,
    /// Redis subscriptions the worker holds.
    pub(crate) subscribed: AtomicUsize,
    /// The history kept of each topic, and the scripts that keep it; `None` without one.
    pub(crate) history: Option<Scripts>,
    /// With a history: the position of the last message handed to this instance's subscribers,
    /// per topic subscribed on Redis. A topic is here once its Redis subscription has been
    /// taken (and its latest position read); its subscribers wait for that before they read
    /// where they begin, so that everything after it reaches them.
    pub(crate) handed: Mutex<HashMap<String, Position>>,
    /// Bumped each time a topic enters `handed`.
    pub(crate) ready: watch::Sender<u64>,
    /// For the reads of the history (a clone of the worker's connection).
    pub(crate) connection: ConnectionManager,
}

impl Shared {
    /// Has the worker look at the subscriptions and the gaps again.
    pub(crate) fn wake(&self) {
        // Full: a wake is pending already, and it will see this change too.
        let _ = self.wake.try_send(());
    }

    pub(crate) fn wanted(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.wanted.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn missed(&self) -> MutexGuard<'_, HashSet<String>> {
        self.missed.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn handed(&self) -> MutexGuard<'_, HashMap<String, Position>> {
        self.handed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells `topic`'s local subscribers that they may have missed messages. With a history,
    /// the reason begins with [`MISSED_REASON`](courier_live::MISSED_REASON), so that a client
    /// forgets its position.
    pub(crate) fn tell_gap(&self, topic: &str, why: &str) {
        self.gaps.fetch_add(1, Ordering::Relaxed);
        let close = if self.history.is_some() {
            Outbound::missed(why)
        } else {
            Outbound::Close {
                code: MISSED,
                reason: format!("messages may have been missed: {why}"),
            }
        };
        self.local.publish(topic, close);
    }

    /// The Redis channel of `topic`.
    pub(crate) fn channel(&self, topic: &str) -> String {
        format!("{}{topic}", self.prefix)
    }
}
