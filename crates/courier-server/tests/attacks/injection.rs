//! Injection and traversal through the variables: CR, LF and NUL that would end a header or a
//! request line, `..` and slashes that would climb out of the endpoint's path, and addresses
//! that would send the call to another host (SSRF). A variable becomes exactly one path segment
//! or one search parameter, percent-encoded, on the source's own host.

use crate::harness::{exchange, read, request, site, still_serves};
use serde_json::json;

#[tokio::test]
async fn crlf_and_nul_in_variables_stay_inside_their_segment() {
    let site = site().await;
    for id in [
        "7\r\nx-injected: 1",
        "7\r\n\r\nGET /admin/purge HTTP/1.1",
        "7\u{0}admin",
        "7 HTTP/1.1\r\nhost: evil.example",
    ] {
        let answer = read(&site, "get", &json!({ "id": id })).await;
        assert_eq!(answer.status, 200, "{id:?}: {answer:?}");
        let seen = site.upstream.last();
        assert!(
            seen.target.starts_with("/users/7"),
            "{id:?}: {}",
            seen.target
        );
        assert_eq!(
            seen.target.matches('/').count(),
            2,
            "one segment: {}",
            seen.target
        );
        assert!(
            !seen.target.contains(['\r', '\n', '\0', ' ']),
            "{:?}",
            seen.target
        );
        assert!(seen.headers.get("x-injected").is_none());
        assert_eq!(
            seen.headers["host"],
            site.upstream_host(),
            "{id:?}: the source's own host"
        );
    }
    assert!(!site
        .upstream
        .seen()
        .iter()
        .any(|s| s.target.starts_with("/admin")));
    still_serves(&site).await;
}

#[tokio::test]
async fn crlf_and_nul_in_search_parameters_are_encoded() {
    let site = site().await;
    let answer = read(
        &site,
        "search",
        &json!({ "q": "a\r\nx-injected: 1", "z": "\u{0}", "&admin": "=1#frag" }),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let seen = site.upstream.last();
    assert!(seen.target.starts_with("/users?"), "{}", seen.target);
    assert!(
        !seen.target.contains(['\r', '\n', '\0', '#', ' ']),
        "{:?}",
        seen.target
    );
    assert!(seen.target.contains("%0D%0A"), "{}", seen.target);
    assert!(seen.headers.get("x-injected").is_none());
    still_serves(&site).await;
}

#[tokio::test]
async fn path_parameters_cannot_climb_out_of_the_endpoint() {
    let site = site().await;
    // A segment that is a dot-segment on its own would be removed by the upstream's path
    // normalisation: refused as variables the endpoint cannot use.
    for id in ["..", "."] {
        let answer = read(&site, "get", &json!({ "id": id })).await;
        assert_eq!(answer.status, 400, "{id:?}: {answer:?}");
        assert_eq!(answer.code(), "BAD_REQUEST");
    }
    assert_eq!(site.upstream.count(), 0);
    // Anything else is one segment, every `/`, `\\` and `%` in it encoded, on the source's
    // own host.
    for (id, sent) in [
        ("../admin/purge", "/users/..%2Fadmin%2Fpurge"),
        ("../../admin", "/users/..%2F..%2Fadmin"),
        ("%2e%2e", "/users/%252e%252e"),
        ("..%2fadmin", "/users/..%252fadmin"),
        ("a/b", "/users/a%2Fb"),
        ("/admin", "/users/%2Fadmin"),
        ("\\..\\admin", "/users/%5C..%5Cadmin"),
        (
            "http://evil.example/",
            "/users/http%3A%2F%2Fevil.example%2F",
        ),
        ("//evil.example/x", "/users/%2F%2Fevil.example%2Fx"),
        ("?x=1#f", "/users/%3Fx%3D1%23f"),
    ] {
        let answer = read(&site, "get", &json!({ "id": id })).await;
        assert_eq!(answer.status, 200, "{id:?}: {answer:?}");
        let seen = site.upstream.last();
        assert_eq!(seen.target, sent, "{id:?}");
        assert_eq!(seen.headers["host"], site.upstream_host(), "{id:?}");
    }
    assert!(!site
        .upstream
        .seen()
        .iter()
        .any(|s| s.target.starts_with("/admin")));
    still_serves(&site).await;
}

#[tokio::test]
async fn an_absolute_request_target_never_changes_the_upstream() {
    let site = site().await;
    // The request line names another host: the proxy routes by path and calls the source's
    // upstream, never the one in the request line.
    let absolute = format!(
        "GET http://evil.example/api/request?_s=demo&_g=users&_m=get&_v=5 HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        site.proxy
    );
    let answer = exchange(site.proxy, absolute.as_bytes()).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    let seen = site.upstream.last();
    assert_eq!(seen.target, "/users/5");
    assert_eq!(seen.headers["host"], site.upstream_host());
    still_serves(&site).await;
}

#[tokio::test]
async fn raw_control_bytes_in_a_header_are_refused_by_the_parser() {
    let site = site().await;
    for header in [
        "x-tenant: a\rx-injected: 1\r\n",
        "x-tenant: a\0b\r\n",
        "x-tenant: a\r\n b\r\n",
        "x tenant: a\r\n",
    ] {
        let attack = format!(
            "GET /api/request?_s=demo&_g=users&_m=get&_v=1 HTTP/1.1\r\nhost: {}\r\n{header}connection: close\r\n\r\n",
            site.proxy
        );
        let exchange = exchange(site.proxy, attack.as_bytes()).await;
        let statuses: Vec<u16> = exchange.responses().iter().map(|r| r.status).collect();
        assert_eq!(statuses, [400], "{header:?}");
    }
    assert_eq!(site.upstream.count(), 0, "nothing reached the upstream");
    still_serves(&site).await;
}

#[tokio::test]
async fn a_line_break_in_an_events_name_cannot_forge_event_stream_fields() {
    let site = site().await;
    let forged = json!({ "name": "tick\nevent: admin\ndata: {\"forged\":true}\n" });
    let variables: String =
        form_urlencoded::byte_serialize(forged.to_string().as_bytes()).collect();
    let open = request(
        &site,
        "GET",
        &format!("/api/sse?_s=demo&_g=users&_m=named&_v={variables}"),
        &[],
        "",
    );
    let answer = exchange(site.proxy, &open).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    let stream = String::from_utf8_lossy(&answer.body);
    assert!(!stream.contains("event: admin"), "{stream}");
    assert!(!stream.contains("\"forged\""), "{stream}");
    // The handler's event cannot be written: the stream fails as for a handler's error.
    assert!(stream.contains("event: error"), "{stream}");
    assert!(stream.contains("STREAM_FAILED"), "{stream}");
    // A name without line breaks goes out as it is.
    let plain = request(
        &site,
        "GET",
        "/api/sse?_s=demo&_g=users&_m=named&_v=%7B%22name%22%3A%22tick%22%7D",
        &[],
        "",
    );
    let stream = exchange(site.proxy, &plain).await.answer().body;
    let stream = String::from_utf8_lossy(&stream);
    let first = stream.split("\n\n").next().unwrap_or_default();
    assert!(
        first.lines().any(|line| line == "event: tick") && first.contains("data: {\"n\":1}"),
        "{stream}"
    );
    assert!(stream.contains("data: {\"n\":2}"), "{stream}");
    still_serves(&site).await;
}
