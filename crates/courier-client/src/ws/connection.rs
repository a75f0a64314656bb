//! The handle of a channel: [`Connection`] and [`Sender`], the queue of messages kept while
//! disconnected, and the state the socket task shares with them.

use crate::error::Error;
use courier_core::CancellationToken;
use futures_core::Stream;
use http::StatusCode;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::{mpsc, watch, Notify};
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Messages received and not yet taken from a [`Connection`]; past this the socket is not read
/// until the connection is polled again, so a slow reader slows its server down instead of
/// growing memory.
pub(super) const INCOMING: usize = 256;

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
pub(super) struct Queue {
    pub(super) messages: VecDeque<Utf8Bytes>,
    pub(super) bytes: usize,
    pub(super) closed: bool,
}

/// What the user's handles and the socket task share.
pub(super) struct Shared {
    pub(super) queue: Mutex<Queue>,
    /// Wakes the task when a message is queued.
    pub(super) queued: Notify,
    pub(super) max_count: usize,
    pub(super) max_bytes: usize,
    pub(super) max_message: usize,
}

impl Shared {
    pub(super) fn push(&self, text: String) -> Result<(), SendError> {
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

    pub(super) fn front(&self) -> Option<Utf8Bytes> {
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.messages.front().cloned()
    }

    pub(super) fn pop(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sent) = queue.messages.pop_front() {
            queue.bytes -= sent.len();
        }
    }

    pub(super) fn close(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.closed = true;
    }
}

/// Held by every user handle; when the last goes, the socket task closes the socket and ends.
pub(super) struct Alive(pub(super) CancellationToken);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// What the socket task hands the [`Connection`].
pub(super) enum Incoming {
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
/// use courier::typed::NoSend;
/// use courier::live::ws::Connection;
///
/// fn push_only(ticks: Connection<u64, NoSend>) {
///     let _ = ticks.send(NoSend);
/// }
/// ```
#[must_use = "a connection yields nothing unless polled"]
pub struct Connection<R, S> {
    pub(super) incoming: mpsc::Receiver<Incoming>,
    pub(super) shared: Arc<Shared>,
    pub(super) state: watch::Receiver<ConnectionState>,
    pub(super) alive: Arc<Alive>,
    pub(super) endpoint: Arc<str>,
    pub(super) _types: PhantomData<fn(S) -> R>,
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

pub(super) fn send<S: Serialize>(shared: &Shared, message: &S) -> Result<(), SendError> {
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
    pub(super) shared: Arc<Shared>,
    pub(super) alive: Arc<Alive>,
    pub(super) _send: PhantomData<fn(S)>,
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
