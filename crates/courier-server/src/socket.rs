//! Channels at the `ws` path: the handshake's checks, the hello frame, and the socket joined to
//! the channel's hub (implemented) or to the upstream's socket (remote).

use crate::address::Addressed;
use crate::refusal::Refusal;
use crate::wire::Wire;
use crate::{call, Proxy};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use courier_core::wire::{self, FirstFrame as Hello, WireQuery};
use courier_core::{ApiDef, ChannelSource, EndpointDef, ResolvedEndpoint};
use courier_live::{Hub, JoinError, JoinOptions, Outbound, Position, MISSED};
use futures_util::StreamExt;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

pub(crate) async fn serve_channel(
    State(live): State<Arc<Proxy>>,
    Wire(query): Wire,
    request: axum::http::Request<axum::body::Body>,
) -> Response {
    let (mut parts, _) = request.into_parts();
    match open(&live, query, &mut parts).await {
        Ok(opened) => opened,
        Err(refusal) => refuse(refusal, parts).await,
    }
}

/// A handshake checked and upgraded: the socket joined to the channel's hub (implemented) or to
/// the upstream's socket (remote). Every refusal comes before the upgrade is taken from `parts`.
async fn open(
    live: &Arc<Proxy>,
    query: WireQuery<'static>,
    parts: &mut http::request::Parts,
) -> Result<Response, Refusal> {
    use axum::extract::FromRequestParts;
    if parts.method != http::Method::GET {
        return Err(Refusal::MethodNotAllowed(format!(
            "a channel's handshake opens with GET, not {}",
            parts.method
        )));
    }
    // Addressed after the verb is checked, and refused as every handshake refusal is (by
    // `refuse`, which answers a page of the proxy's own origin with a close it can read).
    let Addressed {
        client,
        endpoint,
        variables,
        query,
    } = Addressed::of(live, query)?;
    if let Some(limiter) = &live.rate_limit {
        let peer = call::peer_of(&parts.extensions);
        limiter.check(client.session(), &parts.headers, peer)?;
    }
    check_socket_origin(client.api(), &endpoint, parts)?;
    let remote = match endpoint.definition() {
        EndpointDef::Channel(channel) => !matches!(channel.source(), ChannelSource::Implemented(_)),
        _ => {
            return Err(Refusal::NotInRoutes(format!(
                "`{}` is not a channel",
                endpoint.path()
            )))
        }
    };
    let upgrade = WebSocketUpgrade::from_request_parts(parts, &())
        .await
        .map_err(|e| Refusal::BadRequest(format!("not a WebSocket handshake: {e}")))?
        .max_message_size(live.max_message_size)
        .max_frame_size(live.max_message_size)
        .read_buffer_size(READ_BUFFER);
    let parts = std::mem::replace(parts, http::Request::new(()).into_parts().0);
    let announced = query.hello.as_deref() == Some("1");
    if remote {
        let allow = live.allow.clone();
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
                    parts,
                    allow,
                };
                proxy_socket(socket, upstream, hello, shutdown.token().clone()).await;
            })
        }));
    }
    // The hub of the source's client: in-process callers given that client share its topics.
    let hub = client.hub().clone();
    let buffer = live.buffer;
    let shutdown = live.shutdown.clone();
    let allow = live.allow.clone();
    Ok(upgrade.on_upgrade(move |mut socket| {
        shutdown.clone().track(async move {
            let Some(hello) = read_hello(&mut socket, announced).await else {
                return;
            };
            // The member's handlers run on this socket's task while serving the browser's
            // request, with the hello's allow-listed headers as the handshake's (a browser
            // cannot set a socket's headers): calls `on_join` and `on_message` make carry that
            // user's session and forwarded headers, and they read the request with
            // `ServedRequest::current()`.
            // A hello header never replaces one the browser itself put on the handshake (its
            // `origin`, its cookies): a page's script sets the hello, the browser the handshake.
            let mut parts = parts;
            let joined = join_hello(&mut parts, hello_headers(&hello, &allow, &endpoint));
            let served = call::served_request(parts.clone()).relaying(joined);
            let stop = shutdown.token().clone();
            served
                .scope(run_socket(
                    socket, hub, endpoint, variables, buffer, hello, stop,
                ))
                .await;
        })
    }))
}

/// Answers a refused handshake. A browser is told nothing of a handshake refused with an HTTP
/// status (it sees a close with 1006, which a channel retries), so a refusal that retrying will
/// not change (a 4xx but 408 and 429, which say "later") is told to the proxy's own pages as a
/// close code instead: the socket is accepted and closed at once with 4000 + the status and
/// `CODE: message` ([`refusal_close`]). Another site's page, a client that sends no `Origin`
/// (and can read the status), and a handshake over the rate limit (whose page's channel should
/// retry, with its backoff) get the HTTP refusal, before any upgrade.
async fn refuse(refusal: Refusal, mut parts: http::request::Parts) -> Response {
    use axum::extract::FromRequestParts;
    let status = refusal.status();
    if status.is_client_error()
        && !says_later(status)
        && courier_layers::session::is_own_origin(&parts.headers, &parts.uri)
    {
        if let Ok(upgrade) = WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            let frame = refusal_close(status.as_u16(), refusal.code(), &refusal.message());
            return upgrade.on_upgrade(move |mut socket| async move {
                let _ = socket.send(frame).await;
            });
        }
    }
    refusal.into_response()
}

/// Whether a 4xx says "later" rather than "never": 408 and 429.
fn says_later(status: http::StatusCode) -> bool {
    status == http::StatusCode::REQUEST_TIMEOUT || status == http::StatusCode::TOO_MANY_REQUESTS
}

/// The close frame of a channel refused for good: [`wire::refusal_close`].
fn refusal_close(status: u16, code: &'static str, message: &str) -> Message {
    crate::gauges::refused(code);
    let (code, reason) = wire::refusal_close(status, code, message);
    close(code, reason)
}

/// Whether the upstream (or the source's stack on the way to it) refused a channel for a
/// reason retrying will not change, and the close that tells the browser so: the upstream's
/// handshake answered 4xx (not 408 or 429, which say "later"), or a layer refused it (the
/// session's checks). `None` for what may pass (a network failure, a timeout, a 5xx): the
/// browser is closed with 1011 and reconnects.
fn refused_for_good(error: &courier_client::Error) -> Option<Message> {
    if let Some(refused) = error.refused() {
        let status = refused.status().as_u16();
        if (400..500).contains(&status) {
            return Some(refusal_close(status, refused.code(), &refused.message()));
        }
        return None;
    }
    let status = error.status()?;
    if !status.is_client_error() || says_later(status) {
        return None;
    }
    Some(refusal_close(
        status.as_u16(),
        "UPSTREAM_REFUSED",
        &format!("the upstream refused the channel with {status}"),
    ))
}

/// The hello frame's `headers` that cross as the handshake's own would: allow-listed names only
/// (`allow`). Joined to the handshake's head ([`join_hello`]), they are relayed as its own
/// headers are: under what the source or the endpoint's `.via()` sets.
fn hello_headers(
    hello: &Hello,
    allow: &courier_layers::allow_headers::AllowHeadersLayer,
    endpoint: &ResolvedEndpoint,
) -> http::HeaderMap {
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
    headers
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
    if endpoint.meta().get_session() == courier_core::SessionMode::Off {
        return Ok(());
    }
    courier_layers::session::SessionLayer::new(session.clone())
        .check_handshake(&call::served_request(parts.clone()))
        .map_err(|refused| Refusal::Session {
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
        Ok(Some(Ok(Message::Text(text)))) => match wire::first_frame(text.as_str()) {
            Ok(hello) => Some(hello),
            Err(wire::NotJson) => {
                let _ = socket
                    .send(close(wire::CLOSE_NOT_JSON, "a message is JSON text"))
                    .await;
                None
            }
        },
        Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) => None,
        Ok(Some(Ok(_))) => Some(Hello::default()),
    }
}

/// A channel another process serves, as the proxy reaches it: the source's client, the
/// endpoint, the variables, the browser's handshake and the allow-list rules.
struct Upstream {
    client: courier_client::Client,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Value,
    parts: http::request::Parts,
    allow: courier_layers::allow_headers::AllowHeadersLayer,
}

/// Puts the hello's `headers` on the handshake's head `parts`, each of a name the browser did
/// not set itself (a page's script sets the hello, the browser the handshake); the names joined.
fn join_hello(parts: &mut http::request::Parts, headers: http::HeaderMap) -> Vec<http::HeaderName> {
    let mut joined = Vec::new();
    for (name, value) in &headers {
        if !parts.headers.contains_key(name) {
            parts.headers.insert(name.clone(), value.clone());
            joined.push(name.clone());
        }
    }
    joined
}

/// How many bytes a socket's read takes at most. tungstenite zeroes this much of its buffer
/// before each read (128 KiB by default), which was a third of a served channel's CPU time
/// under an echo load of small messages; with 8 KiB the echo served 1.11x the round trips
/// (docs/benchmarks-history.md, "WebSocket echo, 64 connections"). A larger message takes a few
/// reads more.
const READ_BUFFER: usize = 8 * 1024;

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
    let _open = crate::gauges::Open::channel();
    let Upstream {
        client,
        endpoint,
        variables,
        mut parts,
        allow,
    } = upstream;
    let path = endpoint.path().to_owned();
    // The hello's headers cross as the handshake's would: allow-listed names only, relayed
    // under a header the source or the endpoint's `.via()` sets.
    join_hello(&mut parts, hello_headers(&hello, &allow, &endpoint));
    let peer = call::peer_of(&parts.extensions);
    let options = call::upstream_options(&allow, &endpoint, parts, peer);
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
            let frame = refused_for_good(&e)
                .unwrap_or_else(|| close(1011, format!("the upstream refused: {e}")));
            let _ = socket.send(frame).await;
            return;
        }
    };
    if let Some(message) = pending {
        if let Err(e) = upstream.send(message) {
            let _ = socket.send(close(1008, e.to_string())).await;
            return;
        }
    }
    pump(&mut socket, &mut Remote(&mut upstream), &stop).await;
    upstream.close();
}

/// What the far end of a browser's socket says next.
enum Out {
    /// A message for the browser.
    Message(Value),
    /// A frame of courier's own for the browser, written as it is (a position).
    Frame(String),
    /// Close the browser's socket with this code and reason: the channel is over.
    Close(u16, String),
    /// The far end is gone, with nothing to say.
    Gone,
}

/// The far end of a browser's socket: the channel's hub for a channel served here
/// ([`Implemented`]), the upstream's socket for one another process serves ([`Remote`]).
trait FarEnd {
    /// What to hand the browser next.
    fn next(&mut self) -> impl std::future::Future<Output = Out> + Send;
    /// Takes a message the browser sent; an `Err` is the close frame that ends the socket.
    fn take(
        &mut self,
        message: Value,
    ) -> impl std::future::Future<Output = Result<(), Message>> + Send;
}

/// Pumps a browser's socket against its far end until either side ends or the proxy stops:
/// the far end's messages and close to the browser; the browser's messages, by the channel
/// rules of [`Inbound`], to the far end; heartbeats answered here.
async fn pump(
    socket: &mut WebSocket,
    far: &mut impl FarEnd,
    stop: &courier_core::CancellationToken,
) {
    // One wait for the whole socket: a fresh one each turn registers and unregisters a waiter
    // with the token, a lock each time.
    let stopped = stop.cancelled();
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            () = &mut stopped => {
                let _ = socket.send(going_away()).await;
                break;
            }
            out = far.next() => match out {
                Out::Message(message) => {
                    if socket.send(Message::Text(message.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Out::Frame(frame) => {
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        break;
                    }
                }
                Out::Close(code, reason) => {
                    let _ = socket.send(close(code, reason)).await;
                    break;
                }
                Out::Gone => break,
            },
            received = socket.recv() => {
                let message = match inbound(received) {
                    Inbound::Message(message) => message,
                    Inbound::Skip => continue,
                    Inbound::Ping => {
                        if socket.send(Message::Text(wire::PONG.into())).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Inbound::End(close) => {
                        end(socket, close).await;
                        break;
                    }
                };
                if let Err(close) = far.take(message).await {
                    let _ = socket.send(close).await;
                    break;
                }
            }
        }
    }
}

/// The upstream's socket, through the source's channel client: its close code and reason are
/// passed on; a message it cannot take closes the browser's socket with 1008.
struct Remote<'a>(&'a mut courier_client::ws::Connection<Value, Value>);

impl FarEnd for Remote<'_> {
    async fn next(&mut self) -> Out {
        match self.0.next().await {
            Some(Ok(message)) => Out::Message(message),
            Some(Err(e)) => {
                let (code, reason) = e
                    .close()
                    .map_or((1011, e.to_string()), |c| (c.code, c.reason.clone()));
                Out::Close(code, reason)
            }
            None => Out::Close(1000, "the channel ended".to_owned()),
        }
    }

    async fn take(&mut self, message: Value) -> Result<(), Message> {
        self.0.send(message).map_err(|e| close(1008, e.to_string()))
    }
}

/// A subscriber joined to the channel's hub: a first frame that is a hello is skipped; a
/// message on a push-only channel closes with 1008; a handler's error is logged. A subscriber
/// that keeps positions (its hello had `since`) is written where it begins and each message's
/// position (`docs/PROTOCOL.md`, "Positions and recovery"); another, messages as they are.
struct Implemented<'a> {
    member: &'a mut courier_live::Member,
    endpoint: &'a str,
    /// No frame has come yet.
    first: bool,
    /// The subscriber keeps positions.
    positions: bool,
}

impl FarEnd for Implemented<'_> {
    async fn next(&mut self) -> Out {
        loop {
            return match self.member.recv().await {
                Some(Outbound::Message { data, at }) => match at {
                    Some(at) if self.positions => {
                        Out::Frame(wire::positioned_frame(&at.to_string(), &data))
                    }
                    _ => Out::Message(data),
                },
                Some(Outbound::Start { at }) if self.positions => {
                    Out::Frame(wire::at_frame(&at.to_string()))
                }
                Some(Outbound::Close { code, reason }) => Out::Close(code, reason),
                Some(_) => continue,
                None => Out::Gone,
            };
        }
    }

    async fn take(&mut self, message: Value) -> Result<(), Message> {
        if std::mem::take(&mut self.first) && wire::is_hello(&message) {
            return Ok(());
        }
        if !self.member.accepts_messages() {
            return Err(close(1008, "this channel takes no messages"));
        }
        if let Err(e) = self.member.send(message).await {
            tracing::warn!(endpoint = %self.endpoint, error = %e, "a channel's on_message failed");
        }
        Ok(())
    }
}

/// The close frame of a proxy shutting down: 1001, after which a client reconnects.
fn going_away() -> Message {
    close(1001, "the server is going away")
}

/// A close frame; a reason over [`wire::MAX_CLOSE_REASON`] bytes is cut there
/// ([`wire::close_reason`]).
fn close(code: u16, reason: impl Into<String>) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: wire::close_reason(reason.into()).into(),
    }))
}

/// A browser's frame on a channel's socket, by the channel rules: a message is JSON text, or
/// binary holding it; anything else closes the socket with 1003, a frame over the size limit
/// with 1009.
enum Inbound {
    Message(Value),
    /// A browser caller's heartbeat (`wire::is_ping`), which the proxy answers itself.
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
        Some(Ok(Message::Text(text))) => wire::message(text.as_bytes()),
        Some(Ok(Message::Binary(bytes))) => wire::message(&bytes),
        Some(Err(e)) if is_too_large(&e) => {
            return Inbound::End(Some(close(1009, "a message is over the size limit")))
        }
        Some(Err(_)) | Some(Ok(Message::Close(_))) | None => return Inbound::End(None),
        Some(Ok(_)) => return Inbound::Skip,
    };
    match parsed {
        Ok(message) if wire::is_ping(&message) => Inbound::Ping,
        Ok(message) => Inbound::Message(message),
        Err(wire::NotJson) => {
            Inbound::End(Some(close(wire::CLOSE_NOT_JSON, "a message is JSON text")))
        }
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
    hub: Hub,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Value,
    buffer: usize,
    hello: Hello,
    stop: courier_core::CancellationToken,
) {
    let Some(channel) = endpoint.definition().as_channel() else {
        return;
    };
    let _open = crate::gauges::Open::channel();
    let mut options = JoinOptions::default().buffer(buffer);
    if let Some(auth) = hello.auth {
        options = options.auth(auth);
    }
    let positions = hello.since.is_some();
    if let Some(Some(since)) = &hello.since {
        match Position::from_client(since) {
            Ok(since) => options = options.since(since),
            Err(why) => {
                let _ = socket.send(close(MISSED, why)).await;
                return;
            }
        }
    }
    let mut member = match hub.join(endpoint.path(), channel, variables, options).await {
        Ok(member) => member,
        Err(JoinError::Missed(reason)) => {
            let _ = socket.send(close(MISSED, reason)).await;
            return;
        }
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
    let mut hub = Implemented {
        member: &mut member,
        endpoint: endpoint.path(),
        first,
        positions,
    };
    pump(&mut socket, &mut hub, &stop).await;
    if let Err(e) = member.leave().await {
        tracing::warn!(endpoint = %endpoint.path(), error = %e, "a channel's on_leave failed");
    }
}
