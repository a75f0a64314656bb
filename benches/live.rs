//! What this measures: streams and channels served by `courier::server::Proxy` on 127.0.0.1.
//!
//! - `sse_fanout/1000`: one topic fanned out over SSE to 1,000 subscribers. An implemented
//!   stream whose handler follows a `tokio::sync::broadcast` channel (the topic) is served by
//!   `Proxy`; 1,000 subscriptions made with courier's stream client read it, each counting the
//!   events it receives. One iteration publishes 10 events and waits until every subscriber has
//!   all 10: 10,000 events delivered. Criterion's throughput is in delivered events.
//! - `ws_echo/courier`: round trips through a served channel whose `on_message` sends each
//!   message straight back to its sender (`Peer::send`), one after another on one socket.
//!   `ws_echo/tungstenite`: the same round trips against a bare tokio-tungstenite echo server.
//!   The client is the same tokio-tungstenite socket in both, sending a 32-byte JSON text frame
//!   and waiting for its echo.
//!
//! The servers run on a multi-thread tokio runtime of their own (one worker), the clients on
//! the benchmark's thread (a current-thread runtime), as in `benches/client.rs`.
//!
//! Run: `cargo bench --bench live`

use courier::live::{ChannelHandler, ChannelHandlers, Event, Peer, StreamHandler};
use courier::server::Proxy;
use courier::{ApiDef, ChannelEndpoint, Client, GroupDef, StreamEndpoint};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::sync::{broadcast, Notify};
use tokio_tungstenite::tungstenite::Message;

const SUBSCRIBERS: usize = 1_000;
const EVENTS_PER_ITERATION: u64 = 10;

fn server_runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("the server runtime")
}

fn client_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the client runtime")
}

/// Serves `app` on 127.0.0.1 from `runtime`.
fn serve(runtime: &Runtime, app: axum::Router) -> SocketAddr {
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    })
}

fn live_api(topic: broadcast::Sender<u64>) -> ApiDef {
    let feed = StreamHandler::new(move |_| {
        let receiver = topic.subscribe();
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            let n = receiver.recv().await.ok()?;
            Some((Ok(Event::new(json!({ "n": n }))), receiver))
        })
    });
    let echo = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.send(message)
    });
    ApiDef::builder()
        .group(
            "bench",
            GroupDef::new()
                .expose(true)
                .endpoint("feed", StreamEndpoint::implement(feed))
                .endpoint(
                    "echo",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(echo)),
                ),
        )
        .build()
        .expect("a valid definition")
}

fn sse_fanout(c: &mut Criterion) {
    let server = server_runtime();
    let (topic, _) = broadcast::channel::<u64>(1024);
    let app = Proxy::new()
        .source("bench", live_api(topic.clone()))
        .buffer(1024)
        .into_router()
        .expect("the proxy builds");
    let addr = serve(&server, app);
    let clients = client_runtime();
    let reader = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group(
            "bench",
            GroupDef::new().endpoint("feed", StreamEndpoint::get("/api/sse")),
        )
        .build()
        .expect("a valid definition");
    let client = Client::new(reader).expect("a client");
    let delivered = Arc::new(AtomicU64::new(0));
    let arrived = Arc::new(Notify::new());
    clients.block_on(async {
        for _ in 0..SUBSCRIBERS {
            let address = json!({ "_s": "bench", "_g": "bench", "_m": "feed" });
            let mut events = client
                .stream("bench.feed", address, None)
                .await
                .expect("a subscription");
            let delivered = delivered.clone();
            let arrived = arrived.clone();
            tokio::spawn(async move {
                while let Some(event) = events.next().await {
                    event.expect("an event");
                    delivered.fetch_add(1, Ordering::Relaxed);
                    arrived.notify_one();
                }
            });
        }
        // Every subscription has reached the handler once the topic counts them all.
        while topic.receiver_count() < SUBSCRIBERS {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });

    let mut group = c.benchmark_group("sse_fanout");
    group.throughput(Throughput::Elements(
        EVENTS_PER_ITERATION * SUBSCRIBERS as u64,
    ));
    group.sample_size(20);
    group.bench_function("1000", |b| {
        b.iter_custom(|iterations| {
            clients.block_on(async {
                let start = Instant::now();
                for _ in 0..iterations {
                    let target = delivered.load(Ordering::Relaxed)
                        + EVENTS_PER_ITERATION * SUBSCRIBERS as u64;
                    for n in 0..EVENTS_PER_ITERATION {
                        topic.send(n).expect("subscribers");
                    }
                    while delivered.load(Ordering::Relaxed) < target {
                        arrived.notified().await;
                    }
                }
                start.elapsed()
            })
        });
    });
    group.finish();
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn connect(addr: SocketAddr, target: &str) -> Socket {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    tokio_tungstenite::client_async(format!("ws://{addr}{target}"), tcp)
        .await
        .expect("a WebSocket")
        .0
}

async fn round_trips(socket: &mut Socket, n: u64) -> Duration {
    let message = r#"{"text":"0123456789abcdef0123"}"#;
    let start = Instant::now();
    for _ in 0..n {
        socket.send(Message::text(message)).await.unwrap();
        loop {
            match socket.next().await.expect("open").expect("a frame") {
                Message::Text(text) => {
                    assert_eq!(text.as_str(), message);
                    break;
                }
                _ => continue,
            }
        }
    }
    start.elapsed()
}

fn ws_echo(c: &mut Criterion) {
    let server = server_runtime();
    let (topic, _) = broadcast::channel::<u64>(16);
    let courier_addr = serve(
        &server,
        Proxy::new()
            .source("bench", live_api(topic))
            .ws_path("/api/ws")
            .into_router()
            .expect("the proxy builds"),
    );
    let bare_addr = server.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                tcp.set_nodelay(true).unwrap();
                tokio::spawn(async move {
                    let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
                    while let Some(Ok(message)) = ws.next().await {
                        if message.is_text() && ws.send(message).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    });
    let clients = client_runtime();
    let mut courier_socket =
        clients.block_on(connect(courier_addr, "/api/ws?_s=bench&_g=bench&_m=echo"));
    let mut bare_socket = clients.block_on(connect(bare_addr, "/"));

    let mut group = c.benchmark_group("ws_echo");
    group.throughput(Throughput::Elements(1));
    group.bench_function("courier", |b| {
        b.iter_custom(|n| clients.block_on(round_trips(&mut courier_socket, n)));
    });
    group.bench_function("tungstenite", |b| {
        b.iter_custom(|n| clients.block_on(round_trips(&mut bare_socket, n)));
    });
    group.finish();
}

criterion_group!(benches, sse_fanout, ws_echo);
criterion_main!(benches);
