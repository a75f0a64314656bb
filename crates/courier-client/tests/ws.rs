//! The channel client against real WebSocket servers (tokio-tungstenite on 127.0.0.1): typed
//! messages both ways, the handshake through the layer stack, refusals, reconnection, the queue
//! of unsent messages, size limits, the heartbeat, close codes and the hello frame.

use courier_client::ws::{ConnectionState, SendError};
use courier_client::Client;
use courier_core::{
    ApiDef, Backoff, ChannelEndpoint, GroupDef, Heartbeat, MessageQueue, Middleware, WsAuth,
    WsOptions,
};
use courier_layers::auth::AuthLayer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

type Ws = WebSocketStream<TcpStream>;

/// What a test server saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    headers: Mutex<Vec<http::HeaderMap>>,
}

/// A WebSocket server: `handle(n, socket)` runs for the n-th connection (from 0). `refuse`
/// answers the handshake with 401 instead.
async fn server<F, Fut>(refuse: bool, handle: F) -> (SocketAddr, Arc<Seen>)
where
    F: Fn(usize, Ws) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let handle = Arc::new(handle);
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let seen = seen2.clone();
            let handle = handle.clone();
            tokio::spawn(async move {
                // tungstenite's callback type fixes the error's size.
                #[allow(clippy::result_large_err)]
                let record = |request: &Request, response: Response| {
                    seen.headers.lock().unwrap().push(request.headers().clone());
                    if refuse {
                        let refusal: ErrorResponse = http::Response::builder()
                            .status(401)
                            .header("content-type", "application/json")
                            .body(Some(r#"{"error":"who are you"}"#.to_owned()))
                            .unwrap();
                        return Err(refusal);
                    }
                    Ok(response)
                };
                let Ok(ws) = tokio_tungstenite::accept_hdr_async(tcp, record).await else {
                    return;
                };
                let n = seen.connections.fetch_add(1, Ordering::SeqCst);
                handle(n, ws).await;
            });
        }
    });
    (addr, seen)
}

fn client(addr: SocketAddr, ws: WsOptions) -> Client {
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .header("x-api-key", "secret")
        .group(
            "chat",
            GroupDef::new().endpoint("room", ChannelEndpoint::connect("/rooms/:id").send()),
        )
        .build()
        .unwrap();
    let auth = AuthLayer::new(|| async { Ok::<_, std::convert::Infallible>("t0k".to_owned()) });
    Client::builder(api)
        .middleware(Middleware::new("auth", auth))
        .ws(ws)
        .build()
        .unwrap()
}

fn fast() -> WsOptions {
    WsOptions::new().backoff(Backoff {
        initial_ms: 20,
        max_ms: 100,
        factor: 2.0,
        jitter: false,
    })
}

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("{what} within 10 s"))
}

async fn wait_for(
    state: &mut tokio::sync::watch::Receiver<ConnectionState>,
    want: impl Fn(ConnectionState) -> bool,
) {
    within("the state", state.wait_for(|s| want(*s)))
        .await
        .unwrap();
}

async fn echo(_: usize, mut ws: Ws) {
    while let Some(Ok(message)) = ws.next().await {
        if message.is_text() && ws.send(message).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn typed_messages_both_ways_through_the_layer_stack() {
    let (addr, seen) = server(false, echo).await;
    let client = client(addr, fast().protocols(["chat.v1"]));
    let mut room = client
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    room.send(json!({ "text": "hi" })).unwrap();
    room.sender().send(json!({ "text": "again" })).unwrap();
    assert_eq!(
        within("echo", room.next()).await.unwrap().unwrap(),
        json!({ "text": "hi" })
    );
    assert_eq!(
        within("echo", room.next()).await.unwrap().unwrap(),
        json!({ "text": "again" })
    );
    assert_eq!(room.state(), ConnectionState::Open);

    let headers = seen.headers.lock().unwrap()[0].clone();
    assert_eq!(headers["x-api-key"], "secret");
    assert_eq!(headers["authorization"], "Bearer t0k");
    assert_eq!(headers["sec-websocket-protocol"], "chat.v1");
}

#[tokio::test]
async fn a_refused_handshake_is_the_connect_error() {
    let (addr, _) = server(true, echo).await;
    let err = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap_err();
    assert!(err.is_http(), "{err}");
    assert_eq!(err.status_code(), 401);
    assert_eq!(
        err.http_error().unwrap().data,
        json!({ "error": "who are you" })
    );
    assert_eq!(err.endpoint(), Some("chat.room"));
}

#[tokio::test]
async fn messages_sent_while_disconnected_are_flushed_in_order_and_a_full_queue_refuses() {
    let (received, mut got) = mpsc::unbounded_channel::<String>();
    let hold = Arc::new(Notify::new());
    let release = hold.clone();
    let (addr, _) = server(false, move |n, mut ws: Ws| {
        let received = received.clone();
        let hold = hold.clone();
        async move {
            if n == 0 {
                // Drop the first connection at once, and hold the next handshake back.
                drop(ws);
                return;
            }
            hold.notified().await;
            while let Some(Ok(Message::Text(text))) = ws.next().await {
                received.send(text.as_str().to_owned()).unwrap();
            }
        }
    })
    .await;
    let options = fast().message_queue(MessageQueue {
        max_count: 5,
        max_bytes: 1024,
    });
    let room = client(addr, options)
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let mut state = room.watch_state();
    wait_for(&mut state, |s| {
        matches!(s, ConnectionState::Reconnecting { .. })
    })
    .await;
    for n in 1..=5 {
        room.send(json!({ "n": n })).unwrap();
    }
    let full = room.send(json!({ "n": 6 })).unwrap_err();
    assert!(
        matches!(full, SendError::QueueFull { max_count: 5, .. }),
        "{full}"
    );
    release.notify_one();
    for n in 1..=5 {
        let text = within("a flushed message", got.recv()).await.unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({ "n": n })
        );
    }
    wait_for(&mut state, |s| s == ConnectionState::Open).await;
}

#[tokio::test]
async fn size_limits_hold_both_ways() {
    let (addr, _) = server(false, |_, mut ws: Ws| async move {
        let _ = ws
            .send(Message::text(format!("\"{}\"", "x".repeat(1000))))
            .await;
        while ws.next().await.is_some() {}
    })
    .await;
    let mut room = client(addr, fast().max_message_size(100))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let big = room.send(json!("y".repeat(200))).unwrap_err();
    assert!(matches!(big, SendError::TooLarge { max: 100, .. }), "{big}");
    let err = within("the size error", room.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert_eq!(err.close().unwrap().code, 1009);
    assert!(within("the end", room.next()).await.is_none());
}

#[tokio::test]
async fn an_unanswered_heartbeat_reconnects() {
    let (addr, seen) = server(false, |n, mut ws: Ws| async move {
        if n == 0 {
            // Hold the socket without reading it: pings go unanswered.
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(ws);
        } else {
            while ws.next().await.is_some() {}
        }
    })
    .await;
    let options = fast().heartbeat(Heartbeat {
        interval_ms: 50,
        timeout_ms: 100,
    });
    let room = client(addr, options)
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let mut state = room.watch_state();
    wait_for(&mut state, |s| {
        matches!(s, ConnectionState::Reconnecting { .. })
    })
    .await;
    wait_for(&mut state, |s| s == ConnectionState::Open).await;
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
}

async fn closing(code: CloseCode) -> (Arc<Seen>, courier_client::ws::Connection<Value, Value>) {
    let (addr, seen) = server(false, move |n, mut ws: Ws| async move {
        if n == 0 {
            let _ = ws.send(Message::text("1")).await;
            let _ = ws
                .close(Some(CloseFrame {
                    code,
                    reason: "because".into(),
                }))
                .await;
        }
        while ws.next().await.is_some() {}
    })
    .await;
    let room = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    (seen, room)
}

#[tokio::test]
async fn close_codes_end_or_reconnect() {
    // 1000: the channel is over.
    let (seen, mut room) = closing(CloseCode::Normal).await;
    assert_eq!(
        within("a message", room.next()).await.unwrap().unwrap(),
        json!(1)
    );
    assert!(within("the end", room.next()).await.is_none());
    assert_eq!(room.state(), ConnectionState::Closed);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        seen.connections.load(Ordering::SeqCst),
        1,
        "no reconnection"
    );
    assert!(matches!(room.send(json!(2)), Err(SendError::Closed)));

    // 1008: over, with the reason.
    let (_, mut room) = closing(CloseCode::Policy).await;
    assert_eq!(
        within("a message", room.next()).await.unwrap().unwrap(),
        json!(1)
    );
    let err = within("the error", room.next()).await.unwrap().unwrap_err();
    assert_eq!(
        (
            err.close().unwrap().code,
            err.close().unwrap().reason.as_str()
        ),
        (1008, "because")
    );
    assert!(within("the end", room.next()).await.is_none());

    // 1013 (a slow subscriber dropped): reconnect.
    let (seen, room) = closing(CloseCode::Again).await;
    let mut state = room.watch_state();
    within("a reconnection", async {
        while seen.connections.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    wait_for(&mut state, |s| s == ConnectionState::Open).await;
}

#[tokio::test]
async fn the_hello_frame_opens_every_connection_with_fresh_auth() {
    let (firsts, mut first) = mpsc::unbounded_channel::<Value>();
    let (addr, _) = server(false, move |n, mut ws: Ws| {
        let firsts = firsts.clone();
        async move {
            if let Some(Ok(Message::Text(text))) = ws.next().await {
                firsts
                    .send(serde_json::from_str(text.as_str()).unwrap())
                    .unwrap();
            }
            if n == 0 {
                return; // drop: the client reconnects
            }
            while ws.next().await.is_some() {}
        }
    })
    .await;
    let counter = Arc::new(AtomicUsize::new(0));
    let auth = WsAuth::dynamic(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            let mut params = serde_json::Map::new();
            params.insert("token".into(), json!(format!("t{n}")));
            Ok(Some(params))
        }
    });
    let room = client(addr, fast().auth(auth))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    assert_eq!(
        within("hello 1", first.recv()).await.unwrap(),
        json!({ "type": "courier.hello", "auth": { "token": "t0" } })
    );
    assert_eq!(
        within("hello 2", first.recv()).await.unwrap(),
        json!({ "type": "courier.hello", "auth": { "token": "t1" } })
    );
    drop(room);
}

#[tokio::test]
async fn dropping_the_connection_closes_the_socket() {
    let (closed, mut saw_close) = mpsc::unbounded_channel::<Option<u16>>();
    let (addr, _) = server(false, move |_, mut ws: Ws| {
        let closed = closed.clone();
        async move {
            let mut code = None;
            while let Some(Ok(message)) = ws.next().await {
                if let Message::Close(frame) = message {
                    code = frame.map(|f| u16::from(f.code));
                }
            }
            closed.send(code).unwrap();
        }
    })
    .await;
    let room = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let sender = room.sender();
    drop(room);
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A sender keeps the socket open.
    assert!(saw_close.try_recv().is_err());
    drop(sender);
    assert_eq!(
        within("the close", saw_close.recv()).await.unwrap(),
        Some(1000)
    );
}

#[tokio::test]
async fn an_implemented_channel_is_joined_in_process() {
    use courier_core::{ChannelHandler, ChannelHandlers, Peer};
    let echo = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(json!({ "echo": message, "topic": peer.topic() }))
    });
    let ticks = ChannelHandler::push(|_| {
        futures_util::stream::iter((1..=3).map(|n| Ok::<_, courier_core::BoxError>(json!(n))))
    });
    let api = ApiDef::builder()
        .group(
            "local",
            GroupDef::new()
                .endpoint(
                    "echo",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(echo)),
                )
                .endpoint("ticks", ChannelEndpoint::implement(ticks)),
        )
        .build()
        .unwrap();
    let client = Client::new(api.clone()).unwrap();

    let mut a = client
        .channel("local.echo", json!("room"), None)
        .await
        .unwrap();
    let mut b = client
        .channel("local.echo", json!("room"), None)
        .await
        .unwrap();
    a.send(json!("hi")).unwrap();
    let expected = json!({ "echo": "hi", "topic": "\"room\"" });
    assert_eq!(
        within("a's copy", a.next()).await.unwrap().unwrap(),
        expected
    );
    assert_eq!(
        within("b's copy", b.next()).await.unwrap().unwrap(),
        expected
    );

    let ticks: Vec<Value> = client
        .channel("local.ticks", Value::Null, None)
        .await
        .unwrap()
        .map(|m| m.unwrap())
        .collect()
        .await;
    assert_eq!(ticks, [json!(1), json!(2), json!(3)]);
    assert_eq!(api.hub().running(), 0);
}

#[tokio::test]
async fn the_calls_signal_closes_the_connection() {
    let (closed, mut saw_close) = mpsc::unbounded_channel::<Option<u16>>();
    let (addr, _) = server(false, move |_, mut ws: Ws| {
        let closed = closed.clone();
        async move {
            let mut code = None;
            while let Some(Ok(message)) = ws.next().await {
                if let Message::Close(frame) = message {
                    code = frame.map(|f| u16::from(f.code));
                }
            }
            closed.send(code).unwrap();
        }
    })
    .await;
    let signal = courier_core::CancellationToken::new();
    let options = courier_core::CallOptions::new().signal(signal.clone());
    let mut room = client(addr, fast())
        .channel("chat.room", json!("lobby"), Some(&options))
        .await
        .unwrap();
    signal.cancel();
    assert_eq!(
        within("the close", saw_close.recv()).await.unwrap(),
        Some(1000)
    );
    assert!(within("the end", room.next()).await.is_none());
    assert_eq!(room.state(), ConnectionState::Closed);
}
