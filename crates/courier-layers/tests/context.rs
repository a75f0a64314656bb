//! `ContextLayer` on a real axum server, reached by a real hyper-util client over 127.0.0.1.

use axum::routing::get;
use axum::{Extension, Router};
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_layers::context::ContextLayer;
use courier_test_support::serve;
use http::header::SET_COOKIE;
use http::HeaderValue;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::connect::{HttpConnector, HttpInfo};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::{IpAddr, Ipv4Addr};

/// The browser connects from 127.0.0.2, so the peer address the server sees is clearly the
/// socket's, not a default.
const BROWSER_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

fn browser() -> Client<HttpConnector, Empty<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_local_address(Some(BROWSER_IP));
    Client::builder(TokioExecutor::new()).build(connector)
}

async fn text<B>(response: http::Response<B>) -> String
where
    B: http_body::Body,
    B::Error: std::fmt::Debug,
{
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

fn app() -> Router {
    Router::new()
        .route(
            "/whoami",
            get(|| async {
                // Found from the task-local scope, as a client stack's layers find it.
                let served = ServedRequest::current().expect("in scope");
                let peer = served
                    .peer()
                    .map(|peer| peer.to_string())
                    .unwrap_or_default();
                let cookie = served.headers()["cookie"].to_str().unwrap().to_owned();
                format!("{} {} {peer} {cookie}", served.method(), served.uri())
            }),
        )
        .route(
            "/extension",
            get(|Extension(served): Extension<ServedRequest>| async move {
                served.headers()["x-tenant"].to_str().unwrap().to_owned()
            }),
        )
        .route(
            "/login",
            get(|| async {
                let served = ServedRequest::current().expect("in scope");
                served.append_response_header(
                    SET_COOKIE,
                    HeaderValue::from_static("sid=new; HttpOnly"),
                );
                ([(SET_COOKIE, "theme=dark")], "welcome")
            }),
        )
        .route(
            "/spawned",
            get(|| async {
                let context = ServedRequest::current().expect("in scope");
                let task = tokio::spawn(context.scope(async {
                    let served = ServedRequest::current().expect("carried into the task");
                    served.append_response_header(
                        SET_COOKIE,
                        HeaderValue::from_static("from_task=1"),
                    );
                    served.headers()["x-tenant"].to_str().unwrap().to_owned()
                }));
                let tenant = task.await.unwrap();
                let unscoped = tokio::spawn(async { ServedRequest::is_serving() })
                    .await
                    .unwrap();
                format!("{tenant} {unscoped}")
            }),
        )
        .layer(ContextLayer::new())
}

#[tokio::test]
async fn axum_handlers_see_the_served_request_and_the_real_peer() {
    let addr = serve(app()).await;
    let request = http::Request::get(format!("http://{addr}/whoami?x=1"))
        .header("cookie", "sid=abc")
        .body(Empty::new())
        .unwrap();
    let response = browser().request(request).await.unwrap();
    let browser_end = response
        .extensions()
        .get::<HttpInfo>()
        .expect("hyper-util reports the connection")
        .local_addr();
    assert_eq!(browser_end.ip(), BROWSER_IP);
    assert_eq!(
        text(response).await,
        format!("GET /whoami?x=1 {browser_end} sid=abc")
    );
}

#[tokio::test]
async fn handlers_can_take_the_context_as_an_extension() {
    let addr = serve(app()).await;
    let request = http::Request::get(format!("http://{addr}/extension"))
        .header("x-tenant", "acme")
        .body(Empty::new())
        .unwrap();
    let response = browser().request(request).await.unwrap();
    assert_eq!(text(response).await, "acme");
}

#[tokio::test]
async fn headers_added_while_serving_reach_the_browser() {
    let addr = serve(app()).await;
    let request = http::Request::get(format!("http://{addr}/login"))
        .body(Empty::new())
        .unwrap();
    let response = browser().request(request).await.unwrap();
    let cookies: Vec<_> = response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    assert_eq!(cookies, ["theme=dark", "sid=new; HttpOnly"]);
    assert_eq!(text(response).await, "welcome");
}

#[tokio::test]
async fn a_spawned_task_carries_the_context_only_when_given_it() {
    let addr = serve(app()).await;
    let request = http::Request::get(format!("http://{addr}/spawned"))
        .header("x-tenant", "acme")
        .body(Empty::new())
        .unwrap();
    let response = browser().request(request).await.unwrap();
    assert_eq!(response.headers()[SET_COOKIE], "from_task=1");
    assert_eq!(text(response).await, "acme false");
}
