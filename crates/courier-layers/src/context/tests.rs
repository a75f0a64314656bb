use super::*;
use http::header::SET_COOKIE;
use http::request::Parts;
use http::HeaderValue;
use http::{Request, Response};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::task::Poll;
use tower::{service_fn, ServiceBuilder, ServiceExt};
use tower::{Layer, Service};

fn peer() -> SocketAddr {
    ([127, 0, 0, 1], 5000).into()
}

/// A handler that reports what it saw of the context, as response headers.
async fn report(request: Request<()>) -> Result<Response<()>, Infallible> {
    let served = ServedRequest::current();
    let explicit = request.extensions().get::<ServedRequest>().cloned();
    let mut response = Response::new(());
    let headers = response.headers_mut();
    if let Some(served) = served {
        headers.insert("x-in-scope", HeaderValue::from_static("yes"));
        if let Some(peer) = served.peer() {
            headers.insert("x-peer", HeaderValue::from_str(&peer.to_string()).unwrap());
        }
        if let Some(cookie) = served.headers().get("cookie") {
            headers.insert("x-cookie", cookie.clone());
        }
        headers.insert(
            "x-uri",
            HeaderValue::from_str(&served.uri().to_string()).unwrap(),
        );
        if explicit.is_some_and(|explicit| {
            explicit.headers() == served.headers() && explicit.peer() == served.peer()
        }) {
            headers.insert("x-extension", HeaderValue::from_static("same"));
        }
    }
    Ok(response)
}

#[tokio::test]
async fn handler_runs_with_the_served_request_in_scope() {
    let service = ServiceBuilder::new()
        .layer(ContextLayer::new())
        .service_fn(report);
    let request = Request::get("/profile?tab=1")
        .header("cookie", "sid=abc")
        .extension(peer())
        .body(())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    let headers = response.headers();
    assert_eq!(headers["x-in-scope"], "yes");
    assert_eq!(headers["x-cookie"], "sid=abc");
    assert_eq!(headers["x-uri"], "/profile?tab=1");
    assert_eq!(headers["x-peer"], "127.0.0.1:5000");
    assert_eq!(headers["x-extension"], "same");
}

#[tokio::test]
async fn nothing_is_in_scope_outside_the_layer() {
    let response = service_fn(report).oneshot(Request::new(())).await.unwrap();
    assert!(response.headers().get("x-in-scope").is_none());
    assert!(!ServedRequest::is_serving());
}

#[tokio::test]
async fn peer_is_unknown_without_an_address_in_the_extensions() {
    let service = ContextLayer::new().layer(service_fn(report));
    let response = service.oneshot(Request::new(())).await.unwrap();
    assert_eq!(response.headers()["x-in-scope"], "yes");
    assert!(response.headers().get("x-peer").is_none());
}

#[cfg(feature = "axum")]
#[tokio::test]
async fn peer_comes_from_axum_connect_info() {
    let service = ContextLayer::new().layer(service_fn(report));
    let request = Request::get("/")
        .extension(axum::extract::ConnectInfo(peer()))
        .body(())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.headers()["x-peer"], "127.0.0.1:5000");
}

#[tokio::test]
async fn peer_comes_from_a_function_when_given_one() {
    #[derive(Clone)]
    struct Remote(SocketAddr);

    let layer = ContextLayer::new()
        .peer_address(|parts: &Parts| parts.extensions.get::<Remote>().map(|remote| remote.0));
    let service = layer.layer(service_fn(report));
    let request = Request::get("/")
        .extension(Remote(([10, 0, 0, 9], 1234).into()))
        // The function replaces the default lookup entirely.
        .extension(peer())
        .body(())
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.headers()["x-peer"], "10.0.0.9:1234");
}

#[tokio::test]
async fn headers_added_while_serving_are_appended_to_the_response() {
    let service = ContextLayer::new().layer(service_fn(|_: Request<()>| async {
        let served = ServedRequest::current().unwrap();
        served.append_response_header(SET_COOKIE, HeaderValue::from_static("a=1"));
        served.append_response_header(SET_COOKIE, HeaderValue::from_static("b=2"));
        served.append_response_header("x-added".parse().unwrap(), HeaderValue::from_static("yes"));
        let mut response = Response::new(());
        response
            .headers_mut()
            .insert(SET_COOKIE, HeaderValue::from_static("own=0"));
        Ok::<_, Infallible>(response)
    }));
    let response = service.oneshot(Request::new(())).await.unwrap();
    let cookies: Vec<_> = response.headers().get_all(SET_COOKIE).iter().collect();
    assert_eq!(cookies, ["own=0", "a=1", "b=2"]);
    assert_eq!(response.headers()["x-added"], "yes");
}

#[tokio::test]
async fn each_request_gets_its_own_context() {
    let service = ContextLayer::new().layer(service_fn(|request: Request<()>| async move {
        // Interleave the two requests' handlers on one task.
        tokio::task::yield_now().await;
        let served = ServedRequest::current().unwrap();
        served.append_response_header(
            "x-echo".parse().unwrap(),
            served.headers()["cookie"].clone(),
        );
        assert_eq!(request.headers()["cookie"], served.headers()["cookie"]);
        Ok::<_, Infallible>(Response::new(()))
    }));
    let first = service.clone().oneshot(
        Request::get("/")
            .header("cookie", "sid=1")
            .body(())
            .unwrap(),
    );
    let second = service.oneshot(
        Request::get("/")
            .header("cookie", "sid=2")
            .body(())
            .unwrap(),
    );
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap().headers()["x-echo"], "sid=1");
    assert_eq!(second.unwrap().headers()["x-echo"], "sid=2");
}

#[tokio::test]
async fn the_inner_call_itself_runs_in_scope() {
    // A service that decides in `call`, before any future is polled.
    #[derive(Clone)]
    struct Eager;
    impl Service<Request<()>> for Eager {
        type Response = Response<()>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<()>, Infallible>>;
        fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: Request<()>) -> Self::Future {
            let mut response = Response::new(());
            if ServedRequest::is_serving() {
                response
                    .headers_mut()
                    .insert("x-in-scope", HeaderValue::from_static("yes"));
            }
            std::future::ready(Ok(response))
        }
    }
    let response = ContextLayer::new()
        .layer(Eager)
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.headers()["x-in-scope"], "yes");
}

#[tokio::test]
async fn errors_pass_through_and_leave_no_scope_behind() {
    let service = ContextLayer::new().layer(service_fn(|_: Request<()>| async {
        Err::<Response<()>, _>("inner failed")
    }));
    let err = service.oneshot(Request::new(())).await.unwrap_err();
    assert_eq!(err, "inner failed");
    assert!(!ServedRequest::is_serving());
}
