use super::body::CoalesceBody;
use super::error::{Interrupted, Shared};
use super::flight::{InFlight, Join};
use super::{Coalesce, CoalesceLayer};
use crate::key::{Key, TRACING_HEADERS};
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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
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
        Some(bytes) => String::from_utf8_lossy(bytes.as_ref()).into_owned(),
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

/// Polls `future` once.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *future).poll(cx))).await
}

/// Polls `future` once outside any runtime.
fn poll_bare<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
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
async fn a_closure_decides_which_requests_share_instead_of_the_meta() {
    let upstream = Upstream::new(Answer::Ok);
    let mut service = CoalesceLayer::new()
        .coalesce_for(|request: &Request<Body>| request.uri().path() == "/graphql")
        .layer(upstream.clone());
    // The meta says "write, never share": the closure is asked instead, and shares the POSTs.
    let write = EndpointMeta::new("graph.query", Kind::Mutation);
    let query = || {
        with_meta(
            request("POST", "http://127.0.0.1:1/graphql", Body::from("{}")),
            write.clone(),
        )
    };
    let futures = vec![
        service.call(query()),
        service.call(query()),
        // A read the closure does not name goes through unshared.
        service.call(get(USER)),
        service.call(get(USER)),
    ];
    upstream.open();
    let mut answers = Vec::new();
    for future in futures {
        answers.push(text(within(future).await.expect("a response")).await);
    }
    assert_eq!(upstream.calls(), 3);
    assert_eq!(answers[0], answers[1]);
    assert_ne!(answers[2], answers[3]);
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

    let mut leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    assert!(poll_once(&mut leader).await.is_pending());
    assert_eq!(upstream.started(), 1);
    // The leader hands its call to a task, which goes on with it.
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

    let mut leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    assert!(poll_once(&mut leader).await.is_pending());
    assert_eq!(upstream.started(), 1);

    drop(waiter);
    assert_eq!(upstream.cancelled(), 0, "the leader goes on for itself");
    assert_eq!(service.in_flight(), 1);
    // Nobody waits: the leader drops the inner future, nothing is handed off.
    drop(leader);
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
async fn a_leader_whose_call_panics_interrupts_its_waiters() {
    let (mut service, upstream) = service(Answer::Panic);

    let leader = tokio::spawn(service.call(get(USER)));
    let waiter = service.call(get(USER));
    upstream.open();

    // The leader polls the inner future itself: the panic is its own, as without coalescing.
    assert!(within(leader).await.unwrap_err().is_panic());
    let error = within(waiter).await.unwrap_err();
    assert!(error.is::<Interrupted>(), "{error}");
    assert_eq!(
        upstream.started(),
        1,
        "the panicked future is not run again"
    );
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_handed_off_call_that_panics_interrupts_its_waiters() {
    let (mut service, upstream) = service(Answer::Panic);

    let mut leader = service.call(get(USER));
    let waiters = [service.call(get(USER)), service.call(get(USER))];
    assert!(poll_once(&mut leader).await.is_pending());
    drop(leader);
    upstream.open();

    for waiter in waiters {
        let error = within(waiter).await.unwrap_err();
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
    // The leader polls the inner future in the caller's task, in its scope.
    let call = served.scope(async { service.call(get(USER)).await });
    within(call).await.unwrap();

    assert_eq!(upstream.0.served.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_handed_off_call_runs_in_the_served_request_scope_it_left() {
    let (mut service, upstream) = service(Answer::Ok);
    let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
    let served = ServedRequest::new(parts, None);

    upstream.open();
    let call = served.scope(async {
        let leader = service.call(get(USER));
        let waiter = service.call(get(USER));
        // Dropped before its first poll: the inner future is first polled in the task, which
        // does not inherit this scope by itself.
        drop(leader);
        assert_eq!(upstream.started(), 0);
        waiter.await
    });
    within(call).await.unwrap();

    assert_eq!(upstream.started(), 1);
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
fn outside_a_runtime_reads_are_shared() {
    let (mut service, upstream) = service(Answer::Ok);
    upstream.open();

    let mut first = service.call(get(USER));
    let mut second = service.call(get(USER));
    assert_eq!(upstream.calls(), 1);

    let Poll::Ready(first) = poll_bare(&mut first) else {
        panic!("the leader answers at once");
    };
    let Poll::Ready(second) = poll_bare(&mut second) else {
        panic!("the waiter has its copy");
    };
    assert_eq!(first.unwrap().headers()["x-call"], "1");
    assert_eq!(second.unwrap().headers()["x-call"], "1");
    assert_eq!(service.in_flight(), 0);
}

#[test]
fn outside_a_runtime_a_leader_leaving_interrupts_its_waiters() {
    let (mut service, upstream) = service(Answer::Ok);

    let mut leader = service.call(get(USER));
    let mut waiter = service.call(get(USER));
    assert!(poll_bare(&mut leader).is_pending());
    // No task to hand the call to: it is cancelled.
    drop(leader);
    assert_eq!(upstream.cancelled(), 1);
    assert_eq!(service.in_flight(), 0);

    let Poll::Ready(Err(error)) = poll_bare(&mut waiter) else {
        panic!("the waiter is told at once");
    };
    assert!(error.is::<Interrupted>(), "{error}");
}

#[test]
fn a_hash_collision_never_shares_a_call() {
    let in_flight = Arc::new(InFlight::new(TRACING_HEADERS.to_vec().into_boxed_slice()));
    let key = |uri: &str| Key::of(&get(uri), in_flight.ignored()).unwrap();
    let is_leading = |join: &Join| matches!(join, Join::Leading(_));

    // Every key hashes alike here: only the full comparison tells them apart.
    let users_7 = in_flight.join(42, key(USER));
    let users_8 = in_flight.join(42, key("http://127.0.0.1:9/users/8"));
    let users_7_again = in_flight.join(42, key(USER));

    assert!(is_leading(&users_7));
    assert!(
        is_leading(&users_8),
        "a different key with the same hash leads its own call"
    );
    assert!(matches!(users_7_again, Join::Waiting { waiters: 1, .. }));
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

type Frames = mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>;

/// A response body whose frames the test sends one at a time.
struct ChannelBody(mpsc::UnboundedReceiver<Result<Frame<Bytes>, BoxError>>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.0.poll_recv(cx)
    }
}

/// A mock upstream whose response heads arrive at once, and whose bodies the test writes: the
/// sender for each call's body, in call order, until the test takes it.
#[derive(Clone, Default)]
struct Streaming(Arc<Mutex<Vec<Option<Frames>>>>);

impl Service<Request<Body>> for Streaming {
    type Response = Response<ChannelBody>;
    type Error = BoxError;
    type Future = std::future::Ready<Result<Response<ChannelBody>, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Request<Body>) -> Self::Future {
        let (frames, body) = mpsc::unbounded_channel();
        self.0.lock().unwrap().push(Some(frames));
        std::future::ready(Ok(Response::new(ChannelBody(body))))
    }
}

impl Streaming {
    fn service(&self) -> Coalesce<Self> {
        Coalesce::new(self.clone())
    }

    fn calls(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The body of the call numbered `call`, from 1: it ends when the sender is dropped.
    fn body(&self, call: usize) -> Frames {
        self.0.lock().unwrap()[call - 1]
            .take()
            .expect("the body, taken once")
    }
}

fn data(text: &'static str) -> Result<Frame<Bytes>, BoxError> {
    Ok(Frame::data(Bytes::from_static(text.as_bytes())))
}

#[tokio::test(start_paused = true)]
async fn a_lone_reads_body_is_streamed_through() {
    let upstream = Streaming::default();
    let mut service = upstream.service();

    // The head arrives before any of the body has.
    let response = within(service.call(get(USER))).await.unwrap();
    assert_eq!(service.in_flight(), 0);
    let frames = upstream.body(1);
    let mut body = response.into_body();

    frames.send(data("first")).unwrap();
    let frame = within(body.frame()).await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "first");
    // The next frame is not there yet, and the body waits for it: nothing was collected.
    assert!(poll_once(&mut body.frame()).await.is_pending());

    frames.send(data("second")).unwrap();
    drop(frames);
    let frame = within(body.frame()).await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "second");
    assert!(within(body.frame()).await.is_none());
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_lone_reads_error_is_its_own() {
    let (mut service, upstream) = service(Answer::Fail);
    upstream.open();

    let error = within(service.call(get(USER))).await.unwrap_err();

    assert!(error.is::<UpstreamDown>(), "not wrapped: {error:?}");
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_read_arriving_after_the_head_starts_a_new_call() {
    let upstream = Streaming::default();
    let mut service = upstream.service();

    let first = within(service.call(get(USER))).await.unwrap();
    // The first call's body is still to come, but its head is here: the call is forgotten.
    assert_eq!(service.in_flight(), 0);
    let second = within(service.call(get(USER))).await.unwrap();
    assert_eq!(upstream.calls(), 2);

    upstream.body(1).send(data("one")).unwrap();
    upstream.body(2).send(data("two")).unwrap();
    let text = |response: Response<CoalesceBody<ChannelBody>>| async {
        response.into_body().collect().await.unwrap().to_bytes()
    };
    assert_eq!(within(text(first)).await, "one");
    assert_eq!(within(text(second)).await, "two");
}

#[tokio::test(start_paused = true)]
async fn the_leader_dropped_before_its_first_poll_hands_off() {
    let (mut service, upstream) = service(Answer::Ok);

    let leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    drop(leader);
    upstream.open();

    let response = within(waiter).await.unwrap();
    assert_eq!(response.headers()["x-call"], "1");
    assert_eq!(upstream.calls(), 1);
    assert_eq!(upstream.cancelled(), 0);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_leader_dropped_while_reading_for_waiters_hands_off() {
    let upstream = Streaming::default();
    let mut service = upstream.service();

    let mut leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    let frames = upstream.body(1);
    frames.send(data("first ")).unwrap();
    // The head arrives with a waiter: the leader reads the body for both, and waits for more.
    assert!(poll_once(&mut leader).await.is_pending());
    assert_eq!(service.in_flight(), 0);
    drop(leader);

    frames.send(data("second")).unwrap();
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum", HeaderValue::from_static("abc"));
    frames.send(Ok(Frame::trailers(trailers))).unwrap();
    drop(frames);

    let response = within(waiter).await.unwrap();
    let collected = response.into_body().collect().await.unwrap();
    assert_eq!(collected.trailers().unwrap()["x-checksum"], "abc");
    assert_eq!(collected.to_bytes(), "first second");
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_leader_reading_for_waiters_gets_a_copy_too() {
    let upstream = Streaming::default();
    let mut service = upstream.service();

    let leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    let frames = upstream.body(1);
    frames.send(data("a")).unwrap();
    frames.send(data("b")).unwrap();
    drop(frames);

    let leader = within(leader).await.unwrap();
    let waiter = within(waiter).await.unwrap();
    for response in [leader, waiter] {
        assert_eq!(response.body().size_hint().exact(), Some(2));
        assert_eq!(
            response.into_body().collect().await.unwrap().to_bytes(),
            "ab"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_last_waiter_leaving_after_a_hand_off_cancels_the_upstream_call() {
    let (mut service, upstream) = service(Answer::Ok);

    let mut leader = service.call(get(USER));
    let waiters = [service.call(get(USER)), service.call(get(USER))];
    assert!(poll_once(&mut leader).await.is_pending());
    drop(leader);
    tokio::task::yield_now().await;
    let [first, second] = waiters;
    drop(first);
    tokio::task::yield_now().await;
    assert_eq!(upstream.cancelled(), 0, "one waiter is left");
    assert_eq!(service.in_flight(), 1);

    drop(second);
    // The task is aborted, which drops the inner future.
    within(upstream.0.cancelled_signal.notified()).await;
    assert_eq!(upstream.cancelled(), 1);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_last_waiter_leaving_while_a_handed_off_body_is_read_cancels_it() {
    let upstream = Streaming::default();
    let mut service = upstream.service();

    let mut leader = service.call(get(USER));
    let waiter = service.call(get(USER));
    let frames = upstream.body(1);
    frames.send(data("first")).unwrap();
    assert!(poll_once(&mut leader).await.is_pending());
    drop(leader);
    tokio::task::yield_now().await;
    assert!(!frames.is_closed(), "the task reads on for the waiter");

    drop(waiter);
    // The task notices nobody is left and drops the body.
    within(frames.closed()).await;
}

#[tokio::test(start_paused = true)]
async fn an_unpolled_call_given_up_leaves_no_entry() {
    let (mut service, upstream) = service(Answer::Ok);

    drop(service.call(get(USER)));
    assert_eq!(service.in_flight(), 0);
    assert_eq!(upstream.cancelled(), 1);
}

#[test]
fn a_key_is_one_buffer_whatever_the_header_order() {
    let ignored = TRACING_HEADERS;
    let in_order = with_header(
        with_header(get(USER), "accept", "application/json"),
        "x-tenant",
        "a",
    );
    let out_of_order = with_header(
        with_header(get(USER), "x-tenant", "a"),
        "accept",
        "application/json",
    );
    let traced = with_header(in_order.clone_head(), "x-request-id", "1");

    let key = |request: &Request<Body>| Key::of(request, &ignored).expect("a buffered body");
    assert_eq!(key(&in_order), key(&out_of_order));
    assert_eq!(key(&in_order), key(&traced), "ignored headers are left out");
    assert_ne!(key(&in_order), key(&get(USER)));
    assert_ne!(
        key(&get("http://127.0.0.1:9/users/7")),
        key(&get("https://127.0.0.1:9/users/7")),
        "the scheme is part of the key"
    );
    assert_ne!(key(&get(USER)), key(&get("/users/7")));
}

#[test]
fn short_and_long_keys_compare_alike() {
    let ignored = TRACING_HEADERS;
    let key = |request: &Request<Body>| Key::of(request, &ignored).expect("a buffered body");
    // Keys around the length held inline, and far past it (a long credential).
    for len in [0, 1, 40, 50, 60, 200, 4096] {
        let token = "t".repeat(len);
        let authorized = |token: &str| {
            let mut request = get(USER);
            request
                .headers_mut()
                .insert("authorization", token.parse().unwrap());
            request
        };
        let one = authorized(&token);
        let same = authorized(&token);
        let other = authorized(&format!("{token}x"));
        assert_eq!(key(&one), key(&same), "{len}");
        assert_ne!(key(&one), key(&other), "{len}");
        let hasher = std::hash::RandomState::new();
        assert_eq!(key(&one).hash(&hasher), key(&same).hash(&hasher));
    }
}

#[test]
fn reads_of_two_hosts_hash_alike_and_never_share() {
    let ignored = TRACING_HEADERS;
    let key = |uri: &str| Key::of(&get(uri), &ignored).expect("a buffered body");
    let hasher = std::hash::RandomState::new();
    let here = key("http://127.0.0.1:9/users/7");
    let there = key("http://127.0.0.2:9/users/7");
    let tls = key("https://127.0.0.1:9/users/7");
    // The hash covers the method, path and query: only the full key tells the hosts apart.
    assert_eq!(here.hash(&hasher), there.hash(&hasher));
    assert_eq!(here.hash(&hasher), tls.hash(&hasher));
    assert_ne!(here, there);
    assert_ne!(here, tls);
    assert_ne!(
        key("http://127.0.0.1:9/users/7?a=1").hash(&hasher),
        here.hash(&hasher)
    );
}

trait CloneHead {
    fn clone_head(&self) -> Self;
}

impl CloneHead for Request<Body> {
    fn clone_head(&self) -> Self {
        let mut request = request(
            self.method().as_str(),
            &self.uri().to_string(),
            Body::empty(),
        );
        *request.headers_mut() = self.headers().clone();
        request
    }
}
