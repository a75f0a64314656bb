//! A call's `timeout` is its deadline: every attempt, the waits between them and the reading of
//! its body fit in it, whatever the retry policy; `attempt_timeout` bounds each attempt inside
//! it; each caller of a shared read is bounded by its own; the proxy's `_t` bounds the whole
//! upstream call. Against a backend on 127.0.0.1 whose routes hang, fail, or answer slowly.

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier::layers::timeout::error::Elapsed;
use courier::options::{Backoff, LayerSettings, RetryPolicy};
use courier::routes::Routes;
use courier::typed::{endpoint, Group, Http};
use courier::ProxyCaller;
use courier::{ApiDef, CallOptions, Client, GroupDef, HttpEndpoint};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many requests each path received.
#[derive(Clone, Default)]
struct Hits(Arc<Mutex<HashMap<String, usize>>>);

impl Hits {
    /// Counts a request to `path`; the count so far, this one included.
    fn count(&self, path: &str) -> usize {
        let mut hits = self.0.lock().unwrap();
        let n = hits.entry(path.to_owned()).or_default();
        *n += 1;
        *n
    }

    fn of(&self, path: &str) -> usize {
        self.0.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

/// `/hang` never answers; `/flaky` hangs twice, then answers at once; `/drip` sends its head
/// after 200 ms and its body over 200 ms more; `/slow` answers after 600 ms.
async fn backend() -> (SocketAddr, Hits) {
    async fn hang(State(hits): State<Hits>) -> Response {
        hits.count("/hang");
        std::future::pending::<()>().await;
        unreachable!("never answers")
    }
    async fn flaky(State(hits): State<Hits>) -> Response {
        if hits.count("/flaky") <= 2 {
            std::future::pending::<()>().await;
        }
        axum::Json(json!({ "ok": true })).into_response()
    }
    async fn drip(State(hits): State<Hits>) -> Response {
        hits.count("/drip");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let chunks = futures_util::stream::unfold(0u32, |n| async move {
            if n == 4 {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            let chunk = if n == 0 {
                "[1,"
            } else if n == 3 {
                "4]"
            } else {
                "2,"
            };
            Some((Ok::<_, std::io::Error>(chunk), n + 1))
        });
        (
            [("content-type", "application/json")],
            Body::from_stream(chunks),
        )
            .into_response()
    }
    async fn slow(State(hits): State<Hits>) -> Response {
        hits.count("/slow");
        tokio::time::sleep(Duration::from_millis(600)).await;
        axum::Json(json!({ "slow": true })).into_response()
    }
    let hits = Hits::default();
    let app = Router::new()
        .route("/hang", get(hang))
        .route("/flaky", get(flaky))
        .route("/drip", get(drip))
        .route("/slow", get(slow))
        .with_state(hits.clone());
    (courier_test_support::serve(app).await, hits)
}

/// A source over the backend with `settings`, its reads retried by the default policy unless
/// `settings` says otherwise.
fn client(backend: SocketAddr, settings: LayerSettings) -> Client {
    let api = ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .settings(settings)
        .group(
            "g",
            GroupDef::new()
                .endpoint("hang", HttpEndpoint::get("/hang"))
                .endpoint("flaky", HttpEndpoint::get("/flaky"))
                .endpoint("drip", HttpEndpoint::get("/drip"))
                .endpoint("slow", HttpEndpoint::get("/slow")),
        )
        .build()
        .unwrap();
    Client::new(api).unwrap()
}

fn elapsed_of(error: &courier::Error) -> Elapsed {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(elapsed) = current.downcast_ref::<Elapsed>() {
            return *elapsed;
        }
        source = current.source();
    }
    panic!("no Elapsed in {error:?}")
}

#[tokio::test]
async fn the_timeout_bounds_the_whole_call_not_each_attempt() {
    let (backend, hits) = backend().await;
    // Three attempts by default: bounded each, the call took three timeouts and the waits.
    let client = client(
        backend,
        LayerSettings::new().timeout(Duration::from_millis(300)),
    );
    let started = Instant::now();
    let error = client.call("g.hang", json!({})).await.unwrap_err();
    let took = started.elapsed();
    assert!(error.is_timeout(), "{error}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(550),
        "the call ends at its deadline: {took:?}"
    );
    assert_eq!(hits.of("/hang"), 1, "the deadline ended the only attempt");
    assert_eq!(elapsed_of(&error).attempts(), Some(1));
    assert!(
        error
            .to_string()
            .contains("the call did not finish within 300 ms (1 attempt)"),
        "{error}"
    );
}

#[tokio::test]
async fn an_attempt_timeout_cuts_each_attempt_and_the_call_goes_on() {
    let (backend, hits) = backend().await;
    let settings = LayerSettings::new()
        .timeout(Duration::from_secs(5))
        .attempt_timeout(Duration::from_millis(150))
        .retry(RetryPolicy::default().backoff(Backoff {
            initial_ms: 10,
            max_ms: 20,
            factor: 2.0,
            jitter: false,
        }));
    let client = client(backend, settings);
    let started = Instant::now();
    let answer = client.call("g.flaky", json!({})).await.unwrap();
    assert_eq!(answer.data, json!({ "ok": true }));
    assert_eq!(
        hits.of("/flaky"),
        3,
        "two attempts cut short, the third answered"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn the_deadline_says_how_many_attempts_it_cut_short() {
    let (backend, hits) = backend().await;
    let settings = LayerSettings::new()
        .timeout(Duration::from_millis(500))
        .attempt_timeout(Duration::from_millis(100))
        .retry(RetryPolicy::default().max_attempts(10).backoff(Backoff {
            initial_ms: 10,
            max_ms: 10,
            factor: 1.0,
            jitter: false,
        }));
    let client = client(backend, settings);
    let started = Instant::now();
    let error = client.call("g.hang", json!({})).await.unwrap_err();
    let took = started.elapsed();
    assert!(error.is_timeout(), "{error}");
    assert!(took < Duration::from_millis(800), "{took:?}");
    let elapsed = elapsed_of(&error);
    assert!(
        !elapsed.is_attempt(),
        "the call's deadline ended it: {error}"
    );
    let attempts = elapsed.attempts().unwrap();
    assert!(
        (4..=5).contains(&attempts),
        "{attempts} attempts in {took:?}"
    );
    assert_eq!(hits.of("/hang"), attempts as usize);
    assert!(
        error.to_string().contains(&format!(
            "the call did not finish within 500 ms ({attempts} attempts)"
        )),
        "{error}"
    );

    // Retries exhausted inside the deadline: the last attempt's own bound is the error.
    let settings = LayerSettings::new()
        .timeout(Duration::from_secs(5))
        .attempt_timeout(Duration::from_millis(50))
        .retry(RetryPolicy::default().max_attempts(2));
    let error = self::client(backend, settings)
        .call("g.hang", json!({}))
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(elapsed_of(&error).is_attempt(), "{error}");
    assert!(
        error
            .to_string()
            .contains("an attempt did not finish within 50 ms"),
        "{error}"
    );
}

#[tokio::test]
async fn the_body_is_read_within_what_is_left_of_the_deadline() {
    let (backend, _hits) = backend().await;
    // The head comes at 200 ms, the body ends at 400 ms: a deadline of 300 ms ends the call
    // while the body is still arriving (a fresh 300 ms for the body would have let it through).
    let client = client(
        backend,
        LayerSettings::new().timeout(Duration::from_millis(300)),
    );
    let started = Instant::now();
    let error = client.call("g.drip", json!({})).await.unwrap_err();
    let took = started.elapsed();
    assert!(error.is_timeout(), "{error}");
    assert!(took < Duration::from_millis(390), "{took:?}");
    assert!(
        error
            .to_string()
            .contains("response body was still arriving"),
        "{error}"
    );
    // With time enough, the same body is read whole.
    let client = self::client(
        backend,
        LayerSettings::new().timeout(Duration::from_secs(2)),
    );
    let answer = client.call("g.drip", json!({})).await.unwrap();
    assert_eq!(answer.data, json!([1, 2, 2, 4]));
}

#[tokio::test]
async fn each_caller_of_a_shared_read_waits_no_longer_than_its_own_timeout() {
    let (backend, hits) = backend().await;
    let client = client(backend, LayerSettings::new());
    let patient = CallOptions::new().timeout(Duration::from_secs(5));
    let hasty = CallOptions::new().timeout(Duration::from_millis(150));
    let leader = {
        let client = client.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let answer = client.call_with("g.slow", json!({}), Some(&patient)).await;
            (answer, started.elapsed())
        })
    };
    // The second caller joins the first's call in flight.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let error = client
        .call_with("g.slow", json!({}), Some(&hasty))
        .await
        .unwrap_err();
    let waited = started.elapsed();
    assert!(error.is_timeout(), "{error}");
    assert!(waited < Duration::from_millis(400), "{waited:?}");
    let (answer, took) = leader.await.unwrap();
    assert_eq!(answer.unwrap().data, json!({ "slow": true }));
    assert!(took >= Duration::from_millis(600), "{took:?}");
    assert_eq!(hits.of("/slow"), 1, "one call, shared");
}

#[tokio::test]
async fn a_groups_settings_apply_under_its_endpoints_own() {
    let (backend, hits) = backend().await;
    let api = ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .timeout(Duration::from_secs(30))
        .group(
            "g",
            GroupDef::new()
                .timeout(Duration::from_millis(200))
                .retry(false)
                .endpoint("hang", HttpEndpoint::get("/hang"))
                .endpoint(
                    "slow",
                    HttpEndpoint::get("/slow").timeout(Duration::from_secs(2)),
                ),
        )
        .build()
        .unwrap();
    let client = Client::new(api).unwrap();
    let started = Instant::now();
    let error = client.call("g.hang", json!({})).await.unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(started.elapsed() < Duration::from_millis(450));
    assert!(error.to_string().contains("within 200 ms"), "{error}");
    assert_eq!(hits.of("/hang"), 1);
    // The endpoint's own wins over its group's.
    let answer = client.call("g.slow", json!({})).await.unwrap();
    assert_eq!(answer.data, json!({ "slow": true }));
}

// ---- through the proxy ------------------------------------------------------------------------

#[derive(courier::Group)]
struct Slow {
    hang: Http<Value>,
}

#[derive(courier::Api)]
struct Demo {
    g: Group<Slow>,
}

#[tokio::test]
async fn a_proxied_calls_timeout_bounds_the_whole_upstream_call() {
    let (backend, hits) = backend().await;
    let api = || {
        ApiDef::builder()
            .base_url(format!("http://{backend}"))
            .build_typed(Demo {
                g: Group::new(Slow {
                    hang: endpoint().get("/hang"),
                })
                .expose(true),
            })
            .unwrap()
    };
    let router = courier::server::Proxy::new()
        .source("demo", api().into_def())
        .into_router()
        .unwrap();
    let proxy = courier_test_support::serve(router).await;
    let routes = Routes::from_api("demo", api().def());
    let caller = ProxyCaller::<Demo>::routes(format!("http://{proxy}"), routes)
        .build()
        .unwrap();
    // `_t=1000`: once three attempts of a second each at the upstream, now one second in all;
    // the caller's own wait is bounded by the same timeout and gives up first or with the 504.
    let started = Instant::now();
    let error = caller
        .g()
        .with(CallOptions::new().timeout(Duration::from_millis(1000)))
        .hang()
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(error.is_timeout() || error.status_code() == 504, "{error}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    // The proxy's own answer, read at the wire: a 504 within the second.
    let started = Instant::now();
    let answer = raw_get(proxy, "/api/request?_s=demo&_g=g&_m=hang&_t=300").await;
    let took = started.elapsed();
    assert_eq!(answer.0, 504, "{}", answer.1);
    assert!(answer.1.contains("UPSTREAM_TIMEOUT"), "{}", answer.1);
    assert!(
        answer.1.contains("within 300 ms (1 attempt)"),
        "{}",
        answer.1
    );
    assert!(took < Duration::from_millis(600), "{took:?}");
    assert_eq!(hits.of("/hang"), 2, "one upstream attempt per call");
}

/// A GET on a fresh connection with hyper: the status and the body as text.
async fn raw_get(addr: SocketAddr, path: &str) -> (u16, String) {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let request = http::Request::get(format!("http://{addr}{path}"))
        .body(http_body_util::Empty::new())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}
