use super::error::Cancelled;
use super::*;
use courier_core::Kind;
use futures_util::FutureExt;
use http::Response;
use http::StatusCode;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::Notify;
use tower::{service_fn, ServiceExt};

/// What the mock upstream does with a request: answer once `release` is notified, and set
/// `dropped` if its future is dropped before answering.
#[derive(Clone, Default)]
struct Probe {
    release: Arc<Notify>,
    dropped: Arc<AtomicBool>,
}

/// Sets its flag when dropped, unless disarmed first.
struct DropFlag(Option<Arc<AtomicBool>>);

impl DropFlag {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// What the tests wrap: a cloneable service whose futures can move to another task.
trait Upstream:
    Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send> + Clone
{
}

impl<S> Upstream for S where
    S: Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send> + Clone
{
}

/// An upstream that answers with the request's URI, waiting for the request's `Probe` when
/// it has one, and counts the requests it is given.
fn upstream(calls: Arc<AtomicUsize>) -> impl Upstream {
    service_fn(move |request: Request<()>| {
        calls.fetch_add(1, Ordering::SeqCst);
        let probe = request.extensions().get::<Probe>().cloned();
        let guard = probe
            .as_ref()
            .map(|p| DropFlag(Some(Arc::clone(&p.dropped))));
        let uri = request.uri().to_string();
        async move {
            if let Some(probe) = probe {
                probe.release.notified().await;
            }
            // Answered: not abandoned.
            if let Some(guard) = guard {
                guard.disarm();
            }
            Ok::<_, Infallible>(Response::new(uri))
        }
    })
}

fn request(uri: &str, meta: Option<EndpointMeta>, probe: Option<&Probe>) -> Request<()> {
    let mut request = Request::get(uri).body(()).unwrap();
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    if let Some(probe) = probe {
        request.extensions_mut().insert(probe.clone());
    }
    request
}

fn read(path: &str) -> EndpointMeta {
    EndpointMeta::new(path, Kind::Query).cancel_previous(true)
}

fn write(path: &str) -> EndpointMeta {
    EndpointMeta::new(path, Kind::Mutation).cancel_previous(true)
}

async fn call<S>(service: &mut S, request: Request<()>) -> S::Future
where
    S: Service<Request<()>>,
    S::Error: fmt::Debug,
{
    service.ready().await.unwrap().call(request)
}

#[tokio::test]
async fn newer_read_cancels_older() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::clone(&calls)));
    let (first, second) = (Probe::default(), Probe::default());

    // The older call waits in its own task, as a caller would.
    let older = tokio::spawn(
        call(
            &mut service,
            request("/search?q=a", Some(read("users.search")), Some(&first)),
        )
        .await,
    );
    tokio::task::yield_now().await;
    assert!(!older.is_finished());

    let newer = call(
        &mut service,
        request("/search?q=ab", Some(read("users.search")), Some(&second)),
    )
    .await;

    let err = older.await.unwrap().unwrap_err();
    let cancelled = err.downcast_ref::<Cancelled>().expect("a Cancelled error");
    assert_eq!(cancelled.status(), StatusCode::from_u16(499).unwrap());
    assert_eq!(cancelled.endpoint(), "users.search");
    assert_eq!(
        err.to_string(),
        "cancelled by a newer call of `users.search`"
    );
    assert!(
        first.dropped.load(Ordering::SeqCst),
        "the older inner future is dropped"
    );

    second.release.notify_one();
    assert_eq!(newer.await.unwrap().into_body(), "/search?q=ab");
    assert!(!second.dropped.load(Ordering::SeqCst));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_cancelled_call_answers_the_same_error_if_polled_again() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let probe = Probe::default();
    let older = call(
        &mut service,
        request("/a", Some(read("users.search")), Some(&probe)),
    )
    .await;
    let _newer = call(
        &mut service,
        request("/b", Some(read("users.search")), Some(&probe)),
    )
    .await;

    let mut older = Box::pin(older);
    for _ in 0..2 {
        let err = older.as_mut().now_or_never().unwrap().unwrap_err();
        assert!(err.is::<Cancelled>());
    }
}

#[tokio::test]
async fn each_newer_call_cancels_the_one_before() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let probes = [Probe::default(), Probe::default(), Probe::default()];
    let mut futures = Vec::new();
    for (i, probe) in probes.iter().enumerate() {
        let uri = format!("/search?q={i}");
        futures.push(call(&mut service, request(&uri, Some(read("s")), Some(probe))).await);
    }
    let last = futures.pop().unwrap();
    for older in futures {
        assert!(older.await.unwrap_err().is::<Cancelled>());
    }
    probes[2].release.notify_one();
    assert_eq!(last.await.unwrap().into_body(), "/search?q=2");
}

#[tokio::test]
async fn different_endpoints_are_independent() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let (search, list) = (Probe::default(), Probe::default());
    let a = call(
        &mut service,
        request("/search", Some(read("users.search")), Some(&search)),
    )
    .await;
    let b = call(
        &mut service,
        request("/list", Some(read("users.list")), Some(&list)),
    )
    .await;
    assert_eq!(service.registry.in_flight(), 2);

    search.release.notify_one();
    list.release.notify_one();
    assert_eq!(a.await.unwrap().into_body(), "/search");
    assert_eq!(b.await.unwrap().into_body(), "/list");
}

#[tokio::test]
async fn writes_are_never_cancelled_and_never_cancel() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let probes = [Probe::default(), Probe::default(), Probe::default()];

    // A read in flight, then two writes of the same path: nothing is cancelled.
    let read_call = call(
        &mut service,
        request("/r", Some(read("users.search")), Some(&probes[0])),
    )
    .await;
    let write_a = call(
        &mut service,
        request("/w1", Some(write("users.search")), Some(&probes[1])),
    )
    .await;
    let write_b = call(
        &mut service,
        request("/w2", Some(write("users.search")), Some(&probes[2])),
    )
    .await;
    // Only the read holds a slot.
    assert_eq!(service.registry.in_flight(), 1);

    for probe in &probes {
        probe.release.notify_one();
    }
    assert_eq!(read_call.await.unwrap().into_body(), "/r");
    assert_eq!(write_a.await.unwrap().into_body(), "/w1");
    assert_eq!(write_b.await.unwrap().into_body(), "/w2");
    assert!(probes.iter().all(|p| !p.dropped.load(Ordering::SeqCst)));
}

#[tokio::test]
async fn a_write_in_flight_is_not_cancelled_by_a_read() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let (w, r) = (Probe::default(), Probe::default());
    let write_call = call(
        &mut service,
        request("/w", Some(write("users.search")), Some(&w)),
    )
    .await;
    let read_call = call(
        &mut service,
        request("/r", Some(read("users.search")), Some(&r)),
    )
    .await;
    w.release.notify_one();
    r.release.notify_one();
    assert_eq!(write_call.await.unwrap().into_body(), "/w");
    assert_eq!(read_call.await.unwrap().into_body(), "/r");
}

#[tokio::test]
async fn no_effect_while_serving_a_request() {
    let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
    let served = ServedRequest::new(parts, None);
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let registry = service.registry.clone();
    let (a, b) = (Probe::default(), Probe::default());

    let (first, second) = served
        .scope(async {
            let first = call(
                &mut service,
                request("/a", Some(read("users.search")), Some(&a)),
            )
            .await;
            let second = call(
                &mut service,
                request("/b", Some(read("users.search")), Some(&b)),
            )
            .await;
            (first, second)
        })
        .await;
    assert_eq!(registry.in_flight(), 0);

    a.release.notify_one();
    b.release.notify_one();
    assert_eq!(first.await.unwrap().into_body(), "/a");
    assert_eq!(second.await.unwrap().into_body(), "/b");
}

#[tokio::test]
async fn no_effect_for_a_request_carrying_a_served_request() {
    let (parts, ()) = Request::get("/page").body(()).unwrap().into_parts();
    let served = ServedRequest::new(parts, None);
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let (a, b) = (Probe::default(), Probe::default());
    let mut first = request("/a", Some(read("users.search")), Some(&a));
    first.extensions_mut().insert(served.clone());
    let mut second = request("/b", Some(read("users.search")), Some(&b));
    second.extensions_mut().insert(served);

    let first = call(&mut service, first).await;
    let second = call(&mut service, second).await;
    a.release.notify_one();
    b.release.notify_one();
    assert_eq!(first.await.unwrap().into_body(), "/a");
    assert_eq!(second.await.unwrap().into_body(), "/b");
}

#[tokio::test]
async fn no_effect_without_meta_or_without_cancel_previous() {
    let not_listed = EndpointMeta::new("users.search", Kind::Query);
    for meta in [None, Some(not_listed)] {
        let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
        let (a, b) = (Probe::default(), Probe::default());
        let first = call(&mut service, request("/a", meta.clone(), Some(&a))).await;
        let second = call(&mut service, request("/a", meta.clone(), Some(&b))).await;
        assert_eq!(service.registry.in_flight(), 0);
        a.release.notify_one();
        b.release.notify_one();
        assert_eq!(first.await.unwrap().into_body(), "/a");
        assert_eq!(second.await.unwrap().into_body(), "/a");
    }
}

#[tokio::test]
async fn slots_are_removed_when_calls_finish_or_are_dropped() {
    let mut service = CancelPreviousLayer::new().layer(upstream(Arc::default()));
    let registry = service.registry.clone();

    // A call that answers at once.
    let done = call(
        &mut service,
        request("/a", Some(read("users.search")), None),
    )
    .await;
    assert_eq!(registry.in_flight(), 1);
    let mut done = Box::pin(done);
    assert!(done.as_mut().await.is_ok());
    // Gone as soon as it answered, even though the future itself is still alive.
    assert_eq!(registry.in_flight(), 0);
    drop(done);

    // A cancelled call leaves the newer one's slot alone.
    let probe = Probe::default();
    let older = call(
        &mut service,
        request("/a", Some(read("users.search")), Some(&probe)),
    )
    .await;
    let newer = call(
        &mut service,
        request("/b", Some(read("users.search")), Some(&probe)),
    )
    .await;
    assert!(older.await.unwrap_err().is::<Cancelled>());
    assert_eq!(registry.in_flight(), 1);
    probe.release.notify_one();
    newer.await.unwrap();
    assert_eq!(registry.in_flight(), 0);

    // A call its caller gave up on.
    let abandoned = call(
        &mut service,
        request("/c", Some(read("users.search")), Some(&Probe::default())),
    )
    .await;
    assert_eq!(registry.in_flight(), 1);
    drop(abandoned);
    assert_eq!(registry.in_flight(), 0);
}

#[tokio::test]
async fn clones_of_a_layer_share_calls_and_new_starts_afresh() {
    let layer = CancelPreviousLayer::new();
    let mut one = layer.layer(upstream(Arc::default()));
    let mut two = layer.clone().layer(upstream(Arc::default()));
    let probe = Probe::default();
    let older = call(&mut one, request("/a", Some(read("s")), Some(&probe))).await;
    let _newer = call(&mut two, request("/b", Some(read("s")), Some(&probe))).await;
    assert!(older.await.unwrap_err().is::<Cancelled>());

    // A service made with `new` keeps a table of its own.
    let mut own = CancelPrevious::new(upstream(Arc::default()));
    let probe = Probe::default();
    let mine = call(&mut own, request("/a", Some(read("s")), Some(&probe))).await;
    let _other = call(
        &mut one,
        request("/b", Some(read("s")), Some(&Probe::default())),
    )
    .await;
    probe.release.notify_one();
    assert_eq!(mine.await.unwrap().into_body(), "/a");
}

#[tokio::test]
async fn fits_a_courier_stack() {
    use courier_core::{Body, HttpService};

    let transport = HttpService::new(service_fn(|_: Request<Body>| async {
        Ok::<_, BoxError>(Response::new(Body::from("ok")))
    }));
    let stack = HttpService::new(CancelPreviousLayer::new().layer(transport));
    let request = Request::get("/a")
        .extension(read("users.search"))
        .body(Body::empty())
        .unwrap();
    let response = stack.oneshot(request).await.unwrap();
    assert_eq!(response.into_body().as_bytes(), Some(&b"ok"[..]));
}

#[tokio::test]
async fn inner_errors_pass_through_boxed() {
    #[derive(Debug)]
    struct Refused;
    impl fmt::Display for Refused {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("refused")
        }
    }
    impl std::error::Error for Refused {}

    let service = CancelPreviousLayer::new().layer(service_fn(|_: Request<()>| async {
        Err::<Response<()>, _>(Refused)
    }));
    let err = service
        .oneshot(request("/a", Some(read("s")), None))
        .await
        .unwrap_err();
    assert!(err.is::<Refused>());
}

#[tokio::test]
async fn a_closure_keys_the_calls_instead_of_the_meta() {
    let search: Arc<str> = Arc::from("search");
    let mut service = CancelPreviousLayer::new()
        .cancel_for(move |request: &Request<()>| {
            (request.uri().path() == "/search").then(|| Arc::clone(&search))
        })
        .layer(upstream(Arc::default()));
    let (first, second, third) = (Probe::default(), Probe::default(), Probe::default());

    // No meta at all: the closure watches both searches under its key.
    let older = call(&mut service, request("/search?q=a", None, Some(&first))).await;
    // A read marked `cancel_previous` that the closure does not name is not watched.
    let other = call(
        &mut service,
        request("/users", Some(read("users.list")), Some(&third)),
    )
    .await;
    let newer = call(&mut service, request("/search?q=ab", None, Some(&second))).await;

    let err = older.await.unwrap_err();
    assert_eq!(err.to_string(), "cancelled by a newer call of `search`");
    second.release.notify_one();
    assert_eq!(newer.await.unwrap().into_body(), "/search?q=ab");
    third.release.notify_one();
    assert_eq!(other.await.unwrap().into_body(), "/users");
}
