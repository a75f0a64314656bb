//! The stream client against real SSE servers (axum on 127.0.0.1): typed events, refusals,
//! reconnection with `Last-Event-ID`, the server's `retry`, a clean end, cancellation, and the
//! layer stack on the opening request.

use axum::body::Body as AxumBody;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use courier_client::Client;
use courier_core::{
    ApiDef, CallOptions, CancellationToken, Event, GroupDef, Middleware, StreamEndpoint, WireCall,
};
use courier_layers::auth::AuthLayer;
use futures_util::{stream, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

#[derive(Debug, Deserialize, PartialEq)]
struct Tick {
    n: u64,
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    last_event_ids: Mutex<Vec<Option<String>>>,
    dropped: Notify,
}

fn event_stream(chunks: Vec<Result<String, std::io::Error>>) -> Response {
    // A failing chunk waits a little first, so what came before it is on the wire when the
    // connection breaks.
    let chunks = stream::iter(chunks).then(|chunk| async move {
        if chunk.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        chunk.map(Bytes::from)
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        AxumBody::from_stream(chunks),
    )
        .into_response()
}

/// The event a courier server ends a finite stream with.
const END: &str = "event: courier.end\ndata: {}\n\n";

/// Ticks 1 to 5 with ids; the first connection breaks after 3 (the body fails mid-stream),
/// a connection resuming after id `n` sends the rest and the end event.
async fn feed(seen: Arc<Seen>, headers: HeaderMap) -> Response {
    seen.connections.fetch_add(1, Ordering::SeqCst);
    let last = headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap().to_owned());
    seen.last_event_ids.lock().unwrap().push(last.clone());
    let from = last.map_or(1, |id| id.parse::<u64>().unwrap() + 1);
    let mut chunks = vec![Ok("retry: 50\n\n".to_owned())];
    for n in from..=5 {
        chunks.push(Ok(format!("id: {n}\ndata: {{\"n\":{n}}}\n\n")));
        if from == 1 && n == 3 {
            chunks.push(Err(std::io::Error::other("the connection breaks")));
            return event_stream(chunks);
        }
    }
    chunks.push(Ok(END.to_owned()));
    event_stream(chunks)
}

/// Never ends; tells when the server drops it (the client went away).
async fn forever(seen: Arc<Seen>) -> Response {
    struct Guard(Arc<Seen>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.dropped.notify_one();
        }
    }
    let guard = Guard(seen);
    let ticks = stream::unfold((0u64, guard), |(n, guard)| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((
            Ok::<_, std::io::Error>(Bytes::from(format!("data: {{\"n\":{n}}}\n\n"))),
            (n + 1, guard),
        ))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        AxumBody::from_stream(ticks),
    )
        .into_response()
}

async fn server() -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route(
            "/feed",
            get({
                let seen = seen.clone();
                move |headers: HeaderMap| feed(seen.clone(), headers)
            }),
        )
        .route(
            "/forever",
            get({
                let seen = seen.clone();
                move || forever(seen.clone())
            }),
        )
        .route(
            "/named",
            get(|| async {
                event_stream(vec![Ok(format!(
                    "id: a\nevent: joined\ndata: {{\"n\":1}}\n\n: comment\ndata: {{\"n\":2}}\n\n{END}"
                ))])
            }),
        )
        .route(
            "/bad",
            get(|| async {
                event_stream(vec![Ok(format!("data: {{not json\n\ndata: {{\"n\":2}}\n\n{END}"))])
            }),
        )
        .route(
            "/failing",
            get(|| async {
                event_stream(vec![Ok(
                    "data: {\"n\":1}\n\nevent: error\ndata: {\"error\":{\"code\":\"STREAM_FAILED\",\"message\":\"gone\"}}\n\n".into(),
                )])
            }),
        )
        .route(
            "/headers",
            get(|headers: HeaderMap| async move {
                let pick = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_owned());
                let seen = json!({
                    "accept": pick("accept"),
                    "x-api-key": pick("x-api-key"),
                    "authorization": pick("authorization"),
                });
                event_stream(vec![Ok(format!("data: {seen}\n\n{END}"))])
            }),
        )
        .route("/plain", get(|| async { "not events" }))
        .route("/nothing", get(|| async { StatusCode::NO_CONTENT }))
        .route(
            "/missing",
            get(|| async {
                (
                    StatusCode::NOT_FOUND,
                    Json(json!({ "error": "no such stream" })),
                )
            }),
        );
    let addr = courier_test_support::serve(app).await;
    (addr, seen)
}

fn client(addr: SocketAddr) -> Client {
    let group = [
        "feed", "forever", "named", "bad", "failing", "headers", "plain", "nothing", "missing",
    ]
    .into_iter()
    .fold(GroupDef::new(), |g, name| {
        g.endpoint(name, StreamEndpoint::get(format!("/{name}")))
    });
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group("live", group)
        .build()
        .unwrap();
    Client::new(api).unwrap()
}

async fn typed(client: &Client, name: &str) -> courier_client::sse::Events<Tick> {
    use courier_core::StreamDispatch;
    let endpoint = client
        .api()
        .endpoint(&format!("live.{name}"))
        .unwrap()
        .clone();
    client
        .subscribe::<Tick, ()>(courier_core::HttpCallRequest::new(&endpoint, (), None))
        .await
        .unwrap()
}

async fn next<S: futures_util::Stream + Unpin>(events: &mut S) -> Option<S::Item> {
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an item within 10 s")
}

#[tokio::test]
async fn typed_events_with_ids_and_names_then_the_end_event() {
    let (addr, _) = server().await;
    let mut events = typed(&client(addr), "named").await;
    let first = next(&mut events).await.unwrap().unwrap();
    assert_eq!(
        first,
        Event {
            data: Tick { n: 1 },
            id: Some("a".into()),
            event: Some("joined".into()),
            retry: None
        }
    );
    let second = next(&mut events).await.unwrap().unwrap();
    assert_eq!(
        (second.data.n, second.id.as_deref(), second.event),
        (2, Some("a"), None)
    );
    assert!(
        next(&mut events).await.is_none(),
        "the end event ends the stream, and is not handed over"
    );
    assert_eq!(events.last_event_id(), "a");
}

#[tokio::test]
async fn a_dropped_connection_resumes_after_the_last_id_without_loss_or_duplicates() {
    let (addr, seen) = server().await;
    let started = Instant::now();
    let mut events = typed(&client(addr), "feed").await;
    let mut got = Vec::new();
    while let Some(item) = next(&mut events).await {
        got.push(item.unwrap().data.n);
    }
    assert_eq!(got, [1, 2, 3, 4, 5]);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
    assert_eq!(
        *seen.last_event_ids.lock().unwrap(),
        [None, Some("3".to_owned())]
    );
    // The server's `retry: 50` replaced the 3 s default.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn refusals_are_the_subscribe_error() {
    let (addr, _) = server().await;
    let client = client(addr);
    let err = client
        .stream("live.missing", Value::Null, None)
        .await
        .unwrap_err();
    assert!(err.is_http(), "{err}");
    assert_eq!(err.status_code(), 404);
    assert_eq!(
        err.http_error().unwrap().data,
        json!({ "error": "no such stream" })
    );
    assert_eq!(err.endpoint(), Some("live.missing"));

    let err = client
        .stream("live.plain", Value::Null, None)
        .await
        .unwrap_err();
    assert!(err.is_protocol(), "{err}");
    assert!(err.to_string().contains("text/plain"), "{err}");

    let err = client
        .stream("live.nope", Value::Null, None)
        .await
        .unwrap_err();
    assert!(err.is_configuration(), "{err}");
}

#[tokio::test]
async fn no_content_ends_the_stream_without_events() {
    let (addr, _) = server().await;
    let mut events = client(addr)
        .stream("live.nothing", Value::Null, None)
        .await
        .unwrap();
    assert!(next(&mut events).await.is_none());
}

#[tokio::test]
async fn data_that_does_not_parse_is_one_error_then_the_stream_goes_on() {
    let (addr, _) = server().await;
    let mut events = typed(&client(addr), "bad").await;
    let err = next(&mut events).await.unwrap().unwrap_err();
    assert!(err.is_decode(), "{err}");
    assert_eq!(
        next(&mut events).await.unwrap().unwrap().data,
        Tick { n: 2 }
    );
    assert!(next(&mut events).await.is_none());
}

#[tokio::test]
async fn a_courier_error_frame_ends_the_stream_with_its_message() {
    let (addr, _) = server().await;
    let mut events = typed(&client(addr), "failing").await;
    assert_eq!(
        next(&mut events).await.unwrap().unwrap().data,
        Tick { n: 1 }
    );
    let err = next(&mut events).await.unwrap().unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert_eq!(err.close().unwrap().reason, "STREAM_FAILED: gone");
    assert!(next(&mut events).await.is_none());
}

#[tokio::test]
async fn the_signal_ends_it_and_dropping_it_closes_the_connection() {
    let (addr, seen) = server().await;
    let client = client(addr);
    let signal = CancellationToken::new();
    let options = CallOptions::new().signal(signal.clone());
    let mut events = client
        .stream("live.forever", Value::Null, Some(&options))
        .await
        .unwrap();
    assert!(next(&mut events).await.unwrap().is_ok());
    signal.cancel();
    let err = next(&mut events).await.unwrap().unwrap_err();
    assert!(err.is_cancelled(), "{err}");
    assert!(next(&mut events).await.is_none());
    drop(events);
    tokio::time::timeout(Duration::from_secs(10), seen.dropped.notified())
        .await
        .expect("the server saw the connection close");

    let mut events = client
        .stream("live.forever", Value::Null, None)
        .await
        .unwrap();
    assert!(next(&mut events).await.unwrap().is_ok());
    let closed = seen.dropped.notified();
    drop(events);
    tokio::time::timeout(Duration::from_secs(10), closed)
        .await
        .expect("dropping the subscription closed the connection");
}

#[tokio::test]
async fn the_opening_request_goes_through_the_layer_stack() {
    let (addr, _) = server().await;
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .header("x-api-key", "secret")
        .group(
            "live",
            GroupDef::new().endpoint("headers", StreamEndpoint::get("/headers")),
        )
        .build()
        .unwrap();
    let auth = AuthLayer::new(|| async { Ok::<_, std::convert::Infallible>("t0k".to_owned()) });
    let client = Client::builder(api)
        .middleware(Middleware::new("auth", auth))
        .build()
        .unwrap();
    let mut events = client
        .stream("live.headers", Value::Null, None)
        .await
        .unwrap();
    let seen = next(&mut events).await.unwrap().unwrap().data;
    assert_eq!(
        seen,
        json!({ "accept": "text/event-stream", "x-api-key": "secret", "authorization": "Bearer t0k" })
    );
}

#[tokio::test]
async fn an_implemented_stream_runs_in_process() {
    use courier_core::{StreamHandler, StreamRequest};
    let handler = StreamHandler::new(|request: StreamRequest| {
        let every = request.variables["every"].as_u64().unwrap_or(1);
        stream::iter(
            (1..=3).map(move |n| Ok(Event::new(json!({ "n": n * every })).id(n.to_string()))),
        )
    });
    let api = ApiDef::builder()
        .group(
            "live",
            GroupDef::new().endpoint("local", StreamEndpoint::implement(handler)),
        )
        .build()
        .unwrap();
    let client = Client::new(api).unwrap();
    let events = client
        .stream("live.local", json!({ "every": 10 }), None)
        .await
        .unwrap();
    let got: Vec<(Value, Option<String>)> = events
        .map(|e| {
            let e = e.unwrap();
            (e.data, e.id)
        })
        .collect()
        .await;
    assert_eq!(
        got,
        [
            (json!({ "n": 10 }), Some("1".into())),
            (json!({ "n": 20 }), Some("2".into())),
            (json!({ "n": 30 }), Some("3".into())),
        ]
    );
}

#[tokio::test]
async fn an_implemented_stream_that_missed_events_is_opened_again_from_its_last_id() {
    use courier_core::{MissedEvents, StreamHandler, StreamRequest};
    // Each opening says which id it resumed from; the first fails with MissedEvents after its
    // second event, as a followed topic does when its bus lost messages.
    let opened = Arc::new(Mutex::new(Vec::new()));
    let seen = opened.clone();
    let handler = StreamHandler::new(move |request: StreamRequest| {
        seen.lock().unwrap().push(request.last_event_id.clone());
        let from = request
            .last_event_id
            .map_or(1, |id| id.parse::<u64>().unwrap() + 1);
        let events = (from..=4)
            .map(|n| Ok::<_, courier_core::BoxError>(Event::new(json!(n)).id(n.to_string())));
        let missed: Vec<Result<Event<Value>, courier_core::BoxError>> = if from == 1 {
            let mut first: Vec<_> = events.take(2).collect();
            first.push(Err(Box::new(MissedEvents::new("the bus reconnected"))));
            first
        } else {
            events.collect()
        };
        stream::iter(missed)
    });
    let api = ApiDef::builder()
        .group(
            "live",
            GroupDef::new().endpoint("local", StreamEndpoint::implement(handler)),
        )
        .build()
        .unwrap();
    let events = Client::new(api)
        .unwrap()
        .stream("live.local", Value::Null, None)
        .await
        .unwrap();
    let got: Vec<Value> = events.map(|e| e.unwrap().data).collect().await;
    assert_eq!(
        got,
        [json!(1), json!(2), json!(3), json!(4)],
        "nothing lost, nothing twice"
    );
    assert_eq!(*opened.lock().unwrap(), [None, Some("2".to_owned())]);
}

/// An implemented stream declared with the typed face, as `#[derive(courier::Group)]` and
/// `#[derive(courier::Api)]` would write it, and called through a [`Caller`].
mod typed_caller {
    use super::*;
    use courier_client::Caller;
    use courier_core::typed::{
        stream, ApiMember, ApiSpec, Data, Endpoint, Group, GroupSpec, Member, Mode, Scope, Stream,
    };
    use courier_core::{ApiBuilder, Dispatch};

    #[derive(Debug, Deserialize, serde::Serialize, PartialEq)]
    struct Count {
        n: u64,
    }

    struct Live {
        counts: Stream<Count, u64>,
    }

    impl GroupSpec for Live {
        type View<'a, C: Dispatch + 'a, M: Mode> = Scope<'a, C, M>;
        fn register(self, group: GroupDef) -> GroupDef {
            self.counts.add_to("counts", group)
        }
    }

    struct Shape {
        live: Group<Live>,
    }

    struct ShapeClient<C>(C);

    impl<C> From<C> for ShapeClient<C> {
        fn from(client: C) -> Self {
            Self(client)
        }
    }

    impl<C: Dispatch> ShapeClient<C> {
        fn live(&self) -> Scope<'_, C> {
            Scope::root(&self.0).group("live")
        }
    }

    impl ApiSpec for Shape {
        type Client<C: Dispatch> = ShapeClient<C>;
        type View<'a, C: Dispatch + 'a, M: Mode> = Scope<'a, C, M>;
        fn register(self, api: ApiBuilder) -> ApiBuilder {
            self.live.add_to_api("live", api)
        }
    }

    #[tokio::test]
    async fn an_implemented_stream_through_a_typed_caller() {
        let live = Group::new(Live {
            counts: stream().implement(|every: u64| {
                stream::iter((1..=3).map(move |n| {
                    Event::new(Count { n: n * every })
                        .id(n.to_string())
                        .event("count")
                }))
            }),
        });
        let api = ApiDef::builder().build_typed(Shape { live }).unwrap();
        let caller = Caller::new(api).unwrap();
        let live = caller.live();
        let events = <Stream<Count, u64> as Endpoint>::call::<_, Data>(&live, "counts", 10)
            .await
            .unwrap();
        let got: Vec<Event<Count>> = events.map(Result::unwrap).collect().await;
        let expected: Vec<Event<Count>> = (1..=3)
            .map(|n| Event {
                data: Count { n: n * 10 },
                id: Some(n.to_string()),
                event: Some("count".into()),
                retry: None,
            })
            .collect();
        assert_eq!(got, expected);

        // Variables the handler cannot read end the subscription with one error.
        let wrong = <Stream<Count, &str> as Endpoint>::call::<_, Data>(&live, "counts", "ten")
            .await
            .unwrap();
        let items: Vec<_> = wrong.collect().await;
        assert_eq!(items.len(), 1);
        let err = items[0].as_ref().unwrap_err();
        assert!(err.is_closed(), "{err}");
    }
}

/// A server written by hand on a raw socket, to break connections exactly where a test needs:
/// each connection's request head is read, then `answer(connection index, last-event-id)`
/// gives the bytes to write before the socket closes (`None`: close at once).
mod raw_server {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    pub(super) type Log = Arc<Mutex<Vec<(Instant, Option<String>)>>>;

    pub(super) async fn start(
        answer: impl Fn(usize, Option<&str>) -> Option<String> + Send + Sync + 'static,
    ) -> (SocketAddr, Log) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log: Log = Arc::default();
        let seen = log.clone();
        tokio::spawn(async move {
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                let mut socket = BufReader::new(socket);
                let mut last = None;
                loop {
                    let mut line = String::new();
                    if socket.read_line(&mut line).await.unwrap() == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("last-event-id") {
                            last = Some(value.trim().to_owned());
                        }
                    }
                }
                let index = {
                    let mut log = seen.lock().unwrap();
                    log.push((Instant::now(), last.clone()));
                    log.len() - 1
                };
                if let Some(bytes) = answer(index, last.as_deref()) {
                    socket.write_all(bytes.as_bytes()).await.unwrap();
                    socket.flush().await.unwrap();
                }
                // Dropping the socket closes the connection.
            }
        });
        (addr, log)
    }

    /// A `200 text/event-stream` head and `events` as one chunk; the body is finished when
    /// `end`, else cut off (the connection drops mid-body).
    pub(super) fn events(events: &str, end: bool) -> String {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n{}",
            events.len(),
            if end { "0\r\n\r\n" } else { "" }
        )
    }
}

fn raw_client(addr: SocketAddr) -> Client {
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group(
            "live",
            GroupDef::new().endpoint("feed", StreamEndpoint::get("/feed")),
        )
        .build()
        .unwrap();
    // No retries inside the request: the reconnections are the stream's own.
    Client::builder(api)
        .retry(courier_core::RetryPolicy::never())
        .build()
        .unwrap()
}

#[tokio::test]
async fn failed_reconnections_back_off_doubling_and_the_stream_goes_on() {
    let (addr, log) = raw_server::start(|index, _| match index {
        0 => Some(raw_server::events(
            "retry: 50\nid: 1\ndata: {\"n\":1}\n\n",
            false,
        )),
        // Two reconnections fail on the network: the socket closes before any answer.
        1 | 2 => None,
        _ => Some(raw_server::events(
            &format!("id: 2\ndata: {{\"n\":2}}\n\n{END}"),
            true,
        )),
    })
    .await;
    let mut events = raw_client(addr)
        .stream("live.feed", Value::Null, None)
        .await
        .unwrap();
    let mut got = Vec::new();
    while let Some(item) = next(&mut events).await {
        got.push(item.unwrap().data);
    }
    assert_eq!(got, [json!({ "n": 1 }), json!({ "n": 2 })]);
    let log = log.lock().unwrap().clone();
    let ids: Vec<Option<&str>> = log.iter().map(|(_, id)| id.as_deref()).collect();
    assert_eq!(ids, [None, Some("1"), Some("1"), Some("1")]);
    // After the first failure the wait is twice the server's 50 ms, after the second four times.
    let gap = |i: usize| log[i + 1].0 - log[i].0;
    assert!(gap(1) >= Duration::from_millis(100), "{:?}", gap(1));
    assert!(gap(2) >= Duration::from_millis(200), "{:?}", gap(2));
    assert_eq!(events.last_event_id(), "2");
}

#[tokio::test]
async fn a_server_that_ends_its_responses_loses_no_events() {
    // As a server behind an idle timeout or a load balancer does: two events per response,
    // each response ended cleanly; then the end event.
    let (addr, log) = raw_server::start(|_, last| {
        let from = last.map_or(1, |id| id.parse::<u64>().unwrap() + 1);
        let mut events = String::from("retry: 20\n\n");
        for n in from..(from + 2).min(7) {
            events.push_str(&format!("id: {n}\ndata: {{\"n\":{n}}}\n\n"));
        }
        if from + 2 > 6 {
            events.push_str(END);
        }
        Some(raw_server::events(&events, true))
    })
    .await;
    let mut events = raw_client(addr)
        .stream("live.feed", Value::Null, None)
        .await
        .unwrap();
    let mut got = Vec::new();
    while let Some(item) = next(&mut events).await {
        got.push(item.unwrap().data["n"].as_u64().unwrap());
    }
    assert_eq!(got, [1, 2, 3, 4, 5, 6], "nothing lost, nothing twice");
    let log = log.lock().unwrap().clone();
    let ids: Vec<Option<&str>> = log.iter().map(|(_, id)| id.as_deref()).collect();
    assert_eq!(
        ids,
        [None, Some("2"), Some("4")],
        "reconnected from each last id"
    );
}

#[tokio::test]
async fn a_server_that_ends_at_once_is_not_retried_in_a_tight_loop() {
    // `retry: 0`, then nothing but empty responses.
    let (addr, log) = raw_server::start(|index, _| match index {
        0 => Some(raw_server::events(
            "retry: 0\nid: 1\ndata: {\"n\":1}\n\n",
            true,
        )),
        _ => Some(raw_server::events(": nothing\n\n", true)),
    })
    .await;
    let mut events = raw_client(addr)
        .stream("live.feed", Value::Null, None)
        .await
        .unwrap();
    assert_eq!(
        next(&mut events).await.unwrap().unwrap().data,
        json!({ "n": 1 })
    );
    // Within 1.6 s: at most the attempts at 0, 200, 600 and 1400 ms after the first.
    assert!(
        tokio::time::timeout(Duration::from_millis(1600), events.next())
            .await
            .is_err(),
        "no event from empty responses"
    );
    let attempts = log.lock().unwrap().len();
    assert!((3..=5).contains(&attempts), "{attempts} attempts in 1.6 s");
}

#[tokio::test]
async fn a_refused_reconnection_is_the_last_item() {
    let (addr, log) = raw_server::start(|index, _| match index {
        0 => Some(raw_server::events(
            "retry: 10\nid: 1\ndata: {\"n\":1}\n\n",
            false,
        )),
        _ => {
            let body = r#"{"error":{"code":"FORBIDDEN","message":"no more"}}"#;
            Some(format!(
                "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            ))
        }
    })
    .await;
    let mut events = raw_client(addr)
        .stream("live.feed", Value::Null, None)
        .await
        .unwrap();
    assert_eq!(
        next(&mut events).await.unwrap().unwrap().data,
        json!({ "n": 1 })
    );
    let err = next(&mut events).await.unwrap().unwrap_err();
    assert!(err.is_http(), "{err}");
    assert_eq!(err.status_code(), 403);
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        json!("FORBIDDEN")
    );
    assert_eq!(err.endpoint(), Some("live.feed"));
    assert!(next(&mut events).await.is_none());
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "no reconnection after a refusal"
    );
    assert!(format!("{events:?}").contains("done"), "{events:?}");
}

#[tokio::test]
async fn a_via_stream_opens_at_the_address_its_closure_computes() {
    let (addr, _) = server().await;
    let via = StreamEndpoint::via(|variables| {
        Ok(WireCall::get("/:which")
            .variables(json!({ "which": variables["which"] }))
            .header(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_static("Bearer from-the-closure"),
            ))
    });
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group("live", GroupDef::new().endpoint("chosen", via))
        .build()
        .unwrap();
    let client = Client::new(api).unwrap();

    let mut events = client
        .stream("live.chosen", json!({ "which": "headers" }), None)
        .await
        .unwrap();
    let first = next(&mut events).await.unwrap().unwrap();
    assert_eq!(first.data["authorization"], "Bearer from-the-closure");
    assert_eq!(first.data["accept"], "text/event-stream");
}
