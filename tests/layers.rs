//! The layer stack `Caller` assembles, end to end: typed calls through the default transport
//! against axum backends on 127.0.0.1 — coalescing (and what turns it off), cancel-previous,
//! retry, timeout precedence, layers of one's own, and how the layers' refusals surface.

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use courier::error::{ErrorCode, NetworkErrorKind};
use courier::layers::auth::AuthLayer;
use courier::options::SessionOptions;
use courier::transport::{Body, HttpService, Middleware};
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::{ApiBuilder, ApiDef, CallOptions, Caller, HttpEndpoint};
use courier_test_support::{Recorder, PATIENCE};
use futures_util::future::join_all;
use http::header::AUTHORIZATION;
use http::HeaderValue;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tower::util::{MapFutureLayer, MapRequestLayer};
use tower::Service;

// ---- the API -----------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Serialize)]
struct UserId(u64);

#[derive(Serialize)]
struct NewUser {
    name: String,
}

#[derive(Serialize)]
struct Search {
    q: String,
}

#[derive(courier::Group)]
struct Users {
    /// `GET /users/:id`, held by the backend until the test opens the gate.
    get: Http<User, UserId>,
    /// The same address with `.coalesce(false)` on the endpoint.
    fresh: Http<User, UserId>,
    /// `GET /users/search`; `q=slow` never answers.
    search: Http<Vec<User>, Search>,
    /// `POST /users`, held like `get`.
    create: Http<User, NewUser, Mutation>,
    /// `GET /users/me`: the backend echoes the credentials and the `x-order` marks it got. The
    /// endpoint's own layer marks `endpoint`.
    me: Http<Value>,
}

#[derive(courier::Group)]
struct Status {
    /// `GET /flaky`: 503 twice, then 200.
    flaky: Http<Value>,
    /// The same with `.retry(false)`.
    flaky_once: Http<Value>,
    /// `POST /flaky`.
    report: Http<Value, (), Mutation>,
    /// `GET /hinted`: 503 with `Retry-After: 1`, then 200.
    hinted: Http<Value>,
}

#[derive(courier::Group)]
struct Slow {
    /// `GET /slow`, answered after 300 ms, with no timeout of its own.
    plain: Http<Value>,
    /// The same with an endpoint timeout of 100 ms.
    bounded: Http<Value>,
    /// The same with an endpoint timeout of 2 s.
    patient: Http<Value>,
}

#[derive(courier::Api)]
struct Demo {
    users: Group<Users>,
    status: Group<Status>,
    slow: Group<Slow>,
}

/// The server's answer time on `/slow`: above the short bounds, far below the long ones.
const SLOW: Duration = Duration::from_millis(300);
const SHORT: Duration = Duration::from_millis(100);
const LONG: Duration = Duration::from_secs(2);

/// A request layer that appends `x-order: <who>`, to see where in the stack a layer runs.
fn mark(
    who: &'static str,
) -> MapRequestLayer<
    impl Fn(http::Request<Body>) -> http::Request<Body> + Clone + Send + Sync + 'static,
> {
    MapRequestLayer::new(move |mut request: http::Request<Body>| {
        request
            .headers_mut()
            .append("x-order", HeaderValue::from_static(who));
        request
    })
}

/// The API over `address`, with the source options `source` sets.
fn api(address: SocketAddr, source: impl FnOnce(ApiBuilder) -> ApiBuilder) -> courier::Api<Demo> {
    let users = Group::new(Users {
        get: endpoint().get("/:id"),
        // `.coalesce()` and `.layer()` are the runtime head's; `Http::from_def` types it.
        fresh: Http::from_def(HttpEndpoint::get("/:id").coalesce(false)),
        search: endpoint().get("/search"),
        create: endpoint().post(""),
        me: Http::from_def(HttpEndpoint::get("/me").layer(mark("endpoint"))),
    })
    .prefix("/users");
    let status = Group::new(Status {
        flaky: endpoint().get("/flaky"),
        flaky_once: endpoint().get("/flaky").retry(false),
        report: endpoint().post("/flaky"),
        hinted: endpoint().get("/hinted"),
    });
    let slow = Group::new(Slow {
        plain: endpoint().get("/slow"),
        bounded: endpoint().get("/slow").timeout(SHORT),
        patient: endpoint().get("/slow").timeout(LONG),
    });
    source(ApiDef::builder().base_url(format!("http://{address}")))
        .build_typed(Demo {
            users,
            status,
            slow,
        })
        .unwrap()
}

// ---- the backend -------------------------------------------------------------------------------

/// What a backend received, and the gate its held routes wait on.
type Backend = Recorder;

fn header(headers: &HeaderMap, name: &str) -> Value {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map_or(Value::Null, |value| Value::String(value.to_owned()))
}

async fn serve(backend: Backend) -> SocketAddr {
    async fn get_user(
        State(backend): State<Backend>,
        Path(id): Path<u64>,
        request: Request,
    ) -> Json<User> {
        backend.record(&request);
        backend.wait_open().await;
        let who = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("anyone");
        Json(User {
            id,
            name: format!("user {id} for {who}"),
        })
    }
    async fn create_user(State(backend): State<Backend>, request: Request) -> Json<User> {
        backend.record(&request);
        backend.wait_open().await;
        let body = axum::body::to_bytes(request.into_body(), 1 << 16)
            .await
            .unwrap_or_default();
        let new: Value = serde_json::from_slice(&body).unwrap_or_default();
        Json(User {
            id: 100,
            name: new["name"].as_str().unwrap_or_default().to_owned(),
        })
    }
    async fn search(State(backend): State<Backend>, request: Request) -> Json<Vec<User>> {
        backend.record(&request);
        let query = request.uri().query().unwrap_or_default().to_owned();
        if query == "q=slow" {
            let _guard = backend.abandon_guard();
            std::future::pending::<()>().await;
        }
        Json(vec![User {
            id: 1,
            name: format!("match {query}"),
        }])
    }
    async fn me(State(backend): State<Backend>, request: Request) -> Json<Value> {
        backend.record(&request);
        let headers = request.headers();
        let order: Vec<_> = headers
            .get_all("x-order")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        Json(json!({
            "authorization": header(headers, "authorization"),
            "cookie": header(headers, "cookie"),
            "order": order,
        }))
    }
    async fn flaky(State(backend): State<Backend>, request: Request) -> Response {
        match backend.record(&request) {
            0 | 1 => (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "error": "down" })),
            )
                .into_response(),
            _ => Json(json!({ "ok": true })).into_response(),
        }
    }
    async fn hinted(State(backend): State<Backend>, request: Request) -> Response {
        match backend.record(&request) {
            0 => (
                StatusCode::SERVICE_UNAVAILABLE,
                [("retry-after", "1")],
                "busy",
            )
                .into_response(),
            _ => Json(json!({ "ok": true })).into_response(),
        }
    }
    async fn slow(State(backend): State<Backend>, request: Request) -> Json<Value> {
        backend.record(&request);
        tokio::time::sleep(SLOW).await;
        Json(json!({ "ok": true }))
    }
    let app = Router::new()
        .route("/users", axum::routing::post(create_user))
        .route("/users/search", get(search))
        .route("/users/me", get(me))
        .route("/users/{id}", get(get_user))
        .route("/flaky", get(flaky).post(flaky))
        .route("/hinted", get(hinted))
        .route("/slow", get(slow))
        .with_state(backend);
    let address = courier_test_support::serve(app).await;
    address
}

/// A backend and its address.
async fn start() -> (Backend, SocketAddr) {
    let backend = Recorder::new();
    let address = serve(backend.clone()).await;
    (backend, address)
}

// ---- counting callers at the coalescing layer ---------------------------------------------------

/// Counts calls that have been handed to the layers below the middleware: coalescing decides in
/// its `call` whether a read leads or joins, so once a call is counted it has done either.
#[derive(Clone)]
struct Joined(Arc<watch::Sender<usize>>);

type CallFuture = <HttpService as Service<http::Request<Body>>>::Future;

impl Joined {
    fn new() -> Self {
        Self(Arc::new(watch::Sender::new(0)))
    }

    /// A layer for `Caller::builder().layer(..)`: it counts a call once the inner stack's `call`
    /// has returned.
    fn layer(
        &self,
    ) -> MapFutureLayer<impl Fn(CallFuture) -> CallFuture + Clone + Send + Sync + 'static> {
        let joined = Arc::clone(&self.0);
        MapFutureLayer::new(move |future: CallFuture| {
            joined.send_modify(|n| *n += 1);
            future
        })
    }

    fn count(&self) -> usize {
        *self.0.borrow()
    }

    /// Opens `backend`'s gate once `n` calls have led or joined.
    async fn open_after(&self, n: usize, backend: &Backend) {
        let mut joined = self.0.subscribe();
        tokio::time::timeout(PATIENCE, joined.wait_for(|&joined| joined >= n))
            .await
            .unwrap_or_else(|_| panic!("{n} calls should reach the coalescing layer"))
            .unwrap();
        backend.open();
    }
}

fn user(id: u64, who: &str) -> User {
    User {
        id,
        name: format!("user {id} for {who}"),
    }
}

// ---- coalescing ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_identical_reads_make_one_request() {
    let (backend, address) = start().await;
    let joined = Joined::new();
    let caller = Caller::builder(api(address, |source| source))
        .layer(joined.layer())
        .build()
        .unwrap();

    let calls = (0..1000).map(|_| caller.users().get(UserId(7)).into_future());
    // The backend holds its answer until every call has led or joined the shared one.
    let (users, ()) = tokio::join!(join_all(calls), joined.open_after(1000, &backend));

    assert_eq!(backend.hits("/users/7"), 1);
    assert_eq!(joined.count(), 1000);
    assert_eq!(users.len(), 1000);
    for got in users {
        assert_eq!(got.unwrap(), user(7, "anyone"));
    }
}

#[tokio::test]
async fn two_users_identical_reads_are_not_shared() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let as_user = |token: &'static str| {
        CallOptions::new().header(AUTHORIZATION, HeaderValue::from_static(token))
    };

    // Both must reach the backend before it answers either.
    let (alice, bob, ()) = tokio::join!(
        async {
            caller
                .users()
                .with(as_user("Bearer alice"))
                .get(UserId(7))
                .await
        },
        async {
            caller
                .users()
                .with(as_user("Bearer bob"))
                .get(UserId(7))
                .await
        },
        backend.open_after(2),
    );
    assert_eq!(alice.unwrap(), user(7, "Bearer alice"));
    assert_eq!(bob.unwrap(), user(7, "Bearer bob"));
    assert_eq!(backend.hits("/users/7"), 2);
}

#[tokio::test]
async fn coalesce_false_at_the_call_endpoint_or_source_turns_sharing_off() {
    // At the call.
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let unshared = || CallOptions::new().coalesce(false);
    let (first, second, ()) = tokio::join!(
        async { caller.users().with(unshared()).get(UserId(7)).await },
        async { caller.users().with(unshared()).get(UserId(7)).await },
        backend.open_after(2),
    );
    assert_eq!(first.unwrap(), second.unwrap());
    assert_eq!(backend.hits("/users/7"), 2, "the call's coalesce(false)");

    // At the endpoint.
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let (first, second, ()) = tokio::join!(
        async { caller.users().fresh(UserId(7)).await },
        async { caller.users().fresh(UserId(7)).await },
        backend.open_after(2),
    );
    assert_eq!(first.unwrap(), second.unwrap());
    assert_eq!(
        backend.hits("/users/7"),
        2,
        "the endpoint's coalesce(false)"
    );

    // At the source.
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source.coalesce(false))).unwrap();
    let (first, second, ()) = tokio::join!(
        async { caller.users().get(UserId(7)).await },
        async { caller.users().get(UserId(7)).await },
        backend.open_after(2),
    );
    assert_eq!(first.unwrap(), second.unwrap());
    assert_eq!(backend.hits("/users/7"), 2, "the source's coalesce(false)");

    // The nearest setting wins: a call's coalesce(true) shares the endpoint's unshared reads.
    let (backend, address) = start().await;
    let joined = Joined::new();
    let caller = Caller::builder(api(address, |source| source))
        .layer(joined.layer())
        .build()
        .unwrap();
    let shared = || CallOptions::new().coalesce(true);
    let (first, second, ()) = tokio::join!(
        async { caller.users().with(shared()).fresh(UserId(7)).await },
        async { caller.users().with(shared()).fresh(UserId(7)).await },
        joined.open_after(2, &backend),
    );
    assert_eq!(first.unwrap(), second.unwrap());
    assert_eq!(backend.hits("/users/7"), 1, "the call's coalesce(true)");
}

#[tokio::test]
async fn writes_are_never_shared() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let ada = || NewUser { name: "Ada".into() };
    let (first, second, ()) = tokio::join!(
        async { caller.users().create(ada()).await },
        async { caller.users().create(ada()).await },
        backend.open_after(2),
    );
    assert_eq!(first.unwrap().name, "Ada");
    assert_eq!(second.unwrap().name, "Ada");
    assert_eq!(backend.hits("/users"), 2);
}

// ---- cancel-previous ----------------------------------------------------------------------------

#[tokio::test]
async fn a_newer_search_cancels_the_older_with_499() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| {
        source.cancel_previous(["users.search"])
    }))
    .unwrap();
    let search = |q: &str| caller.users().search(Search { q: q.into() });

    let (older, newer) = tokio::join!(async { search("slow").await }, async {
        // The older search is in the backend's hands before the newer one is made.
        backend.arrived(1).await;
        search("ab").await
    });

    let err = older.unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.status_code(), 499);
    assert_eq!(err.endpoint(), Some("users.search"));
    let http = err.http_error().unwrap();
    assert_eq!(http.data["error"]["code"], "CANCELLED_BY_NEWER_CALL");
    // The same refusal, typed.
    let refused = err.refused().expect("a layer's refusal");
    assert!(
        matches!(refused, courier::error::Refused::ByNewerCall(_)),
        "{refused:?}"
    );
    assert_eq!(
        (refused.status().as_u16(), refused.code()),
        (499, "CANCELLED_BY_NEWER_CALL")
    );
    assert_eq!(http.data["error"]["message"], refused.message());
    assert_eq!(
        newer.unwrap(),
        [User {
            id: 1,
            name: "match q=ab".into()
        }]
    );
    // The older request was abandoned, not left running.
    backend.wait_abandoned().await;
}

#[tokio::test]
async fn only_listed_reads_are_cancelled_and_never_writes() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| {
        source.cancel_previous(["users.search"])
    }))
    .unwrap();

    // Overlapping reads of an endpoint not in the list, and overlapping writes, all answer.
    let ada = || NewUser { name: "Ada".into() };
    let (one, two, first, second, ()) = tokio::join!(
        async { caller.users().get(UserId(1)).await },
        async { caller.users().get(UserId(2)).await },
        async { caller.users().create(ada()).await },
        async { caller.users().create(ada()).await },
        backend.open_after(4),
    );
    assert_eq!(one.unwrap(), user(1, "anyone"));
    assert_eq!(two.unwrap(), user(2, "anyone"));
    assert_eq!(first.unwrap().name, "Ada");
    assert_eq!(second.unwrap().name, "Ada");

    // A write cannot be listed at all.
    let err = ApiDef::builder()
        .base_url(format!("http://{address}"))
        .cancel_previous(["users.create"])
        .build_typed(Demo {
            users: Group::new(Users {
                get: endpoint().get("/:id"),
                fresh: endpoint().get("/:id"),
                search: endpoint().get("/search"),
                create: endpoint().post(""),
                me: endpoint().get("/me"),
            })
            .prefix("/users"),
            status: Group::new(Status {
                flaky: endpoint().get("/flaky"),
                flaky_once: endpoint().get("/flaky"),
                report: endpoint().post("/flaky"),
                hinted: endpoint().get("/hinted"),
            }),
            slow: Group::new(Slow {
                plain: endpoint().get("/slow"),
                bounded: endpoint().get("/slow"),
                patient: endpoint().get("/slow"),
            }),
        })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CancelPreviousInvalid);
}

// ---- retry --------------------------------------------------------------------------------------

#[tokio::test]
async fn a_503_twice_then_200_is_retried() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let answer = caller.status().flaky().await.unwrap();
    assert_eq!(answer, json!({ "ok": true }));
    assert_eq!(backend.hits("/flaky"), 3);
}

#[tokio::test]
async fn retry_false_on_the_endpoint_sends_once() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let err = caller.status().flaky_once().await.unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.status_code(), 503);
    assert_eq!(err.http_error().unwrap().data, json!({ "error": "down" }));
    assert_eq!(backend.hits("/flaky"), 1);
}

#[tokio::test]
async fn a_post_is_not_retried_by_default() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let err = caller.status().report().await.unwrap_err();
    assert_eq!(err.status_code(), 503);
    assert_eq!(backend.hits("/flaky"), 1);
    assert_eq!(backend.seen()[0].method, Method::POST);
}

#[tokio::test]
async fn retry_false_on_the_builder_turns_the_default_off() {
    let (backend, address) = start().await;
    let caller = Caller::builder(api(address, |source| source))
        .retry(false)
        .build()
        .unwrap();
    let err = caller.status().flaky().await.unwrap_err();
    assert_eq!(err.status_code(), 503);
    assert_eq!(backend.hits("/flaky"), 1);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| source)).unwrap();
    let started = Instant::now();
    let answer = caller.status().hinted().await.unwrap();
    assert_eq!(answer, json!({ "ok": true }));
    assert_eq!(backend.hits("/hinted"), 2);
    // `Retry-After: 1` replaces the default backoff of at most 100 ms.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

// ---- timeout precedence -------------------------------------------------------------------------

/// A caller without retries, so each call is one attempt of the backend's 300 ms.
fn once(api: courier::Api<Demo>) -> Caller<Demo> {
    Caller::builder(api).retry(false).build().unwrap()
}

#[tokio::test]
async fn the_source_timeout_bounds_endpoints_without_their_own() {
    let (_backend, address) = start().await;
    let caller = once(api(address, |source| source.timeout(SHORT)));
    let err = caller.slow().plain().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.status_code(), 0);
    assert!(!err.is_http());

    // Without a source timeout the same call waits for its answer.
    let caller = once(api(address, |source| source));
    assert_eq!(caller.slow().plain().await.unwrap(), json!({ "ok": true }));
}

#[tokio::test]
async fn the_endpoint_timeout_wins_over_the_source() {
    let (_backend, address) = start().await;
    // A source bound that would let the answer through, an endpoint bound that does not.
    let caller = once(api(address, |source| {
        source.timeout(Duration::from_secs(5))
    }));
    let err = caller.slow().bounded().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");

    // And the other way round.
    let caller = once(api(address, |source| source.timeout(SHORT)));
    assert_eq!(
        caller.slow().patient().await.unwrap(),
        json!({ "ok": true })
    );
}

#[tokio::test]
async fn the_call_timeout_wins_over_the_endpoint() {
    let (_backend, address) = start().await;
    let caller = once(api(address, |source| source.timeout(SHORT)));

    let patient = CallOptions::new().timeout(LONG);
    let answer = caller.slow().with(patient).bounded().await.unwrap();
    assert_eq!(answer, json!({ "ok": true }));

    let hasty = CallOptions::new().timeout(SHORT);
    let err = caller.slow().with(hasty).patient().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.endpoint(), Some("slow.patient"));
}

// ---- layers of one's own ------------------------------------------------------------------------

#[tokio::test]
async fn a_builder_auth_layer_sends_the_bearer_token() {
    let (backend, address) = start().await;
    let caller = Caller::builder(api(address, |source| source))
        .layer(AuthLayer::new(|| async { Ok::<_, Infallible>("t0k") }))
        .build()
        .unwrap();

    let me = caller.users().me().await.unwrap();
    assert_eq!(me["authorization"], "Bearer t0k");

    // A header the call sets itself is nearer the call, and stays.
    let own = CallOptions::new().header(AUTHORIZATION, HeaderValue::from_static("Bearer mine"));
    let me = caller.users().with(own).me().await.unwrap();
    assert_eq!(me["authorization"], "Bearer mine");
    assert_eq!(backend.hits("/users/me"), 2);
}

#[tokio::test]
async fn source_builder_and_endpoint_layers_run_in_that_order() {
    let (_backend, address) = start().await;
    let api = api(address, |source| {
        source.middleware(Middleware::new("source-mark", mark("source")))
    });
    let caller = Caller::builder(api)
        .layer(mark("builder"))
        .middleware(Middleware::new(
            "second-builder-mark",
            mark("builder, second"),
        ))
        .build()
        .unwrap();

    let me = caller.users().me().await.unwrap();
    assert_eq!(
        me["order"],
        json!(["source", "builder", "builder, second", "endpoint"])
    );
}

// ---- how the layers' refusals surface -----------------------------------------------------------

#[tokio::test]
async fn refusals_and_failures_surface_in_error() {
    let (backend, address) = start().await;
    let caller = Caller::new(api(address, |source| {
        source.session(
            SessionOptions::new()
                .cookies(["sid"])
                .csrf("csrf_token", "x-csrf-token"),
        )
    }))
    .unwrap();

    // A write while serving a request that carries no CSRF token: refused before it is sent.
    let (parts, ()) = http::Request::post("/settings")
        .header("cookie", "sid=s1; csrf_token=tok")
        .body(())
        .unwrap()
        .into_parts();
    let served = courier::layers::context::ServedRequest::new(parts, None);
    let err = caller
        .users()
        .with(CallOptions::new().context(served.clone()))
        .create(NewUser { name: "Ada".into() })
        .await
        .unwrap_err();
    assert!(err.is_http(), "{err:?}");
    assert_eq!(err.status_code(), 403);
    let http = err.http_error().unwrap();
    assert_eq!(http.data["error"]["code"], "CSRF_CHECK_FAILED");
    assert!(http.headers.is_empty(), "no response came");
    let refused = err.refused().expect("a layer's refusal");
    assert!(
        matches!(refused, courier::error::Refused::Session(_)),
        "{refused:?}"
    );
    assert_eq!(
        (refused.status().as_u16(), refused.code()),
        (403, "CSRF_CHECK_FAILED")
    );
    assert_eq!(backend.hits("/users"), 0);

    // A read from the same served request carries the session.
    let me = caller
        .users()
        .with(CallOptions::new().context(served))
        .me()
        .await
        .unwrap();
    assert_eq!(me["cookie"], "sid=s1");

    // A layer's own failure that is not a refusal: the token supplier fails. Nothing was sent.
    let caller = Caller::builder(api(address, |source| source))
        .layer(AuthLayer::new(|| async {
            Err::<&'static str, _>(std::io::Error::other("vault sealed"))
        }))
        .build()
        .unwrap();
    let err = caller.users().me().await.unwrap_err();
    assert!(err.is_network(), "{err:?}");
    assert_eq!(err.network(), Some(NetworkErrorKind::Other));
    assert_eq!(err.status_code(), 0);
    let mut causes = std::iter::successors(std::error::Error::source(&err), |e| e.source());
    assert!(
        causes.any(|cause| cause.to_string() == "vault sealed"),
        "the supplier's error is in the chain: {err:?}"
    );
    assert_eq!(backend.hits("/users/me"), 1, "only the read above");

    // No response at all: status 0.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let caller = once(api(closed, |source| source));
    let err = caller.status().flaky().await.unwrap_err();
    assert!(err.is_connect(), "{err:?}");
    assert_eq!(err.status_code(), 0);
    assert!(!err.is_http());
}
