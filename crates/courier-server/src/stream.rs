//! Streams at the `sse` path: implemented ones served as server-sent events, remote ones
//! proxied byte for byte.

use crate::address::{address, only_get, source_of};
use crate::refusal::Refusal;
use crate::wire::WireQuery;
use crate::{call, Proxy};
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use courier_core::{
    ApiDef, EndpointDef, MissedEvents, ResolvedEndpoint, StreamRequest, StreamSource,
};
use futures_util::{StreamExt, TryStreamExt};
use serde_json::{json, Value};
use std::fmt;
use std::sync::Arc;

/// The event that ends a finite stream (docs/PROTOCOL.md): clients stop rather than reconnect.
const END_EVENT: &str = "courier.end";

pub(crate) async fn serve_stream(
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
    let served = call::served_request(&parts);
    let events = served.scope_stream(handler.open(request));
    let events = events.scan(false, move |over, item| {
        if *over {
            return std::future::ready(None);
        }
        *over = item.is_err();
        let failure = |e: &dyn std::fmt::Display| {
            tracing::warn!(endpoint = %path, error = %e, "an implemented stream failed");
            let body = json!({ "error": { "code": "STREAM_FAILED", "message": e.to_string() } });
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
fn until_shutdown<S, T>(
    items: S,
    stop: courier_core::CancellationToken,
) -> impl futures_util::Stream<Item = Result<T, courier_core::BoxError>> + Send
where
    S: futures_util::Stream<Item = Result<T, courier_core::BoxError>> + Send,
{
    let cut = stop.clone();
    let failure = futures_util::stream::once(async move { cut.is_cancelled() })
        .filter(|cancelled| std::future::ready(*cancelled))
        .map(|_| Err(courier_core::BoxError::from("the proxy is shutting down")));
    items.take_until(stop.cancelled_owned()).chain(failure)
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
        return Refusal::NotInRoutes(format!("there is no source `{source}`")).into_response();
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
        .pass_through(endpoint.path(), variables, Some(&options))
        .await
    {
        Ok(upstream) => {
            // The upstream's events pass through until the proxy shuts down.
            let stop = live.shutdown.token().clone();
            let upstream = upstream.map(|body| {
                let chunks = http_body_util::BodyDataStream::new(body);
                let chunks = until_shutdown(chunks, stop).map_ok(http_body::Frame::data);
                courier_core::Body::new(http_body_util::StreamBody::new(chunks))
            });
            call::respond(upstream, &served, &allow, endpoint.meta())
        }
        Err(e) => call::failure(&e),
    }
}
