//! `TimeoutLayer` over a real hyper-util client against a real axum server on 127.0.0.1.

use axum::routing::get;
use axum::Router;
use courier_core::{Body, BoxError, EndpointMeta, Kind};
use courier_layers::timeout::error::Elapsed;
use courier_layers::timeout::TimeoutLayer;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tower::{Layer, ServiceExt};

/// Serves a `/slow` route that answers after a second and a `/fast` one that answers at once.
async fn serve() -> SocketAddr {
    let app = Router::new()
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                "late"
            }),
        )
        .route("/fast", get(|| async { "ok" }));
    let address = courier_test_support::serve(app).await;
    address
}

#[tokio::test]
async fn a_server_slower_than_the_bound_gives_elapsed() -> Result<(), BoxError> {
    let address = serve().await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = TimeoutLayer::new(Duration::from_millis(50)).layer(client);

    let started = Instant::now();
    let request = http::Request::get(format!("http://{address}/slow")).body(Body::empty())?;
    let error = service.oneshot(request).await.unwrap_err();
    let waited = started.elapsed();
    let elapsed = error.downcast_ref::<Elapsed>().expect("an Elapsed error");
    assert_eq!(elapsed.after(), Duration::from_millis(50));
    assert_eq!(error.to_string(), "the call did not finish within 50 ms");
    assert!(
        waited >= Duration::from_millis(50) && waited < Duration::from_secs(1),
        "{waited:?}"
    );
    Ok(())
}

#[tokio::test]
async fn the_endpoint_bound_wins_and_a_fast_answer_passes() -> Result<(), BoxError> {
    let address = serve().await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    // The default alone would let the slow answer through.
    let service = TimeoutLayer::new(Duration::from_secs(10)).layer(client);

    let meta = EndpointMeta::new("reports.slow", Kind::Query).timeout(Duration::from_millis(30));
    let request = http::Request::get(format!("http://{address}/slow"))
        .extension(meta.clone())
        .body(Body::empty())?;
    let error = service.clone().oneshot(request).await.unwrap_err();
    assert_eq!(
        error.downcast_ref::<Elapsed>().map(Elapsed::after),
        Some(Duration::from_millis(30))
    );

    let request = http::Request::get(format!("http://{address}/fast"))
        .extension(meta)
        .body(Body::empty())?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.into_body().collect().await?.to_bytes(), "ok");
    Ok(())
}
