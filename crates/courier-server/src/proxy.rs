//! [`Proxy`]: the builder of the proxy route, and the router it becomes.

use crate::package::BrowserPackage;
use crate::rate::{Limiter, RateLimit};
use crate::shutdown::Shutdown;
use crate::{call, places, serve, socket, stream};
use axum::routing::any;
use axum::Router;
use courier_core::ApiDef;
use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// The proxy route over named sources; see the [crate docs](crate).
#[derive(Clone)]
#[must_use]
pub struct Proxy {
    pub(crate) sources: HashMap<String, ApiDef>,
    pub(crate) clients: HashMap<String, courier_client::Client>,
    /// The allow-lists, one layer for every call, stream and channel: which names cross comes
    /// from each call's endpoint (its meta), so nothing of it is built per request.
    pub(crate) allow: courier_layers::allow_headers::AllowHeadersLayer,
    pub(crate) failed: Option<String>,
    pub(crate) http_path: String,
    pub(crate) body_limit: usize,
    pub(crate) multipart_limit: usize,
    pub(crate) body_read_timeout: Duration,
    pub(crate) header_read_timeout: Duration,
    pub(crate) sse_path: String,
    pub(crate) ws_path: Option<String>,
    pub(crate) keep_alive: Duration,
    pub(crate) buffer: usize,
    pub(crate) max_message_size: usize,
    pub(crate) shutdown: Shutdown,
    pub(crate) static_dir: Option<std::path::PathBuf>,
    /// The rate limit on calls, stream openings and channel handshakes, when there is one.
    pub(crate) rate_limit: Option<Arc<Limiter>>,
    /// Where the browser package is served ([`Proxy::browser_package`]), without a trailing `/`.
    browser_package: Option<String>,
    /// The hub of the sources given by definition ([`Proxy::source`]), when one was given.
    hub: Option<courier_live::Hub>,
    /// The sources whose client the proxy builds itself ([`Proxy::source`]).
    built: Vec<String>,
    /// The threads [`Proxy::serve`] serves connections on, when not its own runtime.
    worker_threads: Option<NonZeroUsize>,
    /// The bound on open connections [`Proxy::serve`] holds, unless derived from the
    /// file-descriptor limit.
    max_connections: Option<usize>,
    /// The bound on one client address's open connections, if any.
    max_connections_per_client: Option<NonZeroUsize>,
    /// Whether the clients the proxy builds record their calls' durations, and the call route
    /// its requests'.
    pub(crate) metrics: bool,
}

impl Default for Proxy {
    fn default() -> Self {
        Self::new()
    }
}

impl Proxy {
    /// No sources yet; calls at `/api/request` (JSON bodies up to 1 MiB, uploads up to
    /// 32 MiB), streams at `/api/sse`,
    /// channels nowhere until [`Proxy::ws_path`] is set, a keep-alive comment every 15 s, a buffer of 256 messages per
    /// subscriber, channel messages up to 1 MiB.
    pub fn new() -> Self {
        Self {
            sources: HashMap::new(),
            clients: HashMap::new(),
            allow: courier_layers::allow_headers::AllowHeadersLayer::new(),
            failed: None,
            http_path: "/api/request".to_owned(),
            body_limit: 1024 * 1024,
            multipart_limit: 32 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(60),
            header_read_timeout: Duration::from_secs(30),
            sse_path: "/api/sse".to_owned(),
            ws_path: None,
            keep_alive: Duration::from_secs(15),
            buffer: 256,
            max_message_size: 1024 * 1024,
            shutdown: Shutdown::default(),
            static_dir: None,
            rate_limit: None,
            browser_package: None,
            hub: None,
            built: Vec::new(),
            worker_threads: None,
            max_connections: None,
            max_connections_per_client: None,
            metrics: false,
        }
    }

    /// Serves `api`'s implemented streams and channels as source `name` (the `_s` parameter),
    /// calling its HTTP endpoints with a [`Client`](courier_client::Client) of the definition
    /// that the proxy builds for itself, whose [`Hub`](courier_live::Hub) runs its channels.
    ///
    /// An app whose own handlers call the same source (a `Caller` in its state) gives the proxy
    /// that client instead, with [`Proxy::source_client`]: otherwise there are two clients of
    /// one source, each with its own connection pool, cache, coalescing and hub, so a cached
    /// read is fetched twice and a channel's in-process members and its sockets are in two
    /// different rooms. `examples/bff.rs` mounts the proxy so.
    pub fn source(mut self, name: impl Into<String>, api: ApiDef) -> Self {
        let name = name.into();
        self.build_client(&name, &api);
        self.built.push(name.clone());
        self.sources.insert(name, api);
        self
    }

    /// Serves the implemented channels and streams of the sources given by definition
    /// ([`Proxy::source`], before or after this call) on `hub`: give it a hub over a shared bus
    /// (`courier::live::redis::RedisBus`) and their topics are shared with every instance on that
    /// bus, or the hub your in-process callers use and they share topics with the sockets
    /// served here. Without it, each such source has a hub of its own. A source given with its
    /// client ([`Proxy::source_client`]) keeps its client's hub.
    ///
    /// ```
    /// use courier::live::{Hub, LocalBus};
    /// use courier::server::Proxy;
    ///
    /// let hub = Hub::new(LocalBus::new()); // or Hub::new(RedisBus::connect(url).await?)
    /// let proxy = Proxy::new().hub(hub).ws_path("/api/ws");
    /// # let _ = proxy;
    /// ```
    pub fn hub(mut self, hub: courier_live::Hub) -> Self {
        self.hub = Some(hub);
        for name in self.built.clone() {
            if let Some(api) = self.sources.get(&name).cloned() {
                self.build_client(&name, &api);
            }
        }
        self
    }

    /// Has the proxy record the duration of each request at its call route
    /// ([`SERVER_REQUEST_DURATION`](crate::SERVER_REQUEST_DURATION):
    /// `http.server.request.duration` by method, route, status, error and endpoint, each label
    /// of a fixed set whatever a request says), and the clients it builds for its sources
    /// ([`Proxy::source`]) each call's (`ClientBuilder::metrics`: `http.client.request.duration`
    /// by endpoint, method, status and error); beside what the proxy counts of itself whether or
    /// not this is set: `courier.proxy.refusals` by code, and the gauges
    /// `courier.proxy.open_streams` and `courier.proxy.open_channels`. All of it through the
    /// `metrics` facade, to whatever recorder the app installs (`courier serve --metrics`
    /// installs a Prometheus one). Off by default, when the call route spends a branch on it. A
    /// source given with its client ([`Proxy::source_client`]) records its calls as that client
    /// was built.
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        for name in self.built.clone() {
            if let Some(api) = self.sources.get(&name).cloned() {
                self.build_client(&name, &api);
            }
        }
        self
    }

    /// The client of a source given by definition, on the proxy's hub when it has one.
    fn build_client(&mut self, name: &str, api: &ApiDef) {
        let mut builder = courier_client::Client::builder(api.clone()).metrics(self.metrics);
        if let Some(hub) = &self.hub {
            builder = builder.hub(hub.clone());
        }
        match builder.build() {
            Ok(client) => {
                self.clients.insert(name.to_owned(), client);
            }
            Err(e) => {
                self.failed
                    .get_or_insert_with(|| format!("source `{name}`: {e}"));
            }
        }
    }

    /// Calls `name`'s HTTP endpoints through `client` (its transport, retry policy and layers)
    /// instead of a default [`Client`](courier_client::Client) of the source's definition, and
    /// serves its channels on the client's hub.
    pub fn source_client(
        mut self,
        name: impl Into<String>,
        client: courier_client::Client,
    ) -> Self {
        let name = name.into();
        self.built.retain(|built| *built != name);
        self.sources.insert(name.clone(), client.api().clone());
        self.clients.insert(name, client);
        self
    }

    /// The path of HTTP calls. Default `/api/request`.
    pub fn http_path(mut self, path: impl Into<String>) -> Self {
        self.http_path = path.into();
        self
    }

    /// The largest JSON request body (`{"variables": …}`) a call may carry, in bytes; a larger
    /// one is refused with 413. Default 1 MiB.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The largest multipart request body (an upload's form) a call may carry, in bytes; a
    /// larger one is refused with 413, from its declared length before the call, or once it
    /// grows past the limit (the upstream's request then breaks off). Default 32 MiB. The form
    /// is handed on to the upstream as it arrives, never held whole: only its text fields before
    /// the first file are read first, and held to [`Proxy::body_limit`].
    pub fn multipart_limit(mut self, bytes: usize) -> Self {
        self.multipart_limit = bytes;
        self
    }

    /// How long a call's request body may take to arrive, whole, once its head has; a body
    /// still arriving then is refused with 408 and its connection closed. Default 60 s. It
    /// bounds uploads too: raise it with [`Proxy::multipart_limit`] for large, slow ones.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long a connection served by [`Proxy::serve`] may take to send a request's head
    /// (its request line and headers), counted from when the server starts waiting for it; a
    /// connection that has not sent it whole by then — one that sends half a head, or trickles
    /// a byte at a time, or sits idle between keep-alive requests — is closed. Default 30 s.
    /// HTTP/1 only (HTTP/2 is framed, and its frames are hyper's to bound).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// At most `limit`'s requests a second — calls, stream openings and channel handshakes,
    /// counted together — per session, or per client address for a request without one, in
    /// bursts of its size; one over it is refused `429 Too Many Requests` with `Retry-After`
    /// (whole seconds) and `RATE_LIMITED`, before anything is read of its body, sent upstream
    /// or opened in the hub. Default: no limit.
    ///
    /// A request is counted by its session only when the session is one the app issued: its
    /// CSRF cookie holds a token signed for its session cookies with the source's key
    /// ([`SessionOptions::csrf_signed`](courier_core::SessionOptions::csrf_signed)). Any other
    /// request — a session cookie the proxy cannot verify being a value a client can make up
    /// anew for each request — is counted by the peer's IP address (an IPv6 address by its
    /// /64). The memory it takes stays bounded however many keys clients send.
    /// `docs/SECURITY.md` says what it defends against and what not.
    ///
    /// A limit of zero (either number) makes [`Proxy::into_router`] fail.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::server::{Proxy, RateLimit};
    ///
    /// let proxy = Proxy::new().rate_limit(RateLimit::per_second(10).burst(20));
    /// let stop = proxy.shutdown_handle();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let served = tokio::spawn(proxy.serve(listener));
    /// stop.begin();
    /// served.await??;
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        match Limiter::new(limit) {
            Ok(limiter) => self.rate_limit = Some(Arc::new(limiter)),
            Err(e) => {
                self.failed.get_or_insert(e);
            }
        }
        self
    }

    /// The path of streams. Default `/api/sse`.
    pub fn sse_path(mut self, path: impl Into<String>) -> Self {
        self.sse_path = path.into();
        self
    }

    /// The path of channels. No default (as the browser package's `proxyPath.ws`): without
    /// one, channels are not served.
    pub fn ws_path(mut self, path: impl Into<String>) -> Self {
        self.ws_path = Some(path.into());
        self
    }

    /// How long a stream may stay silent before a `: keep-alive` comment. Default 15 s.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval;
        self
    }

    /// Messages a channel subscriber may fall behind before it is closed with 1013.
    /// Default 256.
    pub fn buffer(mut self, messages: usize) -> Self {
        self.buffer = messages.max(1);
        self
    }

    /// The largest message a channel subscriber may send, in bytes. Default 1 MiB.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Also serves the files under `dir` (tower-http's `ServeDir`: `index.html` for a
    /// directory, content types by extension, no path out of `dir`, `x-content-type-options:
    /// nosniff` on every file), at every path the proxy's own do not take: the app's front end
    /// and its proxy on one origin, with no other server — what a backend-for-frontend needs
    /// for the session's cookies and origin checks. `[static] dir` in `courier.toml`.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::server::Proxy;
    ///
    /// let site = tempfile::tempdir()?;
    /// std::fs::write(site.path().join("index.html"), "<h1>hello</h1>")?;
    /// let app = Proxy::new().static_dir(site.path()).into_router()?;
    /// # use tower::ServiceExt;
    /// let page = app.oneshot(http::Request::get("/").body(axum::body::Body::empty())?).await?;
    /// assert_eq!(page.status(), 200);
    /// assert_eq!(page.headers()["content-type"], "text/html");
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn static_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.static_dir = Some(dir.into());
        self
    }

    /// Also serves the browser package (`courier-browser`, its ES modules as built in the
    /// repository's `js/dist/`, embedded in the binary) under `path`: `GET {path}/index.js` and
    /// every module it imports (relative imports, so all from the same folder), each with
    /// `content-type: text/javascript; charset=utf-8`, a strong `etag` (`If-None-Match` is
    /// answered 304) and `cache-control: no-cache` (a new binary serves new modules at the same
    /// addresses: a browser revalidates, and a 304 costs nothing); their source maps
    /// (`index.js.map`, with the TypeScript sources) beside them. `GET` and `HEAD`; a name the
    /// package does not hold is 404, as under [`Proxy::static_dir`], with `x-content-type-options:
    /// nosniff` on every file. A page then needs no npm step, only an import map:
    /// `{"imports": {"courier-browser": "/courier/index.js"}}`. `[static] package` in
    /// `courier.toml`.
    ///
    /// `path` starts with `/` and is not `/` itself (a trailing `/` is dropped), holds no `?`,
    /// `#`, `{` or `}`, and is none of the proxy's own paths; else [`Proxy::into_router`] fails.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::server::Proxy;
    ///
    /// let app = Proxy::new().browser_package("/courier").into_router()?;
    /// # use tower::ServiceExt;
    /// let module = app.oneshot(http::Request::get("/courier/index.js").body(axum::body::Body::empty())?).await?;
    /// assert_eq!(module.status(), 200);
    /// assert_eq!(module.headers()["content-type"], "text/javascript; charset=utf-8");
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn browser_package(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        let trimmed = path.trim_end_matches('/');
        if !path.starts_with('/') || trimmed.is_empty() || trimmed.contains(['?', '#', '{', '}']) {
            self.failed.get_or_insert_with(|| {
                format!(
                    "the browser package's path `{path}` must start with `/`, not be `/` itself, \
                     and hold no `?`, `#`, `{{` or `}}`"
                )
            });
        } else {
            self.browser_package = Some(trimmed.to_owned());
        }
        self
    }

    /// Serves connections on `threads` threads of the proxy's own, each a single-threaded tokio
    /// runtime, when [`Proxy::serve`] (or [`Proxy::serve_with`]) serves it; by default, and with
    /// `0`, on the runtime `serve` runs on.
    ///
    /// `serve` accepts on its own runtime and hands each connection to the thread with the
    /// fewest open, where it is served to its end — its calls, the upstream connections they
    /// open, its streams and sockets — as nginx's worker processes serve theirs. The tasks of
    /// one connection then wake one another within a thread, which a work-stealing runtime
    /// does across threads: on the same load the proxy spends about a quarter less CPU per
    /// request (docs/benchmarks-history.md, "One thread per connection's work"). `courier serve`
    /// serves this way, one thread per CPU unless told otherwise (`--threads`).
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::server::Proxy;
    ///
    /// let proxy = Proxy::new().worker_threads(2);
    /// let stop = proxy.shutdown_handle();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let served = tokio::spawn(proxy.serve(listener));
    /// stop.begin();
    /// served.await??;
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn worker_threads(mut self, threads: usize) -> Self {
        self.worker_threads = NonZeroUsize::new(threads);
        self
    }

    /// At most `connections` open at once when [`Proxy::serve`] (or [`Proxy::serve_with`])
    /// serves the proxy (at least one). By default, half of what the process's
    /// file-descriptor limit leaves after 64 (a proxied connection may hold an upstream one
    /// besides): 96 under a limit of 256, 10,208 under 20,480; 512 where the limit cannot be
    /// read.
    ///
    /// At the bound a new connection takes the place of the oldest idle one — one that has not
    /// sent its first request yet, or waits between keep-alive requests — which is closed, as
    /// nginx reuses connections when its `worker_connections` are not enough. A connection
    /// answering a request, sending a stream's events or holding a channel's socket is never
    /// closed for another; when every one is, the new connection waits for a place. So a
    /// client holding many idle connections cannot keep another's call out, and the process
    /// stays under its descriptor limit, where every new connection would wait.
    ///
    /// ```
    /// use courier::server::Proxy;
    ///
    /// let proxy = Proxy::new().max_connections(10_000).max_connections_per_client(256);
    /// ```
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = Some(connections.max(1));
        self
    }

    /// At most `connections` open at once from one client address (the peer's IP address; at
    /// least one), besides [`Proxy::max_connections`]. Over it, a new connection takes the
    /// place of that address's oldest idle one, or is closed at once when all of that address's
    /// connections are busy. Default: no bound per address.
    ///
    /// Behind a reverse proxy every connection comes from the reverse proxy's address, so leave
    /// this unset there.
    pub fn max_connections_per_client(mut self, connections: usize) -> Self {
        self.max_connections_per_client = NonZeroUsize::new(connections.max(1));
        self
    }

    /// The handle that ends this proxy's streams and closes its sockets, for a graceful stop
    /// ([`Shutdown`]). Take it before [`Proxy::into_router`].
    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// The axum router serving the three paths.
    ///
    /// # Errors
    ///
    /// When a source's client cannot be built (its transport: a bad certificate or proxy), or
    /// the path given to [`Proxy::browser_package`] cannot be.
    pub fn into_router(self) -> Result<Router, ProxyError> {
        self.into_router_and_state().map(|(router, _)| router)
    }

    /// The router, and the proxy as its handlers' state.
    fn into_router_and_state(self) -> Result<(Router, Arc<Proxy>), ProxyError> {
        if let Some(failed) = self.failed {
            return Err(ProxyError(failed));
        }
        let http_path = self.http_path.clone();
        let sse_path = self.sse_path.clone();
        if let Some(package) = &self.browser_package {
            let own = [Some(&http_path), Some(&sse_path), self.ws_path.as_ref()];
            if own.into_iter().flatten().any(|path| path == package) {
                return Err(ProxyError(format!(
                    "the browser package's path `{package}` is one of the proxy's own"
                )));
            }
        }
        let mut router = Router::new()
            .route(&http_path, any(call::serve_call))
            .route(&sse_path, any(stream::serve_stream));
        if let Some(ws_path) = self.ws_path.clone() {
            router = router.route(&ws_path, any(socket::serve_channel));
        }
        if let Some(package) = &self.browser_package {
            router = router.nest_service(package, nosniff().layer(BrowserPackage));
        }
        if let Some(dir) = &self.static_dir {
            router = router.fallback_service(nosniff().layer(ServeDir::new(dir)));
        }
        let proxy = Arc::new(self);
        Ok((router.with_state(Arc::clone(&proxy)), proxy))
    }

    /// Serves the proxy alone on `listener` until its [`Shutdown`] is begun
    /// ([`Proxy::shutdown_handle`]), then lets the calls in flight finish and returns.
    ///
    /// Unlike `axum::serve` with [`Proxy::into_router`], the connections are bounded as a server
    /// facing browsers must be: a request's head must arrive within
    /// [`Proxy::header_read_timeout`] (a slow or idle connection is closed), and the peer's
    /// address reaches the session and forwarding as the client address. `courier serve` serves
    /// this way.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use courier::server::Proxy;
    /// use std::time::Duration;
    ///
    /// let proxy = Proxy::new().header_read_timeout(Duration::from_secs(10));
    /// let stop = proxy.shutdown_handle();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let served = tokio::spawn(proxy.serve(listener));
    /// stop.begin();
    /// served.await??;
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Proxy::into_router`].
    pub async fn serve(self, listener: tokio::net::TcpListener) -> Result<(), ProxyError> {
        self.serve_app(listener, |router, proxy| (router, Some(proxy)))
            .await
    }

    /// Serves the app `app` makes of the proxy's router — the proxy nested in an app's own
    /// routes, say, or with the app's layers around it — as [`Proxy::serve`] serves the proxy
    /// alone.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use axum::routing::get;
    /// use courier::server::Proxy;
    ///
    /// let proxy = Proxy::new();
    /// let stop = proxy.shutdown_handle();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let app = |proxy: axum::Router| proxy.route("/health", get(|| async { "ok" }));
    /// let served = tokio::spawn(proxy.serve_with(listener, app));
    /// stop.begin();
    /// served.await??;
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Proxy::into_router`].
    pub async fn serve_with(
        self,
        listener: tokio::net::TcpListener,
        app: impl FnOnce(Router) -> Router,
    ) -> Result<(), ProxyError> {
        self.serve_app(listener, |router, _| (app(router), None))
            .await
    }

    /// Serves the app `app` makes of the proxy's router and the proxy, with the proxy's call
    /// route served ahead of it when `app` hands the proxy back (the [`serve`] module says why).
    async fn serve_app(
        self,
        listener: tokio::net::TcpListener,
        app: impl FnOnce(Router, Arc<Proxy>) -> (Router, Option<Arc<Proxy>>),
    ) -> Result<(), ProxyError> {
        let edge = serve::Edge {
            header_read_timeout: self.header_read_timeout,
            max_connections: self
                .max_connections
                .unwrap_or_else(|| places::default_max(places::fd_limit())),
            max_connections_per_client: self.max_connections_per_client,
        };
        let stop = self.shutdown.clone();
        let threads = self.worker_threads;
        let (router, proxy) = self.into_router_and_state()?;
        let (router, calls) = app(router, proxy);
        serve::serve(listener, router, calls, edge, stop, threads)
            .await
            .map_err(|e| ProxyError(format!("cannot start a worker thread: {e}")))
    }
}

/// `x-content-type-options: nosniff` on every file served ([`Proxy::static_dir`],
/// [`Proxy::browser_package`]), unless the service set its own.
fn nosniff() -> SetResponseHeaderLayer<http::HeaderValue> {
    SetResponseHeaderLayer::if_not_present(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    )
}

/// The proxy could not be built: a source's client, or the path of its browser package.
#[derive(Debug)]
pub struct ProxyError(String);

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot build the proxy: {}", self.0)
    }
}

impl std::error::Error for ProxyError {}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sources: Vec<&str> = self.sources.keys().map(String::as_str).collect();
        sources.sort_unstable();
        f.debug_struct("Proxy")
            .field("sources", &sources)
            .field("sse_path", &self.sse_path)
            .field("ws_path", &self.ws_path)
            .field("browser_package", &self.browser_package)
            .field("keep_alive", &self.keep_alive)
            .field("buffer", &self.buffer)
            .field("max_message_size", &self.max_message_size)
            .field(
                "rate_limit",
                &self.rate_limit.as_ref().map(|limiter| limiter.limit()),
            )
            .field("shutting_down", &self.shutdown.is_begun())
            .finish()
    }
}
