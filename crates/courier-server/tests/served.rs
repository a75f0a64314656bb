//! Implemented streams and channels run with the browser's request as the served context: a
//! handler's own calls, made while it answers a subscriber, carry that subscriber's forwarded
//! headers. Real sockets on 127.0.0.1: an upstream, the proxy, a browser.

use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};
use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, Event, ForwardOptions, GroupDef,
    HttpEndpoint, Peer, PeerHandler, StreamEndpoint, StreamHandler,
};
use courier_server::Proxy;
use futures_util::SinkExt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

mod support;
use support::{listen, next_json};

/// An upstream that answers with the `x-user` header its caller sent, and a client of it that
/// forwards `x-user` from the request being served.
async fn upstream_client() -> courier_client::Client {
    async fn whoami(headers: HeaderMap) -> Json<Value> {
        Json(json!(headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("nobody")))
    }
    let upstream = listen(Router::new().route("/whoami", get(whoami))).await;
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .forward(ForwardOptions::new().headers(["x-user"]))
        .group(
            "users",
            GroupDef::new().endpoint("whoami", HttpEndpoint::get("/whoami")),
        )
        .build()
        .unwrap();
    courier_client::Client::new(api).unwrap()
}

/// The proxy serving a stream and a channel whose handlers ask the upstream who they serve.
async fn proxy() -> SocketAddr {
    let client = upstream_client().await;
    let asking = client.clone();
    let stream = StreamHandler::new(move |_| {
        let client = asking.clone();
        futures_util::stream::once(async move {
            let who = client.call("users.whoami", Value::Null).await?;
            Ok(Event::new(json!({ "upstream_saw": who.data })))
        })
    });
    let joined = client.clone();
    let on_message = move |peer: Arc<dyn Peer>, _message: Value| {
        let client = client.clone();
        async move {
            let who = client.call("users.whoami", Value::Null).await?;
            peer.send(json!({ "on_message_saw": who.data }))
        }
    };
    let on_join = PeerHandler::new(move |peer: Arc<dyn Peer>| {
        let client = joined.clone();
        async move {
            let who = client.call("users.whoami", Value::Null).await?;
            // What the handler itself reads of the request it serves.
            let other = courier_core::context::ServedRequest::current().and_then(|served| {
                let value = served
                    .parts()
                    .headers
                    .get("x-other")?
                    .to_str()
                    .ok()?
                    .to_owned();
                Some(value)
            });
            peer.send(json!({ "on_join_saw": who.data, "x_other": other }))
        }
    });
    let channel = ChannelHandlers::on_message(on_message).on_join(on_join);
    let api = ApiDef::builder()
        .allowed_headers(["x-user"])
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint("whoami", StreamEndpoint::implement(stream))
                .endpoint(
                    "room",
                    ChannelEndpoint::implement(ChannelHandler::Duplex(channel)),
                ),
        )
        .build()
        .unwrap();
    let app = Proxy::new()
        .source("demo", api)
        .ws_path("/api/ws")
        .into_router()
        .unwrap();
    listen(app).await
}

#[tokio::test]
async fn an_implemented_streams_calls_carry_the_subscribers_headers() {
    let addr = proxy().await;
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = "GET /api/sse?_s=demo&_g=live&_m=whoami HTTP/1.1\r\nhost: x\r\n\
                   x-user: ada\r\nconnection: close\r\n\r\n";
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = String::new();
    let read = async {
        let mut buf = [0u8; 4096];
        while !seen.contains("upstream_saw") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("an event within 10 s");
    assert!(seen.contains(r#"data: {"upstream_saw":"ada"}"#), "{seen}");
}

#[tokio::test]
async fn an_implemented_channels_handlers_calls_carry_the_subscribers_headers() {
    let addr = proxy().await;
    let mut request = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m=room")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("x-user", "grace".parse().unwrap());
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({ "on_join_saw": "grace", "x_other": null })
    );
    ws.send(Message::text(r#""who am i""#)).await.unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({ "on_message_saw": "grace" })
    );
}

/// Opens the room with `handshake` headers and a hello frame carrying `hello` headers.
async fn room_with_hello(
    addr: SocketAddr,
    handshake: &[(&'static str, &'static str)],
    hello: Value,
) -> support::Socket {
    let mut request = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m=room&_h=1")
        .into_client_request()
        .unwrap();
    for (name, value) in handshake {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    let frame = json!({ "type": "courier.hello", "headers": hello });
    ws.send(Message::text(frame.to_string())).await.unwrap();
    ws
}

#[tokio::test]
async fn an_implemented_channels_handlers_see_the_hellos_allow_listed_headers() {
    let addr = proxy().await;
    // A browser cannot set a socket's headers: its caller's default headers come in the hello.
    // `x-user` is allow-listed and joins the served request; `x-other` is not.
    let mut ws = room_with_hello(
        addr,
        &[],
        json!({ "x-user": "hopper", "x-other": "not listed" }),
    )
    .await;
    assert_eq!(
        next_json(&mut ws).await,
        json!({ "on_join_saw": "hopper", "x_other": null })
    );
    ws.send(Message::text(r#""who am i""#)).await.unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({ "on_message_saw": "hopper" })
    );
}

#[tokio::test]
async fn a_hello_header_never_replaces_one_the_browser_put_on_the_handshake() {
    let addr = proxy().await;
    let mut ws =
        room_with_hello(addr, &[("x-user", "grace")], json!({ "x-user": "mallory" })).await;
    assert_eq!(
        next_json(&mut ws).await,
        json!({ "on_join_saw": "grace", "x_other": null })
    );
}
