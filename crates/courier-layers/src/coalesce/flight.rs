//! The calls in flight: who leads each one, who waits on it, and how its answer reaches them.
//!
//! Each distinct read in flight is a [`Slot`] in a map shared by a service and its clones. The
//! first caller (the leader) starts the inner service's future in a task of its own, so the call
//! does not depend on any one caller being polled or kept: the task buffers the response once
//! and hands each waiter a copy through its own `oneshot` channel.
//!
//! Every caller, the leader included, holds a [`Waiter`] that counts in its slot's `live`. The
//! count only changes under the map's lock, so a caller cannot join a call at the moment the
//! last one leaves it: either it joins first and keeps the call alive, or the slot is gone and
//! it leads a new call. The waiter that brings the count to zero removes the slot and aborts the
//! task, which drops the inner future and so cancels the upstream call. A task that ends in any
//! way removes its slot too, so no entry outlives its call.

use super::body::CoalesceBody;
use super::error::{Interrupted, Shared};
use super::key::Key;
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::BoxError;
use http::{Extensions, HeaderMap, HeaderName, Response, StatusCode, Version};
use http_body_util::BodyExt;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tracing::Instrument;

/// What a shared call ends with, as each waiter receives it.
type Outcome = Result<Arc<Buffered>, Shared>;

/// The in-flight calls of one service and its clones.
pub(super) struct InFlight {
    /// Keys are hashed once with this, then compared in full on a hash hit.
    hasher: RandomState,
    ignored: Box<[HeaderName]>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    next_id: u64,
    /// Almost always one slot per hash; more only on a hash collision.
    by_hash: HashMap<u64, Vec<Slot>>,
}

struct Slot {
    /// Tells this call from a later one with the same key.
    id: u64,
    key: Key,
    /// Callers still waiting on the call.
    live: usize,
    senders: Vec<oneshot::Sender<Outcome>>,
    /// Set once the leader has started the task.
    abort: Option<AbortHandle>,
}

/// How a caller takes part in a call: joining one in flight, or leading a new one.
pub(super) enum Join {
    Waiting { waiter: Waiter, waiters: usize },
    Leading { waiter: Waiter, lead: Lead },
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
        self.lock().by_hash.values().map(Vec::len).sum()
    }

    // The critical sections below run no code of the caller's and cannot leave the map half
    // changed, so a poisoned lock still guards a consistent map.
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins the call in flight for `key`, or registers a new one for the caller to lead.
    pub(super) fn join(self: &Arc<Self>, key: Key) -> Join {
        let hash = self.hasher.hash_one(&key);
        self.join_hashed(key, hash)
    }

    /// [`join`](Self::join) with the key's hash given: a test can make two keys collide.
    pub(super) fn join_hashed(self: &Arc<Self>, key: Key, hash: u64) -> Join {
        let (sender, receiver) = oneshot::channel();
        let mut calls = self.lock();
        let existing = calls
            .by_hash
            .get_mut(&hash)
            .and_then(|slots| slots.iter_mut().find(|slot| slot.key == key));
        if let Some(slot) = existing {
            slot.live += 1;
            slot.senders.push(sender);
            let (id, waiters) = (slot.id, slot.live);
            drop(calls);
            return Join::Waiting {
                waiter: Waiter::new(receiver, self.ticket(hash, id)),
                waiters,
            };
        }
        let id = calls.next_id;
        calls.next_id = calls.next_id.wrapping_add(1);
        calls.by_hash.entry(hash).or_default().push(Slot {
            id,
            key,
            live: 1,
            senders: vec![sender],
            abort: None,
        });
        drop(calls);
        Join::Leading {
            waiter: Waiter::new(receiver, self.ticket(hash, id)),
            lead: Lead(self.ticket(hash, id)),
        }
    }

    fn ticket(self: &Arc<Self>, hash: u64, id: u64) -> Ticket {
        Ticket {
            in_flight: Arc::clone(self),
            hash,
            id,
        }
    }
}

impl Calls {
    fn slot(&mut self, hash: u64, id: u64) -> Option<&mut Slot> {
        self.by_hash
            .get_mut(&hash)?
            .iter_mut()
            .find(|slot| slot.id == id)
    }

    fn remove(&mut self, hash: u64, id: u64) -> Option<Slot> {
        let slots = self.by_hash.get_mut(&hash)?;
        let position = slots.iter().position(|slot| slot.id == id)?;
        let slot = slots.swap_remove(position);
        if slots.is_empty() {
            self.by_hash.remove(&hash);
        }
        Some(slot)
    }
}

/// Names one call in one map.
struct Ticket {
    in_flight: Arc<InFlight>,
    hash: u64,
    id: u64,
}

/// The leader's right to start the call it registered.
pub(super) struct Lead(Ticket);

impl Lead {
    /// Runs `future` (the inner service's answer to the leader's request) in a task on
    /// `runtime`, in the leader's tracing span and served-request scope, buffers its response
    /// and hands it to every waiter.
    pub(super) fn start<F, B, E>(self, future: F, runtime: &Handle)
    where
        F: Future<Output = Result<Response<B>, E>> + Send + 'static,
        E: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let Ticket {
            in_flight,
            hash,
            id,
        } = self.0;
        let finish = Finish {
            in_flight: Arc::clone(&in_flight),
            hash,
            id,
            delivered: false,
        };
        let task = async move { finish.deliver(buffer(future).await) }
            .instrument(tracing::Span::current());
        let task = match ServedRequest::current() {
            Some(served) => runtime.spawn(served.scope(task)),
            None => runtime.spawn(task),
        };
        // The leader's own waiter is alive until `call` returns, so the slot is still here
        // unless the task has already finished; then there is nothing left to abort.
        let mut calls = in_flight.lock();
        if let Some(slot) = calls.slot(hash, id) {
            slot.abort = Some(task.abort_handle());
        }
    }
}

/// Calls the inner future and collects the response body: the one copy every waiter shares.
async fn buffer<F, B, E>(future: F) -> Outcome
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let response = match future.await {
        Ok(response) => response,
        Err(error) => return Err(Shared::new(error.into())),
    };
    let (parts, body) = response.into_parts();
    let collected = match body.collect().await {
        Ok(collected) => collected,
        Err(error) => return Err(Shared::new(error.into())),
    };
    let trailers = collected.trailers().cloned();
    Ok(Arc::new(Buffered {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        extensions: parts.extensions,
        body: collected.to_bytes(),
        trailers,
    }))
}

/// A response read to its end.
struct Buffered {
    status: StatusCode,
    version: Version,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
    trailers: Option<HeaderMap>,
}

impl Buffered {
    /// A copy for one waiter. The body's bytes are shared, not copied; every extension value is
    /// `Clone` (http 1 requires it), so each waiter gets all of them.
    fn response<B>(&self) -> Response<CoalesceBody<B>> {
        let body = CoalesceBody::shared(self.body.clone(), self.trailers.clone());
        let mut response = Response::new(body);
        *response.status_mut() = self.status;
        *response.version_mut() = self.version;
        *response.headers_mut() = self.headers.clone();
        *response.extensions_mut() = self.extensions.clone();
        response
    }
}

/// Owned by the task: ends the slot however the task ends.
struct Finish {
    in_flight: Arc<InFlight>,
    hash: u64,
    id: u64,
    delivered: bool,
}

impl Finish {
    fn deliver(mut self, outcome: Outcome) {
        self.delivered = true;
        // Removed before anyone is told, so a request that comes after the answer starts a
        // new call: coalescing shares calls in flight, it does not cache.
        let slot = self.in_flight.lock().remove(self.hash, self.id);
        for sender in slot.into_iter().flat_map(|slot| slot.senders) {
            // A waiter that left in the meantime has dropped its receiver; nothing to do.
            let _ = sender.send(outcome.clone());
        }
    }
}

impl Drop for Finish {
    fn drop(&mut self) {
        if !self.delivered {
            // The task panicked or its runtime is shutting down: dropping the senders tells
            // the waiters (`Interrupted`). After an abort the slot is already gone.
            let slot = self.in_flight.lock().remove(self.hash, self.id);
            drop(slot);
        }
    }
}

/// One caller's interest in a call. Dropping it before the answer arrives leaves the call;
/// the last one to leave cancels it.
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
        let outcome = ready!(std::pin::Pin::new(&mut self.receiver).poll(cx));
        // Delivered or interrupted, the slot is gone: the task removes it before its senders
        // are sent on or dropped.
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
            // The call has ended; its outcome went unread.
            return;
        };
        slot.live -= 1;
        if slot.live > 0 {
            return;
        }
        let slot = calls.remove(hash, id);
        drop(calls);
        if let Some(abort) = slot.and_then(|slot| slot.abort) {
            abort.abort();
        }
    }
}
