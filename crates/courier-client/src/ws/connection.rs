//! [`Connection`]: a channel's socket, its reconnections and its queue of unsent messages.

use crate::caller::Client;
use crate::error::Error;
use courier_core::encode::Variables;
use courier_core::live::{JoinOptions, Member, Outbound};
use courier_core::CancellationToken;
use courier_core::{
    CallOptions, ChannelDispatch, ChannelSource, HttpCallRequest, IntoVariables, ResolvedEndpoint,
    WsOptions,
};
use futures_core::Stream;
use futures_util::{SinkExt, StreamExt};
use http::header::{CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL};
use http::header::{SEC_WEBSOCKET_VERSION, UPGRADE};
use http::{HeaderMap, HeaderValue, StatusCode};
use hyper_util::rt::TokioIo;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Messages received and not yet taken from a [`Connection`]; past this the socket is not read
/// until the connection is polled again, so a slow reader slows its server down instead of
/// growing memory.
const INCOMING: usize = 256;

/// Where a [`Connection`] stands.
///
/// There is no "connecting" state: a [`Connection`] is returned once its first connection is
/// open. Follow the changes with [`Connection::watch_state`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Connected: messages flow both ways.
    Open,
    /// The socket dropped; waiting before reconnection attempt `attempt` (from 1).
    Reconnecting {
        /// The attempt about to be made.
        attempt: u32,
    },
    /// Over for good: closed by the server, by [`Connection::close`], or refused.
    Closed,
}

/// Why a message was not taken by [`Connection::send`].
#[derive(Debug)]
#[non_exhaustive]
pub enum SendError {
    /// The queue of unsent messages is full (`WsOptions::message_queue`); the message was not
    /// queued, and nothing queued before it was dropped.
    QueueFull {
        /// The queue's bound in messages.
        max_count: usize,
        /// The queue's bound in bytes.
        max_bytes: usize,
    },
    /// The message's JSON is larger than `WsOptions::max_message_size`.
    TooLarge {
        /// Its size in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The message does not serialize to JSON.
    Encode(serde_json::Error),
    /// The connection is closed for good.
    Closed,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QueueFull {
                max_count,
                max_bytes,
            } => write!(
                f,
                "the queue of unsent messages is full ({max_count} messages or {max_bytes} bytes)"
            ),
            Self::TooLarge { size, max } => {
                write!(f, "the message is {size} bytes, over the limit of {max}")
            }
            Self::Encode(e) => write!(f, "the message does not serialize to JSON: {e}"),
            Self::Closed => f.write_str("the connection is closed"),
        }
    }
}

impl std::error::Error for SendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// Messages not yet written to the socket, in order; shared byte buffers, so handing one to
/// the socket does not copy it.
struct Queue {
    messages: VecDeque<Utf8Bytes>,
    bytes: usize,
    closed: bool,
}

/// What the user's handles and the socket task share.
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the task when a message is queued.
    queued: Notify,
    max_count: usize,
    max_bytes: usize,
    max_message: usize,
}

impl Shared {
    fn push(&self, text: String) -> Result<(), SendError> {
        if text.len() > self.max_message {
            return Err(SendError::TooLarge {
                size: text.len(),
                max: self.max_message,
            });
        }
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if queue.closed {
            return Err(SendError::Closed);
        }
        if queue.messages.len() >= self.max_count || queue.bytes + text.len() > self.max_bytes {
            return Err(SendError::QueueFull {
                max_count: self.max_count,
                max_bytes: self.max_bytes,
            });
        }
        queue.bytes += text.len();
        queue.messages.push_back(Utf8Bytes::from(text));
        drop(queue);
        self.queued.notify_one();
        Ok(())
    }

    fn front(&self) -> Option<Utf8Bytes> {
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.messages.front().cloned()
    }

    fn pop(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sent) = queue.messages.pop_front() {
            queue.bytes -= sent.len();
        }
    }

    fn close(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.closed = true;
    }
}

/// Held by every user handle; when the last goes, the socket task closes the socket and ends.
struct Alive(CancellationToken);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// What the socket task hands the [`Connection`].
enum Incoming {
    Message(String),
    Failed(Error),
}

/// A connection to a channel: a `futures_core::Stream` of the channel's typed messages and,
/// when the channel has `.send()` (`S` is a `Serialize` type), [`Connection::send`].
///
/// A task on the tokio runtime owns the socket; see the [module docs](super) for how it
/// reconnects, what it queues and when it ends. Dropping the connection and every [`Sender`]
/// closes the socket.
///
/// A push-only channel (`S` is [`NoSend`](courier_core::typed::NoSend)) has no `send`:
///
/// ```compile_fail
/// use courier_client::ws::Connection;
/// use courier_core::typed::NoSend;
///
/// fn push_only(ticks: Connection<u64, NoSend>) {
///     let _ = ticks.send(NoSend);
/// }
/// ```
#[must_use = "a connection yields nothing unless polled"]
pub struct Connection<R, S> {
    incoming: mpsc::Receiver<Incoming>,
    shared: Arc<Shared>,
    state: watch::Receiver<ConnectionState>,
    alive: Arc<Alive>,
    endpoint: Arc<str>,
    _types: PhantomData<fn(S) -> R>,
}

impl<R, S> Connection<R, S> {
    /// Where the connection stands now.
    pub fn state(&self) -> ConnectionState {
        *self.state.borrow()
    }

    /// Follows the connection's state as it changes.
    pub fn watch_state(&self) -> watch::Receiver<ConnectionState> {
        self.state.clone()
    }

    /// Closes the socket (close code 1000); the stream then ends. Messages still queued are
    /// dropped with it.
    pub fn close(&self) {
        self.shared.close();
        self.alive.0.cancel();
    }
}

impl<R, S: Serialize> Connection<R, S> {
    /// Sends a message: written at once when connected, else queued until the next
    /// connection opens, in order.
    ///
    /// # Errors
    ///
    /// See [`SendError`]: nothing is dropped silently.
    pub fn send(&self, message: S) -> Result<(), SendError> {
        send(&self.shared, &message)
    }

    /// A cloneable handle that sends on this connection from anywhere.
    pub fn sender(&self) -> Sender<S> {
        Sender {
            shared: Arc::clone(&self.shared),
            alive: Arc::clone(&self.alive),
            _send: PhantomData,
        }
    }
}

fn send<S: Serialize>(shared: &Shared, message: &S) -> Result<(), SendError> {
    let text = serde_json::to_string(message).map_err(SendError::Encode)?;
    shared.push(text)
}

impl<R: DeserializeOwned, S> Stream for Connection<R, S> {
    type Item = Result<R, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.incoming.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Incoming::Failed(e))) => {
                Poll::Ready(Some(Err(e.with_endpoint(&this.endpoint))))
            }
            Poll::Ready(Some(Incoming::Message(text))) => {
                Poll::Ready(Some(serde_json::from_str(&text).map_err(|e| {
                    Error::decode(StatusCode::SWITCHING_PROTOCOLS, e).with_endpoint(&this.endpoint)
                })))
            }
        }
    }
}

impl<R, S> fmt::Debug for Connection<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("endpoint", &self.endpoint)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// Sends on a [`Connection`] from anywhere; cloneable.
pub struct Sender<S> {
    shared: Arc<Shared>,
    alive: Arc<Alive>,
    _send: PhantomData<fn(S)>,
}

impl<S: Serialize> Sender<S> {
    /// See [`Connection::send`].
    ///
    /// # Errors
    ///
    /// See [`SendError`].
    pub fn send(&self, message: S) -> Result<(), SendError> {
        send(&self.shared, &message)
    }
}

impl<S> Clone for Sender<S> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            alive: Arc::clone(&self.alive),
            _send: PhantomData,
        }
    }
}

impl<S> fmt::Debug for Sender<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("closed", &self.alive.0.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// The handshake did not switch protocols as RFC 6455 requires.
#[derive(Debug)]
struct BadHandshake(&'static str);

impl fmt::Display for BadHandshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BadHandshake {}

/// Everything one connection attempt needs; cloned into the socket task.
#[derive(Clone)]
struct Dialer {
    client: Client,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
    ws: WsOptions,
}

impl Dialer {
    /// The hello frame opening the next connection, its parameters computed afresh; `None`
    /// without `WsOptions::auth`.
    async fn hello(&self) -> Result<Option<Message>, Error> {
        let params = match &self.ws.auth {
            Some(auth) => auth
                .params()
                .await
                .map_err(|e| Error::path_options(Box::new(AuthFailed(e))))?,
            None => None,
        };
        // A proxy caller's default headers travel in the first frame too.
        let headers: serde_json::Map<String, Value> = self
            .client
            .proxy_headers()
            .into_iter()
            .flatten()
            .filter_map(|(name, value)| Some((name.to_string(), Value::from(value.to_str().ok()?))))
            .collect();
        // Nothing to authenticate with and no headers: no hello frame.
        if params.is_none() && headers.is_empty() {
            return Ok(None);
        }
        let mut hello = serde_json::json!({ "type": "courier.hello" });
        if let Some(params) = params {
            hello["auth"] = Value::Object(params);
        }
        if !headers.is_empty() {
            hello["headers"] = Value::Object(headers);
        }
        Ok(Some(Message::text(hello.to_string())))
    }

    /// The hello frame, then a connection: what `connect` awaits.
    async fn first(&self) -> Result<Socket, Error> {
        let hello = self.hello().await?;
        self.dial(hello).await
    }

    /// One handshake through the endpoint's layer stack, then the socket, opened with `hello`.
    async fn dial(&self, hello: Option<Message>) -> Result<Socket, Error> {
        let key = generate_key();
        let mut headers = HeaderMap::new();
        headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        headers.insert(
            SEC_WEBSOCKET_KEY,
            HeaderValue::try_from(key.as_str()).map_err(|e| Error::protocol(StatusCode::OK, e))?,
        );
        if !self.ws.protocols.is_empty() {
            let offered = self.ws.protocols.join(", ");
            let value = HeaderValue::try_from(offered).map_err(|e| {
                Error::from(courier_core::ConfigurationError::new(
                    courier_core::ErrorCode::InvalidOption,
                    format!("a WebSocket subprotocol is not a valid header value: {e}"),
                ))
            })?;
            headers.insert(SEC_WEBSOCKET_PROTOCOL, value);
        }
        // `_h=1` tells a courier server that a hello frame follows, so it reads it before
        // joining the subscriber (see docs/PROTOCOL.md).
        let announce = hello.is_some().then_some(("_h", "1"));
        let mut response = self
            .client
            .handshake_with(
                &self.endpoint,
                self.variables.clone(),
                self.options.as_ref(),
                headers,
                announce,
            )
            .await?;
        if response.status() != StatusCode::SWITCHING_PROTOCOLS {
            return Err(crate::caller::refused(
                response,
                BadHandshake("the server did not switch to the WebSocket protocol"),
            )
            .await);
        }
        let accepted = response
            .headers()
            .get(SEC_WEBSOCKET_ACCEPT)
            .is_some_and(|v| v.as_bytes() == derive_accept_key(key.as_bytes()).as_bytes());
        if !accepted {
            return Err(Error::protocol(
                StatusCode::SWITCHING_PROTOCOLS,
                BadHandshake("the server's `sec-websocket-accept` does not match the key"),
            ));
        }
        if let Some(chosen) = response.headers().get(SEC_WEBSOCKET_PROTOCOL) {
            let offered = chosen
                .to_str()
                .is_ok_and(|chosen| self.ws.protocols.iter().any(|p| p == chosen));
            if !offered {
                return Err(Error::protocol(
                    StatusCode::SWITCHING_PROTOCOLS,
                    BadHandshake("the server chose a WebSocket subprotocol that was not offered"),
                ));
            }
        }
        let upgraded = hyper::upgrade::on(&mut response)
            .await
            .map_err(|e| Error::from_network(Box::new(e)))?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(self.ws.max_message_size))
            .max_frame_size(Some(self.ws.max_message_size));
        let mut socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, Some(config))
                .await;
        if let Some(hello) = hello {
            let sent = tokio::time::timeout(stall(&self.ws), socket.send(hello)).await;
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::from_network(Box::new(e))),
                Err(_) => return Err(Error::timeout()),
            }
        }
        Ok(socket)
    }
}

/// `WsOptions::auth`'s function failed.
#[derive(Debug)]
struct AuthFailed(courier_core::BoxError);

impl fmt::Display for AuthFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the channel's auth parameters could not be computed: {}",
            self.0
        )
    }
}

impl std::error::Error for AuthFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// How long one write may take, and a closing handshake: the heartbeat's interval plus its
/// timeout, after which the connection counts as dead.
fn stall(ws: &WsOptions) -> Duration {
    Duration::from_millis(
        ws.heartbeat
            .interval_ms
            .max(1)
            .saturating_add(ws.heartbeat.timeout_ms.max(1)),
    )
}

/// How a session on one socket ended.
enum Ended {
    /// For good: the stream ends (after `Some` error, when there is one).
    Over(Option<Error>),
    /// The socket dropped: reconnect.
    Dropped,
}

/// The close codes after which a client reconnects.
fn reconnects(code: u16) -> bool {
    matches!(code, 1001 | 1005 | 1006 | 1011 | 1012 | 1013 | 1014)
}

/// The socket task: sessions and reconnections until the channel ends or every handle is gone.
async fn run(
    dialer: Dialer,
    mut socket: Socket,
    shared: Arc<Shared>,
    incoming: mpsc::Sender<Incoming>,
    state: watch::Sender<ConnectionState>,
    stop: CancellationToken,
) {
    loop {
        match session(&dialer.ws, &mut socket, &shared, &incoming, &stop).await {
            Ended::Over(None) => break,
            Ended::Over(Some(error)) => {
                deliver(&incoming, Incoming::Failed(error), &stop).await;
                break;
            }
            Ended::Dropped => {}
        }
        match reconnect(&dialer, &incoming, &state, &stop).await {
            Some(next) => socket = next,
            None => break,
        }
        let _ = state.send(ConnectionState::Open);
    }
    shared.close();
    let _ = state.send(ConnectionState::Closed);
}

/// Backs off and reconnects until a connection opens (`Some`), a handshake is refused for good
/// (its error handed on, `None`) or every handle is gone (`None`).
async fn reconnect(
    dialer: &Dialer,
    incoming: &mpsc::Sender<Incoming>,
    state: &watch::Sender<ConnectionState>,
    stop: &CancellationToken,
) -> Option<Socket> {
    let mut attempt = 1u32;
    loop {
        let _ = state.send(ConnectionState::Reconnecting { attempt });
        let attempted = async {
            tokio::time::sleep(backoff(&dialer.ws, attempt)).await;
            // A failing auth function is worth an error item, then another attempt.
            let hello = match dialer.hello().await {
                Ok(hello) => hello,
                Err(e) => return Err((e, true)),
            };
            dialer.dial(hello).await.map_err(|e| (e, false))
        };
        let outcome = tokio::select! {
            biased;
            () = stop.cancelled() => return None,
            outcome = attempted => outcome,
        };
        match outcome {
            Ok(socket) => return Some(socket),
            Err((e, true)) => {
                tracing::debug!(error = %e, attempt, "channel auth failed; backing off");
                if !deliver(incoming, Incoming::Failed(e), stop).await {
                    return None;
                }
            }
            Err((e, false)) if e.is_network() || e.is_timeout() || e.status_code() >= 500 => {
                tracing::debug!(error = %e, attempt, "channel reconnection failed");
            }
            Err((e, false)) => {
                deliver(incoming, Incoming::Failed(e), stop).await;
                return None;
            }
        }
        attempt = attempt.saturating_add(1);
    }
}

/// Hands an item to the [`Connection`]; `false` once every handle is gone. Items for a
/// [`Connection`] already dropped (its [`Sender`]s live on) are discarded: nobody can read them.
async fn deliver(
    incoming: &mpsc::Sender<Incoming>,
    item: Incoming,
    stop: &CancellationToken,
) -> bool {
    tokio::select! {
        biased;
        () = stop.cancelled() => false,
        _ = incoming.send(item) => true,
    }
}

/// Writes one frame. A write stalled past [`stall`] (the server stopped reading) counts as a
/// dropped connection, as an unanswered heartbeat does.
async fn write(socket: &mut Socket, message: Message, ws: &WsOptions) -> Result<(), Ended> {
    match tokio::time::timeout(stall(ws), socket.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Ended::Dropped),
        Err(_) => {
            tracing::debug!("channel write stalled; reconnecting");
            Err(Ended::Dropped)
        }
    }
}

/// The closing handshake from this side, bounded by [`stall`]. Also flushes the answer to a
/// close the server started.
async fn close(socket: &mut Socket, frame: Option<CloseFrame>, ws: &WsOptions) {
    let _ = tokio::time::timeout(stall(ws), socket.close(frame)).await;
}

/// Reads and writes one socket until it ends.
async fn session(
    ws: &WsOptions,
    socket: &mut Socket,
    shared: &Shared,
    incoming: &mpsc::Sender<Incoming>,
    stop: &CancellationToken,
) -> Ended {
    let interval = Duration::from_millis(ws.heartbeat.interval_ms.max(1));
    let answer = Duration::from_millis(ws.heartbeat.timeout_ms.max(1));
    let mut next_ping = Instant::now() + interval;
    // Set when a ping is out and nothing has come since.
    let mut deadline: Option<Instant> = None;
    let normal = || {
        Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })
    };
    loop {
        // Write what is queued, in order; a message leaves the queue once written, so one
        // whose write failed goes out first on the next connection.
        while let Some(text) = shared.front() {
            if stop.is_cancelled() {
                break;
            }
            if let Err(ended) = write(socket, Message::text(text), ws).await {
                return ended;
            }
            shared.pop();
        }
        let wake = deadline.map_or(next_ping, |d| d.min(next_ping));
        tokio::select! {
            biased;
            () = stop.cancelled() => {
                close(socket, normal(), ws).await;
                return Ended::Over(None);
            }
            frame = socket.next() => {
                deadline = None;
                let item = match frame {
                    None | Some(Err(tungstenite::Error::ConnectionClosed)) => return Ended::Dropped,
                    Some(Err(tungstenite::Error::Capacity(e))) => {
                        let too_big = CloseFrame { code: CloseCode::Size, reason: "message too big".into() };
                        close(socket, Some(too_big), ws).await;
                        return Ended::Over(Some(Error::closed(1009, e.to_string())));
                    }
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "channel socket failed; reconnecting");
                        return Ended::Dropped;
                    }
                    Some(Ok(Message::Text(text))) => Incoming::Message(text.as_str().to_owned()),
                    Some(Ok(Message::Binary(bytes))) => match String::from_utf8(bytes.into()) {
                        Ok(text) => Incoming::Message(text),
                        Err(e) => Incoming::Failed(Error::decode(StatusCode::SWITCHING_PROTOCOLS, e)),
                    },
                    Some(Ok(Message::Close(frame))) => {
                        // Sends the answer tungstenite queued.
                        close(socket, None, ws).await;
                        let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.as_str().to_owned()));
                        if reconnects(code) {
                            tracing::debug!(code, %reason, "channel closed by the server; reconnecting");
                            return Ended::Dropped;
                        }
                        if code == 1000 {
                            return Ended::Over(None);
                        }
                        return Ended::Over(Some(Error::closed(code, reason)));
                    }
                    // Pings are answered by the socket itself; pongs only prove life.
                    Some(Ok(_)) => continue,
                };
                if !deliver(incoming, item, stop).await {
                    close(socket, normal(), ws).await;
                    return Ended::Over(None);
                }
            }
            () = shared.queued.notified() => {}
            () = tokio::time::sleep_until(wake) => {
                let now = Instant::now();
                if deadline.is_some_and(|d| d <= now) {
                    tracing::debug!("channel heartbeat unanswered; reconnecting");
                    return Ended::Dropped;
                }
                if next_ping <= now {
                    if let Err(ended) = write(socket, Message::Ping(Default::default()), ws).await {
                        return ended;
                    }
                    next_ping = now + interval;
                    deadline.get_or_insert(now + answer);
                }
            }
        }
    }
}

/// The in-process counterpart of [`run`]: a hub member of a channel this process implements.
/// Its close codes end the connection (there is no socket to reconnect): 1000 quietly, any
/// other with an [`Error::is_closed`] item.
async fn run_local(
    mut member: Member,
    shared: Arc<Shared>,
    incoming: mpsc::Sender<Incoming>,
    state: watch::Sender<ConnectionState>,
    stop: CancellationToken,
) {
    loop {
        while let Some(text) = shared.front() {
            shared.pop();
            let sent = match serde_json::from_str::<Value>(text.as_str()) {
                Ok(message) => member.send(message).await,
                Err(e) => Err(e.into()),
            };
            if let Err(e) = sent {
                let failed = Error::closed(1011, e.to_string());
                if !deliver(&incoming, Incoming::Failed(failed), &stop).await {
                    break;
                }
            }
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            () = shared.queued.notified() => {}
            out = member.recv() => match out {
                Some(Outbound::Message { data }) => {
                    if !deliver(&incoming, Incoming::Message(data.to_string()), &stop).await {
                        break;
                    }
                }
                Some(Outbound::Close { code, reason }) => {
                    if code != 1000 {
                        deliver(&incoming, Incoming::Failed(Error::closed(code, reason)), &stop).await;
                    }
                    break;
                }
                None => break,
            },
        }
    }
    shared.close();
    let _ = state.send(ConnectionState::Closed);
    if let Err(e) = member.leave().await {
        tracing::warn!(error = %e, "a channel's on_leave failed");
    }
}

/// The wait before reconnection attempt `attempt` (from 1): the options' backoff
/// ([`Backoff::delay`](courier_core::Backoff::delay)), its jitter drawn afresh.
fn backoff(ws: &WsOptions, attempt: u32) -> Duration {
    use tower::util::rng::{HasherRng, Rng};
    ws.backoff.delay(attempt, HasherRng::new().next_f64())
}

impl ChannelDispatch for Client {
    type Connection<R: DeserializeOwned + Send + 'static, S: Send + 'static> = Connection<R, S>;

    async fn connect<R, S, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> Result<Connection<R, S>, Error>
    where
        R: DeserializeOwned + Send + 'static,
        S: Send + 'static,
        V: IntoVariables + Send,
    {
        let endpoint = Arc::clone(request.endpoint);
        let path: Arc<str> = endpoint.path().into();
        let variables = self.variables(&endpoint, request.variables)?;
        self.open_channel(
            endpoint,
            variables,
            request.options.cloned(),
            self.ws_options().clone(),
        )
        .await
        .map_err(|e| e.with_endpoint(&path))
    }
}

impl Client {
    /// Connects to the channel at `path` with JSON `variables`: its messages as JSON, and JSON
    /// messages sent. What the CLI and the proxy use; typed views connect through
    /// [`ChannelDispatch`].
    ///
    /// # Errors
    ///
    /// An unknown path (`ENDPOINT_NOT_IN_ROUTES`) or one that is not a channel, and every way
    /// the first connection can fail.
    pub async fn channel(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
    ) -> Result<Connection<Value, Value>, Error> {
        self.channel_with(path, variables, options, self.ws_options().clone())
            .await
    }

    /// [`Client::channel`] with socket settings of its own instead of the client's: what the
    /// proxy uses to pass a browser's `auth` on to the upstream.
    ///
    /// # Errors
    ///
    /// As [`Client::channel`].
    pub async fn channel_with(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
        ws: WsOptions,
    ) -> Result<Connection<Value, Value>, Error> {
        let endpoint = self.endpoint_at(path)?;
        self.open_channel(endpoint, Variables::Json(variables), options.cloned(), ws)
            .await
            .map_err(|e| e.with_endpoint(path))
    }

    async fn open_channel<R, S>(
        &self,
        endpoint: Arc<ResolvedEndpoint>,
        variables: Variables,
        options: Option<CallOptions>,
        ws: WsOptions,
    ) -> Result<Connection<R, S>, Error> {
        let path: Arc<str> = endpoint.path().into();
        let Some(channel) = endpoint.definition().as_channel() else {
            return Err(courier_core::ConfigurationError::new(
                courier_core::ErrorCode::InvalidOption,
                format!("`{path}` is not a channel"),
            )
            .at(&*path)
            .into());
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                messages: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            queued: Notify::new(),
            max_count: ws.message_queue.max_count,
            max_bytes: ws.message_queue.max_bytes,
            max_message: ws.max_message_size,
        });
        let (incoming, receiver) = mpsc::channel(INCOMING);
        let (state, watching) = watch::channel(ConnectionState::Open);
        let stop = CancellationToken::new();
        // The call's or the source's signal closes the connection as `close()` does.
        let signals = [
            options
                .as_ref()
                .and_then(CallOptions::signal_value)
                .cloned(),
            self.api().options().signal.clone(),
        ];
        for signal in signals.into_iter().flatten() {
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = signal.cancelled() => stop.cancel(),
                    () = stop.cancelled() => {}
                }
            });
        }
        let connection = Connection {
            incoming: receiver,
            shared: Arc::clone(&shared),
            state: watching,
            alive: Arc::new(Alive(stop.clone())),
            endpoint: Arc::clone(&path),
            _types: PhantomData,
        };
        // A proxy caller reaches even an implemented channel through the proxy.
        if let (ChannelSource::Implemented(_), false) = (channel.source(), self.is_proxy()) {
            let variables = crate::caller::in_process_variables(variables)?;
            let mut options = JoinOptions::default().buffer(INCOMING);
            // In process, `auth`'s parameters reach the handlers as they would from a socket.
            if let Some(auth) = &ws.auth {
                let params = auth
                    .params()
                    .await
                    .map_err(|e| Error::path_options(Box::new(AuthFailed(e))))?;
                if let Some(params) = params {
                    options = options.auth(params);
                }
            }
            let member = self
                .api()
                .hub()
                .join(&path, channel, variables, options)
                .await
                .map_err(|e| Error::closed(1008, e.to_string()))?;
            tokio::spawn(run_local(member, shared, incoming, state, stop));
            return Ok(connection);
        }
        let dialer = Dialer {
            client: self.clone(),
            endpoint,
            variables,
            options,
            ws,
        };
        let socket = dialer.first().await?;
        tokio::spawn(run(dialer, socket, shared, incoming, state, stop));
        Ok(connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::Backoff;

    fn ws(initial_ms: u64, max_ms: u64, factor: f64, jitter: bool) -> WsOptions {
        WsOptions::new().backoff(Backoff {
            initial_ms,
            max_ms,
            factor,
            jitter,
        })
    }

    fn shared(max_count: usize, max_bytes: usize, max_message: usize) -> Shared {
        Shared {
            queue: Mutex::new(Queue {
                messages: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            queued: Notify::new(),
            max_count,
            max_bytes,
            max_message,
        }
    }

    #[test]
    fn backoff_grows_by_its_factor_up_to_its_cap() {
        let ws = ws(100, 1_000, 2.0, false);
        let waits: Vec<u64> = (1..=6)
            .map(|n| backoff(&ws, n).as_millis() as u64)
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1_000, 1_000]);
        assert_eq!(backoff(&ws, u32::MAX), Duration::from_millis(1_000));
        // A factor below 1 does not shrink the wait.
        assert_eq!(
            backoff(&self::ws(100, 1_000, 0.5, false), 3).as_millis(),
            100
        );
    }

    #[test]
    fn full_jitter_stays_below_the_wait() {
        let ws = ws(100, 1_000, 2.0, true);
        for attempt in 1..=8 {
            let bound = backoff(&self::ws(100, 1_000, 2.0, false), attempt);
            for _ in 0..50 {
                assert!(backoff(&ws, attempt) <= bound);
            }
        }
        let draws: std::collections::HashSet<Duration> = (0..50).map(|_| backoff(&ws, 5)).collect();
        assert!(draws.len() > 1, "jitter varies the wait");
    }

    #[test]
    fn close_codes_that_reconnect() {
        for code in [1001, 1005, 1006, 1011, 1012, 1013, 1014] {
            assert!(reconnects(code), "{code}");
        }
        for code in [1000, 1002, 1003, 1007, 1008, 1009, 1010, 4000, 4999] {
            assert!(!reconnects(code), "{code}");
        }
    }

    #[test]
    fn the_queue_refuses_what_does_not_fit_and_drops_nothing() {
        let queue = shared(2, 10, 6);
        assert!(matches!(
            queue.push("1234567".into()),
            Err(SendError::TooLarge { size: 7, max: 6 })
        ));
        queue.push("12345".into()).unwrap();
        // Over the bytes bound.
        assert!(matches!(
            queue.push("123456".into()),
            Err(SendError::QueueFull {
                max_count: 2,
                max_bytes: 10
            })
        ));
        queue.push("1".into()).unwrap();
        // Over the count bound.
        assert!(matches!(
            queue.push("2".into()),
            Err(SendError::QueueFull { .. })
        ));
        assert_eq!(queue.front().as_deref(), Some("12345"));
        queue.pop();
        assert_eq!(queue.queue.lock().unwrap().bytes, 1);
        queue.push("abcdef".into()).unwrap();
        assert_eq!(queue.front().as_deref(), Some("1"));
        queue.close();
        assert!(matches!(queue.push("x".into()), Err(SendError::Closed)));
    }

    #[test]
    fn send_errors_say_what_happened() {
        let full = SendError::QueueFull {
            max_count: 5,
            max_bytes: 1024,
        };
        assert_eq!(
            full.to_string(),
            "the queue of unsent messages is full (5 messages or 1024 bytes)"
        );
        let large = SendError::TooLarge {
            size: 200,
            max: 100,
        };
        assert_eq!(
            large.to_string(),
            "the message is 200 bytes, over the limit of 100"
        );
        assert_eq!(SendError::Closed.to_string(), "the connection is closed");
        let encode = serde_json::to_string(&std::collections::HashMap::from([((1, 2), 3)]))
            .map_err(SendError::Encode)
            .unwrap_err();
        assert!(std::error::Error::source(&encode).is_some());
    }

    #[test]
    fn a_write_may_take_the_heartbeat_interval_and_timeout() {
        let ws = WsOptions::new().heartbeat(courier_core::Heartbeat {
            interval_ms: 50,
            timeout_ms: 100,
        });
        assert_eq!(stall(&ws), Duration::from_millis(150));
    }
}
