//! What the bus and its two tasks share: the bus's state, and the messages it queues for Redis.

use courier_live::{LocalBus, Outbound, TopicBus, MISSED};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::mpsc;

/// A message for the other instances, on its way to Redis.
pub(crate) struct Publish {
    pub(crate) topic: String,
    pub(crate) payload: Vec<u8>,
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
    pub(crate) connected: AtomicBool,
    /// Redis subscriptions the worker holds.
    pub(crate) subscribed: AtomicUsize,
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

    /// Tells `topic`'s local subscribers that they may have missed messages.
    pub(crate) fn tell_gap(&self, topic: &str, why: &str) {
        self.gaps.fetch_add(1, Ordering::Relaxed);
        self.local.publish(
            topic,
            Outbound::Close {
                code: MISSED,
                reason: format!("messages may have been missed: {why}"),
            },
        );
    }

    /// The Redis channel of `topic`.
    pub(crate) fn channel(&self, topic: &str) -> String {
        format!("{}{topic}", self.prefix)
    }
}
