use super::error::Elapsed;
use super::*;
use courier_core::{Body, Kind};
use http::Response;
use std::io;
use tokio::time::Instant;
use tower::{service_fn, ServiceExt};

/// A transport that answers after `delay`.
fn answers_after(
    delay: Duration,
) -> impl Service<Request<Body>, Response = Response<Body>, Error = BoxError> + Clone {
    service_fn(move |_request: Request<Body>| async move {
        tokio::time::sleep(delay).await;
        Ok::<_, BoxError>(Response::new(Body::from("done")))
    })
}

fn request(meta: Option<EndpointMeta>) -> Request<Body> {
    let mut request = Request::get("http://127.0.0.1:1/users/7")
        .body(Body::empty())
        .unwrap();
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    request
}

fn elapsed_of(result: Result<Response<Body>, BoxError>) -> Elapsed {
    *result
        .expect_err("the call should time out")
        .downcast_ref::<Elapsed>()
        .expect("an Elapsed error")
}

#[tokio::test(start_paused = true)]
async fn the_meta_timeout_wins_over_the_default() {
    let service =
        TimeoutLayer::new(Duration::from_secs(10)).layer(answers_after(Duration::from_secs(60)));
    let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_millis(100));
    let start = Instant::now();
    let elapsed = elapsed_of(service.oneshot(request(Some(meta))).await);
    assert_eq!(elapsed.after(), Duration::from_millis(100));
    assert_eq!(start.elapsed(), Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn the_default_bounds_a_request_without_meta() {
    let service =
        TimeoutLayer::new(Duration::from_millis(300)).layer(answers_after(Duration::from_secs(60)));
    let start = Instant::now();
    let elapsed = elapsed_of(service.oneshot(request(None)).await);
    assert_eq!(elapsed.after(), Duration::from_millis(300));
    assert_eq!(start.elapsed(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn the_default_bounds_a_request_whose_meta_has_no_timeout() {
    let service =
        TimeoutLayer::new(Duration::from_millis(300)).layer(answers_after(Duration::from_secs(60)));
    let meta = EndpointMeta::new("users.get", Kind::Query);
    let elapsed = elapsed_of(service.oneshot(request(Some(meta))).await);
    assert_eq!(elapsed.after(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn no_timer_when_neither_meta_nor_default_has_a_bound() {
    let mut service = TimeoutLayer::from_meta().layer(answers_after(Duration::from_secs(3600)));
    let future = service.call(request(Some(EndpointMeta::new("users.get", Kind::Query))));
    assert!(!future.is_bounded());
    let start = Instant::now();
    let response = future.await.expect("no bound, so no timeout");
    assert_eq!(start.elapsed(), Duration::from_secs(3600));
    assert_eq!(response.status(), 200);

    let future = service.call(request(None));
    assert!(!future.is_bounded());
    let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_secs(1));
    assert!(service.call(request(Some(meta))).is_bounded());
}

#[tokio::test(start_paused = true)]
async fn default_layer_bounds_nothing() {
    let service = TimeoutLayer::default().layer(answers_after(Duration::from_secs(3600)));
    assert!(service.oneshot(request(None)).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn an_answer_within_the_bound_passes_through() {
    let service = TimeoutLayer::new(Duration::from_millis(300))
        .layer(answers_after(Duration::from_millis(299)));
    let response = service.oneshot(request(None)).await.expect("in time");
    assert_eq!(response.status(), 200);
}

#[tokio::test(start_paused = true)]
async fn an_inner_error_is_passed_through_unchanged() {
    let service = TimeoutLayer::new(Duration::from_secs(1)).layer(service_fn(
        |_request: Request<Body>| async {
            Err::<Response<Body>, _>(io::Error::new(io::ErrorKind::ConnectionRefused, "refused"))
        },
    ));
    let error = service.oneshot(request(None)).await.unwrap_err();
    let io = error
        .downcast_ref::<io::Error>()
        .expect("the inner io::Error");
    assert_eq!(io.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn elapsed_says_how_long_the_bound_was() {
    let message = |after| Elapsed::new(after).to_string();
    assert_eq!(
        message(Duration::from_millis(200)),
        "the call did not finish within 200 ms"
    );
    assert_eq!(
        message(Duration::from_secs(2)),
        "the call did not finish within 2 s"
    );
    assert_eq!(
        message(Duration::from_millis(1500)),
        "the call did not finish within 1500 ms"
    );
    assert_eq!(
        message(Duration::from_micros(250)),
        "the call did not finish within 250 µs"
    );
    assert_eq!(
        message(Duration::ZERO),
        "the call did not finish within 0 ms"
    );
    assert!(std::error::Error::source(&Elapsed::new(Duration::ZERO)).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_closure_decides_the_bound_instead_of_the_meta() {
    let layer =
        TimeoutLayer::new(Duration::from_secs(10)).timeout_for(|request: &Request<Body>| {
            (request.uri().path() == "/users/7").then_some(Duration::from_millis(50))
        });
    let service = layer.layer(answers_after(Duration::from_secs(60)));
    // The meta's 100 ms is not read: the closure's 50 ms bounds the call.
    let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_millis(100));
    let start = Instant::now();
    let elapsed = elapsed_of(service.clone().oneshot(request(Some(meta))).await);
    assert_eq!(elapsed.after(), Duration::from_millis(50));
    assert_eq!(start.elapsed(), Duration::from_millis(50));

    // Where the closure says nothing, the layer's default bounds the call.
    let other = Request::get("http://127.0.0.1:1/other")
        .body(Body::empty())
        .unwrap();
    let elapsed = elapsed_of(service.oneshot(other).await);
    assert_eq!(elapsed.after(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn waiting_for_readiness_is_not_bounded_the_call_is() {
    let (inner, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    // Not ready: the inner service takes no request until the test allows one.
    handle.allow(0);
    let mut service = TimeoutLayer::new(Duration::from_millis(100)).layer(inner);

    let mut ready = std::pin::pin!(service.ready());
    let start = Instant::now();
    tokio::select! {
        _ = &mut ready => panic!("the inner service is not ready"),
        () = tokio::time::sleep(Duration::from_secs(5)) => {}
    }
    // Five seconds unready, far past the bound, and no Elapsed: readiness is not an attempt.
    handle.allow(1);
    let service = ready.await.expect("ready once allowed");
    let call = service.call(request(None));
    let (_request, _respond) = handle.next_request().await.expect("the call was sent");
    let elapsed = elapsed_of(call.await);
    assert_eq!(elapsed.after(), Duration::from_millis(100));
    assert_eq!(start.elapsed(), Duration::from_millis(5_100));
}
