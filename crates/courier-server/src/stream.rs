//! Streams at the `sse` path: implemented ones served as server-sent events, remote ones
//! proxied byte for byte.

use crate::address::{only_get, Addressed};
use crate::refusal::Refusal;
use crate::{call, Proxy};
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use courier_core::encode::Variables;
use courier_core::{EndpointDef, MissedEvents, ResolvedEndpoint, StreamRequest, StreamSource};
use futures_util::{StreamExt, TryStreamExt};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The event that ends a finite stream (docs/PROTOCOL.md): clients stop rather than reconnect.
const END_EVENT: &str = "courier.end";

pub(crate) async fn serve_stream(
    State(live): State<Arc<Proxy>>,
    addressed: Result<Addressed<'static>, Refusal>,
    request: axum::http::Request<axum::body::Body>,
) -> Result<Response, Refusal> {
    only_get(&request, "a stream")?;
    let Addressed {
        client,
        endpoint,
        variables,
        ..
    } = addressed?;
    if let Some(limiter) = &live.rate_limit {
        let peer = call::peer_of(request.extensions());
        limiter.check(client.session(), request.headers(), peer)?;
    }
    let (parts, _) = request.into_parts();
    let headers = parts.headers.clone();
    let handler = match endpoint.definition() {
        EndpointDef::Stream(stream) => match stream.source() {
            StreamSource::Implemented(handler) => handler.clone(),
            _ => return Ok(proxy_stream(&live, &client, &endpoint, variables, parts).await),
        },
        _ => {
            return Err(Refusal::NotInRoutes(format!(
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
    let served = call::served_request(parts.clone());
    let events = served.scope_stream(handler.open(request));
    let events = events.scan(false, move |over, item| {
        if *over {
            return std::future::ready(None);
        }
        *over = item.is_err();
        let failure = |e: &dyn std::fmt::Display| {
            tracing::warn!(endpoint = %path, error = %e, "an implemented stream failed");
            let body = courier_core::wire::error_body("STREAM_FAILED", &e.to_string());
            SseEvent::default().event("error").data(body.to_string())
        };
        let frame = match item {
            Ok(event) => sse_frame(event).or_else(|e| {
                *over = true;
                Ok(failure(&e))
            }),
            // Events were missed: cut the response, so the client reconnects and resumes.
            Err(e) if MissedEvents::is(&*e) => Err(e),
            Err(e) => Ok(failure(&e)),
        };
        std::future::ready(Some(frame))
    });
    // A stream that is over says so, or its clients would reconnect to it (a response that
    // ends is a dropped connection to them). After a failure's error frame, or a cut, this is
    // never read.
    let over = SseEvent::default().event(END_EVENT).data("{}");
    let events = events.chain(futures_util::stream::once(std::future::ready(Ok(over))));
    let keep_alive = SseEvent::default().comment("keep-alive");
    let events = Serving::new(events, &live.shutdown, Some((live.keep_alive, keep_alive)));
    Ok(Sse::new(events).into_response())
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

pin_project_lite::pin_project! {
    /// A stream as the proxy serves it: its items until the proxy shuts down, then a failure
    /// that cuts the response short, so the client reconnects (to another instance) with its
    /// `Last-Event-ID`, as after a dropped connection (a clean end would tell it the stream is
    /// over); and, while it is idle, a keep-alive comment every interval.
    ///
    /// Written out rather than composed (`take_until`, axum's `KeepAlive`): those poll the
    /// stop's future and reset a timer for every event, which under a fan-out to many
    /// subscribers took 9 % of the server's time (docs/benchmarks-history.md, "One topic to
    /// 10,000 SSE subscribers"). Here a busy stream reads one atomic flag per event; the stop and
    /// the keep-alive are waited on only while the stream has nothing to give.
    struct Serving<S, T> {
        #[pin]
        items: S,
        #[pin]
        stopped: tokio_util::sync::WaitForCancellationFutureOwned,
        shutdown: crate::Shutdown,
        keep_alive: Option<(tokio::time::Interval, T)>,
        over: bool,
        // Counted among the open streams while it is served.
        open: crate::gauges::Open,
    }
}

impl<S, T> Serving<S, T> {
    fn new(items: S, shutdown: &crate::Shutdown, keep_alive: Option<(Duration, T)>) -> Self {
        let keep_alive = keep_alive.map(|(every, item)| {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            (ticks, item)
        });
        Self {
            items,
            stopped: shutdown.token().clone().cancelled_owned(),
            shutdown: shutdown.clone(),
            keep_alive,
            over: false,
            open: crate::gauges::Open::stream(),
        }
    }
}

impl<S, T> futures_util::Stream for Serving<S, T>
where
    S: futures_util::Stream<Item = Result<T, courier_core::BoxError>>,
    T: Clone,
{
    type Item = Result<T, courier_core::BoxError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::future::Future;
        use std::task::Poll;
        let this = self.project();
        if *this.over {
            return Poll::Ready(None);
        }
        let shut = || Poll::Ready(Some(Err("the proxy is shutting down".into())));
        if this.shutdown.is_begun() {
            *this.over = true;
            return shut();
        }
        match this.items.poll_next(cx) {
            Poll::Ready(None) => {
                *this.over = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(item)) => Poll::Ready(Some(item)),
            Poll::Pending => {
                if this.stopped.poll(cx).is_ready() {
                    *this.over = true;
                    return shut();
                }
                if let Some((ticks, item)) = this.keep_alive {
                    if ticks.poll_tick(cx).is_ready() {
                        return Poll::Ready(Some(Ok(item.clone())));
                    }
                }
                Poll::Pending
            }
        }
    }
}

/// A stream another process serves, through the source's client: the opening request with the
/// browser's request as the served context and its `Last-Event-ID`, the upstream's answer
/// passed back as it comes (the event stream's bytes unchanged).
async fn proxy_stream(
    live: &Proxy,
    client: &courier_client::Client,
    endpoint: &ResolvedEndpoint,
    variables: Value,
    parts: http::request::Parts,
) -> Response {
    let last_event_id = parts.headers.get("last-event-id").cloned();
    let variables = Variables::from(variables);
    let peer = call::peer_of(&parts.extensions);
    let mut options = call::upstream_options(&live.allow, endpoint, parts, peer);
    options = options.header(
        http::header::ACCEPT,
        http::HeaderValue::from_static("text/event-stream"),
    );
    if let Some(id) = last_event_id {
        options = options.header(http::HeaderName::from_static("last-event-id"), id);
    }
    // An event stream's own `cache-control` goes back with it.
    let allow = live.allow.clone().allow([http::header::CACHE_CONTROL]);
    match client
        .pass_through(endpoint, variables, Some(&options))
        .await
    {
        Ok(upstream) => {
            // The upstream's events pass through until the proxy shuts down.
            let shutdown = live.shutdown.clone();
            let upstream = upstream.map(|body| {
                let chunks = http_body_util::BodyDataStream::new(body);
                let chunks = Serving::new(chunks, &shutdown, None).map_ok(http_body::Frame::data);
                courier_core::Body::new(http_body_util::StreamBody::new(chunks))
            });
            call::respond(upstream, &allow, endpoint.meta())
        }
        Err(e) => call::failure(e).into_response(),
    }
}
