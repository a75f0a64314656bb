//! Headers across the proxy: `host` and the hop-by-hop headers never cross, in either direction;
//! only allow-listed names cross at all, however they are spelt; a header the source sets wins
//! over the browser's copy.

use crate::harness::{exchange, request, site, still_serves};

const READ: &str = "/api/request?_s=demo&_g=users&_m=get&_v=7";

#[tokio::test]
async fn host_and_hop_by_hop_headers_never_reach_the_upstream() {
    let site = site().await;
    let call = request(
        &site,
        "GET",
        READ,
        &[
            ("connection", "x-tenant"),
            ("x-tenant", "named-by-connection"),
            ("keep-alive", "timeout=600"),
            ("te", "trailers"),
            ("trailer", "x-signature"),
            ("upgrade", "h2c"),
            ("proxy-connection", "keep-alive"),
            ("proxy-authorization", "Basic cHJveHk6c2VjcmV0"),
            ("x-forwarded-host", "evil.example"),
        ],
        "",
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    let seen = site.upstream.last();
    assert_eq!(
        seen.headers["host"],
        site.upstream_host(),
        "the upstream's own Host"
    );
    for name in [
        "x-tenant",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "proxy-authorization",
        "x-forwarded-host",
    ] {
        assert!(
            seen.headers.get(name).is_none(),
            "{name} reached the upstream: {:?}",
            seen.headers
        );
    }
    assert!(!site.upstream.ever_saw("cHJveHk6c2VjcmV0"));
    still_serves(&site).await;
}

#[tokio::test]
async fn hop_by_hop_headers_of_the_upstream_never_reach_the_browser() {
    let site = site().await;
    let call = request(
        &site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=hop",
        &[],
        "",
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    // `x-tenant` is allow-listed, but this answer's `connection` names it: it was meant for
    // the proxy's connection only.
    for name in [
        "x-tenant",
        "keep-alive",
        "proxy-authenticate",
        "trailer",
        "x-internal",
    ] {
        assert!(
            answer.header(name).is_none(),
            "{name} reached the browser: {answer:?}"
        );
    }
    assert_ne!(answer.header("connection"), Some("x-tenant"));
    still_serves(&site).await;
}

#[tokio::test]
async fn only_allow_listed_names_cross_however_they_are_spelt() {
    let site = site().await;
    let call = request(
        &site,
        "GET",
        READ,
        &[
            ("X-TENANT", "acme"),
            ("x_tenant", "underscore"),
            ("x-tenant-id", "longer"),
            ("authorization", "Bearer from-the-page"),
            ("x-api-key", "from-the-page"),
            ("cookie", "sid=victim; other=1"),
        ],
        "",
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(answer.status, 200, "{answer:?}");
    let seen = site.upstream.last();
    assert_eq!(
        seen.headers["x-tenant"], "acme",
        "header names are case-insensitive"
    );
    assert_eq!(seen.headers.get_all("x-tenant").iter().count(), 1);
    assert!(seen.headers.get("x_tenant").is_none());
    assert!(seen.headers.get("x-tenant-id").is_none());
    assert!(seen.headers.get("authorization").is_none());
    assert_eq!(
        seen.headers["x-api-key"], "source-secret",
        "the source's own value wins"
    );
    assert_eq!(seen.headers.get_all("x-api-key").iter().count(), 1);
    // The session takes only its own cookies, and only the session decides which cross.
    assert_eq!(seen.headers["cookie"], "sid=victim");
    // Back to the browser: the allow-listed header, never the upstream's others.
    assert_eq!(answer.header("x-tenant"), Some("from-upstream"));
    assert!(answer.header("x-internal").is_none());
    still_serves(&site).await;
}

#[tokio::test]
async fn a_header_too_large_for_the_parser_is_refused() {
    let site = site().await;
    let huge = "a".repeat(200 * 1024);
    let call = request(&site, "GET", READ, &[("x-tenant", &huge)], "");
    let exchange = exchange(site.proxy, &call).await;
    let statuses: Vec<u16> = exchange.responses().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [431], "a head over 64 KiB");
    assert!(!site.upstream.ever_saw(&huge[..1024]));
    still_serves(&site).await;
}
