use super::*;
use courier_core::Kind;
use http::header::SET_COOKIE;
use http::HeaderValue;
use tower::ServiceExt;
use tower_test::mock;

fn name(s: &'static str) -> HeaderName {
    HeaderName::from_static(s)
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (n, v) in pairs {
        map.append(name(n), HeaderValue::from_static(v));
    }
    map
}

async fn run(
    layer: AllowHeadersLayer,
    meta: Option<EndpointMeta>,
    browser: HeaderMap,
    answer: HeaderMap,
) -> (HeaderMap, HeaderMap) {
    let (upstream, mut handle) = mock::pair::<Request<()>, Response<()>>();
    let service = layer.layer(upstream);
    let mut request = Request::new(());
    *request.headers_mut() = browser;
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    let call = tokio::spawn(service.oneshot(request));
    // The upstream sees what the layer let in, and answers with `answer`.
    let (seen, respond) = handle
        .next_request()
        .await
        .expect("the request reached the upstream");
    let mut response = Response::new(());
    *response.headers_mut() = answer;
    respond.send_response(response);
    let response = call.await.unwrap().unwrap();
    (seen.headers().clone(), response.headers().clone())
}

fn meta(names: &[&'static str]) -> EndpointMeta {
    EndpointMeta::new("users.get", Kind::Query).allowed_headers(names.iter().map(|n| name(n)))
}

#[tokio::test]
async fn only_named_headers_cross_either_way() {
    let (up, down) = run(
        AllowHeadersLayer::new(),
        Some(meta(&["x-tenant", "x-request-id"])),
        headers(&[
            ("x-tenant", "acme"),
            ("x-tenant", "beta"),
            ("authorization", "Bearer browser"),
            ("x-other", "1"),
        ]),
        headers(&[
            ("x-request-id", "r1"),
            ("server", "upstream"),
            ("content-type", "application/json"),
            ("content-length", "2"),
        ]),
    )
    .await;
    assert_eq!(
        up.get_all("x-tenant").iter().count(),
        2,
        "every value of a name"
    );
    assert!(!up.contains_key("authorization") && !up.contains_key("x-other"));
    assert_eq!(down["x-request-id"], "r1");
    assert!(!down.contains_key("server"));
    assert_eq!(
        down["content-type"], "application/json",
        "message headers pass"
    );
    assert_eq!(down["content-length"], "2");
}

#[tokio::test]
async fn message_headers_are_never_taken_from_the_lists() {
    let (up, _) = run(
        AllowHeadersLayer::new().allow([CONTENT_TYPE]),
        Some(meta(&["content-length", "content-encoding"])),
        headers(&[
            ("content-type", "application/json"),
            ("content-length", "20"),
            ("content-encoding", "gzip"),
        ]),
        HeaderMap::new(),
    )
    .await;
    assert!(
        up.is_empty(),
        "the browser's envelope never goes upstream: {up:?}"
    );
}

#[tokio::test]
async fn cookies_cross_only_where_named_and_never_back() {
    let browser = headers(&[("cookie", "sid=1")]);
    let answer = headers(&[("set-cookie", "sid=2"), ("cookie", "leak=1")]);
    let (up, down) = run(
        AllowHeadersLayer::new(),
        Some(meta(&[])),
        browser.clone(),
        answer.clone(),
    )
    .await;
    assert!(!up.contains_key(COOKIE) && !down.contains_key(SET_COOKIE));

    let (up, down) = run(
        AllowHeadersLayer::new(),
        Some(meta(&["cookie", "set-cookie"])),
        browser,
        answer,
    )
    .await;
    assert_eq!(up[COOKIE], "sid=1");
    assert_eq!(down[SET_COOKIE], "sid=2");
    assert!(
        !down.contains_key(COOKIE),
        "cookie never goes back to the browser"
    );
}

#[tokio::test]
async fn host_and_hop_by_hop_headers_never_cross_even_when_listed() {
    let listed = [
        "host",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "transfer-encoding",
        "proxy-authorization",
        "proxy-authenticate",
        "x-tenant",
        "x-hop",
    ];
    let hop_by_hop = headers(&[
        ("host", "internal.example"),
        ("connection", "keep-alive, x-hop"),
        ("keep-alive", "timeout=600"),
        ("te", "trailers"),
        ("trailer", "x-sig"),
        ("upgrade", "h2c"),
        ("proxy-connection", "keep-alive"),
        ("transfer-encoding", "chunked"),
        ("proxy-authorization", "Basic cHJveHk6cHc="),
        ("proxy-authenticate", "Basic"),
        ("x-hop", "named by connection"),
        ("x-tenant", "acme"),
    ]);
    let (up, down) = run(
        AllowHeadersLayer::new().allow(listed.map(name)),
        Some(meta(&listed)),
        hop_by_hop.clone(),
        hop_by_hop,
    )
    .await;
    let names = |map: &HeaderMap| {
        map.keys()
            .map(|n| n.as_str().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&up), ["x-tenant"], "upstream got {up:?}");
    assert_eq!(names(&down), ["x-tenant"], "the browser got {down:?}");
}

#[tokio::test]
async fn the_sources_own_header_wins_over_the_browsers() {
    let (up, _) = run(
        AllowHeadersLayer::new().source_headers([name("x-api-key")]),
        Some(meta(&["x-api-key", "x-tenant"])),
        headers(&[("x-api-key", "from-the-browser"), ("x-tenant", "acme")]),
        HeaderMap::new(),
    )
    .await;
    assert!(!up.contains_key("x-api-key"));
    assert_eq!(up["x-tenant"], "acme");
}

#[tokio::test]
async fn without_meta_only_the_layers_own_names_pass() {
    let (up, down) = run(
        AllowHeadersLayer::new().allow([name("x-tenant")]),
        None,
        headers(&[("x-tenant", "acme"), ("x-other", "1")]),
        headers(&[("x-tenant", "acme"), ("x-other", "1")]),
    )
    .await;
    assert_eq!(up.len(), 1);
    assert_eq!(down.len(), 1);
    assert_eq!(down["x-tenant"], "acme");
}
