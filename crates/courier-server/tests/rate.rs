//! The proxy's rate limit (`Proxy::rate_limit`) over real sockets on 127.0.0.1, served by
//! `Proxy::serve` in front of an upstream that counts what reaches it: a client over its rate
//! is refused 429 `RATE_LIMITED` with `Retry-After` and nothing reaches the upstream, while a
//! client at another address (127.0.0.2: Linux routes all of 127.0.0.0/8 to the loopback) or
//! with another signed session is served; after the wait it is served again; made-up session
//! cookies cannot buy a fresh count; stream openings and channel handshakes are counted with the
//! calls (a handshake over the limit gets 429, not 101).

use axum::extract::Path;
use axum::routing::{get, post};
use axum::{Json, Router};
use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, CsrfKey, Event, GroupDef, HttpEndpoint,
    SessionOptions, StreamEndpoint, StreamHandler,
};
use courier_layers::session::csrf;
use courier_server::{Proxy, RateLimit, Shutdown};
use serde_json::{json, Value};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Error as WsError;

mod support;
use support::{connect_from, header, listen, read_answer, status_of};

const HOME: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

fn key() -> CsrfKey {
    CsrfKey::new(*b"0123456789abcdef0123456789abcdef")
}

/// The proxy under a rate limit, and what reached its upstream.
struct Site {
    addr: SocketAddr,
    upstream_calls: Arc<AtomicUsize>,
    stop: Shutdown,
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.begin();
    }
}

/// A source with a signed session, a read, a write, an implemented stream and an implemented
/// channel, behind a proxy limited to `limit`.
async fn site(limit: RateLimit) -> Site {
    let upstream_calls = Arc::new(AtomicUsize::new(0));
    let (read, write) = (Arc::clone(&upstream_calls), Arc::clone(&upstream_calls));
    let upstream = Router::new()
        .route(
            "/users/{id}",
            get(move |Path(id): Path<String>| async move {
                read.fetch_add(1, Ordering::SeqCst);
                Json(json!({ "id": id }))
            }),
        )
        .route(
            "/users",
            post(move || async move {
                write.fetch_add(1, Ordering::SeqCst);
                Json(json!({ "created": true }))
            }),
        );
    let upstream = listen(upstream).await;
    let ticks = StreamHandler::new(|_| futures_util::stream::iter([Ok(Event::new(json!(1)))]));
    let feed = ChannelHandler::push(|_| futures_util::stream::pending());
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .session(
            SessionOptions::new()
                .cookies(["sid"])
                .csrf_signed("csrf", "x-csrf", key()),
        )
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("create", HttpEndpoint::post(""))
                .endpoint("ticks", StreamEndpoint::implement(ticks))
                .endpoint("feed", ChannelEndpoint::implement(feed)),
        )
        .build()
        .unwrap();
    let proxy = Proxy::new()
        .source("demo", api)
        .ws_path("/api/ws")
        .rate_limit(limit);
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(proxy.serve(listener));
    Site {
        addr,
        upstream_calls,
        stop,
    }
}

/// An answer: its status, its `retry-after` and its body (JSON, else null).
#[derive(Debug)]
struct Answer {
    status: u16,
    retry_after: Option<u64>,
    body: Value,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }
}

/// `request` (a head, and a body if any) sent from `from`; the whole answer read.
async fn send(from: IpAddr, proxy: SocketAddr, request: &str) -> Answer {
    let mut tcp = connect_from(from, proxy).await;
    tcp.write_all(request.as_bytes()).await.unwrap();
    let (head, body) = read_answer(&mut tcp).await;
    let retry_after = header(&head, "retry-after").map(|value| value.parse().unwrap());
    Answer {
        status: status_of(&head),
        retry_after,
        body: serde_json::from_str(&body).unwrap_or(Value::Null),
    }
}

/// A GET of `path_and_query` from `from`, with `cookie` when given.
async fn get_from(
    from: IpAddr,
    proxy: SocketAddr,
    path_and_query: &str,
    cookie: Option<&str>,
) -> Answer {
    let cookie = cookie.map_or(String::new(), |c| format!("cookie: {c}\r\n"));
    let request =
        format!("GET {path_and_query} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n{cookie}\r\n");
    send(from, proxy, &request).await
}

const READ: &str = "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A7%7D";
const STREAM: &str = "/api/sse?_s=demo&_g=users&_m=ticks";

async fn read(from: IpAddr, site: &Site, cookie: Option<&str>) -> Answer {
    get_from(from, site.addr, READ, cookie).await
}

/// The cookies of a session the app issued: `sid` and its signed CSRF token.
fn signed(sid: &str) -> String {
    let token = csrf::issue(&key(), &format!("sid={sid}")).unwrap();
    format!("sid={sid}; csrf={token}")
}

#[tokio::test]
async fn a_client_over_its_rate_gets_429_another_address_does_not_and_it_is_served_after_the_wait()
{
    let site = site(RateLimit::per_second(1).burst(2)).await;
    for _ in 0..2 {
        assert_eq!(read(HOME, &site, None).await.status, 200);
    }
    let over = read(HOME, &site, None).await;
    assert_eq!(
        (over.status, over.code()),
        (429, "RATE_LIMITED"),
        "{over:?}"
    );
    assert_eq!(over.retry_after, Some(1));
    let message = over.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("client address"), "{message}");
    assert_eq!(
        site.upstream_calls.load(Ordering::SeqCst),
        2,
        "nothing over the limit reached the upstream"
    );

    // Another client, at another address, is served as if nothing happened.
    assert_eq!(read(ELSEWHERE, &site, None).await.status, 200);

    // After the wait it said, the first client is served again.
    tokio::time::sleep(Duration::from_secs(over.retry_after.unwrap())).await;
    assert_eq!(read(HOME, &site, None).await.status, 200);
    assert_eq!(site.upstream_calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_write_over_the_limit_is_refused_before_its_body_is_read() {
    let site = site(RateLimit::per_second(1)).await;
    assert_eq!(read(HOME, &site, None).await.status, 200);
    // A body announced and never sent: refused at once, not after the body read timeout.
    let started = Instant::now();
    let post = "POST /api/request?_s=demo&_g=users&_m=create HTTP/1.1\r\nhost: app\r\n\
                connection: close\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    let mut tcp = connect_from(HOME, site.addr).await;
    tcp.write_all(post.as_bytes()).await.unwrap();
    let mut head = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut head))
        .await
        .expect("an answer without the body")
        .unwrap();
    let head = String::from_utf8_lossy(&head[..n]);
    assert!(head.starts_with("HTTP/1.1 429"), "{head}");
    assert!(head.contains("RATE_LIMITED"), "{head}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(site.upstream_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn signed_sessions_are_counted_apart_and_made_up_cookies_by_address() {
    let site = site(RateLimit::per_second(1)).await;
    let (alice, bob) = (signed("alice"), signed("bob"));
    assert_eq!(read(HOME, &site, Some(&alice)).await.status, 200);
    let over = read(HOME, &site, Some(&alice)).await;
    assert_eq!(
        (over.status, over.code()),
        (429, "RATE_LIMITED"),
        "{over:?}"
    );
    let message = over.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("session"), "{message}");
    // Her session is her count wherever she calls from.
    assert_eq!(read(ELSEWHERE, &site, Some(&alice)).await.status, 429);
    // Bob, at the same address, has a count of his own; so has the address.
    assert_eq!(read(HOME, &site, Some(&bob)).await.status, 200);
    assert_eq!(read(HOME, &site, None).await.status, 200);

    // A client that makes up a new session for every request is counted by its address,
    // whose count is spent: no value it invents buys it a fresh one.
    let bobs_token = signed("bob").split_once("csrf=").unwrap().1.to_owned();
    let mut made_up: Vec<String> = (0..50)
        .map(|n| format!("sid=mallory-{n}; csrf=1{n}.2{n}"))
        .collect();
    made_up.push(format!("sid=mallory; csrf={bobs_token}"));
    made_up.push("sid=alice".to_owned());
    for cookie in &made_up {
        let answer = read(HOME, &site, Some(cookie)).await;
        assert_eq!(
            (answer.status, answer.code()),
            (429, "RATE_LIMITED"),
            "{cookie}"
        );
    }
    assert_eq!(site.upstream_calls.load(Ordering::SeqCst), 3);
}

/// A WebSocket handshake for the channel from `from`, with `origin` when given: the status it
/// was answered with, and a refusal's `retry-after` and body.
async fn handshake(from: IpAddr, site: &Site, origin: Option<&str>) -> Answer {
    let url = format!("ws://{}/api/ws?_s=demo&_g=users&_m=feed", site.addr);
    let mut request = url.into_client_request().unwrap();
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    let tcp = connect_from(from, site.addr).await;
    match tokio_tungstenite::client_async(request, tcp).await {
        Ok((_socket, response)) => Answer {
            status: response.status().as_u16(),
            retry_after: None,
            body: Value::Null,
        },
        Err(WsError::Http(response)) => Answer {
            status: response.status().as_u16(),
            retry_after: response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().parse().unwrap()),
            body: response
                .body()
                .as_deref()
                .and_then(|body| serde_json::from_slice(body).ok())
                .unwrap_or(Value::Null),
        },
        Err(e) => panic!("the handshake failed otherwise: {e}"),
    }
}

#[tokio::test]
async fn streams_and_channel_handshakes_are_counted_with_the_calls() {
    let site = site(RateLimit::per_second(1).burst(3)).await;
    assert_eq!(read(HOME, &site, None).await.status, 200);
    assert_eq!(get_from(HOME, site.addr, STREAM, None).await.status, 200);
    assert_eq!(handshake(HOME, &site, None).await.status, 101);

    // The count of three is spent: a stream, a handshake and a call are all refused.
    let stream = get_from(HOME, site.addr, STREAM, None).await;
    assert_eq!((stream.status, stream.code()), (429, "RATE_LIMITED"));
    assert_eq!(stream.retry_after, Some(1));
    let socket = handshake(HOME, &site, None).await;
    assert_eq!((socket.status, socket.code()), (429, "RATE_LIMITED"));
    assert_eq!(socket.retry_after, Some(1));
    // The proxy's own page, which is told of a refusal for good by a close code, is answered
    // 429 before any upgrade too: its channel retries, with its backoff.
    let own = format!("http://{}", site.addr);
    let from_page = handshake(HOME, &site, Some(&own)).await;
    assert_eq!((from_page.status, from_page.code()), (429, "RATE_LIMITED"));
    assert_eq!(read(HOME, &site, None).await.status, 429);

    // Another address opens both.
    assert_eq!(
        get_from(ELSEWHERE, site.addr, STREAM, None).await.status,
        200
    );
    assert_eq!(handshake(ELSEWHERE, &site, None).await.status, 101);
}

#[test]
fn a_limit_of_zero_fails_the_build() {
    for limit in [RateLimit::per_second(0), RateLimit::per_second(3).burst(0)] {
        let error = Proxy::new().rate_limit(limit).into_router().unwrap_err();
        assert!(
            error.to_string().contains("would refuse every request"),
            "{error}"
        );
    }
}
