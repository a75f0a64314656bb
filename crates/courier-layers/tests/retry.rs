//! `RetryLayer` over a real hyper-util client against a real axum server on 127.0.0.1.

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use courier_core::{Backoff, Body, BoxError, EndpointMeta, Kind, RetryPolicy};
use courier_layers::retry::RetryLayer;
use courier_layers::timeout::TimeoutLayer;
use courier_test_support::serve;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower::{Layer, ServiceBuilder, ServiceExt};

/// Short real waits: the server answers at once, so the backoff is all the test waits.
fn quick_policy() -> RetryPolicy {
    RetryPolicy::default().backoff(Backoff {
        initial_ms: 5,
        max_ms: 20,
        factor: 2.0,
        jitter: true,
    })
}

#[tokio::test]
async fn a_503_twice_then_200_is_retried_into_the_200() -> Result<(), BoxError> {
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new().route(
        "/users/7",
        get({
            let hits = hits.clone();
            move || async move {
                match hits.fetch_add(1, Ordering::SeqCst) {
                    0 | 1 => (StatusCode::SERVICE_UNAVAILABLE, "down"),
                    _ => (StatusCode::OK, "ada"),
                }
            }
        }),
    );
    let address = serve(app).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(quick_policy()))
        .service(client);

    let request = http::Request::get(format!("http://{address}/users/7"))
        .extension(EndpointMeta::new("users.get", Kind::Query))
        .body(Body::empty())?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.status(), 200);
    assert_eq!(response.into_body().collect().await?.to_bytes(), "ada");
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    Ok(())
}

#[tokio::test]
async fn a_post_is_sent_once() -> Result<(), BoxError> {
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new().route(
        "/users",
        axum::routing::post({
            let hits = hits.clone();
            move || async move {
                hits.fetch_add(1, Ordering::SeqCst);
                StatusCode::SERVICE_UNAVAILABLE
            }
        }),
    );
    let address = serve(app).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = RetryLayer::new(quick_policy()).layer(client);

    let request = http::Request::post(format!("http://{address}/users")).body(Body::from("{}"))?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.status(), 503);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    Ok(())
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried() -> Result<(), BoxError> {
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new().route(
        "/users/7",
        get({
            let hits = hits.clone();
            move || async move {
                if hits.fetch_add(1, Ordering::SeqCst) == 0 {
                    // Far longer than the bound: the client gives up on this attempt.
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                "ada"
            }
        }),
    );
    let address = serve(app).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(quick_policy()))
        .layer(TimeoutLayer::new(Duration::from_millis(50)))
        .service(client);

    let started = std::time::Instant::now();
    let request = http::Request::get(format!("http://{address}/users/7")).body(Body::empty())?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.status(), 200);
    assert_eq!(response.into_body().collect().await?.to_bytes(), "ada");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert!(started.elapsed() < Duration::from_secs(5));
    Ok(())
}
