//! Server-sent event streams: the stream client, [`Events`].
//!
//! Awaiting a typed stream field (`caller.users().events(filter).await`) — or
//! [`Client::stream`](crate::Client::stream) by dotted path — opens a subscription: the
//! opening `GET` (with `accept: text/event-stream`) goes through the endpoint's whole layer
//! stack, so the source's headers, middleware, session and forwarded headers apply to it, and
//! the call resolves once the server has answered. Then [`Events`] yields the events as they
//! come, each event's `data` parsed as JSON into the stream's type.
//!
//! | what happens | what the subscription does |
//! |---|---|
//! | the first request is refused (status ≥ 400) or fails | the call fails with that error |
//! | `200` that is not `text/event-stream`, or another status | the call fails, [`Error::is_protocol`](crate::Error::is_protocol) |
//! | `204 No Content` | the stream ends at once, without events |
//! | an event's data does not parse | one [`Error::is_decode`](crate::Error::is_decode) item; the stream goes on |
//! | the connection drops, or the server ends the response | waits the server's `retry` ([`DEFAULT_RECONNECT`] until one comes), reconnects with `last-event-id`, goes on (as a browser's `EventSource` does) |
//! | a response ends without having given an event | counts as a failed attempt (below), so a server that closes at once is not retried in a tight loop |
//! | a reconnection fails on the network | waits twice as long each time (from at least 100 ms), up to [`MAX_RECONNECT`], and tries again |
//! | a courier server's `event: courier.end` | the stream ends (the event is not handed over); a courier server ends every finite stream with it |
//! | a courier server's `event: courier.gap` | one [`Error::is_closed`](crate::Error::is_closed) item, code 1012 and the event's reason: the server could not resume after the last event id (its history no longer holds it), and the stream goes on from its latest position, whose id it keeps (`docs/PROTOCOL.md`, "Positions and recovery") |
//! | a reconnection is refused | one error item, then the end |
//! | a courier server's `event: error` frame | one [`Error::is_closed`](crate::Error::is_closed) item (code 1011, the server's code and message as reason), then the end |
//! | the call's or the source's `signal` is cancelled | one [`Error::is_cancelled`](crate::Error::is_cancelled) item, then the end |
//!
//! No task is spawned: the connection is read as the stream is polled, and dropping the
//! [`Events`] closes it. A stream served by this process (`.implement()`) runs in process, with
//! no connection at all: its handler's events are decoded as a remote stream's are, and a
//! handler error is one [`Error::is_closed`](crate::Error::is_closed) item (code 1011, the error
//! as reason), then the end. The wire format is in `docs/PROTOCOL.md`.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use axum::response::sse::{Event as SseEvent, Sse};
//! use courier::{ApiDef, Client, GroupDef, StreamEndpoint};
//! use futures_util::{stream, StreamExt};
//! use serde_json::{json, Value};
//!
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let addr = listener.local_addr()?;
//! // Three events, then the end event: without it the client would reconnect for more.
//! let ticks = || async {
//!     let events = (1..=3).map(|n| SseEvent::default().id(n.to_string()).data(format!("{{\"n\":{n}}}")));
//!     let end = SseEvent::default().event("courier.end").data("{}");
//!     Sse::new(stream::iter(events.chain([end]).map(Ok::<_, std::convert::Infallible>)))
//! };
//! # let app = axum::Router::new().route("/ticks", axum::routing::get(ticks));
//! # tokio::spawn(async move { axum::serve(listener, app).await });
//! let api = ApiDef::builder()
//!     .base_url(format!("http://{addr}"))
//!     .group("live", GroupDef::new().endpoint("ticks", StreamEndpoint::get("/ticks")))
//!     .build()?;
//! let events = Client::new(api)?.stream("live.ticks", Value::Null, None).await?;
//! let data: Vec<Value> = events.map(|event| event.unwrap().data).collect().await;
//! assert_eq!(data, [json!({ "n": 1 }), json!({ "n": 2 }), json!({ "n": 3 })]);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod events;
/// The event-stream parser the stream client reads with. Not an API: it is public for the
/// fuzz target (`fuzz/fuzz_targets/sse_parser.rs`) and the shared vectors' test
/// (`tests/sse_vectors.rs`), and may change in any release.
#[doc(hidden)]
pub mod parser;
#[cfg(test)]
mod tests;

pub use self::events::{Events, DEFAULT_RECONNECT, MAX_RECONNECT};
