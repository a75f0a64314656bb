//! courier's serving side: the proxy route a browser (or a `ProxyCaller`) calls an API through,
//! and the streams and channels this process implements (`.implement()`).
//!
//! [`Proxy`] registers sources by name and builds an axum [`Router`] — itself a
//! `tower::Service<http::Request<_>>`, to nest in an app's router or serve alone — with three
//! paths: HTTP calls (`/api/request`), streams over server-sent events (`/api/sse`) and
//! channels over WebSocket (no default path: [`Proxy::ws_path`]). A request addresses an
//! endpoint by the wire protocol — `_s` (source),
//! `_g` (group, dotted), `_m` (endpoint name), and on GET `_v` (variables, JSON) in the query —
//! and only exposed endpoints are reachable. Frames and refusals are in `docs/PROTOCOL.md`.
//!
//! - **HTTP calls**: a read as GET with `_v`, or any call as POST with the JSON body
//!   `{"variables": …}` and nothing else (a body without `variables`, or with other keys, is a
//!   400) or, for variables that carry files, a `multipart/form-data` form (either up to
//!   [`Proxy::body_limit`], refused from a declared `content-length` alone, and arriving within
//!   [`Proxy::body_read_timeout`], else 408); `_t` (milliseconds) may shorten the upstream call's
//!   timeout; a write over GET and a read with
//!   sensitive variables over GET are refused 405. The call goes through the source's
//!   [`Client`](courier_client::Client) — its whole layer stack — with the browser's request as
//!   the served context, so session and forwarding apply. Headers cross only where allow-listed
//!   ([`AllowHeadersLayer`](courier_layers::allow_headers::AllowHeadersLayer): the source's
//!   `allowed_headers`, the endpoint's `.headers([...])`), both ways; `cookie` and
//!   `set-cookie` only where named; a header the source, the endpoint's `.via()` or a
//!   middleware sets wins over the browser's copy (relayed headers are marked:
//!   [`ServedRequest::is_relayed`](courier_core::context::ServedRequest::is_relayed));
//!   `content-type`, `-length` and `-encoding` are the proxy's own. The upstream's status and
//!   body come back as they are, the body streamed. The proxy's own refusals are JSON
//!   `{"error": {"code", "message"}}`: 404 `ENDPOINT_NOT_IN_ROUTES`, 405 `METHOD_NOT_ALLOWED`,
//!   400 `BAD_REQUEST` (also for a missing or malformed `_s`, `_g` or `_m`: an empty `_s`, an
//!   empty name in `_g`, a dot in `_m`), 413 `PAYLOAD_TOO_LARGE`, 415 `UNSUPPORTED_MEDIA_TYPE`, 502
//!   `UPSTREAM_UNREACHABLE`, 504 `UPSTREAM_TIMEOUT`, and the session's 403s.
//! - **Streams**: opened with GET (another verb is refused 405, in JSON like every refusal);
//!   the handler's events as `text/event-stream`, each `data` compact JSON, with
//!   `id`, `event` and `retry` when set; `Last-Event-ID` reaches the handler
//!   ([`StreamRequest::last_event_id`](courier_core::StreamRequest)); `: keep-alive` comments
//!   while idle ([`Proxy::keep_alive`]); a handler error sends `event: error` with
//!   `{"error":{"code":"STREAM_FAILED","message"}}` and ends the response. The response is
//!   pulled by the connection, so a slow reader holds the handler back rather than buffering.
//!   The handler's stream is polled with the browser's request as the served context
//!   ([`ServedRequest::scope_stream`](courier_core::context::ServedRequest::scope_stream)), so
//!   calls it makes carry that user's session and forwarded headers.
//! - **Channels**: a handshake for a channel that carries the session is refused 403 unless its
//!   `Origin` is the proxy's own or trusted (browsers apply no same-origin rule to sockets; see
//!   `docs/SECURITY.md`); each socket joins the source's [`Hub`](courier_core::live::Hub) (the one
//!   its `ApiDef` carries, so in-process callers share topics with
//!   it); messages are JSON text frames both ways; a hello frame announced with `_h=1` is read
//!   before joining and its `auth` reaches the handlers ([`Peer::auth`](courier_core::Peer)),
//!   and a first frame `{"type":"courier.hello",…}` is never handed on; variables that do not
//!   fit a typed channel close with 1008; a message that is not JSON
//!   closes with 1003, a message on a channel without `.send()` with 1008, one over
//!   [`Proxy::max_message_size`] with 1009; an `on_join` refusal closes with 1008 and its
//!   reason; a subscriber that falls more than [`Proxy::buffer`] messages behind is closed with
//!   1013; when a push channel ends, 1000. An `on_message` error is logged and the socket stays.
//!   `on_join` and `on_message` run on the socket's task with the browser's handshake request
//!   as the served context, so calls they make carry that user's session and forwarded headers;
//!   a push handler, shared by a topic's subscribers, and an `on_leave` run after the socket
//!   is gone, serve nobody in particular and carry none.
//! - **Remote streams** (`.get()`, `.via()`) are proxied: the opening request goes through the
//!   source's client with the browser's request as the served context and its `Last-Event-ID`,
//!   and the upstream's answer comes back as it is, the event stream's bytes unchanged.
//! - **Serving**: [`Proxy::serve`] (and [`Proxy::serve_with`], for the proxy inside an app's
//!   own router) serves with the bounds a server facing browsers needs — a request head within
//!   [`Proxy::header_read_timeout`], at most 64 KiB — which `axum::serve` leaves out.
//! - **Stopping**: a graceful stop waits for responses in flight, and a stream or socket never
//!   ends on its own; [`Proxy::shutdown_handle`] gives the [`Shutdown`] that cuts the streams
//!   short (their clients reconnect) and closes the sockets with 1001.
//! - **Remote channels** (`.connect()`, `.via()`) are proxied through the source's channel
//!   client: an announced hello frame's `headers` (the allow-listed names only) join the
//!   upstream handshake and its `auth` goes in the upstream socket's own hello; then messages
//!   are pumped both ways; the upstream's close code and reason are passed on.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use courier_core::{ApiDef, Event, GroupDef, StreamEndpoint, StreamHandler};
//! use courier_server::Proxy;
//! use futures_util::{stream, StreamExt};
//! use serde_json::{json, Value};
//!
//! let ticks = StreamHandler::new(|_request| {
//!     stream::iter((1..=3).map(|n| Ok(Event::new(json!({ "n": n })).id(n.to_string()))))
//! });
//! let api = ApiDef::builder()
//!     .group("live", GroupDef::new().expose(true).endpoint("ticks", StreamEndpoint::implement(ticks)))
//!     .build()?;
//! let app = Proxy::new().source("demo", api).into_router()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! tokio::spawn(async move { axum::serve(listener, app).await });
//!
//! // Another process reads it with courier's stream client: the address is the proxy's
//! // wire protocol, the variables fill its query.
//! let remote = ApiDef::builder()
//!     .base_url(format!("http://{addr}"))
//!     .group("live", GroupDef::new().endpoint("ticks", StreamEndpoint::get("/api/sse")))
//!     .build()?;
//! let address = json!({ "_s": "demo", "_g": "live", "_m": "ticks" });
//! let events = courier_client::Client::new(remote)?.stream("live.ticks", address, None).await?;
//! let data: Vec<Value> = events.map(|e| e.unwrap().data).collect().await;
//! assert_eq!(data, [json!({ "n": 1 }), json!({ "n": 2 }), json!({ "n": 3 })]);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod call;
mod frame;
mod serve;
mod shutdown;
mod wire;

pub use self::shutdown::Shutdown;

/// Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature): the readers of
/// untrusted bytes that are not reachable through the router without a socket. Not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    /// Reads `bytes` as a channel's first frame and as a message frame, as the proxy does.
    /// Returns whether it was JSON.
    pub fn channel_frame(bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(hello) = crate::frame::first_frame(&text) {
            if let Some(message) = hello.pending {
                let _ = crate::frame::is_hello(&message);
            }
        }
        crate::frame::message(bytes).is_ok()
    }

    /// Reads `query` as the proxy's wire parameters. Returns whether it was taken.
    pub fn wire_query(query: &str) -> bool {
        crate::wire::WireQuery::parse(query).is_ok()
    }

    /// Reads `bytes` as a POST's JSON body. Returns whether it was taken.
    pub fn call_body(bytes: &[u8]) -> bool {
        crate::wire::call_body(bytes).is_ok()
    }
}
use self::frame::Hello;
use self::wire::WireQuery;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use courier_core::live::{JoinOptions, Outbound};
use courier_core::{
    ApiDef, ChannelSource, EndpointDef, ResolvedEndpoint, StreamRequest, StreamSource,
};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// The proxy route over named sources; see the [crate docs](crate).
#[derive(Clone)]
#[must_use]
pub struct Proxy {
    sources: HashMap<String, ApiDef>,
    clients: HashMap<String, courier_client::Client>,
    failed: Option<String>,
    http_path: String,
    body_limit: usize,
    body_read_timeout: Duration,
    header_read_timeout: Duration,
    sse_path: String,
    ws_path: Option<String>,
    keep_alive: Duration,
    buffer: usize,
    max_message_size: usize,
    shutdown: Shutdown,
    static_dir: Option<std::path::PathBuf>,
}

impl Default for Proxy {
    fn default() -> Self {
        Self::new()
    }
}

impl Proxy {
    /// No sources yet; calls at `/api/request` (bodies up to 1 MiB), streams at `/api/sse`,
    /// channels nowhere until [`Proxy::ws_path`] is set, a keep-alive comment every 15 s, a buffer of 256 messages per
    /// subscriber, channel messages up to 1 MiB.
    pub fn new() -> Self {
        Self {
            sources: HashMap::new(),
            clients: HashMap::new(),
            failed: None,
            http_path: "/api/request".to_owned(),
            body_limit: 1024 * 1024,
            body_read_timeout: Duration::from_secs(60),
            header_read_timeout: Duration::from_secs(30),
            sse_path: "/api/sse".to_owned(),
            ws_path: None,
            keep_alive: Duration::from_secs(15),
            buffer: 256,
            max_message_size: 1024 * 1024,
            shutdown: Shutdown::default(),
            static_dir: None,
        }
    }

    /// Serves `api`'s implemented streams and channels as source `name` (the `_s` parameter).
    pub fn source(mut self, name: impl Into<String>, api: ApiDef) -> Self {
        let name = name.into();
        match courier_client::Client::new(api.clone()) {
            Ok(client) => {
                self.clients.insert(name.clone(), client);
            }
            Err(e) => {
                self.failed
                    .get_or_insert_with(|| format!("source `{name}`: {e}"));
            }
        }
        self.sources.insert(name, api);
        self
    }

    /// Calls `name`'s HTTP endpoints through `client` (its transport, retry policy and layers)
    /// instead of a default [`Client`](courier_client::Client) of the source's definition.
    pub fn source_client(
        mut self,
        name: impl Into<String>,
        client: courier_client::Client,
    ) -> Self {
        let name = name.into();
        self.sources.insert(name.clone(), client.api().clone());
        self.clients.insert(name, client);
        self
    }

    /// The path of HTTP calls. Default `/api/request`.
    pub fn http_path(mut self, path: impl Into<String>) -> Self {
        self.http_path = path.into();
        self
    }

    /// The largest request body a call may carry, in bytes; a larger one is refused with 413.
    /// Default 1 MiB.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// How long a call's request body may take to arrive, whole, once its head has; a body
    /// still arriving then is refused with 408 and its connection closed. Default 60 s. It
    /// bounds uploads too: raise it with [`Proxy::body_limit`] for large, slow ones.
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

    /// The path of streams. Default `/api/sse`.
    pub fn sse_path(mut self, path: impl Into<String>) -> Self {
        self.sse_path = path.into();
        self
    }

    /// The path of channels. No default (as the specification's `proxyPath.ws`): without
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
    /// use courier_server::Proxy;
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

    /// The handle that ends this proxy's streams and closes its sockets, for a graceful stop
    /// ([`Shutdown`]). Take it before [`Proxy::into_router`].
    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// The axum router serving the three paths.
    ///
    /// # Errors
    ///
    /// When a source's client cannot be built (its transport: a bad certificate or proxy).
    pub fn into_router(self) -> Result<Router, ProxyError> {
        if let Some(failed) = self.failed {
            return Err(ProxyError(failed));
        }
        let http_path = self.http_path.clone();
        let sse_path = self.sse_path.clone();
        let mut router = Router::new()
            .route(&http_path, any(call::serve_call))
            .route(&sse_path, any(serve_stream));
        if let Some(ws_path) = self.ws_path.clone() {
            router = router.route(&ws_path, any(serve_channel));
        }
        if let Some(dir) = &self.static_dir {
            let files = tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::if_not_present(
                    http::header::X_CONTENT_TYPE_OPTIONS,
                    http::HeaderValue::from_static("nosniff"),
                ))
                .service(ServeDir::new(dir));
            router = router.fallback_service(files);
        }
        Ok(router.with_state(Arc::new(self)))
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
    /// use courier_server::Proxy;
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
        self.serve_with(listener, |router| router).await
    }

    /// Serves the app `app` makes of the proxy's router — the proxy nested in an app's own
    /// routes, say, or with the app's layers around it — as [`Proxy::serve`] serves the proxy
    /// alone.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use axum::routing::get;
    /// use courier_server::Proxy;
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
        let header_read_timeout = self.header_read_timeout;
        let stop = self.shutdown.clone();
        let router = app(self.into_router()?);
        serve::serve(listener, router, header_read_timeout, stop).await;
        Ok(())
    }
}

/// A source's client could not be built.
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
            .field("keep_alive", &self.keep_alive)
            .field("buffer", &self.buffer)
            .field("max_message_size", &self.max_message_size)
            .field("shutting_down", &self.shutdown.is_begun())
            .finish()
    }
}

/// A refusal: its status, and `{"error": {"code", "message"}}`.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl Refusal {
    fn method(message: String) -> Self {
        Self {
            status: StatusCode::METHOD_NOT_ALLOWED,
            code: "METHOD_NOT_ALLOWED",
            message,
        }
    }

    fn not_found(message: String) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            code: "ENDPOINT_NOT_IN_ROUTES",
            message,
        }
    }

    fn bad_request(message: String) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "BAD_REQUEST",
            message,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, Json(body)).into_response()
    }
}

/// Streams and channels open with a GET; anything else is refused as the `http` path refuses a
/// verb it does not take (405, in JSON).
fn only_get<B>(request: &axum::http::Request<B>, what: &str) -> Result<(), Refusal> {
    if request.method() == axum::http::Method::GET {
        return Ok(());
    }
    Err(Refusal::method(format!(
        "{what} opens with GET, not {}",
        request.method()
    )))
}

/// The source a query names (`address` has checked there is one).
pub(crate) fn source_of(query: &HashMap<String, String>) -> &str {
    query.get("_s").map_or("", String::as_str)
}

/// The exposed endpoint and the variables a query addresses.
pub(crate) fn address(
    live: &Proxy,
    query: &HashMap<String, String>,
) -> Result<(ApiDef, Arc<ResolvedEndpoint>, Value), Refusal> {
    let param = |name: &str| {
        query
            .get(name)
            .ok_or_else(|| Refusal::bad_request(format!("the `{name}` parameter is missing")))
    };
    let source = param("_s")?;
    let group = param("_g")?;
    let name = param("_m")?;
    if source.is_empty() {
        return Err(Refusal::bad_request("`_s` is empty".to_owned()));
    }
    // A group path is names joined with dots, and an endpoint's name holds no dot: anything
    // else could never name an endpoint, and is the caller's mistake rather than a route.
    if group.split('.').any(str::is_empty) {
        return Err(Refusal::bad_request(format!(
            "`_g` is a group path (names joined with dots), not `{group}`"
        )));
    }
    if name.is_empty() || name.contains('.') {
        return Err(Refusal::bad_request(format!(
            "`_m` is an endpoint's name (no dots), not `{name}`"
        )));
    }
    let variables = match query.get("_v") {
        None => Value::Null,
        Some(text) => serde_json::from_str(text)
            .map_err(|e| Refusal::bad_request(format!("`_v` is not JSON: {e}")))?,
    };
    let api = live
        .sources
        .get(source)
        .ok_or_else(|| Refusal::not_found(format!("there is no source `{source}`")))?;
    let path = format!("{group}.{name}");
    let endpoint = api
        .endpoint_in(group, name)
        .filter(|e| e.is_exposed())
        .ok_or_else(|| Refusal::not_found(format!("`{path}` is not exposed by `{source}`")))?;
    Ok((api.clone(), Arc::clone(endpoint), variables))
}

async fn serve_stream(
    State(live): State<Arc<Proxy>>,
    WireQuery(query): WireQuery,
    request: axum::http::Request<axum::body::Body>,
) -> Result<Response, Refusal> {
    only_get(&request, "a stream")?;
    let (api, endpoint, variables) = address(&live, &query)?;
    let (parts, _) = request.into_parts();
    let headers = parts.headers.clone();
    let handler = match endpoint.definition() {
        EndpointDef::Stream(stream) => match stream.source() {
            StreamSource::Implemented(handler) => handler.clone(),
            _ => {
                return Ok(proxy_stream(
                    &live,
                    source_of(&query),
                    &api,
                    &endpoint,
                    variables,
                    parts,
                )
                .await)
            }
        },
        _ => {
            return Err(Refusal::not_found(format!(
                "`{}` is not a stream",
                endpoint.path()
            )))
        }
    };
    let mut request = StreamRequest::new(variables);
    request.last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let path = endpoint.path().to_owned();
    // The handler produces its events while serving the browser's request: calls it makes
    // carry that user's session and forwarded headers.
    let served = call::served_request(&parts);
    let events = served.scope_stream(handler.open(request));
    let events = events.scan(false, move |failed, item| {
        if *failed {
            return std::future::ready(None);
        }
        let failure = |failed: &mut bool, e: &dyn std::fmt::Display| {
            *failed = true;
            tracing::warn!(endpoint = %path, error = %e, "an implemented stream failed");
            let body = json!({ "error": { "code": "STREAM_FAILED", "message": e.to_string() } });
            SseEvent::default().event("error").data(body.to_string())
        };
        let frame = match item.map(sse_frame) {
            Ok(Ok(frame)) => frame,
            Ok(Err(e)) => failure(failed, &e),
            Err(e) => failure(failed, &e),
        };
        std::future::ready(Some(frame))
    });
    let events = until_shutdown(events, live.shutdown.token().clone());
    let keep_alive = KeepAlive::new()
        .interval(live.keep_alive)
        .text("keep-alive");
    Ok(Sse::new(events).keep_alive(keep_alive).into_response())
}

/// An implemented stream's event as an event-stream frame. A line break in its `id` or `event`
/// (or a NUL in its `id`) would end the field early and let the rest pose as fields of its
/// own — a handler that names events after what a subscriber sent could be made to forge
/// events — so such an event fails the stream, as a handler's error does.
fn sse_frame(event: courier_core::Event<Value>) -> Result<SseEvent, UnwritableEvent> {
    let breaks = |text: &str| text.contains(['\r', '\n']);
    if event
        .id
        .as_deref()
        .is_some_and(|id| breaks(id) || id.contains('\0'))
        || event.event.as_deref().is_some_and(breaks)
    {
        return Err(UnwritableEvent);
    }
    let mut frame = SseEvent::default().data(event.data.to_string());
    if let Some(id) = event.id {
        frame = frame.id(id);
    }
    if let Some(name) = event.event {
        frame = frame.event(name);
    }
    if let Some(retry) = event.retry {
        frame = frame.retry(retry);
    }
    Ok(frame)
}

/// An event whose `id` or `event` an event stream cannot carry.
#[derive(Debug)]
struct UnwritableEvent;

impl fmt::Display for UnwritableEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an event's id or name holds a line break (or its id a NUL), which an event stream cannot carry",
        )
    }
}

/// `items` until the proxy shuts down, then a failure: it cuts the response short, so the
/// client reconnects (to another instance) with its `Last-Event-ID`, as after a dropped
/// connection. A clean end would tell it the stream is over.
fn until_shutdown<S>(
    items: S,
    stop: courier_core::CancellationToken,
) -> impl futures_util::Stream<Item = Result<S::Item, courier_core::BoxError>> + Send
where
    S: futures_util::Stream + Send,
{
    let cut = stop.clone();
    let failure = futures_util::stream::once(async move { cut.is_cancelled() })
        .filter(|cancelled| std::future::ready(*cancelled))
        .map(|_| Err(courier_core::BoxError::from("the proxy is shutting down")));
    items
        .map(Ok)
        .take_until(stop.cancelled_owned())
        .chain(failure)
}

/// A stream another process serves, through the source's client: the opening request with the
/// browser's request as the served context and its `Last-Event-ID`, the upstream's answer
/// passed back as it comes (the event stream's bytes unchanged).
async fn proxy_stream(
    live: &Proxy,
    source: &str,
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    variables: Value,
    parts: http::request::Parts,
) -> Response {
    let Some(client) = live.clients.get(source) else {
        return Refusal::not_found(format!("there is no source `{source}`")).into_response();
    };
    let last_event_id = parts.headers.get("last-event-id").cloned();
    let (mut options, served, allow) = call::upstream_options(api, endpoint, &variables, parts);
    options = options.header(
        http::header::ACCEPT,
        http::HeaderValue::from_static("text/event-stream"),
    );
    if let Some(id) = last_event_id {
        options = options.header(http::HeaderName::from_static("last-event-id"), id);
    }
    // An event stream's own `cache-control` goes back with it.
    let allow = allow.allow([http::header::CACHE_CONTROL]);
    match client
        .forward(endpoint.path(), variables, Some(&options))
        .await
    {
        Ok(upstream) => {
            // The upstream's events pass through until the proxy shuts down.
            let stop = live.shutdown.token().clone();
            let upstream = upstream.map(|body| {
                let chunks = http_body_util::BodyDataStream::new(body);
                let chunks = until_shutdown(chunks, stop).map(|chunk| match chunk {
                    Ok(Ok(bytes)) => Ok(http_body::Frame::data(bytes)),
                    Ok(Err(e)) | Err(e) => Err(e),
                });
                courier_core::Body::new(http_body_util::StreamBody::new(chunks))
            });
            call::respond(upstream, &served, &allow, endpoint.meta())
        }
        Err(e) => call::failure(&e),
    }
}

async fn serve_channel(
    State(live): State<Arc<Proxy>>,
    WireQuery(query): WireQuery,
    request: axum::http::Request<axum::body::Body>,
) -> Result<Response, Refusal> {
    use axum::extract::FromRequestParts;
    only_get(&request, "a channel's handshake")?;
    let (api, endpoint, variables) = address(&live, &query)?;
    let (mut parts, _) = request.into_parts();
    check_socket_origin(&api, &endpoint, &parts)?;
    let upgrade = WebSocketUpgrade::from_request_parts(&mut parts, &())
        .await
        .map_err(|e| Refusal::bad_request(format!("not a WebSocket handshake: {e}")))?
        .max_message_size(live.max_message_size)
        .max_frame_size(live.max_message_size);
    let remote = match endpoint.definition() {
        EndpointDef::Channel(channel) => !matches!(channel.source(), ChannelSource::Implemented(_)),
        _ => {
            return Err(Refusal::not_found(format!(
                "`{}` is not a channel",
                endpoint.path()
            )))
        }
    };
    let announced = query.get("_h").is_some_and(|v| v == "1");
    if remote {
        let Some(client) = live.clients.get(source_of(&query)).cloned() else {
            return Err(Refusal::not_found("no such source".to_owned()));
        };
        let (options, served, allow) = call::upstream_options(&api, &endpoint, &variables, parts);
        let shutdown = live.shutdown.clone();
        return Ok(upgrade.on_upgrade(move |mut socket| {
            shutdown.clone().track(async move {
                let Some(hello) = read_hello(&mut socket, announced).await else {
                    return;
                };
                let upstream = Upstream {
                    client,
                    endpoint,
                    variables,
                    options,
                    served,
                    allow,
                };
                proxy_socket(socket, upstream, hello, shutdown.token().clone()).await;
            })
        }));
    }
    let buffer = live.buffer;
    let shutdown = live.shutdown.clone();
    // The member's handlers run on this socket's task while serving the browser's request:
    // calls `on_join` and `on_message` make carry that user's session and forwarded headers.
    let served = call::served_request(&parts);
    Ok(upgrade.on_upgrade(move |mut socket| {
        shutdown.clone().track(served.scope(async move {
            let Some(hello) = read_hello(&mut socket, announced).await else {
                return;
            };
            let stop = shutdown.token().clone();
            run_socket(socket, api, endpoint, variables, buffer, hello, stop).await;
        }))
    }))
}

/// Refuses a socket's handshake that another site's page made, for a channel that carries the
/// session (its source has `session`, the endpoint does not opt out): browsers apply no
/// same-origin rule to WebSockets, so without this a page of any site could open the channel
/// with the user's cookies, read what comes and send what it likes. The handshake's `Origin`
/// must be the proxy's own or trusted ([`SessionLayer::check_handshake`]); nothing is opened
/// otherwise, upstream or in the hub.
///
/// [`SessionLayer::check_handshake`]: courier_layers::session::SessionLayer::check_handshake
fn check_socket_origin(
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    parts: &http::request::Parts,
) -> Result<(), Refusal> {
    let Some(session) = &api.options().session else {
        return Ok(());
    };
    if endpoint.meta().session_mode() == courier_core::SessionMode::Off {
        return Ok(());
    }
    courier_layers::session::SessionLayer::new(session.clone())
        .check_handshake(&call::served_request(parts))
        .map_err(|refused| Refusal {
            status: StatusCode::FORBIDDEN,
            code: refused.reason().code(),
            message: refused.to_string(),
        })
}

/// Reads the hello frame a handshake announced (`_h=1`), waiting up to [`HELLO_WAIT`];
/// without the announcement nothing is read. `None` when the socket ended or its first frame
/// was not JSON (closed with 1003).
async fn read_hello(socket: &mut WebSocket, announced: bool) -> Option<Hello> {
    if !announced {
        return Some(Hello::default());
    }
    match tokio::time::timeout(HELLO_WAIT, socket.recv()).await {
        Err(_elapsed) => Some(Hello::default()),
        Ok(Some(Ok(Message::Text(text)))) => match frame::first_frame(text.as_str()) {
            Ok(hello) => Some(hello),
            Err(frame::NotJson) => {
                let _ = socket.send(close(1003, "a message is JSON text")).await;
                None
            }
        },
        Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) => None,
        Ok(Some(Ok(_))) => Some(Hello::default()),
    }
}

/// A channel another process serves, as the proxy reaches it: the source's client, the
/// endpoint, the variables, the handshake's options and the allow-list rules.
struct Upstream {
    client: courier_client::Client,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Value,
    options: courier_core::CallOptions,
    served: courier_core::context::ServedRequest,
    allow: courier_layers::allow_headers::AllowHeadersLayer,
}

/// How long the proxy waits for an announced hello frame before it goes on without it.
const HELLO_WAIT: Duration = Duration::from_secs(2);

/// A channel another process serves, through the source's channel client: the hello's
/// `headers` (allow-listed names only) join the upstream handshake and its `auth` goes in the
/// upstream socket's own first frame; then messages are pumped both ways, and the upstream's
/// close is passed on.
async fn proxy_socket(
    mut socket: WebSocket,
    upstream: Upstream,
    hello: Hello,
    stop: courier_core::CancellationToken,
) {
    let Upstream {
        client,
        endpoint,
        variables,
        mut options,
        served,
        allow,
    } = upstream;
    let path = endpoint.path().to_owned();
    // The hello's headers cross as the handshake's would: allow-listed names only, and never
    // over a header the source or the endpoint's `.via()` sets.
    let mut headers = http::HeaderMap::new();
    for (name, value) in hello.headers.iter().flatten() {
        let (Ok(name), Some(Ok(value))) = (
            http::HeaderName::try_from(name.as_str()),
            value.as_str().map(http::HeaderValue::try_from),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    allow.filter_request(&mut headers, Some(endpoint.meta()));
    for (name, value) in &headers {
        options = options.header(name.clone(), value.clone());
    }
    options = options.context(served.relaying(headers.keys().cloned()));
    let pending = hello.pending;
    let mut ws = client.ws_options().clone();
    if let Some(auth) = hello.auth {
        ws.auth = Some(courier_core::WsAuth::Params(auth));
    }
    let mut upstream = match client
        .channel_with(&path, variables, Some(&options), ws)
        .await
    {
        Ok(upstream) => upstream,
        Err(e) => {
            let _ = socket
                .send(close(1011, format!("the upstream refused: {e}")))
                .await;
            return;
        }
    };
    if let Some(message) = pending {
        if let Err(e) = upstream.send(message) {
            let _ = socket.send(close(1008, e.to_string())).await;
            return;
        }
    }
    loop {
        tokio::select! {
            () = stop.cancelled() => {
                let _ = socket.send(going_away()).await;
                break;
            }
            message = upstream.next() => match message {
                Some(Ok(message)) => {
                    if socket.send(Message::Text(message.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Some(Err(e)) => {
                    let (code, reason) = e
                        .close()
                        .map_or((1011, e.to_string()), |c| (c.code, c.reason.clone()));
                    let _ = socket.send(close(code, reason)).await;
                    break;
                }
                None => {
                    let _ = socket.send(close(1000, "the channel ended")).await;
                    break;
                }
            },
            received = socket.recv() => {
                // The same rules as an implemented channel's.
                let message = match inbound(received) {
                    Inbound::Message(message) => message,
                    Inbound::Skip => continue,
                    Inbound::Ping => {
                        if socket.send(Message::Text(frame::PONG.into())).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Inbound::End(close) => {
                        end(&mut socket, close).await;
                        break;
                    }
                };
                if let Err(e) = upstream.send(message) {
                    let _ = socket.send(close(1008, e.to_string())).await;
                    break;
                }
            }
        }
    }
    upstream.close();
}

/// The close frame of a proxy shutting down: 1001, after which a client reconnects.
fn going_away() -> Message {
    close(1001, "the server is going away")
}

fn close(code: u16, reason: impl Into<String>) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into().into(),
    }))
}

/// A browser's frame on a channel's socket, by the channel rules: a message is JSON text, or
/// binary holding it; anything else closes the socket with 1003, a frame over the size limit
/// with 1009.
enum Inbound {
    Message(Value),
    /// A browser caller's heartbeat (`frame::is_ping`), which the proxy answers itself.
    Ping,
    /// A ping, a pong: nothing to hand on.
    Skip,
    /// The socket is done: closed by the browser, broken, or to be closed with this frame.
    End(Option<Message>),
}

/// Sends the close frame `inbound` asked for, if any, before the loop ends.
async fn end(socket: &mut WebSocket, close: Option<Message>) {
    if let Some(close) = close {
        let _ = socket.send(close).await;
    }
}

/// What the frame a socket's read gave is, by the rules of [`Inbound`].
fn inbound(received: Option<Result<Message, axum::Error>>) -> Inbound {
    let parsed = match received {
        Some(Ok(Message::Text(text))) => frame::message(text.as_bytes()),
        Some(Ok(Message::Binary(bytes))) => frame::message(&bytes),
        Some(Err(e)) if is_too_large(&e) => {
            return Inbound::End(Some(close(1009, "a message is over the size limit")))
        }
        Some(Err(_)) | Some(Ok(Message::Close(_))) | None => return Inbound::End(None),
        Some(Ok(_)) => return Inbound::Skip,
    };
    match parsed {
        Ok(message) if frame::is_ping(&message) => Inbound::Ping,
        Ok(message) => Inbound::Message(message),
        Err(frame::NotJson) => Inbound::End(Some(close(1003, "a message is JSON text"))),
    }
}

/// Whether a socket's read failed on a message or frame over the size limit.
fn is_too_large(error: &axum::Error) -> bool {
    use std::error::Error as _;
    use tokio_tungstenite::tungstenite::Error;
    error
        .source()
        .and_then(|source| source.downcast_ref::<Error>())
        .is_some_and(|error| matches!(error, Error::Capacity(_)))
}

/// One subscriber's socket, joined to the channel's hub until either side ends.
async fn run_socket(
    mut socket: WebSocket,
    api: ApiDef,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Value,
    buffer: usize,
    hello: Hello,
    stop: courier_core::CancellationToken,
) {
    let Some(channel) = endpoint.definition().as_channel() else {
        return;
    };
    let mut options = JoinOptions::default().buffer(buffer);
    if let Some(auth) = hello.auth {
        options = options.auth(auth);
    }
    let mut member = match api
        .hub()
        .join(endpoint.path(), channel, variables, options)
        .await
    {
        Ok(member) => member,
        Err(e) => {
            let _ = socket.send(close(1008, e.to_string())).await;
            return;
        }
    };
    let mut first = true;
    if let Some(message) = hello.pending {
        // The announced first frame was a message after all.
        first = false;
        if !member.accepts_messages() {
            let _ = socket
                .send(close(1008, "this channel takes no messages"))
                .await;
            let _ = member.leave().await;
            return;
        }
        if let Err(e) = member.send(message).await {
            tracing::warn!(endpoint = %endpoint.path(), error = %e, "a channel's on_message failed");
        }
    }
    loop {
        tokio::select! {
            () = stop.cancelled() => {
                let _ = socket.send(going_away()).await;
                break;
            }
            out = member.recv() => match out {
                Some(Outbound::Message { data }) => {
                    if socket.send(Message::Text(data.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Some(Outbound::Close { code, reason }) => {
                    let _ = socket.send(close(code, reason)).await;
                    break;
                }
                None => break,
            },
            received = socket.recv() => {
                let message = match inbound(received) {
                    Inbound::Message(message) => message,
                    Inbound::Skip => continue,
                    Inbound::Ping => {
                        if socket.send(Message::Text(frame::PONG.into())).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Inbound::End(close) => {
                        end(&mut socket, close).await;
                        break;
                    }
                };
                if std::mem::take(&mut first) && frame::is_hello(&message) {
                    continue;
                }
                if !member.accepts_messages() {
                    let _ = socket.send(close(1008, "this channel takes no messages")).await;
                    break;
                }
                if let Err(e) = member.send(message).await {
                    tracing::warn!(endpoint = %endpoint.path(), error = %e, "a channel's on_message failed");
                }
            }
        }
    }
    if let Err(e) = member.leave().await {
        tracing::warn!(endpoint = %endpoint.path(), error = %e, "a channel's on_leave failed");
    }
}
