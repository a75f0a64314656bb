//! `ForwardLayer` end to end: a browser (a plain hyper-util client, connecting from 127.0.0.2)
//! calls an axum app wrapped in tower-http's request-id layers and `ContextLayer`; its handler
//! calls a backend (another axum server that records what it receives) through a hyper-util
//! client stacked with `SessionLayer` and `ForwardLayer`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use courier_core::{Body, EndpointMeta, ForwardOptions, Kind, SessionOptions};
use courier_layers::context::ContextLayer;
use courier_layers::forward::{Forward, ForwardLayer};
use courier_layers::session::{Session, SessionLayer};
use courier_test_support::serve;
use http::HeaderValue;
use http_body_util::Empty;
use hyper_util::client::legacy::connect::{HttpConnector, HttpInfo};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tower::{ServiceBuilder, ServiceExt};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};

/// The browser connects from 127.0.0.2, so the address the backend gets is clearly the real
/// peer's.
const BROWSER_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The backend records the headers of every request it gets.
async fn backend() -> (SocketAddr, Arc<Mutex<Vec<HeaderMap>>>) {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let app = Router::new()
        .route(
            "/{*path}",
            get(
                |State(seen): State<Arc<Mutex<Vec<HeaderMap>>>>, headers: HeaderMap| async move {
                    seen.lock().unwrap().push(headers);
                    "ok"
                },
            ),
        )
        .with_state(Arc::clone(&seen));
    (serve(app).await, seen)
}

type Stack = Session<Forward<Client<HttpConnector, Body>>>;

#[derive(Clone)]
struct App {
    backend: SocketAddr,
    client: Stack,
}

/// `/api/<path>` calls the backend's `/<path>`; `/quiet/<path>` does the same for an endpoint
/// declared with `forward: false`.
async fn call_backend(State(app): State<App>, Path(path): Path<String>, forward: bool) -> Response {
    let request = http::Request::get(format!("http://{}/{path}", app.backend))
        .extension(EndpointMeta::new(format!("backend.{path}"), Kind::Query).forward(forward))
        .body(Body::empty())
        .unwrap();
    match app.client.oneshot(request).await {
        Ok(response) => response.status().into_response(),
        Err(err) => (StatusCode::BAD_GATEWAY, err.to_string()).into_response(),
    }
}

/// Request ids `id-1`, `id-2`, ... for requests that come without one.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>);

impl MakeRequestId for Counter {
    fn make_request_id<B>(&mut self, _: &http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        HeaderValue::from_str(&format!("id-{n}"))
            .ok()
            .map(RequestId::new)
    }
}

async fn app(backend: SocketAddr) -> SocketAddr {
    let transport = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let client = ServiceBuilder::new()
        .layer(SessionLayer::new(SessionOptions::new().cookies(["sid"])))
        .layer(ForwardLayer::new(
            ForwardOptions::new()
                .request_id(true)
                .trace(true)
                .client_address(true)
                .user_agent(true)
                .locale(true)
                .headers(["x-tenant"]),
        ))
        .service(transport);
    let app = Router::new()
        .route(
            "/api/{*path}",
            get(|state, path| call_backend(state, path, true)),
        )
        .route(
            "/quiet/{*path}",
            get(|state, path| call_backend(state, path, false)),
        )
        .layer(
            ServiceBuilder::new()
                // The request id is set before the context copies the request's head.
                .layer(SetRequestIdLayer::x_request_id(Counter::default()))
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(ContextLayer::new()),
        )
        .with_state(App { backend, client });
    serve(app).await
}

fn browser() -> Client<HttpConnector, Empty<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_local_address(Some(BROWSER_IP));
    Client::builder(TokioExecutor::new()).build(connector)
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
}

fn browser_request(url: String, headers: &[(&str, &str)]) -> http::Request<Empty<Bytes>> {
    let mut builder = http::Request::get(url);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Empty::new()).unwrap()
}

#[tokio::test]
async fn request_id_trace_context_and_client_address_reach_the_backend() {
    let (backend, seen) = backend().await;
    let app = app(backend).await;
    let request = browser_request(
        format!("http://{app}/api/report"),
        &[
            ("traceparent", TRACEPARENT),
            ("tracestate", "congo=t61rcWkgMzE"),
            ("x-forwarded-for", "203.0.113.7"),
            ("user-agent", "TestBrowser/1.0"),
            ("accept-language", "de-CH"),
            ("x-tenant", "acme"),
            ("x-not-named", "stays"),
            ("cookie", "sid=u1; theme=dark"),
        ],
    );
    let response = browser().request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let browser_end = response
        .extensions()
        .get::<HttpInfo>()
        .unwrap()
        .local_addr();
    assert_eq!(browser_end.ip(), BROWSER_IP);
    let request_id = header(response.headers(), "x-request-id").expect("the app set an id");
    assert!(request_id.starts_with("id-"));

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert_eq!(
        header(got, "x-request-id"),
        Some(request_id),
        "the id the app made"
    );
    assert_eq!(header(got, "traceparent").as_deref(), Some(TRACEPARENT));
    assert_eq!(
        header(got, "tracestate").as_deref(),
        Some("congo=t61rcWkgMzE")
    );
    assert_eq!(
        header(got, "x-forwarded-for"),
        Some(format!("203.0.113.7, {}", browser_end.ip())),
        "the browser's chain, then its real address"
    );
    assert_eq!(
        header(got, "user-agent").as_deref(),
        Some("TestBrowser/1.0")
    );
    assert_eq!(header(got, "accept-language").as_deref(), Some("de-CH"));
    assert_eq!(header(got, "x-tenant").as_deref(), Some("acme"));
    assert_eq!(header(got, "x-not-named"), None);
    // Only the session's cookie: forwarding does not add the others.
    assert_eq!(header(got, "cookie").as_deref(), Some("sid=u1"));
}

#[tokio::test]
async fn a_request_id_the_browser_sent_is_the_one_forwarded() {
    let (backend, seen) = backend().await;
    let app = app(backend).await;
    let request = browser_request(
        format!("http://{app}/api/report"),
        &[("x-request-id", "browser-chosen")],
    );
    let response = browser().request(request).await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "browser-chosen");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        header(&seen[0], "x-request-id").as_deref(),
        Some("browser-chosen")
    );
}

#[tokio::test]
async fn an_endpoint_with_forward_off_gets_nothing_forwarded() {
    let (backend, seen) = backend().await;
    let app = app(backend).await;
    let request = browser_request(
        format!("http://{app}/quiet/report"),
        &[
            ("traceparent", TRACEPARENT),
            ("user-agent", "TestBrowser/1.0"),
            ("x-tenant", "acme"),
        ],
    );
    let response = browser().request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let seen = seen.lock().unwrap().clone();
    let got = &seen[0];
    for name in [
        "x-request-id",
        "traceparent",
        "x-forwarded-for",
        "x-tenant",
        "accept-language",
    ] {
        assert_eq!(header(got, name), None, "{name}");
    }
    assert_ne!(
        header(got, "user-agent").as_deref(),
        Some("TestBrowser/1.0")
    );
}
