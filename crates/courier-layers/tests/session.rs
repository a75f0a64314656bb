//! `SessionLayer` end to end: a browser (a plain hyper-util client) calls an axum app wrapped in
//! `ContextLayer`; its handler calls a backend (another axum server that records what it
//! receives) through a hyper-util client stacked with `SessionLayer` and `ForwardLayer`. All on
//! 127.0.0.1.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use bytes::Bytes;
use courier_core::{Body, EndpointMeta, ForwardOptions, Kind, SessionOptions};
use courier_layers::context::ContextLayer;
use courier_layers::forward::{Forward, ForwardLayer};
use courier_layers::session::error::SessionRefused;
use courier_layers::session::{Session, SessionLayer};
use courier_test_support::serve;
use http::header::SET_COOKIE;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Barrier;
use tower::{ServiceBuilder, ServiceExt};

const USERS: usize = 50;

/// The backend: records the headers of every request and answers with the session it saw.
#[derive(Clone)]
struct Backend {
    seen: Arc<Mutex<Vec<HeaderMap>>>,
    together: Arc<Barrier>,
}

impl Backend {
    fn seen(&self) -> Vec<HeaderMap> {
        self.seen.lock().unwrap().clone()
    }
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// What the backend answers: the cookie and authorization it received.
fn session_seen(headers: &HeaderMap) -> String {
    format!(
        "{}|{}",
        header(headers, "cookie"),
        header(headers, "authorization")
    )
}

async fn backend() -> (SocketAddr, Backend) {
    let state = Backend {
        seen: Arc::default(),
        together: Arc::new(Barrier::new(USERS)),
    };
    let record = |State(backend): State<Backend>, headers: HeaderMap| async move {
        backend.seen.lock().unwrap().push(headers.clone());
        session_seen(&headers)
    };
    let app = Router::new()
        .route("/profile", get(record))
        .route("/update", post(record))
        .route(
            "/login",
            post(
                |State(backend): State<Backend>, headers: HeaderMap| async move {
                    backend.seen.lock().unwrap().push(headers);
                    (
                        AppendHeaders([
                            (SET_COOKIE, "sid=fresh; Path=/; HttpOnly"),
                            (SET_COOKIE, "tracking=1"),
                        ]),
                        "signed in",
                    )
                },
            ),
        )
        .route(
            "/together",
            get(
                |State(backend): State<Backend>, headers: HeaderMap| async move {
                    backend.seen.lock().unwrap().push(headers.clone());
                    // Every user's call is in flight at once before any is answered.
                    backend.together.wait().await;
                    session_seen(&headers)
                },
            ),
        )
        .with_state(state.clone());
    (serve(app).await, state)
}

type Stack = Session<Forward<Client<HttpConnector, Body>>>;

#[derive(Clone)]
struct App {
    backend: SocketAddr,
    client: Stack,
}

/// The app's one handler: `/api/<path>` calls the backend's `/<path>` with the same method.
async fn call_backend(
    State(app): State<App>,
    method: Method,
    Path(path): Path<String>,
) -> Response {
    let kind = Kind::of_method(&method);
    let request = http::Request::builder()
        .method(method)
        .uri(format!("http://{}/{path}", app.backend))
        .extension(EndpointMeta::new(format!("backend.{path}"), kind))
        .body(Body::empty())
        .unwrap();
    match app.client.oneshot(request).await {
        // Status and body only: the session's set-cookie pass-back is the context layer's job.
        Ok(response) => {
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, body).into_response()
        }
        Err(err) => match err.downcast_ref::<SessionRefused>() {
            Some(refused) => (refused.status(), refused.to_string()).into_response(),
            None => (StatusCode::BAD_GATEWAY, err.to_string()).into_response(),
        },
    }
}

async fn app(backend: SocketAddr) -> SocketAddr {
    let transport = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let client = ServiceBuilder::new()
        .layer(SessionLayer::new(
            SessionOptions::new()
                .cookies(["sid", "sess_*"])
                .bearer("access_token")
                .csrf("csrf_token", "x-csrf-token")
                .pass_set_cookie(true),
        ))
        .layer(ForwardLayer::new(
            ForwardOptions::new().request_id(true).client_address(true),
        ))
        .service(transport);
    let app = Router::new()
        .route("/api/{*path}", any(call_backend))
        .layer(ContextLayer::new())
        .with_state(App { backend, client });
    serve(app).await
}

/// Both servers, and the browser.
async fn setup() -> (SocketAddr, Backend, Client<HttpConnector, Empty<Bytes>>) {
    let (backend_addr, backend) = backend().await;
    let app = app(backend_addr).await;
    let browser = Client::builder(TokioExecutor::new()).build_http();
    (app, backend, browser)
}

fn browser_request(
    method: Method,
    url: String,
    headers: &[(&str, &str)],
) -> http::Request<Empty<Bytes>> {
    let mut builder = http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Empty::new()).unwrap()
}

async fn text<B>(response: http::Response<B>) -> String
where
    B: http_body::Body,
    B::Error: std::fmt::Debug,
{
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn the_session_cookie_and_bearer_reach_the_backend() {
    let (app, backend, browser) = setup().await;
    let request = browser_request(
        Method::GET,
        format!("http://{app}/api/profile"),
        &[(
            "cookie",
            "theme=dark; sid=u1; sess_region=eu; access_token=tok-u1",
        )],
    );
    let response = browser.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(text(response).await, "sid=u1; sess_region=eu|Bearer tok-u1");
    let seen = backend.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].get_all("cookie").iter().count(), 1);
    // The forward layer below adds the client address, but never the other cookies.
    assert_eq!(header(&seen[0], "x-forwarded-for"), "127.0.0.1");
}

#[tokio::test]
async fn the_backends_session_cookie_reaches_the_browser() {
    let (app, backend, browser) = setup().await;
    let request = browser_request(
        Method::POST,
        format!("http://{app}/api/login"),
        &[
            ("origin", &format!("http://{app}")),
            ("cookie", "csrf_token=t-123; theme=dark"),
            ("x-csrf-token", "t-123"),
        ],
    );
    let response = browser.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let cookies: Vec<_> = response.headers().get_all(SET_COOKIE).iter().collect();
    assert_eq!(
        cookies,
        ["sid=fresh; Path=/; HttpOnly"],
        "only the session cookie passes back"
    );
    assert_eq!(text(response).await, "signed in");

    // The checked write carried the token both ways a backend checks it.
    let seen = backend.seen();
    assert_eq!(header(&seen[0], "x-csrf-token"), "t-123");
    assert_eq!(header(&seen[0], "cookie"), "csrf_token=t-123");
}

#[tokio::test]
async fn a_write_without_the_csrf_token_is_refused_before_the_backend() {
    let (app, backend, browser) = setup().await;
    let request = browser_request(
        Method::POST,
        format!("http://{app}/api/update"),
        &[("cookie", "sid=u1; csrf_token=t-123")],
    );
    let response = browser.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        text(response).await,
        "write refused by the session: CSRF check failed: the served request carries no CSRF \
         token header; a write repeats the `csrf_token` cookie's value in the `x-csrf-token` \
         header (a page's caller does it by itself when its routes, or its `csrf` option, name \
         them)"
    );
    assert!(backend.seen().is_empty(), "the backend saw nothing");
}

#[tokio::test]
async fn a_write_from_another_site_is_refused_before_the_backend() {
    let (app, backend, browser) = setup().await;
    let request = browser_request(
        Method::POST,
        format!("http://{app}/api/update"),
        &[
            ("origin", "https://evil.example"),
            ("cookie", "sid=u1; csrf_token=t-123"),
            ("x-csrf-token", "t-123"),
        ],
    );
    let response = browser.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(text(response).await.contains("origin check failed"));
    assert!(backend.seen().is_empty(), "the backend saw nothing");
}

#[tokio::test]
async fn concurrent_users_each_carry_only_their_own_session() {
    let (app, backend, browser) = setup().await;
    let calls = (0..USERS).map(|user| {
        let browser = browser.clone();
        let request = browser_request(
            Method::GET,
            format!("http://{app}/api/together"),
            &[(
                "cookie",
                &format!("theme=t{user}; sid=user-{user}; access_token=tok-{user}"),
            )],
        );
        async move {
            let response = browser.request(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            (user, text(response).await)
        }
    });
    let answers = tokio::time::timeout(
        Duration::from_secs(20),
        futures_util::future::join_all(calls),
    )
    .await
    .expect("all calls were in flight together and then answered");
    for (user, seen) in answers {
        assert_eq!(seen, format!("sid=user-{user}|Bearer tok-{user}"));
    }

    // And from the backend's side: fifty requests, fifty different users, one cookie each.
    let seen = backend.seen();
    assert_eq!(seen.len(), USERS);
    let mut sessions: Vec<String> = seen
        .iter()
        .map(|headers| {
            assert_eq!(headers.get_all("cookie").iter().count(), 1);
            session_seen(headers)
        })
        .collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), USERS);
}
