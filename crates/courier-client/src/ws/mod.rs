//! WebSocket channels: the channel client, [`Connection`].
//!
//! Awaiting a typed channel field (`caller.chat().room(id).await`) — or
//! [`Client::channel`](crate::Client::channel) by dotted path — opens a connection. The
//! opening handshake is an ordinary `GET` through the endpoint's whole layer stack and
//! transport (TLS, proxies, the source's headers, middleware such as an `AuthLayer`, session and
//! forwarded headers), upgraded to a WebSocket by hyper and framed by tokio-tungstenite. The call
//! resolves once the first connection is open; a refused handshake (status ≥ 400, its body
//! parsed) or a failed one is its error.
//!
//! A task on the tokio runtime then owns the socket, with the caller's
//! [`WsOptions`](courier_core::WsOptions) (`ClientBuilder::ws`; the defaults are listed there):
//!
//! - **Messages** are JSON text frames. [`Connection`] yields them parsed as the channel's
//!   response type; when the channel has `.send()`, [`Connection::send`] and
//!   [`Connection::sender`] take its send type.
//! - **Reconnection**: when the socket drops, the heartbeat goes unanswered, a write stalls, or
//!   the server closes with 1001, 1005, 1006, 1011, 1012, 1013 or 1014, the task reconnects
//!   after an exponential backoff with full jitter (`backoff`), through the layer stack again.
//!   Network failures, timeouts, statuses ≥ 500, 408 and 429 are retried; any other refusal (a
//!   401 once the credentials expired, a 403, a 404) will not change by retrying and is the
//!   stream's last item. The backoff starts again from its first wait only once a connection is
//!   stable — it delivered a message, or stayed open 5 s — so a socket the server closes as
//!   soon as it opens is redialled ever more slowly. The state is [`Connection::state`] /
//!   [`Connection::watch_state`].
//! - **The end**: a close with 1000 ends the stream; any other code (1003, 1008, 1009, 4000–4999
//!   …) yields one [`Error::is_closed`](crate::Error::is_closed) item with the code and reason,
//!   then ends. A courier proxy closes a channel refused for good with 4000 + the refusal's
//!   status (4401, 4403, 4404, …) and `CODE: message` (`docs/PROTOCOL.md`). A received
//!   message over `max_message_size` closes with 1009 the same way.
//! - **The queue**: a message sent is written at once when connected, else kept until the next
//!   connection opens and written first, in order. The queue holds at most
//!   `message_queue.max_count` messages and `max_bytes` bytes; a message that does not fit is
//!   refused with [`SendError::QueueFull`], one over `max_message_size` with
//!   [`SendError::TooLarge`]: nothing is dropped silently.
//! - **Heartbeat**: a ping every `heartbeat.interval_ms`; when nothing at all comes back within
//!   `heartbeat.timeout_ms`, or a write takes longer than both together, the connection counts
//!   as dead and is replaced.
//! - **Auth**: with `auth` set, every connection's first frame is
//!   `{"type":"courier.hello","auth":{…}}`, the parameters computed afresh for each connection.
//!   When computing them fails, the first connection fails with that error; a reconnection
//!   yields it as an item and tries again after the backoff.
//! - **Subprotocols**: `protocols` are offered in `sec-websocket-protocol`; a server choosing
//!   one that was not offered fails the handshake ([`Error::is_protocol`](crate::Error::is_protocol)).
//! - **Back-pressure**: up to 256 received messages wait for the reader; past that the socket
//!   is not read, so a slow reader slows its server down rather than growing memory.
//!
//! The task is spawned on the current tokio runtime: connect from within one. It holds a clone
//! of the client that opened it (a [`Client`](crate::Client) or a proxy caller's) to handshake
//! again. Messages received after the [`Connection`] is dropped while a [`Sender`] lives on are
//! discarded.
//! Dropping the [`Connection`] and every [`Sender`] closes the socket (1000) and ends the task;
//! so do [`Connection::close`] and the call's or the source's `signal`. A channel this process
//! implements is joined in process, through the definition's hub (no socket): the same
//! [`Connection`], whose close codes other than 1000 end it with an error instead of a
//! reconnection. The wire format is in `docs/PROTOCOL.md`.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use courier::{ApiDef, ChannelEndpoint, Client, GroupDef};
//! use futures_util::{SinkExt, StreamExt};
//! use serde_json::{json, Value};
//!
//! // An echo server.
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! tokio::spawn(async move {
//!     let (tcp, _) = listener.accept().await.unwrap();
//!     let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
//!     while let Some(Ok(message)) = ws.next().await {
//!         if message.is_text() {
//!             ws.send(message).await.unwrap();
//!         }
//!     }
//! });
//!
//! let api = ApiDef::builder()
//!     .base_url(format!("http://{addr}"))
//!     .group("chat", GroupDef::new().endpoint("room", ChannelEndpoint::connect("/rooms/:id").send()))
//!     .build()?;
//! let mut room = Client::new(api)?.channel("chat.room", json!("lobby"), None).await?;
//! room.send(json!({ "text": "hello" }))?;
//! assert_eq!(room.next().await.unwrap()?, json!({ "text": "hello" }));
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod connection;
mod dial;
mod open;
mod position;
mod socket;
mod task;
#[cfg(test)]
mod tests;

pub use self::connection::{Connection, ConnectionState, SendError, Sender};
