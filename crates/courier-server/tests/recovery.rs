//! Recovery over real sockets on 127.0.0.1: a proxy whose hub keeps a history writes positions
//! to a subscriber that keeps them (its hello's `since`), hands a member that comes back with
//! its position what it missed, in order, once, and closes with 1012 one whose position is
//! gone; a followed stream resumes from `Last-Event-ID` and tells a gap with `courier.gap`.
//! A subscriber that keeps no positions is written messages as it always was.

use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, GroupDef, Peer, StreamEndpoint,
    StreamHandler, StreamRequest,
};
use courier_live::{History, Hub, LocalBus, TopicBus};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

mod support;

use support::{close_of, next_json, Socket};

/// A proxy whose hub keeps `count` messages a topic: the channel `live.chat` publishes what a
/// member says to its room; the stream `live.news` follows the topic `news`.
async fn serve(count: usize) -> (SocketAddr, Hub) {
    let hub = Hub::new(LocalBus::with_history(History::new(
        count,
        Duration::from_secs(60),
    )));
    let following = hub.clone();
    let news = StreamHandler::new(move |request: StreamRequest| {
        following.follow_from("news", request.last_event_id.as_deref(), 256)
    });
    let chat = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(message)
    })
    .on_join(courier_core::PeerHandler::new(
        |peer: Arc<dyn Peer>| async move {
            // A subscriber's own message, which no history keeps.
            peer.send(json!("welcome"))
        },
    ));
    let group = GroupDef::new()
        .expose(true)
        .endpoint("news", StreamEndpoint::implement(news))
        .endpoint(
            "chat",
            ChannelEndpoint::implement(ChannelHandler::Duplex(chat)),
        );
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9")
        .group("live", group)
        .build()
        .unwrap();
    (support::serve_on(api, &hub).await, hub)
}

/// Joins the room with a hello carrying `since` (`None`: no hello, no positions).
async fn join(addr: SocketAddr, since: Option<Value>) -> Socket {
    let hello = if since.is_some() { "&_h=1" } else { "" };
    let url = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m=chat&_v=%22lobby%22{hello}");
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut ws = tokio_tungstenite::client_async(url, tcp).await.unwrap().0;
    if let Some(since) = since {
        let frame = json!({ "type": "courier.hello", "since": since }).to_string();
        ws.send(Message::text(frame)).await.unwrap();
    }
    ws
}

#[tokio::test]
async fn a_member_that_comes_back_with_its_position_gets_every_message_it_missed() {
    let (addr, _hub) = serve(1_000).await;
    let mut ada = join(addr, Some(Value::Null)).await;
    let at = next_json(&mut ada).await;
    assert_eq!(at["type"], "courier.at", "{at}");
    assert!(at["at"].as_str().unwrap().ends_with(":0"), "{at}");
    // A subscriber's own message comes plain: it has no position.
    assert_eq!(next_json(&mut ada).await, json!("welcome"));

    let mut bob = join(addr, None).await;
    assert_eq!(next_json(&mut bob).await, json!("welcome"));
    bob.send(Message::text(r#""first""#)).await.unwrap();
    let first = next_json(&mut ada).await;
    assert_eq!(first["type"], "courier.message");
    assert_eq!(first["data"], "first");
    let mut last = first["at"].as_str().unwrap().to_owned();
    // bob keeps no positions: he is written the message as it is.
    assert_eq!(next_json(&mut bob).await, json!("first"));

    // ada drops; 200 messages are said while she is away.
    drop(ada);
    for n in 0..200 {
        bob.send(Message::text(n.to_string())).await.unwrap();
    }
    for n in 0..200 {
        assert_eq!(next_json(&mut bob).await, json!(n));
    }
    let mut ada = join(addr, Some(json!(last))).await;
    assert_eq!(
        next_json(&mut ada).await,
        json!({ "type": "courier.at", "at": last })
    );
    // `on_join` runs again, and what it sends the subscriber alone comes first.
    assert_eq!(next_json(&mut ada).await, json!("welcome"));
    for n in 0..200 {
        let message = next_json(&mut ada).await;
        assert_eq!(message["data"], json!(n), "{message}");
        last = message["at"].as_str().unwrap().to_owned();
    }
    // Then live, once: nothing recovered comes again.
    bob.send(Message::text(r#""live""#)).await.unwrap();
    let live = next_json(&mut ada).await;
    assert_eq!(live["data"], "live", "{live}");
    let offset = |at: &str| at.rsplit_once(':').unwrap().1.parse::<u64>().unwrap();
    assert_eq!(offset(live["at"].as_str().unwrap()), offset(&last) + 1);
}

#[tokio::test]
async fn a_position_that_cannot_be_honoured_closes_with_1012_before_on_join() {
    let (addr, _hub) = serve(3).await;
    let mut ada = join(addr, Some(Value::Null)).await;
    let at = next_json(&mut ada).await["at"].as_str().unwrap().to_owned();
    let epoch = at.rsplit_once(':').unwrap().0.to_owned();
    let mut bob = join(addr, None).await;
    for n in 0..10 {
        bob.send(Message::text(n.to_string())).await.unwrap();
    }
    for _ in 0..11 {
        next_json(&mut bob).await;
    }
    for since in [
        json!(format!("{epoch}:1")),
        json!("another:3"),
        json!(format!("{epoch}:99")),
        json!("not a position"),
        json!({ "offset": 1 }),
    ] {
        let mut back = join(addr, Some(since.clone())).await;
        let (code, reason) = close_of(&mut back).await;
        assert_eq!(code, 1012, "{since}: {reason}");
        assert!(
            reason.starts_with("messages were missed: "),
            "{since}: {reason}"
        );
    }
    // The history holds 8, 9 and 10: from 7, all of it.
    let mut back = join(addr, Some(json!(format!("{epoch}:7")))).await;
    assert_eq!(next_json(&mut back).await["type"], "courier.at");
    assert_eq!(next_json(&mut back).await, json!("welcome"));
    for n in 7..10 {
        assert_eq!(next_json(&mut back).await["data"], json!(n));
    }
}

/// A raw GET of the `news` stream, with `last-event-id` when given; reads until `until`.
async fn news(addr: SocketAddr, last_event_id: Option<&str>, until: &str) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let resume = last_event_id.map_or(String::new(), |id| format!("last-event-id: {id}\r\n"));
    let request = format!(
        "GET /api/sse?_s=demo&_g=live&_m=news&_v=null HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n{resume}connection: close\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        while !String::from_utf8_lossy(&seen).contains(until) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "ended before {until:?}: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("within 10 s");
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn a_followed_stream_resumes_from_its_last_event_id_and_tells_a_gap() {
    let (addr, hub) = serve(3).await;
    hub.publish("news", json!("one"));
    hub.publish("news", json!("two"));
    let epoch = {
        let mut events = hub.follow("news", 4);
        hub.publish("news", json!("three"));
        let event = events.next().await.unwrap().unwrap();
        event.id.unwrap().rsplit_once(':').unwrap().0.to_owned()
    };
    // Back from 1: two and three, each with its id.
    let resumed = news(addr, Some(&format!("{epoch}:1")), "three").await;
    assert!(
        resumed.contains(&format!("data: \"two\"\nid: {epoch}:2\n")),
        "{resumed}"
    );
    assert!(
        resumed.contains(&format!("data: \"three\"\nid: {epoch}:3\n")),
        "{resumed}"
    );
    assert!(!resumed.contains("\"one\""), "{resumed}");
    // From a position the history (3 messages) no longer holds: the gap first, then live.
    for n in 4..=8 {
        hub.publish("news", json!(n));
    }
    let gap = news(addr, Some(&format!("{epoch}:1")), "courier.gap").await;
    assert!(gap.contains("event: courier.gap"), "{gap}");
    assert!(gap.contains(&format!("id: {epoch}:8")), "{gap}");
    assert!(gap.contains("messages were missed"), "{gap}");
}

// ---- Rust's proxy caller keeps its channel's position ---------------------------------------

#[derive(courier::Group)]
struct Chat {
    room: courier::typed::Channel<Value, String, Value>,
}

#[derive(courier::Api)]
struct Demo {
    chat: courier::typed::Group<Chat>,
}

#[tokio::test]
async fn a_proxy_callers_channel_comes_back_with_its_position_and_misses_nothing() {
    use courier::typed::{self, ChannelPeer};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let bus = LocalBus::with_history(History::new(100, Duration::from_secs(60)));
    let hub = Hub::new(bus.clone());
    let joins = Arc::new(AtomicUsize::new(0));
    let joined = joins.clone();
    let handlers = typed::ChannelHandlers::on_message(
        |peer: ChannelPeer<Value, String>, message: Value| async move { peer.publish(&message) },
    )
    .on_join(move |_peer: ChannelPeer<Value, String>| {
        joined.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    });
    let chat = typed::Group::new(Chat {
        room: typed::channel().implement_handlers(handlers),
    })
    .expose(true);
    let api = ApiDef::builder()
        .base_url("http://127.0.0.1:9")
        .build_typed(Demo { chat })
        .unwrap();
    let routes = courier::routes::Routes::from_api("demo", api.def());
    let addr = support::serve_on(api.def().clone(), &hub).await;
    let caller = courier::ProxyCaller::<Demo>::routes(format!("http://{addr}"), routes)
        .proxy_path(courier::config::ProxyPaths {
            ws: Some("/api/ws".into()),
            ..Default::default()
        })
        .build()
        .unwrap();
    let mut room = caller.chat().room("lobby".to_owned()).await.unwrap();
    room.send(json!("one")).unwrap();
    assert_eq!(next(&mut room).await, json!("one"));

    // The server drops every member of the room (1011: they reconnect), and five messages are
    // published before the caller is back.
    let topic = Hub::channel_topic("chat.room", "\"lobby\"");
    bus.publish(
        &topic,
        courier_live::Outbound::Close {
            code: 1011,
            reason: "dropped for the test".to_owned(),
        },
    );
    for n in 0..5 {
        hub.publish(&topic, json!(n));
    }
    for n in 0..5 {
        assert_eq!(next(&mut room).await, json!(n));
    }
    room.send(json!("after")).unwrap();
    assert_eq!(next(&mut room).await, json!("after"), "each message once");
    assert_eq!(joins.load(Ordering::SeqCst), 2, "it joined again");
}

/// The next message of a proxy caller's channel, within 10 s.
async fn next(room: &mut courier::live::ws::Connection<Value, Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(10), room.next())
        .await
        .expect("within 10 s")
        .expect("open")
        .expect("a message")
}
