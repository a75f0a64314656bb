//! A stream or a channel opened while serving a request keeps that request for every reconnect.
//!
//! An axum app on 127.0.0.1, wrapped in `ContextLayer`, opens a stream and a channel through a
//! typed `Caller` whose source has a session (cookie `sid`, bearer from `access_token`), forwards
//! the request id, the user agent and `x-feature`, and computes its group's `:tenant` from the
//! served request. The handler hands the subscription to the test and returns; the upstream (on
//! 127.0.0.1 too) records every connection and drops the first one. The reconnect, made long
//! after the handler returned and from outside its scope, must carry the same cookies, bearer,
//! forwarded headers and tenant as the first connection.

use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier::layers::context::ContextLayer;
use courier::options::{ForwardOptions, SessionOptions};
use courier::tree::PathOptions;
use courier::typed::{channel, stream, Channel, Group, Stream};
use courier::{ApiDef, Caller};
use futures_util::StreamExt;
use http::HeaderMap;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

// ---- the upstream: records each connection, drops the first ---------------------------------

/// Each connection the upstream received: its path and headers, in order.
#[derive(Clone, Default)]
struct Upstream(Arc<Mutex<Vec<(String, HeaderMap)>>>);

impl Upstream {
    /// Records a connection; its number (from 0).
    fn record(&self, path: &str, headers: &HeaderMap) -> usize {
        let mut seen = self.0.lock().unwrap();
        seen.push((path.to_owned(), headers.clone()));
        seen.len() - 1
    }

    fn seen(&self) -> Vec<(String, HeaderMap)> {
        self.0.lock().unwrap().clone()
    }
}

/// An event stream: one event per connection (`id` and data the connection's number), a
/// `retry` of 20 ms; the first connection's response then ends (a drop, to an EventSource), the
/// others stay open.
async fn events(State(upstream): State<Upstream>, request: Request) -> Response {
    let n = upstream.record(request.uri().path(), request.headers());
    let event = format!("retry: 20\nid: {n}\ndata: {}\n\n", json!({ "n": n }));
    let first = futures_util::stream::once(async move { Ok::<_, std::io::Error>(event) });
    let body = if n == 0 {
        Body::from_stream(first)
    } else {
        Body::from_stream(first.chain(futures_util::stream::pending()))
    };
    ([("content-type", "text/event-stream")], body).into_response()
}

/// A channel: one message per connection (the connection's number); the first connection is
/// then closed with 1011 (the server failed: reconnect), the others stay open.
async fn room(
    State(upstream): State<Upstream>,
    upgrade: WebSocketUpgrade,
    request: Request,
) -> Response {
    let n = upstream.record(request.uri().path(), request.headers());
    upgrade.on_upgrade(move |mut socket: WebSocket| async move {
        let message = json!({ "n": n }).to_string();
        if socket.send(Message::Text(message.into())).await.is_err() {
            return;
        }
        if n == 0 {
            let close = CloseFrame {
                code: 1011,
                reason: "dropped for the test".into(),
            };
            let _ = socket.send(Message::Close(Some(close))).await;
            return;
        }
        while let Some(Ok(_)) = socket.recv().await {}
    })
}

// ---- the API the app calls ------------------------------------------------------------------

#[derive(courier::Group)]
struct Live {
    events: Stream<Value>,
    room: Channel<Value>,
}

#[derive(courier::Api)]
struct Remote {
    live: Group<Live>,
}

/// The source: a session, forwarded headers, and a tenant taken from the served request.
fn remote(upstream: SocketAddr) -> courier::Api<Remote> {
    let tenant = PathOptions::from_fn(|served| {
        let tenant = served
            .and_then(|parts| parts.headers.get("x-tenant"))
            .and_then(|value| value.to_str().ok())
            .unwrap_or("public");
        json!({ "tenant": tenant })
    });
    let live = Group::new(Live {
        events: stream().get("/events"),
        room: channel().connect("/room"),
    })
    .prefix("/t/:tenant")
    .path_options(tenant);
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .session(
            SessionOptions::new()
                .cookies(["sid"])
                .bearer("access_token"),
        )
        .forward(
            ForwardOptions::new()
                .request_id(true)
                .user_agent(true)
                .headers(["x-feature"]),
        )
        .build_typed(Remote { live })
        .unwrap()
}

// ---- the app: opens a subscription while serving, hands it to the test ----------------------

type Subscription = courier::live::sse::Events<Value>;
type Connection = courier::live::ws::Connection<Value, courier::typed::NoSend>;

#[derive(Clone)]
struct App {
    caller: Caller<Remote>,
    streams: mpsc::UnboundedSender<Subscription>,
    channels: mpsc::UnboundedSender<Connection>,
}

async fn subscribe(State(app): State<App>) -> &'static str {
    let events = app.caller.live().events().await.expect("the stream opens");
    app.streams.send(events).unwrap();
    "subscribed"
}

async fn join(State(app): State<App>) -> &'static str {
    let room = app.caller.live().room().await.expect("the channel opens");
    app.channels.send(room).unwrap();
    "joined"
}

struct Setup {
    upstream: Upstream,
    app: SocketAddr,
    streams: mpsc::UnboundedReceiver<Subscription>,
    channels: mpsc::UnboundedReceiver<Connection>,
}

async fn setup() -> Setup {
    let upstream = Upstream::default();
    let upstream_addr = courier_test_support::serve(
        Router::new()
            .route("/t/{tenant}/events", get(events))
            .route("/t/{tenant}/room", get(room))
            .with_state(upstream.clone()),
    )
    .await;
    let (streams, stream_rx) = mpsc::unbounded_channel();
    let (channels, channel_rx) = mpsc::unbounded_channel();
    let app = App {
        caller: Caller::new(remote(upstream_addr)).unwrap(),
        streams,
        channels,
    };
    let app = courier_test_support::serve(
        Router::new()
            .route("/subscribe", get(subscribe))
            .route("/join", get(join))
            .with_state(app)
            .layer(ContextLayer::new()),
    )
    .await;
    Setup {
        upstream,
        app,
        streams: stream_rx,
        channels: channel_rx,
    }
}

/// The browser's request to the app: a user's session, request id, agent, tenant and feature.
async fn browse(app: SocketAddr, path: &str) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let request = http::Request::get(format!("http://{app}{path}"))
        .header("cookie", "sid=user-7; access_token=tok-7; theme=dark")
        .header("x-request-id", "req-7")
        .header("user-agent", "browser-7")
        .header("x-tenant", "acme")
        .header("x-feature", "beta")
        .body(Empty::new())
        .unwrap();
    let answer = client.request(request).await.unwrap();
    let status = answer.status();
    let body = answer.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

/// Asserts that every connection the upstream saw carried the user of [`browse`].
fn assert_same_user(seen: &[(String, HeaderMap)], path: &str) {
    assert!(seen.len() >= 2, "a reconnect was made: {seen:?}");
    for (n, (seen_path, headers)) in seen.iter().enumerate() {
        let header = |name: &str| {
            headers
                .get(name)
                .map(|value| value.to_str().unwrap().to_owned())
        };
        assert_eq!(seen_path, path, "connection {n}'s tenant");
        assert_eq!(
            header("cookie").as_deref(),
            Some("sid=user-7"),
            "connection {n}'s session cookie"
        );
        assert_eq!(
            header("authorization").as_deref(),
            Some("Bearer tok-7"),
            "connection {n}'s bearer"
        );
        assert_eq!(
            header("x-request-id").as_deref(),
            Some("req-7"),
            "connection {n}"
        );
        assert_eq!(
            header("user-agent").as_deref(),
            Some("browser-7"),
            "connection {n}"
        );
        assert_eq!(
            header("x-feature").as_deref(),
            Some("beta"),
            "connection {n}"
        );
    }
}

#[tokio::test]
async fn a_stream_opened_while_serving_reconnects_as_the_same_user_and_tenant() {
    let mut setup = setup().await;
    browse(setup.app, "/subscribe").await;
    let mut events = setup.streams.recv().await.unwrap();
    // Read outside any served request: the first connection's event, then, after the drop, the
    // reconnect's.
    for expected in 0..2 {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
            .expect("an event, not an error");
        assert_eq!(event.data, json!({ "n": expected }));
    }
    let seen = setup.upstream.seen();
    assert_same_user(&seen, "/t/acme/events");
    assert_eq!(
        seen[1].1.get("last-event-id").map(|v| v.to_str().unwrap()),
        Some("0"),
        "the reconnect resumes after the last event"
    );
}

#[tokio::test]
async fn a_channel_opened_while_serving_reconnects_as_the_same_user_and_tenant() {
    let mut setup = setup().await;
    browse(setup.app, "/join").await;
    let mut room = setup.channels.recv().await.unwrap();
    // The first connection's message; the upstream then closes it with 1011 and the socket
    // task, on a task of its own, dials again.
    for expected in 0..2 {
        let message = tokio::time::timeout(Duration::from_secs(10), room.next())
            .await
            .expect("a message in time")
            .expect("the channel goes on")
            .expect("a message, not an error");
        assert_eq!(message, json!({ "n": expected }));
    }
    assert_same_user(&setup.upstream.seen(), "/t/acme/room");
    room.close();
}
