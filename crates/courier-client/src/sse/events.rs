//! The stream client: [`Events`], a subscription to a stream, and the clients'
//! [`StreamDispatch`].

use super::parser::{Output, Parser, TooLarge};
use crate::caller::Client;
use crate::error::Error;
use crate::opener::Opener;
use crate::proxy::ProxyClient;
use crate::read;
use courier_core::context::ServedRequest;
use courier_core::encode::Variables;
use courier_core::{
    Body, BoxFuture, CallOptions, Event, EventStream, HttpCallRequest, IntoVariables, MissedEvents,
    ResolvedEndpoint, StreamDispatch, StreamHandler, StreamRequest, StreamSource,
};
use futures_core::Stream;
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use http_body::Body as _;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// How long a stream waits before reconnecting until its server sends `retry:`.
pub const DEFAULT_RECONNECT: Duration = Duration::from_secs(3);

/// The longest wait between two failed reconnection attempts.
pub const MAX_RECONNECT: Duration = Duration::from_secs(30);

/// The first wait after a failed attempt when the server asked for less (a `retry` of 0, say):
/// a connection that ends as soon as it opens is not tried again in a tight loop.
const MIN_BACKOFF: Duration = Duration::from_millis(100);

/// A followed stream's gap (`courier.gap`, `{"reason": …}`) as its caller is told it: an
/// [`Error::is_closed`] item with 1012, [`MISSED`](courier_live::MISSED), and the reason.
fn gap(data: &str) -> Error {
    let reason = serde_json::from_str::<serde_json::Value>(data)
        .ok()
        .and_then(|data| data.get("reason")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{}the stream could not resume", courier_live::MISSED_REASON));
    Error::closed(courier_live::MISSED, reason)
}

/// The event a courier server ends a finite stream with: the stream is over, do not reconnect.
/// It is never handed to the subscriber (docs/PROTOCOL.md).
pub(crate) const END_EVENT: &str = "courier.end";

const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// What a stream's server answered to one connection attempt.
pub(super) enum Opened {
    /// `200 text/event-stream`: the events follow in the body.
    Events(Body),
    /// `204 No Content`: the stream is over.
    Over,
}

/// One connection attempt, given the last event id to resume after.
pub(super) type Connect =
    dyn Fn(Option<String>) -> BoxFuture<'static, Result<Opened, Error>> + Send + Sync;

/// A subscription to a stream: a `futures_core::Stream` of typed events.
///
/// Each item is an [`Event<R>`](Event) (its `data` parsed as JSON into `R`, with the event's
/// `id`, `event` name and `retry` hint), or an [`Error`]: one whose data does not parse as `R`
/// ([`Error::is_decode`], and the stream goes on), or the one that ended the stream. See the
/// [module docs](super) for when it reconnects and when it ends. Dropping it closes the
/// connection.
#[must_use = "a subscription yields nothing unless polled"]
pub struct Events<R> {
    state: State,
    parser: Parser,
    connect: Option<Arc<Connect>>,
    /// The server's latest `retry`, else the default.
    reconnect: Duration,
    /// Connection attempts failed in a row: refused, or ended without an event.
    failures: u32,
    /// Whether the current connection has given an event.
    delivered: bool,
    cancelled: Option<BoxFuture<'static, ()>>,
    endpoint: Arc<str>,
    _event: PhantomData<fn() -> R>,
}

enum State {
    Reading(Body),
    Waiting(Pin<Box<Sleep>>),
    Connecting(BoxFuture<'static, Result<Opened, Error>>),
    Local(Local),
    Done,
}

/// A stream served in process: its handler's events, and what opens it again after
/// [`MissedEvents`] (as a remote subscriber would reconnect), from the last event id.
struct Local {
    events: EventStream,
    handler: StreamHandler,
    variables: Value,
    last_event_id: Option<String>,
    /// The request served when the subscription opened: the handler's events are produced in
    /// its scope, whichever task polls them, so calls the handler makes carry that user.
    served: Option<ServedRequest>,
}

impl Local {
    /// The handler's events from `request`, in the served request's scope when there is one.
    fn open(&self, request: StreamRequest) -> EventStream {
        let events = self.handler.open(request);
        match &self.served {
            Some(served) => Box::pin(served.clone().scope_stream(events)),
            None => events,
        }
    }
}

impl<R> Events<R> {
    /// The last event id the server gave (`""` when none): what a reconnection sends as
    /// `Last-Event-ID`.
    pub fn last_event_id(&self) -> &str {
        self.parser.last_event_id()
    }

    fn end(&mut self, error: Error) -> Poll<Option<Result<Event<R>, Error>>> {
        self.state = State::Done;
        self.cancelled = None;
        Poll::Ready(Some(Err(error.with_endpoint(&self.endpoint))))
    }
}

impl<R: DeserializeOwned> Events<R> {
    fn decode(
        &self,
        data: Value,
        id: Option<String>,
        event: Option<String>,
        retry: Option<Duration>,
    ) -> Result<Event<R>, Error> {
        let data = serde_json::from_value(data)
            .map_err(|e| Error::decode(StatusCode::OK, e).with_endpoint(&self.endpoint))?;
        Ok(Event {
            data,
            id,
            event,
            retry,
        })
    }
}

#[cfg(test)]
impl<R> Events<R> {
    /// A subscription whose connections `connect` opens (the first at once): the reconnection
    /// rules without a network, for the tests.
    pub(super) fn over(connect: Arc<Connect>) -> Self {
        Self {
            state: State::Connecting(connect(None)),
            parser: Parser::new(),
            connect: Some(connect),
            reconnect: DEFAULT_RECONNECT,
            failures: 0,
            delivered: false,
            cancelled: None,
            endpoint: "test.stream".into(),
            _event: PhantomData,
        }
    }
}

impl<R: DeserializeOwned> Stream for Events<R> {
    type Item = Result<Event<R>, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(cancelled) = &mut this.cancelled {
            if cancelled.as_mut().poll(cx).is_ready() {
                return this.end(Error::cancelled());
            }
        }
        loop {
            while let Some(output) = this.parser.next() {
                match output {
                    Output::Retry(delay) => this.reconnect = delay,
                    Output::Event(raw) => {
                        if raw.event == END_EVENT {
                            // The server said the stream is over: no reconnection.
                            this.state = State::Done;
                            this.cancelled = None;
                            return Poll::Ready(None);
                        }
                        this.delivered = true;
                        if raw.event == courier_live::GAP_EVENT {
                            // The server could not resume after our id: the stream goes on
                            // from its latest, and the caller is told of the gap as a
                            // channel's member is, 1012. The parser keeps the event's id.
                            return Poll::Ready(Some(Err(gap(&raw.data))));
                        }
                        if raw.event == "error" {
                            if let Some(failure) = failure(&raw.data) {
                                return this.end(failure);
                            }
                        }
                        let id = (!raw.id.is_empty()).then_some(raw.id);
                        let event = (raw.event != "message").then_some(raw.event);
                        let item = match serde_json::from_str::<R>(&raw.data) {
                            Ok(data) => Ok(Event {
                                data,
                                id,
                                event,
                                retry: raw.retry,
                            }),
                            Err(e) => {
                                Err(Error::decode(StatusCode::OK, e).with_endpoint(&this.endpoint))
                            }
                        };
                        return Poll::Ready(Some(item));
                    }
                }
            }
            match &mut this.state {
                State::Done => return Poll::Ready(None),
                State::Local(local) => {
                    return match ready!(local.events.as_mut().poll_next(cx)) {
                        None => {
                            this.state = State::Done;
                            Poll::Ready(None)
                        }
                        Some(Ok(event)) => {
                            let Event {
                                data,
                                id,
                                event,
                                retry,
                            } = event;
                            if id.is_some() {
                                local.last_event_id.clone_from(&id);
                            }
                            Poll::Ready(Some(this.decode(data, id, event, retry)))
                        }
                        Some(Err(e)) if MissedEvents::is(&*e) => {
                            tracing::debug!(endpoint = %this.endpoint, error = %e, "in-process stream missed events; opening it again");
                            let mut request = StreamRequest::new(local.variables.clone());
                            request.last_event_id.clone_from(&local.last_event_id);
                            local.events = local.open(request);
                            continue;
                        }
                        Some(Err(e)) => this.end(Error::closed(1011, e.to_string())),
                    };
                }
                State::Reading(body) => {
                    let dropped = match ready!(Pin::new(body).poll_frame(cx)) {
                        Some(Ok(frame)) => {
                            if let Ok(data) = frame.into_data() {
                                if let Err(e) = this.parser.feed(&data) {
                                    return this.end(too_large(e));
                                }
                            }
                            continue;
                        }
                        None => None,
                        Some(Err(e)) => Some(e),
                    };
                    // The response ended, or the connection dropped: as an EventSource, resume
                    // after the server's delay from the last event id. Only `204`, an error
                    // status or the server's end event end a stream for good.
                    this.parser.finish();
                    let wait = this.next_wait();
                    match dropped {
                        None => {
                            tracing::debug!(endpoint = %this.endpoint, ?wait, "event stream response ended; reconnecting")
                        }
                        Some(e) => {
                            tracing::debug!(endpoint = %this.endpoint, error = %e, ?wait, "event stream dropped; reconnecting")
                        }
                    }
                    this.state = State::Waiting(Box::pin(tokio::time::sleep(wait)));
                }
                State::Waiting(sleep) => {
                    ready!(sleep.as_mut().poll(cx));
                    let Some(connect) = &this.connect else {
                        this.state = State::Done;
                        continue;
                    };
                    let last = this.parser.last_event_id();
                    let last = (!last.is_empty()).then(|| last.to_owned());
                    this.state = State::Connecting(connect(last));
                }
                State::Connecting(opening) => match ready!(opening.as_mut().poll(cx)) {
                    Ok(Opened::Events(body)) => {
                        this.delivered = false;
                        this.parser = Parser::resuming(this.parser.last_event_id());
                        this.state = State::Reading(body);
                    }
                    Ok(Opened::Over) => this.state = State::Done,
                    Err(e) if e.is_network() || e.is_timeout() => {
                        this.failures = this.failures.saturating_add(1);
                        let wait = backoff(this.reconnect, this.failures);
                        tracing::debug!(endpoint = %this.endpoint, error = %e, ?wait, "event stream reconnection failed");
                        this.state = State::Waiting(Box::pin(tokio::time::sleep(wait)));
                    }
                    Err(e) => return this.end(e),
                },
            }
        }
    }
}

impl<R> fmt::Debug for Events<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Reading(_) => "reading",
            State::Waiting(_) => "waiting to reconnect",
            State::Connecting(_) => "reconnecting",
            State::Local(_) => "in process",
            State::Done => "done",
        };
        f.debug_struct("Events")
            .field("endpoint", &self.endpoint)
            .field("state", &state)
            .field("last_event_id", &self.parser.last_event_id())
            .field("reconnect", &self.reconnect)
            .finish()
    }
}

impl<R> Events<R> {
    /// The wait before reconnecting once a connection is over: the server's reconnection time
    /// after one that gave an event; after one that gave none (it ended as soon as it opened,
    /// or was refused by a server that answers `200` and closes), a failure's backoff.
    fn next_wait(&mut self) -> Duration {
        if self.delivered {
            self.failures = 0;
            self.reconnect
        } else {
            self.failures = self.failures.saturating_add(1);
            backoff(self.reconnect, self.failures)
        }
    }
}

/// The wait before reconnection attempt `failures + 1`: the reconnection time (at least
/// [`MIN_BACKOFF`]), doubled for each failure in a row, at most [`MAX_RECONNECT`] (or the
/// server's own longer `retry`).
fn backoff(reconnect: Duration, failures: u32) -> Duration {
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    courier_core::Backoff {
        initial_ms: millis(reconnect.max(MIN_BACKOFF)),
        max_ms: millis(MAX_RECONNECT.max(reconnect)),
        factor: 2.0,
        jitter: false,
    }
    .delay(failures.saturating_add(1), 0.0)
}

/// A courier server's `event: error` frame, `{"error": {"code", "message"}}`, as the error that
/// ends the stream; `None` for any other `error` event, which is an ordinary event.
fn failure(data: &str) -> Option<Error> {
    let value: Value = serde_json::from_str(data).ok()?;
    let (code, message) = courier_core::wire::read_error_body(&value)?;
    Some(Error::closed(
        1011,
        format!("{code}: {}", message.unwrap_or_default()),
    ))
}

fn too_large(e: TooLarge) -> Error {
    Error::protocol(StatusCode::OK, e)
}

/// Why a stream cannot be read from a response.
#[derive(Debug)]
struct NotAnEventStream(Option<HeaderValue>);

impl fmt::Display for NotAnEventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(kind) => write!(
                f,
                "the response is `{}`, not `text/event-stream`",
                String::from_utf8_lossy(kind.as_bytes())
            ),
            None => f.write_str("the response has no content type; expected `text/event-stream`"),
        }
    }
}

impl std::error::Error for NotAnEventStream {}

#[derive(Debug)]
struct UnexpectedStatus(StatusCode);

impl fmt::Display for UnexpectedStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a stream answers 200 or 204, not {}", self.0)
    }
}

impl std::error::Error for UnexpectedStatus {}

/// One connection attempt: the opening request through the endpoint's stack, its answer
/// judged.
async fn open(
    opener: Arc<dyn Opener>,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
    last_event_id: Option<String>,
) -> Result<Opened, Error> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(id) = last_event_id {
        if let Ok(value) = HeaderValue::try_from(id) {
            headers.insert(LAST_EVENT_ID, value);
        }
    }
    let response = opener
        .handshake(&endpoint, variables, options.as_ref(), headers, None)
        .await?;
    let status = response.status();
    if status == StatusCode::NO_CONTENT {
        return Ok(Opened::Over);
    }
    if status != StatusCode::OK {
        let error = read::refused(response, UnexpectedStatus(status))
            .await
            .with_endpoint(endpoint.path());
        opener.refused(&error);
        return Err(error);
    }
    let kind = response.headers().get(CONTENT_TYPE);
    let is_event_stream = kind
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("text/event-stream"));
    if !is_event_stream {
        return Err(Error::protocol(status, NotAnEventStream(kind.cloned())));
    }
    Ok(Opened::Events(response.into_body()))
}

/// Resolves when either signal is cancelled; never when neither is given.
fn cancellation(
    call: Option<&courier_core::CancellationToken>,
    source: Option<&courier_core::CancellationToken>,
) -> Option<BoxFuture<'static, ()>> {
    match (call.cloned(), source.cloned()) {
        (None, None) => None,
        (Some(one), None) | (None, Some(one)) => Some(Box::pin(one.cancelled_owned())),
        (Some(a), Some(b)) => Some(Box::pin(async move {
            tokio::select! {
                () = a.cancelled() => {},
                () = b.cancelled() => {},
            }
        })),
    }
}

impl StreamDispatch for Client {
    type Events<R: DeserializeOwned + Send + 'static> = Events<R>;

    async fn subscribe<R, V>(&self, request: HttpCallRequest<'_, V>) -> Result<Events<R>, Error>
    where
        R: DeserializeOwned + Send + 'static,
        V: IntoVariables + Send,
    {
        subscribe_typed(self, request).await
    }
}

impl StreamDispatch for ProxyClient {
    type Events<R: DeserializeOwned + Send + 'static> = Events<R>;

    async fn subscribe<R, V>(&self, request: HttpCallRequest<'_, V>) -> Result<Events<R>, Error>
    where
        R: DeserializeOwned + Send + 'static,
        V: IntoVariables + Send,
    {
        subscribe_typed(self, request).await
    }
}

/// A typed view's subscription through `client`.
async fn subscribe_typed<C, R, V>(
    client: &C,
    request: HttpCallRequest<'_, V>,
) -> Result<Events<R>, Error>
where
    C: Opener + Clone,
    V: IntoVariables,
{
    let variables = client.variables(request.endpoint, request.variables)?;
    let endpoint = Arc::clone(request.endpoint);
    subscribe(
        Arc::new(client.clone()),
        endpoint,
        variables,
        request.options.cloned(),
    )
    .await
}

impl Client {
    /// Subscribes to the stream at `path` with JSON `variables`: its events' data as JSON. What
    /// the CLI and the proxy use; typed views subscribe through [`StreamDispatch`].
    ///
    /// # Errors
    ///
    /// An unknown path (`ENDPOINT_NOT_IN_ROUTES`) or one that is not a stream, and every way the
    /// first connection can fail (see [`Events`]).
    pub async fn stream(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
    ) -> Result<Events<Value>, Error> {
        let endpoint = self.endpoint_at(path)?;
        let variables = Variables::Json(variables);
        subscribe(
            Arc::new(self.clone()),
            endpoint,
            variables,
            options.cloned(),
        )
        .await
    }
}

/// Opens a subscription to the stream `endpoint` through `opener`; see
/// [`StreamDispatch::subscribe`].
async fn subscribe<R>(
    opener: Arc<dyn Opener>,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
) -> Result<Events<R>, Error> {
    let path: Arc<str> = endpoint.path().into();
    first_connection(opener, endpoint, variables, options)
        .await
        .map_err(|e| e.with_endpoint(&path))
}

/// [`subscribe`], its errors not yet named after the endpoint.
async fn first_connection<R>(
    opener: Arc<dyn Opener>,
    endpoint: Arc<ResolvedEndpoint>,
    variables: Variables,
    options: Option<CallOptions>,
) -> Result<Events<R>, Error> {
    let path: Arc<str> = endpoint.path().into();
    let Some(stream) = endpoint.definition().as_stream() else {
        return Err(courier_core::ConfigurationError::new(
            courier_core::ErrorCode::InvalidOption,
            format!("`{path}` is not a stream"),
        )
        .at(&*path)
        .into());
    };
    let variables = read::json_variables(variables)?;
    let options = crate::opener::capture_served(options);
    let cancelled = cancellation(
        options.as_ref().and_then(CallOptions::get_signal),
        opener.api().options().signal.as_ref(),
    );
    let mut events = Events {
        state: State::Done,
        parser: Parser::new(),
        connect: None,
        reconnect: DEFAULT_RECONNECT,
        failures: 0,
        delivered: false,
        cancelled,
        endpoint: Arc::clone(&path),
        _event: PhantomData,
    };
    // Served in process by a client with a hub; a proxy caller (no hub) reaches even an
    // implemented stream through the proxy.
    if let (StreamSource::Implemented(handler), true) = (stream.source(), opener.hub().is_some()) {
        let mut local = Local {
            events: Box::pin(futures_util::stream::empty()),
            handler: handler.clone(),
            variables,
            last_event_id: None,
            served: options.as_ref().and_then(CallOptions::get_context).cloned(),
        };
        local.events = local.open(StreamRequest::new(local.variables.clone()));
        events.state = State::Local(local);
        return Ok(events);
    }
    let connect: Arc<Connect> = Arc::new(move |last_event_id| {
        Box::pin(open(
            Arc::clone(&opener),
            Arc::clone(&endpoint),
            Variables::Json(variables.clone()),
            options.clone(),
            last_event_id,
        ))
    });
    let opening = connect(None);
    let opened = match &mut events.cancelled {
        None => opening.await?,
        Some(cancelled) => tokio::select! {
            biased;
            () = cancelled.as_mut() => return Err(Error::cancelled()),
            opened = opening => opened?,
        },
    };
    if let Opened::Events(body) = opened {
        events.state = State::Reading(body);
    }
    events.connect = Some(connect);
    Ok(events)
}
