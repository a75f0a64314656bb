//! [`TransportCache`]: one built transport per distinct dispatcher, reused across calls.

use super::builder::Transport;
use super::error::TransportError;
use super::pooled::{erase, Pooled, TransportService};
use courier_core::{ClientIdentity, Dispatcher, HttpService, TransportOptions};
use http::Uri;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

/// How many dispatcher transports a cache keeps unless told otherwise.
const DEFAULT_CAPACITY: usize = 64;

/// Picks the HTTP service for a call from its resolved [`TransportOptions`], building each
/// transport once and reusing it, so calls share connection pools instead of each making a client.
///
/// - `fetch` set: its service, as is.
/// - else `dispatcher` set: a transport built from the cache's base [`Transport`] with the
///   dispatcher applied ([`Transport::from_dispatcher`]'s rules), built the first time that
///   dispatcher is seen and reused after.
/// - else the default transport, built with the cache.
///
/// Dispatchers are told apart by value: the proxy URI, the identity's PEM bytes and the root PEM
/// bytes. Pointer identity would not do, since resolving options clones the dispatcher for every
/// call; a bare hash would not either, since two dispatchers whose hashes collided would share a
/// client identity. So the hash picks a bucket and the fields are compared in full. A lookup
/// hashes a few kilobytes of PEM at most and copies none of it.
///
/// At most `capacity` dispatcher transports are kept (64 by default); past that, one is dropped
/// before the next is added (its pool closes when the last call using it ends). The cache is
/// cheap to clone: clones share the transports.
///
/// ```
/// use courier::transport::{Dispatcher, Transport, TransportCache, TransportOptions};
///
/// # fn main() -> Result<(), courier::transport::TransportError> {
/// let cache = TransportCache::new(Transport::new())?;
/// let options = TransportOptions {
///     dispatcher: Some(Dispatcher::new().proxy("http://127.0.0.1:3128".parse().unwrap())),
///     ..TransportOptions::default()
/// };
/// let _first = cache.service(&options)?;
/// let _again = cache.service(&options)?; // the same client: no new pool
/// assert_eq!(cache.len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TransportCache {
    inner: Arc<Inner>,
}

struct Inner {
    base: Transport,
    default: Pooled,
    /// The one service that answers every call, whatever its options name: a mock's
    /// (`ClientBuilder::mock`).
    answering: Option<HttpService>,
    capacity: usize,
    built: Mutex<Built>,
}

#[derive(Default)]
struct Built {
    buckets: HashMap<u64, Vec<(DispatcherKey, Pooled)>>,
    len: usize,
}

impl TransportCache {
    /// A cache whose default transport, and the base of its dispatcher transports, is `base`.
    /// Builds the default transport now, so its errors show here.
    pub fn new(base: Transport) -> Result<Self, TransportError> {
        Self::with_capacity(base, DEFAULT_CAPACITY)
    }

    /// Like [`new`](Self::new), keeping at most `capacity` dispatcher transports (at least one).
    pub fn with_capacity(base: Transport, capacity: usize) -> Result<Self, TransportError> {
        Self::build(base, capacity, None)
    }

    /// [`new`](Self::new), or, with `answering` (a mock's service), a cache whose every call
    /// goes to that service whatever its options name: what a client's builder makes.
    pub(crate) fn answered_by(
        base: Transport,
        answering: Option<HttpService>,
    ) -> Result<Self, TransportError> {
        Self::build(base, DEFAULT_CAPACITY, answering)
    }

    /// Whether a mock's service answers every call.
    pub(crate) fn is_mocked(&self) -> bool {
        self.inner.answering.is_some()
    }

    fn build(
        base: Transport,
        capacity: usize,
        answering: Option<HttpService>,
    ) -> Result<Self, TransportError> {
        let default = base.clone().build_pooled()?;
        Ok(Self {
            inner: Arc::new(Inner {
                base,
                default,
                answering,
                capacity: capacity.max(1),
                built: Mutex::new(Built::default()),
            }),
        })
    }

    /// The service to use for a call with these (already resolved) transport options.
    ///
    /// Fails only when a dispatcher's settings cannot be built (a bad PEM, a bad proxy URI); a
    /// failed build is not kept, so the same dispatcher fails the same way next time.
    pub fn service(&self, options: &TransportOptions) -> Result<HttpService, TransportError> {
        self.transport(options).map(erase)
    }

    /// [`service`](Self::service), with the default transport's type kept, so the layers over
    /// it poll its future in place.
    pub(crate) fn transport(
        &self,
        options: &TransportOptions,
    ) -> Result<TransportService, TransportError> {
        if let Some(answering) = &self.inner.answering {
            return Ok(TransportService::Right(answering.clone()));
        }
        if let Some(fetch) = &options.fetch {
            return Ok(TransportService::Right(fetch.service()));
        }
        let pooled = match &options.dispatcher {
            Some(dispatcher) => self.pooled_for(dispatcher)?,
            None => self.inner.default.clone(),
        };
        Ok(TransportService::Left(pooled))
    }

    /// The default transport.
    pub fn default_service(&self) -> HttpService {
        HttpService::new(self.inner.default.clone())
    }

    /// The transport for a dispatcher, built on first use.
    pub fn for_dispatcher(&self, dispatcher: &Dispatcher) -> Result<HttpService, TransportError> {
        self.pooled_for(dispatcher).map(HttpService::new)
    }

    fn pooled_for(&self, dispatcher: &Dispatcher) -> Result<Pooled, TransportError> {
        let hash = hash_dispatcher(dispatcher);
        // The lock is held while building so that each dispatcher's transport is built once even
        // when its first calls race; builds are rare and take no I/O except with native roots.
        let mut built = self.lock();
        if let Some(pooled) = built.find(hash, dispatcher) {
            return Ok(pooled);
        }
        let pooled = self
            .inner
            .base
            .clone()
            .dispatcher(dispatcher)
            .build_pooled()?;
        if built.len >= self.inner.capacity {
            built.evict_one();
        }
        built
            .buckets
            .entry(hash)
            .or_default()
            .push((DispatcherKey::of(dispatcher), pooled.clone()));
        built.len += 1;
        Ok(pooled)
    }

    /// How many dispatcher transports are kept now (the default transport not counted).
    pub fn len(&self) -> usize {
        self.lock().len
    }

    /// Whether no dispatcher transport has been built yet (or all were dropped).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Built> {
        // A panic elsewhere while holding the lock leaves the map consistent (it is only changed
        // after a build succeeded), so a poisoned lock is still usable.
        self.inner
            .built
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Built {
    fn find(&self, hash: u64, dispatcher: &Dispatcher) -> Option<Pooled> {
        self.buckets
            .get(&hash)?
            .iter()
            .find(|(key, _)| key.matches(dispatcher))
            .map(|(_, service)| service.clone())
    }

    fn evict_one(&mut self) {
        let Some(&hash) = self.buckets.keys().next() else {
            return;
        };
        if let Some(bucket) = self.buckets.get_mut(&hash) {
            if bucket.pop().is_some() {
                self.len -= 1;
            }
            if bucket.is_empty() {
                self.buckets.remove(&hash);
            }
        }
    }
}

/// A dispatcher's fields as kept by the cache.
struct DispatcherKey {
    proxy: Option<Uri>,
    identity: Option<ClientIdentity>,
    root_certs: Vec<Vec<u8>>,
}

impl DispatcherKey {
    fn of(dispatcher: &Dispatcher) -> Self {
        Self {
            proxy: dispatcher.proxy.clone(),
            identity: dispatcher.identity.clone(),
            root_certs: dispatcher.root_certs.clone(),
        }
    }

    fn matches(&self, dispatcher: &Dispatcher) -> bool {
        self.proxy == dispatcher.proxy
            && same_identity(self.identity.as_ref(), dispatcher.identity.as_ref())
            && self.root_certs == dispatcher.root_certs
    }
}

fn same_identity(a: Option<&ClientIdentity>, b: Option<&ClientIdentity>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.cert_pem == b.cert_pem && a.key_pem == b.key_pem,
        _ => false,
    }
}

fn hash_dispatcher(dispatcher: &Dispatcher) -> u64 {
    let mut hasher = DefaultHasher::new();
    // `Uri`'s hash agrees with its case-insensitive equality.
    dispatcher.proxy.hash(&mut hasher);
    match &dispatcher.identity {
        Some(identity) => {
            1u8.hash(&mut hasher);
            identity.cert_pem.hash(&mut hasher);
            identity.key_pem.hash(&mut hasher);
        }
        None => 0u8.hash(&mut hasher),
    }
    dispatcher.root_certs.hash(&mut hasher);
    hasher.finish()
}

impl fmt::Debug for TransportCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportCache")
            .field("base", &self.inner.base)
            .field("capacity", &self.inner.capacity)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatcher(n: u8) -> Dispatcher {
        Dispatcher::new().proxy(
            format!("http://127.0.0.1:{}", 3000 + u16::from(n))
                .parse()
                .unwrap(),
        )
    }

    #[test]
    fn capacity_bounds_the_cache() {
        let cache = TransportCache::with_capacity(Transport::new(), 2).unwrap();
        for n in 0..5 {
            cache.for_dispatcher(&dispatcher(n)).unwrap();
            assert!(cache.len() <= 2);
        }
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_bad_dispatcher_is_an_error_and_not_kept() {
        let cache = TransportCache::new(Transport::new()).unwrap();
        let bad = Dispatcher::new().root_cert("not a pem");
        assert!(matches!(
            cache.for_dispatcher(&bad),
            Err(TransportError::RootCert { index: 0, .. })
        ));
        assert!(cache.is_empty());
    }

    #[test]
    fn hash_and_equality_agree() {
        let a = dispatcher(1);
        let b = dispatcher(1);
        assert_eq!(hash_dispatcher(&a), hash_dispatcher(&b));
        assert!(DispatcherKey::of(&a).matches(&b));
        assert!(!DispatcherKey::of(&a).matches(&dispatcher(2)));
    }
}
