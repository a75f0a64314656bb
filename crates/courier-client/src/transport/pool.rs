//! [`Pool`]: the transport's own connection pool, over hyper's `client::conn`.
//!
//! Every request the default transport sends goes through this pool: on a pooled HTTP/1.1
//! connection, on the one shared HTTP/2 connection of its origin, or on a new connection of
//! either kind — HTTP/2 when TLS's ALPN picked `h2` or the transport is `http2_only`, HTTP/1.1
//! otherwise. The one optimisation of the module, and the reason it exists instead of
//! hyper-util's pooled client: hyper-util's client spends more on its pool than on the exchange
//! it pools — a checkout raced against a lazily built connect under `select`, a pool key of owned
//! scheme and authority hashed with SipHash a byte at a time on the way out and on the way back,
//! the connector's extra information set on each response, and a future moved by value at each
//! step. Measured on `benches/client.rs` (callgrind, instructions per call on the client's
//! thread, plain `http://`), this pool took a call from 39,250 to 33,741 instructions at
//! concurrency 1 and from 43,301 to 37,996 at 64, and a proxied read from 59,834 to 53,903
//! (docs/benchmarks-history.md, "Courier's own HTTP/1.1 pool").
//!
//! What it does, as hyper-util's client does it:
//!
//! - **HTTP/1.1 keep-alive.** A connection goes back to the pool when its answer's body has been
//!   read to the end (at once, for an answer without a body); a body dropped before its end
//!   closes the connection, so no answer is ever read from the middle of another. The most
//!   recently used connection is taken first.
//! - **HTTP/2 shared.** An origin's HTTP/2 connection carries every call to it at once, until it
//!   closes or has not been used for `pool_idle_timeout`. Calls that open connections at the
//!   same moment each open one; the first kept serves the rest.
//! - **A connection the server closed is not used.** An idle connection found closed is dropped;
//!   a request hyper hands back unsent because its pooled connection closed under it is sent
//!   again on another (hyper-util's `retry_canceled_requests`), never a request that was sent.
//! - **Limits.** Idle connections older than `pool_idle_timeout` are closed (a task sweeps them
//!   while any are idle); at most `pool_max_idle_per_host` HTTP/1.1 connections are kept per
//!   host; `0` keeps none, of either kind.
//! - **The request as each version wants it.** Over HTTP/1.1, the target in origin form
//!   (`/path?query`; an authority for `CONNECT`), `Host` from the URI's authority (its user
//!   information left out, the scheme's default port too) unless the request names one, and the
//!   connection able to hand itself over for an upgrade (`101 Switching Protocols`, WebSocket),
//!   after which it is the caller's and never pooled. Over HTTP/2, the URI as it is, from which
//!   hyper takes `:scheme` and `:authority`.
//!
//! Connections are opened with the transport's [`Connector`] (resolver, TLS, proxy tunnel,
//! connect timeout); its failure is a [`ConnectFailed`], which [`classify`](crate::classify)
//! counts as a connect error. Each connection is driven by a task of its own on the runtime that
//! opened it, which is why the transport keeps one pool per thread of a single-threaded runtime
//! ([`Pooled`](super::pooled::Pooled)).

use super::connect::Connector;
use super::error::Missing;
use courier_core::{Body, BoxError};
use http::header::{Entry, HOST};
use http::uri::{Authority, Scheme};
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::client::legacy::connect::Connection as _;
use hyper_util::rt::{TokioExecutor, TokioTimer};
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

/// Idle connections by origin, and how to open more.
pub(crate) struct Pool {
    connector: Connector,
    settings: Settings,
    idle: Mutex<Idle>,
}

/// How connections are made and kept.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// `None`: kept until the server closes them.
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_idle_per_host: usize,
    /// Every connection speaks HTTP/2: with prior knowledge over `http://`, `h2` alone offered
    /// by TLS over `https://`.
    pub(crate) http2_only: bool,
}

#[derive(Default)]
struct Idle {
    /// The first origin the pool kept a connection of, its own: see [`Home`].
    home: Option<Home>,
    /// Every other origin's.
    by_origin: HashMap<Origin, Kept>,
    /// Whether a task is sweeping expired connections.
    sweeping: bool,
}

/// The pool's own origin: the first it kept a connection of, which for a client's transport is
/// its source's base URL, the origin of almost every call. It is found by comparing, not by
/// hashing as the others are (twice a call: out of the pool and back), and its `Host` value is
/// made once. The one optimisation of this type: a direct call 32,990 -> 31,687 instructions at
/// c1 and 37,159 -> 35,758 at c64 (callgrind, `benches/client.rs`; hyper-util's 32,397 and
/// 35,624 in the same binary), a proxied read 60,464 -> 59,190 (`courier serve --threads 1`, as
/// `benches/proxy_hop.sh --callgrind` counts).
struct Home {
    origin: Origin,
    /// The `Host` value a request to `origin` is sent with ([`host_value`]).
    host: Option<HeaderValue>,
    kept: Kept,
}

impl Idle {
    /// `origin`'s connections, when the pool has a place for them.
    fn get_mut(&mut self, origin: &Origin) -> Option<&mut Kept> {
        match &mut self.home {
            Some(home) if home.origin == *origin => Some(&mut home.kept),
            _ => self.by_origin.get_mut(origin),
        }
    }

    /// `origin`'s connections, given a place if they have none: the home, while there is none.
    fn entry(&mut self, origin: Origin) -> &mut Kept {
        let home = self.home.get_or_insert_with(|| Home {
            host: host_value(&origin).ok(),
            origin: origin.clone(),
            kept: Kept::default(),
        });
        if home.origin == origin {
            &mut home.kept
        } else {
            self.by_origin.entry(origin).or_default()
        }
    }

    /// The `Host` value of `origin` when it is the home, written exactly as the home's (origins
    /// equal ignoring case may still write their hosts differently).
    fn home_host(&self, origin: &Origin) -> Option<HeaderValue> {
        let home = self.home.as_ref()?;
        let same = home.origin.https == origin.https
            && home.origin.authority.as_str() == origin.authority.as_str();
        same.then(|| home.host.clone()).flatten()
    }
}

/// An origin's connections in the pool.
#[derive(Default)]
struct Kept {
    /// Idle HTTP/1.1 connections, the most recently parked last.
    http1: Vec<Parked>,
    /// The HTTP/2 connection every call shares, and when a call last took it.
    http2: Option<(http2::SendRequest<Body>, Instant)>,
}

impl Kept {
    fn is_empty(&self) -> bool {
        self.http1.is_empty() && self.http2.is_none()
    }
}

/// The pool's key: scheme and authority. Equal as `Authority` is, ignoring ASCII case; hashed
/// with one write of its bytes, lowercased, where `Authority`'s own `Hash` hands the hasher a byte
/// at a time; compared byte for byte before ignoring case, where `Authority`'s own equality
/// lowercases both a byte at a time. The one optimisation of this type: together they saved
/// 1,774 of a proxied read's instructions in its checkout and return, 3.3 % (callgrind,
/// `benches/proxy_hop.sh`; BENCHMARKS.md).
#[derive(Clone)]
struct Origin {
    https: bool,
    authority: Authority,
}

impl PartialEq for Origin {
    fn eq(&self, other: &Self) -> bool {
        let (mine, theirs) = (self.authority.as_str(), other.authority.as_str());
        self.https == other.https && (mine == theirs || mine.eq_ignore_ascii_case(theirs))
    }
}

impl Eq for Origin {}

impl Hash for Origin {
    // The scheme is left out: an `http://` and an `https://` origin of one authority share a
    // hash, which equality tells apart.
    fn hash<H: Hasher>(&self, state: &mut H) {
        let text = self.authority.as_str();
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            state.write(text.to_ascii_lowercase().as_bytes());
        } else {
            state.write(text.as_bytes());
        }
    }
}

/// An idle HTTP/1.1 connection and since when.
struct Parked {
    sender: http1::SendRequest<Body>,
    since: Instant,
}

/// A connection to send one request on.
enum Sender {
    Http1(http1::SendRequest<Body>),
    Http2(http2::SendRequest<Body>),
}

impl Sender {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<hyper::Result<()>> {
        match self {
            Sender::Http1(sender) => sender.poll_ready(cx),
            Sender::Http2(sender) => sender.poll_ready(cx),
        }
    }
}

impl Pool {
    pub(crate) fn new(connector: Connector, settings: Settings) -> Self {
        Self {
            connector,
            settings,
            idle: Mutex::new(Idle::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        // Each change to the map is one call that cannot leave it half made.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` on a pooled connection to its origin or a new one.
    ///
    /// `request` is the argument itself, not rebound to a local: rebound, it was kept twice in
    /// the future (1,128 bytes where 872 do, which puts the boxed future inside glibc's
    /// per-thread cache): 33,282 → 32,967 instructions a direct call at c1, 37,451 → 37,235 at
    /// c64 (callgrind, `benches/client.rs`).
    pub(crate) async fn send(
        self: Arc<Self>,
        mut request: Request<Body>,
    ) -> Result<Response<Body>, BoxError> {
        let https = match request.uri().scheme() {
            Some(scheme) if *scheme == Scheme::HTTPS => true,
            Some(scheme) if *scheme == Scheme::HTTP => false,
            _ => return Err(Box::new(NotHttp)),
        };
        let Some(authority) = request.uri().authority().cloned() else {
            return Err(Box::new(NoHost));
        };
        let origin = Origin { https, authority };
        loop {
            let (mut sender, reused, host) = match self.checkout(&origin) {
                Some((sender, host)) => (sender, true, host),
                // Boxed: opening a connection is rare, and its future, unboxed, would be most of
                // this one's size on every call.
                None => (Box::pin(self.connect(&origin)).await?, false, None),
            };
            if reused && poll_fn(|cx| sender.poll_ready(cx)).await.is_err() {
                // Closed while it waited in the pool: try the next.
                continue;
            }
            let sent = match &mut sender {
                Sender::Http1(http1) => {
                    name_host(&mut request, &origin, host);
                    target_form(&mut request);
                    http1.try_send_request(request).await
                }
                Sender::Http2(http2) => http2.try_send_request(request).await,
            };
            match sent {
                Ok(response) => return Ok(self.answer(response, sender, origin)),
                Err(mut error) => match error.take_message() {
                    // Never written: a pooled connection closed under it. Another may serve.
                    Some(mut unsent) if reused => {
                        // Back to the absolute form, should the next connection be HTTP/2.
                        if let Some(uri) = absolute(unsent.uri(), &origin) {
                            *unsent.uri_mut() = uri;
                        }
                        request = unsent;
                    }
                    _ => return Err(Box::new(error.into_error())),
                },
            }
        }
    }

    /// The origin's HTTP/2 connection if it has one open, else its most recently parked open
    /// HTTP/1.1 connection, dropping the closed and expired ones on the way; with the origin's
    /// `Host` value when the pool has it made ([`Home`]).
    fn checkout(&self, origin: &Origin) -> Option<(Sender, Option<HeaderValue>)> {
        let mut idle = self.lock();
        let host = idle.home_host(origin);
        let kept = idle.get_mut(origin)?;
        let mut now = None;
        let timeout = self.settings.idle_timeout;
        let mut expired = |since: Instant| {
            timeout.is_some_and(|timeout| {
                now.get_or_insert_with(Instant::now).duration_since(since) >= timeout
            })
        };
        if let Some((sender, last_used)) = &mut kept.http2 {
            if !sender.is_closed() && !expired(*last_used) {
                *last_used = now.unwrap_or_else(Instant::now);
                return Some((Sender::Http2(sender.clone()), host));
            }
            kept.http2 = None;
        }
        while let Some(Parked { sender, since }) = kept.http1.pop() {
            if !expired(since) && !sender.is_closed() {
                return Some((Sender::Http1(sender), host));
            }
        }
        None
    }

    /// Opens a connection to `origin`, starts the task that drives it, and keeps it when it is
    /// the origin's first HTTP/2 connection.
    async fn connect(self: &Arc<Self>, origin: &Origin) -> Result<Sender, BoxError> {
        // `Pooled::call` checked for a runtime; this future could still be moved out of it
        // before it first connects, and neither the resolver nor the connection's task would
        // start there: an error, not tokio's panic.
        let Ok(runtime) = Handle::try_current() else {
            return Err(Box::new(Missing::RUNTIME));
        };
        let failed = |source| Box::new(ConnectFailed { source }) as BoxError;
        let address = Uri::builder()
            .scheme(if origin.https {
                Scheme::HTTPS
            } else {
                Scheme::HTTP
            })
            .authority(origin.authority.clone())
            .path_and_query("/")
            .build()
            .map_err(|error| failed(error.into()))?;
        let io = self
            .connector
            .clone()
            .oneshot(address)
            .await
            .map_err(failed)?;
        if self.settings.http2_only || io.connected().is_negotiated_h2() {
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .handshake(io)
                .await
                .map_err(|e| failed(e.into()))?;
            runtime.spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "an upstream HTTP/2 connection failed");
                }
            });
            self.share(origin, &sender);
            return Ok(Sender::Http2(sender));
        }
        let (sender, connection) = http1::handshake(io).await.map_err(|e| failed(e.into()))?;
        runtime.spawn(async move {
            if let Err(error) = connection.with_upgrades().await {
                tracing::debug!(%error, "an upstream HTTP/1.1 connection failed");
            }
        });
        Ok(Sender::Http1(sender))
    }

    /// Keeps `sender` as `origin`'s HTTP/2 connection, unless it has an open one already.
    fn share(self: &Arc<Self>, origin: &Origin, sender: &http2::SendRequest<Body>) {
        if self.settings.max_idle_per_host == 0 {
            return;
        }
        let mut idle = self.lock();
        let Some(sweep) = self.sweep_for(&mut idle) else {
            return;
        };
        let kept = idle.entry(origin.clone());
        if kept
            .http2
            .as_ref()
            .is_none_or(|(shared, _)| shared.is_closed())
        {
            kept.http2 = Some((sender.clone(), Instant::now()));
        }
        drop(idle);
        sweep.start(self);
    }

    /// `response` as the caller gets it; an HTTP/1.1 connection parked again once the body has
    /// been read to its end.
    fn answer(
        self: &Arc<Self>,
        response: Response<Incoming>,
        sender: Sender,
        origin: Origin,
    ) -> Response<Body> {
        let Sender::Http1(sender) = sender else {
            return response.map(Body::new);
        };
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

    /// Keeps an HTTP/1.1 `sender` for the next request to `origin`, within the limits.
    fn park(self: &Arc<Self>, origin: Origin, sender: http1::SendRequest<Body>) {
        if self.settings.max_idle_per_host == 0 || sender.is_closed() {
            return;
        }
        let mut idle = self.lock();
        let Some(sweep) = self.sweep_for(&mut idle) else {
            return;
        };
        let parked = &mut idle.entry(origin).http1;
        if parked.len() < self.settings.max_idle_per_host {
            parked.push(Parked {
                sender,
                since: Instant::now(),
            });
        }
        drop(idle);
        sweep.start(self);
    }

    /// Whether a connection may be kept, and the sweep to start once it is: `None` when the pool
    /// would need a sweeping task and there is no runtime to run one on (then an idle connection
    /// would linger: keep none).
    fn sweep_for(&self, idle: &mut Idle) -> Option<Sweep> {
        let Some(every) = self.settings.idle_timeout else {
            return Some(Sweep(None));
        };
        if idle.sweeping {
            return Some(Sweep(None));
        }
        let runtime = Handle::try_current().ok()?;
        idle.sweeping = true;
        Some(Sweep(Some((runtime, every))))
    }
}

/// A sweeping task to start, if one is needed.
struct Sweep(Option<(Handle, Duration)>);

impl Sweep {
    fn start(self, pool: &Arc<Pool>) {
        if let Some((runtime, every)) = self.0 {
            runtime.spawn(sweep_every(Arc::downgrade(pool), every));
        }
    }
}

/// Closes the connections idle for `every` or longer, every `every`, until none is idle or the
/// pool is gone.
async fn sweep_every(pool: Weak<Pool>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let now = Instant::now();
        let mut idle = pool.lock();
        let sweep = |kept: &mut Kept| {
            kept.http1
                .retain(|p| !p.sender.is_closed() && now.duration_since(p.since) < every);
            if kept
                .http2
                .as_ref()
                .is_some_and(|(s, used)| s.is_closed() || now.duration_since(*used) >= every)
            {
                kept.http2 = None;
            }
            !kept.is_empty()
        };
        if let Some(home) = &mut idle.home {
            sweep(&mut home.kept);
        }
        idle.by_origin.retain(|_, kept| sweep(kept));
        if idle.home.as_ref().is_none_or(|home| home.kept.is_empty()) && idle.by_origin.is_empty() {
            idle.sweeping = false;
            return;
        }
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What parks an HTTP/1.1 connection again once its answer's body has ended.
struct GiveBack {
    pool: Arc<Pool>,
    origin: Origin,
    sender: http1::SendRequest<Body>,
}

/// hyper's body of an HTTP/1.1 answer, which parks its connection when read to the end. Dropped
/// before, it drops the connection with it.
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
/// information, and without its port when that is the scheme's default (80, 443) — what
/// hyper-util writes. The one optimisation of this function: most authorities already are that
/// text and are copied as they are (hyper-util parses and formats the host again for every
/// request, 4.1 % of a direct call's instructions); the rest are taken apart.
/// `known` is that value when the pool has it made already ([`Home`]).
fn name_host(request: &mut Request<Body>, origin: &Origin, known: Option<HeaderValue>) {
    let Entry::Vacant(entry) = request.headers_mut().entry(HOST) else {
        return;
    };
    // An authority is ASCII without controls, so always a header value.
    if let Some(value) = known.or_else(|| host_value(origin).ok()) {
        entry.insert(value);
    }
}

/// The `Host` value of a request to `origin` ([`name_host`]).
fn host_value(origin: &Origin) -> Result<HeaderValue, http::header::InvalidHeaderValue> {
    let authority = &origin.authority;
    let (default_port, default_text) = if origin.https {
        (443, "443")
    } else {
        (80, "80")
    };
    let text = authority.as_str();
    let as_is = !text.contains('@')
        && match text.rfind(':') {
            // A ':' inside an IPv6 address is not a port's.
            Some(colon) if !text[colon..].contains(']') => {
                let port = &text[colon + 1..];
                !port.is_empty() && port.trim_start_matches('0') != default_text
            }
            _ => true,
        };
    if as_is {
        HeaderValue::from_str(text)
    } else {
        match authority.port_u16() {
            Some(port) if port != default_port => {
                HeaderValue::from_str(&format!("{}:{port}", authority.host()))
            }
            _ => HeaderValue::from_str(authority.host()),
        }
    }
}

/// The request's target as HTTP/1.1 sends it to an origin server: path and query (`/` when the
/// path is empty); for `CONNECT`, the authority.
fn target_form(request: &mut Request<Body>) {
    let uri = request.uri();
    let target = if request.method() == Method::CONNECT {
        match uri.authority() {
            Some(authority) => Uri::from(authority.clone()),
            None => return,
        }
    } else {
        match uri.path_and_query() {
            Some(path) if path.as_str() != "/" => Uri::from(path.clone()),
            _ => Uri::from_static("/"),
        }
    };
    *request.uri_mut() = target;
}

/// `uri` in absolute form again if [`target_form`] took its scheme and authority away: `None`
/// when it still has them.
fn absolute(uri: &Uri, origin: &Origin) -> Option<Uri> {
    if uri.scheme().is_some() {
        return None;
    }
    let mut parts = http::uri::Parts::default();
    parts.scheme = Some(if origin.https {
        Scheme::HTTPS
    } else {
        Scheme::HTTP
    });
    parts.authority = Some(origin.authority.clone());
    parts.path_and_query = uri.path_and_query().cloned();
    Uri::from_parts(parts).ok()
}

/// A request whose URI names no host.
#[derive(Debug)]
struct NoHost;

impl fmt::Display for NoHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request's URI names no host")
    }
}

impl StdError for NoHost {}

/// A request whose URI is neither `http://` nor `https://`.
#[derive(Debug)]
struct NotHttp;

impl fmt::Display for NotHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request's URI is not http:// or https://")
    }
}

impl StdError for NotHttp {}

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
        let origin = Origin {
            https: request.uri().scheme() == Some(&Scheme::HTTPS),
            authority: request.uri().authority().unwrap().clone(),
        };
        name_host(&mut request, &origin, None);
        request
            .headers()
            .get(HOST)
            .map(|value| value.to_str().unwrap().to_owned())
    }

    #[test]
    fn the_host_is_the_authority_without_user_information_or_default_port() {
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
            ("https://example.com:443/", "example.com"),
            ("https://example.com:80/", "example.com:80"),
            ("https://example.com:8443/", "example.com:8443"),
            ("http://example.com:443/", "example.com:443"),
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

    fn origin(text: &str) -> Origin {
        Origin {
            https: false,
            authority: text.parse().unwrap(),
        }
    }

    #[test]
    fn the_first_origin_kept_is_the_home_and_the_others_are_kept_beside_it() {
        let mut idle = Idle::default();
        assert!(idle.get_mut(&origin("a.example:80")).is_none());
        idle.entry(origin("a.example:80")).http1.reserve(1);
        idle.entry(origin("b.example")).http2 = None;
        let home = idle.home.as_ref().expect("the first origin is the home");
        assert!(home.origin == origin("a.example:80"));
        // Its `Host` value made as a request's would be: the scheme's default port left out.
        assert_eq!(home.host.as_ref().unwrap(), "a.example");
        assert_eq!(idle.by_origin.len(), 1);
        assert!(idle.by_origin.contains_key(&origin("b.example")));
        // Found again, ignoring case as any origin is; the home's own place, not a second one.
        assert!(idle.get_mut(&origin("A.EXAMPLE:80")).is_some());
        idle.entry(origin("A.Example:80"));
        assert!(idle.get_mut(&origin("b.example")).is_some());
        assert_eq!(idle.by_origin.len(), 1);
        // An `https://` origin of the same authority is another origin.
        let secure = Origin {
            https: true,
            authority: "a.example:80".parse().unwrap(),
        };
        assert!(idle.get_mut(&secure).is_none());
        idle.entry(secure);
        assert_eq!(idle.by_origin.len(), 2);
    }

    #[test]
    fn the_homes_host_is_used_only_for_its_authority_written_alike() {
        let mut idle = Idle::default();
        assert!(idle.home_host(&origin("api.example.com:8080")).is_none());
        idle.entry(origin("api.example.com:8080"));
        assert_eq!(
            idle.home_host(&origin("api.example.com:8080")).unwrap(),
            "api.example.com:8080"
        );
        // Equal ignoring case, but its own `Host` is written as its URI writes it.
        assert!(idle.home_host(&origin("API.example.com:8080")).is_none());
        assert!(idle.home_host(&origin("api.example.com:8081")).is_none());
        let secure = Origin {
            https: true,
            authority: "api.example.com:8080".parse().unwrap(),
        };
        assert!(idle.home_host(&secure).is_none());
        let mut request = Request::get("http://API.example.com:8080/")
            .body(Body::empty())
            .unwrap();
        let mixed = origin("API.example.com:8080");
        name_host(&mut request, &mixed, idle.home_host(&mixed));
        assert_eq!(request.headers()[HOST], "API.example.com:8080");
    }

    #[test]
    fn origins_equal_ignoring_case_hash_alike() {
        use std::hash::BuildHasher;
        let hasher = std::collections::hash_map::RandomState::new();
        let origin = |text: &str| Origin {
            https: false,
            authority: text.parse().unwrap(),
        };
        let (lower, mixed) = (
            origin("api.example.com:8080"),
            origin("API.Example.com:8080"),
        );
        assert!(lower == mixed);
        assert_eq!(hasher.hash_one(&lower), hasher.hash_one(&mixed));
        assert!(lower != origin("api.example.com:8081"));
        let secure = Origin {
            https: true,
            authority: lower.authority.clone(),
        };
        assert!(lower != secure);
        let mut pool = HashMap::new();
        pool.insert(lower, 1);
        assert_eq!(pool.get(&mixed), Some(&1));
    }

    #[test]
    fn a_request_handed_back_unsent_gets_its_absolute_form_again() {
        let origin = Origin {
            https: true,
            authority: "api.example.com:8443".parse().unwrap(),
        };
        let mut request = Request::get("https://api.example.com:8443/a?b")
            .body(Body::empty())
            .unwrap();
        target_form(&mut request);
        assert_eq!(request.uri(), "/a?b");
        let again = absolute(request.uri(), &origin).unwrap();
        assert_eq!(again, "https://api.example.com:8443/a?b");
        assert_eq!(absolute(&again, &origin), None);
    }

    #[test]
    fn the_target_is_in_origin_form_or_an_authority_for_connect() {
        for (method, uri, target) in [
            (Method::GET, "http://example.com", "/"),
            (Method::GET, "http://example.com/", "/"),
            (Method::GET, "http://example.com/a/b?c=d&e", "/a/b?c=d&e"),
            (Method::POST, "https://example.com/?q", "/?q"),
            (
                Method::CONNECT,
                "http://example.com:8080/",
                "example.com:8080",
            ),
        ] {
            let mut request = Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::empty())
                .unwrap();
            target_form(&mut request);
            assert_eq!(request.uri(), target);
            assert!(request.uri().scheme().is_none());
        }
    }
}
