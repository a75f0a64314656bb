//! Bodies: the shape a call's body must have, and how much of it the proxy reads. An oversized
//! body is refused from its declared length before a byte of it is read; a chunked one as soon
//! as it grows past the limit; broken framing and deep nesting are refused as the browser's
//! mistake; a REST-shaped body is never taken as "no variables".

use crate::harness::{
    exchange, exchange_within, good_write_headers, pairs, request, site, still_serves, timed,
    BODY_LIMIT, BODY_READ_TIMEOUT,
};
use std::time::Duration;

const SEARCH: &str = "/api/request?_s=demo&_g=users&_m=search";

#[tokio::test]
async fn a_body_without_variables_is_refused_not_emptied() {
    let site = site().await;
    for body in [
        r#"{"q":"ada"}"#,
        "{}",
        r#"{"variables":{"q":"ada"},"_s":"admin"}"#,
        "[]",
        "\"variables\"",
        r#"{"variables":"#,
    ] {
        let call = request(
            &site,
            "POST",
            SEARCH,
            &[("content-type", "application/json")],
            body,
        );
        let answer = exchange(site.proxy, &call).await.answer();
        assert_eq!(answer.status, 400, "{body}: {answer:?}");
        assert_eq!(answer.code(), "BAD_REQUEST");
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(r#"{"variables": …}"#), "{body}: {message}");
    }
    // A write is never sent empty in place of the body the page meant.
    let headers = good_write_headers(&site);
    let write = request(
        &site,
        "POST",
        "/api/request?_s=demo&_g=users&_m=create",
        &pairs(&headers),
        r#"{"name":"Ada"}"#,
    );
    assert_eq!(exchange(site.proxy, &write).await.answer().status, 400);
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_from_the_head_alone() {
    let site = site().await;
    // The head promises 10 MB and no byte of it is sent: the answer comes at once, not after
    // a body read timeout, and not after the limit's worth of bytes.
    let head = format!(
        "POST {SEARCH} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: 10000000\r\n\r\n",
        site.proxy
    );
    let (exchange, took) = timed(exchange_within(
        site.proxy,
        head.as_bytes(),
        Duration::from_millis(500),
    ))
    .await;
    let answer = exchange.answer();
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(answer.code(), "PAYLOAD_TOO_LARGE");
    assert!(
        took < BODY_READ_TIMEOUT + Duration::from_millis(500),
        "{took:?}"
    );
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_chunked_body_is_refused_once_it_grows_past_the_limit() {
    let site = site().await;
    let chunk = "x".repeat(16 * 1024);
    let mut attack = format!(
        "POST {SEARCH} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        site.proxy
    );
    for _ in 0..(BODY_LIMIT / chunk.len() + 2) {
        attack.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    attack.push_str("0\r\n\r\n");
    let answer = exchange(site.proxy, attack.as_bytes()).await.answer();
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn broken_chunked_framing_is_a_bad_request() {
    let site = site().await;
    for framing in [
        "zz\r\n{}\r\n0\r\n\r\n",
        "2\r\n{}XX0\r\n\r\n",
        "ffffffffffffffffff\r\n{}\r\n",
    ] {
        let attack = format!(
            "POST {SEARCH} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n{framing}",
            site.proxy
        );
        let exchange = exchange(site.proxy, attack.as_bytes()).await;
        let statuses: Vec<u16> = exchange.responses().iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            [400],
            "{framing:?}: {}",
            String::from_utf8_lossy(&exchange.raw)
        );
        assert!(exchange.closed);
    }
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn deeply_nested_or_huge_variables_are_refused_or_bounded() {
    let site = site().await;
    let deep = format!(
        r#"{{"variables":{}1{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let call = request(
        &site,
        "POST",
        SEARCH,
        &[("content-type", "application/json")],
        &deep,
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 400, "{answer:?}");
    // Deep nesting in `_v` too.
    let deep_v = format!("{}1{}", "%5B".repeat(3000), "%5D".repeat(3000));
    let call = request(&site, "GET", &format!("{SEARCH}&_v={deep_v}"), &[], "");
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 400, "{answer:?}");
    // A body of exactly the limit is still read; it is the variables that are refused.
    let padding = "a".repeat(BODY_LIMIT - r#"{"variables":{"q":""}}"#.len());
    let at_limit = format!(r#"{{"variables":{{"q":"{padding}"}}}}"#);
    assert_eq!(at_limit.len(), BODY_LIMIT);
    let call = request(
        &site,
        "POST",
        SEARCH,
        &[("content-type", "application/json")],
        &at_limit,
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(
        answer.status, 200,
        "a body of exactly the limit: {answer:?}"
    );
    assert_eq!(site.upstream.count(), 1);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_form_that_does_not_parse_is_refused() {
    let site = site().await;
    for (kind, body, status) in [
        ("multipart/form-data", "--x\r\n\r\n", 400),
        (
            "multipart/form-data; boundary=x",
            "--x\r\ncontent-disposition: form-data\r\n\r\nno end",
            400,
        ),
        ("multipart/form-data; boundary=x", "garbage", 400),
        ("text/plain", "{}", 415),
        ("application/x-www-form-urlencoded", "variables=1", 415),
    ] {
        let call = request(&site, "POST", SEARCH, &[("content-type", kind)], body);
        let answer = exchange(site.proxy, &call).await.answer();
        assert_eq!(answer.status, status, "{kind}: {answer:?}");
        let code = if status == 400 {
            "BAD_REQUEST"
        } else {
            "UNSUPPORTED_MEDIA_TYPE"
        };
        assert_eq!(answer.code(), code);
    }
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}
