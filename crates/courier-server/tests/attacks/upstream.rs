//! A hostile or broken upstream: one that answers garbage, hangs up mid-answer, never answers,
//! is not there, or sends an answer nobody asked for to be taken for the next browser's. The browser gets the proxy's 502 or 504 in JSON, never the upstream's
//! bytes raw, and the proxy goes on serving.

use crate::harness::{exchange_within, request, site, still_serves};
use courier_core::{ApiDef, GroupDef, HttpEndpoint};
use courier_server::Proxy;
use courier_test_support::tls::read_head;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An upstream that answers every connection with `answer`, then hangs up.
async fn answering(answer: &'static [u8]) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = tcp.read(&mut buf).await;
                let _ = tcp.write_all(answer).await;
            });
        }
    });
    addr
}

/// A proxy in front of `upstream`, with one exposed read that gives up after 500 ms.
async fn proxy_to(upstream: SocketAddr) -> SocketAddr {
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .group(
            "g",
            GroupDef::new().expose(true).endpoint(
                "read",
                HttpEndpoint::get("/r")
                    .timeout(Duration::from_millis(500))
                    .retry(false),
            ),
        )
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Proxy::new().source("broken", api).serve(listener));
    addr
}

async fn call(proxy: SocketAddr) -> crate::harness::Answer {
    let call = format!(
        "GET /api/request?_s=broken&_g=g&_m=read HTTP/1.1\r\nhost: {proxy}\r\nconnection: close\r\n\r\n"
    );
    exchange_within(proxy, call.as_bytes(), Duration::from_secs(5))
        .await
        .answer()
}

#[tokio::test]
async fn a_broken_upstream_is_a_502_in_json_or_a_cut_answer() {
    for answer in [
        &b"not http at all\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\ntruncated",
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 7\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        b"",
    ] {
        let proxy = proxy_to(answering(answer).await).await;
        let call = format!(
            "GET /api/request?_s=broken&_g=g&_m=read HTTP/1.1\r\nhost: {proxy}\r\nconnection: close\r\n\r\n"
        );
        let exchange = exchange_within(proxy, call.as_bytes(), Duration::from_secs(5)).await;
        let what = String::from_utf8_lossy(answer);
        assert!(exchange.closed, "{what}");
        // Either the head never made sense (the proxy's 502), or it did and the body broke off:
        // then the browser's connection is cut too, never ended as if the body were whole.
        match exchange.responses().as_slice() {
            [] => {}
            [response] if response.status == 502 => {
                assert_eq!(response.code(), "UPSTREAM_UNREACHABLE", "{what}");
            }
            [response] => {
                assert_eq!(response.status, 200, "{what}: {response:?}");
                let raw = String::from_utf8_lossy(&exchange.raw);
                assert!(
                    !raw.ends_with("0\r\n\r\n"),
                    "{what}: a broken body must not end cleanly: {raw:?}"
                );
            }
            many => panic!("{what}: {many:?}"),
        }
        // The proxy itself is fine: the next call gets the same honest answer.
        let again = exchange_within(proxy, call.as_bytes(), Duration::from_secs(5)).await;
        assert!(again.closed);
    }
}

#[tokio::test]
async fn a_silent_or_missing_upstream_is_a_504_or_502() {
    // Accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = silent.accept().await {
            held.push(tcp);
        }
    });
    let answer = call(proxy_to(silent_addr).await).await;
    assert_eq!(answer.status, 504, "{answer:?}");
    assert_eq!(answer.code(), "UPSTREAM_TIMEOUT");

    // Nothing listens.
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone_addr = gone.local_addr().unwrap();
    drop(gone);
    let answer = call(proxy_to(gone_addr).await).await;
    assert_eq!(answer.status, 502, "{answer:?}");
    assert_eq!(answer.code(), "UPSTREAM_UNREACHABLE");
}

#[tokio::test]
async fn an_upstream_slower_than_the_endpoints_timeout_is_a_504() {
    let site = site().await;
    let call = request(
        &site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=slow",
        &[],
        "",
    );
    let answer = exchange_within(site.proxy, &call, Duration::from_secs(5))
        .await
        .answer();
    assert_eq!(answer.status, 504, "{answer:?}");
    assert_eq!(answer.code(), "UPSTREAM_TIMEOUT");
    still_serves(&site).await;
}

/// An upstream whose connections answer their first request, then send a second answer unasked
/// — meant for whichever call goes on the connection next — and any later request with
/// `{"later":true}`; with the count of connections it accepted.
async fn answering_twice() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if read_head(&mut tcp).await.is_none() {
                    return;
                }
                let answer = |body: &str| {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                };
                let both = answer(r#"{"own":true}"#) + &answer(r#"{"stolen":true}"#);
                let _ = tcp.write_all(both.as_bytes()).await;
                while read_head(&mut tcp).await.is_some() {
                    let later = answer(r#"{"later":true}"#);
                    if tcp.write_all(later.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn an_answer_the_upstream_sent_unasked_never_reaches_the_next_browser() {
    let (upstream, accepted) = answering_twice().await;
    let proxy = proxy_to(upstream).await;
    // One browser after another, each on a connection of its own, through the one upstream
    // connection the proxy would keep: each gets the answer to its own call.
    for browser in 1..=4 {
        let answer = call(proxy).await;
        assert_eq!(answer.status, 200, "browser {browser}: {answer:?}");
        assert_eq!(
            answer.json(),
            serde_json::json!({ "own": true }),
            "browser {browser}"
        );
    }
    // Every upstream connection that carried bytes nobody asked for was left, never reused.
    assert_eq!(accepted.load(Ordering::SeqCst), 4);
}
