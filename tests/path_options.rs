//! Computed path options see the request being served: a per-tenant address is the served
//! user's tenant in a direct call made while serving, through the proxy route, and for a stream
//! the proxy opens — never a value computed without the request.

use axum::extract::Request;
use axum::routing::get;
use axum::Router;
use courier::layers::context::ServedRequest;
use courier::options::SessionOptions;
use courier::server::Proxy;
use courier::tree::PathOptions;
use courier::{ApiDef, CallOptions, Client, GroupDef, HttpEndpoint, StreamEndpoint};
use courier_test_support::Recorder;
use http_body_util::BodyExt;
use serde_json::json;
use std::net::SocketAddr;

/// Answers every path with itself; `/…/ticks` as one event.
async fn backend(recorder: Recorder) -> SocketAddr {
    let answer = move |request: Request| {
        let recorder = recorder.clone();
        async move {
            recorder.record(&request);
            let path = request.uri().path().to_owned();
            if path.ends_with("/ticks") {
                let event = format!("data: {}\n\n", json!({ "path": path }));
                return ([("content-type", "text/event-stream")], event);
            }
            let header = |name: &str| {
                request
                    .headers()
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned)
            };
            let seen = json!({
                "path": path,
                "x-tenant": header("x-tenant"),
                "cookie": header("cookie"),
            });
            ([("content-type", "application/json")], seen.to_string())
        }
    };
    courier_test_support::serve(Router::new().route("/{*path}", get(answer))).await
}

/// A source whose `orders` group addresses the served request's tenant (`x-tenant`), or
/// `public` outside a served request.
fn api(backend: SocketAddr) -> ApiDef {
    let tenant = PathOptions::from_fn(|served| {
        let tenant = served
            .and_then(|parts| parts.headers.get("x-tenant"))
            .and_then(|value| value.to_str().ok())
            .unwrap_or("public");
        json!({ "tenant": tenant })
    });
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .group(
            "orders",
            GroupDef::new()
                .prefix("/:tenant")
                .path_options(tenant)
                .expose(true)
                .endpoint("list", HttpEndpoint::get("/orders"))
                .endpoint("ticks", StreamEndpoint::get("/ticks")),
        )
        .build()
        .unwrap()
}

fn served(tenant: &str) -> ServedRequest {
    let (parts, ()) = http::Request::get("/page")
        .header("x-tenant", tenant)
        .body(())
        .unwrap()
        .into_parts();
    ServedRequest::new(parts, None)
}

#[tokio::test]
async fn a_direct_call_addresses_the_served_users_tenant() {
    let recorder = Recorder::new();
    let client = Client::new(api(backend(recorder.clone()).await)).unwrap();

    let outside = client.call("orders.list", json!(null)).await.unwrap();
    assert_eq!(outside.data["path"], "/public/orders");
    // Given explicitly...
    let options = CallOptions::new().context(served("acme"));
    let given = client
        .call_with("orders.list", json!(null), Some(&options))
        .await
        .unwrap();
    assert_eq!(given.data["path"], "/acme/orders");
    // ...or in scope, as a `ContextLayer` puts it.
    let scoped = served("globex")
        .scope(client.call("orders.list", json!(null)))
        .await
        .unwrap();
    assert_eq!(scoped.data["path"], "/globex/orders");
    // A caller's variables never replace what the path options hold.
    let forged = served("acme")
        .scope(client.call("orders.list", json!({ "tenant": "globex" })))
        .await
        .unwrap();
    assert_eq!(forged.data["path"], "/acme/orders");
}

#[tokio::test]
async fn the_proxy_addresses_the_browsers_tenant_for_calls_and_streams() {
    let recorder = Recorder::new();
    let router = Proxy::new()
        .source("demo", api(backend(recorder.clone()).await))
        .into_router()
        .unwrap();
    let proxy = courier_test_support::serve(router).await;
    let browser = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<String>();
    let fetch = |target: String, tenant: &'static str| {
        let request = http::Request::get(format!("http://{proxy}{target}"))
            .header("x-tenant", tenant)
            .body(String::new())
            .unwrap();
        let browser = browser.clone();
        async move {
            let response = browser.request(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        }
    };

    let call = fetch("/api/request?_s=demo&_g=orders&_m=list".into(), "acme").await;
    assert!(call.contains("/acme/orders"), "{call}");
    let stream = fetch("/api/sse?_s=demo&_g=orders&_m=ticks".into(), "initech").await;
    assert!(stream.contains("/initech/ticks"), "{stream}");
    let paths: Vec<String> = recorder.seen().iter().map(|r| r.target.clone()).collect();
    assert_eq!(paths, ["/acme/orders", "/initech/ticks"]);
}

/// A source whose path options give, besides the tenant's path value, a header and a cookie.
fn with_headers(backend: SocketAddr, session: bool) -> ApiDef {
    let tenant = PathOptions::from_fn(|served| {
        let tenant = served
            .and_then(|parts| parts.headers.get("x-tenant"))
            .and_then(|value| value.to_str().ok())
            .unwrap_or("public");
        json!({
            "tenant": tenant,
            "headers": { "x-tenant": tenant },
            "cookies": { "region": "eu" },
        })
    });
    let mut source = ApiDef::builder().base_url(format!("http://{backend}"));
    if session {
        source = source.session(SessionOptions::new().cookies(["sid"]));
    }
    source
        .group(
            "orders",
            GroupDef::new()
                .prefix("/:tenant")
                .path_options(tenant)
                .endpoint("list", HttpEndpoint::get("/orders")),
        )
        .build()
        .unwrap()
}

fn served_with_cookie(tenant: &str, cookie: &str) -> ServedRequest {
    let (parts, ()) = http::Request::get("/page")
        .header("x-tenant", tenant)
        .header("cookie", cookie)
        .body(())
        .unwrap()
        .into_parts();
    ServedRequest::new(parts, None)
}

#[tokio::test]
async fn path_options_give_headers_and_cookies_that_the_caller_cannot_replace() {
    let recorder = Recorder::new();
    let client = Client::new(with_headers(backend(recorder.clone()).await, false)).unwrap();

    // The call's own header of that name, and its own cookie of that name, give way.
    let options = CallOptions::new()
        .context(served("acme"))
        .header(
            http::HeaderName::from_static("x-tenant"),
            http::HeaderValue::from_static("globex"),
        )
        .header(
            http::header::COOKIE,
            http::HeaderValue::from_static("region=us; theme=dark"),
        );
    let seen = client
        .call_with("orders.list", json!(null), Some(&options))
        .await
        .unwrap()
        .data;
    assert_eq!(seen["path"], "/acme/orders");
    assert_eq!(seen["x-tenant"], "acme");
    assert_eq!(seen["cookie"], "theme=dark; region=eu");
}

#[tokio::test]
async fn path_option_cookies_go_with_the_sessions() {
    let recorder = Recorder::new();
    let client = Client::new(with_headers(backend(recorder.clone()).await, true)).unwrap();
    let seen = served_with_cookie("acme", "sid=s1; other=x")
        .scope(client.call("orders.list", json!(null)))
        .await
        .unwrap()
        .data;
    assert_eq!(seen["cookie"], "region=eu; sid=s1");
}

#[tokio::test]
async fn a_header_or_cookie_that_cannot_be_sent_fails_the_call() {
    let recorder = Recorder::new();
    let addr = backend(recorder.clone()).await;
    let bad = |values: serde_json::Value| {
        ApiDef::builder()
            .base_url(format!("http://{addr}"))
            .group(
                "orders",
                GroupDef::new()
                    .path_options(PathOptions::fixed(values))
                    .endpoint("list", HttpEndpoint::get("/orders")),
            )
            .build()
            .unwrap()
    };
    for values in [
        json!({ "headers": { "x-tenant": "a\r\nx-injected: 1" } }),
        json!({ "cookies": { "region": "eu; admin=1" } }),
        json!({ "cookies": { "bad name": "x" } }),
        json!({ "headers": { "x-list": ["a", "b"] } }),
    ] {
        let client = Client::new(bad(values.clone())).unwrap();
        let err = client.call("orders.list", json!(null)).await.unwrap_err();
        assert!(err.to_string().contains("path options"), "{values}: {err}");
    }
    assert_eq!(recorder.count(), 0, "nothing was sent");
}
