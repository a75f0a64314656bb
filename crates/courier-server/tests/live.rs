//! `Proxy` over real sockets on 127.0.0.1: implemented streams over SSE, channels over
//! WebSocket (tokio-tungstenite as the subscriber), refusals, topics, limits, slow subscribers.

use courier_core::typed::{self, ChannelPeer};
use courier_core::{
    ApiDef, BoxError, ChannelEndpoint, ChannelHandler, ChannelHandlers, Event, GroupDef, Peer,
    StreamEndpoint, StreamHandler, StreamRequest,
};
use courier_live::{Hub, LocalBus, TopicBus};
use courier_server::Proxy;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

mod support;

struct Served {
    addr: SocketAddr,
    /// The source's hub, which the proxy's client for it was given.
    hub: Hub,
    /// The bus under the source's hub.
    bus: LocalBus,
    starts: Arc<AtomicUsize>,
    /// What the `room` channel's handlers saw, in order.
    log: tokio::sync::mpsc::UnboundedReceiver<String>,
}

/// A `room` subscriber's variables.
#[derive(serde::Deserialize)]
struct Who {
    room: String,
    user: String,
}

/// A typed two-way channel sharing a topic by room: `on_join` welcomes the subscriber alone
/// (and refuses "mallory"), "whoami" is answered to the sender alone, anything else is
/// published to the room; every handler call is logged.
fn room(log: tokio::sync::mpsc::UnboundedSender<String>) -> ChannelEndpoint {
    let (joins, leaves) = (log.clone(), log.clone());
    let handlers =
        typed::ChannelHandlers::on_message(move |peer: ChannelPeer<Value, Who>, message: Value| {
            let _ = log.send(format!("message {} {message}", peer.variables().user));
            async move {
                let user = &peer.variables().user;
                if message == "whoami" {
                    peer.send(&json!({ "you": user }))
                } else {
                    peer.publish(&json!({ "from": user, "said": message }))
                }
            }
        })
        .on_join(move |peer: ChannelPeer<Value, Who>| {
            let user = peer.variables().user.clone();
            let refused = user == "mallory";
            if !refused {
                let _ = joins.send(format!("join {user}"));
            }
            async move {
                if refused {
                    return Err::<(), BoxError>("mallory is not welcome".into());
                }
                peer.send(&json!({ "welcome": user }))
            }
        })
        .on_leave(move |peer: ChannelPeer<Value, Who>| {
            let _ = leaves.send(format!("leave {}", peer.variables().user));
            async { Ok(()) }
        });
    typed::channel()
        .implement_handlers(handlers)
        .topic(|who: &Who| who.room.clone())
        .into_def()
}

async fn serve() -> Served {
    let bus = LocalBus::new();
    let hub = Hub::new(bus.clone());
    let following = hub.clone();
    let news = StreamHandler::new(move |_| following.follow("news", 16));
    let starts = Arc::new(AtomicUsize::new(0));
    let counted = starts.clone();
    let ticks = StreamHandler::new(|request: StreamRequest| {
        let from = request
            .last_event_id
            .and_then(|id| id.parse::<u64>().ok())
            .map_or(1, |id| id + 1);
        futures_util::stream::iter(
            (from..=3).map(|n| Ok(Event::new(json!({ "n": n })).id(n.to_string()))),
        )
    });
    let failing = StreamHandler::new(|_| {
        futures_util::stream::iter([
            Ok(Event::new(json!(1))),
            Err::<Event<Value>, BoxError>("the feed is gone".into()),
        ])
    });
    let quiet = StreamHandler::new(|_| futures_util::stream::pending());
    let feed = ChannelHandler::push(move |request| {
        counted.fetch_add(1, Ordering::SeqCst);
        let topic = request.topic;
        futures_util::stream::iter(0..).then(move |n| {
            let topic = topic.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok::<_, BoxError>(json!({ "topic": topic, "n": n }))
            }
        })
    });
    let flood = ChannelHandler::push(|_| {
        futures_util::stream::iter(0u64..).then(|n| async move {
            // One message per turn of the scheduler: a subscriber that reads keeps up.
            tokio::task::yield_now().await;
            Ok::<_, BoxError>(json!({ "n": n, "pad": "x".repeat(4000) }))
        })
    });
    let (log_tx, log) = tokio::sync::mpsc::unbounded_channel();
    let chat = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(json!({ "said": message }))
    });
    let group = GroupDef::new()
        .expose(true)
        .endpoint("ticks", StreamEndpoint::implement(ticks))
        .endpoint("failing", StreamEndpoint::implement(failing))
        .endpoint("quiet", StreamEndpoint::implement(quiet))
        .endpoint("news", StreamEndpoint::implement(news))
        .endpoint("remote", StreamEndpoint::get("/elsewhere"))
        .endpoint(
            "feed",
            ChannelEndpoint::implement(feed).topic_variables(["room"]),
        )
        .endpoint("flood", ChannelEndpoint::implement(flood))
        .endpoint(
            "chat",
            ChannelEndpoint::implement(ChannelHandler::Duplex(chat)),
        )
        .endpoint("room", room(log_tx));
    // The remote stream's upstream is a closed port: nothing answers there.
    let nowhere = courier_test_support::tls::closed_port().await;
    let api = ApiDef::builder()
        .base_url(format!("http://{nowhere}"))
        .group("live", group)
        .group(
            "hidden",
            GroupDef::new().endpoint(
                "ticks",
                StreamEndpoint::implement(StreamHandler::new(|_| futures_util::stream::empty())),
            ),
        )
        .build()
        .unwrap();
    let client = courier_client::Client::builder(api)
        .hub(hub.clone())
        .build()
        .unwrap();
    let app = Proxy::new()
        .source_client("demo", client)
        .ws_path("/api/ws")
        .keep_alive(Duration::from_millis(100))
        .buffer(16)
        .max_message_size(256)
        .into_router()
        .expect("the proxy builds");
    let addr = courier_test_support::serve(app).await;
    Served {
        addr,
        hub,
        bus,
        starts,
        log,
    }
}

/// A raw HTTP/1.1 GET; reads until `until` shows up in the response (or 10 s pass).
async fn raw_get(addr: SocketAddr, target: &str, extra: &str, until: &str) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: x\r\n{extra}connection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            let n = tcp.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains(until) {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the response within 10 s");
    String::from_utf8_lossy(&seen).into_owned()
}

fn query(group: &str, name: &str, variables: &Value) -> String {
    let v: String = variables
        .to_string()
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("_s=demo&_g={group}&_m={name}&_v={v}")
}

#[tokio::test]
async fn a_stream_serves_its_events_and_resumes_after_the_last_id() {
    let served = serve().await;
    let target = format!("/api/sse?{}", query("live", "ticks", &Value::Null));
    let whole = raw_get(served.addr, &target, "", "id: 3").await;
    assert!(whole.contains("content-type: text/event-stream"), "{whole}");
    for n in 1..=3 {
        assert!(
            whole.contains(&format!("data: {{\"n\":{n}}}\nid: {n}\n")),
            "{whole}"
        );
    }
    let resumed = raw_get(served.addr, &target, "last-event-id: 2\r\n", "id: 3").await;
    assert!(!resumed.contains("\"n\":1"), "{resumed}");
    assert!(!resumed.contains("\"n\":2"), "{resumed}");
    assert!(resumed.contains("data: {\"n\":3}"), "{resumed}");
}

#[tokio::test]
async fn a_failing_stream_ends_with_an_error_frame_and_idle_ones_keep_alive() {
    let served = serve().await;
    let target = format!("/api/sse?{}", query("live", "failing", &Value::Null));
    let whole = raw_get(served.addr, &target, "", "gone").await;
    assert!(
        whole.contains("event: error\ndata: {\"error\":{\"code\":\"STREAM_FAILED\",\"message\":\"the feed is gone\"}}"),
        "{whole}"
    );
    let target = format!("/api/sse?{}", query("live", "quiet", &Value::Null));
    let idle = raw_get(served.addr, &target, "", ": keep-alive").await;
    assert!(idle.contains(": keep-alive\n\n"), "{idle}");
}

#[tokio::test]
async fn a_finite_stream_ends_with_the_end_event_and_a_followed_topics_loss_cuts_the_response() {
    let served = serve().await;
    let target = format!("/api/sse?{}", query("live", "ticks", &Value::Null));
    let whole = raw_get(served.addr, &target, "", "0\r\n\r\n").await;
    assert!(
        whole.contains("event: courier.end\ndata: {}\n\n"),
        "a finite stream says it is over: {whole}"
    );

    // A stream following a topic: what is published reaches it; then the bus loses messages.
    let target = format!("/api/sse?{}", query("live", "news", &Value::Null));
    let mut tcp = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        // The subscription starts with the response: publish until the event shows.
        while !String::from_utf8_lossy(&seen).contains("headline") {
            served
                .hub
                .publish("news", json!({ "headline": "courier 1.0" }));
            if let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_millis(50), tcp.read(&mut buf)).await
            {
                seen.extend_from_slice(&buf[..n]);
            }
        }
        served.bus.publish(
            "news",
            courier_live::Outbound::Close {
                code: courier_live::MISSED,
                reason: "the bus reconnected".to_owned(),
            },
        );
        loop {
            let n = tcp.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the response within 10 s");
    let whole = String::from_utf8_lossy(&seen);
    assert!(
        whole.contains(r#"data: {"headline":"courier 1.0"}"#),
        "{whole}"
    );
    // Cut short: no end event, no error frame, no last chunk — the client reconnects.
    assert!(!whole.contains("courier.end"), "{whole}");
    assert!(!whole.contains("event: error"), "{whole}");
    assert!(!whole.ends_with("0\r\n\r\n"), "{whole}");
}

#[tokio::test]
async fn refusals_are_json_with_a_code() {
    let served = serve().await;
    let cases = [
        (
            query("hidden", "ticks", &Value::Null),
            "404",
            "ENDPOINT_NOT_IN_ROUTES",
        ),
        (
            query("live", "nope", &Value::Null),
            "404",
            "ENDPOINT_NOT_IN_ROUTES",
        ),
        // A remote stream is proxied: this one's upstream does not answer.
        (
            query("live", "remote", &Value::Null),
            "502",
            "UPSTREAM_UNREACHABLE",
        ),
        (
            "_s=demo&_g=live&_m=ticks&_v=%7Bnot".to_owned(),
            "400",
            "BAD_REQUEST",
        ),
        ("_g=live&_m=ticks".to_owned(), "400", "BAD_REQUEST"),
        ("_s=demo&_m=ticks".to_owned(), "400", "BAD_REQUEST"),
        ("_s=demo&_g=live.&_m=ticks".to_owned(), "400", "BAD_REQUEST"),
    ];
    for (q, status, code) in cases {
        let whole = raw_get(served.addr, &format!("/api/sse?{q}"), "", "}}").await;
        assert!(
            whole.starts_with(&format!("HTTP/1.1 {status}")),
            "{q}: {whole}"
        );
        assert!(
            whole.contains(&format!("{{\"error\":{{\"code\":\"{code}\"")),
            "{q}: {whole}"
        );
    }
}

use support::{close_of, next_json, Socket as Client};

async fn socket(addr: SocketAddr, name: &str, variables: Value) -> Client {
    let url = format!("ws://{addr}/api/ws?{}", query("live", name, &variables));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(url, tcp).await.unwrap().0
}

#[tokio::test]
async fn topics_are_isolated_and_a_push_handler_runs_once_per_topic() {
    let served = serve().await;
    let mut a1 = socket(served.addr, "feed", json!({ "room": "a", "user": 1 })).await;
    let mut a2 = socket(served.addr, "feed", json!({ "room": "a", "user": 2 })).await;
    let mut b = socket(served.addr, "feed", json!({ "room": "b", "user": 3 })).await;
    for _ in 0..20 {
        assert_eq!(next_json(&mut a1).await["topic"], "{\"room\":\"a\"}");
        assert_eq!(next_json(&mut a2).await["topic"], "{\"room\":\"a\"}");
        assert_eq!(next_json(&mut b).await["topic"], "{\"room\":\"b\"}");
    }
    assert_eq!(served.starts.load(Ordering::SeqCst), 2);
    assert_eq!(served.hub.running(), 2);
}

#[tokio::test]
async fn a_two_way_channel_publishes_and_skips_the_hello() {
    let served = serve().await;
    let mut ada = socket(served.addr, "chat", json!("lobby")).await;
    let mut bob = socket(served.addr, "chat", json!("lobby")).await;
    ada.send(Message::text(
        r#"{"type":"courier.hello","auth":{"token":"t"}}"#,
    ))
    .await
    .unwrap();
    ada.send(Message::text(r#""hi""#)).await.unwrap();
    assert_eq!(next_json(&mut bob).await, json!({ "said": "hi" }));
    assert_eq!(next_json(&mut ada).await, json!({ "said": "hi" }));

    // Not JSON: 1003. Over the size limit: 1009. A message on a push-only channel: 1008.
    bob.send(Message::text("{oops")).await.unwrap();
    assert_eq!(close_of(&mut bob).await.0, 1003);
    ada.send(Message::text(format!("\"{}\"", "x".repeat(300))))
        .await
        .unwrap();
    assert_eq!(close_of(&mut ada).await.0, 1009);
    let mut feed = socket(served.addr, "feed", json!({ "room": "c" })).await;
    feed.send(Message::text("1")).await.unwrap();
    assert_eq!(
        close_of(&mut feed).await,
        (1008, "this channel takes no messages".to_owned())
    );
}

#[tokio::test]
async fn a_heartbeat_is_answered_by_the_proxy_and_reaches_no_handler() {
    let served = serve().await;
    let mut ada = socket(served.addr, "chat", json!("lobby")).await;
    let mut bob = socket(served.addr, "chat", json!("lobby")).await;
    ada.send(Message::text(r#"{"type":"courier.ping"}"#))
        .await
        .unwrap();
    assert_eq!(next_json(&mut ada).await, json!({ "type": "courier.pong" }));
    // The ping was no message: bob's next message is ada's first real one.
    ada.send(Message::text(r#""hi""#)).await.unwrap();
    assert_eq!(next_json(&mut bob).await, json!({ "said": "hi" }));
    // A push-only channel takes no messages, but answers heartbeats.
    let mut feed = socket(served.addr, "feed", json!({ "room": "p" })).await;
    feed.send(Message::text(r#"{"type":"courier.ping"}"#))
        .await
        .unwrap();
    let pong = loop {
        let message = next_json(&mut feed).await;
        if message.get("type").is_some() {
            break message;
        }
    };
    assert_eq!(pong, json!({ "type": "courier.pong" }));
}

#[tokio::test]
async fn a_slow_subscriber_is_closed_with_1013_and_a_fast_one_goes_on() {
    let served = serve().await;
    let mut fast = socket(served.addr, "flood", Value::Null).await;
    let mut slow = socket(served.addr, "flood", Value::Null).await;
    // The fast one reads along the whole time; the slow one reads nothing until it is closed
    // (its socket's buffers fill, then it falls 16 messages behind).
    let read = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = read.clone();
    let reading = tokio::spawn(async move {
        loop {
            let n = next_json(&mut fast).await["n"].as_u64().unwrap();
            counter.store(n, Ordering::SeqCst);
        }
    });
    // 5,000 messages of 4 KB: more than the socket buffers between server and slow client hold.
    tokio::time::timeout(Duration::from_secs(60), async {
        while read.load(Ordering::SeqCst) < 5_000 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the fast subscriber reads 5,000 messages");
    let (code, reason) = close_of(&mut slow).await;
    assert_eq!(code, 1013);
    assert!(reason.contains("more than 16 messages"), "{reason}");
    // The server let go of the slow subscriber before it sent the close: only the fast one
    // holds the topic, so nothing piles up for a reader that does not read.
    assert_eq!((served.bus.topics(), served.bus.subscribers()), (1, 1));
    let at_close = read.load(Ordering::SeqCst);
    tokio::time::timeout(Duration::from_secs(10), async {
        while read.load(Ordering::SeqCst) < at_close + 100 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the fast subscriber goes on");
    assert!(!reading.is_finished());
    assert_eq!(served.hub.running(), 1);
    reading.abort();
}

async fn next_log(served: &mut Served) -> String {
    tokio::time::timeout(Duration::from_secs(10), served.log.recv())
        .await
        .expect("a handler ran within 10 s")
        .expect("the log is open")
}

#[tokio::test]
async fn a_two_way_channel_runs_its_handlers_and_tells_send_from_publish() {
    let mut served = serve().await;
    let who = |room: &str, user: &str| json!({ "room": room, "user": user });
    let mut ada = socket(served.addr, "room", who("a", "ada")).await;
    assert_eq!(next_json(&mut ada).await, json!({ "welcome": "ada" }));
    let mut bob = socket(served.addr, "room", who("a", "bob")).await;
    assert_eq!(next_json(&mut bob).await, json!({ "welcome": "bob" }));
    let mut cy = socket(served.addr, "room", who("b", "cy")).await;
    assert_eq!(next_json(&mut cy).await, json!({ "welcome": "cy" }));

    // Published: the whole room, the sender included.
    ada.send(Message::text(r#""hi""#)).await.unwrap();
    let said = json!({ "from": "ada", "said": "hi" });
    assert_eq!(next_json(&mut bob).await, said);
    assert_eq!(next_json(&mut ada).await, said);
    // Sent: the sender alone. Room b saw nothing of room a: its next message is its own answer.
    cy.send(Message::text(r#""whoami""#)).await.unwrap();
    assert_eq!(next_json(&mut cy).await, json!({ "you": "cy" }));
    bob.send(Message::text(r#""whoami""#)).await.unwrap();
    assert_eq!(next_json(&mut bob).await, json!({ "you": "bob" }));
    ada.send(Message::text(r#""bye""#)).await.unwrap();
    assert_eq!(
        next_json(&mut ada).await,
        json!({ "from": "ada", "said": "bye" })
    );
    assert_eq!(
        next_json(&mut bob).await,
        json!({ "from": "ada", "said": "bye" })
    );

    // The client closes: on_leave runs once, for that subscriber.
    ada.close(None).await.unwrap();
    let mut log = Vec::new();
    for _ in 0..8 {
        log.push(next_log(&mut served).await);
    }
    assert_eq!(
        log,
        [
            "join ada",
            "join bob",
            "join cy",
            "message ada \"hi\"",
            "message cy \"whoami\"",
            "message bob \"whoami\"",
            "message ada \"bye\"",
            "leave ada",
        ]
    );

    // on_join refusing, and variables that do not parse as the channel's type: 1008 and why.
    let mut mallory = socket(served.addr, "room", who("a", "mallory")).await;
    let (code, reason) = close_of(&mut mallory).await;
    assert_eq!(code, 1008);
    assert!(reason.contains("mallory is not welcome"), "{reason}");
    let mut bad = socket(served.addr, "room", json!({ "room": 5 })).await;
    let (code, reason) = close_of(&mut bad).await;
    assert_eq!(code, 1008);
    assert!(reason.contains("invalid type"), "{reason}");
    // Neither joined, so neither leaves; bob still holds room a and cy room b.
    drop((bob, cy));
    let mut leaves = vec![next_log(&mut served).await, next_log(&mut served).await];
    leaves.sort();
    assert_eq!(leaves, ["leave bob", "leave cy"]);
    assert!(served.log.try_recv().is_err(), "nothing else ran");
}
