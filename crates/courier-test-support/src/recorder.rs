//! [`Recorder`]: what an upstream received, and the gate its held answers wait on.

use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// How long a test waits for something that should happen at once; only a failing test waits
/// this long.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// What an upstream's handlers share: every request they [record](Recorder::record), a gate
/// that held answers wait on, and a signal that a handler was dropped unanswered. Clones share
/// all three.
#[derive(Clone)]
pub struct Recorder(Arc<State>);

struct State {
    /// Every request recorded, in arrival order.
    seen: Mutex<Vec<Received>>,
    /// Recorded requests per path, for the routes that answer differently each time.
    per_path: Mutex<HashMap<String, usize>>,
    arrivals: watch::Sender<usize>,
    open: watch::Sender<bool>,
    abandoned: watch::Sender<bool>,
}

/// One request as the upstream received it.
#[derive(Clone, Debug)]
pub struct Received {
    /// Its method.
    pub method: Method,
    /// Its path and query (`/users/7?full=1`).
    pub target: String,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its body, when the upstream read it ([`Recorder::record_body`]); else empty.
    pub body: Bytes,
}

impl Received {
    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// Nothing received yet, the gate closed.
    pub fn new() -> Self {
        Self(Arc::new(State {
            seen: Mutex::default(),
            per_path: Mutex::default(),
            arrivals: watch::Sender::new(0),
            open: watch::Sender::new(false),
            abandoned: watch::Sender::new(false),
        }))
    }

    /// Records `request`'s head; returns how many requests for its path were recorded before it.
    pub fn record<B>(&self, request: &Request<B>) -> usize {
        self.record_body(request, Bytes::new())
    }

    /// Records `request`'s head and the `body` the upstream read of it; returns how many
    /// requests for its path were recorded before it.
    pub fn record_body<B>(&self, request: &Request<B>, body: Bytes) -> usize {
        let received = Received {
            method: request.method().clone(),
            target: request
                .uri()
                .path_and_query()
                .map_or_else(String::new, ToString::to_string),
            headers: request.headers().clone(),
            body,
        };
        let earlier = {
            let mut per_path = lock(&self.0.per_path);
            let count = per_path.entry(received.path().to_owned()).or_default();
            *count += 1;
            *count - 1
        };
        lock(&self.0.seen).push(received);
        self.0.arrivals.send_modify(|n| *n += 1);
        earlier
    }

    /// Every request recorded, in arrival order.
    pub fn seen(&self) -> Vec<Received> {
        lock(&self.0.seen).clone()
    }

    /// The last request recorded.
    ///
    /// # Panics
    ///
    /// When none was.
    pub fn last(&self) -> Received {
        lock(&self.0.seen)
            .last()
            .cloned()
            .expect("the upstream received a request")
    }

    /// Whether any request recorded has `needle` in its target, a header's name or value, or its
    /// body: what a test asks of a secret that must never reach the upstream.
    pub fn ever_saw(&self, needle: &str) -> bool {
        let contains = |haystack: &[u8]| {
            haystack
                .windows(needle.len().max(1))
                .any(|window| window == needle.as_bytes())
        };
        lock(&self.0.seen).iter().any(|seen| {
            seen.target.contains(needle)
                || seen.headers.iter().any(|(name, value)| {
                    name.as_str().contains(needle) || contains(value.as_bytes())
                })
                || contains(&seen.body)
        })
    }

    /// How many requests were recorded.
    pub fn count(&self) -> usize {
        *self.0.arrivals.borrow()
    }

    /// How many requests for `path` were recorded.
    pub fn hits(&self, path: &str) -> usize {
        lock(&self.0.per_path).get(path).copied().unwrap_or(0)
    }

    /// Waits until `n` requests have been recorded in all.
    ///
    /// # Panics
    ///
    /// When they have not within [`PATIENCE`].
    pub async fn arrived(&self, n: usize) {
        let mut arrivals = self.0.arrivals.subscribe();
        tokio::time::timeout(PATIENCE, arrivals.wait_for(|&seen| seen >= n))
            .await
            .unwrap_or_else(|_| panic!("{n} requests should reach the upstream at once"))
            .expect("the recorder lives as long as its clones");
    }

    /// Opens the gate: held answers go.
    pub fn open(&self) {
        self.0.open.send_replace(true);
    }

    /// Opens the gate once `n` requests are in: proof that they were all in flight together.
    pub async fn open_after(&self, n: usize) {
        self.arrived(n).await;
        self.open();
    }

    /// Waits for the gate to open; bounded by [`PATIENCE`], so a failing test ends rather than
    /// hangs.
    pub async fn wait_open(&self) {
        let mut open = self.0.open.subscribe();
        let _ = tokio::time::timeout(PATIENCE, open.wait_for(|&open| open)).await;
    }

    /// A guard for a handler that may never answer: dropped (the handler abandoned by its
    /// client's cancelled call), it signals [`wait_abandoned`](Self::wait_abandoned).
    pub fn abandon_guard(&self) -> AbandonGuard {
        AbandonGuard(self.clone())
    }

    /// Waits until an [`AbandonGuard`] is dropped.
    ///
    /// # Panics
    ///
    /// When none is within [`PATIENCE`].
    pub async fn wait_abandoned(&self) {
        let mut abandoned = self.0.abandoned.subscribe();
        tokio::time::timeout(PATIENCE, abandoned.wait_for(|&gone| gone))
            .await
            .expect("the upstream should see the cancelled request abandoned")
            .expect("the recorder lives as long as its clones");
    }
}

/// Signals [`Recorder::wait_abandoned`] when dropped.
pub struct AbandonGuard(Recorder);

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        self.0 .0.abandoned.send_replace(true);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
