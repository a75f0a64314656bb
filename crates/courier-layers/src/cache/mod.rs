//! [`CacheLayer`]: a read's successful answer kept for a while, and answered again from memory.
//!
//! A read that declares `.cache(CacheOptions::new().revalidate(60))` is answered from upstream
//! once, then from memory for 60 seconds. Where coalescing shares a call only while it is in
//! flight, the cache keeps its answer after it.
//!
//! # Which requests
//!
//! Those for which the layer's [`CacheFor`] gives a [`CacheRule`]. The default, [`FromMeta`],
//! gives one for a read whose [`EndpointMeta`] declares `.cache()` and whose variables are not
//! sensitive; a closure `Fn(&Request<B>) -> Option<CacheRule>` decides instead with
//! [`CacheLayer::cache_for`]. Whatever decides, a request goes straight through, neither
//! looked up nor kept, when its body is streamed (not a [`BufferedBody`]), when it asks for an
//! event stream or an upgrade, or when it says `Cache-Control: no-store`; one that says
//! `no-cache` is not answered from memory, but its fresh answer is kept.
//!
//! # What makes two requests the same
//!
//! What makes them identical for coalescing: the method, the full address, the headers
//! (credentials included: `authorization`, `cookie`) and the body bytes; `x-request-id`,
//! `traceparent` and `tracestate` are left out, and so are `cache-control` and `pragma` (they
//! say how to use the cache, not which answer), and more with [`CacheLayer::ignore_header`].
//! Two users' reads carry different credentials, so one user is never answered with another's
//! answer.
//!
//! # Which answers are kept, and for how long
//!
//! A `200` whose body is read to its end, without `set-cookie` or `Vary: *`, whose
//! `Cache-Control` says neither `no-store` nor `no-cache`. It is fresh for the rule's
//! `revalidate` or the answer's `max-age`, the shorter when both are given; an answer with
//! neither (or 0) is not kept. An answer marked `private` is one user's: it is kept only for a
//! request that carries credentials, whose key holds them. The body is copied as it streams to
//! the caller and kept when it ends; a body the caller drops before its end, one that fails or
//! has trailers, or one larger than [`max_entry_bytes`](CacheLayer::max_entry_bytes), is not
//! kept. A kept answer is given back with an `age` header: the seconds since it was kept.
//!
//! **Stale while revalidate**: with [`CacheRule::stale_while_revalidate`], an answer past its
//! freshness is still given, for that long, while one call fetches a fresh answer in the
//! background (a `tokio` task through a clone of the inner service, bounded by the timeout of
//! the request's [`EndpointMeta`]; without a runtime, the stale answer is not used). If that
//! fetch fails or runs out of time, the next read tries again.
//!
//! # Memory
//!
//! Bounded in answers ([`max_entries`](CacheLayer::max_entries), 1,024 by default) and bytes
//! ([`max_bytes`](CacheLayer::max_bytes), 16 MiB: bodies, headers and keys), the least recently
//! used evicted first when either is passed. Answers past their time are dropped when next
//! looked up. The services a layer makes, and its clones', share one memory.
//!
//! Hits, misses, stale answers, kept answers and evictions are logged with `tracing::debug!`.
//!
//! # Where it goes
//!
//! In courier's stack ([the order its client assembles](crate)), after the session and forwarded
//! headers are set (so the key sees every credential) and before coalescing, so that a miss
//! still shares its call.
//!
//! A courier client leaves a call made over a transport of its own (`.with()` a `fetch` or a
//! `dispatcher`: a client certificate per user, say) out of its cache, both ways: the upstream
//! may answer such a call differently, and the key cannot see a transport.
//!
//! # Compared with tower-http and HTTP caches
//!
//! tower-http has no response cache. This is a private cache in the sense of RFC 9111, smaller:
//! it never revalidates with `If-None-Match` or `If-Modified-Since`, and answers only what it
//! was told to keep (an endpoint's `.cache()`, or the closure), not whatever is cacheable.
//!
//! # Example: on a bare hyper-util client
//!
//! ```
//! use bytes::Bytes;
//! use courier::layers::cache::{CacheLayer, CacheRule};
//! use http::Request;
//! use http_body_util::{BodyExt, Full};
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! # use std::sync::atomic::{AtomicUsize, Ordering};
//! # use std::sync::Arc;
//! use std::time::Duration;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let calls = Arc::new(AtomicUsize::new(0));
//! # let counted = Arc::clone(&calls);
//! # let app = axum::Router::new().route("/rates", axum::routing::get(move || async move {
//! #     format!("rates #{}", counted.fetch_add(1, Ordering::SeqCst) + 1)
//! # }));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let cache = CacheLayer::new().cache_for(|request: &Request<Full<Bytes>>| {
//!     (request.uri().path() == "/rates").then(|| CacheRule::new(Duration::from_secs(60)))
//! });
//! let service = ServiceBuilder::new().layer(cache).service(client);
//!
//! let rates = || Request::get(format!("http://{addr}/rates")).body(Full::default());
//! for _ in 0..3 {
//!     let response = service.clone().oneshot(rates()?).await?;
//!     assert_eq!(response.into_body().collect().await?.to_bytes(), "rates #1");
//! }
//! # assert_eq!(calls.load(Ordering::SeqCst), 1);
//! # Ok(())
//! # }
//! ```
//!
//! [`BufferedBody`]: crate::BufferedBody

mod body;
mod control;
pub mod future;
mod store;
#[cfg(test)]
mod tests;

pub use self::body::CacheBody;

use self::body::Pending;
use self::control::Directives;
use self::future::ResponseFuture;
use self::store::{Answer, Limits, Lookup, Store};
use crate::key::{self, Key};
use crate::{BufferedBody, FromMeta};
use bytes::Bytes;
use courier_core::{BoxError, CacheOptions, EndpointMeta};
use http::header::{AGE, AUTHORIZATION, CACHE_CONTROL, COOKIE};
use http::{HeaderName, HeaderValue, Request, Response};
use http_body_util::BodyExt;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt};

/// How long a request's answer is kept: fresh for `revalidate`, then stale (still answered
/// while a fresh one is fetched) for `stale_while_revalidate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheRule {
    /// How long an answer stays fresh; `None` leaves it to the answer's own `max-age`.
    pub revalidate: Option<Duration>,
    /// How long after that a stale answer is still given while a fresh one is fetched.
    pub stale_while_revalidate: Duration,
}

impl CacheRule {
    /// Fresh for `revalidate` (or the answer's `max-age`, if shorter); no stale answers.
    pub const fn new(revalidate: Duration) -> Self {
        Self {
            revalidate: Some(revalidate),
            stale_while_revalidate: Duration::ZERO,
        }
    }

    /// A stale answer is still given for `time` after its freshness, while a fresh one is
    /// fetched in the background.
    #[must_use]
    pub const fn stale_while_revalidate(mut self, time: Duration) -> Self {
        self.stale_while_revalidate = time;
        self
    }

    /// The `Cache-Control` for a browser that may keep an answer of this rule: `private,
    /// max-age=N`, N the rule's `revalidate` or the answer's own `max-age` when shorter. `None`
    /// when the answer is not a `200`, sets a cookie, says `no-store` or `no-cache`, or neither
    /// gives a time. The proxy puts it on its GET answers for cached reads.
    ///
    /// ```
    /// use courier::layers::cache::CacheRule;
    /// use http::{HeaderMap, StatusCode};
    /// use std::time::Duration;
    ///
    /// let rule = CacheRule::new(Duration::from_secs(60));
    /// let mut headers = HeaderMap::new();
    /// assert_eq!(rule.for_browser(StatusCode::OK, &headers).unwrap(), "private, max-age=60");
    /// headers.insert("cache-control", "max-age=10".parse().unwrap());
    /// assert_eq!(rule.for_browser(StatusCode::OK, &headers).unwrap(), "private, max-age=10");
    /// headers.insert("cache-control", "no-store".parse().unwrap());
    /// assert_eq!(rule.for_browser(StatusCode::OK, &headers), None);
    /// ```
    pub fn for_browser(
        &self,
        status: http::StatusCode,
        headers: &http::HeaderMap,
    ) -> Option<HeaderValue> {
        let max_age = control::browser_max_age(self, status, headers)?;
        // Digits and ASCII text: always a valid header value.
        HeaderValue::try_from(format!("private, max-age={}", max_age.as_secs())).ok()
    }

    /// The rule an endpoint's `.cache()` declares.
    pub fn from_options(options: &CacheOptions) -> Self {
        Self {
            revalidate: options.revalidate.map(Duration::from_secs),
            stale_while_revalidate: Duration::from_secs(
                options.stale_while_revalidate.unwrap_or(0),
            ),
        }
    }
}

/// Which requests [`Cache`] keeps answers for, and for how long; `None` sends a request
/// straight through.
///
/// Implemented by [`FromMeta`] (a read whose [`EndpointMeta::get_cache`] is declared and whose
/// variables are not sensitive) and by any `Fn(&Request<B>) -> Option<CacheRule>`.
pub trait CacheFor<B> {
    /// The rule for `request`'s answer, or `None`.
    fn cache_for(&self, request: &Request<B>) -> Option<CacheRule>;
}

impl<B> CacheFor<B> for FromMeta {
    fn cache_for(&self, request: &Request<B>) -> Option<CacheRule> {
        let meta = request.extensions().get::<EndpointMeta>()?;
        if !meta.is_read() || meta.is_sensitive() {
            return None;
        }
        meta.get_cache().map(CacheRule::from_options)
    }
}

impl<B, F> CacheFor<B> for F
where
    F: Fn(&Request<B>) -> Option<CacheRule>,
{
    fn cache_for(&self, request: &Request<B>) -> Option<CacheRule> {
        self(request)
    }
}

/// Keeps reads' successful answers and answers again from memory; see the
/// [module docs](self).
///
/// The services it makes, and those its clones make, share one memory; a setter of a limit
/// starts a new, empty one.
#[derive(Clone)]
pub struct CacheLayer<C = FromMeta> {
    limits: Limits,
    ignored: Vec<HeaderName>,
    cache_for: C,
    store: Arc<Store>,
}

impl CacheLayer {
    /// A cache of at most 1,024 answers and 16 MiB, answers of 1 MiB at most, for the reads
    /// whose [`EndpointMeta`] declares `.cache()`.
    pub fn new() -> Self {
        let limits = Limits {
            max_entries: 1024,
            max_bytes: 16 << 20,
            max_entry_bytes: 1 << 20,
        };
        Self {
            limits,
            // A request's own `cache-control` (and the older `pragma`) says how to use the
            // cache, not which answer it wants.
            ignored: [
                &key::TRACING_HEADERS[..],
                &[CACHE_CONTROL, HeaderName::from_static("pragma")],
            ]
            .concat(),
            cache_for: FromMeta,
            store: Arc::new(Store::new(limits)),
        }
    }
}

impl Default for CacheLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<C> CacheLayer<C> {
    /// Decides with `cache_for` which requests' answers are kept, and for how long, instead of
    /// their [`EndpointMeta`].
    pub fn cache_for<D>(self, cache_for: D) -> CacheLayer<D> {
        CacheLayer {
            limits: self.limits,
            ignored: self.ignored,
            cache_for,
            store: self.store,
        }
    }

    /// Keeps at most `entries` answers.
    #[must_use]
    pub fn max_entries(mut self, entries: usize) -> Self {
        self.limits.max_entries = entries;
        self.store = Arc::new(Store::new(self.limits));
        self
    }

    /// Keeps at most `bytes` in all: bodies, headers and keys.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_bytes = bytes;
        self.store = Arc::new(Store::new(self.limits));
        self
    }

    /// Keeps no answer whose body is larger than `bytes`.
    #[must_use]
    pub fn max_entry_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_entry_bytes = bytes;
        self.store = Arc::new(Store::new(self.limits));
        self
    }

    /// Leaves `name` out of the comparison too, as [`CoalesceLayer::ignore_header`] does: never
    /// a header that carries credentials or selects what the answer holds.
    ///
    /// [`CoalesceLayer::ignore_header`]: crate::coalesce::CoalesceLayer::ignore_header
    #[must_use]
    pub fn ignore_header(mut self, name: HeaderName) -> Self {
        if !self.ignored.contains(&name) {
            self.ignored.push(name);
        }
        self
    }
}

impl<S, C: Clone> Layer<S> for CacheLayer<C> {
    type Service = Cache<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        Cache {
            inner,
            shared: Arc::new(Shared {
                store: Arc::clone(&self.store),
                ignored: self.ignored.clone().into_boxed_slice(),
            }),
            cache_for: self.cache_for.clone(),
        }
    }
}

impl<C> fmt::Debug for CacheLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheLayer")
            .field("limits", &self.limits)
            .field("ignored_headers", &self.ignored)
            .finish_non_exhaustive()
    }
}

/// What a service and its clones share.
struct Shared {
    store: Arc<Store>,
    ignored: Box<[HeaderName]>,
}

/// Keeps reads' successful answers and answers again from memory; see the
/// [module docs](self).
#[derive(Clone)]
pub struct Cache<S, C = FromMeta> {
    inner: S,
    shared: Arc<Shared>,
    cache_for: C,
}

impl<S> Cache<S> {
    /// Wraps `inner` with the default settings of [`CacheLayer::new`].
    pub fn new(inner: S) -> Self {
        CacheLayer::new().layer(inner)
    }

    /// A [`CacheLayer`] with the default settings.
    pub fn layer() -> CacheLayer {
        CacheLayer::new()
    }
}

impl<S, C> Cache<S, C> {
    define_inner_service_accessors!();

    /// How many answers are kept now.
    pub fn len(&self) -> usize {
        self.shared.store.len()
    }

    /// Whether no answer is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the kept answers count against [`CacheLayer::max_bytes`].
    pub fn bytes(&self) -> usize {
        self.shared.store.bytes()
    }
}

impl<S: fmt::Debug, C> fmt::Debug for Cache<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("inner", &self.inner)
            .field("answers", &self.len())
            .finish_non_exhaustive()
    }
}

impl<S, C, ReqBody, ResBody> Service<Request<ReqBody>> for Cache<S, C>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    C: CacheFor<ReqBody>,
    ReqBody: BufferedBody + Send + 'static,
    ResBody: http_body::Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<CacheBody<ResBody>>;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Whether a request is answered from memory is only known in `call`.
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let Some((rule, key, lookup)) = self.find(&request) else {
            return ResponseFuture::calling(self.inner.call(request), None);
        };
        let endpoint = request
            .extensions()
            .get::<EndpointMeta>()
            .map(|meta| Arc::clone(meta.path_arc()));
        let headers = request.headers();
        // Credentials make an answer marked `private` one user's: then it may be kept.
        let credentials = headers.contains_key(AUTHORIZATION) || headers.contains_key(COOKIE);
        let pending = |key| Pending {
            store: Arc::clone(&self.shared.store),
            key,
            rule,
            credentials,
            endpoint: endpoint.clone(),
        };
        match lookup {
            Some(Lookup::Fresh(answer)) => {
                tracing::debug!(endpoint = endpoint.as_deref(), "cache: hit");
                #[cfg(feature = "metrics")]
                crate::metrics::cache_hit("fresh");
                ResponseFuture::kept(response(answer))
            }
            Some(Lookup::Stale { answer, refresh }) => {
                tracing::debug!(endpoint = endpoint.as_deref(), refresh, "cache: stale hit");
                #[cfg(feature = "metrics")]
                crate::metrics::cache_hit("stale");
                if refresh {
                    let inner = self.inner.clone();
                    let pending = pending(key);
                    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                        runtime.spawn(refresh_answer(inner, request, pending));
                    } else {
                        pending.store.refresh_failed(&pending.key);
                    }
                }
                ResponseFuture::kept(response(answer))
            }
            Some(Lookup::Miss) | None => {
                if lookup.is_some() {
                    tracing::debug!(endpoint = endpoint.as_deref(), "cache: miss");
                }
                ResponseFuture::calling(self.inner.call(request), Some(pending(key)))
            }
        }
    }
}

impl<S, C> Cache<S, C> {
    /// The rule, key and lookup of a request that takes part: `None` for one that goes
    /// straight through; a `None` lookup for a request that says `no-cache` (its answer is
    /// kept, not looked up).
    fn find<B>(&self, request: &Request<B>) -> Option<(CacheRule, Arc<Key>, Option<Lookup>)>
    where
        C: CacheFor<B>,
        B: BufferedBody,
    {
        let rule = self.cache_for.cache_for(request)?;
        let asked = Directives::of(request.headers());
        if asked.no_store {
            return None;
        }
        let key = Key::new(
            request,
            request.body().buffered()?.as_ref(),
            &self.shared.ignored,
        )?;
        let lookup = (!asked.no_cache).then(|| self.shared.store.get(&key, Instant::now()));
        Some((rule, Arc::new(key), lookup))
    }
}

/// The response for a kept answer, with its `age`.
fn response<B>(answer: Answer) -> Response<CacheBody<B>> {
    let mut response = Response::new(CacheBody::kept(answer.body));
    *response.status_mut() = answer.status;
    *response.version_mut() = answer.version;
    *response.headers_mut() = answer.headers;
    let age = answer.stored.elapsed().as_secs();
    response.headers_mut().insert(AGE, HeaderValue::from(age));
    response
}

/// Fetches a fresh answer for a stale one, in the background, and keeps it.
async fn refresh_answer<S, ReqBody, ResBody>(inner: S, request: Request<ReqBody>, pending: Pending)
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Error: Into<BoxError>,
    ResBody: http_body::Body<Data = Bytes>,
{
    let (store, key) = (Arc::clone(&pending.store), Arc::clone(&pending.key));
    // Bounded by the timeout of the call it refreshes for: an upstream that never answers does
    // not hold the refresh (and with it every later one) for ever.
    let deadline = request
        .extensions()
        .get::<EndpointMeta>()
        .and_then(EndpointMeta::get_timeout);
    let kept = async {
        let response = inner.oneshot(request).await.map_err(Into::into)?;
        let (parts, body) = response.into_parts();
        let Some(tee) = pending.tee(&parts) else {
            return Ok::<_, BoxError>(false);
        };
        // Read to its end: the tee keeps it.
        CacheBody::teeing(body, tee)
            .collect()
            .await
            .map_err(|_| BoxError::from("the fresh answer's body failed"))?;
        Ok(true)
    };
    let kept = match deadline {
        Some(after) => tokio::time::timeout(after, kept)
            .await
            .unwrap_or_else(|_| Err("the refresh did not finish within its timeout".into())),
        None => kept.await,
    };
    match kept {
        Ok(true) => tracing::debug!("cache: stale answer refreshed"),
        Ok(false) | Err(_) => {
            tracing::debug!("cache: refreshing a stale answer failed; the next read tries again");
            store.refresh_failed(&key);
        }
    }
}
