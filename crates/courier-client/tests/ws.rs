//! The channel client against real WebSocket servers (tokio-tungstenite on 127.0.0.1): typed
//! messages both ways, the handshake through the layer stack, refusals, reconnection, the queue
//! of unsent messages, size limits, the heartbeat, close codes and the hello frame.

// tungstenite's handshake callback fixes the size of its error (the refusal response).
#![allow(clippy::result_large_err)]

use courier_client::ws::{ConnectionState, SendError};
use courier_client::Client;
use courier_core::{
    ApiDef, Backoff, ChannelEndpoint, GroupDef, Heartbeat, MessageQueue, Middleware, WireCall,
    WsAuth, WsOptions,
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
use tokio::sync::mpsc;
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

/// A refusal of the handshake with `status` and a JSON body.
fn refusal(status: u16, body: &str) -> ErrorResponse {
    http::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Some(body.to_owned()))
        .unwrap()
}

/// A WebSocket server: `handle(n, socket)` runs for the n-th connection (from 0). `refuse`
/// answers the handshake with 401 instead.
async fn server<F, Fut>(refuse: bool, handle: F) -> (SocketAddr, Arc<Seen>)
where
    F: Fn(usize, Ws) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let respond = move |_: usize, _: &Request, response: Response| {
        if refuse {
            return Err(refusal(401, r#"{"error":"who are you"}"#));
        }
        Ok(response)
    };
    server_with(respond, handle).await
}

/// A WebSocket server whose `respond(n, request, response)` answers the n-th handshake (from
/// 0), and whose `handle(n, socket)` runs for the n-th connection accepted (from 0).
async fn server_with<A, F, Fut>(respond: A, handle: F) -> (SocketAddr, Arc<Seen>)
where
    A: Fn(usize, &Request, Response) -> Result<Response, ErrorResponse> + Send + Sync + 'static,
    F: Fn(usize, Ws) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let respond = Arc::new(respond);
    let handle = Arc::new(handle);
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let seen = seen2.clone();
            let respond = respond.clone();
            let handle = handle.clone();
            tokio::spawn(async move {
                let record = |request: &Request, response: Response| {
                    let n = {
                        let mut headers = seen.headers.lock().unwrap();
                        headers.push(request.headers().clone());
                        headers.len() - 1
                    };
                    respond(n, request, response)
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

#[derive(Debug, serde::Serialize)]
struct Say {
    text: String,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Said {
    from: String,
    text: String,
}

#[tokio::test]
async fn typed_messages_through_channel_dispatch() {
    use courier_core::{ChannelDispatch, HttpCallRequest};
    let paths = Arc::new(Mutex::new(Vec::new()));
    let record = paths.clone();
    let respond = move |_: usize, request: &Request, response: Response| {
        record.lock().unwrap().push(request.uri().path().to_owned());
        Ok(response)
    };
    // Answers each `Say` with a `Said`, and "garbage" with something else.
    let (addr, _) = server_with(respond, |_, mut ws: Ws| async move {
        while let Some(Ok(Message::Text(text))) = ws.next().await {
            let say: Value = serde_json::from_str(text.as_str()).unwrap();
            let answer = if say["text"] == "garbage" {
                json!({ "unexpected": true })
            } else {
                json!({ "from": "server", "text": say["text"] })
            };
            if ws.send(Message::text(answer.to_string())).await.is_err() {
                return;
            }
        }
    })
    .await;
    let client = client(addr, fast());
    let endpoint = client.api().endpoint("chat.room").unwrap().clone();
    let mut room: courier_client::ws::Connection<Said, Say> = client
        .connect::<Said, Say, _>(HttpCallRequest::new(&endpoint, "lobby", None))
        .await
        .unwrap();
    room.send(Say { text: "hi".into() }).unwrap();
    assert_eq!(
        within("the answer", room.next()).await.unwrap().unwrap(),
        Said {
            from: "server".into(),
            text: "hi".into()
        }
    );
    // A message that is not the response type is an error item; the stream goes on.
    room.send(Say {
        text: "garbage".into(),
    })
    .unwrap();
    let err = within("the decode error", room.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_decode(), "{err}");
    assert_eq!(err.endpoint(), Some("chat.room"));
    let sender = room.sender();
    tokio::spawn(async move {
        sender
            .send(Say {
                text: "from a task".into(),
            })
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        within("the answer", room.next())
            .await
            .unwrap()
            .unwrap()
            .text,
        "from a task"
    );
    assert_eq!(*paths.lock().unwrap(), ["/rooms/lobby"]);
}

#[tokio::test]
async fn a_dropped_connection_reconnects_and_messages_flow_again() {
    let (addr, seen) = server(false, |n, mut ws: Ws| async move {
        while let Some(Ok(message)) = ws.next().await {
            if message.is_text() {
                let _ = ws.send(message).await;
                if n == 0 {
                    return; // drop the TCP connection, no close frame
                }
            }
        }
    })
    .await;
    let mut room = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    room.send(json!("a")).unwrap();
    assert_eq!(
        within("the echo", room.next()).await.unwrap().unwrap(),
        json!("a")
    );
    within("a reconnection", async {
        while seen.connections.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    wait_for(&mut room.watch_state(), |s| s == ConnectionState::Open).await;
    room.send(json!("b")).unwrap();
    assert_eq!(
        within("the echo", room.next()).await.unwrap().unwrap(),
        json!("b")
    );
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn subprotocols_are_offered_and_the_choice_checked() {
    let chooser = |chosen: &'static str| {
        move |_: usize, _: &Request, mut response: Response| {
            response
                .headers_mut()
                .insert("sec-websocket-protocol", chosen.parse().unwrap());
            Ok(response)
        }
    };
    let (addr, seen) = server_with(chooser("chat.v1"), echo).await;
    let mut room = client(addr, fast().protocols(["chat.v2", "chat.v1"]))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    assert_eq!(
        seen.headers.lock().unwrap()[0]["sec-websocket-protocol"],
        "chat.v2, chat.v1"
    );
    room.send(json!(1)).unwrap();
    assert_eq!(
        within("the echo", room.next()).await.unwrap().unwrap(),
        json!(1)
    );

    let (addr, _) = server_with(chooser("other"), echo).await;
    let err = client(addr, fast().protocols(["chat.v1"]))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap_err();
    assert!(err.is_protocol(), "{err}");
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
async fn messages_sent_while_disconnected_are_flushed_in_order_after_the_hello() {
    let (received, mut got) = mpsc::unbounded_channel::<Value>();
    // After the first connection, handshakes are refused with 503 until `open` is set.
    let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opened = open.clone();
    let respond = move |n: usize, _: &Request, response: Response| {
        if n > 0 && !opened.load(Ordering::SeqCst) {
            return Err(refusal(503, r#"{"error":"not yet"}"#));
        }
        Ok(response)
    };
    let (addr, _) = server_with(respond, move |n, mut ws: Ws| {
        let received = received.clone();
        async move {
            if n == 0 {
                // Take the hello, then drop the connection.
                let _ = ws.next().await;
                return;
            }
            while let Some(Ok(Message::Text(text))) = ws.next().await {
                received
                    .send(serde_json::from_str(text.as_str()).unwrap())
                    .unwrap();
            }
        }
    })
    .await;
    let mut params = serde_json::Map::new();
    params.insert("token".into(), json!("t"));
    let options = fast()
        .auth(WsAuth::Params(params))
        .message_queue(MessageQueue {
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
        matches!(
            full,
            SendError::QueueFull {
                max_count: 5,
                max_bytes: 1024
            }
        ),
        "{full}"
    );
    open.store(true, Ordering::SeqCst);
    assert_eq!(
        within("the hello", got.recv()).await.unwrap(),
        json!({ "type": "courier.hello", "auth": { "token": "t" } })
    );
    for n in 1..=5 {
        assert_eq!(
            within("a flushed message", got.recv()).await.unwrap(),
            json!({ "n": n })
        );
    }
    wait_for(&mut state, |s| s == ConnectionState::Open).await;
    // The refused message never went out: the next one follows the five.
    room.send(json!({ "n": 7 })).unwrap();
    assert_eq!(
        within("the next message", got.recv()).await.unwrap(),
        json!({ "n": 7 })
    );
}

#[tokio::test]
async fn a_reconnection_refused_below_500_ends_the_connection() {
    // Handshake 0 opens, 1 and 2 fail with 500 (retried with backoff), 3 is refused with 403.
    let respond = |n: usize, _: &Request, response: Response| match n {
        0 => Ok(response),
        1 | 2 => Err(refusal(500, r#"{"error":"restarting"}"#)),
        _ => Err(refusal(403, r#"{"error":"banned"}"#)),
    };
    let (addr, seen) = server_with(respond, |_, ws: Ws| async move { drop(ws) }).await;
    let mut room = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let mut state = room.watch_state();
    let err = within("the refusal", room.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_http(), "{err}");
    assert_eq!(err.status_code(), 403);
    assert_eq!(err.http_error().unwrap().data, json!({ "error": "banned" }));
    assert!(within("the end", room.next()).await.is_none());
    wait_for(&mut state, |s| s == ConnectionState::Closed).await;
    assert_eq!(seen.headers.lock().unwrap().len(), 4);
    assert!(matches!(room.send(json!(1)), Err(SendError::Closed)));
}

#[tokio::test]
async fn a_failing_auth_function_fails_connect_then_retries_on_reconnection() {
    // On the first connection: `connect`'s error, and no handshake is made.
    let (addr, seen) = server(false, echo).await;
    let failing = WsAuth::dynamic(|| async { Err("no token yet".into()) });
    let err = client(addr, fast().auth(failing))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap_err();
    assert!(err.is_configuration(), "{err}");
    assert!(err.to_string().contains("no token yet"), "{err}");
    assert!(seen.headers.lock().unwrap().is_empty());

    // On a reconnection: an error item, then another attempt after the backoff.
    let (addr, mut first) = hello_server().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let auth = WsAuth::dynamic(move || {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 1 {
                return Err("token service down".into());
            }
            let mut params = serde_json::Map::new();
            params.insert("token".into(), json!(format!("t{n}")));
            Ok(Some(params))
        }
    });
    let mut room = client(addr, fast().auth(auth))
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    assert_eq!(
        within("hello 1", first.recv()).await.unwrap()["auth"]["token"],
        "t0"
    );
    let err = within("the auth error", room.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("token service down"), "{err}");
    assert_eq!(
        within("hello 2", first.recv()).await.unwrap()["auth"]["token"],
        "t2"
    );
    wait_for(&mut room.watch_state(), |s| s == ConnectionState::Open).await;
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
    // The first socket is still held open by the server: only the heartbeat can replace it.
    within("a reconnection", async {
        while seen.connections.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    wait_for(&mut room.watch_state(), |s| s == ConnectionState::Open).await;
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

    // 4403 (a proxy's refusal for good: 4000 + the status): over, with the reason, and never
    // dialled again.
    let (seen, mut room) = closing(CloseCode::from(4403)).await;
    assert_eq!(
        within("a message", room.next()).await.unwrap().unwrap(),
        json!(1)
    );
    let err = within("the error", room.next()).await.unwrap().unwrap_err();
    assert_eq!(err.close().unwrap().code, 4403);
    assert!(within("the end", room.next()).await.is_none());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        seen.connections.load(Ordering::SeqCst),
        1,
        "no reconnection"
    );

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

/// The gaps between the first `n` connections of a server whose every connection sends
/// `greeting` (when given) and is then closed with 1011 at once, for a client whose backoff
/// starts at 40 ms and doubles up to 2 s.
async fn gaps_between_closed_connections(
    greeting: Option<&'static str>,
    n: usize,
) -> Vec<Duration> {
    let opened = Arc::new(Mutex::new(Vec::new()));
    let times = opened.clone();
    let (addr, _) = server(false, move |_, mut ws: Ws| {
        times.lock().unwrap().push(std::time::Instant::now());
        async move {
            if let Some(text) = greeting {
                let _ = ws.send(Message::text(text)).await;
            }
            let failed = CloseFrame {
                code: CloseCode::Error,
                reason: "at once".into(),
            };
            let _ = ws.close(Some(failed)).await;
            while ws.next().await.is_some() {}
        }
    })
    .await;
    let ws = WsOptions::new().backoff(Backoff {
        initial_ms: 40,
        max_ms: 2_000,
        factor: 2.0,
        jitter: false,
    });
    let mut room = client(addr, ws)
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    within("the connections", async {
        while opened.lock().unwrap().len() < n {
            // Reading takes the greetings off the connection's queue.
            let _ = tokio::time::timeout(Duration::from_millis(10), room.next()).await;
        }
    })
    .await;
    room.close();
    let opened = opened.lock().unwrap();
    opened[..n].windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test]
async fn a_socket_closed_as_soon_as_it_opens_does_not_reset_the_backoff() {
    // Nothing delivered, open for milliseconds: each reconnection waits twice the last.
    let gaps = gaps_between_closed_connections(None, 6).await;
    for (n, gap) in gaps.iter().enumerate() {
        let backoff = Duration::from_millis(40 << n);
        assert!(
            *gap >= backoff,
            "gap {n} is {gap:?}, below its backoff {backoff:?}: {gaps:?}"
        );
    }
    // A connection that delivered a message was stable: the backoff starts over each time.
    let gaps = gaps_between_closed_connections(Some("hello"), 6).await;
    assert!(
        gaps.iter().all(|gap| *gap < Duration::from_millis(600)),
        "every wait is the first one: {gaps:?}"
    );
}

/// A server that hands each connection's first frame (the hello) to the test, drops the first
/// connection so that the client reconnects, and keeps the later ones open.
async fn hello_server() -> (SocketAddr, mpsc::UnboundedReceiver<Value>) {
    let (firsts, first) = mpsc::unbounded_channel::<Value>();
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
    (addr, first)
}

#[tokio::test]
async fn the_hello_frame_opens_every_connection_with_fresh_auth() {
    let (addr, mut first) = hello_server().await;
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
async fn dropping_the_connection_and_its_senders_closes_the_socket() {
    /// What the server saw, in order.
    #[derive(Debug, PartialEq)]
    enum Saw {
        Text(String),
        Pong,
        Closed(Option<u16>),
    }
    let (saw, mut seen_by_server) = mpsc::unbounded_channel::<Saw>();
    let (addr, _) = server(false, move |_, mut ws: Ws| {
        let saw = saw.clone();
        async move {
            let mut code = None;
            while let Some(Ok(message)) = ws.next().await {
                match message {
                    Message::Text(text) => {
                        saw.send(Saw::Text(text.as_str().to_owned())).unwrap();
                        // Echo, then ping: the pong proves the client read the echo.
                        let _ = ws.send(Message::Text(text)).await;
                        let _ = ws.send(Message::Ping(Default::default())).await;
                    }
                    Message::Pong(_) => saw.send(Saw::Pong).unwrap(),
                    Message::Close(frame) => code = frame.map(|f| u16::from(f.code)),
                    _ => {}
                }
            }
            saw.send(Saw::Closed(code)).unwrap();
        }
    })
    .await;
    let room = client(addr, fast())
        .channel("chat.room", json!("lobby"), None)
        .await
        .unwrap();
    let sender = room.sender();
    drop(room);
    // A sender keeps the socket open, even as messages arrive that nobody reads.
    sender.send(json!("one")).unwrap();
    assert_eq!(
        within("one", seen_by_server.recv()).await,
        Some(Saw::Text("\"one\"".into()))
    );
    assert_eq!(
        within("a pong", seen_by_server.recv()).await,
        Some(Saw::Pong)
    );
    sender.send(json!("two")).unwrap();
    assert_eq!(
        within("two", seen_by_server.recv()).await,
        Some(Saw::Text("\"two\"".into()))
    );
    assert_eq!(
        within("a pong", seen_by_server.recv()).await,
        Some(Saw::Pong)
    );
    drop(sender);
    assert_eq!(
        within("the close", seen_by_server.recv()).await,
        Some(Saw::Closed(Some(1000)))
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
    assert_eq!(client.hub().running(), 0);
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

#[tokio::test]
async fn a_via_channel_opens_at_the_address_its_closure_computes() {
    let paths = Arc::new(Mutex::new(Vec::new()));
    let record = paths.clone();
    let respond = move |_: usize, request: &Request, response: Response| {
        record.lock().unwrap().push(request.uri().to_string());
        Ok(response)
    };
    let (addr, seen) = server_with(respond, echo).await;
    let via = ChannelEndpoint::via(|variables| {
        Ok(WireCall::get("/rooms/:id")
            .variables(json!({ "id": variables["room"], "lang": variables["lang"] }))
            .header(
                http::HeaderName::from_static("x-room-key"),
                http::HeaderValue::from_static("from-the-closure"),
            ))
    })
    .send();
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group("chat", GroupDef::new().endpoint("room", via))
        .build()
        .unwrap();
    let client = Client::builder(api).ws(fast()).build().unwrap();

    let mut room = client
        .channel("chat.room", json!({ "room": "lobby", "lang": "en" }), None)
        .await
        .unwrap();
    room.send(json!({ "text": "hi" })).unwrap();
    assert_eq!(
        within("echo", room.next()).await.unwrap().unwrap(),
        json!({ "text": "hi" })
    );
    // The closure's path and its leftover variables in the query, and its header.
    assert_eq!(*paths.lock().unwrap(), ["/rooms/lobby?lang=en"]);
    assert_eq!(
        seen.headers.lock().unwrap()[0]["x-room-key"],
        "from-the-closure"
    );
}
