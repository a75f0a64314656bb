//! The bound on open connections [`Proxy::serve`](crate::Proxy::serve) holds: a place for each
//! connection, at most [`Places::max`] of them, and at most
//! [`Places::per_client`] for one client address when that is set.
//!
//! A connection is *idle* when no request of it is being answered: it has not sent its first
//! request yet, or it waits between keep-alive requests. One that is answering — a call in
//! flight, a stream's events, a channel's socket (which holds its place for as long as it is
//! open) — is *busy*. At the bound, a new connection takes the place of the oldest idle one,
//! which is closed, as nginx reuses its keep-alive and not-yet-read connections when its
//! `worker_connections` are not enough; a busy connection is never closed for another. When
//! every place is busy, the new connection waits for one (the ones after it wait in the
//! listener's backlog) rather than being closed. Over its address's bound, a new connection
//! takes the place of that address's oldest idle one, or is closed at once when they are all
//! busy, so that one address's connections never hold up another's.
//!
//! The bound keeps the process under its file-descriptor limit, where `accept` would fail and
//! every client would wait: by default it is half of what the limit leaves after
//! [`RESERVED_FDS`] (a proxied connection may hold an upstream one besides), read from
//! `/proc/self/limits`; where that cannot be read, [`FALLBACK_MAX`].
//!
//! What it costs a request: the busy count's two atomic operations and a clone of the place's
//! `Arc` for the response body to hold, and a waker registered on each wake-up of the
//! connection's task, so that the accept loop can close it: 226–356 instructions a proxied read,
//! 0.5 % (callgrind, `courier serve --threads 1`; BENCHMARKS.md, "What the limits cost a
//! proxied read").

use futures_util::task::AtomicWaker;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::sync::Notify;

/// The file descriptors the default bound leaves aside for the listener, the topic bus, log
/// files and whatever else the process opens besides its connections.
pub(crate) const RESERVED_FDS: usize = 64;

/// The bound when the file-descriptor limit cannot be read (not Linux).
pub(crate) const FALLBACK_MAX: usize = 512;

/// The fewest places the default gives, however low the limit.
const MIN_MAX: usize = 16;

/// The bound on open connections derived from `fd_limit`, the process's soft limit on open
/// files: half of what [`RESERVED_FDS`] leaves, at least [`MIN_MAX`].
pub(crate) fn default_max(fd_limit: Option<usize>) -> usize {
    match fd_limit {
        Some(limit) => (limit.saturating_sub(RESERVED_FDS) / 2).max(MIN_MAX),
        None => FALLBACK_MAX,
    }
}

/// The process's soft limit on open files, from `/proc/self/limits` (`Max open files`), or
/// `None` where that cannot be read or says `unlimited`.
pub(crate) fn fd_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    soft_open_files(&limits)
}

fn soft_open_files(limits: &str) -> Option<usize> {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The places of one server's connections; see the [module docs](self).
pub(crate) struct Places {
    max: usize,
    per_client: Option<NonZeroUsize>,
    open: Mutex<Open>,
    /// Signalled when a place is given back, or a connection becomes idle, while the accept
    /// loop waits for a place.
    freed: Notify,
    waiting: AtomicBool,
}

/// The connections holding a place, oldest first.
#[derive(Default)]
struct Open {
    next: u64,
    slots: BTreeMap<u64, Arc<Slot>>,
    /// Places held, closing ones excepted: a closed connection's place is handed to the new one
    /// at once, though its socket takes a moment to close.
    held: usize,
    /// The same, per client address, when there is a bound per address.
    by_client: HashMap<IpAddr, usize>,
}

/// Why a new connection was given no place.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoPlace {
    /// Every place is busy: wait for one ([`Places::place`]).
    Full,
    /// Its address holds as many busy connections as it may: close it.
    ClientFull,
}

impl Places {
    /// At most `max` connections (at least one), and `per_client` from one address.
    pub(crate) fn new(max: usize, per_client: Option<NonZeroUsize>) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            per_client,
            open: Mutex::new(Open::default()),
            freed: Notify::new(),
            waiting: AtomicBool::new(false),
        })
    }

    /// The bound on open connections.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// The bound for one client address, if any.
    pub(crate) fn per_client(&self) -> Option<NonZeroUsize> {
        self.per_client
    }

    fn open(&self) -> MutexGuard<'_, Open> {
        // Nothing held under the lock can panic half-way; a poisoned lock's state is whole.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a new connection from `client`, closing the oldest idle connection (of
    /// `client`, over its address's bound; of anyone, at the bound) to make room.
    pub(crate) fn admit(self: &Arc<Self>, client: IpAddr) -> Result<Place, NoPlace> {
        let mut open = self.open();
        if let Some(per_client) = self.per_client {
            let held = open.by_client.get(&client).copied().unwrap_or(0);
            if held >= per_client.get() && !open.close_oldest_idle(Some(client), self) {
                return Err(NoPlace::ClientFull);
            }
        }
        if open.held >= self.max && !open.close_oldest_idle(None, self) {
            return Err(NoPlace::Full);
        }
        let id = open.next;
        open.next += 1;
        let slot = Arc::new(Slot {
            client,
            state: AtomicUsize::new(0),
            waker: AtomicWaker::new(),
        });
        open.slots.insert(id, Arc::clone(&slot));
        open.held += 1;
        if self.per_client.is_some() {
            *open.by_client.entry(client).or_insert(0) += 1;
        }
        drop(open);
        let held = Held {
            id,
            slot,
            places: Arc::clone(self),
        };
        Ok(Place(Arc::new(held)))
    }

    /// A place for a new connection from `client`, as [`admit`](Self::admit) makes one, waiting
    /// for one to be given back while every place is busy. `None` over the address's bound,
    /// when every connection of that address is busy: the new one is to be closed.
    pub(crate) async fn place(self: &Arc<Self>, client: IpAddr) -> Option<Place> {
        match self.admit(client) {
            Ok(place) => return Some(place),
            Err(NoPlace::ClientFull) => return None,
            Err(NoPlace::Full) => {}
        }
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the flag is raised and the places looked at again, so a place
            // given back in between is not missed.
            freed.as_mut().enable();
            self.waiting.store(true, Ordering::Release);
            match self.admit(client) {
                Ok(place) => return Some(place),
                Err(NoPlace::ClientFull) => return None,
                Err(NoPlace::Full) => freed.await,
            }
        }
    }

    /// Wakes the accept loop if it waits for a place: one was given back, or a connection
    /// became idle.
    fn wake_waiting(&self) {
        if self.waiting.load(Ordering::Acquire) && self.waiting.swap(false, Ordering::AcqRel) {
            self.freed.notify_one();
        }
    }

    /// The places held now (closing connections excepted).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.open().held
    }
}

impl Open {
    /// Marks the oldest idle connection (of `client`, if named) closing and wakes its task;
    /// its place is given back at once. False when every connection is busy.
    fn close_oldest_idle(&mut self, client: Option<IpAddr>, places: &Places) -> bool {
        let found = self
            .slots
            .values()
            .find(|slot| client.is_none_or(|client| slot.client == client) && slot.close_if_idle());
        let Some(slot) = found.cloned() else {
            return false;
        };
        self.give_back(slot.client, places);
        slot.waker.wake();
        tracing::debug!(client = %slot.client, "closed an idle connection to take a new one");
        true
    }

    fn give_back(&mut self, client: IpAddr, places: &Places) {
        self.held -= 1;
        if places.per_client.is_some() {
            if let Some(held) = self.by_client.get_mut(&client) {
                *held -= 1;
                if *held == 0 {
                    self.by_client.remove(&client);
                }
            }
        }
    }
}

/// The closing flag of a slot's state; the bits below it count the requests being answered.
const CLOSING: usize = 1 << (usize::BITS - 1);

/// What the accept loop and a connection share of its place.
struct Slot {
    client: IpAddr,
    /// [`CLOSING`], and the requests being answered.
    state: AtomicUsize,
    /// The connection's task, woken when it is to close.
    waker: AtomicWaker,
}

impl Slot {
    /// Marks this connection closing if it is idle; true if it was.
    fn close_if_idle(&self) -> bool {
        self.state
            .compare_exchange(0, CLOSING, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

/// A place while it is held; given back when it goes.
struct Held {
    id: u64,
    slot: Arc<Slot>,
    places: Arc<Places>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.places.open();
        open.slots.remove(&self.id);
        // A closing connection's place was given back when it was marked.
        if self.slot.state.load(Ordering::Acquire) & CLOSING == 0 {
            open.give_back(self.slot.client, &self.places);
        }
        drop(open);
        self.places.wake_waiting();
    }
}

/// A connection's place, held by its task, by each response it is sending
/// ([`Place::busy`]), and by a channel's socket for as long as it is open; given back when the
/// last of them goes.
#[derive(Clone)]
pub(crate) struct Place(Arc<Held>);

impl Place {
    /// Marks a request of this connection as being answered until the guard goes.
    pub(crate) fn busy(&self) -> Busy {
        Busy::of(&self.0)
    }

    /// Ready when the connection is to close now: it was taken for a new one while idle and
    /// has answered every request that came since. Registers the task to be woken for that.
    pub(crate) fn poll_closing(&self, cx: &mut Context<'_>) -> Poll<()> {
        // Registered before the look, so that a close marked in between wakes the task.
        let slot = &self.0.slot;
        slot.waker.register(cx.waker());
        if slot.state.load(Ordering::Acquire) == CLOSING {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Place")
            .field("client", &self.0.slot.client)
            .finish_non_exhaustive()
    }
}

/// A request of a connection being answered; see [`Place::busy`]. A clone counts as one more
/// holder: the connection is busy until every one has gone.
pub(crate) struct Busy(Arc<Held>);

impl Busy {
    fn of(held: &Arc<Held>) -> Self {
        held.slot.state.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(held))
    }
}

impl Clone for Busy {
    fn clone(&self) -> Self {
        Self::of(&self.0)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let slot = &self.0.slot;
        match slot.state.fetch_sub(1, Ordering::AcqRel) {
            // Closing, and this was its last request: its task closes it now.
            last if last == CLOSING + 1 => slot.waker.wake(),
            // Idle now: a new connection waiting for a place can take this one's.
            1 => self.0.places.wake_waiting(),
            _ => {}
        }
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its connection busy until it is sent whole or dropped.
    pub(crate) struct Tracked<B> {
        #[pin]
        body: B,
        busy: Busy,
    }
}

impl<B> Tracked<B> {
    pub(crate) fn new(body: B, busy: Busy) -> Self {
        Self { body, busy }
    }
}

impl<B: http_body::Body> http_body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests;
