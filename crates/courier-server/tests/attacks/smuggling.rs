//! Request smuggling: a request whose length the proxy and something behind or in front of it
//! could read differently. The proxy never forwards a browser's bytes — it reads one whole call
//! and makes a request of its own — so a smuggled request can at most be a second call on the
//! attacker's own connection. These check that every ambiguous framing is refused or read one
//! safe way, and that no smuggled request reaches the upstream.

use crate::harness::{exchange, site, still_serves};

/// The head of a write through the proxy, framing headers to follow.
fn head(site: &crate::harness::Site) -> String {
    format!(
        "POST /api/request?_s=demo&_g=users&_m=search HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n",
        site.proxy
    )
}

const SMUGGLED: &str =
    "GET /api/request?_s=demo&_g=admin&_m=purge&smuggled=1 HTTP/1.1\r\nhost: x\r\n\r\n";

#[tokio::test]
async fn content_length_and_transfer_encoding_together_close_the_connection() {
    let site = site().await;
    // CL.TE: a front end that trusts content-length would pass the smuggled request on as
    // body; hyper reads the chunked framing (RFC 9112 §6.3) and will not keep the connection.
    let body = format!("0\r\n\r\n{SMUGGLED}");
    let attack = format!(
        "{}content-length: {}\r\ntransfer-encoding: chunked\r\n\r\n{body}",
        head(&site),
        body.len()
    );
    let exchange = exchange(site.proxy, attack.as_bytes()).await;
    assert!(
        exchange.closed,
        "the connection does not live on past an ambiguous request"
    );
    let responses = exchange.responses();
    assert!(
        responses.len() <= 1,
        "one request read at most: {responses:?}"
    );
    assert!(!site.upstream.ever_saw("smuggled"));
    assert!(!site.upstream.ever_saw("/admin"));
    still_serves(&site).await;
}

#[tokio::test]
async fn transfer_encoding_then_content_length_is_read_chunked_only() {
    let site = site().await;
    // TE.CL: the chunk holds a whole second request; a reader of content-length would take
    // only its first bytes and run the rest as a request.
    let chunk = format!("{{\"variables\":{{\"q\":\"{}\"}}}}", "x".repeat(8));
    let attack = format!(
        "{}transfer-encoding: chunked\r\ncontent-length: 4\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n{SMUGGLED}",
        head(&site),
        chunk.len()
    );
    let exchange = exchange(site.proxy, attack.as_bytes()).await;
    let responses = exchange.responses();
    assert_eq!(
        responses.len(),
        1,
        "the smuggled request is not answered: {responses:?}"
    );
    assert!(exchange.closed);
    assert!(!site.upstream.ever_saw("smuggled"));
    assert!(!site.upstream.ever_saw("/admin"));
    still_serves(&site).await;
}

#[tokio::test]
async fn two_different_content_lengths_are_refused() {
    let site = site().await;
    let attack = format!(
        "{}content-length: 2\r\ncontent-length: 40\r\n\r\n{{}}{SMUGGLED}",
        head(&site)
    );
    let exchange = exchange(site.proxy, attack.as_bytes()).await;
    assert_eq!(exchange.answer().status, 400);
    assert!(exchange.closed);
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn obfuscated_transfer_encodings_are_refused() {
    let site = site().await;
    for framing in [
        "transfer-encoding: xchunked\r\n",
        "transfer-encoding: chunked, identity\r\n",
        "transfer-encoding: identity\r\n",
        "transfer-encoding : chunked\r\n",
        "transfer-encoding:\x0bchunked\r\n",
        " transfer-encoding: chunked\r\n",
        "transfer-encoding: chunked\r\ntransfer-encoding: x\r\n",
    ] {
        let attack = format!(
            "{}{framing}content-length: 5\r\n\r\n0\r\n\r\n{SMUGGLED}",
            head(&site)
        );
        let exchange = exchange(site.proxy, attack.as_bytes()).await;
        let statuses: Vec<u16> = exchange.responses().iter().map(|r| r.status).collect();
        assert_eq!(statuses, [400], "{framing:?}");
        assert!(exchange.closed, "{framing:?}");
    }
    assert!(!site.upstream.ever_saw("smuggled"));
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_transfer_encoding_on_http_1_0_is_refused() {
    let site = site().await;
    let attack = format!(
        "POST /api/request?_s=demo&_g=users&_m=search HTTP/1.0\r\nhost: {}\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n{SMUGGLED}",
        site.proxy
    );
    let exchange = exchange(site.proxy, attack.as_bytes()).await;
    assert_eq!(exchange.answer().status, 400);
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn pipelined_calls_are_each_their_own_call() {
    let site = site().await;
    // Two honest calls back to back on one connection: each is read, checked and sent as one
    // call; nothing of one leaks into the other.
    let one = format!(
        "GET /api/request?_s=demo&_g=users&_m=get&_v=1 HTTP/1.1\r\nhost: {}\r\n\r\n",
        site.proxy
    );
    let two = format!(
        "GET /api/request?_s=demo&_g=admin&_m=purge HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        site.proxy
    );
    let exchange = exchange(site.proxy, format!("{one}{two}").as_bytes()).await;
    let statuses: Vec<u16> = exchange.responses().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 404]);
    assert_eq!(site.upstream.count(), 1);
    assert_eq!(site.upstream.last().target, "/users/1");
    still_serves(&site).await;
}
