//! The shop's handlers and its proxy route, tested as a team using courier tests them: against
//! courier's mock of the orders API, with no server at all (each request handed to the app's
//! router as a `tower::Service`); and a checkout retried through a real upstream on 127.0.0.1
//! that drops the connection before it answers.

use axum::body::Body;
use axum::Router;
use courier::mock::{Answer, Mock};
use courier::Caller;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use shop::{api, app, NewOrder, Order, Shop, Summary};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt;

fn book() -> Order {
    Order {
        id: 1,
        item: "book".into(),
        cents: 1200,
    }
}

fn mocked() -> (Mock<Shop>, Router) {
    let mock = Mock::new(api("http://orders.internal").unwrap()).unwrap();
    let app = app(mock.caller()).unwrap();
    (mock, app)
}

/// `request` handed to `app`: its status and its body, as JSON.
async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body)
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

fn checkout(order: &NewOrder) -> Request<Body> {
    Request::post("/checkout")
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(order).unwrap()))
        .unwrap()
}

#[tokio::test]
async fn the_summary_is_made_of_the_orders_the_api_lists() {
    let (mock, app) = mocked();
    let pen = Order {
        id: 2,
        item: "pen".into(),
        cents: 300,
    };
    mock.on(|api| api.orders().services().list())
        .returns(&vec![book(), pen]);

    let (status, body) = send(&app, get("/summary")).await;
    assert_eq!(status, StatusCode::OK);
    let summary: Summary = serde_json::from_value(body).unwrap();
    assert_eq!(
        summary,
        Summary {
            count: 2,
            cents: 1500
        }
    );
    assert_eq!(mock.calls(|api| api.orders().services().list()).len(), 1);
}

#[tokio::test]
async fn a_failed_listing_is_the_summarys_answer() {
    let (mock, app) = mocked();
    mock.on(|api| api.orders().services().list())
        .answer(Answer::status(503).body_json(&json!({ "message": "down for a moment" })));
    let (status, body) = send(&app, get("/summary")).await;
    // The handler's `?` hands the API's own answer on, after the client's retries.
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["message"], "down for a moment");
    let attempts = mock.calls(|api| api.orders().services().list()).len();
    assert!(
        attempts > 1,
        "a read is retried on 503: {attempts} attempt(s)"
    );
}

#[tokio::test]
async fn a_checkout_places_the_order_it_was_given_with_an_idempotency_key() {
    let (mock, app) = mocked();
    mock.on(|api| api.orders().services().create())
        .returns(&book());
    let order = NewOrder {
        item: "book".into(),
        cents: 1200,
    };
    let (status, body) = send(&app, checkout(&order)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(serde_json::from_value::<Order>(body).unwrap(), book());

    mock.assert_called_with(|api| api.orders().services().create(), &order);
    let placed = mock.calls(|api| api.orders().services().create());
    let key = placed[0].headers.get("idempotency-key").expect("a key");
    assert_eq!(key.len(), 32);
}

#[tokio::test]
async fn the_proxy_route_passes_the_pages_read_to_the_api_and_refuses_what_it_does_not_expose() {
    let (mock, app) = mocked();
    mock.on(|api| api.orders().services().get())
        .returns(&book());

    let read = "/api/request?_s=shop&_g=orders&_m=get&_v=1";
    let (status, body) = send(&app, get(read)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(serde_json::from_value::<Order>(body).unwrap(), book());
    mock.assert_called_with(|api| api.orders().services().get(), &shop::OrderId(1));

    // `orders.list` is not exposed: the proxy refuses it before the API is called.
    let (status, body) = send(&app, get("/api/request?_s=shop&_g=orders&_m=list")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "ENDPOINT_NOT_IN_ROUTES");
    assert!(mock.calls(|api| api.orders().services().list()).is_empty());
    assert!(mock.unanswered().is_empty());
}

/// An orders API on 127.0.0.1 that places each checkout once per idempotency key, and drops
/// the first connection after reading its request, before it answers. The keys it was sent, in
/// order.
async fn dropping_orders_api() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&keys);
    tokio::spawn(async move {
        let mut placed: HashMap<String, u64> = HashMap::new();
        for connection in 0.. {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut chunk = [0; 4096];
            // One request: its head, then a body of `content-length` bytes.
            let key = loop {
                let Ok(n) = socket.read(&mut chunk).await else {
                    break None;
                };
                if n == 0 {
                    break None;
                }
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request).to_lowercase();
                let Some(end) = text.find("\r\n\r\n") else {
                    continue;
                };
                let header = |name: &str| {
                    text[..end]
                        .lines()
                        .find_map(|line| line.strip_prefix(name))
                        .map(|value| value.trim().to_owned())
                };
                let length: usize = header("content-length:").map_or(0, |n| n.parse().unwrap());
                if request.len() >= end + 4 + length {
                    break header("idempotency-key:");
                }
            };
            let Some(key) = key else { continue };
            seen.lock().unwrap().push(key.clone());
            let next = placed.len() as u64 + 1;
            let id = *placed.entry(key).or_insert(next);
            if connection == 0 {
                continue; // placed, and the answer lost
            }
            let body = json!({ "id": id, "item": "book", "cents": 1200 }).to_string();
            let head = "HTTP/1.1 201 Created\r\ncontent-type: application/json";
            let answer = format!("{head}\r\ncontent-length: {}\r\n\r\n{body}", body.len());
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    (base, keys)
}

#[tokio::test]
async fn a_checkout_whose_answer_was_lost_is_sent_again_with_its_key_and_placed_once() {
    let (base, keys) = dropping_orders_api().await;
    let app = app(Caller::new(api(&base).unwrap()).unwrap()).unwrap();
    let order = NewOrder {
        item: "book".into(),
        cents: 1200,
    };
    let (status, body) = send(&app, checkout(&order)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["id"], 1, "placed once: the retry found the first");
    let keys = keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 2, "sent twice: {keys:?}");
    assert_eq!(keys[0], keys[1], "with one key");
}
