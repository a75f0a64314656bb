//! The socket under a channel: its type, and writes and closes bounded by the heartbeat's
//! interval plus its timeout, after which the connection counts as dead.

use crate::error::Error;
use courier_core::WsOptions;
use futures_util::{Sink, SinkExt, Stream};
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

/// How a session on one socket ended.
pub(super) enum Ended {
    /// For good: the stream ends (after `Some` error, when there is one).
    Over(Option<Error>),
    /// The socket dropped: reconnect.
    Dropped,
}

/// A channel's socket: tokio-tungstenite over the connection hyper upgraded.
pub(super) type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// What a session runs on: any WebSocket, messages in and out. A channel's is a [`Socket`]; the
/// session's tests run it over an in-memory pipe with paused time.
pub(super) trait Frames:
    Stream<Item = Result<Message, tungstenite::Error>>
    + Sink<Message, Error = tungstenite::Error>
    + Unpin
{
}

impl<T> Frames for T where
    T: Stream<Item = Result<Message, tungstenite::Error>>
        + Sink<Message, Error = tungstenite::Error>
        + Unpin
{
}

/// How long one write may take, and a closing handshake: the heartbeat's interval plus its
/// timeout, after which the connection counts as dead.
pub(super) fn stall(ws: &WsOptions) -> Duration {
    Duration::from_millis(
        ws.heartbeat
            .interval_ms
            .max(1)
            .saturating_add(ws.heartbeat.timeout_ms.max(1)),
    )
}

/// Writes one frame. A write stalled past [`stall`] (the server stopped reading) counts as a
/// dropped connection, as an unanswered heartbeat does.
pub(super) async fn write(
    socket: &mut impl Frames,
    message: Message,
    ws: &WsOptions,
) -> Result<(), Ended> {
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
pub(super) async fn close(socket: &mut impl Frames, frame: Option<CloseFrame>, ws: &WsOptions) {
    let _ = tokio::time::timeout(stall(ws), socket.send(Message::Close(frame))).await;
}
