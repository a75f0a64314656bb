use super::policy::may_retry;
use super::retry_after::format_http_date;
use super::*;
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::{Backoff, Body, BoxError, EndpointMeta, Kind, RetrySetting};
use http::header::RETRY_AFTER;
use http::{HeaderMap, Method, Uri};
use http_body_util::{BodyExt, Full};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;
use tower::retry::budget::TpsBudget;
use tower::ServiceExt;

/// What the upstream does on one attempt.
#[derive(Clone, Debug)]
enum Outcome {
    Status(u16),
    /// A status with a `Retry-After` header.
    Hinted(u16, String),
    /// An error, as a transport's network failure.
    Fail,
}

/// An extension an outer layer might have put on the request.
#[derive(Clone, Debug, PartialEq)]
struct Marker(u32);

/// What the upstream saw of one attempt.
#[derive(Clone, Debug)]
struct Seen {
    at: Instant,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
    endpoint: Option<String>,
    timeout: Option<Duration>,
    marker: Option<Marker>,
    /// The served request's path, when the attempt carried one.
    served: Option<String>,
}

/// A scripted upstream: attempt `n` gets the script's `n`th outcome, or its last once the
/// script runs out.
#[derive(Clone)]
struct Upstream {
    script: Arc<Vec<Outcome>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Upstream {
    fn new(script: impl IntoIterator<Item = Outcome>) -> Self {
        Self {
            script: Arc::new(script.into_iter().collect()),
            seen: Arc::default(),
        }
    }

    fn always(status: u16) -> Self {
        Self::new([Outcome::Status(status)])
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn calls(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The time between consecutive attempts.
    fn gaps(&self) -> Vec<Duration> {
        let seen = self.seen();
        seen.windows(2).map(|w| w[1].at - w[0].at).collect()
    }
}

impl Service<Request<Body>> for Upstream {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let at = Instant::now();
            let (parts, body) = request.into_parts();
            let body = body.collect().await?.to_bytes();
            let attempt = {
                let mut seen = this.seen.lock().unwrap();
                seen.push(Seen {
                    at,
                    method: parts.method,
                    uri: parts.uri,
                    headers: parts.headers,
                    body,
                    endpoint: parts
                        .extensions
                        .get::<EndpointMeta>()
                        .map(|meta| meta.path().to_owned()),
                    timeout: parts
                        .extensions
                        .get::<EndpointMeta>()
                        .and_then(EndpointMeta::get_timeout),
                    marker: parts.extensions.get::<Marker>().cloned(),
                    served: parts
                        .extensions
                        .get::<ServedRequest>()
                        .map(|served| served.parts().uri.path().to_owned()),
                });
                seen.len()
            };
            let outcome = this.script.get(attempt - 1).or(this.script.last());
            match outcome.cloned().unwrap_or(Outcome::Status(200)) {
                Outcome::Status(status) => Ok(Response::builder()
                    .status(status)
                    .body(Body::from(format!("attempt {attempt}")))?),
                Outcome::Hinted(status, hint) => Ok(Response::builder()
                    .status(status)
                    .header(RETRY_AFTER, hint)
                    .body(Body::from(format!("attempt {attempt}")))?),
                Outcome::Fail => Err(format!("connection refused on attempt {attempt}").into()),
            }
        })
    }
}

fn get() -> Request<Body> {
    request(Method::GET, None)
}

fn request(method: Method, meta: Option<EndpointMeta>) -> Request<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri("http://127.0.0.1:1/users/7")
        .body(Body::from("payload"))
        .unwrap();
    if let Some(meta) = meta {
        request.extensions_mut().insert(meta);
    }
    request
}

fn no_jitter() -> Backoff {
    Backoff {
        jitter: false,
        ..Backoff::default()
    }
}

async fn send(layer: &RetryLayer, upstream: &Upstream, request: Request<Body>) -> Response<Body> {
    layer
        .layer(upstream.clone())
        .oneshot(request)
        .await
        .expect("a response")
}

#[tokio::test(start_paused = true)]
async fn retries_each_default_status() {
    for status in [429, 502, 503, 504] {
        let upstream = Upstream::new([Outcome::Status(status), Outcome::Status(200)]);
        let response = send(&RetryLayer::default(), &upstream, get()).await;
        assert_eq!(response.status(), 200, "after {status}");
        assert_eq!(upstream.calls(), 2, "after {status}");
    }
}

#[tokio::test(start_paused = true)]
async fn retries_an_inner_error_as_status_0() {
    let upstream = Upstream::new([Outcome::Fail, Outcome::Status(200)]);
    let response = send(&RetryLayer::default(), &upstream, get()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn does_not_retry_an_error_when_status_0_is_not_listed() {
    let upstream = Upstream::new([Outcome::Fail, Outcome::Status(200)]);
    let layer = RetryLayer::new(RetryPolicy::default().statuses([503]));
    let error = layer
        .layer(upstream.clone())
        .oneshot(get())
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "connection refused on attempt 1");
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn does_not_retry_success_or_other_statuses() {
    for status in [200, 201, 400, 404, 500] {
        let upstream = Upstream::new([Outcome::Status(status), Outcome::Status(200)]);
        let response = send(&RetryLayer::default(), &upstream, get()).await;
        assert_eq!(response.status(), status);
        assert_eq!(upstream.calls(), 1, "{status} is not retried");
    }
}

#[tokio::test(start_paused = true)]
async fn stops_after_max_attempts_and_returns_the_last_response() {
    let upstream = Upstream::always(503);
    let response = send(&RetryLayer::default(), &upstream, get()).await;
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.calls(), 3);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "attempt 3");

    for attempts in [0, 1, 5] {
        let upstream = Upstream::always(503);
        let layer = RetryLayer::new(RetryPolicy::default().max_attempts(attempts));
        assert_eq!(send(&layer, &upstream, get()).await.status(), 503);
        assert_eq!(upstream.calls(), attempts.max(1) as usize);
    }
}

#[tokio::test(start_paused = true)]
async fn returns_the_last_error_as_is() {
    let upstream = Upstream::new([Outcome::Fail]);
    let error = RetryLayer::default()
        .layer(upstream.clone())
        .oneshot(get())
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "connection refused on attempt 3");
    assert_eq!(upstream.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_retried_response_is_dropped_and_the_last_one_returned() {
    /// A response body that counts its drops.
    struct Counted(Arc<AtomicUsize>, u16);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let upstream = tower::service_fn({
        let (drops, calls) = (drops.clone(), calls.clone());
        move |_request: Request<Body>| {
            let status = if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                503
            } else {
                200
            };
            let body = Counted(drops.clone(), status);
            async move { Ok::<_, BoxError>(Response::builder().status(status).body(body)?) }
        }
    });
    let response = RetryLayer::default()
        .layer(upstream)
        .oneshot(get())
        .await
        .unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the 503 was dropped");
    assert_eq!(response.status(), 200);
    assert_eq!(response.body().1, 200);
    drop(response);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn writes_are_not_retried_by_default() {
    for method in [Method::POST, Method::PATCH, Method::CONNECT] {
        let upstream = Upstream::new([Outcome::Status(503), Outcome::Status(200)]);
        let response = send(
            &RetryLayer::default(),
            &upstream,
            request(method.clone(), None),
        )
        .await;
        assert_eq!(response.status(), 503, "{method}");
        assert_eq!(upstream.calls(), 1, "{method}");
    }
    // A write endpoint's meta changes nothing.
    let upstream = Upstream::always(503);
    let meta = EndpointMeta::new("users.create", Kind::Mutation);
    send(
        &RetryLayer::default(),
        &upstream,
        request(Method::POST, Some(meta)),
    )
    .await;
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn writes_are_retried_when_the_policy_says_so() {
    let layer = RetryLayer::new(RetryPolicy::default().writes(true));
    for method in [Method::POST, Method::PATCH] {
        let upstream = Upstream::new([Outcome::Status(503), Outcome::Status(200)]);
        let response = send(&layer, &upstream, request(method.clone(), None)).await;
        assert_eq!(response.status(), 200, "{method}");
        assert_eq!(upstream.calls(), 2, "{method}");
    }
    // The endpoint's own policy can allow it too.
    let upstream = Upstream::new([Outcome::Status(503), Outcome::Status(200)]);
    let meta = EndpointMeta::new("users.create", Kind::Mutation)
        .retry(RetryPolicy::default().writes(true));
    let response = send(
        &RetryLayer::default(),
        &upstream,
        request(Method::POST, Some(meta)),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn reads_and_idempotent_methods_are_retried() {
    for method in [
        Method::GET,
        Method::HEAD,
        Method::OPTIONS,
        Method::PUT,
        Method::DELETE,
        Method::TRACE,
        Method::from_bytes(b"QUERY").unwrap(),
    ] {
        let upstream = Upstream::new([Outcome::Status(503), Outcome::Status(200)]);
        let response = send(
            &RetryLayer::default(),
            &upstream,
            request(method.clone(), None),
        )
        .await;
        assert_eq!(response.status(), 200, "{method}");
        assert_eq!(upstream.calls(), 2, "{method}");
    }
    // A POST whose endpoint reads (`.reads()`).
    let upstream = Upstream::new([Outcome::Status(503), Outcome::Status(200)]);
    let meta = EndpointMeta::new("users.search", Kind::Query);
    let response = send(
        &RetryLayer::default(),
        &upstream,
        request(Method::POST, Some(meta)),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.calls(), 2);
}

#[test]
fn may_retry_follows_method_meta_and_writes() {
    let default = RetryPolicy::default();
    let writes = RetryPolicy::default().writes(true);
    let read = EndpointMeta::new("users.search", Kind::Query);
    let write = EndpointMeta::new("users.create", Kind::Mutation);
    assert!(may_retry(&Method::GET, None, &default));
    assert!(may_retry(&Method::GET, Some(&write), &default));
    assert!(may_retry(&Method::POST, Some(&read), &default));
    assert!(!may_retry(&Method::POST, Some(&write), &default));
    assert!(!may_retry(&Method::POST, None, &default));
    assert!(may_retry(&Method::POST, None, &writes));
}

#[tokio::test(start_paused = true)]
async fn retry_off_never_retries() {
    let upstream = Upstream::always(503);
    let meta = EndpointMeta::new("users.get", Kind::Query).retry(RetrySetting::Off);
    let layer = RetryLayer::new(RetryPolicy::default().writes(true));
    let response = send(&layer, &upstream, request(Method::GET, Some(meta))).await;
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_endpoint_policy_wins_over_the_layer_default() {
    let layer = RetryLayer::new(RetryPolicy::default().max_attempts(2));

    let upstream = Upstream::always(503);
    let meta =
        EndpointMeta::new("users.get", Kind::Query).retry(RetryPolicy::default().max_attempts(4));
    send(&layer, &upstream, request(Method::GET, Some(meta))).await;
    assert_eq!(upstream.calls(), 4, "the endpoint's 4 attempts");

    let upstream = Upstream::new([Outcome::Status(500), Outcome::Status(200)]);
    let meta =
        EndpointMeta::new("users.get", Kind::Query).retry(RetryPolicy::default().statuses([500]));
    let response = send(&layer, &upstream, request(Method::GET, Some(meta))).await;
    assert_eq!(response.status(), 200, "the endpoint retries 500");

    let upstream = Upstream::always(503);
    let meta = EndpointMeta::new("users.get", Kind::Query).retry(RetrySetting::Inherit);
    send(&layer, &upstream, request(Method::GET, Some(meta))).await;
    assert_eq!(upstream.calls(), 2, "inherited: the layer's 2 attempts");
}

#[tokio::test(start_paused = true)]
async fn retry_after_in_seconds_sets_the_delay() {
    let upstream = Upstream::new([Outcome::Hinted(503, "2".into()), Outcome::Status(200)]);
    let response = send(&RetryLayer::default(), &upstream, get()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.gaps(), [Duration::from_secs(2)]);

    // 429 with a hint, too.
    let upstream = Upstream::new([Outcome::Hinted(429, "1".into()), Outcome::Status(200)]);
    send(&RetryLayer::default(), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [Duration::from_secs(1)]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_capped_by_max_ms() {
    let upstream = Upstream::new([Outcome::Hinted(503, "2".into()), Outcome::Status(200)]);
    let policy = RetryPolicy::default().backoff(Backoff {
        max_ms: 500,
        ..Backoff::default()
    });
    send(&RetryLayer::new(policy), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [Duration::from_millis(500)]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_as_an_http_date_sets_the_delay() {
    let date = format_http_date(SystemTime::now() + Duration::from_secs(3));
    let upstream = Upstream::new([Outcome::Hinted(503, date.clone()), Outcome::Status(200)]);
    send(&RetryLayer::default(), &upstream, get()).await;
    // The date has whole seconds: it is between two and three seconds away.
    let gap = upstream.gaps()[0];
    assert!(
        gap > Duration::from_secs(2) && gap <= Duration::from_secs(3),
        "{date}: waited {gap:?}"
    );

    // A date in the past: retried at once.
    let past = format_http_date(SystemTime::now() - Duration::from_secs(60));
    let upstream = Upstream::new([Outcome::Hinted(503, past), Outcome::Status(200)]);
    send(&RetryLayer::default(), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [Duration::ZERO]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_ignored_unless_honoured() {
    let upstream = Upstream::new([Outcome::Hinted(503, "2".into()), Outcome::Status(200)]);
    let mut policy = RetryPolicy::default().backoff(no_jitter());
    policy.honor_retry_after = false;
    send(&RetryLayer::new(policy), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [Duration::from_millis(100)]);

    // An unreadable hint falls back to the backoff.
    let upstream = Upstream::new([Outcome::Hinted(503, "soon".into()), Outcome::Status(200)]);
    let policy = RetryPolicy::default().backoff(no_jitter());
    send(&RetryLayer::new(policy), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [Duration::from_millis(100)]);
}

#[tokio::test(start_paused = true)]
async fn backoff_grows_exponentially_up_to_max_ms() {
    let upstream = Upstream::always(503);
    let policy = RetryPolicy::default().max_attempts(5).backoff(no_jitter());
    send(&RetryLayer::new(policy), &upstream, get()).await;
    let ms = |ms| Duration::from_millis(ms);
    assert_eq!(upstream.gaps(), [ms(100), ms(200), ms(400), ms(800)]);

    let upstream = Upstream::always(503);
    let policy = RetryPolicy::default().max_attempts(4).backoff(Backoff {
        initial_ms: 100,
        max_ms: 1_000,
        factor: 10.0,
        jitter: false,
    });
    send(&RetryLayer::new(policy), &upstream, get()).await;
    assert_eq!(upstream.gaps(), [ms(100), ms(1_000), ms(1_000)]);
}

#[tokio::test(start_paused = true)]
async fn backoff_with_jitter_stays_within_its_bounds() {
    let policy = RetryPolicy::default().max_attempts(6);
    let layer = RetryLayer::new(policy).budget(TpsBudget::new(Duration::from_secs(10), 1_000, 1.0));
    let mut gaps = Vec::new();
    for _ in 0..20 {
        let upstream = Upstream::always(503);
        send(&layer, &upstream, get()).await;
        let call_gaps = upstream.gaps();
        assert_eq!(call_gaps.len(), 5);
        for (retry, gap) in call_gaps.iter().enumerate() {
            let bound = Duration::from_millis(100 << retry);
            assert!(*gap <= bound, "retry {}: {gap:?} over {bound:?}", retry + 1);
        }
        gaps.extend(call_gaps);
    }
    // Full jitter: the waits are spread over the whole range, below and above half the bound.
    let halves = gaps
        .iter()
        .enumerate()
        .map(|(i, gap)| *gap < Duration::from_millis(50 << (i % 5)));
    let (low, high): (Vec<bool>, Vec<bool>) = halves.partition(|low| *low);
    assert!(!low.is_empty() && !high.is_empty(), "{gaps:?}");
}

#[test]
fn backoff_delay_is_exponential_capped_and_jittered() {
    let backoff = Backoff::default();
    let ms = |ms| Duration::from_millis(ms);
    assert_eq!(backoff.delay(1, 0.0), Duration::ZERO);
    assert_eq!(backoff.delay(1, 0.5), ms(50));
    assert_eq!(backoff.delay(3, 0.5), ms(200));
    assert!(backoff.delay(3, 0.999_999) < ms(400));
    assert_eq!(backoff.delay(30, 0.5), ms(2_500));
    assert_eq!(backoff.delay(u32::MAX, 0.5), ms(2_500));

    let fixed = no_jitter();
    assert_eq!(fixed.delay(1, 0.1), ms(100));
    assert_eq!(fixed.delay(4, 0.1), ms(800));
    assert_eq!(fixed.delay(7, 0.1), ms(5_000));
    let odd = |factor| Backoff {
        factor,
        ..no_jitter()
    };
    assert_eq!(odd(f64::NAN).delay(2, 0.1), ms(5_000));
    assert_eq!(odd(f64::INFINITY).delay(2, 0.1), ms(5_000));
    // A factor below 1 never shrinks the wait (one rule with channels and streams).
    assert_eq!(odd(-2.0).delay(2, 0.1), ms(100));
    assert_eq!(odd(0.5).delay(3, 0.1), ms(100));
    assert_eq!(odd(1.0).delay(9, 0.1), ms(100));
}

#[tokio::test(start_paused = true)]
async fn a_streamed_body_is_sent_once() {
    let upstream = Upstream::always(503);
    let mut request = get();
    *request.body_mut() = Body::new(Full::new(Bytes::from_static(b"streamed")));
    let response = send(&RetryLayer::default(), &upstream, request).await;
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.calls(), 1);
    assert_eq!(upstream.seen()[0].body, "streamed");
}

#[tokio::test(start_paused = true)]
async fn each_attempt_sends_a_copy_of_the_request() {
    let upstream = Upstream::new([Outcome::Fail, Outcome::Status(503), Outcome::Status(200)]);
    let meta = EndpointMeta::new("users.put", Kind::Mutation);
    let mut request = request(Method::PUT, Some(meta));
    request
        .headers_mut()
        .insert("x-trace", "abc".parse().unwrap());
    request.extensions_mut().insert(Marker(7));
    *request.version_mut() = http::Version::HTTP_11;
    send(&RetryLayer::default(), &upstream, request).await;

    let seen = upstream.seen();
    assert_eq!(seen.len(), 3);
    for attempt in &seen {
        assert_eq!(attempt.method, Method::PUT);
        assert_eq!(attempt.uri, "http://127.0.0.1:1/users/7");
        assert_eq!(attempt.headers["x-trace"], "abc");
        assert_eq!(attempt.body, "payload");
        assert_eq!(attempt.endpoint.as_deref(), Some("users.put"));
        assert_eq!(attempt.marker, Some(Marker(7)));
    }
}

#[tokio::test(start_paused = true)]
async fn the_budget_stops_retries_once_spent() {
    // Nothing in reserve, nothing earned: no retries at all.
    let layer = RetryLayer::default().budget(TpsBudget::new(Duration::from_secs(10), 0, 0.0));
    let upstream = Upstream::always(503);
    assert_eq!(send(&layer, &upstream, get()).await.status(), 503);
    assert_eq!(upstream.calls(), 1);

    // One retry per call: the third attempt the policy allows is refused.
    let layer = RetryLayer::default().budget(TpsBudget::new(Duration::from_secs(10), 0, 1.0));
    let upstream = Upstream::always(503);
    send(&layer, &upstream, get()).await;
    assert_eq!(upstream.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_shared_by_the_layers_services() {
    let layer = RetryLayer::new(RetryPolicy::default().max_attempts(5)).budget(TpsBudget::new(
        Duration::from_secs(10),
        0,
        1.0,
    ));
    let upstream = Upstream::new([
        Outcome::Status(200),
        Outcome::Status(200),
        Outcome::Status(503),
    ]);
    let mut first = layer.layer(upstream.clone());
    let second = layer.layer(upstream.clone());
    // Two calls that succeed at once earn a retry each...
    assert_eq!(
        first
            .ready()
            .await
            .unwrap()
            .call(get())
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(first.clone().oneshot(get()).await.unwrap().status(), 200);
    // ...which another service of the same layer spends, with the one its own call earns.
    second.oneshot(get()).await.unwrap();
    assert_eq!(upstream.calls(), 2 + 4);
}

#[tokio::test(start_paused = true)]
async fn a_request_with_only_its_meta_keeps_it_on_every_attempt() {
    let upstream = Upstream::new([Outcome::Status(502), Outcome::Fail, Outcome::Status(200)]);
    let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_secs(3));
    let request = request(Method::GET, Some(meta));
    assert_eq!(request.extensions().len(), 1);
    let response = send(&RetryLayer::default(), &upstream, request).await;
    assert_eq!(response.status(), 200);

    let seen = upstream.seen();
    assert_eq!(seen.len(), 3);
    for attempt in &seen {
        assert_eq!(attempt.endpoint.as_deref(), Some("users.get"));
        assert_eq!(attempt.timeout, Some(Duration::from_secs(3)));
        assert_eq!(attempt.marker, None);
        assert_eq!(attempt.body, "payload");
    }
}

#[tokio::test(start_paused = true)]
async fn a_served_call_keeps_its_meta_and_served_request_on_every_attempt() {
    let upstream = Upstream::new([Outcome::Fail, Outcome::Status(503), Outcome::Status(200)]);
    let (parts, ()) = Request::get("/api/request").body(()).unwrap().into_parts();
    let mut request = request(
        Method::GET,
        Some(EndpointMeta::new("users.get", Kind::Query)),
    );
    request
        .extensions_mut()
        .insert(ServedRequest::new(parts, None));
    assert_eq!(request.extensions().len(), 2);
    let response = send(&RetryLayer::default(), &upstream, request).await;
    assert_eq!(response.status(), 200);

    let seen = upstream.seen();
    assert_eq!(seen.len(), 3);
    for attempt in &seen {
        assert_eq!(attempt.endpoint.as_deref(), Some("users.get"));
        assert_eq!(attempt.served.as_deref(), Some("/api/request"));
        assert_eq!(attempt.marker, None);
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_that_cannot_be_retried_keeps_no_copy() {
    // A POST without `writes`: the first outcome is the last, and the future carries nothing
    // for a retry.
    let layer = RetryLayer::default();
    let upstream = Upstream::always(503);
    let mut service = layer.layer(upstream.clone());
    let future = service.call(request(Method::POST, None));
    assert!(format!("{future:?}").contains("attempts: 0"));
    assert_eq!(future.await.unwrap().status(), 503);
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_closure_decides_which_requests_are_retried_instead_of_the_meta() {
    let upstream = Upstream::always(503);
    let policy = RetryPolicy::default().backoff(no_jitter());
    let layer = RetryLayer::new(policy)
        .retry_for(|request: &Request<Body>| request.headers().contains_key("idempotency-key"));

    // A write the meta would never retry: the closure names it, so it is retried.
    let mut write = request(
        Method::POST,
        Some(EndpointMeta::new("jobs.create", Kind::Mutation)),
    );
    write
        .headers_mut()
        .insert("idempotency-key", http::HeaderValue::from_static("job-41"));
    let response = layer.layer(upstream.clone()).oneshot(write).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.calls(), 3);

    // A read whose meta inherits the policy: the closure does not name it, so it is sent once.
    let read = request(
        Method::GET,
        Some(EndpointMeta::new("users.get", Kind::Query)),
    );
    layer.layer(upstream.clone()).oneshot(read).await.unwrap();
    assert_eq!(upstream.calls(), 4);
}
