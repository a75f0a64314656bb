//! Exposure: only endpoints marked exposed are reachable, however the address is spelt, and
//! the boundary record names nothing else.

use crate::harness::{api, exchange, request, site, still_serves};
use courier_core::routes::Routes;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

#[tokio::test]
async fn an_unexposed_endpoint_is_unreachable_however_it_is_named() {
    let site = site().await;
    // Each is refused: 404 for a name that is not exposed, 400 for an address that could
    // never name an endpoint (a repeated parameter, an empty or dotted name).
    for (query, status) in [
        ("_s=demo&_g=admin&_m=purge", 404),
        ("_s=demo&_g=admin&_m=list", 404),
        ("_s=demo&_g=users&_m=purge", 404),
        ("_s=demo&_g=users.admin&_m=purge", 404),
        ("_s=demo&_g=ADMIN&_m=purge", 404),
        ("_s=demo&_g=admin%00&_m=purge", 404),
        ("_s=demo&_g=users&_m=__proto__", 404),
        ("_s=demo&_g=users&_m=get&_g=admin", 400),
        ("_s=demo&_s=other&_g=users&_m=get", 400),
        ("_s=demo&_g=users.&_m=get", 400),
        ("_s=demo&_g=.users&_m=get", 400),
        ("_s=demo&_g=users&_m=get.x", 400),
        ("_s=demo&_g=users&_m=", 400),
        ("_s=&_g=users&_m=get", 400),
        ("_s=nope&_g=users&_m=get", 404),
        ("_s=demo&_g=users&_m=%E0%80", 404),
        ("_s=demo&_g=users&_m=events", 404),
        ("_s=demo&_g=users&_m=room", 404),
    ] {
        for method in ["GET", "POST"] {
            let headers: &[(&str, &str)] = if method == "POST" {
                &[("content-type", "application/json")]
            } else {
                &[]
            };
            let body = if method == "POST" {
                r#"{"variables":null}"#
            } else {
                ""
            };
            let call = request(
                &site,
                method,
                &format!("/api/request?{query}"),
                headers,
                body,
            );
            let answer = exchange(site.proxy, &call).await.answer();
            assert_eq!(answer.status, status, "{method} {query}: {answer:?}");
            let code = if status == 404 {
                "ENDPOINT_NOT_IN_ROUTES"
            } else {
                "BAD_REQUEST"
            };
            assert_eq!(answer.code(), code, "{method} {query}");
        }
    }
    assert!(
        !site
            .upstream
            .seen()
            .iter()
            .any(|s| s.target.starts_with("/admin")),
        "an unexposed endpoint was called"
    );
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[tokio::test]
async fn a_stream_or_channel_path_does_not_reach_unexposed_endpoints_either() {
    let site = site().await;
    for target in [
        "/api/sse?_s=demo&_g=admin&_m=list",
        "/api/ws?_s=demo&_g=admin&_m=list",
        "/api/sse?_s=demo&_g=users&_m=get&_v=1",
    ] {
        let answer = exchange(site.proxy, &request(&site, "GET", target, &[], ""))
            .await
            .answer();
        assert_eq!(answer.status, 404, "{target}: {answer:?}");
        assert_eq!(answer.code(), "ENDPOINT_NOT_IN_ROUTES");
    }
    assert_eq!(site.upstream.count(), 0);
    still_serves(&site).await;
}

#[test]
fn the_boundary_names_only_what_a_browser_may_call() {
    let api = api(
        "127.0.0.1:9".parse().unwrap(),
        Arc::new(AtomicUsize::new(0)),
    );
    let json = Routes::boundary("demo", &api).to_json();
    assert!(!json.contains("admin"), "{json}");
    assert!(!json.contains("purge"), "{json}");
    let boundary: Routes = serde_json::from_str(&json).unwrap();
    assert_eq!(boundary.sensitive, ["users.login"]);
    assert!(boundary
        .endpoints
        .keys()
        .all(|path| path.starts_with("users.")));
}
