//! Streams and channels under load, each beside its anchor in one run:
//!
//! - **fanout**: one topic over SSE to 10,000 subscribers. courier: `Proxy` serving a stream
//!   whose handler follows the topic (`Hub::follow`); the anchor: a bare axum `Sse` over a tokio
//!   `broadcast` channel (with `LIVE_LOAD_HISTORY`, courier's bus keeps a history, and each
//!   event carries its position as its id). Each server runs alone in a child process (this binary, started again
//!   with `--serve`, on a one-worker runtime; both with a keep-alive comment while idle, which
//!   a real server needs), whose resident memory is read before and after
//!   the subscribers connect (memory per subscriber). The subscribers are raw connections in
//!   this process (a one-worker runtime), counting events. A round publishes 100 events (the
//!   server publishes them on being asked) and ends when every subscriber has all 100: events
//!   delivered per second. Three rounds.
//! - **echo**: WebSocket round trips through a served channel whose `on_message` sends each
//!   message back (`Peer::send`), against a bare tokio-tungstenite echo server; 64 connections,
//!   each sending a 32-byte JSON text frame and waiting for its echo, for 10 s; each server in a
//!   child process on one worker, the clients here on one worker. The anchor runs twice: with
//!   tungstenite's defaults, and with the 8 KiB read buffer courier's proxy sets, so that what
//!   courier adds shows apart from what its setting saves. courier runs three ways: `Peer::send`
//!   (one topic for all, nothing recorded), `Peer::publish` to each connection's own topic, and
//!   the same on a bus with a history, to clients that keep positions (each message recorded
//!   and written with its position).
//! - **redis**: a message's extra latency across two instances through Redis: two buses
//!   (`RedisBus`) on one `redis-server` started for the run, a member on each; 5,000 messages,
//!   one at a time, published on one instance and timed until the member on the other has it,
//!   beside the same publish timed to the member on the publishing instance; on pub/sub, then
//!   with a history (Streams), where a message reaches even its own instance through Redis.
//!
//! Run: `cargo bench --bench live_load` (environment: `LIVE_LOAD`, the sections to run, comma
//! separated, default all; `LIVE_LOAD_SUBSCRIBERS`, default 10000; `LIVE_LOAD_ROUNDS`, the
//! fan-out's rounds, default 3; `LIVE_LOAD_SECONDS`, the echo load's length, default 10; `LIVE_LOAD_HISTORY`, a history of
//! that many messages a topic on the fan-out's bus, default none). The fan-out needs as many open files as subscribers plus some:
//! `ulimit -n` of 20,000 or more.

use axum::extract::Path;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::routing::get;
use axum::Router;
use courier::live::{
    ChannelHandler, ChannelHandlers, History, Hub, JoinOptions, LocalBus, Member, Outbound, Peer,
    StreamHandler,
};
use courier::server::Proxy;
use courier::{ApiDef, ChannelEndpoint, GroupDef, StreamEndpoint};
use courier_redis::RedisBus;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{broadcast, Notify};
use tokio_tungstenite::tungstenite::Message;

fn one_worker() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

// ---- the servers, each in a child process -------------------------------------------------

/// Publishes `n` events to a topic, as fast as its subscribers' buffers allow.
type Publish = Arc<dyn Fn(u64) + Send + Sync>;

/// The fan-out servers' own routes: publish `n` events, and count the subscribers.
fn admin(publish: Publish, subscribers: Arc<dyn Fn() -> usize + Send + Sync>) -> Router {
    Router::new()
        .route(
            "/publish/{n}",
            get(move |Path(n): Path<u64>| {
                let publish = publish.clone();
                async move {
                    publish(n);
                    "published"
                }
            }),
        )
        .route(
            "/subscribers",
            get(move || {
                let subscribers = subscribers.clone();
                async move { subscribers().to_string() }
            }),
        )
}

/// The fan-out's bus: with `LIVE_LOAD_HISTORY=N`, one keeping N messages a topic (for 60 s),
/// whose events then carry their positions as ids.
fn fanout_bus() -> LocalBus {
    match std::env::var("LIVE_LOAD_HISTORY")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(count) => LocalBus::with_history(History::new(count, Duration::from_secs(60))),
        None => LocalBus::new(),
    }
}

fn courier_fanout() -> Router {
    let bus = fanout_bus();
    let hub = Hub::new(bus.clone());
    let following = hub.clone();
    let news = StreamHandler::new(move |_| following.follow("news", 1024));
    let api = ApiDef::builder()
        .group(
            "bench",
            GroupDef::new()
                .expose(true)
                .endpoint("news", StreamEndpoint::implement(news)),
        )
        .build()
        .expect("a valid definition");
    let proxy = Proxy::new()
        .source("bench", api)
        .hub(hub.clone())
        // Keep-alive comments end in `\n\n` too: the subscribers would count them as events.
        // Not one comes within a run at the default 15 s (the anchor's too), but be sure.
        .keep_alive(Duration::from_secs(3600))
        .into_router()
        .expect("the proxy builds");
    let publish: Publish = Arc::new(move |n| {
        for i in 0..n {
            hub.publish("news", json!({ "n": i }));
        }
    });
    proxy.merge(admin(publish, Arc::new(move || bus.subscribers())))
}

fn axum_fanout() -> Router {
    let (topic, _) = broadcast::channel::<Value>(1024);
    let sending = topic.clone();
    let counting = topic.clone();
    let sse = move || {
        let receiver = topic.subscribe();
        async move {
            let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
                let data = receiver.recv().await.ok()?;
                Some((
                    Ok::<_, std::convert::Infallible>(SseEvent::default().data(data.to_string())),
                    receiver,
                ))
            });
            // What an axum server writes: a keep-alive comment while idle, as courier's has.
            Sse::new(events).keep_alive(axum::response::sse::KeepAlive::default())
        }
    };
    let publish: Publish = Arc::new(move |n| {
        for i in 0..n {
            let _ = sending.send(json!({ "n": i }));
        }
    });
    Router::new()
        .route("/news", get(sse))
        .merge(admin(publish, Arc::new(move || counting.receiver_count())))
}

/// The echo's channels: `echo` sends each message back to its sender (`Peer::send`); `said`
/// publishes it to the sender's topic (`Peer::publish`), one topic per connection. With
/// `history`, the hub's bus keeps 1,000 messages a topic, so each published message is recorded
/// and carries its position.
fn courier_echo(history: bool) -> Router {
    let echo = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.send(message)
    });
    let said = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(message)
    });
    let api = ApiDef::builder()
        .group(
            "bench",
            GroupDef::new()
                .expose(true)
                .endpoint(
                    "echo",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(echo)),
                )
                .endpoint(
                    "said",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(said)),
                ),
        )
        .build()
        .expect("a valid definition");
    let bus = if history {
        LocalBus::with_history(History::new(1_000, Duration::from_secs(60)))
    } else {
        LocalBus::new()
    };
    Proxy::new()
        .source("bench", api)
        .hub(Hub::new(bus))
        .ws_path("/api/ws")
        .into_router()
        .expect("the proxy builds")
}

/// A bare tokio-tungstenite echo server; with `read_buffer`, that read buffer instead of
/// tungstenite's default (128 KiB).
async fn tungstenite_echo(listener: tokio::net::TcpListener, read_buffer: Option<usize>) {
    let config = read_buffer.map(|size| {
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(size)
    });
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(async move {
            let Ok(mut ws) = tokio_tungstenite::accept_async_with_config(tcp, config).await else {
                return;
            };
            while let Some(Ok(message)) = ws.next().await {
                if message.is_text() && ws.send(message).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// This binary as a server of `kind`: prints its address, serves until killed.
fn serve(kind: &str) {
    one_worker().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        println!("{}", listener.local_addr().expect("its address"));
        let app = match kind {
            "courier-fanout" => courier_fanout(),
            "axum-fanout" => axum_fanout(),
            "courier-echo" => courier_echo(false),
            "courier-echo-history" => courier_echo(true),
            "tungstenite-echo-8k" => return tungstenite_echo(listener, Some(8 * 1024)).await,
            _ => return tungstenite_echo(listener, None).await,
        };
        axum::serve(listener, app).await.expect("serving");
    });
}

/// A server in a child process, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(kind: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .args(["--serve", kind])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server's process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its output"))
            .read_line(&mut line)
            .expect("its address");
        let addr = line.trim().parse().expect("an address");
        Server { child, addr }
    }

    /// The CPU time it has used so far (user and system), from `/proc/PID/stat`.
    fn cpu(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's closing parenthesis: utime and stime are the 12th and
        // 13th, in clock ticks.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let ticks = field(11) + field(12);
        // SAFETY: sysconf reads a constant of the system; it has no preconditions.
        let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
        Duration::from_micros(ticks * 1_000_000 / per_second.max(1))
    }

    /// Its resident memory now, in KiB.
    fn resident_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- fan-out --------------------------------------------------------------------------------

/// A GET of `target`, its body.
async fn get_body(addr: SocketAddr, target: &str) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!("GET {target} HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.expect("sends");
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.expect("an answer");
    let text = String::from_utf8_lossy(&answer);
    text.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// One SSE subscriber: counts the events (`\n\n`) it reads into `delivered`.
async fn subscriber(
    addr: SocketAddr,
    target: String,
    delivered: Arc<AtomicU64>,
    arrived: Arc<Notify>,
) {
    let Ok(mut tcp) = tokio::net::TcpStream::connect(addr).await else {
        return;
    };
    let request =
        format!("GET {target} HTTP/1.1\r\nhost: bench\r\naccept: text/event-stream\r\n\r\n");
    if tcp.write_all(request.as_bytes()).await.is_err() {
        return;
    }
    let mut buf = vec![0u8; 4096];
    let mut head = true;
    let mut last = 0u8;
    loop {
        let n = match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut bytes = &buf[..n];
        if head {
            // The response head ends with the first blank line; events follow.
            match bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                Some(end) => {
                    head = false;
                    bytes = &bytes[end + 4..];
                }
                None => continue,
            }
        }
        let mut events = 0;
        for &b in bytes {
            if b == b'\n' && last == b'\n' {
                events += 1;
            }
            last = b;
        }
        if events > 0 {
            delivered.fetch_add(events, Ordering::Relaxed);
            arrived.notify_one();
        }
    }
}

fn fanout(subscribers: usize, rounds: u64) {
    println!("\n### One topic to {subscribers} SSE subscribers\n");
    println!("| server | resident at rest | with the subscribers | per subscriber | round | events delivered/s | server CPU per event |");
    println!("|---|---|---|---|---|---|---|");
    for (name, kind, target) in [
        ("axum + broadcast (anchor)", "axum-fanout", "/news"),
        (
            "courier (`Proxy`, `Hub::follow`)",
            "courier-fanout",
            "/api/sse?_s=bench&_g=bench&_m=news",
        ),
    ] {
        let server = Server::start(kind);
        let rest = server.resident_kib();
        let clients = one_worker();
        let delivered = Arc::new(AtomicU64::new(0));
        let arrived = Arc::new(Notify::new());
        clients.block_on(async {
            for _ in 0..subscribers {
                tokio::spawn(subscriber(
                    server.addr,
                    target.to_owned(),
                    delivered.clone(),
                    arrived.clone(),
                ));
            }
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                let count: usize = get_body(server.addr, "/subscribers")
                    .await
                    .trim()
                    .parse()
                    .unwrap_or(0);
                if count >= subscribers {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{name}: only {count} subscribers after 120 s"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let with = server.resident_kib();
        let per = (with.saturating_sub(rest) as f64 * 1024.0) / subscribers as f64;
        for round in 1..=rounds {
            let before = server.cpu();
            let elapsed = clients.block_on(async {
                let target = delivered.load(Ordering::Relaxed) + 100 * subscribers as u64;
                let start = Instant::now();
                get_body(server.addr, "/publish/100").await;
                while delivered.load(Ordering::Relaxed) < target {
                    let _ =
                        tokio::time::timeout(Duration::from_millis(50), arrived.notified()).await;
                    assert!(
                        start.elapsed() < Duration::from_secs(120),
                        "{name}: round {round} did not finish"
                    );
                }
                start.elapsed()
            });
            let cpu = server.cpu().saturating_sub(before);
            println!(
                "| {name} | {:.1} MiB | {:.1} MiB | {:.1} KiB | {round} | {:.0} | {:.2} µs |",
                rest as f64 / 1024.0,
                with as f64 / 1024.0,
                per / 1024.0,
                (100 * subscribers) as f64 / elapsed.as_secs_f64(),
                cpu_per(cpu, 100 * subscribers)
            );
        }
        drop(clients);
    }
}

// ---- echo ---------------------------------------------------------------------------------

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn connect(addr: SocketAddr, target: &str) -> Socket {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    tcp.set_nodelay(true).expect("nodelay");
    tokio_tungstenite::client_async(format!("ws://{addr}{target}"), tcp)
        .await
        .expect("a WebSocket")
        .0
}

/// Round trips on one socket until `until`; each one's time in microseconds.
async fn echo_load(mut socket: Socket, until: Instant) -> Vec<u32> {
    let message = r#"{"text":"0123456789abcdef0123"}"#;
    let mut times = Vec::new();
    while Instant::now() < until {
        let start = Instant::now();
        socket.send(Message::text(message)).await.expect("sends");
        loop {
            match socket.next().await.expect("open").expect("a frame") {
                Message::Text(_) => break,
                _ => continue,
            }
        }
        times.push(u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX));
    }
    times
}

/// `cpu` over `n` round trips (or events), in microseconds each.
fn cpu_per(cpu: Duration, n: usize) -> f64 {
    cpu.as_secs_f64() * 1e6 / n.max(1) as f64
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or(0)
}

fn echo(seconds: u64) {
    println!("\n### WebSocket echo, 64 connections, {seconds} s\n");
    println!("| server | round trips/s | p50 | p99 | server CPU per round trip |");
    println!("|---|---|---|---|---|");
    let mut rates = Vec::new();
    for (name, kind, target) in [
        ("tokio-tungstenite echo (anchor)", "tungstenite-echo", "/"),
        (
            "tokio-tungstenite echo, 8 KiB read buffer (courier's)",
            "tungstenite-echo-8k",
            "/",
        ),
        (
            "courier (served channel, `Peer::send`)",
            "courier-echo",
            "/api/ws?_s=bench&_g=bench&_m=echo",
        ),
        (
            "courier (`Peer::publish` to the connection's topic)",
            "courier-echo",
            "/api/ws?_s=bench&_g=bench&_m=said&_v={i}",
        ),
        (
            "courier (`Peer::publish`, a history of 1,000, positions written)",
            "courier-echo-history",
            "/api/ws?_s=bench&_g=bench&_m=said&_v={i}&_h=1",
        ),
    ] {
        let server = Server::start(kind);
        let clients = one_worker();
        let (mut times, before): (Vec<u32>, Duration) = clients.block_on(async {
            let mut sockets = Vec::new();
            for i in 0..64 {
                let target = target.replace("{i}", &i.to_string());
                let mut socket = connect(server.addr, &target).await;
                if target.ends_with("_h=1") {
                    // A client that keeps positions: its hello, then where it begins.
                    let hello = Message::text(r#"{"type":"courier.hello","since":null}"#);
                    socket.send(hello).await.expect("sends");
                    let _at = socket.next().await;
                }
                sockets.push(socket);
            }
            // A second's warm-up, then the measured run.
            let warm = Instant::now() + Duration::from_secs(1);
            let warming: Vec<_> = sockets
                .into_iter()
                .map(|socket| {
                    tokio::spawn(async move {
                        let mut socket = socket;
                        let message = Message::text(r#"{"text":"warm"}"#);
                        while Instant::now() < warm {
                            socket.send(message.clone()).await.expect("sends");
                            let _ = socket.next().await;
                        }
                        socket
                    })
                })
                .collect();
            let mut sockets = Vec::new();
            for task in warming {
                sockets.push(task.await.expect("warmed"));
            }
            let before = server.cpu();
            let until = Instant::now() + Duration::from_secs(seconds);
            let tasks: Vec<_> = sockets
                .into_iter()
                .map(|socket| tokio::spawn(echo_load(socket, until)))
                .collect();
            let mut all = Vec::new();
            for task in tasks {
                all.extend(task.await.expect("a load"));
            }
            (all, before)
        });
        let cpu = server.cpu().saturating_sub(before);
        times.sort_unstable();
        let rate = times.len() as f64 / seconds as f64;
        rates.push(rate);
        println!(
            "| {name} | {rate:.0} | {} µs | {} µs | {:.1} µs |",
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            cpu_per(cpu, times.len())
        );
    }
    println!(
        "\ncourier / anchor: {:.3}; courier / the anchor with courier's read buffer: {:.3}",
        rates[2] / rates[0],
        rates[2] / rates[1]
    );
}

// ---- redis --------------------------------------------------------------------------------

async fn recv(member: &mut Member) -> Outbound {
    tokio::time::timeout(Duration::from_secs(10), member.recv())
        .await
        .expect("a message within 10 s")
        .expect("open")
}

fn redis() {
    println!("\n### A message across two instances through Redis, 5,000 one at a time\n");
    let redis = courier_test_support::redis::RedisServer::start();
    println!("| bus | delivery | p50 | p90 | p99 |");
    println!("|---|---|---|---|---|");
    for (bus, history) in [
        ("pub/sub", None),
        (
            "a history of 1,000 (Streams)",
            Some(History::new(1_000, Duration::from_secs(60))),
        ),
    ] {
        let (mut local, mut across) = one_worker().block_on(redis_latency(&redis.url(), history));
        local.sort_unstable();
        across.sort_unstable();
        for (name, times) in [
            ("to a member on the publishing instance", &local),
            ("to a member on the other instance, through Redis", &across),
        ] {
            println!(
                "| {bus} | {name} | {} µs | {} µs | {} µs |",
                percentile(times, 0.5),
                percentile(times, 0.9),
                percentile(times, 0.99)
            );
        }
    }
}

/// Two buses on the Redis at `url`, a member on each; 5,000 messages published on the first:
/// each one's time to the member there, and to the member on the other.
async fn redis_latency(url: &str, history: Option<History>) -> (Vec<u32>, Vec<u32>) {
    let bus = || async {
        let builder = RedisBus::builder(url);
        let builder = match history {
            Some(history) => builder.history(history),
            None => builder,
        };
        builder.connect().await.expect("a bus")
    };
    let (hub_a, hub_b) = (Hub::new(bus().await), Hub::new(bus().await));
    let relay = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(message)
    });
    let room = ChannelEndpoint::implement(ChannelHandler::Duplex(relay));
    let mut on_a = hub_a
        .join("bench.room", &room, Value::Null, JoinOptions::default())
        .await
        .expect("joins");
    let mut on_b = hub_b
        .join("bench.room", &room, Value::Null, JoinOptions::default())
        .await
        .expect("joins");
    let topic = Hub::channel_topic("bench.room", "null");
    // Until b's subscription is on Redis, a's messages do not reach it.
    loop {
        hub_a.publish(&topic, json!("ready?"));
        if tokio::time::timeout(Duration::from_millis(50), on_b.recv())
            .await
            .is_ok()
        {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    for member in [&mut on_a, &mut on_b] {
        while tokio::time::timeout(Duration::from_millis(10), member.recv())
            .await
            .is_ok()
        {}
    }
    let (mut local, mut across) = (Vec::new(), Vec::new());
    for n in 0..5_000u32 {
        let start = Instant::now();
        hub_a.publish(&topic, json!(n));
        recv(&mut on_a).await;
        local.push(u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX));
        recv(&mut on_b).await;
        across.push(u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX));
    }
    (local, across)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(kind) = args
        .iter()
        .position(|a| a == "--serve")
        .and_then(|i| args.get(i + 1))
    {
        serve(kind);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, briefly.
    let testing = args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench");
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let subscribers = number("LIVE_LOAD_SUBSCRIBERS", if testing { 50 } else { 10_000 });
    let seconds = number("LIVE_LOAD_SECONDS", if testing { 1 } else { 10 });
    let sections = std::env::var("LIVE_LOAD").unwrap_or_else(|_| "fanout,echo,redis".to_owned());
    for section in sections.split(',') {
        match section.trim() {
            "fanout" => fanout(
                usize::try_from(subscribers).unwrap_or(10_000),
                number("LIVE_LOAD_ROUNDS", 3),
            ),
            "echo" => echo(seconds),
            "redis" => redis(),
            other => eprintln!("no section `{other}`: fanout, echo or redis"),
        }
    }
}
