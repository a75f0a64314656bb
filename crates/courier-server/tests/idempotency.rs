//! Writes with an idempotency key through the proxy, over real sockets: the key a browser made
//! reaches the upstream for an endpoint that sets `idempotency_key`, and the proxy's retry sends
//! the write again with it when the upstream drops the connection before answering; for any
//! other write the browser's key is kept out and the write is sent once.

use courier_core::{ApiDef, GroupDef, HttpEndpoint};
use courier_server::Proxy;
use courier_test_support::writes::dropping_upstream;
use std::net::SocketAddr;

mod support;

/// A proxy in front of `upstream` with two writes: `orders.create`, keyed, and `orders.plain`.
async fn proxy(upstream: SocketAddr) -> SocketAddr {
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .group(
            "orders",
            GroupDef::new()
                .expose(true)
                .endpoint(
                    "create",
                    HttpEndpoint::post("/orders").idempotency_key(true),
                )
                .endpoint("plain", HttpEndpoint::post("/orders")),
        )
        .build()
        .unwrap();
    let app = Proxy::new().source("demo", api).into_router().unwrap();
    courier_test_support::serve(app).await
}

/// A browser's POST of `endpoint` with an `idempotency-key`: the answer's status and body.
async fn post(proxy: SocketAddr, endpoint: &str, key: &str) -> (u16, String) {
    let body = r#"{"variables":{"item":"book"}}"#;
    let request = format!(
        "POST /api/request?_s=demo&_g=orders&_m={endpoint} HTTP/1.1\r\nhost: app\r\n\
         content-type: application/json\r\nidempotency-key: {key}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut tcp, request.as_bytes())
        .await
        .unwrap();
    let (head, body) = support::read_answer(&mut tcp).await;
    (support::status_of(&head), body)
}

#[tokio::test]
async fn the_browsers_key_crosses_for_a_keyed_write_which_is_retried_with_it() {
    let (upstream, keys) = dropping_upstream().await;
    let proxy = proxy(upstream).await;
    let (status, body) = post(proxy, "create", "browser-key-1").await;
    assert_eq!((status, body.as_str()), (201, r#"{"applied":1}"#));
    let keys = keys.lock().unwrap().clone();
    assert_eq!(
        keys,
        [
            Some("browser-key-1".to_owned()),
            Some("browser-key-1".to_owned())
        ],
        "sent twice, with the browser's key both times"
    );
}

#[tokio::test]
async fn another_writes_key_is_kept_out_and_it_is_sent_once() {
    let (upstream, keys) = dropping_upstream().await;
    let proxy = proxy(upstream).await;
    let (status, _) = post(proxy, "plain", "browser-key-2").await;
    assert_eq!(
        status, 502,
        "the lost answer is the upstream's failure, not retried"
    );
    assert_eq!(*keys.lock().unwrap(), [None]);
}
