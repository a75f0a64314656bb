//! Handlers given to `.implement()`: the serving side of streams and channels, type-erased over
//! JSON values. `courier-server` runs them; the typed face wraps typed closures into them.

use crate::body::BoxError;
use crate::tree::path_options::BoxFuture;
use futures_core::Stream;
use serde_json::Value;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// One server-sent event: its `data`, and the optional `id`, `event` name and `retry` hint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event<T> {
    /// What the event carries.
    pub data: T,
    /// The event id; a reconnecting client sends the last one back as `Last-Event-ID`.
    pub id: Option<String>,
    /// The event name.
    pub event: Option<String>,
    /// How long a client waits before it reconnects.
    pub retry: Option<Duration>,
}

impl<T> Event<T> {
    /// An event carrying `data`.
    pub fn new(data: T) -> Self {
        Self {
            data,
            id: None,
            event: None,
            retry: None,
        }
    }

    /// Sets the id.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the event name.
    #[must_use]
    pub fn event(mut self, event: impl Into<String>) -> Self {
        self.event = Some(event.into());
        self
    }
}

/// A boxed stream of events, as an implemented stream produces them.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Event<Value>, BoxError>> + Send>>;

/// A boxed stream of messages, as a push-only channel produces them.
pub type MessageStream = Pin<Box<dyn Stream<Item = Result<Value, BoxError>> + Send>>;

/// What an implemented stream is called with.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StreamRequest {
    /// The subscriber's variables.
    pub variables: Value,
    /// The `Last-Event-ID` a reconnecting subscriber sent.
    pub last_event_id: Option<String>,
}

impl StreamRequest {
    /// A request with these variables.
    pub fn new(variables: Value) -> Self {
        Self {
            variables,
            last_event_id: None,
        }
    }
}

/// A stream handler's error that means "events may have been missed here": the subscriber is
/// to reconnect and resume (from its last event id) rather than stop.
///
/// Yielded by a handler, it ends the response without an error frame and without the end event,
/// so the server's clients reconnect as after a dropped connection; a stream served in process
/// opens the handler again, with the last event id. It is what a hub's followed topic yields when
/// its bus lost messages: the bus reconnected to its server, or the subscriber fell behind.
#[derive(Clone, Debug)]
pub struct MissedEvents {
    /// Why, for people.
    pub reason: String,
}

impl MissedEvents {
    /// Missed events, for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// Whether `error` is one.
    pub fn is(error: &(dyn std::error::Error + 'static)) -> bool {
        error.is::<Self>()
    }
}

impl fmt::Display for MissedEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "events may have been missed: {}", self.reason)
    }
}

impl std::error::Error for MissedEvents {}

type StreamFn = dyn Fn(StreamRequest) -> EventStream + Send + Sync;

/// A stream's `.implement()` handler: from a subscription to a stream of events.
#[derive(Clone)]
pub struct StreamHandler(Arc<StreamFn>);

impl StreamHandler {
    /// Wraps a handler.
    pub fn new<F, S>(f: F) -> Self
    where
        F: Fn(StreamRequest) -> S + Send + Sync + 'static,
        S: Stream<Item = Result<Event<Value>, BoxError>> + Send + 'static,
    {
        Self(Arc::new(move |req| Box::pin(f(req))))
    }

    /// Opens the stream for one subscriber.
    pub fn open(&self, request: StreamRequest) -> EventStream {
        (self.0)(request)
    }
}

impl fmt::Debug for StreamHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StreamHandler(..)")
    }
}

/// What a push-only channel handler is called with.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ChannelRequest {
    /// The subscriber's variables.
    pub variables: Value,
    /// The topic the subscriber joined.
    pub topic: String,
}

impl ChannelRequest {
    /// A request with these variables and topic.
    pub fn new(variables: Value, topic: impl Into<String>) -> Self {
        Self {
            variables,
            topic: topic.into(),
        }
    }
}

/// One subscriber of a served channel, as its handlers see it.
pub trait Peer: Send + Sync {
    /// The subscriber's variables.
    fn variables(&self) -> &Value;
    /// The topic it joined.
    fn topic(&self) -> &str;
    /// The authentication parameters its socket's first frame carried (`WsOptions::auth`),
    /// if any.
    fn auth(&self) -> Option<&serde_json::Map<String, Value>> {
        None
    }
    /// Sends a message to this subscriber only.
    fn send(&self, message: Value) -> Result<(), BoxError>;
    /// Publishes a message to every subscriber of the topic, this one included.
    fn publish(&self, message: Value) -> Result<(), BoxError>;
}

type PeerFn = dyn Fn(Arc<dyn Peer>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync;
type MessageFn =
    dyn Fn(Arc<dyn Peer>, Value) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync;

/// A handler of a subscriber's arrival or departure.
#[derive(Clone)]
pub struct PeerHandler(Arc<PeerFn>);

impl PeerHandler {
    /// Wraps an async handler.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(Arc<dyn Peer>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        Self(Arc::new(move |peer| Box::pin(f(peer))))
    }

    /// Runs the handler.
    pub fn call(&self, peer: Arc<dyn Peer>) -> BoxFuture<'static, Result<(), BoxError>> {
        (self.0)(peer)
    }
}

impl fmt::Debug for PeerHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PeerHandler(..)")
    }
}

/// The handlers of a channel that takes `.send()`: `on_join`, `on_message`, `on_leave`.
#[derive(Clone)]
pub struct ChannelHandlers {
    /// Runs when a subscriber joins.
    pub on_join: Option<PeerHandler>,
    /// Runs for each message a subscriber sends.
    pub on_message: Arc<MessageFn>,
    /// Runs when a subscriber leaves.
    pub on_leave: Option<PeerHandler>,
}

impl ChannelHandlers {
    /// Handlers with `on_message` only.
    pub fn on_message<F, Fut>(f: F) -> Self
    where
        F: Fn(Arc<dyn Peer>, Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        Self {
            on_join: None,
            on_message: Arc::new(move |peer, msg| Box::pin(f(peer, msg))),
            on_leave: None,
        }
    }

    /// Sets `on_join`.
    #[must_use]
    pub fn on_join(mut self, handler: PeerHandler) -> Self {
        self.on_join = Some(handler);
        self
    }

    /// Sets `on_leave`.
    #[must_use]
    pub fn on_leave(mut self, handler: PeerHandler) -> Self {
        self.on_leave = Some(handler);
        self
    }
}

impl fmt::Debug for ChannelHandlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChannelHandlers")
            .field("on_join", &self.on_join.is_some())
            .field("on_leave", &self.on_leave.is_some())
            .finish_non_exhaustive()
    }
}

type PushFn = dyn Fn(ChannelRequest) -> MessageStream + Send + Sync;

/// A channel's `.implement()` handler: a stream of messages for a push-only channel, or
/// [`ChannelHandlers`] once the channel takes `.send()`.
#[derive(Clone)]
pub enum ChannelHandler {
    /// Pushes messages to each subscriber.
    Push(Arc<PushFn>),
    /// Handles a two-way channel.
    Duplex(ChannelHandlers),
}

impl ChannelHandler {
    /// A push-only handler.
    pub fn push<F, S>(f: F) -> Self
    where
        F: Fn(ChannelRequest) -> S + Send + Sync + 'static,
        S: Stream<Item = Result<Value, BoxError>> + Send + 'static,
    {
        Self::Push(Arc::new(move |req| Box::pin(f(req))))
    }
}

impl fmt::Debug for ChannelHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Push(_) => f.write_str("Push(..)"),
            Self::Duplex(h) => f.debug_tuple("Duplex").field(h).finish(),
        }
    }
}
