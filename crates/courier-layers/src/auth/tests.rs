use super::error::TokenError;
use super::*;
use http::Response;
use std::convert::Infallible;
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use tower::{service_fn, ServiceExt};

/// An upstream that answers with the request's headers and counts its calls.
fn upstream(
    calls: Arc<AtomicUsize>,
) -> impl Service<Request<()>, Response = Response<http::HeaderMap>, Error = Infallible> + Clone {
    service_fn(move |request: Request<()>| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, Infallible>(Response::new(request.headers().clone())) }
    })
}

fn token(
    value: &'static str,
) -> impl Fn() -> std::future::Ready<Result<&'static str, Infallible>> + Clone {
    move || std::future::ready(Ok(value))
}

async fn headers<S>(service: S, request: Request<()>) -> http::HeaderMap
where
    S: Service<Request<()>, Response = Response<http::HeaderMap>, Error = BoxError>,
{
    service.oneshot(request).await.unwrap().into_body()
}

fn get() -> Request<()> {
    Request::get("/me").body(()).unwrap()
}

#[tokio::test]
async fn sets_a_sensitive_bearer_header() {
    let service = AuthLayer::new(token("abc")).layer(upstream(Arc::default()));
    let headers = headers(service, get()).await;
    let value = &headers[AUTHORIZATION];
    assert_eq!(value, "Bearer abc");
    assert!(value.is_sensitive());
}

#[tokio::test]
async fn another_scheme_or_none() {
    let service = AuthLayer::new(token("abc"))
        .scheme("Token")
        .layer(upstream(Arc::default()));
    assert_eq!(headers(service, get()).await[AUTHORIZATION], "Token abc");

    let service = AuthLayer::new(token("abc"))
        .raw()
        .layer(upstream(Arc::default()));
    let headers = headers(service, get()).await;
    assert_eq!(headers[AUTHORIZATION], "abc");
    assert!(headers[AUTHORIZATION].is_sensitive());
}

#[tokio::test]
async fn another_header() {
    let api_key = HeaderName::from_static("x-api-key");
    let service = AuthLayer::new(token("k-1"))
        .header(api_key.clone())
        .raw()
        .layer(upstream(Arc::default()));
    let headers = headers(service, get()).await;
    assert_eq!(headers[&api_key], "k-1");
    assert!(headers[&api_key].is_sensitive());
    assert!(!headers.contains_key(AUTHORIZATION));
}

#[tokio::test]
async fn asks_the_supplier_on_every_call() {
    let asked = Arc::new(AtomicUsize::new(0));
    let supplier = {
        let asked = Arc::clone(&asked);
        move || {
            let n = asked.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::task::yield_now().await;
                Ok::<_, Infallible>(format!("t{n}"))
            }
        }
    };
    let mut service = AuthLayer::new(supplier).layer(upstream(Arc::default()));
    for n in 0..3 {
        let response = service.ready().await.unwrap().call(get()).await.unwrap();
        assert_eq!(
            response.into_body()[AUTHORIZATION],
            format!("Bearer t{n}").as_str()
        );
    }
    assert_eq!(asked.load(Ordering::SeqCst), 3);
}

#[derive(Debug)]
struct NoToken;

impl fmt::Display for NoToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the token store is locked")
    }
}

impl std::error::Error for NoToken {}

#[tokio::test]
async fn a_failing_supplier_fails_the_call_before_it_is_sent() {
    let calls = Arc::new(AtomicUsize::new(0));
    let supplier = || async { Err::<String, _>(NoToken) };
    let service = AuthLayer::new(supplier).layer(upstream(Arc::clone(&calls)));
    let err = service.oneshot(get()).await.unwrap_err();

    let token_error = err.downcast_ref::<TokenError>().expect("a TokenError");
    assert!(!token_error.is_invalid_value());
    assert_eq!(token_error.to_string(), "the token supplier failed");
    assert!(token_error.source().unwrap().is::<NoToken>());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_invalid_token_is_an_error_not_a_panic() {
    let calls = Arc::new(AtomicUsize::new(0));
    let service = AuthLayer::new(token("abc\r\nx-injected: 1")).layer(upstream(Arc::clone(&calls)));
    let err = service.oneshot(get()).await.unwrap_err();

    let token_error = err.downcast_ref::<TokenError>().expect("a TokenError");
    assert!(token_error.is_invalid_value());
    assert!(
        !token_error.to_string().contains("abc"),
        "the token never shows"
    );
    assert!(token_error
        .source()
        .unwrap()
        .is::<http::header::InvalidHeaderValue>());
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // A bad scheme is caught the same way.
    let service = AuthLayer::new(token("abc"))
        .scheme("Bear\ner")
        .layer(upstream(Arc::clone(&calls)));
    let err = service.oneshot(get()).await.unwrap_err();
    assert!(err.downcast_ref::<TokenError>().unwrap().is_invalid_value());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_existing_header_stays_unless_overriding() {
    let asked = Arc::new(AtomicUsize::new(0));
    let supplier = {
        let asked = Arc::clone(&asked);
        move || {
            asked.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok::<_, Infallible>("from-supplier"))
        }
    };
    let with_header = || {
        Request::get("/me")
            .header(AUTHORIZATION, "Basic dXNlcg==")
            .body(())
            .unwrap()
    };

    let service = AuthLayer::new(supplier.clone()).layer(upstream(Arc::default()));
    assert_eq!(
        headers(service, with_header()).await[AUTHORIZATION],
        "Basic dXNlcg=="
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0, "not asked when not needed");

    let service = AuthLayer::new(supplier.clone())
        .overriding()
        .layer(upstream(Arc::default()));
    let headers_sent = headers(service, with_header()).await;
    assert_eq!(
        headers_sent
            .get_all(AUTHORIZATION)
            .iter()
            .collect::<Vec<_>>(),
        ["Bearer from-supplier"]
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    let service = AuthLayer::new(supplier)
        .overriding()
        .if_not_present()
        .layer(upstream(Arc::default()));
    assert_eq!(
        headers(service, with_header()).await[AUTHORIZATION],
        "Basic dXNlcg=="
    );
}

#[tokio::test]
async fn a_browsers_copy_relayed_by_the_proxy_is_replaced() {
    let (parts, ()) = Request::get("/api/request")
        .header(AUTHORIZATION, "Bearer from-the-browser")
        .body(())
        .unwrap()
        .into_parts();
    let relayed = |served: ServedRequest| {
        Request::get("/me")
            .header(AUTHORIZATION, "Bearer from-the-browser")
            .extension(served)
            .body(())
            .unwrap()
    };
    let served = ServedRequest::new(parts, None);
    let service = AuthLayer::new(token("t0k")).layer(upstream(Arc::default()));
    let sent = headers(service, relayed(served.clone().relaying([AUTHORIZATION]))).await;
    assert_eq!(
        sent.get_all(AUTHORIZATION).iter().collect::<Vec<_>>(),
        ["Bearer t0k"]
    );
    // Served but not relayed (a handler's own call header): it stays.
    let service = AuthLayer::new(token("t0k")).layer(upstream(Arc::default()));
    let sent = headers(service, relayed(served)).await;
    assert_eq!(sent[AUTHORIZATION], "Bearer from-the-browser");
}

#[tokio::test]
async fn no_token_now_sends_without_one() {
    let supplier = || async { Ok::<Option<String>, Infallible>(None) };
    let calls = Arc::new(AtomicUsize::new(0));
    let service = AuthLayer::new(supplier).layer(upstream(Arc::clone(&calls)));
    assert!(!headers(service, get()).await.contains_key(AUTHORIZATION));
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // And an overriding layer leaves an existing header alone.
    let service = AuthLayer::new(supplier)
        .overriding()
        .layer(upstream(Arc::default()));
    let request = Request::get("/me")
        .header(AUTHORIZATION, "Bearer kept")
        .body(())
        .unwrap();
    assert_eq!(
        headers(service, request).await[AUTHORIZATION],
        "Bearer kept"
    );
}

#[tokio::test]
async fn tokens_of_every_kind() {
    async fn sent<T: IntoToken + Clone>(token: T) -> HeaderValue {
        let supplier = move || std::future::ready(Ok::<_, Infallible>(token.clone()));
        let service = AuthLayer::new(supplier).layer(upstream(Arc::default()));
        headers(service, get()).await[AUTHORIZATION].clone()
    }
    assert_eq!(sent(String::from("a")).await, "Bearer a");
    assert_eq!(sent(Arc::<str>::from("b")).await, "Bearer b");
    assert_eq!(sent(Box::<str>::from("c")).await, "Bearer c");
    assert_eq!(sent(Bytes::from_static(b"d")).await, "Bearer d");
    assert_eq!(sent(HeaderValue::from_static("e")).await, "Bearer e");
    assert_eq!(sent(Some("f")).await, "Bearer f");
}

#[tokio::test]
async fn the_ready_service_is_the_one_called() {
    // A service that must be polled ready before each call, as tower's contract says.
    #[derive(Default)]
    struct Strict {
        ready: bool,
    }
    // A clone is a fresh handle that has not been polled ready, as with tower's `Buffer`.
    impl Clone for Strict {
        fn clone(&self) -> Self {
            Self::default()
        }
    }
    impl Service<Request<()>> for Strict {
        type Response = Response<()>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<()>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            self.ready = true;
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            assert!(self.ready, "called without poll_ready");
            self.ready = false;
            std::future::ready(Ok(Response::new(())))
        }
    }

    let mut service = AuthLayer::new(token("abc")).layer(Strict::default());
    for _ in 0..2 {
        service.ready().await.unwrap().call(get()).await.unwrap();
    }
}

#[tokio::test]
async fn fits_a_courier_stack_as_middleware() {
    use courier_core::{Body, HttpService, Middleware};

    let transport = HttpService::new(service_fn(|request: Request<Body>| async move {
        let value = request.headers()[AUTHORIZATION].as_bytes().to_vec();
        Ok::<_, BoxError>(Response::new(Body::from(value)))
    }));
    let get_token = || async { Ok::<_, BoxError>(String::from("abc")) };
    let middleware = Middleware::new("auth", AuthLayer::new(get_token));
    let request = Request::get("/me").body(Body::empty()).unwrap();
    let response = middleware.apply(transport).oneshot(request).await.unwrap();
    assert_eq!(response.into_body().as_bytes(), Some(&b"Bearer abc"[..]));
}

#[test]
fn debug_shows_the_configuration_not_the_supplier() {
    let layer = AuthLayer::new(token("abc")).scheme("Token");
    let debug = format!("{layer:?}");
    assert!(debug.contains("AuthLayer") && debug.contains("Token"));
    assert!(!debug.contains("abc"));
}
