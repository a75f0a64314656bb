//! A proxy stopping gracefully over real sockets on 127.0.0.1: `Shutdown::begin` cuts the open
//! streams short (implemented and proxied: their clients reconnect) and closes the open sockets
//! (implemented and proxied) with 1001, so axum's graceful stop, which waits for every response
//! in flight, completes.

use axum::response::sse::{Event as SseEvent, Sse};
use axum::routing::get;
use axum::Router;
use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, Event, GroupDef, Peer,
    StreamEndpoint, StreamHandler,
};
use courier_server::Proxy;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// An upstream with an event stream that sends one event and then never ends, and an echoing
/// WebSocket on another port.
async fn upstream() -> (SocketAddr, SocketAddr) {
    let app = Router::new().route(
        "/events",
        get(|| async {
            let first = futures_util::stream::once(async {
                Ok::<_, Infallible>(SseEvent::default().data("{\"n\":1}"))
            });
            Sse::new(first.chain(futures_util::stream::pending()))
        }),
    );
    let http = courier_test_support::serve(app).await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ws = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                while let Some(Ok(message)) = socket.next().await {
                    if message.is_text() && socket.send(message).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (http, ws)
}

fn api(http: SocketAddr) -> ApiDef {
    let endless = StreamHandler::new(|_| {
        futures_util::stream::once(async { Ok(Event::new(json!({ "n": 1 }))) })
            .chain(futures_util::stream::pending())
    });
    let chat = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(message)
    });
    ApiDef::builder()
        .base_url(format!("http://{http}"))
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint("ticks", StreamEndpoint::implement(endless))
                .endpoint("feed", StreamEndpoint::get("/events"))
                .endpoint(
                    "chat",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(chat)),
                ),
        )
        .build()
        .unwrap()
}

fn relay_api(ws: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{ws}"))
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint("relay", ChannelEndpoint::connect("/").send()),
        )
        .build()
        .unwrap()
}

/// A raw GET whose response is read until `until` shows up; the connection stays open.
async fn open_stream(
    addr: SocketAddr,
    target: &str,
    until: &str,
) -> (tokio::net::TcpStream, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(Duration::from_secs(10), async {
        while !String::from_utf8_lossy(&seen).contains(until) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "the stream ended early: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the first event within 10 s");
    (tcp, String::from_utf8_lossy(&seen).into_owned())
}

/// Reads what is left of a response until the connection closes, within 10 s.
async fn read_to_end((mut tcp, seen): (tokio::net::TcpStream, String)) -> String {
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut rest))
        .await
        .expect("the response ends within 10 s")
        .unwrap();
    seen + &String::from_utf8_lossy(&rest)
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn open_socket(addr: SocketAddr, name: &str) -> Socket {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let url = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m={name}");
    let (mut socket, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    // A round trip: the socket is joined (or its upstream is open) before the shutdown.
    socket.send(Message::text(r#""hello""#)).await.unwrap();
    assert_eq!(next(&mut socket).await, Message::text(r#""hello""#));
    socket
}

async fn next(socket: &mut Socket) -> Message {
    tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("a frame within 10 s")
        .expect("the socket is open")
        .unwrap()
}

#[tokio::test]
async fn begin_ends_open_streams_and_closes_open_sockets_with_1001() {
    let (http, ws) = upstream().await;
    let proxy = Proxy::new()
        .source("demo", api(http))
        .source("relay", relay_api(ws))
        .ws_path("/api/ws")
        .keep_alive(Duration::from_millis(50));
    let shutdown = proxy.shutdown_handle();
    let app = proxy.into_router().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown.begun())
            .into_future(),
    );

    let implemented = open_stream(addr, "/api/sse?_s=demo&_g=live&_m=ticks", "{\"n\":1}").await;
    let proxied = open_stream(addr, "/api/sse?_s=demo&_g=live&_m=feed", "{\"n\":1}").await;
    let mut chat = open_socket(addr, "chat").await;
    let relay_tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut relay, _) = tokio_tungstenite::client_async(
        format!("ws://{addr}/api/ws?_s=relay&_g=live&_m=relay"),
        relay_tcp,
    )
    .await
    .unwrap();
    relay.send(Message::text(r#""hello""#)).await.unwrap();
    assert_eq!(next(&mut relay).await, Message::text(r#""hello""#));
    assert!(!shutdown.is_begun());

    shutdown.begin();

    // Each stream's response is cut short: the connection closes without the last chunk of
    // the chunked body, which a client takes for a dropped connection and reconnects after
    // (a clean end would tell it the stream is over).
    for (name, stream) in [("implemented", implemented), ("proxied", proxied)] {
        let rest = read_to_end(stream).await;
        assert!(rest.contains("{\"n\":1}"), "{name}: {rest:?}");
        assert!(!rest.ends_with("0\r\n\r\n"), "{name}: {rest:?}");
    }
    // Each socket is closed with 1001, which a courier client reconnects after.
    for socket in [&mut chat, &mut relay] {
        match next(socket).await {
            Message::Close(Some(frame)) => assert_eq!(u16::from(frame.code), 1001),
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
    tokio::time::timeout(Duration::from_secs(10), shutdown.closed())
        .await
        .expect("every socket closed");
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the graceful stop completes")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_stream_opened_after_the_shutdown_began_is_cut_at_once() {
    let (http, _) = upstream().await;
    let proxy = Proxy::new().source("demo", api(http));
    let shutdown = proxy.shutdown_handle();
    let app = proxy.into_router().unwrap();
    let addr = courier_test_support::serve(app).await;
    shutdown.begin();
    // No event and no clean end: the connection closes, which a client reconnects after.
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = "GET /api/sse?_s=demo&_g=live&_m=ticks HTTP/1.1\r\nhost: app\r\n\r\n";
    tcp.write_all(request.as_bytes()).await.unwrap();
    let rest = read_to_end((tcp, String::new())).await;
    assert!(!rest.contains("\"n\""), "{rest:?}");
    assert!(!rest.ends_with("0\r\n\r\n"), "{rest:?}");
}
