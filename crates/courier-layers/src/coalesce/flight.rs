//! The calls in flight: which one a read joins, who waits on it, and when it is forgotten.
//!
//! Each distinct read in flight is a [`Slot`] in a map shared by a service and its clones,
//! found by its key's [hash](Key::hash) and told apart from any other with that hash by the
//! full [`Key`]. The slot holds the waiters that joined the call: a count, and a
//! `oneshot` sender each for the answer. The leader holds no channel: it drives the inner
//! future itself (see [`lead`](super::lead)).
//!
//! A slot lives from the leader's arrival until the response head arrives (the leader, or the
//! task it handed the call to, then removes it and takes its senders), or until the call is
//! given up. The counts only change under the map's lock, so a read cannot join a call at the
//! moment the last interested party leaves it: either it joins first and keeps the call alive,
//! or the slot is gone and it leads a new call.

use super::answer::{Outcome, Sender};
use super::body::CoalesceBody;
use super::error::Interrupted;
use crate::key::Key;
use courier_core::BoxError;
use http::{HeaderName, Response};
use std::collections::hash_map::{Entry, RandomState};
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

/// The in-flight calls of one service and its clones.
///
/// The one optimisation of this layer: calls are found by their key's hash, computed once,
/// outside the lock, over the key's first part, and kept in buckets of the calls sharing a
/// hash. A `HashMap<Arc<Key>, Slot>` in their place (the key hashed by the map, shared with the
/// call's tickets) cost 1.7 % of a call's instructions at concurrency 1 and 2.7 % at 64
/// (callgrind, `benches/client.rs`: 38,380 → 39,050 and 42,340 → 43,490).
pub(super) struct InFlight {
    /// Keys are hashed with this ([`Key::hash`]); the map then uses the hash as it is.
    hasher: RandomState,
    ignored: Box<[HeaderName]>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    next_id: u64,
    by_hash: HashMap<u64, Bucket, BuildHasherDefault<Prehashed>>,
}

/// The calls whose requests share one hash: one, unless two different requests collide.
struct Bucket {
    first: Slot,
    collided: Vec<Slot>,
}

struct Slot {
    /// Tells this call from a later one with the same key.
    id: u64,
    key: Key,
    /// Waiters still waiting; the leader is not counted.
    waiters: usize,
    senders: Vec<Sender>,
    driver: Driver,
}

/// Who drives the call.
enum Driver {
    /// The leader's own response future.
    Leader,
    /// A task the leader handed the call to when it left; its abort handle once recorded.
    Task(Option<AbortHandle>),
}

/// How a read takes part in a call: joining one in flight, or leading a new one.
pub(super) enum Join {
    Waiting { waiter: Waiter, waiters: usize },
    Leading(Lead),
}

impl InFlight {
    pub(super) fn new(ignored: Box<[HeaderName]>) -> Self {
        Self {
            hasher: RandomState::new(),
            ignored,
            calls: Mutex::new(Calls::default()),
        }
    }

    /// The headers left out of the key.
    pub(super) fn ignored(&self) -> &[HeaderName] {
        &self.ignored
    }

    /// How many distinct calls are in flight.
    pub(super) fn len(&self) -> usize {
        self.lock()
            .by_hash
            .values()
            .map(|bucket| 1 + bucket.collided.len())
            .sum()
    }

    /// The hash a call with `key` is found by.
    pub(super) fn hash(&self, key: &Key) -> u64 {
        key.hash(&self.hasher)
    }

    // The critical sections below run no code of the caller's and cannot leave the map half
    // changed, so a poisoned lock still guards a consistent map.
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins the call in flight with `key`, or registers a new one for the caller to lead.
    /// `hash` is the key's [`hash`](Self::hash); a test gives two keys the same one.
    pub(super) fn join(self: &Arc<Self>, hash: u64, key: Key) -> Join {
        let mut calls = self.lock();
        let Calls { next_id, by_hash } = &mut *calls;
        let id = *next_id;
        match by_hash.entry(hash) {
            Entry::Occupied(entry) => {
                let bucket = entry.into_mut();
                let found = std::iter::once(&mut bucket.first)
                    .chain(&mut bucket.collided)
                    .find(|slot| slot.key == key);
                if let Some(slot) = found {
                    let (sender, receiver) = oneshot::channel();
                    slot.waiters += 1;
                    slot.senders.push(sender);
                    let (id, waiters) = (slot.id, slot.waiters);
                    drop(calls);
                    return Join::Waiting {
                        waiter: Waiter::new(receiver, self.ticket(hash, id)),
                        waiters,
                    };
                }
                bucket.collided.push(Slot::new(id, key));
            }
            Entry::Vacant(entry) => {
                entry.insert(Bucket {
                    first: Slot::new(id, key),
                    collided: Vec::new(),
                });
            }
        }
        *next_id = id.wrapping_add(1);
        drop(calls);
        Join::Leading(Lead(Some(self.ticket(hash, id))))
    }

    fn ticket(self: &Arc<Self>, hash: u64, id: u64) -> Ticket {
        Ticket {
            in_flight: Arc::clone(self),
            hash,
            id,
        }
    }
}

impl Slot {
    fn new(id: u64, key: Key) -> Self {
        Self {
            id,
            key,
            waiters: 0,
            senders: Vec::new(),
            driver: Driver::Leader,
        }
    }
}

impl Calls {
    fn slot(&mut self, hash: u64, id: u64) -> Option<&mut Slot> {
        let bucket = self.by_hash.get_mut(&hash)?;
        std::iter::once(&mut bucket.first)
            .chain(&mut bucket.collided)
            .find(|slot| slot.id == id)
    }

    fn remove(&mut self, hash: u64, id: u64) -> Option<Slot> {
        let bucket = self.by_hash.get_mut(&hash)?;
        if bucket.first.id != id {
            let position = bucket.collided.iter().position(|slot| slot.id == id)?;
            return Some(bucket.collided.swap_remove(position));
        }
        match bucket.collided.pop() {
            Some(next) => Some(std::mem::replace(&mut bucket.first, next)),
            None => self.by_hash.remove(&hash).map(|bucket| bucket.first),
        }
    }
}

/// Names one call in one map.
#[derive(Clone)]
pub(super) struct Ticket {
    in_flight: Arc<InFlight>,
    hash: u64,
    id: u64,
}

impl Ticket {
    /// The response head has arrived: removes the slot, so that a read arriving from now on
    /// starts a new call, and takes the senders of the waiters still waiting (none, usually).
    pub(super) fn answered(&self) -> Vec<Sender> {
        let slot = self.in_flight.lock().remove(self.hash, self.id);
        let mut senders = slot.map(|slot| slot.senders).unwrap_or_default();
        senders.retain(|sender| !sender.is_closed());
        senders
    }

    /// The leader leaves before the head arrived. With waiters left, the slot now waits for
    /// the task the leader hands the call to, and this returns true; without, the slot is
    /// removed, and the leader drops the call.
    pub(super) fn leave(&self) -> bool {
        let mut calls = self.in_flight.lock();
        let Some(slot) = calls.slot(self.hash, self.id) else {
            return false;
        };
        if slot.waiters > 0 {
            slot.driver = Driver::Task(None);
            return true;
        }
        let slot = calls.remove(self.hash, self.id);
        drop(calls);
        drop(slot);
        false
    }

    /// The task that goes on with the call is running: records how to stop it for the last
    /// waiter to leave, or stops it now if that waiter has already left.
    pub(super) fn handed_off(&self, task: AbortHandle) {
        let mut calls = self.in_flight.lock();
        if let Some(Slot {
            driver: Driver::Task(abort),
            ..
        }) = calls.slot(self.hash, self.id)
        {
            *abort = Some(task);
            return;
        }
        drop(calls);
        // Gone: the last waiter left before the handle was here (or the task is done, and
        // aborting it changes nothing).
        task.abort();
    }

    /// The call stops unanswered: its slot goes, and the waiters, whose senders are dropped
    /// with it, end with [`Interrupted`].
    pub(super) fn abandon(&self) {
        let slot = self.in_flight.lock().remove(self.hash, self.id);
        drop(slot);
    }
}

/// The right to lead a call just registered, until the leader holds it with the inner future
/// ([`Lead::take`]). Dropped before that (the inner service's `call` panicked, say), it gives the
/// call up, so that no slot is left without a call.
pub(super) struct Lead(Option<Ticket>);

impl Lead {
    pub(super) fn take(mut self) -> Option<Ticket> {
        self.0.take()
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        if let Some(ticket) = self.0.take() {
            ticket.abandon();
        }
    }
}

/// A waiter's place in a call. Dropping it before the answer arrives leaves the call; the last
/// party to leave a call whose leader is gone stops it.
pub(super) struct Waiter {
    receiver: oneshot::Receiver<Outcome>,
    /// `None` once the outcome has arrived and there is nothing left to leave.
    ticket: Option<Ticket>,
}

impl Waiter {
    fn new(receiver: oneshot::Receiver<Outcome>, ticket: Ticket) -> Self {
        Self {
            receiver,
            ticket: Some(ticket),
        }
    }

    pub(super) fn poll_response<B>(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response<CoalesceBody<B>>, BoxError>> {
        let outcome = ready!(Pin::new(&mut self.receiver).poll(cx));
        // Answered or given up, the slot is gone: it is removed before its senders are sent on
        // or dropped.
        self.ticket = None;
        Poll::Ready(match outcome {
            Ok(Ok(buffered)) => Ok(buffered.response()),
            Ok(Err(shared)) => Err(shared.into()),
            Err(_) => Err(Interrupted::new().into()),
        })
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let Some(Ticket {
            in_flight,
            hash,
            id,
        }) = self.ticket.take()
        else {
            return;
        };
        let mut calls = in_flight.lock();
        let Some(slot) = calls.slot(hash, id) else {
            // The head has arrived: whoever reads the body notices this waiter's sender close.
            return;
        };
        slot.waiters -= 1;
        // A leader still there goes on for itself.
        if slot.waiters > 0 || matches!(slot.driver, Driver::Leader) {
            return;
        }
        let slot = calls.remove(hash, id);
        drop(calls);
        // Without a handle yet, the leader handing off finds the slot gone and stops the task.
        if let Some(Slot {
            driver: Driver::Task(Some(task)),
            ..
        }) = slot
        {
            task.abort();
        }
    }
}

/// The map's hasher: its keys are already [`Key::hash`]es.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is called for a `u64` key; this keeps any other use correct.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}
