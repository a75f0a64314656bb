//! The socket task: a session on one socket (messages both ways, the heartbeat, the queue), the
//! reconnections after it drops, and the in-process counterpart for a channel served here.

use super::connection::{ConnectionState, Incoming, Shared};
use super::dial::Dialer;
use super::position::Kept;
use super::socket::{close, write, Ended, Frames, Socket};
use crate::error::Error;
use courier_core::CancellationToken;
use courier_core::WsOptions;
use courier_live::{Member, Outbound};
use futures_util::StreamExt;
use http::StatusCode;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Message};

/// The close codes after which a client reconnects.
pub(super) fn reconnects(code: u16) -> bool {
    matches!(code, 1001 | 1005 | 1006 | 1011 | 1012 | 1013 | 1014)
}

/// How long a connection stays open, delivering nothing, before it counts as stable: the next
/// reconnection's backoff then starts again from its first wait (a delivered message makes a
/// connection stable at once). Until then each reconnection waits longer than the last, so an
/// upstream that accepts a socket and closes it at once is not dialled in a tight loop. The
/// browser package uses the same rule and number.
pub(super) const STABLE: Duration = Duration::from_secs(5);

/// The socket task: sessions and reconnections until the channel ends or every handle is gone.
pub(super) async fn run(
    dialer: Dialer,
    mut socket: Socket,
    shared: Arc<Shared>,
    incoming: mpsc::Sender<Incoming>,
    state: watch::Sender<ConnectionState>,
    stop: CancellationToken,
) {
    let mut attempt = 1;
    loop {
        let opened = Instant::now();
        let mut delivered = false;
        let ended = session(
            &dialer.ws,
            dialer.kept.as_deref(),
            &mut socket,
            &shared,
            &incoming,
            &stop,
            &mut delivered,
        )
        .await;
        match ended {
            Ended::Over(None) => break,
            Ended::Over(Some(error)) => {
                deliver(&incoming, Incoming::Failed(error), &stop).await;
                break;
            }
            Ended::Dropped => {}
        }
        if delivered || opened.elapsed() >= STABLE {
            attempt = 1;
        }
        match reconnect(&dialer, &incoming, &state, &stop, attempt).await {
            Some((next, made)) => {
                socket = next;
                attempt = made.saturating_add(1);
            }
            None => break,
        }
        let _ = state.send(ConnectionState::Open);
    }
    shared.close();
    let _ = state.send(ConnectionState::Closed);
}

/// What the reconnection loop asks of a dialer: the options (for the backoff), the next hello
/// frame, and a connection opened with it. A channel's is its [`Dialer`]; the loop's tests dial
/// in-memory pipes with paused time.
pub(super) trait Redial {
    /// What a successful dial opens.
    type Socket;

    /// The channel's options.
    fn ws(&self) -> &WsOptions;

    /// The hello frame of the next connection.
    async fn hello(&self) -> Result<Option<Message>, Error>;

    /// One connection attempt, opened with `hello`.
    async fn dial(&self, hello: Option<Message>) -> Result<Self::Socket, Error>;
}

impl Redial for Dialer {
    type Socket = Socket;

    fn ws(&self) -> &WsOptions {
        &self.ws
    }

    async fn hello(&self) -> Result<Option<Message>, Error> {
        Dialer::hello(self).await
    }

    async fn dial(&self, hello: Option<Message>) -> Result<Socket, Error> {
        Dialer::dial(self, hello).await
    }
}

/// Backs off and reconnects, from attempt `attempt`, until a connection opens (`Some`, with the
/// attempt that made it), a handshake is refused for good (its error handed on, `None`) or
/// every handle is gone (`None`).
///
/// Attempt *n* (from 1) waits [`backoff`]`(n)` first. A network failure, a timeout, a 5xx
/// answer, a 408 or a 429 is tried again; an auth function that fails is handed on as an error
/// item and tried again; any other refusal (a 4xx: 401, 403, 404, …) will not change by
/// retrying, and is handed on and ends the loop.
pub(super) async fn reconnect<R: Redial>(
    dialer: &R,
    incoming: &mpsc::Sender<Incoming>,
    state: &watch::Sender<ConnectionState>,
    stop: &CancellationToken,
    mut attempt: u32,
) -> Option<(R::Socket, u32)> {
    loop {
        let _ = state.send(ConnectionState::Reconnecting { attempt });
        let attempted = async {
            tokio::time::sleep(backoff(dialer.ws(), attempt)).await;
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
            Ok(socket) => return Some((socket, attempt)),
            Err((e, true)) => {
                tracing::debug!(error = %e, attempt, "channel auth failed; backing off");
                if !deliver(incoming, Incoming::Failed(e), stop).await {
                    return None;
                }
            }
            Err((e, false)) if passing(&e) => {
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

/// Whether a failed handshake may pass when tried again: no answer, or one that says "later".
fn passing(error: &Error) -> bool {
    error.is_network()
        || error.is_timeout()
        || error.status_code() >= 500
        || matches!(error.status_code(), 408 | 429)
}

/// Hands an item to the [`Connection`]; `false` once every handle is gone. Items for a
/// [`Connection`] already dropped (its [`Sender`]s live on) are discarded: nobody can read them.
pub(super) async fn deliver(
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

/// Reads and writes one socket until it ends; `delivered` is set once a message reached the
/// connection. With `kept`, the server's positions are kept there and not handed on.
pub(super) async fn session(
    ws: &WsOptions,
    kept: Option<&Kept>,
    socket: &mut impl Frames,
    shared: &Shared,
    incoming: &mpsc::Sender<Incoming>,
    stop: &CancellationToken,
    delivered: &mut bool,
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
                    Some(Ok(Message::Text(text))) => {
                        let text = text.as_str().to_owned();
                        let text = match kept {
                            Some(kept) => kept.read(text),
                            None => Some(text),
                        };
                        match text {
                            Some(text) => Incoming::Message(text),
                            None => continue,
                        }
                    }
                    Some(Ok(Message::Binary(bytes))) => match String::from_utf8(bytes.into()) {
                        Ok(text) => Incoming::Message(text),
                        Err(e) => Incoming::Failed(Error::decode(StatusCode::SWITCHING_PROTOCOLS, e)),
                    },
                    Some(Ok(Message::Close(frame))) => {
                        // Sends the answer tungstenite queued.
                        close(socket, None, ws).await;
                        let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.as_str().to_owned()));
                        if let Some(kept) = kept {
                            kept.closed(code, &reason);
                        }
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
                *delivered |= matches!(item, Incoming::Message(_));
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
pub(super) async fn run_local(
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
                Some(Outbound::Message { data, .. }) => {
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
                // Where the subscription begins: an in-process member never reconnects.
                Some(_) => {}
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
pub(super) fn backoff(ws: &WsOptions, attempt: u32) -> Duration {
    use tower::util::rng::{HasherRng, Rng};
    ws.backoff.delay(attempt, HasherRng::new().next_f64())
}
