//! The cache's hits, misses, kept answers and evictions, as `tracing` shows them. A binary of its
//! own: the subscriber is the process's global one, so that no other test's subscriber, on
//! another thread, changes which events are enabled.

use bytes::Bytes;
use courier::layers::cache::CacheLayer;
use courier::options::CacheOptions;
use courier::transport::Body;
use courier::tree::{EndpointMeta, Kind};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use std::convert::Infallible;
use tower::{service_fn, Layer, ServiceExt};

#[tokio::test]
async fn hits_misses_and_evictions_are_logged() {
    let logs = courier_test_support::Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let upstream = service_fn(|_: Request<Body>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("{\"eur\":1.08}"))))
    });
    let service = CacheLayer::new().max_entries(1).layer(upstream);
    let read = |path: &str| {
        Request::get(format!("http://127.0.0.1:1{path}"))
            .extension(
                EndpointMeta::new("market.rates", Kind::Query)
                    .cache(CacheOptions::new().revalidate(60)),
            )
            .body(Body::empty())
            .unwrap()
    };
    for path in ["/eur", "/eur", "/usd"] {
        let response = service.clone().oneshot(read(path)).await.unwrap();
        response.into_body().collect().await.unwrap();
    }

    let logged = logs.text();
    for line in [
        "cache: miss endpoint=\"market.rates\"",
        "cache: answer kept endpoint=\"market.rates\"",
        "cache: hit endpoint=\"market.rates\"",
        "cache: least recently used answers evicted evicted=1",
    ] {
        assert!(logged.contains(line), "`{line}` in:\n{logged}");
    }
}
