use super::*;
use courier_core::{Body, Kind};
use http::header::{CACHE_CONTROL, COOKIE, SET_COOKIE};
use http::StatusCode;
use http_body_util::Full;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tower::service_fn;

/// A status and headers to answer with.
type Answer = (u16, Vec<(&'static str, &'static str)>);

/// What the upstream answers at a path: a status and headers; the body says which call it was.
#[derive(Clone, Default)]
struct Upstream {
    calls: Arc<AtomicUsize>,
    answers: Arc<Mutex<HashMap<String, Answer>>>,
}

impl Upstream {
    fn answer(&self, path: &str, status: u16, headers: &[(&'static str, &'static str)]) {
        self.answers
            .lock()
            .unwrap()
            .insert(path.to_owned(), (status, headers.to_vec()));
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn service(
        &self,
    ) -> impl Service<
        Request<Body>,
        Response = Response<Full<Bytes>>,
        Error = Infallible,
        Future: Send,
    > + Clone
           + Send
           + 'static {
        let upstream = self.clone();
        service_fn(move |request: Request<Body>| {
            let n = upstream.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let (status, headers) = upstream
                .answers
                .lock()
                .unwrap()
                .get(request.uri().path())
                .cloned()
                .unwrap_or((200, Vec::new()));
            let mut response = Response::new(Full::new(Bytes::from(format!("call {n}"))));
            *response.status_mut() = StatusCode::from_u16(status).unwrap();
            for (name, value) in headers {
                response
                    .headers_mut()
                    .append(name, HeaderValue::from_static(value));
            }
            async move { Ok::<_, Infallible>(response) }
        })
    }
}

const MINUTE: Duration = Duration::from_secs(60);

fn every_read(rule: CacheRule) -> impl Fn(&Request<Body>) -> Option<CacheRule> + Clone {
    move |request: &Request<Body>| (request.method() == http::Method::GET).then_some(rule)
}

fn get(path: &str) -> Request<Body> {
    Request::get(format!("http://127.0.0.1:1{path}"))
        .body(Body::empty())
        .unwrap()
}

fn with(mut request: Request<Body>, name: HeaderName, value: &'static str) -> Request<Body> {
    request
        .headers_mut()
        .append(name, HeaderValue::from_static(value));
    request
}

/// Sends `request` and reads the whole answer: its `age` header (when kept) and body.
async fn send<S>(service: &S, request: Request<Body>) -> (Option<u64>, String)
where
    S: Service<Request<Body>, Response = Response<CacheBody<Full<Bytes>>>, Error = BoxError>
        + Clone,
{
    let response = service.clone().oneshot(request).await.expect("an answer");
    let age = response
        .headers()
        .get(AGE)
        .map(|v| v.to_str().unwrap().parse().unwrap());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (age, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_fresh_answer_comes_from_memory_until_revalidate() {
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    assert_eq!(send(&service, get("/rates")).await, (None, "call 1".into()));
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        send(&service, get("/rates")).await,
        (Some(20), "call 1".into())
    );
    assert_eq!(upstream.calls(), 1);
    assert_eq!(service.len(), 1);

    // Past its freshness, with no stale time: fetched again, and kept again.
    tokio::time::sleep(Duration::from_secs(41)).await;
    assert_eq!(send(&service, get("/rates")).await, (None, "call 2".into()));
    assert_eq!(
        send(&service, get("/rates")).await,
        (Some(0), "call 2".into())
    );
    assert_eq!(upstream.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn two_users_never_share_an_answer() {
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());
    let as_user = |sid: &'static str| with(get("/me"), COOKIE, sid);

    assert_eq!(send(&service, as_user("sid=ada")).await.1, "call 1");
    assert_eq!(send(&service, as_user("sid=bob")).await.1, "call 2");
    assert_eq!(send(&service, as_user("sid=ada")).await.1, "call 1");
    assert_eq!(send(&service, as_user("sid=bob")).await.1, "call 2");
    // Nor with a request without credentials.
    assert_eq!(send(&service, get("/me")).await.1, "call 3");
    assert_eq!(upstream.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn the_upstreams_cache_control_is_honoured() {
    let upstream = Upstream::default();
    upstream.answer("/no-store", 200, &[("cache-control", "no-store")]);
    upstream.answer("/no-cache", 200, &[("cache-control", "no-cache")]);
    upstream.answer("/short", 200, &[("cache-control", "public, max-age=5")]);
    upstream.answer(
        "/private",
        200,
        &[("cache-control", "private, max-age=600")],
    );
    upstream.answer("/cookie", 200, &[("set-cookie", "sid=new")]);
    upstream.answer("/missing", 404, &[]);
    upstream.answer("/vary", 200, &[("vary", "accept, *")]);
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    for path in ["/no-store", "/no-cache", "/cookie", "/missing", "/vary"] {
        send(&service, get(path)).await;
        let before = upstream.calls();
        send(&service, get(path)).await;
        assert_eq!(upstream.calls(), before + 1, "{path} is not kept");
    }

    // `max-age` shorter than `revalidate`: the shorter wins.
    assert_eq!(send(&service, get("/short")).await.1, "call 11");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(send(&service, get("/short")).await.1, "call 11");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(send(&service, get("/short")).await.1, "call 12");

    // `private`: one user's, kept only for a request with credentials.
    send(&service, get("/private")).await;
    let before = upstream.calls();
    send(&service, get("/private")).await;
    assert_eq!(upstream.calls(), before + 1, "no credentials: not kept");
    let mine = || with(get("/private"), COOKIE, "sid=ada");
    let first = send(&service, mine()).await.1;
    assert_eq!(
        send(&service, mine()).await.1,
        first,
        "with credentials: kept"
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_that_says_no_cache_or_no_store_is_not_answered_from_memory() {
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    send(&service, get("/rates")).await;
    // `no-cache`: fetched afresh, and the fresh answer is kept.
    let fresh = send(&service, with(get("/rates"), CACHE_CONTROL, "no-cache")).await;
    assert_eq!(fresh, (None, "call 2".into()));
    assert_eq!(send(&service, get("/rates")).await.1, "call 2");
    // `no-store`: fetched, and not kept.
    let passed = send(&service, with(get("/rates"), CACHE_CONTROL, "no-store")).await;
    assert_eq!(passed.1, "call 3");
    assert_eq!(send(&service, get("/rates")).await.1, "call 2");
}

#[tokio::test(start_paused = true)]
async fn a_stale_answer_is_given_while_one_fetch_refreshes_it() {
    let upstream = Upstream::default();
    let rule = CacheRule::new(MINUTE).stale_while_revalidate(MINUTE);
    let service = CacheLayer::new()
        .cache_for(every_read(rule))
        .layer(upstream.service());

    send(&service, get("/rates")).await;
    tokio::time::sleep(Duration::from_secs(90)).await;
    // Stale: given at once, both times; one fetch in the background.
    assert_eq!(
        send(&service, get("/rates")).await,
        (Some(90), "call 1".into())
    );
    assert_eq!(send(&service, get("/rates")).await.1, "call 1");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(upstream.calls(), 2);
    // The refreshed answer replaces it.
    assert_eq!(
        send(&service, get("/rates")).await,
        (Some(0), "call 2".into())
    );

    // Past the stale time too: a plain miss.
    tokio::time::sleep(Duration::from_secs(121)).await;
    assert_eq!(send(&service, get("/rates")).await, (None, "call 3".into()));
}

#[tokio::test(start_paused = true)]
async fn a_refresh_that_never_answers_ends_at_the_calls_timeout_and_is_tried_again() {
    // The first call answers; every later one hangs, until the test lets them through.
    let calls = Arc::new(AtomicUsize::new(0));
    let upstream = service_fn({
        let calls = Arc::clone(&calls);
        move |_request: Request<Body>| {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                if n > 1 {
                    std::future::pending::<()>().await;
                }
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(format!("call {n}")))))
            }
        }
    });
    let rule = CacheRule::new(MINUTE).stale_while_revalidate(MINUTE);
    let service = CacheLayer::new()
        .cache_for(every_read(rule))
        .layer(upstream);
    let timed = || {
        let mut request = get("/rates");
        let meta = EndpointMeta::new("market.rates", Kind::Query).timeout(Duration::from_secs(5));
        request.extensions_mut().insert(meta);
        request
    };

    send(&service, timed()).await;
    tokio::time::sleep(Duration::from_secs(90)).await;
    // Stale: answered, and one refresh starts, which hangs.
    assert_eq!(send(&service, timed()).await.1, "call 1");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(send(&service, timed()).await.1, "call 1");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one refresh at a time");
    // Past the call's timeout the refresh has given up: the next stale read starts another.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(send(&service, timed()).await.1, "call 1");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "a new refresh, the hung one given up"
    );
}

#[tokio::test(start_paused = true)]
async fn memory_is_bounded_the_least_recently_used_answer_goes_first() {
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .max_entries(2)
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    send(&service, get("/a")).await;
    send(&service, get("/b")).await;
    send(&service, get("/a")).await; // `/a` used: `/b` is now the oldest
    send(&service, get("/c")).await; // evicts `/b`
    assert_eq!(service.len(), 2);
    assert_eq!(upstream.calls(), 3);
    send(&service, get("/a")).await;
    assert_eq!(upstream.calls(), 3, "`/a` stayed");
    send(&service, get("/b")).await;
    assert_eq!(upstream.calls(), 4, "`/b` was evicted");

    // Bytes bound every answer, and one too big is never kept.
    let small = CacheLayer::new()
        .max_entry_bytes(4)
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());
    send(&small, get("/a")).await;
    assert!(small.is_empty(), "`call N` is more than 4 bytes");
    let total = CacheLayer::new()
        .max_bytes(100)
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());
    for path in ["/a", "/b", "/c", "/d", "/e", "/f"] {
        send(&total, get(path)).await;
        assert!(total.bytes() <= 100, "{} bytes", total.bytes());
    }
    assert!(total.len() < 6);
}

#[tokio::test(start_paused = true)]
async fn an_answer_read_only_in_part_is_not_kept() {
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    let response = service.clone().oneshot(get("/rates")).await.unwrap();
    drop(response);
    assert!(service.is_empty());
    send(&service, get("/rates")).await;
    assert_eq!(upstream.calls(), 2);
    assert_eq!(service.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_answer_of_a_known_length_is_kept_once_its_last_byte_is_read() {
    // What a server writing a `content-length` body does: it reads that many bytes, sees the
    // body say it has ended, and never polls it again.
    let upstream = Upstream::default();
    let service = CacheLayer::new()
        .cache_for(every_read(CacheRule::new(MINUTE)))
        .layer(upstream.service());

    let mut body = service
        .clone()
        .oneshot(get("/rates"))
        .await
        .unwrap()
        .into_body();
    assert_eq!(http_body::Body::size_hint(&body).exact(), Some(6));
    let frame = body.frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "call 1");
    assert!(http_body::Body::is_end_stream(&body));
    drop(body);
    assert_eq!(service.len(), 1);
    assert_eq!(
        send(&service, get("/rates")).await,
        (Some(0), "call 1".into())
    );
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn by_default_an_endpoints_cache_options_decide() {
    let upstream = Upstream::default();
    let service = CacheLayer::new().layer(upstream.service());
    let meta = |meta: EndpointMeta| {
        let mut request = get("/users/7");
        request.extensions_mut().insert(meta);
        request
    };
    let cached =
        EndpointMeta::new("users.get", Kind::Query).cache(CacheOptions::new().revalidate(60));

    send(&service, meta(cached.clone())).await;
    assert_eq!(send(&service, meta(cached.clone())).await.1, "call 1");
    // Without `.cache()`, without meta, a write, or sensitive variables: never kept.
    for other in [
        Some(EndpointMeta::new("users.get", Kind::Query)),
        None,
        Some(
            EndpointMeta::new("users.update", Kind::Mutation)
                .cache(CacheOptions::new().revalidate(60)),
        ),
        Some(cached.clone().sensitive(true)),
    ] {
        let before = upstream.calls();
        let request = other.map_or_else(|| get("/users/7"), meta);
        send(&service, request).await;
        assert_eq!(upstream.calls(), before + 1);
    }
    assert_eq!(service.len(), 1);
}

#[test]
fn cache_control_directives_are_read_from_every_header() {
    let mut headers = http::HeaderMap::new();
    headers.append(
        CACHE_CONTROL,
        HeaderValue::from_static("Public, MAX-AGE=\"30\""),
    );
    headers.append(
        CACHE_CONTROL,
        HeaderValue::from_static("max-age=10, private"),
    );
    let directives = Directives::of(&headers);
    assert_eq!(directives.max_age, Some(10));
    assert!(directives.private);
    assert!(!directives.no_store);

    let mut invalid = http::HeaderMap::new();
    invalid.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=soon"));
    assert_eq!(Directives::of(&invalid).max_age, Some(0));
    let _ = SET_COOKIE;
}
