//! What this measures: the time each of courier's layers adds to one call, over an in-memory
//! service that answers at once, so that the cases differ only by the layers' own work.
//!
//! Every call builds the same request, `GET http://127.0.0.1:9000/users/{id}` with an `accept`
//! header and the [`EndpointMeta`] of a read, `users.get` (an endpoint listed for
//! cancel-previous), sends it with `ServiceExt::oneshot` on a clone of the service, as a client
//! does, and reads the response body to its end. The service answers every request with 64
//! bytes of JSON, buffered, and is never contacted over a socket. The id grows by one each
//! round, so no two rounds make the same read.
//!
//! The cases, in the criterion group `layer`:
//!
//! - `bare`: the in-memory service alone; `bare_boxed`: the same boxed as an [`HttpService`], as
//!   the transport under a `Client`'s stack is.
//! - One layer over the bare service: `timeout_none` (`TimeoutLayer::from_meta()`, the request
//!   has no bound: no timer), `timeout_30s` (a 30 s bound: one timer per call), `retry`
//!   (`RetryPolicy::default()`, a 200 answer: nothing is retried, the budget is paid into),
//!   `tower_retry` (tower's `Retry` with a `Policy` making the same decision — a read, statuses
//!   0, 429, 502, 503 and 504, 3 attempts, tower's budget paid into — to weigh courier's own
//!   retry service against it),
//!   `coalesce_leads` (a unique read each time: it leads its own shared call, run in a task of
//!   its own), `cancel_previous` (the endpoint is listed: each call takes and gives back its slot
//!   in the table), `auth` (an `AuthLayer` whose token future is ready at once) and `trace`
//!   (`trace_layer()` with no `tracing` subscriber installed).
//! - `stack`: the default stack as `Client` builds it, CancelPrevious → Session → Forward →
//!   Coalesce → Retry → Timeout over the transport boxed as an `HttpService`, the whole boxed
//!   once more. Outside a served request, Session and Forward pass the request through.
//! - `bare_served`, `session`, `forward`, `stack_served`: the request also carries a
//!   [`ServedRequest`] in its extensions, with cookies, a request id, trace context, a forwarded
//!   chain, a user agent, a locale and a tenant header. `SessionLayer` sends two of its cookies
//!   and a bearer token from a third; `ForwardLayer` sends six headers. In the stack, the served
//!   request turns cancel-previous off (it has no effect on a server) and session and forward
//!   on. Compare these with `bare_served`, whose requests carry the same extension.
//! - `bare_x16`, `coalesce_shared_x16`: 16 callers at once (`join_all`) make the same read; one
//!   leads and 15 share its answer. The time reported is per call (a round's time divided by
//!   16), to compare with the bare service called 16 times at once.
//!
//! Before it is measured, each case makes one round with the service recording what reaches it,
//! and the benchmark checks the answers, how many requests reached the service (one for a
//! shared round, none retried) and the headers the layers added.
//!
//! Everything runs on one current-thread tokio runtime with time enabled, driven by the
//! benchmark's thread; each sample's calls run one after another in one `block_on`
//! (`iter_custom`), so tasks spawned by coalescing run on that thread too.
//!
//! Run: `cargo bench --bench layers`

use courier_core::context::ServedRequest;
use courier_core::{
    Body, BoxError, EndpointMeta, ForwardOptions, HttpService, Kind, RetryPolicy, SessionOptions,
};
use courier_layers::auth::AuthLayer;
use courier_layers::cancel_previous::CancelPreviousLayer;
use courier_layers::coalesce::{CoalesceBody, CoalesceLayer};
use courier_layers::forward::ForwardLayer;
use courier_layers::retry::RetryLayer;
use courier_layers::session::SessionLayer;
use courier_layers::timeout::TimeoutLayer;
use courier_layers::trace::trace_layer;
use courier_layers::BufferedBody;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use futures_util::future::join_all;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Bytes};
use std::cell::Cell;
use std::convert::Infallible;
use std::fmt;
use std::future::{ready, Ready};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tower::{service_fn, Layer, Service, ServiceBuilder, ServiceExt};

/// The answer to every call.
const USER: &[u8; 64] = br#"{"id":7,"name":"Ada Lovelace","email":"ada@example.com","age":8}"#;
/// Callers making the same read at once in the shared cases.
const CALLERS: usize = 16;

// ---- the in-memory service -----------------------------------------------------------------------

/// While set, [`answer`] records the headers of each request it answers: for the checks before
/// measuring only, so a measured call pays one relaxed load for it.
static PROBING: AtomicBool = AtomicBool::new(false);
static SEEN: Mutex<Vec<HeaderMap>> = Mutex::new(Vec::new());

/// The in-memory service's handler: 200 with [`USER`] as JSON, at once.
fn answer(request: Request<Body>) -> Ready<Result<Response<Body>, BoxError>> {
    if PROBING.load(Ordering::Relaxed) {
        SEEN.lock()
            .expect("the probe's lock")
            .push(request.headers().clone());
    }
    let mut response = Response::new(Body::from(Bytes::from_static(USER)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    ready(Ok(response))
}

// ---- the layers' settings ------------------------------------------------------------------------

/// The request a server is serving while the `*_served` cases call.
fn served_request() -> ServedRequest {
    let (parts, ()) = Request::get("/dashboard")
        .header(
            "cookie",
            "sid=s1; theme=dark; sess_region=eu; access_token=t0k",
        )
        .header("x-request-id", "req-1")
        .header(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        )
        .header("x-forwarded-for", "127.0.0.2")
        .header("user-agent", "Mozilla/5.0 (X11; Linux x86_64; rv:140.0)")
        .header("accept-language", "en-GB,en;q=0.8")
        .header("x-tenant", "acme")
        .body(())
        .expect("a valid served request")
        .into_parts();
    ServedRequest::new(parts, Some(([127, 0, 0, 1], 51000).into()))
}

fn session() -> SessionLayer {
    SessionLayer::new(
        SessionOptions::new()
            .cookies(["sid", "sess_*"])
            .bearer("access_token"),
    )
}

fn forward() -> ForwardLayer {
    ForwardLayer::new(
        ForwardOptions::new()
            .request_id(true)
            .trace(true)
            .client_address(true)
            .user_agent(true)
            .locale(true)
            .headers(["x-tenant"]),
    )
}

/// The default stack, as `Client` assembles it for an endpoint of a source with
/// `cancel_previous`, `session` and `forward` and no middleware: the transport boxed, the
/// stack over it boxed once.
fn default_stack() -> HttpService {
    let transport = HttpService::new(service_fn(answer));
    let inner = ServiceBuilder::new()
        .map_response(|response: Response<CoalesceBody<Body>>| response.map(Body::from))
        .layer(CoalesceLayer::new())
        .option_layer(Some(RetryLayer::new(RetryPolicy::default())))
        .layer(TimeoutLayer::from_meta())
        .service(transport);
    HttpService::new(
        ServiceBuilder::new()
            .option_layer(Some(CancelPreviousLayer::new()))
            .option_layer(Some(session()))
            .option_layer(Some(forward()))
            .map_err(Into::<BoxError>::into)
            .service(inner),
    )
}

// ---- the checks ----------------------------------------------------------------------------------

/// What the in-memory service must have received in a case's checked round.
struct Expect {
    /// How many requests reach it in one round.
    upstream: usize,
    /// What each of their headers must show.
    headers: fn(&HeaderMap),
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .map(|value| value.to_str().expect("a text header"))
}

/// The request as it was built: no layer added anything.
fn untouched(headers: &HeaderMap) {
    assert_eq!(headers.len(), 1, "only `accept`: {headers:?}");
}

fn authorized(headers: &HeaderMap) {
    assert_eq!(header(headers, "authorization"), Some("Bearer t0k"));
}

fn with_session(headers: &HeaderMap) {
    assert_eq!(header(headers, "cookie"), Some("sid=s1; sess_region=eu"));
    assert_eq!(header(headers, "authorization"), Some("Bearer t0k"));
}

fn forwarded(headers: &HeaderMap) {
    assert_eq!(header(headers, "x-request-id"), Some("req-1"));
    assert!(header(headers, "traceparent").is_some());
    assert_eq!(
        header(headers, "x-forwarded-for"),
        Some("127.0.0.2, 127.0.0.1")
    );
    assert!(header(headers, "user-agent").is_some());
    assert_eq!(header(headers, "accept-language"), Some("en-GB,en;q=0.8"));
    assert_eq!(header(headers, "x-tenant"), Some("acme"));
    assert!(header(headers, "cookie").is_none(), "cookies are not named");
}

fn with_session_forwarded(headers: &HeaderMap) {
    with_session(headers);
    assert_eq!(header(headers, "x-request-id"), Some("req-1"));
    assert_eq!(header(headers, "x-tenant"), Some("acme"));
}

/// One request, one answer.
const ONE: Expect = Expect {
    upstream: 1,
    headers: untouched,
};

// ---- measuring -----------------------------------------------------------------------------------

/// What every case shares: the runtime, the requests' makings and the next id.
struct Bench {
    runtime: Runtime,
    meta: EndpointMeta,
    served: ServedRequest,
    next_id: Cell<u64>,
}

/// How a case calls.
#[derive(Clone, Copy)]
struct Calls {
    /// Whether each request carries the served request.
    served: bool,
    /// Callers making the same read at once in one round.
    callers: usize,
}

const PLAIN: Calls = Calls {
    served: false,
    callers: 1,
};
const SERVED: Calls = Calls {
    served: true,
    callers: 1,
};
const SHARED: Calls = Calls {
    served: false,
    callers: CALLERS,
};

impl Bench {
    fn new() -> Self {
        Self {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("the runtime"),
            meta: EndpointMeta::new("users.get", Kind::Query).cancel_previous(true),
            served: served_request(),
            next_id: Cell::new(1),
        }
    }

    /// The request every case sends, as a client builds it.
    fn request(&self, id: u64, served: bool) -> Request<Body> {
        let mut request = Request::get(format!("http://127.0.0.1:9000/users/{id}"))
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .body(Body::empty())
            .expect("a valid request");
        request.extensions_mut().insert(self.meta.clone());
        if served {
            request.extensions_mut().insert(self.served.clone());
        }
        request
    }

    /// One round: `calls.callers` calls of the same read, at once.
    async fn round<S, B>(&self, service: &S, calls: Calls) -> Vec<(StatusCode, Bytes)>
    where
        S: Service<Request<Body>, Response = Response<B>> + Clone,
        S::Error: fmt::Debug,
        B: HttpBody<Data = Bytes>,
        B::Error: fmt::Debug,
    {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        if calls.callers == 1 {
            vec![call(service, self.request(id, calls.served)).await]
        } else {
            // Every call is made before any is polled, as concurrent callers' calls are: an
            // in-memory answer would otherwise come back before the next caller even asks.
            let mut pending = Vec::with_capacity(calls.callers);
            for _ in 0..calls.callers {
                let mut service = service.clone();
                service.ready().await.expect("the service is ready");
                pending.push(service.call(self.request(id, calls.served)));
            }
            join_all(
                pending.into_iter().map(|response| async {
                    read(response.await.expect("the call succeeds")).await
                }),
            )
            .await
        }
    }

    /// Checks one round of `service`, then measures it as `name`, per call.
    fn measure<S, B>(
        &self,
        group: &mut BenchmarkGroup<'_, WallTime>,
        name: &str,
        calls: Calls,
        expect: Expect,
        service: S,
    ) where
        S: Service<Request<Body>, Response = Response<B>> + Clone,
        S::Error: fmt::Debug,
        B: HttpBody<Data = Bytes>,
        B::Error: fmt::Debug,
    {
        self.check(name, calls, expect, &service);
        let callers = u32::try_from(calls.callers).expect("a small number of callers");
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter_custom(|rounds| {
                self.runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..rounds {
                        black_box(self.round(&service, calls).await);
                    }
                    start.elapsed() / callers
                })
            });
        });
    }

    fn check<S, B>(&self, name: &str, calls: Calls, expect: Expect, service: &S)
    where
        S: Service<Request<Body>, Response = Response<B>> + Clone,
        S::Error: fmt::Debug,
        B: HttpBody<Data = Bytes>,
        B::Error: fmt::Debug,
    {
        SEEN.lock().expect("the probe's lock").clear();
        PROBING.store(true, Ordering::Relaxed);
        let answers = self.runtime.block_on(self.round(service, calls));
        PROBING.store(false, Ordering::Relaxed);
        let seen = std::mem::take(&mut *SEEN.lock().expect("the probe's lock"));

        assert_eq!(
            answers.len(),
            calls.callers,
            "{name}: one answer per caller"
        );
        for (status, body) in answers {
            assert_eq!(status, StatusCode::OK, "{name}");
            assert_eq!(body, &USER[..], "{name}");
        }
        assert_eq!(seen.len(), expect.upstream, "{name}: requests upstream");
        for headers in &seen {
            (expect.headers)(headers);
        }
    }
}

/// One call as a client makes it: a clone of the service, `oneshot`, the body read whole.
async fn call<S, B>(service: &S, request: Request<Body>) -> (StatusCode, Bytes)
where
    S: Service<Request<Body>, Response = Response<B>> + Clone,
    S::Error: fmt::Debug,
    B: HttpBody<Data = Bytes>,
    B::Error: fmt::Debug,
{
    let response = service
        .clone()
        .oneshot(request)
        .await
        .expect("the call succeeds");
    read(response).await
}

/// The status and the whole body of `response`.
async fn read<B>(response: Response<B>) -> (StatusCode, Bytes)
where
    B: HttpBody<Data = Bytes>,
    B::Error: fmt::Debug,
{
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes();
    (status, body)
}

fn bench(c: &mut Criterion) {
    let bench = Bench::new();
    let bare = service_fn(answer);
    let mut group = c.benchmark_group("layer");

    bench.measure(&mut group, "bare", PLAIN, ONE, bare);
    bench.measure(&mut group, "bare_boxed", PLAIN, ONE, HttpService::new(bare));
    bench.measure(
        &mut group,
        "timeout_none",
        PLAIN,
        ONE,
        TimeoutLayer::from_meta().layer(bare),
    );
    bench.measure(
        &mut group,
        "timeout_30s",
        PLAIN,
        ONE,
        TimeoutLayer::new(Duration::from_secs(30)).layer(bare),
    );
    bench.measure(
        &mut group,
        "retry",
        PLAIN,
        ONE,
        RetryLayer::new(RetryPolicy::default()).layer(bare),
    );
    bench.measure(
        &mut group,
        "tower_retry",
        PLAIN,
        ONE,
        tower::retry::Retry::new(TowerPolicy::new(), bare),
    );
    bench.measure(
        &mut group,
        "coalesce_leads",
        PLAIN,
        ONE,
        CoalesceLayer::new().layer(bare),
    );
    bench.measure(
        &mut group,
        "cancel_previous",
        PLAIN,
        ONE,
        CancelPreviousLayer::new().layer(bare),
    );
    let get_token = || ready(Ok::<_, Infallible>("t0k"));
    bench.measure(
        &mut group,
        "auth",
        PLAIN,
        Expect {
            upstream: 1,
            headers: authorized,
        },
        AuthLayer::new(get_token).layer(bare),
    );
    bench.measure(&mut group, "trace", PLAIN, ONE, trace_layer().layer(bare));
    bench.measure(&mut group, "stack", PLAIN, ONE, default_stack());

    bench.measure(&mut group, "bare_served", SERVED, ONE, bare);
    bench.measure(
        &mut group,
        "session",
        SERVED,
        Expect {
            upstream: 1,
            headers: with_session,
        },
        session().layer(bare),
    );
    bench.measure(
        &mut group,
        "forward",
        SERVED,
        Expect {
            upstream: 1,
            headers: forwarded,
        },
        forward().layer(bare),
    );
    bench.measure(
        &mut group,
        "stack_served",
        SERVED,
        Expect {
            upstream: 1,
            headers: with_session_forwarded,
        },
        default_stack(),
    );

    bench.measure(
        &mut group,
        "bare_x16",
        SHARED,
        Expect {
            upstream: CALLERS,
            headers: untouched,
        },
        bare,
    );
    bench.measure(
        &mut group,
        "coalesce_shared_x16",
        SHARED,
        ONE,
        CoalesceLayer::new().layer(bare),
    );
    group.finish();
}

/// `RetryPolicy::default()`'s decision as a tower [`Policy`](tower::retry::Policy), for the
/// `tower_retry` case: a read (by its meta, else its method) is sent again on an error or a
/// status of 429, 502, 503 or 504, up to 3 attempts in all, while tower's budget allows; the
/// request is copied as `Retry` asks, before every attempt (method, URI, version, headers,
/// extensions, the buffered body).
#[derive(Clone)]
struct TowerPolicy {
    left: u32,
    budget: std::sync::Arc<tower::retry::budget::TpsBudget>,
}

impl TowerPolicy {
    fn new() -> Self {
        Self {
            left: 2,
            budget: std::sync::Arc::new(tower::retry::budget::TpsBudget::default()),
        }
    }
}

impl<B, E> tower::retry::Policy<Request<Body>, Response<B>, E> for TowerPolicy {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        request: &mut Request<Body>,
        result: &mut Result<Response<B>, E>,
    ) -> Option<Self::Future> {
        use tower::retry::budget::Budget;
        let reads = request
            .extensions()
            .get::<EndpointMeta>()
            .map_or(request.method() == http::Method::GET, EndpointMeta::is_read);
        let failed = match result {
            Ok(response) => matches!(response.status().as_u16(), 429 | 502 | 503 | 504),
            Err(_) => true,
        };
        if !failed {
            self.budget.deposit();
            return None;
        }
        if !reads || self.left == 0 || !self.budget.withdraw() {
            return None;
        }
        self.left -= 1;
        Some(tokio::time::sleep(Duration::from_millis(100)))
    }

    fn clone_request(&mut self, request: &Request<Body>) -> Option<Request<Body>> {
        let mut copy = Request::new(request.body().try_clone_body()?);
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.version_mut() = request.version();
        *copy.headers_mut() = request.headers().clone();
        *copy.extensions_mut() = request.extensions().clone();
        Some(copy)
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
