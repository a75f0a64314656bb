//! The stream's reconnection rules over in-memory connections, with tokio's clock paused: when
//! it reconnects, after how long, and from which event.

use super::events::{Connect, Opened};
use super::Events;
use crate::error::Error;
use bytes::Bytes;
use courier_core::{Body, BoxError};
use futures_util::StreamExt;
use http_body::Frame;
use http_body_util::StreamBody;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// What one connection attempt gets.
enum Answer {
    /// These bytes, then the connection drops.
    Drops(&'static str),
    /// These bytes, then the body ends.
    Ends(&'static str),
    /// No connection at all.
    Refused,
    /// `204 No Content`.
    Over,
}

/// The last event id each connection attempt resumed from, and when it was made.
type Asked = Arc<Mutex<Vec<(Option<String>, Instant)>>>;

/// A `Connect` answering each attempt with the next of `answers`, and what it was asked.
fn connections(answers: Vec<Answer>) -> (Arc<Connect>, Asked) {
    let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let connect: Arc<Connect> = Arc::new(move |last: Option<String>| {
        seen.lock().unwrap().push((last, Instant::now()));
        let answer = answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("no more attempts");
        Box::pin(async move {
            let frames =
                |text: &'static str| vec![Ok::<_, BoxError>(Frame::data(Bytes::from(text)))];
            match answer {
                Answer::Drops(text) => {
                    let mut frames = frames(text);
                    frames.push(Err("the connection drops".into()));
                    Ok(Opened::Events(Body::new(StreamBody::new(
                        futures_util::stream::iter(frames),
                    ))))
                }
                Answer::Ends(text) => Ok(Opened::Events(Body::new(StreamBody::new(
                    futures_util::stream::iter(frames(text)),
                )))),
                Answer::Refused => Err(Error::from_network(Box::new(std::io::Error::from(
                    std::io::ErrorKind::ConnectionRefused,
                )))),
                Answer::Over => Ok(Opened::Over),
            }
        })
    });
    (connect, asked)
}

#[tokio::test(start_paused = true)]
async fn a_drop_resumes_after_the_servers_retry_and_a_refusal_doubles_the_wait() {
    let (connect, asked) = connections(vec![
        Answer::Drops("retry: 100\n\nid: 1\ndata: 1\n\n"),
        Answer::Refused,
        Answer::Ends("id: 2\ndata: 2\n\n"),
        Answer::Over,
    ]);
    let start = Instant::now();
    let events: Vec<u32> = Events::<u32>::over(connect)
        .map(|event| event.expect("an event").data)
        .collect()
        .await;

    assert_eq!(events, [1, 2], "nothing lost, nothing twice");
    let asked = asked.lock().unwrap();
    let attempts: Vec<(Option<&str>, Duration)> = asked
        .iter()
        .map(|(last, at)| (last.as_deref(), *at - start))
        .collect();
    assert_eq!(
        attempts,
        [
            (None, Duration::ZERO),
            // The server's `retry` after the drop, from the last id.
            (Some("1"), Duration::from_millis(100)),
            // A failed reconnection doubles the wait.
            (Some("1"), Duration::from_millis(300)),
            // The response ended after an event: the server's `retry` again, from its id.
            (Some("2"), Duration::from_millis(400)),
        ]
    );
}

/// When each attempt was made, from `start`, and the id it resumed from.
fn attempts(asked: &Asked, start: Instant) -> Vec<(Option<String>, Duration)> {
    asked
        .lock()
        .unwrap()
        .iter()
        .map(|(last, at)| (last.clone(), *at - start))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_response_that_ends_is_a_dropped_connection_and_only_204_ends_the_stream() {
    let (connect, asked) = connections(vec![
        Answer::Ends("retry: 50\n\nid: 1\ndata: 1\n\nid: 2\ndata: 2\n\n"),
        Answer::Ends("id: 3\ndata: 3\n\n"),
        Answer::Over,
    ]);
    let start = Instant::now();
    let events: Vec<u32> = Events::<u32>::over(connect)
        .map(|event| event.expect("an event").data)
        .collect()
        .await;
    assert_eq!(
        events,
        [1, 2, 3],
        "the events after an ended response are not lost"
    );
    let id = |s: &str| Some(s.to_owned());
    assert_eq!(
        attempts(&asked, start),
        [
            (None, Duration::ZERO),
            (id("2"), Duration::from_millis(50)),
            (id("3"), Duration::from_millis(100)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_ends_as_soon_as_it_opens_is_retried_with_a_growing_wait() {
    // The server asks for no delay at all, then keeps answering with nothing.
    let (connect, asked) = connections(vec![
        Answer::Ends("retry: 0\n\nid: 1\ndata: 1\n\n"),
        Answer::Ends(""),
        Answer::Ends(": nothing\n\n"),
        Answer::Ends(""),
        Answer::Ends("id: 2\ndata: 2\n\n"),
        Answer::Ends(""),
        Answer::Over,
    ]);
    let start = Instant::now();
    let events: Vec<u32> = Events::<u32>::over(connect)
        .map(|event| event.expect("an event").data)
        .collect()
        .await;
    assert_eq!(events, [1, 2]);
    let waits: Vec<Duration> = attempts(&asked, start)
        .windows(2)
        .map(|pair| pair[1].1 - pair[0].1)
        .collect();
    assert_eq!(
        waits,
        [0, 200, 400, 800, 0, 200].map(Duration::from_millis),
        "the server's 0 after an event; after each empty one, as after a failure, twice the last \
         wait, from at least 100 ms"
    );
}

#[tokio::test(start_paused = true)]
async fn the_servers_end_event_ends_the_stream_and_is_not_handed_over() {
    let (connect, asked) = connections(vec![Answer::Drops(
        "id: 1\ndata: 1\n\nevent: courier.end\ndata: {}\n\nid: 2\ndata: 2\n\n",
    )]);
    let events: Vec<u32> = Events::<u32>::over(connect)
        .map(|event| event.expect("an event").data)
        .collect()
        .await;
    assert_eq!(events, [1], "nothing after the end, and no reconnection");
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_gap_is_told_as_a_1012_item_and_the_stream_goes_on_from_its_id() {
    let (connect, asked) = connections(vec![
        Answer::Drops(
            "event: courier.gap\nid: e:9\ndata: {\"reason\":\"messages were missed: the history no longer holds e:3\"}\n\nid: e:10\ndata: 10\n\n",
        ),
        Answer::Drops("id: e:11\ndata: 11\n\nevent: courier.end\ndata: {}\n\n"),
    ]);
    let mut events = Events::<u32>::over(connect);
    let gap = events.next().await.unwrap().unwrap_err();
    assert!(gap.is_closed(), "{gap}");
    assert_eq!(gap.close().map(|c| c.code), Some(1012));
    assert!(gap.to_string().contains("no longer holds e:3"), "{gap}");
    let rest: Vec<u32> = events
        .map(|event| event.expect("an event").data)
        .collect()
        .await;
    assert_eq!(rest, [10, 11]);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[1].0.as_deref(),
        Some("e:10"),
        "resumed after the last event"
    );
}
