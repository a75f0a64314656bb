use super::*;
use courier_core::Kind;
use http::StatusCode;
use std::convert::Infallible;
use std::io;
use std::sync::{Arc, Mutex};
use tower::{service_fn, Layer, ServiceExt};
use tracing_subscriber::fmt::MakeWriter;

/// Everything a `fmt` subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

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
