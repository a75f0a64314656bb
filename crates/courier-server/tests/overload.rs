//! A source's bound on calls in flight (`max_in_flight`) against a slow upstream on 127.0.0.1:
//! the direct client refuses a call beyond it at once (503 with `Retry-After`, nothing sent),
//! the proxy answers the browser 503 `UPSTREAM_OVERLOADED` with `Retry-After`, reads that share
//! a call in flight take one place, and both recover once the upstream answers.

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use courier_client::{Client, Refused};
use courier_core::{ApiDef, GroupDef, HttpEndpoint};
use courier_server::Proxy;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

mod support;
use support::{header, listen, read_answer, status_of};

/// An upstream that holds every call until the test lets it answer.
struct Upstream {
    addr: SocketAddr,
    arrived: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
}

impl Upstream {
    async fn start() -> Self {
        let arrived = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let (seen, held) = (Arc::clone(&arrived), Arc::clone(&gate));
        let app = Router::new().route(
            "/users/{id}",
            get(move |Path(id): Path<String>| {
                let (seen, held) = (Arc::clone(&seen), Arc::clone(&held));
                async move {
                    seen.fetch_add(1, Ordering::SeqCst);
                    held.acquire().await.unwrap().forget();
                    Json(json!({ "id": id }))
                }
            }),
        );
        Self {
            addr: listen(app).await,
            arrived,
            gate,
        }
    }

    /// Waits until `n` calls have arrived in all.
    async fn arrived(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.arrived.load(Ordering::SeqCst) < n {
            assert!(Instant::now() < deadline, "{n} calls did not arrive");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn count(&self) -> usize {
        self.arrived.load(Ordering::SeqCst)
    }

    /// Lets `n` held calls answer.
    fn answer(&self, n: usize) {
        self.gate.add_permits(n);
    }
}

fn api(upstream: &Upstream, max_in_flight: usize) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{}", upstream.addr))
        .max_in_flight(max_in_flight)
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/:id")),
        )
        .build()
        .unwrap()
}

fn read(client: &Client, id: u32) -> tokio::task::JoinHandle<Value> {
    let client = client.clone();
    tokio::spawn(async move {
        client
            .call("users.get", json!({ "id": id }))
            .await
            .expect("a call within the bound")
            .data
    })
}

#[tokio::test]
async fn the_client_refuses_a_call_over_the_bound_at_once_and_recovers() {
    let upstream = Upstream::start().await;
    let client = Client::new(api(&upstream, 2)).unwrap();
    let first = read(&client, 1);
    let second = read(&client, 2);
    upstream.arrived(2).await;

    let started = Instant::now();
    let error = client
        .call("users.get", json!({ "id": 3 }))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused at once, not queued: {:?}",
        started.elapsed()
    );
    let Some(Refused::Overloaded(overloaded)) = error.refused() else {
        panic!("not the bound's refusal: {error}");
    };
    assert_eq!(overloaded.max_in_flight(), 2);
    let http = error
        .http_error()
        .expect("an HTTP error for a direct caller");
    assert_eq!(http.status, 503);
    assert_eq!(http.headers["retry-after"], "1");
    assert_eq!(http.data["error"]["code"], "UPSTREAM_OVERLOADED");
    assert_eq!(
        upstream.count(),
        2,
        "nothing over the bound reached the upstream"
    );

    upstream.answer(2);
    assert_eq!(first.await.unwrap()["id"], "1");
    assert_eq!(second.await.unwrap()["id"], "2");
    // The places are back: the next call goes through.
    let third = read(&client, 3);
    upstream.arrived(3).await;
    upstream.answer(1);
    assert_eq!(third.await.unwrap()["id"], "3");
}

#[tokio::test]
async fn reads_that_share_a_call_in_flight_take_one_place() {
    let upstream = Upstream::start().await;
    let client = Client::new(api(&upstream, 1)).unwrap();
    let first = read(&client, 7);
    upstream.arrived(1).await;
    // The same read joins the call in flight rather than taking a place of its own.
    let joined = read(&client, 7);
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A different read finds the one place taken.
    let error = client
        .call("users.get", json!({ "id": 8 }))
        .await
        .unwrap_err();
    assert!(
        matches!(error.refused(), Some(Refused::Overloaded(_))),
        "{error}"
    );
    upstream.answer(1);
    assert_eq!(first.await.unwrap()["id"], "7");
    assert_eq!(joined.await.unwrap()["id"], "7");
    assert_eq!(upstream.count(), 1, "the two reads were one upstream call");
}

/// One raw HTTP/1.1 GET: the status, the `retry-after` header and the JSON body.
async fn browser_get(proxy: SocketAddr, id: u32) -> (u16, Option<String>, Value) {
    let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    let request = format!(
        "GET /api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A{id}%7D HTTP/1.1\r\n\
         host: app\r\nconnection: close\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let (head, body) = read_answer(&mut tcp).await;
    let retry_after = header(&head, "retry-after").map(str::to_owned);
    (
        status_of(&head),
        retry_after,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn the_proxy_answers_a_call_over_the_bound_503_with_retry_after_and_recovers() {
    let upstream = Upstream::start().await;
    let app = Proxy::new()
        .source("demo", api(&upstream, 2))
        .into_router()
        .unwrap();
    let proxy = listen(app).await;
    let first = tokio::spawn(browser_get(proxy, 1));
    let second = tokio::spawn(browser_get(proxy, 2));
    upstream.arrived(2).await;

    let started = Instant::now();
    let (status, retry_after, body) = browser_get(proxy, 3).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_eq!(body["error"]["code"], "UPSTREAM_OVERLOADED");
    assert_eq!(upstream.count(), 2);

    upstream.answer(2);
    assert_eq!(first.await.unwrap().0, 200);
    assert_eq!(second.await.unwrap().0, 200);
    let third = tokio::spawn(browser_get(proxy, 3));
    upstream.arrived(3).await;
    upstream.answer(1);
    let (status, _, body) = third.await.unwrap();
    assert_eq!((status, &body["id"]), (200, &json!("3")));
}
