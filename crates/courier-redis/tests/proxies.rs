//! Two `Proxy` instances sharing one Redis, as an app behind a load balancer runs: a channel's
//! members on each, a stream following a topic; messages and events cross, each arrives once;
//! Redis stopped and started again mid-test — the gap is told (sockets closed with 1012, the
//! stream's response cut), the clients come back, traffic resumes.

use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, GroupDef, Peer, StreamEndpoint,
    StreamHandler,
};
use courier_live::Hub;
use courier_redis::RedisBus;
use courier_server::Proxy;
use courier_test_support::redis::RedisServer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// One instance: a proxy serving a chat room and a news stream, its hub on the Redis at `url`.
async fn instance(url: &str) -> (SocketAddr, Hub, RedisBus) {
    let bus = RedisBus::connect(url).await.unwrap();
    let hub = Hub::new(bus.clone());
    let chat = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(json!({ "said": message }))
    });
    let following = hub.clone();
    let news = StreamHandler::new(move |_| following.follow("news", 64));
    let api = ApiDef::builder()
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint(
                    "chat",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(chat)),
                )
                .endpoint("news", StreamEndpoint::implement(news)),
        )
        .build()
        .unwrap();
    let app = Proxy::new()
        .source("demo", api)
        .hub(hub.clone())
        .ws_path("/api/ws")
        .into_router()
        .unwrap();
    (courier_test_support::serve(app).await, hub, bus)
}

async fn chat(addr: SocketAddr) -> Socket {
    let url = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m=chat");
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(url, tcp).await.unwrap().0
}

/// The next frame that is a message or a close, within 10 s.
async fn next(socket: &mut Socket) -> Message {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a frame within 10 s")
            .expect("the socket is open")
            .expect("no error");
        if matches!(frame, Message::Text(_) | Message::Close(_)) {
            return frame;
        }
    }
}

fn said(text: &str) -> Message {
    Message::text(json!({ "said": text }).to_string())
}

async fn quiet(socket: &mut Socket) {
    let more = tokio::time::timeout(Duration::from_millis(300), socket.next()).await;
    assert!(more.is_err(), "nothing more was expected: {more:?}");
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "not within 10 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A subscriber of the news stream at `addr`, over a raw connection.
struct News(tokio::net::TcpStream, String);

impl News {
    async fn open(addr: SocketAddr) -> Self {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request =
            "GET /api/sse?_s=demo&_g=live&_m=news HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
        tcp.write_all(request.as_bytes()).await.unwrap();
        News(tcp, String::new())
    }

    /// Reads until `text` shows, publishing `publish` meanwhile (the subscription starts with
    /// the response, so a message published before may not be seen).
    async fn until(&mut self, text: &str, publish: impl Fn()) {
        let mut buf = [0u8; 4096];
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.1.contains(text) {
            assert!(
                Instant::now() < deadline,
                "no `{text}` within 10 s: {}",
                self.1
            );
            publish();
            if let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_millis(100), self.0.read(&mut buf)).await
            {
                self.1.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }
    }

    /// Reads to the end of the response.
    async fn rest(mut self) -> String {
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.0.read_to_end(&mut rest))
            .await
            .expect("the response ends within 10 s")
            .unwrap_or_default();
        self.1.push_str(&String::from_utf8_lossy(&rest));
        self.1
    }
}

#[tokio::test]
async fn two_proxies_share_channels_and_streams_through_redis_and_weather_its_restart() {
    let mut redis = RedisServer::start();
    let (a, hub_a, bus_a) = instance(&redis.url()).await;
    let (b, _hub_b, bus_b) = instance(&redis.url()).await;
    let room = format!("courier:{}", Hub::channel_topic("live.chat", "null"));

    let mut on_a = chat(a).await;
    let mut on_b = chat(b).await;
    eventually("both instances subscribed to the room", || {
        redis.subscribers(&room) == 2
    })
    .await;
    on_a.send(Message::text(r#""hi from a""#)).await.unwrap();
    assert_eq!(next(&mut on_a).await, said("hi from a"), "its own, once");
    assert_eq!(next(&mut on_b).await, said("hi from a"));
    on_b.send(Message::text(r#""hi from b""#)).await.unwrap();
    assert_eq!(next(&mut on_b).await, said("hi from b"));
    assert_eq!(next(&mut on_a).await, said("hi from b"));
    quiet(&mut on_a).await;
    quiet(&mut on_b).await;

    // A stream on b follows a topic the app publishes to on a.
    let mut news = News::open(b).await;
    news.until("courier 1.0", || {
        hub_a.publish("news", json!({ "headline": "courier 1.0" }));
    })
    .await;

    // Redis goes away and comes back.
    redis.stop();
    eventually("both buses saw Redis go", || {
        !bus_a.stats().connected && !bus_b.stats().connected
    })
    .await;
    redis.restart();
    for socket in [&mut on_a, &mut on_b] {
        match next(socket).await {
            Message::Close(Some(frame)) => {
                assert_eq!(frame.code, CloseCode::Restart, "{frame:?}");
                assert!(frame.reason.contains("may have been missed"), "{frame:?}");
            }
            other => panic!("expected the gap's close, got {other:?}"),
        }
    }
    let cut = news.rest().await;
    assert!(!cut.contains("courier.end"), "cut, not ended: {cut}");
    assert!(!cut.ends_with("0\r\n\r\n"), "cut, not ended: {cut}");

    // The clients reconnect; traffic crosses again.
    let mut on_a = chat(a).await;
    let mut on_b = chat(b).await;
    eventually("both subscribed again", || redis.subscribers(&room) == 2).await;
    on_b.send(Message::text(r#""back""#)).await.unwrap();
    assert_eq!(next(&mut on_b).await, said("back"));
    assert_eq!(next(&mut on_a).await, said("back"));
    let mut news = News::open(b).await;
    news.until("after the restart", || {
        hub_a.publish("news", json!("after the restart"));
    })
    .await;
    assert!(bus_a.stats().gaps >= 1 && bus_b.stats().gaps >= 1);
}
