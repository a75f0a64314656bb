//! courier's whole layer stack built by hand with `tower::ServiceBuilder` over a bare hyper-util
//! client, in the order `Caller` assembles it, against a real axum server on 127.0.0.1: each
//! layer acts in that stack.
//!
//! `stack()` below is the code `docs/LAYERS.md` shows; `the_guide_shows_this_stack` keeps the
//! two the same.

// ANCHOR: stack
use courier_core::{Body, BoxError, ForwardOptions, HttpService, RetryPolicy, SessionOptions};
use courier_layers::auth::AuthLayer;
use courier_layers::cancel_previous::CancelPreviousLayer;
use courier_layers::coalesce::CoalesceLayer;
use courier_layers::forward::ForwardLayer;
use courier_layers::retry::RetryLayer;
use courier_layers::session::SessionLayer;
use courier_layers::timeout::TimeoutLayer;
use courier_layers::trace::trace_layer;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::convert::Infallible;
use std::time::Duration;
use tower::{ServiceBuilder, ServiceExt};

/// The stack `Caller` assembles for a source with `cancel_previous`, `session`, `forward` and two
/// middleware (a bearer token and call logging), built by hand over a bare hyper-util client.
fn stack(session: SessionOptions, forward: ForwardOptions) -> HttpService {
    // The transport: plain HTTP/1.1, its body and error turned into courier's.
    let transport = Client::builder(TokioExecutor::new())
        .build_http::<Body>()
        .map_response(|response| response.map(Body::new))
        .map_err(BoxError::from);

    // A bearer token: the supplier is asked before each call (a token store, an OAuth client,
    // a secrets manager...).
    let get_token = || async { Ok::<_, Infallible>("stack-token") };

    let service = ServiceBuilder::new()
        .layer(CancelPreviousLayer::new())
        .layer(SessionLayer::new(session))
        .layer(ForwardLayer::new(forward))
        // The middleware (the source's `middleware`, `Caller::builder().layer(..)`).
        .layer(AuthLayer::new(get_token))
        .layer(trace_layer())
        // The call's deadline, over every attempt: 30 s for a request whose `EndpointMeta`
        // names no timeout of its own.
        .layer(TimeoutLayer::new(Duration::from_secs(30)))
        .layer(CoalesceLayer::new())
        .layer(RetryLayer::new(RetryPolicy::default()))
        // Each attempt's bound (its `attempt_timeout`); it counts the attempts for the deadline.
        .layer(TimeoutLayer::per_attempt())
        .service(transport);

    // One nameable, cloneable type, `Request<Body>` to `Response<Body>`, as `Caller`'s own.
    HttpService::new(service.map_response(|response| response.map(Body::new)))
}
// ANCHOR_END: stack

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier_core::context::ServedRequest;
use courier_core::{EndpointMeta, Kind};
use courier_layers::cancel_previous::error::Cancelled;
use courier_test_support::{Captured, Recorder, PATIENCE};
use http_body_util::BodyExt;
use std::net::SocketAddr;

/// The upstream's view of the test: what it received, and when to answer held requests.
type Upstream = Recorder;

/// Serves, on an ephemeral port of 127.0.0.1:
///
/// - `/held/{name}`: answers once the test opens the gate, with the name and the session
///   cookie it got;
/// - `/search?q=..`: `q=slow` never answers, any other answers at once;
/// - `/flaky`: 503 the first time, then 200;
/// - `/slow-once`: the first attempt waits far longer than any bound, later ones answer at once;
/// - anything else: 200 `ok`.
async fn serve(upstream: Upstream) -> SocketAddr {
    async fn held(State(upstream): State<Upstream>, request: Request) -> String {
        upstream.record(&request);
        upstream.wait_open().await;
        let cookie = request
            .headers()
            .get("cookie")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("no cookie");
        format!("{} for {cookie}", request.uri().path())
    }
    async fn search(State(upstream): State<Upstream>, request: Request) -> String {
        upstream.record(&request);
        let query = request.uri().query().unwrap_or_default().to_owned();
        if query == "q=slow" {
            let _guard = upstream.abandon_guard();
            std::future::pending::<()>().await;
        }
        format!("results for {query}")
    }
    async fn flaky(State(upstream): State<Upstream>, request: Request) -> Response {
        match upstream.record(&request) {
            0 => (StatusCode::SERVICE_UNAVAILABLE, "down").into_response(),
            _ => "recovered".into_response(),
        }
    }
    async fn slow_once(State(upstream): State<Upstream>, request: Request) -> &'static str {
        if upstream.record(&request) == 0 {
            tokio::time::sleep(PATIENCE).await;
            return "first attempt";
        }
        "second attempt"
    }
    async fn other(State(upstream): State<Upstream>, request: Request) -> &'static str {
        upstream.record(&request);
        "ok"
    }
    let app = Router::new()
        .route("/held/{name}", get(held))
        .route("/search", get(search))
        .route("/flaky", get(flaky))
        .route("/slow-once", get(slow_once))
        .fallback(other)
        .with_state(upstream);
    let address = courier_test_support::serve(app).await;
    address
}

/// The stack of these tests: the session's `sid` cookie, the served request's id forwarded.
fn test_stack() -> HttpService {
    stack(
        SessionOptions::new().cookies(["sid"]),
        ForwardOptions::new().request_id(true),
    )
}

/// A read of `target` on `address`, described by `meta`.
fn read(address: SocketAddr, target: &str, meta: EndpointMeta) -> http::Request<Body> {
    http::Request::get(format!("http://{address}{target}"))
        .extension(meta)
        .body(Body::empty())
        .unwrap()
}

/// A request being served to the user whose session cookie is `sid`.
fn served(sid: &str) -> ServedRequest {
    let (parts, ()) = http::Request::get("/dashboard")
        .header("cookie", format!("sid={sid}; theme=dark"))
        .header("x-request-id", format!("req-{sid}"))
        .body(())
        .unwrap()
        .into_parts();
    ServedRequest::new(parts, None)
}

async fn text(response: http::Response<Body>) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn identical_reads_in_flight_make_one_request() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;
    let service = test_stack();
    let meta = EndpointMeta::new("users.get", Kind::Query);

    // Both calls reach the coalescing layer on their first poll, before the gate opens: the
    // first leads, the second joins it.
    let (first, second, ()) = tokio::join!(
        service
            .clone()
            .oneshot(read(address, "/held/7", meta.clone())),
        service.clone().oneshot(read(address, "/held/7", meta)),
        async {
            upstream.arrived(1).await;
            upstream.open();
        },
    );
    assert_eq!(text(first?).await, "/held/7 for no cookie");
    assert_eq!(text(second?).await, "/held/7 for no cookie");
    assert_eq!(upstream.count(), 1, "the pair shared one upstream request");
    Ok(())
}

#[tokio::test]
async fn two_users_identical_reads_are_not_shared() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;
    let service = test_stack();
    let meta = EndpointMeta::new("users.get", Kind::Query);
    let as_user = |sid: &str| {
        let mut request = read(address, "/held/7", meta.clone());
        request.extensions_mut().insert(served(sid));
        request
    };

    // The same read for two users at once: the session sits outside coalescing, so their
    // cookies are part of the key and both requests reach the upstream before either answers.
    let (alice, bob, ()) = tokio::join!(
        service.clone().oneshot(as_user("alice")),
        service.clone().oneshot(as_user("bob")),
        async {
            upstream.arrived(2).await;
            upstream.open();
        },
    );
    assert_eq!(text(alice?).await, "/held/7 for sid=alice");
    assert_eq!(text(bob?).await, "/held/7 for sid=bob");
    assert_eq!(upstream.count(), 2);
    Ok(())
}

#[tokio::test]
async fn a_503_then_200_is_retried() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;

    let meta = EndpointMeta::new("status.get", Kind::Query);
    let response = test_stack().oneshot(read(address, "/flaky", meta)).await?;
    assert_eq!(response.status(), 200);
    assert_eq!(text(response).await, "recovered");
    assert_eq!(upstream.count(), 2);
    Ok(())
}

#[tokio::test]
async fn a_slow_attempt_is_cut_short_and_the_retry_succeeds() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;

    // The endpoint's bound on each attempt, far below the first attempt's wait.
    let meta =
        EndpointMeta::new("reports.get", Kind::Query).attempt_timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let response = test_stack()
        .oneshot(read(address, "/slow-once", meta))
        .await?;
    assert_eq!(text(response).await, "second attempt");
    assert_eq!(upstream.count(), 2);
    assert!(
        started.elapsed() < PATIENCE,
        "the first attempt was cut short, not waited out"
    );
    Ok(())
}

#[tokio::test]
async fn the_token_session_and_forwarded_headers_arrive() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;
    let service = test_stack();

    // Outside any served request: the token alone.
    let meta = EndpointMeta::new("users.me", Kind::Query);
    service
        .clone()
        .oneshot(read(address, "/me", meta.clone()))
        .await?;
    // While serving alice, given explicitly in the request's extensions (a `ContextLayer` on
    // the server puts it in scope instead).
    let mut request = read(address, "/me", meta);
    request.extensions_mut().insert(served("alice"));
    service.oneshot(request).await?;

    let seen = upstream.seen();
    let (alone, serving) = (&seen[0].headers, &seen[1].headers);
    assert_eq!(alone["authorization"], "Bearer stack-token");
    assert!(alone.get("cookie").is_none());
    assert!(alone.get("x-request-id").is_none());
    assert_eq!(serving["authorization"], "Bearer stack-token");
    assert_eq!(serving["cookie"], "sid=alice", "only the session's cookie");
    assert_eq!(serving["x-request-id"], "req-alice");
    Ok(())
}

#[tokio::test]
async fn a_newer_search_cancels_the_older_one() -> Result<(), BoxError> {
    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;
    let service = test_stack();
    let meta = EndpointMeta::new("users.search", Kind::Query).cancel_previous(true);

    let older = tokio::spawn(service.clone().oneshot(read(
        address,
        "/search?q=slow",
        meta.clone(),
    )));
    upstream.arrived(1).await;
    let newer = service.oneshot(read(address, "/search?q=ab", meta)).await?;
    assert_eq!(text(newer).await, "results for q=ab");

    let err = older.await?.unwrap_err();
    let cancelled = err.downcast_ref::<Cancelled>().expect("a Cancelled error");
    assert_eq!(cancelled.status().as_u16(), 499);
    assert_eq!(cancelled.endpoint(), "users.search");
    // Through coalescing, retry and timeout, the older request is dropped all the way down:
    // the client closes its connection and the server drops the handler.
    upstream.wait_abandoned().await;
    Ok(())
}

// A current-thread runtime, so the subscriber set for this thread sees the whole call.
#[tokio::test(flavor = "current_thread")]
async fn the_call_is_logged_once_with_its_endpoint() -> Result<(), BoxError> {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let upstream = Recorder::new();
    let address = serve(upstream.clone()).await;
    let meta = EndpointMeta::new("status.get", Kind::Query);
    let response = test_stack().oneshot(read(address, "/flaky", meta)).await?;
    assert_eq!(response.status(), 200);

    let log = captured.text();
    let span = format!("courier.call{{endpoint=status.get method=GET uri=http://{address}/flaky}}");
    let finished: Vec<_> = log
        .lines()
        .filter(|line| line.contains("finished processing request"))
        .collect();
    // The log sits outside retry: one call, one line, with the status the caller got.
    assert_eq!(finished.len(), 1, "{log}");
    assert!(finished[0].contains(&span), "{log}");
    assert!(finished[0].contains("status=200"), "{log}");
    assert_eq!(upstream.count(), 2, "the 503 was retried below the log");
    Ok(())
}

#[test]
fn the_guide_shows_this_stack() {
    let source = include_str!("stack.rs");
    let (start, end) = (
        concat!("// ANCHOR", ": stack\n"),
        concat!("// ANCHOR_END", ": stack"),
    );
    let from = source.find(start).expect("the start marker") + start.len();
    let to = source.find(end).expect("the end marker");
    let code = &source[from..to];
    let guide = include_str!("../../../docs/LAYERS.md");
    assert!(
        guide.contains(code),
        "docs/LAYERS.md must show `stack()` exactly as tests/stack.rs has it:\n{code}"
    );
}
