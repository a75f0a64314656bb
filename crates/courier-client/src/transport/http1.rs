//! [`Http1Pool`]: the transport's own pool of HTTP/1.1 connections, for `http://` origins.
//!
//! A plain `http://` request that is not HTTP/2 with prior knowledge can only ever go over
//! HTTP/1.1, so the transport sends it on a connection of hyper's `client::conn::http1`, kept in
//! this pool, rather than through hyper-util's pooled client. The one optimisation of the module,
//! and the reason it exists: hyper-util's client spends more on its pool than on the exchange it
//! pools — a checkout raced against a lazily built connect under `select`, a pool key of owned
//! scheme and authority hashed with SipHash on the way out and on the way back, the connector's
//! extra information set on each response, and a future moved by value at each step. Measured on
//! `benches/client.rs` (callgrind, instructions per call on the client's thread), this pool took
//! a call from 39,250 to 33,806 instructions at concurrency 1 and from 43,301 to 37,959 at 64,
//! and a proxied read from 59,834 to 54,123 (BENCHMARKS.md, "Courier's own HTTP/1.1 pool").
//!
//! What it does, as hyper-util's client does it:
//!
//! - **Keep-alive.** A connection goes back to the pool when its answer's body has been read to
//!   the end (at once, for an answer without a body); a body dropped before its end closes the
//!   connection, so no answer is ever read from the middle of another. The most recently used
//!   connection is taken first.
//! - **A connection the server closed is not used.** An idle connection found closed is dropped;
//!   a request hyper hands back unsent because its pooled connection closed under it is sent
//!   again on another (hyper-util's `retry_canceled_requests`), never a request that was sent.
//! - **Limits.** Idle connections older than `pool_idle_timeout` are closed (a task sweeps them
//!   while any are idle); at most `pool_max_idle_per_host` are kept per host, `0` keeping none.
//! - **The request as HTTP/1.1 wants it**: the target in origin form (`/path?query`), `Host` from
//!   the URI's authority (its user information left out, port 80 too) unless the request names
//!   one, and the connection able to hand itself over for an upgrade (`101 Switching Protocols`,
//!   WebSocket), after which it is the caller's and never pooled.
//!
//! Connections are opened with the transport's [`Connector`] (resolver, proxy tunnel, connect
//! timeout); its failure is a [`ConnectFailed`], which [`classify`](crate::classify) counts as a
//! connect error. Each connection is driven by a task of its own on the runtime that opened it,
//! which is why the transport keeps one pool per thread of a single-threaded runtime
//! ([`Pooled`](super::pooled::Pooled)).

use super::connect::Connector;
use super::error::Missing;
use courier_core::{Body, BoxError};
use http::header::{Entry, HOST};
use http::uri::{Authority, Scheme};
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::future::poll_fn;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tower::ServiceExt;

/// Idle HTTP/1.1 connections by origin, and how to open more.
pub(crate) struct Http1Pool {
    connector: Connector,
    limits: Limits,
    idle: Mutex<Idle>,
}

/// How long idle connections are kept, and how many per host.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// `None`: kept until the server closes them.
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_idle_per_host: usize,
}

#[derive(Default)]
struct Idle {
    by_origin: HashMap<Origin, Vec<Parked>>,
    /// Whether a task is sweeping expired connections.
    sweeping: bool,
}

/// The pool's key: the authority, which is the whole origin (every connection here is
/// `http://`). Equal as `Authority` is, ignoring ASCII case; hashed with one write of its bytes,
/// lowercased, where `Authority`'s own `Hash` hands the hasher a byte at a time — the one
/// optimisation of this type: that took 1,400 instructions of a proxied read's checkout and
/// return (callgrind, `benches/proxy_hop.sh`).
#[derive(PartialEq, Eq)]
struct Origin(Authority);

impl Hash for Origin {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let text = self.0.as_str();
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            state.write(text.to_ascii_lowercase().as_bytes());
        } else {
            state.write(text.as_bytes());
        }
    }
}

/// An idle connection and since when.
struct Parked {
    sender: SendRequest<Body>,
    since: Instant,
}

impl Http1Pool {
    pub(crate) fn new(connector: Connector, limits: Limits) -> Self {
        Self {
            connector,
            limits,
            idle: Mutex::new(Idle::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        // Each change to the map is one call that cannot leave it half made.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request`, an `http://` request, on a pooled connection to its origin or a new one.
    pub(crate) async fn send(
        self: Arc<Self>,
        mut request: Request<Body>,
    ) -> Result<Response<Body>, BoxError> {
        let Some(authority) = request.uri().authority().cloned() else {
            return Err(Box::new(NoHost));
        };
        name_host(&mut request, &authority);
        origin_form(request.uri_mut());
        let origin = Origin(authority);
        loop {
            let (mut sender, reused) = match self.checkout(&origin) {
                Some(sender) => (sender, true),
                None => (self.connect(&origin.0).await?, false),
            };
            if reused && poll_fn(|cx| sender.poll_ready(cx)).await.is_err() {
                // Closed while it waited in the pool: try the next.
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(response) => return Ok(self.answer(response, sender, origin)),
                Err(mut error) => match error.take_message() {
                    // Never written: a pooled connection closed under it. Another may serve.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(Box::new(error.into_error())),
                },
            }
        }
    }

    /// The most recently parked open connection to `origin`, dropping the closed and expired
    /// ones before it.
    fn checkout(&self, origin: &Origin) -> Option<SendRequest<Body>> {
        let mut idle = self.lock();
        let parked = idle.by_origin.get_mut(origin)?;
        let mut now = None;
        while let Some(Parked { sender, since }) = parked.pop() {
            let expired = self.limits.idle_timeout.is_some_and(|timeout| {
                now.get_or_insert_with(Instant::now).duration_since(since) >= timeout
            });
            if !expired && !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    /// Opens a connection to `authority` and starts the task that drives it.
    async fn connect(&self, authority: &Authority) -> Result<SendRequest<Body>, BoxError> {
        // `Pooled::call` checked for a runtime; this future could still be moved out of it
        // before it first connects, and neither the resolver nor the connection's task would
        // start there: an error, not tokio's panic.
        let Ok(runtime) = Handle::try_current() else {
            return Err(Box::new(Missing("the transport needs a tokio runtime")));
        };
        let failed = |source| Box::new(ConnectFailed { source }) as BoxError;
        let origin = Uri::builder()
            .scheme(Scheme::HTTP)
            .authority(authority.clone())
            .path_and_query("/")
            .build()
            .map_err(|error| failed(error.into()))?;
        let io = self
            .connector
            .clone()
            .oneshot(origin)
            .await
            .map_err(failed)?;
        let (sender, connection) = http1::handshake(io).await.map_err(|e| failed(e.into()))?;
        runtime.spawn(async move {
            if let Err(error) = connection.with_upgrades().await {
                tracing::debug!(%error, "an upstream HTTP/1.1 connection failed");
            }
        });
        Ok(sender)
    }

    /// `response` as the caller gets it, its connection parked again once the body has been
    /// read to its end.
    fn answer(
        self: &Arc<Self>,
        response: Response<Incoming>,
        sender: SendRequest<Body>,
        origin: Origin,
    ) -> Response<Body> {
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            // The connection is the caller's now, through `hyper::upgrade::on`.
            return response.map(Body::new);
        }
        if http_body::Body::is_end_stream(response.body()) {
            self.park(origin, sender);
            return response.map(Body::new);
        }
        let give_back = GiveBack {
            pool: Arc::clone(self),
            origin,
            sender,
        };
        response.map(|body| {
            Body::new(Pooling {
                body,
                give_back: Some(give_back),
            })
        })
    }

    /// Keeps `sender` for the next request to `origin`, within the limits.
    fn park(self: &Arc<Self>, origin: Origin, sender: SendRequest<Body>) {
        if self.limits.max_idle_per_host == 0 || sender.is_closed() {
            return;
        }
        let mut idle = self.lock();
        let sweep = match self.limits.idle_timeout {
            Some(every) if !idle.sweeping => {
                // Without a runtime to sweep on, an idle connection would linger: keep none.
                let Ok(runtime) = Handle::try_current() else {
                    return;
                };
                idle.sweeping = true;
                Some((runtime, every))
            }
            _ => None,
        };
        let parked = idle.by_origin.entry(origin).or_default();
        if parked.len() < self.limits.max_idle_per_host {
            parked.push(Parked {
                sender,
                since: Instant::now(),
            });
        }
        drop(idle);
        if let Some((runtime, every)) = sweep {
            runtime.spawn(sweep_every(Arc::downgrade(self), every));
        }
    }
}

/// Closes the connections idle for `every` or longer, every `every`, until none is idle or the
/// pool is gone.
async fn sweep_every(pool: Weak<Http1Pool>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let now = Instant::now();
        let mut idle = pool.lock();
        idle.by_origin.retain(|_, parked| {
            parked.retain(|p| !p.sender.is_closed() && now.duration_since(p.since) < every);
            !parked.is_empty()
        });
        if idle.by_origin.is_empty() {
            idle.sweeping = false;
            return;
        }
    }
}

impl fmt::Debug for Http1Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http1Pool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What parks a connection again once its answer's body has ended.
struct GiveBack {
    pool: Arc<Http1Pool>,
    origin: Origin,
    sender: SendRequest<Body>,
}

/// hyper's body of an answer, which parks its connection when read to the end. Dropped before,
/// it drops the connection with it.
struct Pooling {
    body: Incoming,
    give_back: Option<GiveBack>,
}

impl http_body::Body for Pooling {
    type Data = bytes::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let frame = ready!(Pin::new(&mut self.body).poll_frame(cx));
        let ended = match &frame {
            None => true,
            // hyper's server stops reading a body it sees ended, without asking for `None`.
            Some(Ok(_)) => self.body.is_end_stream(),
            Some(Err(_)) => {
                self.give_back = None;
                false
            }
        };
        if let Some(GiveBack {
            pool,
            origin,
            sender,
        }) = self.give_back.take_if(|_| ended)
        {
            pool.park(origin, sender);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Names the host in `Host`, unless the request already does: the authority without its user
/// information, and without its port when that is 80 — what hyper-util writes. Most authorities
/// already are that text and are copied as they are; the rest are taken apart.
fn name_host(request: &mut Request<Body>, authority: &Authority) {
    let Entry::Vacant(entry) = request.headers_mut().entry(HOST) else {
        return;
    };
    let text = authority.as_str();
    let as_is = !text.contains('@')
        && match text.rfind(':') {
            // A ':' inside an IPv6 address is not a port's.
            Some(colon) if !text[colon..].contains(']') => !is_port_80_or_none(&text[colon + 1..]),
            _ => true,
        };
    let value = if as_is {
        HeaderValue::from_str(text)
    } else {
        match authority.port_u16() {
            Some(port) if port != 80 => {
                HeaderValue::from_str(&format!("{}:{port}", authority.host()))
            }
            _ => HeaderValue::from_str(authority.host()),
        }
    };
    // An authority is ASCII without controls, so always a header value.
    if let Ok(value) = value {
        entry.insert(value);
    }
}

/// An empty port, or 80 however many zeros lead it.
fn is_port_80_or_none(port: &str) -> bool {
    port.is_empty() || port.trim_start_matches('0') == "80"
}

/// The request's target as HTTP/1.1 sends it to an origin server: path and query, `/` when the
/// path is empty.
fn origin_form(uri: &mut Uri) {
    *uri = match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => Uri::from(path.clone()),
        _ => Uri::from_static("/"),
    };
}

/// An `http://` request whose URI names no host.
#[derive(Debug)]
struct NoHost;

impl fmt::Display for NoHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request's URI names no host")
    }
}

impl StdError for NoHost {}

/// A connection to the request's origin could not be opened (resolving, connecting, the proxy's
/// tunnel or its timeout): the cause is the source.
#[derive(Debug)]
pub(crate) struct ConnectFailed {
    source: BoxError,
}

impl fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("could not connect")
    }
}

impl StdError for ConnectFailed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_named(uri: &str, host: Option<&str>) -> Option<String> {
        let mut request = Request::get(uri).body(Body::empty()).unwrap();
        if let Some(host) = host {
            request
                .headers_mut()
                .insert(HOST, HeaderValue::from_str(host).unwrap());
        }
        let authority = request.uri().authority().unwrap().clone();
        name_host(&mut request, &authority);
        request
            .headers()
            .get(HOST)
            .map(|value| value.to_str().unwrap().to_owned())
    }

    #[test]
    fn the_host_is_the_authority_without_user_information_or_port_80() {
        let cases = [
            ("http://127.0.0.1:8080/users/7", "127.0.0.1:8080"),
            ("http://example.com/", "example.com"),
            ("http://Example.COM:8000/a?b=c", "Example.COM:8000"),
            ("http://[::1]:9000/", "[::1]:9000"),
            ("http://[::1]/", "[::1]"),
            ("http://[::1]:80/", "[::1]"),
            ("http://example.com:80/", "example.com"),
            ("http://example.com:0080/", "example.com"),
            ("http://user:secret@example.com:8080/", "example.com:8080"),
            ("http://user@example.com/", "example.com"),
        ];
        for (uri, host) in cases {
            assert_eq!(host_named(uri, None).as_deref(), Some(host), "{uri}");
        }
    }

    #[test]
    fn a_host_the_caller_set_is_kept() {
        assert_eq!(
            host_named("http://127.0.0.1:8080/", Some("api.example.com")).as_deref(),
            Some("api.example.com")
        );
    }

    #[test]
    fn origins_equal_ignoring_case_hash_alike() {
        use std::hash::BuildHasher;
        let hasher = std::collections::hash_map::RandomState::new();
        let origin = |text: &str| Origin(text.parse().unwrap());
        let (lower, mixed) = (
            origin("api.example.com:8080"),
            origin("API.Example.com:8080"),
        );
        assert!(lower == mixed);
        assert_eq!(hasher.hash_one(&lower), hasher.hash_one(&mixed));
        assert!(lower != origin("api.example.com:8081"));
        let mut pool = HashMap::new();
        pool.insert(lower, 1);
        assert_eq!(pool.get(&mixed), Some(&1));
    }

    #[test]
    fn the_target_is_in_origin_form() {
        for (uri, target) in [
            ("http://example.com", "/"),
            ("http://example.com/", "/"),
            ("http://example.com/a/b?c=d&e", "/a/b?c=d&e"),
            ("http://example.com/?q", "/?q"),
        ] {
            let mut uri: Uri = uri.parse().unwrap();
            origin_form(&mut uri);
            assert_eq!(uri, target);
            assert!(uri.authority().is_none() && uri.scheme().is_none());
        }
    }
}
