//! `response_limit` bounds a buffered answer's body at every level — source, group, endpoint,
//! call, and a config file's keys — against a backend on 127.0.0.1 that answers big bodies, an
//! endless one and a big error.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier::config::Config;
use courier::{ApiDef, CallOptions, Client, GroupDef, HttpEndpoint};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;

/// `/big` answers a JSON string of 100,000 bytes; `/endless` a body that never ends; `/fail`
/// a 500 with 100,000 bytes.
async fn backend() -> SocketAddr {
    async fn big() -> Response {
        axum::Json(json!("x".repeat(100_000 - 2))).into_response()
    }
    async fn endless() -> Response {
        let chunks = futures_util::stream::repeat_with(|| {
            Ok::<_, std::io::Error>(bytes::Bytes::from_static(&[b' '; 8192]))
        });
        (
            [("content-type", "application/json")],
            Body::from_stream(chunks),
        )
            .into_response()
    }
    async fn fail() -> Response {
        (http::StatusCode::INTERNAL_SERVER_ERROR, "e".repeat(100_000)).into_response()
    }
    let app = Router::new()
        .route("/big", get(big))
        .route("/endless", get(endless))
        .route("/fail", get(fail));
    courier_test_support::serve(app).await
}

fn client(backend: SocketAddr) -> Client {
    let api = ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .response_limit(10_000u64)
        .retry(false)
        .group(
            "g",
            GroupDef::new()
                .endpoint("big", HttpEndpoint::get("/big"))
                .endpoint(
                    "roomy",
                    HttpEndpoint::get("/big").response_limit(200_000u64),
                )
                .endpoint("endless", HttpEndpoint::get("/endless"))
                .endpoint("fail", HttpEndpoint::get("/fail")),
        )
        .group(
            "wide",
            GroupDef::new()
                .response_limit(1_000_000u64)
                .endpoint("big", HttpEndpoint::get("/big")),
        )
        .build()
        .unwrap();
    Client::new(api).unwrap()
}

fn over_the_limit(error: &courier::Error, limit: u64) {
    assert!(error.is_protocol(), "{error}");
    let text = format!("{error:#}");
    assert!(
        text.contains(&format!(
            "longer than the call's response_limit of {limit} bytes"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn the_nearest_level_bounds_the_body_and_a_call_can_widen_it() {
    let backend = backend().await;
    let client = client(backend);
    // The source's 10,000 bytes.
    let error = client.call("g.big", json!({})).await.unwrap_err();
    over_the_limit(&error, 10_000);
    // The endpoint's and the group's own, wider: the whole body.
    for path in ["g.roomy", "wide.big"] {
        let answer = client.call(path, json!({})).await.unwrap();
        assert_eq!(answer.data.as_str().map(str::len), Some(99_998), "{path}");
    }
    // A call's own wins over them all, both ways.
    let wide = CallOptions::new().response_limit(100_000u64);
    let answer = client
        .call_with("g.big", json!({}), Some(&wide))
        .await
        .unwrap();
    assert_eq!(answer.data.as_str().map(str::len), Some(99_998));
    let narrow = CallOptions::new().response_limit(500u64);
    let error = client
        .call_with("wide.big", json!({}), Some(&narrow))
        .await
        .unwrap_err();
    over_the_limit(&error, 500);
}

#[tokio::test]
async fn an_endless_body_fails_at_the_limit_and_an_error_is_bounded_too() {
    let backend = backend().await;
    let client = client(backend);
    // Without the limit this call would read forever.
    let error = tokio::time::timeout(Duration::from_secs(10), client.call("g.endless", json!({})))
        .await
        .expect("the limit ends the call")
        .unwrap_err();
    over_the_limit(&error, 10_000);
    // An error's body is held to the same bound: not an HttpError read whole.
    let error = client.call("g.fail", json!({})).await.unwrap_err();
    over_the_limit(&error, 10_000);
    assert_eq!(
        error.status(),
        Some(http::StatusCode::INTERNAL_SERVER_ERROR)
    );
}

#[tokio::test]
async fn a_config_file_sets_it_at_each_level() {
    let backend = backend().await;
    let config = Config::from_toml_str(&format!(
        "[sources.demo]\nbase_url = \"http://{backend}\"\nresponse_limit = 10000\nretry = false\n\n\
         [sources.demo.groups.g.endpoints.big]\nget = \"/big\"\n\n\
         [sources.demo.groups.g.endpoints.roomy]\nget = \"/big\"\nresponse_limit = 200000\n"
    ))
    .unwrap();
    let api = config.source("demo").unwrap().clone();
    let client = Client::new(api).unwrap();
    let error = client.call("g.big", json!({})).await.unwrap_err();
    over_the_limit(&error, 10_000);
    assert!(client.call("g.roomy", json!({})).await.is_ok());
}
