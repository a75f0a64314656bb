//! The cache's memory: answers by key, bounded in entries and bytes, the least recently used
//! evicted first.

use crate::key::Key;
use bytes::Bytes;
use http::{HeaderMap, StatusCode, Version};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// The bounds of one cache's memory.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) max_entries: usize,
    pub(super) max_bytes: usize,
    pub(super) max_entry_bytes: usize,
}

/// A kept answer: its head and whole body, and when it stops being fresh, then stale.
#[derive(Clone, Debug)]
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) version: Version,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
    pub(super) stored: Instant,
}

struct Entry {
    answer: Answer,
    fresh_until: Instant,
    stale_until: Instant,
    /// Whether a fetch of a fresh answer is under way (stale-while-revalidate).
    refreshing: bool,
    /// The bytes this entry counts against the limit.
    size: usize,
    /// Its place in the order of use.
    used: u64,
}

/// What a lookup found.
pub(super) enum Lookup {
    /// Nothing, or nothing usable: call upstream.
    Miss,
    /// A fresh answer.
    Fresh(Answer),
    /// A stale answer still within its stale-while-revalidate time; `refresh` when this lookup
    /// is the one that should fetch a fresh answer (no fetch is under way yet).
    Stale { answer: Answer, refresh: bool },
}

/// Answers by key, shared by the services of one layer.
pub(super) struct Store {
    limits: Limits,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    by_key: HashMap<Arc<Key>, Entry>,
    /// Keys by last use, oldest first.
    by_use: BTreeMap<u64, Arc<Key>>,
    next_use: u64,
    bytes: usize,
}

impl Store {
    pub(super) fn new(limits: Limits) -> Self {
        Self {
            limits,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change keeps the maps consistent before anything that could panic.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many answers are kept.
    pub(super) fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    /// The bytes the kept answers count.
    pub(super) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// The most a single answer's body may be to be kept.
    pub(super) fn max_entry_bytes(&self) -> usize {
        self.limits.max_entry_bytes
    }

    /// The answer kept for `key`, as of `now`.
    pub(super) fn get(&self, key: &Key, now: Instant) -> Lookup {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let Some(entry) = inner.by_key.get_mut(key) else {
            return Lookup::Miss;
        };
        if now >= entry.stale_until {
            let used = entry.used;
            let size = entry.size;
            if let Some(old) = inner.by_use.remove(&used) {
                inner.by_key.remove(&old);
            }
            inner.bytes -= size;
            return Lookup::Miss;
        }
        // Used now: last in line for eviction.
        if let Some(key) = inner.by_use.remove(&entry.used) {
            entry.used = inner.next_use;
            inner.by_use.insert(inner.next_use, key);
            inner.next_use += 1;
        }
        if now < entry.fresh_until {
            return Lookup::Fresh(entry.answer.clone());
        }
        let refresh = !entry.refreshing;
        entry.refreshing = true;
        Lookup::Stale {
            answer: entry.answer.clone(),
            refresh,
        }
    }

    /// Lets another lookup of `key` start a refresh: this one failed.
    pub(super) fn refresh_failed(&self, key: &Key) {
        if let Some(entry) = self.lock().by_key.get_mut(key) {
            entry.refreshing = false;
        }
    }

    /// Keeps `answer` for `key`, fresh for `fresh` then stale for `stale`; returns how many
    /// answers were evicted to make room, or `None` when it is too big to keep.
    pub(super) fn insert(
        &self,
        key: Arc<Key>,
        answer: Answer,
        fresh: Duration,
        stale: Duration,
    ) -> Option<usize> {
        if answer.body.len() > self.limits.max_entry_bytes {
            return None;
        }
        let size = key.len()
            + answer.body.len()
            + answer
                .headers
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len())
                .sum::<usize>();
        if size > self.limits.max_bytes {
            return None;
        }
        let fresh_until = answer.stored + fresh;
        let stale_until = fresh_until + stale;
        let mut evicted = Vec::new();
        {
            let mut inner = self.lock();
            let inner = &mut *inner;
            if let Some(old) = inner.by_key.remove(&key) {
                inner.by_use.remove(&old.used);
                inner.bytes -= old.size;
            }
            let used = inner.next_use;
            inner.next_use += 1;
            inner.by_use.insert(used, Arc::clone(&key));
            inner.by_key.insert(
                key,
                Entry {
                    answer,
                    fresh_until,
                    stale_until,
                    refreshing: false,
                    size,
                    used,
                },
            );
            inner.bytes += size;
            while inner.by_key.len() > self.limits.max_entries
                || inner.bytes > self.limits.max_bytes
            {
                let Some((_, oldest)) = inner.by_use.pop_first() else {
                    break;
                };
                if let Some(entry) = inner.by_key.remove(&oldest) {
                    inner.bytes -= entry.size;
                    // Dropped outside the lock.
                    evicted.push(entry);
                }
            }
        }
        Some(evicted.len())
    }
}
