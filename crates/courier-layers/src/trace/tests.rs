use super::*;
use axum::routing::get;
use axum::Router;
use courier_core::{Body, BoxError, Kind};
use courier_test_support::Captured;
use http::StatusCode;
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::convert::Infallible;
use std::net::SocketAddr;
use tower::{service_fn, Layer, ServiceExt};

/// Runs `request` through `trace_layer()` over an upstream answering `status`, and returns
/// what was logged.
async fn logged(request: Request<String>, status: StatusCode) -> String {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_max_level(Level::TRACE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let service = trace_layer().layer(service_fn(move |_: Request<String>| async move {
        let mut response = Response::new(http_body_util::Empty::<Bytes>::new());
        *response.status_mut() = status;
        Ok::<_, Infallible>(response)
    }));
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.status(), status);
    captured.text()
}

fn request(uri: &str, meta: Option<EndpointMeta>) -> Request<String> {
    let mut request = Request::get(uri).body(String::new()).unwrap();
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    request
}

#[tokio::test]
async fn a_call_runs_in_a_courier_call_span() {
    let meta = EndpointMeta::new("users.get", Kind::Query);
    let log = logged(
        request("http://127.0.0.1:1/users/7?x=1", Some(meta)),
        StatusCode::OK,
    )
    .await;
    assert!(
        log.contains(
            "courier.call{endpoint=users.get method=GET uri=http://127.0.0.1:1/users/7?x=1}"
        ),
        "{log}"
    );
    assert!(log.contains("INFO"), "{log}");
    assert!(log.contains("finished processing request"), "{log}");
    assert!(log.contains("status=200"), "{log}");
    assert!(log.contains(" ms"), "latency in milliseconds: {log}");
    assert!(!log.contains("response failed"), "{log}");
}

#[tokio::test]
async fn a_sensitive_endpoint_is_logged_without_its_query() {
    let meta = EndpointMeta::new("users.search", Kind::Query).sensitive(true);
    let log = logged(
        request(
            "http://127.0.0.1:1/users/search?email=ada%40example.com",
            Some(meta),
        ),
        StatusCode::OK,
    )
    .await;
    assert!(
        log.contains("uri=http://127.0.0.1:1/users/search}"),
        "{log}"
    );
    assert!(!log.contains("email"), "{log}");
    assert!(!log.contains("example.com"), "{log}");
}

#[tokio::test]
async fn without_meta_no_endpoint_is_recorded() {
    let log = logged(request("/health", None), StatusCode::OK).await;
    assert!(
        log.contains("courier.call{method=GET uri=/health}"),
        "{log}"
    );
    assert!(!log.contains("endpoint"), "{log}");
}

#[tokio::test]
async fn a_5xx_is_logged_as_a_failure() {
    let meta = EndpointMeta::new("users.get", Kind::Query);
    let log = logged(
        request("http://127.0.0.1:1/users/7", Some(meta)),
        StatusCode::BAD_GATEWAY,
    )
    .await;
    let failure = log
        .lines()
        .find(|line| line.contains("response failed"))
        .unwrap_or_else(|| panic!("no failure logged: {log}"));
    assert!(failure.contains("ERROR"), "{failure}");
    assert!(
        failure.contains("courier.call{endpoint=users.get"),
        "{failure}"
    );
    assert!(failure.contains("502"), "{failure}");
}

#[tokio::test]
async fn a_4xx_is_a_response_not_a_failure() {
    let log = logged(request("/users/7", None), StatusCode::NOT_FOUND).await;
    assert!(log.contains("status=404"), "{log}");
    assert!(!log.contains("response failed"), "{log}");
    assert!(!log.contains("ERROR"), "{log}");
}

#[tokio::test]
async fn an_inner_error_is_logged_as_a_failure() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let service = trace_layer().layer(service_fn(|_: Request<String>| async {
        Err::<Response<http_body_util::Empty<Bytes>>, BoxError>("connection refused".into())
    }));
    let Err(err) = service.oneshot(request("/users/7", None)).await else {
        panic!("the call should fail");
    };
    assert_eq!(err.to_string(), "connection refused");
    let log = captured.text();
    assert!(log.contains("ERROR"), "{log}");
    assert!(log.contains("response failed"), "{log}");
    assert!(log.contains("connection refused"), "{log}");
}

#[tokio::test]
async fn the_span_level_is_configurable() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_max_level(Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let service = trace_layer()
        .make_span_with(CallSpan::new().level(Level::DEBUG))
        .layer(service_fn(|_: Request<String>| async {
            Ok::<_, Infallible>(Response::new(http_body_util::Empty::<Bytes>::new()))
        }));
    service.oneshot(request("/users/7", None)).await.unwrap();
    let log = captured.text();
    // The response event is still logged, outside a span the subscriber does not enable.
    assert!(log.contains("finished processing request"), "{log}");
    assert!(!log.contains("courier.call"), "{log}");
}

#[tokio::test]
async fn log_middleware_keeps_a_courier_body() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let transport = courier_core::HttpService::new(service_fn(|_: Request<Body>| async {
        Ok::<_, BoxError>(Response::new(Body::from("pong")))
    }));
    let request = Request::get("http://127.0.0.1:1/ping")
        .extension(EndpointMeta::new("ping", Kind::Query))
        .body(Body::empty())
        .unwrap();
    let response = log_middleware()
        .apply(transport)
        .oneshot(request)
        .await
        .unwrap();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(body, "pong");
    let log = captured.text();
    assert!(
        log.contains("courier.call{endpoint=ping method=GET"),
        "{log}"
    );
}

// `trace_layer()` over a real hyper-util client against a real axum server on 127.0.0.1.

/// Serves `/users/7`, and `/broken`, which answers 500.
async fn serve() -> SocketAddr {
    let app = Router::new()
        .route("/users/7", get(|| async { "{\"id\":7}" }))
        .route(
            "/broken",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "oops") }),
        );
    courier_test_support::serve(app).await
}

// A current-thread runtime, so the subscriber set for this thread sees the whole call.
#[tokio::test(flavor = "current_thread")]
async fn a_real_call_is_logged_in_its_span() -> Result<(), BoxError> {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let address = serve().await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let service = trace_layer().layer(client);

    let request = http::Request::get(format!("http://{address}/users/7?fields=name"))
        .extension(EndpointMeta::new("users.get", Kind::Query))
        .body(Body::empty())?;
    let response = service.clone().oneshot(request).await?;
    assert_eq!(
        response.into_body().collect().await?.to_bytes(),
        "{\"id\":7}"
    );

    let request = http::Request::get(format!("http://{address}/broken?token=abc"))
        .extension(EndpointMeta::new("status.broken", Kind::Query).sensitive(true))
        .body(Body::empty())?;
    let response = service.oneshot(request).await?;
    assert_eq!(response.status(), 500);

    let log = captured.text();
    let span = format!(
        "courier.call{{endpoint=users.get method=GET uri=http://{address}/users/7?fields=name}}"
    );
    let answered = log
        .lines()
        .find(|line| line.contains("finished processing request") && line.contains(&span))
        .unwrap_or_else(|| panic!("no response logged in {span}: {log}"));
    assert!(answered.contains("status=200"), "{answered}");

    let failed = log
        .lines()
        .find(|line| line.contains("response failed"))
        .unwrap_or_else(|| panic!("no failure logged: {log}"));
    assert!(failed.contains("ERROR"), "{failed}");
    assert!(
        failed.contains(&format!(
            "courier.call{{endpoint=status.broken method=GET uri=http://{address}/broken}}"
        )),
        "{failed}"
    );
    assert!(!log.contains("token=abc"), "{log}");
    Ok(())
}
