//! The hub: runs implemented channels for their subscribers, whatever carries them (a
//! WebSocket served by `courier-server`, or an in-process connection of a `Caller`).

use crate::bus::{
    BusStream, Lagged, LocalBus, Outbound, Position, TopicBus, MISSED, MISSED_REASON,
};
use courier_core::BoxError;
use courier_core::{
    ChannelEndpoint, ChannelHandler, ChannelHandlers, ChannelRequest, ChannelSource, Event,
    EventStream, MissedEvents, Peer,
};
use futures_util::StreamExt;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;

/// How a subscriber joins: its buffer, its authentication parameters, and the position it
/// comes back from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct JoinOptions {
    /// Messages kept for the subscriber while it has not read them; past that it is dropped
    /// with close code 1013. Default 256.
    pub buffer: usize,
    /// The subscriber's authentication parameters (the `auth` of its socket's first frame,
    /// from `WsOptions::auth`), which handlers read with [`Peer::auth`].
    pub auth: Option<Map<String, Value>>,
    /// The position of the last message the subscriber had (the hello's `since`): with a bus
    /// that keeps a history, the messages after it are handed first; when they cannot all be
    /// had, the join fails with [`JoinError::Missed`].
    pub since: Option<Position>,
}

impl Default for JoinOptions {
    fn default() -> Self {
        Self {
            buffer: 256,
            auth: None,
            since: None,
        }
    }
}

impl JoinOptions {
    /// Sets the buffer.
    #[must_use]
    pub fn buffer(mut self, messages: usize) -> Self {
        self.buffer = messages.max(1);
        self
    }

    /// Sets the subscriber's authentication parameters.
    #[must_use]
    pub fn auth(mut self, auth: Map<String, Value>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets the position the subscriber comes back from.
    #[must_use]
    pub fn since(mut self, since: Position) -> Self {
        self.since = Some(since);
        self
    }
}

/// Why a subscriber could not join.
#[derive(Debug)]
#[non_exhaustive]
pub enum JoinError {
    /// The channel is not implemented by this process (`.connect()` / `.via()`).
    NotServedHere,
    /// The channel's `on_join` refused the subscriber.
    Refused(BoxError),
    /// The subscriber's variables do not fit the channel.
    BadVariables(BoxError),
    /// The subscriber came back from a position the topic's history no longer holds (or the
    /// bus keeps none): it missed messages. The reason begins with [`MISSED_REASON`]; a server
    /// closes the socket with [`MISSED`] and it.
    Missed(String),
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotServedHere => f.write_str("the channel is not implemented by this process"),
            Self::Refused(e) => write!(f, "the channel refused the subscriber: {e}"),
            Self::BadVariables(e) => write!(f, "{e}"),
            Self::Missed(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for JoinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Refused(e) | Self::BadVariables(e) => Some(&**e),
            Self::NotServedHere | Self::Missed(_) => None,
        }
    }
}

/// A channel that takes no messages was sent one.
#[derive(Debug)]
pub struct NotAccepted;

impl fmt::Display for NotAccepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this channel takes no messages (it has no `.send()`)")
    }
}

impl std::error::Error for NotAccepted {}

/// Runs implemented channels for their subscribers over a [`TopicBus`].
///
/// Subscribers share a topic by the channel's `.topic(key)` (all its variables when unset).
/// A push-only channel's handler runs once per topic while the topic has subscribers: the first
/// to join starts it, the last to leave stops it, and each message it yields goes to every
/// subscriber of the topic; when it ends they get close code 1000, when it fails 1011. A
/// two-way channel runs `on_join` when a subscriber joins (an error refuses it), `on_message`
/// for each message it sends, and `on_leave` once when it goes; its handlers reach one
/// subscriber with `Peer::send` and the whole topic with `Peer::publish`.
///
/// Every subscriber has a bounded buffer ([`JoinOptions::buffer`]); one that falls further
/// behind is handed close code 1013 and dropped, so memory never grows without bound.
///
/// Whoever serves channels holds one and hands it on: the proxy route (`Proxy::hub`) for the
/// sockets it serves, a client (`ClientBuilder::hub`) for the channels its callers join in
/// process. A server and in-process callers given clones of one hub share topics; each made
/// without one has its own, over a [`LocalBus`]. A hub is cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<HubInner>,
}

struct HubInner {
    bus: Arc<dyn TopicBus>,
    pushes: Mutex<HashMap<String, Weak<PushRun>>>,
}

impl Hub {
    /// A hub over `bus`.
    pub fn new(bus: impl TopicBus) -> Self {
        Self::from_arc(Arc::new(bus))
    }

    /// A hub over a shared bus.
    pub fn from_arc(bus: Arc<dyn TopicBus>) -> Self {
        Self {
            inner: Arc::new(HubInner {
                bus,
                pushes: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A hub over a new [`LocalBus`].
    pub fn local() -> Self {
        Self::new(LocalBus::new())
    }

    /// The topic on the bus of a channel's subscribers whose topic key is `key` (its
    /// `.topic()`, or all its variables as canonical JSON): what [`Hub::publish`] takes to reach
    /// them from outside the channel's handlers.
    ///
    /// ```
    /// use courier::live::Hub;
    /// assert_eq!(Hub::channel_topic("chat.room", "lobby"), "chat.room\u{1f}lobby");
    /// ```
    pub fn channel_topic(path: &str, key: &str) -> String {
        format!("{path}\u{1f}{key}")
    }

    /// Publishes `message` to every subscriber of `topic` on every instance sharing this hub's
    /// bus: a channel's subscribers ([`Hub::channel_topic`]), or a stream's that
    /// [follows](Hub::follow) the topic. From anywhere in the app: an HTTP handler, a job.
    pub fn publish(&self, topic: &str, message: Value) {
        self.inner.bus.publish(topic, Outbound::message(message));
    }

    /// The messages published to `topic` from now on, as a stream handler's events (each
    /// message an event's data), keeping up to `buffer` of them unread: an implemented stream
    /// that fans one topic out to every subscriber, on every instance sharing the bus. The same
    /// as [`follow_from`](Self::follow_from) with no `Last-Event-ID`; a handler that has the
    /// request hands its `last_event_id` there, so that a client that comes back recovers what
    /// it missed.
    ///
    /// It ends when the topic is closed with 1000 (a push channel that ended), and with
    /// [`MissedEvents`] when messages were lost — the bus reconnected, or this subscriber fell
    /// behind by more than `buffer` — so a server cuts the response and the client reconnects.
    ///
    /// ```
    /// use courier::live::{Hub, StreamHandler};
    /// use courier::StreamEndpoint;
    ///
    /// let hub = Hub::local();
    /// let following = hub.clone();
    /// let news = StreamEndpoint::implement(StreamHandler::new(move |_| following.follow("news", 256)));
    /// // Elsewhere, on this instance or another sharing the bus:
    /// hub.publish("news", serde_json::json!({ "headline": "courier 1.0" }));
    /// # let _ = news;
    /// ```
    pub fn follow(&self, topic: &str, buffer: usize) -> EventStream {
        self.follow_from(topic, None, buffer)
    }

    /// [`follow`](Self::follow), resumed after `last_event_id` (the request's
    /// [`StreamRequest::last_event_id`](courier_core::StreamRequest)).
    ///
    /// With a bus that keeps a [`History`](crate::History), each event's id is its message's
    /// [`Position`], and a client that reconnects with the last one gets the messages published
    /// since, in order, each once, before the new ones. When they cannot all be had (the history
    /// no longer holds them, it was begun again, or the id is not a position of this bus), the
    /// stream begins from now, with one event named `courier.gap` first, whose data is
    /// `{"reason": …}` and whose id is the topic's latest position: a courier client hands it to
    /// its caller as [`MissedEvents`] and goes on reading (`docs/PROTOCOL.md`). Without a
    /// history, events carry no ids and the stream begins from now.
    ///
    /// ```
    /// use courier::live::{History, Hub, LocalBus, StreamHandler};
    /// use courier::StreamEndpoint;
    /// use std::time::Duration;
    ///
    /// let hub = Hub::new(LocalBus::with_history(History::new(1_000, Duration::from_secs(60))));
    /// let following = hub.clone();
    /// let news = StreamEndpoint::implement(StreamHandler::new(move |request| {
    ///     following.follow_from("news", request.last_event_id.as_deref(), 256)
    /// }));
    /// # let _ = news;
    /// ```
    pub fn follow_from(
        &self,
        topic: &str,
        last_event_id: Option<&str>,
        buffer: usize,
    ) -> EventStream {
        let bus = Arc::clone(&self.inner.bus);
        let topic = topic.to_owned();
        let buffer = buffer.max(1);
        // Without a history, ids are none of this bus's: the stream begins from now.
        let since = last_event_id
            .filter(|_| bus.history().is_some())
            .map(Position::from_client);
        // Subscribed now, so that what is published from here on is had.
        let (mut stream, mut gap) = match &since {
            Some(Ok(since)) => (bus.subscribe(&topic, Some(since), buffer), None),
            Some(Err(why)) => (bus.subscribe(&topic, None, buffer), Some(why.clone())),
            None => (bus.subscribe(&topic, None, buffer), None),
        };
        let opened = async move {
            if bus.history().is_none() {
                return (None, Some(stream));
            }
            let at = match stream.next().await {
                Some(Ok(Outbound::Start { at })) => at,
                Some(Ok(Outbound::Close {
                    code: MISSED,
                    reason,
                })) => {
                    // The id cannot be honoured: from now, the gap told first.
                    gap = Some(reason);
                    stream = bus.subscribe(&topic, None, buffer);
                    match stream.next().await {
                        Some(Ok(Outbound::Start { at })) => at,
                        _ => return (Some(Err(missed("the topic bus could not subscribe"))), None),
                    }
                }
                _ => return (Some(Err(missed("the topic bus could not subscribe"))), None),
            };
            (gap.map(|reason| Ok(gap_event(&reason, &at))), Some(stream))
        };
        Box::pin(
            futures_util::stream::once(opened).flat_map(|(first, stream)| {
                futures_util::stream::iter(first).chain(events(stream))
            }),
        )
    }

    /// Push handlers running now, one per topic with subscribers.
    pub fn running(&self) -> usize {
        self.pushes()
            .values()
            .filter(|run| {
                run.upgrade()
                    .is_some_and(|r| !r.finished.load(Ordering::SeqCst))
            })
            .count()
    }

    fn pushes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<PushRun>>> {
        self.inner.pushes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Joins the channel `endpoint` (at dotted path `path`) with `variables`.
    ///
    /// # Errors
    ///
    /// [`JoinError::NotServedHere`] for a channel another process serves;
    /// [`JoinError::Refused`] when its `on_join` fails.
    pub async fn join(
        &self,
        path: &str,
        endpoint: &ChannelEndpoint,
        variables: Value,
        options: JoinOptions,
    ) -> Result<Member, JoinError> {
        let ChannelSource::Implemented(handler) = endpoint.source() else {
            return Err(JoinError::NotServedHere);
        };
        endpoint
            .checked(&variables)
            .map_err(JoinError::BadVariables)?;
        let key = endpoint.topic_spec().key(&variables);
        let topic = Self::channel_topic(path, &key);
        let buffer = options.buffer.max(1);
        // Subscribe before anything can be published, so nothing is missed.
        let since = options.since.as_ref();
        let mut bus = self.inner.bus.subscribe(&topic, since, buffer);
        // With a history the subscription begins with where it starts from, or with the gap
        // that refuses a returning subscriber (before `on_join` runs for it).
        let mut start = None;
        if since.is_some() || self.inner.bus.history().is_some() {
            match bus.next().await {
                Some(Ok(Outbound::Close {
                    code: MISSED,
                    reason,
                })) => return Err(JoinError::Missed(reason)),
                Some(Ok(first)) => start = Some(first),
                Some(Err(Lagged { .. })) | None => {
                    return Err(JoinError::Missed(format!(
                        "{MISSED_REASON}the topic bus could not subscribe"
                    )))
                }
            }
        }
        let (direct, inbox) = mpsc::channel(buffer);
        let peer = Arc::new(Subscriber {
            auth: options.auth,
            variables: variables.clone(),
            key: key.clone(),
            bus_topic: topic.clone(),
            bus: Arc::clone(&self.inner.bus),
            direct,
            slow: AtomicBool::new(false),
        });
        let mut member = Member {
            peer,
            bus,
            inbox,
            start,
            handlers: None,
            push: None,
            buffer,
            left: false,
            over: false,
        };
        match handler {
            ChannelHandler::Push(push) => {
                let request = ChannelRequest::new(variables, key);
                member.push = Some(self.push_run(&topic, || push(request)));
            }
            ChannelHandler::Duplex(handlers) => {
                if let Some(on_join) = &handlers.on_join {
                    let peer: Arc<dyn Peer> = member.peer.clone();
                    on_join.call(peer).await.map_err(JoinError::Refused)?;
                }
                member.handlers = Some(handlers.clone());
            }
        }
        Ok(member)
    }

    /// The topic's running push handler, started with `start` when none runs.
    fn push_run(
        &self,
        topic: &str,
        start: impl FnOnce() -> courier_core::MessageStream,
    ) -> Arc<PushRun> {
        let mut pushes = self.pushes();
        if let Some(run) = pushes.get(topic).and_then(Weak::upgrade) {
            if !run.finished.load(Ordering::SeqCst) {
                return run;
            }
        }
        let mut messages = start();
        let bus = Arc::clone(&self.inner.bus);
        let finished = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&finished);
        let name = topic.to_owned();
        let task = tokio::spawn(async move {
            let close = loop {
                // Each instance with subscribers runs the handler for them: its messages stay
                // here.
                match messages.next().await {
                    Some(Ok(data)) => bus.publish_here(&name, Outbound::message(data)),
                    Some(Err(e)) => {
                        break Outbound::Close {
                            code: 1011,
                            reason: e.to_string(),
                        }
                    }
                    None => {
                        break Outbound::Close {
                            code: 1000,
                            reason: "the channel ended".to_owned(),
                        }
                    }
                }
            };
            done.store(true, Ordering::SeqCst);
            bus.publish_here(&name, close);
        });
        let run = Arc::new(PushRun {
            task: task.abort_handle(),
            finished,
        });
        pushes.retain(|_, run| run.strong_count() > 0);
        pushes.insert(topic.to_owned(), Arc::downgrade(&run));
        run
    }
}

/// A followed topic's messages as events, until it ends or messages are missed.
fn events(stream: Option<BusStream>) -> EventStream {
    Box::pin(futures_util::stream::unfold(stream, |bus| async move {
        let mut bus = bus?;
        loop {
            let error = match bus.next().await? {
                Ok(Outbound::Message { data, at }) => {
                    let event = match at {
                        Some(at) => Event::new(data).id(at.to_string()),
                        None => Event::new(data),
                    };
                    return Some((Ok(event), Some(bus)));
                }
                Ok(Outbound::Start { .. }) => continue,
                Ok(Outbound::Close { code: 1000, .. }) => return None,
                Ok(Outbound::Close { reason, .. }) => missed(reason),
                Err(Lagged { missed: lost }) => missed(format!(
                    "the subscriber fell behind the topic by {lost} messages"
                )),
            };
            return Some((Err(error), None));
        }
    }))
}

/// A followed stream's error that has its client reconnect and resume.
fn missed(why: impl Into<String>) -> BoxError {
    Box::new(MissedEvents::new(why.into()))
}

/// The event that begins a followed stream whose `Last-Event-ID` could not be honoured.
fn gap_event(reason: &str, at: &Position) -> Event<Value> {
    Event::new(serde_json::json!({ "reason": reason }))
        .event(GAP_EVENT)
        .id(at.to_string())
}

/// The name of the event that tells a followed stream's client it missed messages.
pub const GAP_EVENT: &str = "courier.gap";

impl Default for Hub {
    fn default() -> Self {
        Self::local()
    }
}

impl fmt::Debug for Hub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hub")
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

/// A push handler running for a topic; stopped when its last subscriber drops it.
struct PushRun {
    task: tokio::task::AbortHandle,
    finished: Arc<AtomicBool>,
}

impl Drop for PushRun {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One subscriber, as the channel's handlers see it.
struct Subscriber {
    variables: Value,
    auth: Option<Map<String, Value>>,
    key: String,
    /// The bus topic: the channel's path and the key.
    bus_topic: String,
    bus: Arc<dyn TopicBus>,
    direct: mpsc::Sender<Outbound>,
    /// Set when a message for this subscriber alone did not fit its buffer.
    slow: AtomicBool,
}

impl Peer for Subscriber {
    fn variables(&self) -> &Value {
        &self.variables
    }

    fn auth(&self) -> Option<&Map<String, Value>> {
        self.auth.as_ref()
    }

    fn topic(&self) -> &str {
        &self.key
    }

    fn send(&self, message: Value) -> Result<(), BoxError> {
        match self.direct.try_send(Outbound::message(message)) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.slow.store(true, Ordering::SeqCst);
                Err("the subscriber is too slow: its buffer is full".into())
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err("the subscriber has left".into()),
        }
    }

    fn publish(&self, message: Value) -> Result<(), BoxError> {
        self.bus
            .publish(&self.bus_topic, Outbound::message(message));
        Ok(())
    }
}

/// A subscriber's membership of a channel: what it is handed ([`Member::recv`]) and what it
/// sends ([`Member::send`]). Dropping it leaves the channel (running `on_leave` on the tokio
/// runtime); [`Member::leave`] does the same and waits for `on_leave`.
pub struct Member {
    peer: Arc<Subscriber>,
    bus: BusStream,
    inbox: mpsc::Receiver<Outbound>,
    /// The bus's [`Outbound::Start`], handed before anything else.
    start: Option<Outbound>,
    handlers: Option<ChannelHandlers>,
    push: Option<Arc<PushRun>>,
    buffer: usize,
    left: bool,
    over: bool,
}

impl Member {
    /// The subscriber's topic key.
    pub fn topic(&self) -> &str {
        &self.peer.key
    }

    /// Whether the channel takes messages from subscribers.
    pub fn accepts_messages(&self) -> bool {
        self.handlers.is_some()
    }

    /// The next message for the subscriber; after an [`Outbound::Close`], `None`. With a bus
    /// that keeps a history, the first is [`Outbound::Start`], and each message published to
    /// the topic carries its position.
    pub async fn recv(&mut self) -> Option<Outbound> {
        if self.over {
            return None;
        }
        if let Some(start) = self.start.take() {
            return Some(start);
        }
        let next = if self.peer.slow.load(Ordering::SeqCst) {
            self.too_slow()
        } else {
            tokio::select! {
                biased;
                Some(message) = self.inbox.recv() => message,
                message = self.bus.next() => match message {
                    Some(Ok(message)) => message,
                    Some(Err(_lagged)) => self.too_slow(),
                    None => Outbound::Close { code: 1001, reason: "the topic closed".to_owned() },
                },
            }
        };
        if matches!(next, Outbound::Close { .. }) {
            self.over = true;
            // Leave the topic now: a closed subscriber holds nothing.
            self.bus = Box::pin(futures_util::stream::empty());
            self.push = None;
        }
        Some(next)
    }

    fn too_slow(&self) -> Outbound {
        Outbound::Close {
            code: 1013,
            reason: format!(
                "subscriber too slow: more than {} messages buffered",
                self.buffer
            ),
        }
    }

    /// Hands a message from the subscriber to the channel's `on_message`.
    ///
    /// # Errors
    ///
    /// [`NotAccepted`] on a push-only channel; the handler's own error.
    pub fn send(
        &self,
        message: Value,
    ) -> impl std::future::Future<Output = Result<(), BoxError>> + Send + 'static {
        let handlers = self.handlers.clone();
        let peer: Arc<dyn Peer> = self.peer.clone();
        async move {
            let Some(handlers) = handlers else {
                return Err(Box::new(NotAccepted) as BoxError);
            };
            (handlers.on_message)(peer, message).await
        }
    }

    /// Leaves the channel, running `on_leave` to its end.
    ///
    /// # Errors
    ///
    /// `on_leave`'s own error.
    pub async fn leave(mut self) -> Result<(), BoxError> {
        self.left = true;
        match self.handlers.as_ref().and_then(|h| h.on_leave.clone()) {
            Some(on_leave) => {
                let peer: Arc<dyn Peer> = self.peer.clone();
                on_leave.call(peer).await
            }
            None => Ok(()),
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if self.left {
            return;
        }
        if let Some(on_leave) = self.handlers.as_ref().and_then(|h| h.on_leave.clone()) {
            let peer: Arc<dyn Peer> = self.peer.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(e) = on_leave.call(peer).await {
                        tracing::warn!(error = %e, "a channel's on_leave failed");
                    }
                });
            }
        }
    }
}

impl fmt::Debug for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("topic", &self.peer.key)
            .field("accepts_messages", &self.accepts_messages())
            .finish_non_exhaustive()
    }
}
