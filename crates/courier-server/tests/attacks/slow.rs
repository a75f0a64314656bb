//! Slow clients: connections that hold the proxy's resources without finishing a request — half
//! a head, a head trickled a byte at a time, a body that never arrives, a connection left idle.
//! Each is bounded: the head by the header read timeout (the connection is closed), the body by
//! the body read timeout (408).

use crate::harness::{
    exchange_within, site, site_with, still_serves, timed, BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT,
};
use crate::support::closed_within;
use axum::routing::get;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn half_a_head_is_cut_off_at_the_header_read_timeout() {
    let site = site().await;
    let mut tcp = TcpStream::connect(site.proxy).await.unwrap();
    tcp.write_all(
        b"GET /api/request?_s=demo&_g=users&_m=get&_v=1 HTTP/1.1\r\nhost: x\r\nx-tenant: ",
    )
    .await
    .unwrap();
    let (closed, took) = timed(closed_within(&mut tcp, Duration::from_secs(5))).await;
    assert!(closed, "the connection was left open");
    assert!(
        took >= HEADER_READ_TIMEOUT - Duration::from_millis(100),
        "{took:?}"
    );
    assert!(
        took < HEADER_READ_TIMEOUT + Duration::from_secs(1),
        "{took:?}"
    );
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_trickled_head_is_cut_off_however_often_it_sends() {
    let site = site().await;
    let mut tcp = TcpStream::connect(site.proxy).await.unwrap();
    let head = b"GET /api/request?_s=demo&_g=users&_m=get&_v=1 HTTP/1.1\r\nhost: x\r\nx-pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let start = std::time::Instant::now();
    let mut cut = false;
    for byte in head {
        // A byte every 100 ms: each read is quick, the whole head would take seconds.
        if tcp.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if start.elapsed() > HEADER_READ_TIMEOUT + Duration::from_secs(2) {
            break;
        }
    }
    let closed = cut || closed_within(&mut tcp, Duration::from_millis(200)).await;
    assert!(closed, "a trickled head kept its connection");
    assert!(start.elapsed() < HEADER_READ_TIMEOUT + Duration::from_secs(2));
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_body_that_never_arrives_is_refused_at_the_body_read_timeout() {
    let site = site().await;
    let attack = format!(
        "POST /api/request?_s=demo&_g=users&_m=search HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"variables\"",
        site.proxy
    );
    let (exchange, took) = timed(exchange_within(
        site.proxy,
        attack.as_bytes(),
        Duration::from_secs(5),
    ))
    .await;
    let answer = exchange.answer();
    assert_eq!(answer.status, 408, "{answer:?}");
    assert_eq!(answer.code(), "REQUEST_TIMEOUT");
    assert!(
        took >= BODY_READ_TIMEOUT - Duration::from_millis(100),
        "{took:?}"
    );
    assert!(exchange.closed, "the connection is closed after a 408");
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let site = site().await;
    let mut tcp = TcpStream::connect(site.proxy).await.unwrap();
    let (closed, took) = timed(closed_within(&mut tcp, Duration::from_secs(5))).await;
    assert!(closed, "a connection that never sends is closed");
    assert!(
        took < HEADER_READ_TIMEOUT + Duration::from_secs(1),
        "{took:?}"
    );
    // And between keep-alive requests.
    let call = format!(
        "GET /api/request?_s=demo&_g=users&_m=get&_v=1 HTTP/1.1\r\nhost: {}\r\n\r\n",
        site.proxy
    );
    let (exchange, took) = timed(exchange_within(
        site.proxy,
        call.as_bytes(),
        Duration::from_secs(5),
    ))
    .await;
    assert_eq!(exchange.answer().status, 200);
    assert!(exchange.closed, "the idle keep-alive connection is closed");
    assert!(
        took < HEADER_READ_TIMEOUT + Duration::from_secs(1),
        "{took:?}"
    );
    still_serves(&site).await;
}

#[tokio::test]
async fn a_proxy_mounted_in_an_app_is_bounded_the_same() {
    let site = site_with(|proxy| proxy.route("/health", get(|| async { "ok" }))).await;
    let mut tcp = TcpStream::connect(site.proxy).await.unwrap();
    tcp.write_all(b"GET /health HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    assert!(closed_within(&mut tcp, HEADER_READ_TIMEOUT + Duration::from_secs(1)).await);
    let health = format!(
        "GET /health HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        site.proxy
    );
    let answer = exchange_within(site.proxy, health.as_bytes(), Duration::from_secs(2))
        .await
        .answer();
    assert_eq!(answer.body, b"ok");
    still_serves(&site).await;
}
