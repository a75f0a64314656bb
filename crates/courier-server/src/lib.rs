//! courier's serving side: the proxy route a browser (or a `ProxyCaller`) calls an API through,
//! and the streams and channels this process implements (`.implement()`).
//!
//! [`Proxy`] registers sources by name and builds an axum [`Router`](axum::Router) — itself a
//! `tower::Service<http::Request<_>>`, to nest in an app's router or serve alone — with three
//! paths: HTTP calls (`/api/request`), streams over server-sent events (`/api/sse`) and
//! channels over WebSocket (no default path: [`Proxy::ws_path`]). A request addresses an
//! endpoint by the wire protocol — `_s` (source),
//! `_g` (group, dotted), `_m` (endpoint name), and on GET `_v` (variables, JSON) in the query —
//! and only exposed endpoints are reachable. Frames and refusals are in `docs/PROTOCOL.md`.
//!
//! - **HTTP calls**: a read as GET with `_v`, or any call as POST with the JSON body
//!   `{"variables": …}` and nothing else (a body without `variables`, or with other keys, is a
//!   400) or, for variables that carry files, a `multipart/form-data` form, handed on to the
//!   upstream as it arrives (up to
//!   [`Proxy::body_limit`] and [`Proxy::multipart_limit`] respectively, refused from a declared
//!   `content-length` alone, and arriving within
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
//!   `UPSTREAM_UNREACHABLE`, 504 `UPSTREAM_TIMEOUT`, the session's 403s, and with
//!   [`Proxy::rate_limit`] 429 `RATE_LIMITED` (with `Retry-After`; for stream openings and
//!   channel handshakes too, counted with the calls). A 502 or 504 names the endpoint and the
//!   cause, never the upstream's host; it is logged (`tracing`, `error`) with the upstream's
//!   method and address, and an upstream's own 5xx is logged at `warn`.
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
//!   `docs/SECURITY.md`); each socket joins the [`Hub`](courier_live::Hub) of the source's
//!   client (`ClientBuilder::hub`; in-process callers given that client or hub share its
//!   topics); messages are JSON text frames both ways; a hello frame announced with `_h=1` is read
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
//!   [`Proxy::header_read_timeout`], at most 64 KiB, at most [`Proxy::max_connections`] open
//!   (the oldest idle one closed for a new one) — which `axum::serve` leaves out; with
//!   [`Proxy::worker_threads`], on threads of its own, each connection served to its end on
//!   one single-threaded runtime, as `courier serve` serves.
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
//! use courier::server::Proxy;
//! use courier::live::{Event, StreamHandler};
//! use courier::{ApiDef, GroupDef, StreamEndpoint};
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
//! let events = courier::Client::new(remote)?.stream("live.ticks", address, None).await?;
//! let data: Vec<Value> = events.map(|e| e.unwrap().data).collect().await;
//! assert_eq!(data, [json!({ "n": 1 }), json!({ "n": 2 }), json!({ "n": 3 })]);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod address;
mod call;
mod gauges;
mod package;
mod places;
mod proxy;
mod rate;
mod refusal;
mod serve;
mod shutdown;
mod socket;
mod stream;
mod upload;
mod wire;

pub use self::gauges::SERVER_REQUEST_DURATION;
pub use self::proxy::{Proxy, ProxyError};
pub use self::rate::RateLimit;
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
        if let Ok(hello) = courier_core::wire::first_frame(&text) {
            if let Some(message) = hello.pending {
                let _ = courier_core::wire::is_hello(&message);
            }
        }
        courier_core::wire::message(bytes).is_ok()
    }

    /// Reads `query` as the proxy's wire parameters. Returns whether it was taken.
    pub fn wire_query(query: &str) -> bool {
        courier_core::wire::WireQuery::parse(query).is_ok()
    }

    /// Reads `bytes` as a POST's JSON body. Returns whether it was taken.
    pub fn call_body(bytes: &[u8]) -> bool {
        courier_core::wire::read_call_body(bytes).is_ok()
    }
}
