//! The proxy served on worker threads of its own (`Proxy::worker_threads`, as `courier serve`
//! serves it), over real sockets on 127.0.0.1: each connection goes to the thread with the
//! fewest open and is served there to its end; calls on many connections are answered; a
//! graceful stop lets the calls in flight finish and then ends the threads; a dropped serving
//! future cuts them off. The call route, served ahead of the router, answers as the router does.

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use courier_core::{ApiDef, Event, GroupDef, HttpEndpoint, StreamEndpoint, StreamHandler};
use courier_server::Proxy;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::closed_within;

/// An upstream answering `/users/{id}` with that user, and `/slow` after 300 ms.
async fn upstream() -> SocketAddr {
    let app = Router::new()
        .route(
            "/users/{id}",
            get(|Path(id): Path<u64>| async move { Json(json!({ "id": id })) }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Json(json!({ "slow": true }))
            }),
        );
    courier_test_support::serve(app).await
}

/// Reads `/users/:id` and `/slow` from the upstream; a stream, implemented here, whose one
/// event names the thread it runs on, and which then stays open.
fn api(upstream: SocketAddr) -> ApiDef {
    let where_am_i = StreamHandler::new(|_| {
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_owned();
        futures_util::stream::once(async move { Ok(Event::new(json!({ "thread": thread }))) })
            .chain(futures_util::stream::pending())
    });
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .group(
            "users",
            GroupDef::new()
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/users/:id"))
                .endpoint("slow", HttpEndpoint::get("/slow"))
                .endpoint("thread", StreamEndpoint::implement(where_am_i)),
        )
        .build()
        .unwrap()
}

/// The proxy of `api` on `threads` worker threads, its shutdown handle and the serving task.
async fn serve(
    threads: usize,
) -> (
    SocketAddr,
    courier_server::Shutdown,
    tokio::task::JoinHandle<Result<(), courier_server::ProxyError>>,
) {
    let proxy = Proxy::new()
        .worker_threads(threads)
        .source("demo", api(upstream().await));
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (addr, stop, tokio::spawn(proxy.serve(listener)))
}

/// Opens the stream naming its thread, and reads until the event has come: the connection
/// stays open, and so counts as its worker's.
async fn open_stream(addr: SocketAddr) -> (TcpStream, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /api/sse?_s=demo&_g=users&_m=thread HTTP/1.1\r\nhost: app\r\n\r\n")
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    let thread = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let text = String::from_utf8_lossy(&seen).into_owned();
            if let Some(data) = text
                .lines()
                .find_map(|line| line.strip_prefix("data: "))
                .filter(|data| data.ends_with('}'))
            {
                let event: Value = serde_json::from_str(data).unwrap();
                return event["thread"].as_str().unwrap().to_owned();
            }
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended early: {text}");
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the event within 10 s");
    (tcp, thread)
}

/// One GET of `target` on a connection of its own, read to its end.
async fn get_once(addr: SocketAddr, target: &str) -> String {
    send_once(addr, "GET", target).await
}

/// One `method` request of `target` on a connection of its own, read to its end.
async fn send_once(addr: SocketAddr, method: &str, target: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let request = format!("{method} {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut response))
        .await
        .expect("the answer within 10 s")
        .unwrap();
    String::from_utf8_lossy(&response).into_owned()
}

/// `Proxy::serve` serves its call route ahead of the router; what it answers there, and next to
/// it, is what the router answers (`Proxy::serve_with`, the router as it is), refusals included.
#[tokio::test]
async fn the_call_route_served_ahead_of_the_router_answers_as_the_router_does() {
    let upstream = upstream().await;
    let ahead = {
        let proxy = Proxy::new().source("demo", api(upstream));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(proxy.serve(listener));
        addr
    };
    let routed = {
        let proxy = Proxy::new().source("demo", api(upstream));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(proxy.serve_with(listener, |router| router));
        addr
    };
    // The answer's status line, its headers but `date` (which moves between the two) in order of
    // name (hyper writes a `content-length` it adds after the others, axum's router before) and
    // its body.
    let normal = |answer: String| {
        let (head, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
        let mut lines: Vec<&str> = head.split("\r\n").collect();
        lines[1..].sort_unstable();
        lines.retain(|line| !line.starts_with("date:"));
        format!("{}\r\n\r\n{body}", lines.join("\r\n"))
    };
    let requests = [
        (
            "GET",
            "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A7%7D",
        ),
        ("POST", "/api/request?_s=demo&_g=users&_m=get"),
        ("PUT", "/api/request?_s=demo&_g=users&_m=get"),
        ("DELETE", "/api/request"),
        ("HEAD", "/api/request?_s=demo&_g=users&_m=get"),
        ("OPTIONS", "/api/request?_s=demo&_g=users&_m=get"),
        ("GET", "/api/request?_s=demo&_g=users&_m=nobody"),
        ("GET", "/api/request?_s=other&_g=users&_m=get"),
        ("GET", "/api/request?_s=demo&_s=demo&_g=users&_m=get"),
        ("GET", "/api/request?_s=demo&_g=users&_m=get&_v=%7B"),
        (
            "GET",
            "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A7%7D&_t=soon",
        ),
        ("GET", "/api/request?_s=demo&_g=users&_m=thread"),
        ("GET", "/api/request"),
        ("GET", "/api/request/"),
        ("GET", "/api/requests?_s=demo&_g=users&_m=get"),
        ("GET", "/api/Request?_s=demo&_g=users&_m=get"),
        ("GET", "/api/%72equest?_s=demo&_g=users&_m=get"),
    ];
    for (method, target) in requests {
        let ahead = normal(send_once(ahead, method, target).await);
        let routed = normal(send_once(routed, method, target).await);
        assert_eq!(ahead, routed, "{method} {target}");
    }
    let read = send_once(
        ahead,
        "GET",
        "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A7%7D",
    )
    .await;
    assert!(read.starts_with("HTTP/1.1 200 OK\r\n"), "{read}");
    assert!(read.ends_with(r#"{"id":7}"#), "{read}");
}

#[tokio::test]
async fn each_connection_goes_to_the_thread_with_the_fewest_open_and_is_served_there() {
    let (addr, _stop, _served) = serve(2).await;
    let mut open = Vec::new();
    for _ in 0..4 {
        open.push(open_stream(addr).await);
    }
    let mut threads: Vec<&str> = open.iter().map(|(_, thread)| thread.as_str()).collect();
    threads.sort_unstable();
    assert_eq!(
        threads,
        [
            "courier-worker-0",
            "courier-worker-0",
            "courier-worker-1",
            "courier-worker-1"
        ]
    );
    // One closes; the next connection goes to the thread it left, now the one with fewer.
    let (tcp, left) = open.remove(1);
    drop(tcp);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_next, thread) = open_stream(addr).await;
    assert_eq!(thread, left);
}

#[tokio::test]
async fn calls_on_many_connections_are_answered_each_with_its_own_read() {
    let (addr, _stop, _served) = serve(2).await;
    let readers = (0..16u64).map(|reader| {
        tokio::spawn(async move {
            // Each reader on a connection of its own, reading its own users in turn.
            let mut tcp = TcpStream::connect(addr).await.unwrap();
            for n in 0..10u64 {
                let id = reader * 100 + n;
                let request = format!(
                    "GET /api/request?_s=demo&_g=users&_m=get&_v={id} HTTP/1.1\r\nhost: app\r\n\r\n"
                );
                tcp.write_all(request.as_bytes()).await.unwrap();
                let body = read_answer(&mut tcp).await;
                assert_eq!(body, json!({ "id": id }), "reader {reader}, read {n}");
            }
        })
    });
    for reader in readers {
        reader.await.unwrap();
    }
}

/// Reads one HTTP/1.1 answer with a `content-length` (or chunked, of one chunk) and returns
/// its JSON body.
async fn read_answer(tcp: &mut TcpStream) -> Value {
    let (head, body) = support::next_answer(tcp).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn a_graceful_stop_lets_calls_in_flight_finish_then_ends_the_threads() {
    let (addr, stop, served) = serve(2).await;
    let (mut stream, _) = open_stream(addr).await;
    let slow = tokio::spawn(get_once(addr, "/api/request?_s=demo&_g=users&_m=slow"));
    // The slow call is on its way upstream.
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.begin();
    let answer = slow.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#"{"slow":true}"#), "{answer}");
    assert!(
        closed_within(&mut stream, Duration::from_secs(5)).await,
        "the open stream is cut short"
    );
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("serving ends within 10 s")
        .unwrap()
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "nothing listens any more"
    );
}

#[tokio::test]
async fn dropping_the_serving_future_cuts_the_threads_connections_off() {
    let (addr, _stop, served) = serve(2).await;
    let (mut stream, _) = open_stream(addr).await;
    served.abort();
    assert!(
        closed_within(&mut stream, Duration::from_secs(5)).await,
        "the stream's connection is closed with its thread"
    );
}
