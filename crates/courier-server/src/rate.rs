//! The proxy's rate limit ([`RateLimit`], set with
//! [`Proxy::rate_limit`](crate::Proxy::rate_limit)): at most so many calls, stream openings and
//! channel handshakes a second per session, or per client address for a request without one, in
//! bursts of a set size. A request over it is refused `429 Too Many Requests` with `Retry-After`
//! (whole seconds, rounded up, at least 1) and `{"error":{"code":"RATE_LIMITED",…}}`, once its
//! address is read and before anything else: nothing is sent upstream, no body is read, nothing
//! is opened in the hub. Calls, stream openings and handshakes share one count per key. Off by
//! default; off, it costs a request one `Option` test.
//!
//! The limiter is governor's keyed one (the generic cell rate algorithm: a leaky bucket kept as
//! one timestamp per key), not one of courier's own. Unlike tower's `RateLimitLayer`, which
//! holds one budget for every caller and makes a request over it wait, this one counts each
//! client apart and refuses at once, as nginx's `limit_req` does without `delay`.
//!
//! # What a request is counted by
//!
//! The proxy does not know the upstream's sessions: it hands the session's cookies on, and the
//! upstream decides what they are worth. A cookie the proxy cannot verify is a value any client
//! can make up, a new one for every request, so a count kept per cookie value would give a
//! client a fresh budget per request and hold nothing. Hence:
//!
//! - **A session the app issued** is counted by itself: the request's cookies carry the source's
//!   session cookies and a CSRF cookie whose token is signed with the source's key for exactly
//!   those values ([`SessionOptions::csrf_signed`](courier_core::SessionOptions::csrf_signed),
//!   [`SessionLayer::signed_session`](courier_layers::session::SessionLayer::signed_session)).
//!   Only the app's sign-in holds the key, so such a pair is a session it issued. The count is
//!   kept under a hash of the cookies (SipHash, with a key random to the process): the values,
//!   a credential, are never kept. A user's requests from several addresses share it; users
//!   behind one address (an office's NAT) have one each.
//! - **Every other request** is counted by its client's address, the peer's IP address as the
//!   proxy's socket sees it (`x-forwarded-for` is the client's to write and is not read): an
//!   IPv4 address as it is, an IPv6 address by its /64 prefix — what one host is given, so a
//!   client cannot take a fresh count from each address of its network — and an IPv4-mapped
//!   one as IPv4. A request with a session cookie and no signed token — a source without a
//!   signing key, a made-up value, a token of another session — is such a request: sessions
//!   without a key are counted by address.
//! - A request whose peer the proxy was not told (its router served without `ConnectInfo`) is
//!   counted with every other such request, under one shared key. [`Proxy::serve`] and
//!   `courier serve` always know the peer; an app serving the router itself gives it with
//!   axum's `into_make_service_with_connect_info::<SocketAddr>()`.
//!
//! A client then escapes its count only with a new address (a /64 for IPv6) or a new session
//! from the app's sign-in, which costs what the sign-in makes it cost. Behind a load balancer
//! every client has the balancer's address: limit there, or give each user a signed session.
//!
//! [`Proxy::serve`]: crate::Proxy::serve
//!
//! # Bounded memory
//!
//! governor keeps one entry per key (the key and a timestamp) until the key's state is back to
//! a fresh one's, `(burst + 1) / per_second` seconds after its last request at most. Such
//! entries are pruned (`retain_recent`, then `shrink_to_fit`) once every `max(1024, entries
//! left by the last pruning)` checks: a check visits at most one entry on average for it, and
//! the map holds at most twice the keys seen within that window, or those plus 1024. Each key
//! takes a request of its own to make, and a made-up cookie makes none (it counts by address),
//! so what a client can put in the map is bounded by its addresses and the sessions the app
//! gave it.

use crate::refusal::Refusal;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use http::HeaderMap;
use std::hash::{BuildHasher, RandomState};
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A rate limit on the proxy's calls, stream openings and channel handshakes, per session or
/// per client address (the [`Proxy::rate_limit`](crate::Proxy::rate_limit) docs say which):
/// `per_second` requests a second, with up to `burst` at once after a quiet spell.
///
/// ```
/// use courier::server::{Proxy, RateLimit};
///
/// // 20 a second, and a page that loads may make 50 calls at once.
/// let limit = RateLimit::per_second(20).burst(50);
/// assert_eq!((limit.get_per_second(), limit.get_burst()), (20, 50));
/// let proxy = Proxy::new().rate_limit(limit);
/// # let _ = proxy;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    per_second: u32,
    burst: u32,
}

impl RateLimit {
    /// `requests` a second, in bursts of as many. At least one: a limit of zero makes
    /// [`Proxy::into_router`](crate::Proxy::into_router) fail.
    pub fn per_second(requests: u32) -> Self {
        Self {
            per_second: requests,
            burst: requests,
        }
    }

    /// Up to `requests` at once from a client that has been quiet for `requests / per_second`
    /// seconds; the rate they are given back at stays `per_second`. At least one.
    #[must_use]
    pub fn burst(mut self, requests: u32) -> Self {
        self.burst = requests;
        self
    }

    /// Requests a second.
    pub fn get_per_second(&self) -> u32 {
        self.per_second
    }

    /// Requests at once.
    pub fn get_burst(&self) -> u32 {
        self.burst
    }

    /// governor's quota for it, or why there is none.
    fn quota(self) -> Result<Quota, String> {
        match (
            NonZeroU32::new(self.per_second),
            NonZeroU32::new(self.burst),
        ) {
            (Some(per_second), Some(burst)) => Ok(Quota::per_second(per_second).allow_burst(burst)),
            _ => Err(format!(
                "a rate limit of {} a second in bursts of {} would refuse every request: both \
                 are at least 1",
                self.per_second, self.burst
            )),
        }
    }
}

/// What a request is counted by (the [module docs](self) say why).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Key {
    /// A session the app issued, by the hash of its cookies.
    Session(u64),
    /// An IPv4 address.
    V4(u32),
    /// An IPv6 address's /64 prefix.
    V6(u64),
    /// No peer address known.
    Unknown,
}

impl Key {
    fn address(peer: Option<SocketAddr>) -> Self {
        match peer.map(|peer| peer.ip().to_canonical()) {
            Some(IpAddr::V4(v4)) => Self::V4(v4.to_bits()),
            Some(IpAddr::V6(v6)) => Self::V6((v6.to_bits() >> 64) as u64),
            None => Self::Unknown,
        }
    }
}

/// At least this many checks between two prunings of the limiter's keys.
const PRUNE_EVERY: usize = 1024;

/// The proxy's limiter: governor's keyed limiter, pruned as it goes.
pub(crate) struct Limiter<C: Clock = DefaultClock> {
    limit: RateLimit,
    limiter: RateLimiter<Key, DashMapStateStore<Key>, C, NoOpMiddleware<C::Instant>>,
    /// Hashes a session's cookies into its key, with a key of the process's own.
    sessions: RandomState,
    /// Checks since the last pruning.
    checks: AtomicUsize,
    /// Checks after which the next pruning is due.
    due: AtomicUsize,
}

impl Limiter {
    /// A limiter for `limit` on the system's clock, or why there can be none.
    pub(crate) fn new(limit: RateLimit) -> Result<Self, String> {
        Self::with_clock(limit, DefaultClock::default())
    }
}

impl<C: Clock> Limiter<C> {
    fn with_clock(limit: RateLimit, clock: C) -> Result<Self, String> {
        Ok(Self {
            limit,
            limiter: RateLimiter::new(limit.quota()?, DashMapStateStore::default(), clock),
            sessions: RandomState::new(),
            checks: AtomicUsize::new(0),
            due: AtomicUsize::new(PRUNE_EVERY),
        })
    }

    /// The limit it holds.
    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Counts a request with `headers` from `peer`, to a source whose calls carry `session`;
    /// refused when it is over the limit.
    pub(crate) fn check(
        &self,
        session: Option<&courier_layers::session::SessionLayer>,
        headers: &HeaderMap,
        peer: Option<SocketAddr>,
    ) -> Result<(), Refusal> {
        let key = match session.and_then(|session| session.signed_session(headers)) {
            Some(session) => Key::Session(self.sessions.hash_one(session)),
            None => Key::address(peer),
        };
        self.check_key(key)
    }

    fn check_key(&self, key: Key) -> Result<(), Refusal> {
        let checked = self.limiter.check_key(&key);
        self.prune_when_due();
        checked.map_err(|over| {
            let wait = over.wait_time_from(self.limiter.clock().now());
            tracing::debug!(?key, ?wait, "a request over the rate limit was refused");
            Refusal::RateLimited {
                retry_after_secs: courier_core::wire::retry_after_secs(wait),
                limit: self.limit,
                session: matches!(key, Key::Session(_)),
            }
        })
    }

    /// Drops the keys whose state is a fresh one's, once enough checks have passed since the
    /// last time: as many as the keys it left, and at least [`PRUNE_EVERY`].
    fn prune_when_due(&self) {
        let checks = self.checks.fetch_add(1, Ordering::Relaxed) + 1;
        let due = self.due.load(Ordering::Relaxed);
        // Of the checks that find it due at once, the one that resets the count prunes.
        if checks < due || self.checks.swap(0, Ordering::Relaxed) < due {
            return;
        }
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
        self.due
            .store(self.limiter.len().max(PRUNE_EVERY), Ordering::Relaxed);
    }

    /// The keys kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.limiter.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::{CsrfKey, SessionOptions};
    use courier_layers::session::{csrf, SessionLayer};
    use governor::clock::FakeRelativeClock;
    use std::time::Duration;

    fn limiter(limit: RateLimit) -> Limiter<FakeRelativeClock> {
        Limiter::with_clock(limit, FakeRelativeClock::default()).unwrap()
    }

    fn peer(address: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(address.parse().unwrap(), 40_000))
    }

    fn retry_after(refused: Result<(), Refusal>) -> u64 {
        match refused {
            Err(Refusal::RateLimited {
                retry_after_secs, ..
            }) => retry_after_secs,
            other => panic!("not a rate limit's refusal: {other:?}"),
        }
    }

    #[test]
    fn a_burst_then_one_request_per_interval_and_the_wait_rounded_up() {
        let limiter = limiter(RateLimit::per_second(2).burst(3));
        let me = || limiter.check(None, &HeaderMap::new(), peer("192.0.2.1"));
        for _ in 0..3 {
            me().unwrap();
        }
        // The next place comes in half a second: `Retry-After` says 1.
        assert_eq!(retry_after(me()), 1);
        limiter.limiter.clock().advance(Duration::from_millis(500));
        me().unwrap();
        assert_eq!(retry_after(me()), 1);
        // Another address has its own count.
        limiter
            .check(None, &HeaderMap::new(), peer("192.0.2.2"))
            .unwrap();
    }

    #[test]
    fn an_ipv6_client_is_counted_by_its_64_and_a_mapped_ipv4_as_ipv4() {
        let limiter = limiter(RateLimit::per_second(1));
        let headers = HeaderMap::new();
        limiter
            .check(None, &headers, peer("2001:db8:1:2::1"))
            .unwrap();
        // Another address of the same /64 shares the count.
        assert_eq!(
            retry_after(limiter.check(None, &headers, peer("2001:db8:1:2:ffff::7"))),
            1
        );
        limiter
            .check(None, &headers, peer("2001:db8:1:3::1"))
            .unwrap();
        limiter.check(None, &headers, peer("192.0.2.9")).unwrap();
        assert!(limiter
            .check(None, &headers, peer("::ffff:192.0.2.9"))
            .is_err());
        // Without a peer, one shared count.
        limiter.check(None, &headers, None).unwrap();
        assert!(limiter.check(None, &headers, None).is_err());
    }

    fn cookies(cookie: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::COOKIE, cookie.parse().unwrap());
        headers
    }

    #[test]
    fn a_signed_session_has_its_own_count_and_made_up_cookies_count_by_address() {
        let key = CsrfKey::new(*b"0123456789abcdef0123456789abcdef");
        let session = SessionLayer::new(SessionOptions::new().cookies(["sid"]).csrf_signed(
            "csrf",
            "x-csrf-token",
            key.clone(),
        ));
        let limiter = limiter(RateLimit::per_second(1));
        let signed = |sid: &str| {
            let token = csrf::issue(&key, &format!("sid={sid}")).unwrap();
            cookies(&format!("sid={sid}; csrf={token}"))
        };
        let (alice, bob) = (signed("alice"), signed("bob"));
        let from = peer("192.0.2.1");
        limiter.check(Some(&session), &alice, from).unwrap();
        let Err(Refusal::RateLimited { session: true, .. }) =
            limiter.check(Some(&session), &alice, from)
        else {
            panic!("alice is over her session's limit");
        };
        // Alice from another address: still her session's count.
        assert!(limiter
            .check(Some(&session), &alice, peer("198.51.100.1"))
            .is_err());
        // Bob, and a request with no session, from the same address: counts of their own.
        limiter.check(Some(&session), &bob, from).unwrap();
        limiter
            .check(Some(&session), &HeaderMap::new(), from)
            .unwrap();
        // Made-up sessions count by address, whatever their values: the address's count is
        // spent.
        for made_up in [
            "sid=mallory-1; csrf=x",
            "sid=mallory-2",
            "sid=alice; csrf=1.2",
        ] {
            let Err(Refusal::RateLimited { session: false, .. }) =
                limiter.check(Some(&session), &cookies(made_up), from)
            else {
                panic!("`{made_up}` counts by address");
            };
        }
        // Without a signing key, a session cookie proves nothing: by address too.
        let unsigned = SessionLayer::new(SessionOptions::new().cookies(["sid"]));
        assert!(limiter.check(Some(&unsigned), &alice, from).is_err());
        assert_eq!(limiter.len(), 3, "alice, bob, and one address");
    }

    #[test]
    fn keys_back_to_a_fresh_state_are_pruned_and_the_map_stays_bounded() {
        // One a second in bursts of 2: a key is fresh again 2 s after its last request.
        let limiter = limiter(RateLimit::per_second(1).burst(2));
        let clock = limiter.limiter.clock().clone();
        let headers = HeaderMap::new();
        let mut most = 0;
        // A flood of distinct addresses, 10,000 a (fake) second for 20 s: 200,000 keys in all,
        // 20,000 within any one window.
        for n in 0..200_000u32 {
            if n % 100 == 0 {
                clock.advance(Duration::from_millis(10));
            }
            let address = SocketAddr::new(IpAddr::V4(n.into()), 1);
            limiter.check(None, &headers, Some(address)).unwrap();
            most = most.max(limiter.len());
        }
        // A key is kept up to 2 s after its one request: some 20,000 at a pruning, and as many
        // again by the next.
        assert!(most <= 45_000, "the map grew to {most} keys");
        // Once quiet for the window, the next pruning drops every one of them.
        clock.advance(Duration::from_secs(3));
        for _ in 0..limiter.due.load(Ordering::Relaxed) {
            let _ = limiter.check(None, &headers, peer("192.0.2.1"));
        }
        assert!(limiter.len() <= 1, "{} keys left", limiter.len());
    }

    #[test]
    fn a_limit_of_zero_is_refused() {
        assert!(RateLimit::per_second(0).quota().is_err());
        assert!(RateLimit::per_second(5).burst(0).quota().is_err());
        assert!(RateLimit::per_second(5).quota().is_ok());
    }
}
