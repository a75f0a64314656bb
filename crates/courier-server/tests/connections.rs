//! The bound on open connections `Proxy::serve` holds, against raw sockets on 127.0.0.1: idle
//! connections at the bound make room for a new one, the oldest first; a connection answering
//! a call is never closed for another, and a new one waits for a place when every one is busy;
//! over one address's bound, that address's new connection is closed while another address is
//! served.

use axum::routing::get;
use axum::{Json, Router};
use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, GroupDef, HttpEndpoint, Peer,
    StreamEndpoint, StreamHandler,
};
use courier_server::{Proxy, Shutdown};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

mod support;
use support::{closed_within, connect_from, listen, next_json};
use tokio_tungstenite::tungstenite::Message;

/// An upstream answering `GET /fast` at once and holding `GET /held/{id}` until let go.
struct Upstream {
    addr: SocketAddr,
    held: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
}

impl Upstream {
    async fn start() -> Self {
        let held = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let (seen, waits) = (Arc::clone(&held), Arc::clone(&gate));
        let app = Router::new()
            .route("/fast", get(|| async { Json(json!({ "fast": true })) }))
            .route(
                "/held/{id}",
                get(move || {
                    let (seen, waits) = (Arc::clone(&seen), Arc::clone(&waits));
                    async move {
                        seen.fetch_add(1, Ordering::SeqCst);
                        waits.acquire().await.unwrap().forget();
                        Json(json!({ "held": true }))
                    }
                }),
            );
        Self {
            addr: listen(app).await,
            held,
            gate,
        }
    }

    async fn holding(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.held.load(Ordering::SeqCst) < n {
            assert!(Instant::now() < deadline, "{n} held calls did not arrive");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// `proxy` over `upstream`'s `users.fast` and `users.held`, with a stream that never sends
/// (`users.quiet`) and a channel (`users.chat`) of its own, served on 127.0.0.1.
async fn serve(proxy: Proxy, upstream: &Upstream) -> (SocketAddr, Shutdown) {
    let chat = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.send(json!({ "said": message }))
    });
    let quiet = StreamHandler::new(|_| futures_util::stream::pending());
    let api = ApiDef::builder()
        .base_url(format!("http://{}", upstream.addr))
        .group(
            "users",
            GroupDef::new()
                .expose(true)
                .endpoint("fast", HttpEndpoint::get("/fast"))
                .endpoint("held", HttpEndpoint::get("/held/:id"))
                .endpoint("quiet", StreamEndpoint::implement(quiet))
                .endpoint(
                    "chat",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(chat)),
                ),
        )
        .build()
        .unwrap();
    let proxy = proxy.source("demo", api).ws_path("/api/ws");
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(proxy.serve(listener));
    (addr, stop)
}

const TWO: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// Sends a call on `tcp`, keeping the connection open: `method` `fast`, or `held` with a
/// number of its own (distinct reads are not coalesced into one upstream call).
async fn send(tcp: &mut TcpStream, method: &str) {
    let variables = match method.strip_prefix("held ") {
        Some(id) => format!("held&_v=%7B%22id%22%3A{id}%7D"),
        None => method.to_owned(),
    };
    let request =
        format!("GET /api/request?_s=demo&_g=users&_m={variables} HTTP/1.1\r\nhost: app\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
}

/// Reads one response off `tcp`: its status line and body.
async fn response(tcp: &mut TcpStream) -> (String, String) {
    let (head, body) = support::next_answer(tcp).await;
    (head.lines().next().unwrap().to_owned(), body)
}

#[tokio::test]
async fn idle_connections_at_the_bound_make_room_for_another_clients_call() {
    let upstream = Upstream::start().await;
    let (proxy, stop) = serve(Proxy::new().max_connections(16), &upstream).await;

    // 200 connections that never send a request, from one address.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(proxy).await.unwrap());
    }
    // Another client's call is answered at once.
    let started = Instant::now();
    let mut tcp = connect_from(TWO, proxy).await;
    send(&mut tcp, "fast").await;
    let (status, body) = response(&mut tcp).await;
    assert!(status.contains(" 200 "), "{status}: {body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // The oldest idle connections were closed to make room; at most 16 are open.
    let mut open = 0;
    for tcp in &mut idle {
        if !closed_within(tcp, Duration::from_millis(20)).await {
            open += 1;
        }
    }
    assert!(open <= 16, "{open} idle connections still open");
    assert!(
        closed_within(&mut idle[0], Duration::from_millis(20)).await,
        "the oldest went first"
    );
    stop.begin();
}

#[tokio::test]
async fn a_connection_answering_a_call_is_never_closed_and_a_new_one_waits_for_a_place() {
    let upstream = Upstream::start().await;
    let (proxy, stop) = serve(Proxy::new().max_connections(2), &upstream).await;

    // Both places busy with calls the upstream holds.
    let mut first = TcpStream::connect(proxy).await.unwrap();
    send(&mut first, "held 1").await;
    let mut second = TcpStream::connect(proxy).await.unwrap();
    send(&mut second, "held 2").await;
    upstream.holding(2).await;

    // A flood of new connections closes neither; the new ones wait for a place.
    let mut flood = Vec::new();
    for _ in 0..20 {
        flood.push(TcpStream::connect(proxy).await.unwrap());
    }
    let mut waiting = TcpStream::connect(proxy).await.unwrap();
    send(&mut waiting, "fast").await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    upstream.gate.add_permits(2);
    let (status, body) = response(&mut first).await;
    assert!(status.contains(" 200 "), "{status}: {body}");
    assert_eq!(body, r#"{"held":true}"#);
    let (status, _) = response(&mut second).await;
    assert!(status.contains(" 200 "), "{status}");

    // Idle now, the first two make room for the waiting ones in turn: the call sent on the
    // last is answered.
    let (status, body) = response(&mut waiting).await;
    assert!(status.contains(" 200 "), "{status}: {body}");
    stop.begin();
}

#[tokio::test]
async fn over_its_bound_an_address_is_closed_while_another_is_served() {
    let upstream = Upstream::start().await;
    let (proxy, stop) = serve(
        Proxy::new()
            .max_connections(64)
            .max_connections_per_client(2),
        &upstream,
    )
    .await;

    let mut first = TcpStream::connect(proxy).await.unwrap();
    send(&mut first, "held 1").await;
    let mut second = TcpStream::connect(proxy).await.unwrap();
    send(&mut second, "held 2").await;
    upstream.holding(2).await;

    // Its two connections busy, the address's third is closed at once.
    let mut third = TcpStream::connect(proxy).await.unwrap();
    assert!(closed_within(&mut third, Duration::from_secs(2)).await);
    // Another address is served.
    let mut other = connect_from(TWO, proxy).await;
    send(&mut other, "fast").await;
    let (status, _) = response(&mut other).await;
    assert!(status.contains(" 200 "), "{status}");

    upstream.gate.add_permits(2);
    assert!(response(&mut first).await.0.contains(" 200 "));
    assert!(response(&mut second).await.0.contains(" 200 "));
    // Idle again, the address's oldest connection makes room for its next one.
    let mut next = TcpStream::connect(proxy).await.unwrap();
    send(&mut next, "fast").await;
    assert!(response(&mut next).await.0.contains(" 200 "));
    assert!(closed_within(&mut first, Duration::from_secs(2)).await);
    stop.begin();
}

#[tokio::test]
async fn a_stream_and_a_channels_socket_hold_their_places_for_as_long_as_they_are_open() {
    let upstream = Upstream::start().await;
    let (proxy, stop) = serve(Proxy::new().max_connections(2), &upstream).await;

    let mut stream = TcpStream::connect(proxy).await.unwrap();
    stream
        .write_all(b"GET /api/sse?_s=demo&_g=users&_m=quiet HTTP/1.1\r\nhost: app\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 15];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200 OK");
    let url = format!("ws://{proxy}/api/ws?_s=demo&_g=users&_m=chat");
    let tcp = TcpStream::connect(proxy).await.unwrap();
    let mut socket = tokio_tungstenite::client_async(url, tcp).await.unwrap().0;

    // A flood of new connections closes neither: the socket, past its handshake's 101, holds
    // its place as the stream does.
    let mut flood = Vec::new();
    for _ in 0..10 {
        flood.push(TcpStream::connect(proxy).await.unwrap());
    }
    let mut waiting = TcpStream::connect(proxy).await.unwrap();
    send(&mut waiting, "fast").await;
    assert!(!closed_within(&mut stream, Duration::from_millis(300)).await);
    socket.send(Message::text(r#""still here""#)).await.unwrap();
    assert_eq!(
        next_json(&mut socket).await,
        json!({ "said": "still here" })
    );
    let mut byte = [0u8; 1];
    let answered = tokio::time::timeout(Duration::from_millis(300), waiting.read(&mut byte)).await;
    assert!(answered.is_err(), "no place was free while both are open");

    // The socket closed, its place goes to the connections waiting, in turn.
    socket.close(None).await.unwrap();
    while socket.next().await.is_some() {}
    drop(socket);
    let (status, body) = response(&mut waiting).await;
    assert!(status.contains(" 200 "), "{status}: {body}");
    stop.begin();
}
