use super::*;
use courier_core::{Body, Kind};
use http::Response;
use std::net::SocketAddr;
use tower::ServiceExt;
use tower_test::mock;

/// Sends `request` through a forward layer with `options`, with `served` in scope, and
/// returns the headers the inner service got.
async fn forwarded(
    options: ForwardOptions,
    served: Option<ServedRequest>,
    request: Request<Body>,
) -> HeaderMap {
    let (inner, mut handle) = mock::pair::<Request<Body>, Response<Body>>();
    let service = ForwardLayer::new(options).layer(inner);
    let call = match served {
        Some(served) => tokio::spawn(served.scope(service.oneshot(request))),
        None => tokio::spawn(service.oneshot(request)),
    };
    let (seen, respond) = handle
        .next_request()
        .await
        .expect("the inner service was called");
    respond.send_response(Response::new(Body::empty()));
    call.await.unwrap().unwrap();
    seen.headers().clone()
}

fn served_with(headers: &[(&str, &str)], peer: Option<SocketAddr>) -> ServedRequest {
    let mut builder = Request::get("/page").header("host", "app.example.com");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let (parts, ()) = builder.body(()).unwrap().into_parts();
    ServedRequest::new(parts, peer)
}

fn served(headers: &[(&str, &str)]) -> ServedRequest {
    served_with(headers, Some(peer()))
}

fn peer() -> SocketAddr {
    ([192, 0, 2, 10], 51000).into()
}

fn call() -> Request<Body> {
    Request::get("http://127.0.0.1:9000/x")
        .body(Body::empty())
        .unwrap()
}

fn all() -> ForwardOptions {
    ForwardOptions::new()
        .request_id(true)
        .trace(true)
        .client_address(true)
        .user_agent(true)
        .locale(true)
        .headers(["x-tenant"])
}

/// A served request carrying every forwardable header.
fn busy() -> ServedRequest {
    served(&[
        ("x-request-id", "req-1"),
        (
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ),
        ("tracestate", "vendor=a"),
        ("tracestate", "other=b"),
        ("x-forwarded-for", "203.0.113.7"),
        ("user-agent", "Browser/1.0"),
        ("accept-language", "fr-CH, fr;q=0.9"),
        ("x-tenant", "acme"),
        ("x-other", "not named"),
        ("cookie", "sid=secret"),
    ])
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .map(|value| value.to_str().unwrap())
        .collect()
}

#[tokio::test]
async fn every_item_is_forwarded_when_asked_for() {
    let headers = forwarded(all(), Some(busy()), call()).await;
    assert_eq!(values(&headers, "x-request-id"), ["req-1"]);
    assert_eq!(
        values(&headers, "traceparent"),
        ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"]
    );
    assert_eq!(values(&headers, "tracestate"), ["vendor=a", "other=b"]);
    assert_eq!(
        values(&headers, "x-forwarded-for"),
        ["203.0.113.7, 192.0.2.10"]
    );
    assert_eq!(values(&headers, "user-agent"), ["Browser/1.0"]);
    assert_eq!(values(&headers, "accept-language"), ["fr-CH, fr;q=0.9"]);
    assert_eq!(values(&headers, "x-tenant"), ["acme"]);
    assert!(headers.get("x-other").is_none(), "only named headers");
    assert!(headers.get("cookie").is_none(), "cookies only where named");
    assert_eq!(headers.len(), 8);
}

#[tokio::test]
async fn nothing_is_forwarded_unless_asked_for() {
    let headers = forwarded(ForwardOptions::new(), Some(busy()), call()).await;
    assert!(headers.is_empty());
}

#[tokio::test]
async fn nothing_is_forwarded_without_a_served_request() {
    let headers = forwarded(all(), None, call()).await;
    assert!(headers.is_empty());
}

#[tokio::test]
async fn an_endpoint_with_forward_off_gets_nothing() {
    let mut request = call();
    request
        .extensions_mut()
        .insert(EndpointMeta::new("users.get", Kind::Query).forward(false));
    let headers = forwarded(all().headers(["cookie"]), Some(busy()), request).await;
    assert!(headers.is_empty());

    let mut request = call();
    request
        .extensions_mut()
        .insert(EndpointMeta::new("users.get", Kind::Query));
    let headers = forwarded(all(), Some(busy()), request).await;
    assert_eq!(headers["x-request-id"], "req-1");
}

#[tokio::test]
async fn the_request_id_extension_wins_over_the_header() {
    let (mut parts, ()) = Request::get("/")
        .header("x-request-id", "from-header")
        .body(())
        .unwrap()
        .into_parts();
    parts
        .extensions
        .insert(RequestId::new(HeaderValue::from_static("from-extension")));
    let served = ServedRequest::new(parts, None);
    let headers = forwarded(ForwardOptions::new().request_id(true), Some(served), call()).await;
    assert_eq!(values(&headers, "x-request-id"), ["from-extension"]);
}

#[tokio::test]
async fn the_request_id_goes_under_the_toggles_own_name() {
    let served = served(&[("x-correlation-id", "c-9"), ("x-request-id", "req-1")]);
    let options = ForwardOptions::new().request_id("x-correlation-id");
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(values(&headers, "x-correlation-id"), ["c-9"]);
    assert!(headers.get("x-request-id").is_none());

    // The extension's id goes under that name too.
    let (mut parts, ()) = Request::get("/").body(()).unwrap().into_parts();
    parts
        .extensions
        .insert(RequestId::new(HeaderValue::from_static("ext-1")));
    let served = ServedRequest::new(parts, None);
    let options = ForwardOptions::new().request_id("x-correlation-id");
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(values(&headers, "x-correlation-id"), ["ext-1"]);
}

#[tokio::test]
async fn the_peer_starts_a_chain_when_there_is_none() {
    let served = served(&[]);
    let headers = forwarded(
        ForwardOptions::new().client_address(true),
        Some(served),
        call(),
    )
    .await;
    assert_eq!(values(&headers, "x-forwarded-for"), ["192.0.2.10"]);
}

#[tokio::test]
async fn the_peer_is_appended_to_every_hop_of_the_chain() {
    let served = served(&[
        ("x-forwarded-for", "203.0.113.7, 198.51.100.2"),
        ("x-forwarded-for", "198.51.100.3"),
    ]);
    let headers = forwarded(
        ForwardOptions::new().client_address(true),
        Some(served),
        call(),
    )
    .await;
    assert_eq!(
        values(&headers, "x-forwarded-for"),
        ["203.0.113.7, 198.51.100.2, 198.51.100.3, 192.0.2.10"]
    );
}

#[tokio::test]
async fn no_client_address_without_the_peer() {
    let served = served_with(&[("x-forwarded-for", "203.0.113.7")], None);
    let options = ForwardOptions::new().client_address(true);
    let headers = forwarded(options, Some(served), call()).await;
    assert!(headers.get("x-forwarded-for").is_none());

    let served = served_with(&[], None);
    let options = ForwardOptions::new().client_address("x-real-ip");
    let headers = forwarded(options, Some(served), call()).await;
    assert!(headers.get("x-real-ip").is_none());
}

#[tokio::test]
async fn a_named_client_address_header_gets_the_peer_ip_alone() {
    let served = served(&[("x-forwarded-for", "203.0.113.7"), ("x-real-ip", "6.6.6.6")]);
    let options = ForwardOptions::new().client_address("x-real-ip");
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(values(&headers, "x-real-ip"), ["192.0.2.10"]);
    assert!(headers.get("x-forwarded-for").is_none());
}

#[tokio::test]
async fn naming_x_forwarded_for_means_the_chain() {
    let served = served(&[("x-forwarded-for", "203.0.113.7")]);
    let options = ForwardOptions::new().client_address("X-Forwarded-For");
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(
        values(&headers, "x-forwarded-for"),
        ["203.0.113.7, 192.0.2.10"]
    );
}

#[tokio::test]
async fn ipv6_peers_are_written_plainly_and_mapped_ipv4_as_ipv4() {
    let v6: SocketAddr = "[2001:db8::1]:443".parse().unwrap();
    let served = served_with(&[], Some(v6));
    let headers = forwarded(
        ForwardOptions::new().client_address(true),
        Some(served),
        call(),
    )
    .await;
    assert_eq!(values(&headers, "x-forwarded-for"), ["2001:db8::1"]);

    let mapped: SocketAddr = "[::ffff:192.0.2.10]:443".parse().unwrap();
    let served = served_with(&[], Some(mapped));
    let headers = forwarded(
        ForwardOptions::new().client_address(true),
        Some(served),
        call(),
    )
    .await;
    assert_eq!(values(&headers, "x-forwarded-for"), ["192.0.2.10"]);
}

#[tokio::test]
async fn headers_already_on_the_request_win() {
    let request = Request::get("http://127.0.0.1:9000/x")
        .header("x-request-id", "own-id")
        .header("traceparent", "00-own")
        .header("x-forwarded-for", "10.0.0.1")
        .header("user-agent", "courier")
        .header("accept-language", "en")
        .header("x-tenant", "own-tenant")
        .header("cookie", "own=1")
        .body(Body::empty())
        .unwrap();
    let headers = forwarded(all().headers(["cookie"]), Some(busy()), request).await;
    assert_eq!(values(&headers, "x-request-id"), ["own-id"]);
    assert_eq!(values(&headers, "traceparent"), ["00-own"]);
    assert_eq!(values(&headers, "x-forwarded-for"), ["10.0.0.1"]);
    assert_eq!(values(&headers, "user-agent"), ["courier"]);
    assert_eq!(values(&headers, "accept-language"), ["en"]);
    assert_eq!(values(&headers, "x-tenant"), ["own-tenant"]);
    assert_eq!(values(&headers, "cookie"), ["own=1"]);
    // `tracestate` was not on the request: it is still forwarded.
    assert_eq!(values(&headers, "tracestate"), ["vendor=a", "other=b"]);
}

#[tokio::test]
async fn cookies_cross_when_the_forward_options_name_them() {
    let served = served(&[("cookie", "sid=1; theme=dark"), ("cookie", "b=2")]);
    let options = ForwardOptions::new().headers(["Cookie"]);
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(values(&headers, "cookie"), ["sid=1; theme=dark; b=2"]);
    assert!(headers["cookie"].is_sensitive());
}

#[tokio::test]
async fn cookies_cross_when_the_endpoint_allows_them() {
    let served = served(&[("cookie", "sid=1")]);
    let mut request = call();
    request
        .extensions_mut()
        .insert(EndpointMeta::new("users.get", Kind::Query).allowed_headers([COOKIE]));
    let headers = forwarded(ForwardOptions::new(), Some(served.clone()), request).await;
    assert_eq!(values(&headers, "cookie"), ["sid=1"]);

    // Other allowed headers are the proxy's business, not forwarded here.
    let mut request = call();
    request.extensions_mut().insert(
        EndpointMeta::new("users.get", Kind::Query)
            .allowed_headers([HeaderName::from_static("x-tenant")]),
    );
    let headers = forwarded(ForwardOptions::new(), Some(served), request).await;
    assert!(headers.is_empty());
}

#[tokio::test]
async fn message_and_connection_headers_are_never_forwarded() {
    let served = served(&[
        ("content-type", "text/plain"),
        ("content-length", "5"),
        ("content-encoding", "gzip"),
        ("connection", "close"),
        ("keep-alive", "timeout=5"),
        ("transfer-encoding", "chunked"),
        ("upgrade", "websocket"),
        ("te", "trailers"),
        ("x-tenant", "acme"),
    ]);
    let options = ForwardOptions::new()
        .headers([
            "host",
            "content-type",
            "content-length",
            "content-encoding",
            "connection",
            "keep-alive",
            "transfer-encoding",
            "upgrade",
            "te",
            "x-tenant",
            "not a header",
        ])
        .request_id("content-type")
        .client_address("host");
    let headers = forwarded(options, Some(served), call()).await;
    assert_eq!(headers.len(), 1, "{headers:?}");
    assert_eq!(headers["x-tenant"], "acme");
}

#[tokio::test]
async fn an_explicit_context_wins_over_the_one_in_scope() {
    let in_scope = served(&[("x-request-id", "scoped")]);
    let mut request = call();
    request
        .extensions_mut()
        .insert(served(&[("x-request-id", "explicit")]));
    let options = ForwardOptions::new().request_id(true);
    let headers = forwarded(options.clone(), Some(in_scope), request).await;
    assert_eq!(values(&headers, "x-request-id"), ["explicit"]);

    let mut request = call();
    request
        .extensions_mut()
        .insert(served(&[("x-request-id", "alone")]));
    let headers = forwarded(options, None, request).await;
    assert_eq!(values(&headers, "x-request-id"), ["alone"]);
}

#[tokio::test]
async fn missing_served_headers_are_simply_not_sent() {
    let headers = forwarded(all(), Some(served(&[])), call()).await;
    assert_eq!(values(&headers, "x-forwarded-for"), ["192.0.2.10"]);
    assert_eq!(headers.len(), 1);
}
