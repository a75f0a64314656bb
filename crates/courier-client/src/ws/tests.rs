use super::connection::{ConnectionState, Incoming, Queue, SendError, Shared};
use super::socket::{stall, Ended};
use super::task::{backoff, reconnect, reconnects, session, Redial};
use crate::error::{Error, HttpError};
use courier_core::{Backoff, CancellationToken, Heartbeat, WsOptions};
use futures_util::StreamExt;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::DuplexStream;
use tokio::sync::{mpsc, watch, Notify};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

fn ws(initial_ms: u64, max_ms: u64, factor: f64, jitter: bool) -> WsOptions {
    WsOptions::new().backoff(Backoff {
        initial_ms,
        max_ms,
        factor,
        jitter,
    })
}

fn shared(max_count: usize, max_bytes: usize, max_message: usize) -> Shared {
    Shared {
        queue: Mutex::new(Queue {
            messages: VecDeque::new(),
            bytes: 0,
            closed: false,
        }),
        queued: Notify::new(),
        max_count,
        max_bytes,
        max_message,
    }
}

#[test]
fn backoff_grows_by_its_factor_up_to_its_cap() {
    let ws = ws(100, 1_000, 2.0, false);
    let waits: Vec<u64> = (1..=6)
        .map(|n| backoff(&ws, n).as_millis() as u64)
        .collect();
    assert_eq!(waits, [100, 200, 400, 800, 1_000, 1_000]);
    assert_eq!(backoff(&ws, u32::MAX), Duration::from_millis(1_000));
    // A factor below 1 does not shrink the wait.
    assert_eq!(
        backoff(&self::ws(100, 1_000, 0.5, false), 3).as_millis(),
        100
    );
}

#[test]
fn full_jitter_stays_below_the_wait() {
    let ws = ws(100, 1_000, 2.0, true);
    for attempt in 1..=8 {
        let bound = backoff(&self::ws(100, 1_000, 2.0, false), attempt);
        for _ in 0..50 {
            assert!(backoff(&ws, attempt) <= bound);
        }
    }
    let draws: std::collections::HashSet<Duration> = (0..50).map(|_| backoff(&ws, 5)).collect();
    assert!(draws.len() > 1, "jitter varies the wait");
}

#[test]
fn close_codes_that_reconnect() {
    for code in [1001, 1005, 1006, 1011, 1012, 1013, 1014] {
        assert!(reconnects(code), "{code}");
    }
    for code in [1000, 1002, 1003, 1007, 1008, 1009, 1010, 4000, 4999] {
        assert!(!reconnects(code), "{code}");
    }
}

#[test]
fn the_queue_refuses_what_does_not_fit_and_drops_nothing() {
    let queue = shared(2, 10, 6);
    assert!(matches!(
        queue.push("1234567".into()),
        Err(SendError::TooLarge { size: 7, max: 6 })
    ));
    queue.push("12345".into()).unwrap();
    // Over the bytes bound.
    assert!(matches!(
        queue.push("123456".into()),
        Err(SendError::QueueFull {
            max_count: 2,
            max_bytes: 10
        })
    ));
    queue.push("1".into()).unwrap();
    // Over the count bound.
    assert!(matches!(
        queue.push("2".into()),
        Err(SendError::QueueFull { .. })
    ));
    assert_eq!(queue.front().as_deref(), Some("12345"));
    queue.pop();
    assert_eq!(queue.queue.lock().unwrap().bytes, 1);
    queue.push("abcdef".into()).unwrap();
    assert_eq!(queue.front().as_deref(), Some("1"));
    queue.close();
    assert!(matches!(queue.push("x".into()), Err(SendError::Closed)));
}

#[test]
fn send_errors_say_what_happened() {
    let full = SendError::QueueFull {
        max_count: 5,
        max_bytes: 1024,
    };
    assert_eq!(
        full.to_string(),
        "the queue of unsent messages is full (5 messages or 1024 bytes)"
    );
    let large = SendError::TooLarge {
        size: 200,
        max: 100,
    };
    assert_eq!(
        large.to_string(),
        "the message is 200 bytes, over the limit of 100"
    );
    assert_eq!(SendError::Closed.to_string(), "the connection is closed");
    let encode = serde_json::to_string(&std::collections::HashMap::from([((1, 2), 3)]))
        .map_err(SendError::Encode)
        .unwrap_err();
    assert!(std::error::Error::source(&encode).is_some());
}

#[test]
fn a_write_may_take_the_heartbeat_interval_and_timeout() {
    let ws = WsOptions::new().heartbeat(courier_core::Heartbeat {
        interval_ms: 50,
        timeout_ms: 100,
    });
    assert_eq!(stall(&ws), Duration::from_millis(150));
}

// The session over an in-memory WebSocket (tokio-tungstenite on both ends of a pipe), with
// tokio's clock paused: what the heartbeat and the queue do, to the millisecond, with no
// socket and no waiting.

/// Both ends of an in-memory WebSocket: the client's and the server's.
async fn pipe() -> (WebSocketStream<DuplexStream>, WebSocketStream<DuplexStream>) {
    let (client, server) = tokio::io::duplex(64 * 1024);
    (
        WebSocketStream::from_raw_socket(client, Role::Client, None).await,
        WebSocketStream::from_raw_socket(server, Role::Server, None).await,
    )
}

fn beating(interval_ms: u64, timeout_ms: u64) -> WsOptions {
    WsOptions::new().heartbeat(Heartbeat {
        interval_ms,
        timeout_ms,
    })
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_heartbeat_drops_the_connection_after_its_timeout() {
    let (mut client, _silent_server) = pipe().await;
    let ws = beating(1_000, 500);
    let shared = shared(16, 1 << 20, 1 << 20);
    let (incoming, _received) = mpsc::channel(16);
    let stop = CancellationToken::new();

    let started = Instant::now();
    let ended = session(
        &ws,
        None,
        &mut client,
        &shared,
        &incoming,
        &stop,
        &mut false,
    )
    .await;

    assert!(matches!(ended, Ended::Dropped), "a reconnection follows");
    // A ping at 1 s, unanswered by 1.5 s.
    assert_eq!(started.elapsed(), Duration::from_millis(1_500));
}

#[tokio::test(start_paused = true)]
async fn an_answered_heartbeat_keeps_the_connection() {
    let (mut client, mut server) = pipe().await;
    // The server end reads (tungstenite answers each ping with a pong as it reads) and counts
    // the pings.
    let pings = tokio::spawn(async move {
        let mut pings = 0;
        while let Some(Ok(message)) = server.next().await {
            if message.is_ping() {
                pings += 1;
            }
        }
        pings
    });
    let ws = beating(1_000, 500);
    let shared = shared(16, 1 << 20, 1 << 20);
    let (incoming, _received) = mpsc::channel(16);
    let stop = CancellationToken::new();
    let stopping = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10_200)).await;
        stopping.cancel();
    });

    let ended = session(
        &ws,
        None,
        &mut client,
        &shared,
        &incoming,
        &stop,
        &mut false,
    )
    .await;

    assert!(
        matches!(ended, Ended::Over(None)),
        "still open when stopped"
    );
    drop(client);
    assert_eq!(pings.await.unwrap(), 10, "a ping a second for ten seconds");
}

#[tokio::test(start_paused = true)]
async fn queued_messages_are_written_in_order_then_the_stop_closes_normally() {
    let (mut client, mut server) = pipe().await;
    let ws = beating(30_000, 10_000);
    let shared = shared(16, 1 << 20, 1 << 20);
    for text in ["one", "two", "three"] {
        shared.push(text.to_owned()).unwrap();
    }
    let (incoming, _received) = mpsc::channel(16);
    let stop = CancellationToken::new();
    let reader = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(Ok(message)) = server.next().await {
            seen.push(message);
        }
        seen
    });
    let stopping = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopping.cancel();
    });

    let ended = session(
        &ws,
        None,
        &mut client,
        &shared,
        &incoming,
        &stop,
        &mut false,
    )
    .await;

    assert!(matches!(ended, Ended::Over(None)));
    assert!(shared.front().is_none(), "every message left the queue");
    drop(client);
    let seen = reader.await.unwrap();
    let texts: Vec<&str> = seen.iter().filter_map(|m| m.to_text().ok()).collect();
    assert_eq!(&texts[..3], ["one", "two", "three"]);
    assert!(
        matches!(seen.last(), Some(Message::Close(Some(frame))) if u16::from(frame.code) == 1000),
        "{seen:?}"
    );
}

/// A dialer of in-memory sockets: each attempt takes the next of `outcomes` (a refusal by its
/// status, `0` for a network failure, `None` for a connection), and notes when it was made.
struct ScriptedDialer {
    ws: WsOptions,
    outcomes: Mutex<VecDeque<Option<u16>>>,
    attempts: Mutex<Vec<Instant>>,
}

impl ScriptedDialer {
    fn new(ws: WsOptions, outcomes: impl IntoIterator<Item = Option<u16>>) -> Self {
        Self {
            ws,
            outcomes: Mutex::new(outcomes.into_iter().collect()),
            attempts: Mutex::new(Vec::new()),
        }
    }

    /// The waits before each attempt, from `start`.
    fn waits(&self, start: Instant) -> Vec<u64> {
        let mut last = start;
        let mut waits = Vec::new();
        for &at in self.attempts.lock().unwrap().iter() {
            waits.push((at - last).as_millis() as u64);
            last = at;
        }
        waits
    }
}

impl Redial for ScriptedDialer {
    type Socket = &'static str;

    fn ws(&self) -> &WsOptions {
        &self.ws
    }

    async fn hello(&self) -> Result<Option<Message>, Error> {
        Ok(None)
    }

    async fn dial(&self, _hello: Option<Message>) -> Result<&'static str, Error> {
        self.attempts.lock().unwrap().push(Instant::now());
        let next = self.outcomes.lock().unwrap().pop_front().flatten();
        match next {
            None => Ok("connected"),
            Some(0) => Err(Error::from_network("connection refused".into())),
            Some(status) => Err(Error::from_http(HttpError::from_parts(
                http::StatusCode::from_u16(status).unwrap(),
                http::HeaderMap::new(),
                b"",
            ))),
        }
    }
}

fn channels() -> (
    mpsc::Sender<Incoming>,
    mpsc::Receiver<Incoming>,
    watch::Sender<ConnectionState>,
) {
    let (incoming, received) = mpsc::channel(8);
    (
        incoming,
        received,
        watch::Sender::new(ConnectionState::Open),
    )
}

#[tokio::test(start_paused = true)]
async fn reconnection_backs_off_through_failures_until_a_connection_opens() {
    let dialer = ScriptedDialer::new(
        ws(100, 1_000, 2.0, false),
        // Refused, a 503, refused, a 502, then open.
        [Some(0), Some(503), Some(0), Some(502), None],
    );
    let (incoming, mut received, state) = channels();
    let mut states = state.subscribe();
    let start = Instant::now();

    let socket = reconnect(&dialer, &incoming, &state, &CancellationToken::new(), 1).await;

    assert_eq!(
        socket,
        Some(("connected", 5)),
        "the fifth attempt opened it"
    );
    // Each failed attempt doubles the next wait, up to the cap.
    assert_eq!(dialer.waits(start), [100, 200, 400, 800, 1_000]);
    assert_eq!(
        *states.borrow_and_update(),
        ConnectionState::Reconnecting { attempt: 5 }
    );
    // Failures worth another attempt are not the caller's business: no items.
    assert!(received.try_recv().is_err());
}

#[tokio::test(start_paused = true)]
async fn reconnection_goes_on_from_the_attempt_it_is_given() {
    // After a connection that was not stable, the loop starts where the last one left off.
    let dialer = ScriptedDialer::new(ws(100, 1_000, 2.0, false), [Some(0), None]);
    let (incoming, _received, state) = channels();
    let start = Instant::now();

    let socket = reconnect(&dialer, &incoming, &state, &CancellationToken::new(), 3).await;

    assert_eq!(socket, Some(("connected", 4)));
    assert_eq!(dialer.waits(start), [400, 800]);
}

#[tokio::test(start_paused = true)]
async fn a_408_or_a_429_is_tried_again_as_later_not_never() {
    let dialer = ScriptedDialer::new(ws(100, 1_000, 2.0, false), [Some(429), Some(408), None]);
    let (incoming, mut received, state) = channels();

    let socket = reconnect(&dialer, &incoming, &state, &CancellationToken::new(), 1).await;

    assert_eq!(socket, Some(("connected", 3)));
    assert!(received.try_recv().is_err(), "nothing handed on");
}

#[tokio::test(start_paused = true)]
async fn a_refused_handshake_ends_reconnection_with_its_error() {
    let dialer = ScriptedDialer::new(ws(100, 1_000, 2.0, false), [Some(0), Some(403)]);
    let (incoming, mut received, state) = channels();
    let start = Instant::now();

    let socket = reconnect(&dialer, &incoming, &state, &CancellationToken::new(), 1).await;

    assert_eq!(socket, None);
    assert_eq!(dialer.waits(start), [100, 200]);
    match received.try_recv() {
        Ok(Incoming::Failed(error)) => assert_eq!(error.status_code(), 403),
        _ => panic!("the refusal is handed on"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_stop_during_the_wait_ends_reconnection_at_once() {
    let dialer = ScriptedDialer::new(ws(60_000, 60_000, 2.0, false), [None]);
    let (incoming, _received, state) = channels();
    let stop = CancellationToken::new();
    let start = Instant::now();

    let (socket, ()) = tokio::join!(reconnect(&dialer, &incoming, &state, &stop, 1), async {
        tokio::time::sleep(Duration::from_millis(250)).await;
        stop.cancel();
    });

    assert_eq!(socket, None);
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    assert!(
        dialer.attempts.lock().unwrap().is_empty(),
        "no dial after a stop"
    );
}
