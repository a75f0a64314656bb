//! A client with `metrics(true)` against a real server on 127.0.0.1: each call is one
//! `http.client.request.duration`, labelled with its endpoint, method, status and, for a failed
//! one, its kind; a read that shares another's call in flight counts as a call of its own.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use courier_client::Client;
use courier_core::{ApiDef, GroupDef, HttpEndpoint};
use courier_test_support::metrics::{label, Capture};
use serde_json::json;

#[test]
fn each_call_is_one_duration_labelled_with_its_endpoint_status_and_error() {
    let capture = Capture::default();
    capture.run(async {
        let backend = courier_test_support::serve(
            Router::new()
                .route(
                    "/users/{id}",
                    get(|Path(id): Path<u64>| async move {
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        axum::Json(json!({ "id": id }))
                    }),
                )
                .route("/missing", get(|| async { StatusCode::NOT_FOUND })),
        )
        .await;
        let closed = courier_test_support::tls::closed_port().await;
        let api = ApiDef::builder()
            .base_url(format!("http://{backend}"))
            .group(
                "users",
                GroupDef::new()
                    .endpoint("get", HttpEndpoint::get("/users/:id"))
                    .endpoint("missing", HttpEndpoint::get("/missing"))
                    .endpoint(
                        "cached",
                        HttpEndpoint::get("/users/:id")
                            .cache(courier_core::CacheOptions::new().revalidate(60)),
                    ),
            )
            .build()
            .unwrap();
        let client = Client::builder(api).metrics(true).build().unwrap();
        // Two identical reads at once share one upstream call, and are two calls here.
        let (a, b) = tokio::join!(
            client.call("users.get", json!({ "id": 7 })),
            client.call("users.get", json!({ "id": 7 })),
        );
        assert_eq!(a.unwrap().data, json!({ "id": 7 }));
        assert_eq!(b.unwrap().data, json!({ "id": 7 }));
        assert!(client.call("users.missing", json!({})).await.is_err());
        // The second of these is answered from the cache.
        for _ in 0..2 {
            client
                .call("users.cached", json!({ "id": 8 }))
                .await
                .unwrap();
        }
        // An upstream that refuses the connection, on a client of its own.
        let gone = ApiDef::builder()
            .base_url(format!("http://{closed}"))
            .group(
                "users",
                GroupDef::new().endpoint("gone", HttpEndpoint::get("/x")),
            )
            .build()
            .unwrap();
        let gone = Client::builder(gone)
            .retry(false)
            .metrics(true)
            .build()
            .unwrap();
        assert!(gone.call("users.gone", json!({})).await.is_err());
    });
    let all = capture.recorded();
    let counted = |name: &str| {
        all.iter()
            .filter(|r| r.name == name)
            .map(|r| r.value)
            .sum::<f64>()
    };
    assert_eq!(counted("courier.client.coalesced"), 1.0, "{all:?}");
    assert_eq!(counted("courier.client.cache.hits"), 1.0, "{all:?}");
    let seen: Vec<_> = all
        .iter()
        .filter(|r| r.name == "http.client.request.duration")
        .cloned()
        .collect();
    assert_eq!(seen.len(), 6, "{seen:?}");
    let of = |endpoint: &str| {
        seen.iter()
            .filter(|r| label(&r.labels, "courier.endpoint") == Some(endpoint))
            .collect::<Vec<_>>()
    };
    let reads = of("users.get");
    assert_eq!(reads.len(), 2);
    for read in &reads {
        assert_eq!(label(&read.labels, "http.request.method"), Some("GET"));
        assert_eq!(label(&read.labels, "server.address"), Some("127.0.0.1"));
        assert_eq!(
            label(&read.labels, "http.response.status_code"),
            Some("200")
        );
        assert_eq!(label(&read.labels, "error.type"), None);
        assert!(read.value >= 0.02, "the upstream's 20 ms: {}", read.value);
    }
    let missing = of("users.missing");
    assert_eq!(label(&missing[0].labels, "error.type"), Some("404"));
    let gone = of("users.gone");
    assert_eq!(label(&gone[0].labels, "error.type"), Some("_OTHER"));
    assert_eq!(label(&gone[0].labels, "http.response.status_code"), None);
}
