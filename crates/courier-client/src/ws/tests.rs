use super::connection::{Queue, SendError, Shared};
use super::socket::stall;
use super::task::{backoff, reconnects};
use courier_core::Backoff;
use courier_core::WsOptions;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::Notify;

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
