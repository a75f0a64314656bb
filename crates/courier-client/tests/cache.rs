//! An endpoint's `.cache()` through the client's stack, against a real server on 127.0.0.1:
//! answers kept for `revalidate`, never across users, the upstream's `no-store` honoured.

use axum::extract::Request;
use axum::routing::get;
use axum::Router;
use courier_client::Client;
use courier_core::context::ServedRequest;
use courier_core::{
    ApiDef, CacheOptions, CallOptions, Dispatcher, GroupDef, HttpEndpoint, SessionOptions,
};
use courier_test_support::Recorder;
use serde_json::{json, Value};
use std::net::SocketAddr;

/// Answers `/rates` and `/live` with which call it was and the cookie it got; `/volatile` the
/// same, marked `no-store`.
async fn backend(recorder: Recorder) -> SocketAddr {
    let answer = |recorder: Recorder| {
        move |request: Request| {
            let recorder = recorder.clone();
            async move {
                recorder.record(&request);
                let cookie = request
                    .headers()
                    .get("cookie")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("none")
                    .to_owned();
                let volatile = request.uri().path() == "/volatile";
                let body = axum::Json(json!({ "call": recorder.count(), "cookie": cookie }));
                let cache_control = if volatile { "no-store" } else { "public" };
                ([("cache-control", cache_control)], body)
            }
        }
    };
    let app = Router::new()
        .route("/rates", get(answer(recorder.clone())))
        .route("/live", get(answer(recorder.clone())))
        .route("/volatile", get(answer(recorder)));
    courier_test_support::serve(app).await
}

fn api(addr: SocketAddr) -> ApiDef {
    let cached = || CacheOptions::new().revalidate(60);
    ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .session(SessionOptions::new().cookies(["sid"]))
        .group(
            "market",
            GroupDef::new()
                .endpoint("rates", HttpEndpoint::get("/rates").cache(cached()))
                .endpoint("live", HttpEndpoint::get("/live"))
                .endpoint("volatile", HttpEndpoint::get("/volatile").cache(cached())),
        )
        .build()
        .unwrap()
}

fn served_as(sid: &str) -> CallOptions {
    let (parts, ()) = http::Request::get("/page")
        .header("cookie", format!("sid={sid}"))
        .body(())
        .unwrap()
        .into_parts();
    CallOptions::new().context(ServedRequest::new(parts, None))
}

async fn call(client: &Client, path: &str, options: Option<&CallOptions>) -> Value {
    client
        .call_with(path, json!({}), options)
        .await
        .expect("an answer")
        .data
}

#[tokio::test]
async fn a_cached_read_reaches_the_upstream_once() {
    let recorder = Recorder::new();
    let client = Client::new(api(backend(recorder.clone()).await)).unwrap();

    for _ in 0..3 {
        assert_eq!(call(&client, "market.rates", None).await["call"], 1);
    }
    assert_eq!(recorder.hits("/rates"), 1);

    // An endpoint without `.cache()` is called every time.
    for _ in 0..3 {
        call(&client, "market.live", None).await;
    }
    assert_eq!(recorder.hits("/live"), 3);

    // An upstream that says `no-store` is called every time too.
    for _ in 0..3 {
        call(&client, "market.volatile", None).await;
    }
    assert_eq!(recorder.hits("/volatile"), 3);
}

#[tokio::test]
async fn each_user_has_their_own_cached_answer() {
    let recorder = Recorder::new();
    let client = Client::new(api(backend(recorder.clone()).await)).unwrap();
    let (ada, bob) = (served_as("ada"), served_as("bob"));

    let first = call(&client, "market.rates", Some(&ada)).await;
    assert_eq!(first["cookie"], "sid=ada");
    let theirs = call(&client, "market.rates", Some(&bob)).await;
    assert_eq!(theirs["cookie"], "sid=bob");
    // Each is answered from memory with their own.
    assert_eq!(call(&client, "market.rates", Some(&ada)).await, first);
    assert_eq!(call(&client, "market.rates", Some(&bob)).await, theirs);
    assert_eq!(recorder.hits("/rates"), 2);
}

#[tokio::test]
async fn a_call_with_a_transport_of_its_own_is_never_answered_from_the_cache() {
    // A call `.with()` its own `dispatcher` or `fetch` (a client certificate per user, say)
    // may be answered differently by the upstream: it neither reads the cache nor fills it.
    let recorder = Recorder::new();
    let client = Client::new(api(backend(recorder.clone()).await)).unwrap();
    let own = CallOptions::new().dispatcher(Dispatcher::new());

    assert_eq!(call(&client, "market.rates", None).await["call"], 1);
    assert_eq!(call(&client, "market.rates", Some(&own)).await["call"], 2);
    assert_eq!(call(&client, "market.rates", Some(&own)).await["call"], 3);
    // The default transport's answer is still the one kept.
    assert_eq!(call(&client, "market.rates", None).await["call"], 1);
    assert_eq!(recorder.hits("/rates"), 3);
}
