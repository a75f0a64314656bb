//! A channel refused for good reaches the page as a close code it will not retry, and reaches
//! the upstream once.
//!
//! A browser is told nothing of a WebSocket handshake refused with an HTTP status: it sees a
//! close with 1006, which a channel retries. So the proxy tells its own pages why with a close
//! code, 4000 + the refusal's status and `CODE: message`, for what retrying will not change: its
//! own refusals (not exposed, malformed), and the upstream's 401, 403 and 404. Another site's
//! page, and a client without `Origin`, still get the HTTP refusal before any upgrade; what may
//! pass later (the upstream's 503) is closed with 1011, which a channel retries.

use axum::extract::ws::{Message as AxumMessage, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier::routes::Routes;
use courier::typed::{channel, Channel, Group};
use courier::ProxyCaller;
use courier_core::{ApiDef, ChannelEndpoint, GroupDef};
use courier_server::Proxy;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

mod support;
use support::listen;

/// How many handshakes the upstream received, per room.
#[derive(Clone, Default)]
struct Handshakes(Arc<Mutex<HashMap<String, usize>>>);

impl Handshakes {
    fn of(&self, room: &str) -> usize {
        self.0.lock().unwrap().get(room).copied().unwrap_or(0)
    }
}

/// An upstream whose rooms refuse by name: `who` 401, `forbidden` 403, `gone` 404, `busy` 503,
/// `later` 429; any other room says hello.
async fn upstream() -> (SocketAddr, Handshakes) {
    async fn room(
        State(seen): State<Handshakes>,
        Path(id): Path<String>,
        upgrade: WebSocketUpgrade,
    ) -> Response {
        *seen.0.lock().unwrap().entry(id.clone()).or_default() += 1;
        let refused = match id.as_str() {
            "who" => Some(StatusCode::UNAUTHORIZED),
            "forbidden" => Some(StatusCode::FORBIDDEN),
            "gone" => Some(StatusCode::NOT_FOUND),
            "busy" => Some(StatusCode::SERVICE_UNAVAILABLE),
            "later" => Some(StatusCode::TOO_MANY_REQUESTS),
            _ => None,
        };
        if let Some(status) = refused {
            return (status, "refused by the upstream").into_response();
        }
        upgrade.on_upgrade(|mut socket| async move {
            let hello = json!({ "hello": true }).to_string();
            let _ = socket.send(AxumMessage::Text(hello.into())).await;
            while let Some(Ok(_)) = socket.recv().await {}
        })
    }
    let seen = Handshakes::default();
    let app = Router::new()
        .route("/rooms/{id}", get(room))
        .with_state(seen.clone());
    (listen(app).await, seen)
}

fn api(upstream: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .group(
            "chat",
            GroupDef::new()
                .expose(true)
                .endpoint("room", ChannelEndpoint::connect("/rooms/:id").send()),
        )
        .group(
            "hidden",
            GroupDef::new().endpoint("room", ChannelEndpoint::connect("/rooms/:id")),
        )
        .build()
        .unwrap()
}

struct Site {
    proxy: SocketAddr,
    upstream: Handshakes,
    upstream_addr: SocketAddr,
}

async fn site() -> Site {
    let (upstream_addr, upstream) = upstream().await;
    let router = Proxy::new()
        .source("demo", api(upstream_addr))
        .ws_path("/api/ws")
        .into_router()
        .unwrap();
    Site {
        proxy: listen(router).await,
        upstream,
        upstream_addr,
    }
}

/// How a handshake ended, as a page's socket sees it.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Refused with this HTTP status, before any upgrade.
    Status(u16),
    /// Opened, then closed with this code and reason before any message.
    Closed(u16, String),
    /// Opened, and this message came.
    Message(Value),
}

/// Opens channel `group.room` of room `room` with `origin` (if any); `query` replaces the
/// channel's own wire parameters when given.
async fn open(site: &Site, origin: Option<&str>, group: &str, room: &str) -> Outcome {
    let variables = urlencode(&json!({ "id": room }).to_string());
    let query = format!("_s=demo&_g={group}&_m=room&_v={variables}");
    open_at(site, origin, &query).await
}

async fn open_at(site: &Site, origin: Option<&str>, query: &str) -> Outcome {
    let mut handshake = format!("ws://{}/api/ws?{query}", site.proxy)
        .into_client_request()
        .unwrap();
    if let Some(origin) = origin {
        handshake
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    let mut socket = match tokio_tungstenite::connect_async(handshake).await {
        Ok((socket, _)) => socket,
        Err(WsError::Http(response)) => return Outcome::Status(response.status().as_u16()),
        Err(e) => panic!("the handshake failed: {e}"),
    };
    let next = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("a frame within 10 s");
    match next {
        Some(Ok(Message::Close(Some(frame)))) => {
            Outcome::Closed(u16::from(frame.code), frame.reason.as_str().to_owned())
        }
        Some(Ok(Message::Text(text))) => Outcome::Message(serde_json::from_str(&text).unwrap()),
        other => panic!("neither a close nor a message: {other:?}"),
    }
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The close code and the refusal's code of a refused socket.
fn refusal(outcome: &Outcome) -> (u16, &str) {
    match outcome {
        Outcome::Closed(code, reason) => {
            let name = reason.split(": ").next().unwrap_or_default();
            (*code, name)
        }
        other => panic!("not closed: {other:?}"),
    }
}

#[tokio::test]
async fn the_upstreams_refusal_for_good_reaches_the_page_as_4000_plus_its_status() {
    let site = site().await;
    let own = format!("http://{}", site.proxy);
    for (room, code) in [("who", 4401), ("forbidden", 4403), ("gone", 4404)] {
        let outcome = open(&site, Some(&own), "chat", room).await;
        assert_eq!(refusal(&outcome), (code, "UPSTREAM_REFUSED"), "{room}");
        assert_eq!(
            site.upstream.of(room),
            1,
            "{room}: one handshake at the upstream"
        );
    }
    // A client without `Origin` (not a page) is told the same: the proxy has already
    // answered 101 when the upstream refuses.
    let outcome = open(&site, None, "chat", "forbidden").await;
    assert_eq!(refusal(&outcome), (4403, "UPSTREAM_REFUSED"));
    // The room that admits says hello.
    assert_eq!(
        open(&site, Some(&own), "chat", "lobby").await,
        Outcome::Message(json!({ "hello": true }))
    );
}

#[tokio::test]
async fn what_may_pass_later_is_closed_with_1011_which_a_channel_retries() {
    let site = site().await;
    let own = format!("http://{}", site.proxy);
    for room in ["busy", "later"] {
        let outcome = open(&site, Some(&own), "chat", room).await;
        assert!(
            matches!(&outcome, Outcome::Closed(1011, _)),
            "{room}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn the_proxys_own_refusal_reaches_its_own_page_as_a_close_code() {
    let site = site().await;
    let own = format!("http://{}", site.proxy);
    // Not exposed: 404.
    let outcome = open(&site, Some(&own), "hidden", "lobby").await;
    assert_eq!(refusal(&outcome), (4404, "ENDPOINT_NOT_IN_ROUTES"));
    // Variables that are not JSON: 400.
    let outcome = open_at(&site, Some(&own), "_s=demo&_g=chat&_m=room&_v=%7Bnot-json").await;
    assert_eq!(refusal(&outcome), (4400, "BAD_REQUEST"));
    // No such source.
    let outcome = open_at(&site, Some(&own), "_s=nope&_g=chat&_m=room").await;
    assert_eq!(refusal(&outcome).0, 4404);
    // A reason fits a close frame, however long the message.
    let long = "x".repeat(400);
    let outcome = open_at(&site, Some(&own), &format!("_s=demo&_g=chat&_m={long}")).await;
    match &outcome {
        Outcome::Closed(4404, reason) => assert!(reason.len() <= 123, "{}", reason.len()),
        other => panic!("{other:?}"),
    }
    assert_eq!(site.upstream.of("lobby"), 0, "nothing reached the upstream");
}

#[tokio::test]
async fn another_sites_page_and_a_client_without_origin_get_the_http_refusal() {
    let site = site().await;
    for origin in [Some("https://evil.example"), Some("null"), None] {
        assert_eq!(
            open(&site, origin, "hidden", "lobby").await,
            Outcome::Status(404),
            "{origin:?}"
        );
    }
    // The upstream's address is another origin, not the proxy's own.
    let upstream = format!("http://{}", site.upstream_addr);
    assert_eq!(
        open(&site, Some(&upstream), "hidden", "lobby").await,
        Outcome::Status(404)
    );
}

// ---- the Rust channel client through the proxy ----------------------------------------------

#[derive(serde::Serialize)]
struct RoomId {
    id: String,
}

#[derive(courier::Group)]
struct Chat {
    room: Channel<Value, RoomId, Value>,
}

#[derive(courier::Api)]
struct Demo {
    chat: Group<Chat>,
}

#[tokio::test]
async fn a_proxy_callers_channel_refused_for_good_ends_and_is_not_dialled_again() {
    let site = site().await;
    let chat = Group::new(Chat {
        room: channel().connect("/rooms/:id").send(),
    })
    .expose(true);
    let api = ApiDef::builder()
        .base_url(format!("http://{}", site.upstream_addr))
        .build_typed(Demo { chat })
        .unwrap();
    let routes = Routes::from_api("demo", api.def());
    let caller = ProxyCaller::<Demo>::routes(format!("http://{}", site.proxy), routes)
        .proxy_path(courier::config::ProxyPaths {
            ws: Some("/api/ws".into()),
            ..Default::default()
        })
        .build()
        .unwrap();
    let mut room = caller
        .chat()
        .room(RoomId {
            id: "forbidden".to_owned(),
        })
        .await
        .unwrap();
    let error = tokio::time::timeout(Duration::from_secs(10), room.next())
        .await
        .expect("the end within 10 s")
        .expect("an item")
        .expect_err("the refusal");
    let close = error.close().expect("a close");
    assert_eq!(close.code, 4403, "{error}");
    assert!(close.reason.starts_with("UPSTREAM_REFUSED: "), "{error}");
    assert!(room.next().await.is_none(), "the channel is over");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(site.upstream.of("forbidden"), 1, "never dialled again");
}
