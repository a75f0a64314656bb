//! Methods: the proxy takes GET and POST for calls and GET for streams and sockets; a write
//! over GET and a sensitive read over GET are refused with 405, so a link or an image can never
//! make a write, and sensitive variables never sit in an address.

use crate::harness::{exchange, read, request, site, still_serves};
use serde_json::json;

#[tokio::test]
async fn other_methods_are_refused() {
    let site = site().await;
    for method in ["PUT", "DELETE", "PATCH", "TRACE", "OPTIONS", "PROPFIND"] {
        for path in ["/api/request", "/api/sse", "/api/ws"] {
            let call = request(
                &site,
                method,
                &format!("{path}?_s=demo&_g=users&_m=get"),
                &[],
                "",
            );
            let answer = exchange(site.proxy, &call).await.answer();
            assert_eq!(answer.status, 405, "{method} {path}: {answer:?}");
            assert_eq!(answer.code(), "METHOD_NOT_ALLOWED");
        }
    }
    let connect = format!(
        "CONNECT {} HTTP/1.1\r\nhost: {}\r\n\r\n",
        site.upstream_host(),
        site.proxy
    );
    let exchange = exchange(site.proxy, connect.as_bytes()).await;
    assert!(exchange.responses().iter().all(|r| r.status >= 400));
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_write_or_a_sensitive_read_over_get_is_refused() {
    let site = site().await;
    for (member, vars) in [
        ("create", json!({ "name": "via-a-link" })),
        (
            "login",
            json!({ "user": "ada", "password": "in-the-address" }),
        ),
    ] {
        let answer = read(&site, member, &vars).await;
        assert_eq!(answer.status, 405, "{member}: {answer:?}");
    }
    assert_eq!(site.upstream.count(), 0);
    assert!(!site.upstream.ever_saw("in-the-address"));
    still_serves(&site).await;
}
