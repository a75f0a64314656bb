use super::body::CoalesceBody;
use super::error::{Interrupted, Shared};
use super::flight::{InFlight, Join};
use super::key::{Key, TRACING_HEADERS};
use super::{Coalesce, CoalesceLayer};
use crate::BufferedBody;
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::{Body, BoxError, EndpointMeta, Kind};
use futures_util::stream;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body::{Body as _, Frame};
use http_body_util::{BodyExt, StreamBody};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tower::limit::ConcurrencyLimit;
use tower::{Layer, Service, ServiceExt};

const USER: &str = "http://127.0.0.1:9/users/7";

type MockBody = StreamBody<stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, BoxError>>>>;

/// How the mock upstream answers, once its gate opens.
#[derive(Clone, Copy)]
enum Answer {
    /// 200, a body describing the request it saw, a trailer, an extension.
    Ok,
    /// The service fails.
    Fail,
    /// The head arrives, then the body fails.
    BodyFails,
    /// The future panics.
    Panic,
}

/// Which upstream call a response came from, as an extension.
#[derive(Clone, Debug, PartialEq)]
struct CallNumber(usize);

#[derive(Debug)]
struct UpstreamDown;

impl fmt::Display for UpstreamDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("upstream down")
    }
}

impl std::error::Error for UpstreamDown {}

/// A mock upstream that counts its calls, holds every answer until its gate opens, and counts
/// the futures dropped before they answered.
#[derive(Clone)]
struct Upstream(Arc<State>);

struct State {
    answer: Answer,
    open: watch::Sender<bool>,
    calls: AtomicUsize,
    started: AtomicUsize,
    served: AtomicUsize,
    cancelled: AtomicUsize,
    cancelled_signal: Notify,
}

impl Upstream {
    fn new(answer: Answer) -> Self {
        Self(Arc::new(State {
            answer,
            open: watch::channel(false).0,
            calls: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            served: AtomicUsize::new(0),
            cancelled: AtomicUsize::new(0),
            cancelled_signal: Notify::new(),
        }))
    }

    fn open(&self) {
        self.0.open.send_replace(true);
    }

    fn calls(&self) -> usize {
        self.0.calls.load(Ordering::SeqCst)
    }

    fn started(&self) -> usize {
        self.0.started.load(Ordering::SeqCst)
    }

    fn cancelled(&self) -> usize {
        self.0.cancelled.load(Ordering::SeqCst)
    }
}

/// Counts a future dropped before it answered.
struct CancelGuard {
    state: Arc<State>,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            self.state.cancelled.fetch_add(1, Ordering::SeqCst);
            self.state.cancelled_signal.notify_one();
        }
    }
}

fn describe(number: usize, request: &Request<Body>) -> String {
    let header = |name: &str| {
        request
            .headers()
            .get_all(name)
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .collect::<Vec<_>>()
            .join(",")
    };
    let body = match request.body().buffered() {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => "<streamed>".to_owned(),
    };
    format!(
        "call {number}: {} {} authorization={} cookie={} body={body}",
        request.method(),
        request.uri(),
        header("authorization"),
        header("cookie"),
    )
}

impl Service<Request<Body>> for Upstream {
    type Response = Response<MockBody>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<MockBody>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let number = self.0.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let seen = describe(number, &request);
        let state = Arc::clone(&self.0);
        // Outside the async block, so that a future dropped before its first poll counts too.
        let guard = CancelGuard {
            state: Arc::clone(&state),
            armed: true,
        };
        Box::pin(async move {
            let mut guard = guard;
            state.started.fetch_add(1, Ordering::SeqCst);
            if ServedRequest::is_serving() {
                state.served.fetch_add(1, Ordering::SeqCst);
            }
            let mut open = state.open.subscribe();
            let _ = open.wait_for(|open| *open).await;
            guard.armed = false;
            let frames: Vec<Result<Frame<Bytes>, BoxError>> = match state.answer {
                Answer::Ok => {
                    let mut trailers = HeaderMap::new();
                    trailers.insert("x-call", HeaderValue::from(number));
                    vec![
                        Ok(Frame::data(Bytes::from(seen))),
                        Ok(Frame::trailers(trailers)),
                    ]
                }
                Answer::Fail => return Err(UpstreamDown.into()),
                Answer::BodyFails => vec![
                    Ok(Frame::data(Bytes::from_static(b"partial"))),
                    Err(UpstreamDown.into()),
                ],
                Answer::Panic => panic!("upstream panicked"),
            };
            let mut response = Response::new(StreamBody::new(stream::iter(frames)));
            *response.status_mut() = StatusCode::ACCEPTED;
            response
                .headers_mut()
                .insert("x-call", HeaderValue::from(number));
            response.extensions_mut().insert(CallNumber(number));
            Ok(response)
        })
    }
}

fn service(answer: Answer) -> (Coalesce<Upstream>, Upstream) {
    let upstream = Upstream::new(answer);
    (Coalesce::new(upstream.clone()), upstream)
}

fn get(uri: &str) -> Request<Body> {
    request("GET", uri, Body::empty())
}

fn request(method: &str, uri: &str, body: Body) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .body(body)
        .expect("a valid request")
}

fn with_header(
    mut request: Request<Body>,
    name: &'static str,
    value: &'static str,
) -> Request<Body> {
    request
        .headers_mut()
        .append(name, HeaderValue::from_static(value));
    request
}

fn with_meta(mut request: Request<Body>, meta: EndpointMeta) -> Request<Body> {
    request.extensions_mut().insert(meta);
    request
}

async fn text(response: Response<CoalesceBody<MockBody>>) -> String {
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes();
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

/// Bounds a wait that must end; with time paused, a wait that would hang fails at once.
async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future)
        .await
        .expect("finished in time")
}

/// Sends every request at once, then opens the gate, and answers with what each one got.
async fn all_at_once(
    service: &mut Coalesce<Upstream>,
    upstream: &Upstream,
    requests: Vec<Request<Body>>,
) -> Vec<String> {
    let futures: Vec<_> = requests
        .into_iter()
        .map(|request| service.call(request))
        .collect();
    upstream.open();
    let mut answers = Vec::new();
    for future in futures {
        answers.push(text(within(future).await.expect("a response")).await);
    }
    answers
}

#[tokio::test(start_paused = true)]
async fn identical_reads_share_one_call() {
    let (mut service, upstream) = service(Answer::Ok);

    let first = service.call(get(USER));
    let second = service.call(get(USER));
    assert_eq!(upstream.calls(), 1);
    assert_eq!(service.in_flight(), 1);

    upstream.open();
    let (first, second) = (within(first).await.unwrap(), within(second).await.unwrap());
    for response in [first, second] {
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        assert_eq!(response.headers()["x-call"], "1");
        assert_eq!(response.extensions().get(), Some(&CallNumber(1)));
        let expected = format!("call 1: GET {USER} authorization= cookie= body=");
        assert_eq!(
            response.body().size_hint().exact(),
            Some(expected.len() as u64)
        );
        let collected = response.into_body().collect().await.unwrap();
        assert_eq!(collected.trailers().unwrap()["x-call"], "1");
        assert_eq!(collected.to_bytes(), expected);
    }
    assert_eq!(upstream.calls(), 1);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn clones_share_their_calls() {
    let (mut service, upstream) = service(Answer::Ok);
    let mut clone = service.clone();

    let first = service.call(get(USER));
    let second = clone.call(get(USER));
    assert_eq!(upstream.calls(), 1);

    upstream.open();
    assert_eq!(within(first).await.unwrap().headers()["x-call"], "1");
    assert_eq!(within(second).await.unwrap().headers()["x-call"], "1");
}

#[tokio::test(start_paused = true)]
async fn different_uris_headers_and_bodies_are_not_shared() {
    let (mut service, upstream) = service(Answer::Ok);
    let body = |text: &'static str| request("GET", USER, Body::from(text));

    let answers = all_at_once(
        &mut service,
        &upstream,
        vec![
            get(USER),
            get("http://127.0.0.1:9/users/8"),
            get("http://127.0.0.1:9/users/7?fields=name"),
            get("http://127.0.0.1:10/users/7"),
            with_header(get(USER), "accept-language", "fr"),
            body("{\"a\":1}"),
            body("{\"a\":2}"),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 7);
    for (index, answer) in answers.iter().enumerate() {
        assert!(
            answer.starts_with(&format!("call {}:", index + 1)),
            "{answer}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn credentials_are_part_of_the_key() {
    let (mut service, upstream) = service(Answer::Ok);

    let answers = all_at_once(
        &mut service,
        &upstream,
        vec![
            with_header(get(USER), "authorization", "Bearer ada"),
            with_header(get(USER), "authorization", "Bearer grace"),
            with_header(get(USER), "cookie", "sid=ada"),
            with_header(get(USER), "cookie", "sid=grace"),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 4);
    assert!(answers[0].contains("authorization=Bearer ada"));
    assert!(answers[1].contains("authorization=Bearer grace"));
    assert!(answers[2].contains("cookie=sid=ada"));
    assert!(answers[3].contains("cookie=sid=grace"));
}

#[test]
fn header_order_matters_only_within_a_name() {
    let key = |headers: &[(&'static str, &'static str)]| {
        let request = headers.iter().fold(get(USER), |request, (name, value)| {
            with_header(request, name, value)
        });
        Key::of(&request, &TRACING_HEADERS).expect("a buffered body")
    };

    assert_eq!(
        key(&[
            ("accept", "application/json"),
            ("authorization", "Bearer ada")
        ]),
        key(&[
            ("authorization", "Bearer ada"),
            ("accept", "application/json")
        ]),
    );
    assert_ne!(
        key(&[("accept", "application/json"), ("accept", "text/plain")]),
        key(&[("accept", "text/plain"), ("accept", "application/json")]),
    );
    assert_ne!(
        key(&[("x-tenant", "a")]),
        key(&[("x-tenant", "a"), ("x-tenant", "a")])
    );
}

#[tokio::test(start_paused = true)]
async fn reordered_headers_share_a_call() {
    let (mut service, upstream) = service(Answer::Ok);
    let first = with_header(
        with_header(get(USER), "accept", "application/json"),
        "x-tenant",
        "a",
    );
    let second = with_header(
        with_header(get(USER), "x-tenant", "a"),
        "accept",
        "application/json",
    );

    let answers = all_at_once(&mut service, &upstream, vec![first, second]).await;

    assert_eq!(upstream.calls(), 1);
    assert_eq!(answers[0], answers[1]);
}

#[tokio::test(start_paused = true)]
async fn writes_are_never_shared() {
    let (mut service, upstream) = service(Answer::Ok);
    let write = EndpointMeta::new("users.update", Kind::Mutation);

    all_at_once(
        &mut service,
        &upstream,
        vec![
            request("POST", USER, Body::from("{}")),
            request("POST", USER, Body::from("{}")),
            request("DELETE", USER, Body::empty()),
            request("DELETE", USER, Body::empty()),
            // An endpoint that writes is a write whatever its method.
            with_meta(get(USER), write.clone()),
            with_meta(get(USER), write),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 6);
}

#[tokio::test(start_paused = true)]
async fn a_read_sent_as_post_is_shared_by_its_meta() {
    let (mut service, upstream) = service(Answer::Ok);
    let read = EndpointMeta::new("users.search", Kind::Query);
    let search =
        |body: &'static str| with_meta(request("POST", USER, Body::from(body)), read.clone());

    let answers = all_at_once(
        &mut service,
        &upstream,
        vec![
            search("{\"q\":\"ada\"}"),
            search("{\"q\":\"ada\"}"),
            search("{\"q\":\"bob\"}"),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 2);
    assert_eq!(answers[0], answers[1]);
    assert!(answers[2].starts_with("call 2:"));
}

#[tokio::test(start_paused = true)]
async fn coalesce_false_turns_it_off() {
    let (mut service, upstream) = service(Answer::Ok);
    let unshared = EndpointMeta::new("users.get", Kind::Query).coalesce(false);

    all_at_once(
        &mut service,
        &upstream,
        vec![
            with_meta(get(USER), unshared.clone()),
            with_meta(get(USER), unshared),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn tracing_headers_are_left_out_of_the_key() {
    let (mut service, upstream) = service(Answer::Ok);
    let traced = |id: &'static str, parent: &'static str, state: &'static str| {
        let request = with_header(get(USER), "x-request-id", id);
        with_header(
            with_header(request, "traceparent", parent),
            "tracestate",
            state,
        )
    };

    all_at_once(
        &mut service,
        &upstream,
        vec![
            traced(
                "a1",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "congo=t61rcWkgMzE",
            ),
            traced(
                "b2",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "rojo=00f067aa0ba902b7",
            ),
        ],
    )
    .await;

    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn ignore_header_extends_the_tracing_headers() {
    let correlated = |id: &'static str| with_header(get(USER), "x-correlation-id", id);

    let (mut service, upstream) = service(Answer::Ok);
    all_at_once(
        &mut service,
        &upstream,
        vec![correlated("a"), correlated("b")],
    )
    .await;
    assert_eq!(upstream.calls(), 2, "a header is in the key unless ignored");

    let upstream = Upstream::new(Answer::Ok);
    let mut service = CoalesceLayer::new()
        .ignore_header(HeaderName::from_static("x-correlation-id"))
        .layer(upstream.clone());
    all_at_once(
        &mut service,
        &upstream,
        vec![correlated("a"), correlated("b")],
    )
    .await;
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn streamed_bodies_are_not_shared() {
    let (mut service, upstream) = service(Answer::Ok);
    let streamed = || {
        let body = Body::new(http_body_util::Full::new(Bytes::from_static(b"{}")));
        request("GET", USER, body)
    };

    let answers = all_at_once(&mut service, &upstream, vec![streamed(), streamed()]).await;

    assert_eq!(upstream.calls(), 2);
    assert!(answers[0].ends_with("body=<streamed>"));
}

#[tokio::test(start_paused = true)]
async fn event_streams_and_upgrades_are_not_shared() {
    let (mut service, upstream) = service(Answer::Ok);
    let events = || with_header(get(USER), "accept", "text/event-stream");
    let upgrade = || {
        let request = with_header(get(USER), "connection", "upgrade");
        with_header(request, "upgrade", "websocket")
    };

    all_at_once(
        &mut service,
        &upstream,
        vec![events(), events(), upgrade(), upgrade()],
    )
    .await;

    assert_eq!(upstream.calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_leader_leaving_does_not_cancel_the_others() {
    let (mut service, upstream) = service(Answer::Ok);

    let leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    tokio::task::yield_now().await;
    assert_eq!(upstream.started(), 1);
    drop(leader);
    tokio::task::yield_now().await;
    assert_eq!(upstream.cancelled(), 0);
    assert_eq!(service.in_flight(), 1);

    upstream.open();
    let response = within(waiter).await.unwrap();
    assert_eq!(response.headers()["x-call"], "1");
    assert_eq!(upstream.calls(), 1);
    assert_eq!(upstream.cancelled(), 0);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_leaving_does_not_cancel_the_others() {
    let (mut service, upstream) = service(Answer::Ok);

    let leader = service.call(get(USER));
    let waiters: Vec<_> = (0..3).map(|_| service.call(get(USER))).collect();
    tokio::task::yield_now().await;
    let mut waiters = waiters.into_iter();
    drop(waiters.next());
    drop(waiters.next());
    tokio::task::yield_now().await;
    assert_eq!(upstream.cancelled(), 0);

    upstream.open();
    assert_eq!(within(leader).await.unwrap().headers()["x-call"], "1");
    for waiter in waiters {
        assert_eq!(within(waiter).await.unwrap().headers()["x-call"], "1");
    }
    assert_eq!(upstream.calls(), 1);
    assert_eq!(upstream.cancelled(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_last_caller_leaving_cancels_the_call() {
    let (mut service, upstream) = service(Answer::Ok);

    let leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    tokio::task::yield_now().await;
    assert_eq!(upstream.started(), 1);

    drop(waiter);
    drop(leader);
    within(upstream.0.cancelled_signal.notified()).await;
    assert_eq!(upstream.cancelled(), 1);
    assert_eq!(service.in_flight(), 0);

    // An abandoned call is gone: the same read goes upstream again.
    upstream.open();
    let response = within(service.call(get(USER))).await.unwrap();
    assert_eq!(response.headers()["x-call"], "2");
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn an_error_reaches_every_waiter() {
    let (mut service, upstream) = service(Answer::Fail);

    let first = service.call(get(USER));
    let second = service.call(get(USER));
    upstream.open();

    for result in [within(first).await, within(second).await] {
        let error = result.unwrap_err();
        let shared = error.downcast_ref::<Shared>().expect("a shared failure");
        assert!(shared.get_ref().is::<UpstreamDown>());
        assert!(error.source().unwrap().is::<UpstreamDown>());
        assert_eq!(
            error.to_string(),
            "shared in-flight call failed: upstream down"
        );
    }
    assert_eq!(upstream.calls(), 1);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_body_error_reaches_every_waiter() {
    let (mut service, upstream) = service(Answer::BodyFails);

    let first = service.call(get(USER));
    let second = service.call(get(USER));
    upstream.open();

    for result in [within(first).await, within(second).await] {
        let error = result.unwrap_err();
        assert!(error.downcast_ref::<Shared>().is_some());
        assert!(error.source().unwrap().is::<UpstreamDown>());
    }
    assert_eq!(upstream.calls(), 1);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_call_interrupts_its_waiters() {
    let (mut service, upstream) = service(Answer::Panic);

    let first = service.call(get(USER));
    let second = service.call(get(USER));
    upstream.open();

    for result in [within(first).await, within(second).await] {
        let error = result.unwrap_err();
        assert!(error.is::<Interrupted>(), "{error}");
    }
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn after_an_answer_the_same_read_goes_upstream_again() {
    let (mut service, upstream) = service(Answer::Ok);
    upstream.open();

    let first = within(service.call(get(USER))).await.unwrap();
    assert_eq!(service.in_flight(), 0);
    let second = within(service.call(get(USER))).await.unwrap();

    assert_eq!(first.headers()["x-call"], "1");
    assert_eq!(second.headers()["x-call"], "2");
    assert_eq!(upstream.calls(), 2);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_shared_call_runs_in_the_leaders_served_request_scope() {
    let (mut service, upstream) = service(Answer::Ok);
    let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
    let served = ServedRequest::new(parts, None);

    upstream.open();
    // The inner future is polled in the call's own task, not the caller's.
    let call = served.scope(async { service.call(get(USER)).await });
    within(call).await.unwrap();

    assert_eq!(upstream.0.served.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn readiness_is_the_inner_services() {
    let upstream = Upstream::new(Answer::Ok);
    let mut service = Coalesce::new(ConcurrencyLimit::new(upstream.clone(), 1));

    service.ready().await.unwrap();
    let first = service.call(get(USER));
    // The one permit goes with the call in flight.
    let waited = tokio::time::timeout(Duration::from_secs(1), service.ready()).await;
    assert!(waited.is_err(), "ready while the inner service is not");

    upstream.open();
    within(first).await.unwrap();
    within(service.ready()).await.unwrap();
}

#[test]
fn outside_a_runtime_requests_go_through_unshared() {
    let (mut service, upstream) = service(Answer::Ok);
    upstream.open();

    let first = service.call(get(USER));
    let second = service.call(get(USER));
    assert_eq!(upstream.calls(), 2);
    assert_eq!(service.in_flight(), 0);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (first, second) = runtime
        .block_on(async { tokio::try_join!(first, second) })
        .unwrap();
    assert_eq!(first.headers()["x-call"], "1");
    assert_eq!(second.headers()["x-call"], "2");
}

#[test]
fn a_hash_collision_never_shares_a_call() {
    let in_flight = Arc::new(InFlight::new(TRACING_HEADERS.to_vec().into_boxed_slice()));
    let key = |uri: &str| Key::of(&get(uri), in_flight.ignored()).unwrap();
    let is_leading = |join: &Join| matches!(join, Join::Leading { .. });

    // Every key hashes alike here: only the full comparison tells them apart.
    let users_7 = in_flight.join_hashed(key(USER), 42);
    let users_8 = in_flight.join_hashed(key("http://127.0.0.1:9/users/8"), 42);
    let users_7_again = in_flight.join_hashed(key(USER), 42);

    assert!(is_leading(&users_7));
    assert!(
        is_leading(&users_8),
        "a different key with the same hash leads its own call"
    );
    assert!(matches!(users_7_again, Join::Waiting { waiters: 2, .. }));
    assert_eq!(in_flight.len(), 2);

    drop((users_7, users_8, users_7_again));
    assert_eq!(in_flight.len(), 0);
}

#[tokio::test]
async fn a_shared_body_reports_its_size_and_end() {
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum", HeaderValue::from_static("abc"));
    let mut body = CoalesceBody::<MockBody>::shared(Bytes::from_static(b"ada"), Some(trailers));

    assert_eq!(body.size_hint().exact(), Some(3));
    assert!(!body.is_end_stream());
    let data = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(data, "ada");
    assert_eq!(body.size_hint().exact(), Some(0));
    assert!(!body.is_end_stream(), "the trailers are still to come");
    let trailers = body
        .frame()
        .await
        .unwrap()
        .unwrap()
        .into_trailers()
        .unwrap();
    assert_eq!(trailers["x-checksum"], "abc");
    assert!(body.is_end_stream());
    assert!(body.frame().await.is_none());

    let empty = CoalesceBody::<MockBody>::shared(Bytes::new(), None);
    assert!(empty.is_end_stream());
    assert_eq!(empty.size_hint().exact(), Some(0));
}
