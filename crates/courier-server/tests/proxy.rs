//! The proxy's HTTP route over real sockets: a browser's request (raw HTTP/1.1 on 127.0.0.1) →
//! `Proxy` → the source's client and layers → a recording axum backend, and back.

use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::http::{HeaderName, HeaderValue};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use courier_core::{
    ApiDef, CacheOptions, ForwardOptions, GroupDef, HttpEndpoint, Middleware, SessionOptions,
    WireCall,
};
use courier_layers::auth::AuthLayer;
use courier_server::Proxy;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod support;
use support::listen;

fn pick(headers: &HeaderMap, name: &str) -> Value {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    match values.as_slice() {
        [] => Value::Null,
        [one] => json!(one),
        many => json!(many),
    }
}

/// What the backend saw, echoed as JSON, with headers the proxy must filter on the way back.
fn seen(
    method: &str,
    path: String,
    query: Option<String>,
    headers: &HeaderMap,
    body: Value,
) -> impl IntoResponse {
    let echo = json!({
        "method": method,
        "path": path,
        "query": query,
        "x-api-key": pick(headers, "x-api-key"),
        "x-tenant": pick(headers, "x-tenant"),
        "x-secret": pick(headers, "x-secret"),
        "cookie": pick(headers, "cookie"),
        "x-forwarded-for": pick(headers, "x-forwarded-for"),
        "x-signature": pick(headers, "x-signature"),
        "authorization": pick(headers, "authorization"),
        "content-type": pick(headers, "content-type"),
        "content-encoding": pick(headers, "content-encoding"),
        "body": body,
    });
    (
        [
            ("x-tenant", "acme"),
            ("x-internal", "do-not-leak"),
            ("set-cookie", "upstream=1; Path=/"),
        ],
        Json(echo),
    )
}

async fn backend() -> SocketAddr {
    // Each answer of `/rates` (a cached read) says which call it was.
    let rates = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route(
            "/users/{id}",
            get(
                |Path(id): Path<String>, RawQuery(q): RawQuery, h: HeaderMap| async move {
                    if id == "404" {
                        return (
                            StatusCode::NOT_FOUND,
                            Json(json!({ "error": "no such user" })),
                        )
                            .into_response();
                    }
                    if id == "slow" {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                    }
                    seen("GET", format!("/users/{id}"), q, &h, Value::Null).into_response()
                },
            ),
        )
        .route(
            "/events",
            get(|h: HeaderMap| async move {
                let from = h
                    .get("last-event-id")
                    .map_or(1, |v| v.to_str().unwrap().parse::<u64>().unwrap() + 1);
                let tenant = pick(&h, "x-tenant");
                let body: String = (from..=3)
                    .map(|n| format!("id: {n}\ndata: {{\"n\":{n},\"tenant\":{tenant}}}\n\n"))
                    .collect();
                ([("content-type", "text/event-stream")], body)
            }),
        )
        .route(
            "/users",
            post(|h: HeaderMap, Json(body): Json<Value>| async move {
                seen("POST", "/users".into(), None, &h, body)
            }),
        )
        .route(
            "/rates",
            get(move || {
                let rates = Arc::clone(&rates);
                async move {
                    let call = rates.fetch_add(1, Ordering::SeqCst) + 1;
                    // `Json` answers with a `content-length`.
                    Json(json!({ "eur": 1.08, "call": call }))
                }
            }),
        );
    listen(app).await
}

fn api(upstream: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .header("x-api-key", "secret")
        .allowed_headers(["x-tenant", "x-api-key"])
        .forward(ForwardOptions::new().client_address(true))
        // A middleware's header (the token it sets) wins over the browser's copy.
        .middleware(Middleware::new(
            "auth",
            AuthLayer::new(|| async { Ok::<_, std::convert::Infallible>("from-the-middleware") }),
        ))
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/:id").cache(CacheOptions::new()))
                .endpoint(
                    "cached",
                    HttpEndpoint::get("/:id").cache(CacheOptions::new().revalidate(30)),
                )
                .endpoint(
                    "create",
                    // Listing the message headers changes nothing: the proxy sends its own body.
                    HttpEndpoint::post("").headers([
                        "content-type",
                        "content-length",
                        "content-encoding",
                    ]),
                )
                .endpoint(
                    "signed",
                    // The closure sets `x-signature`; the browser's copy must not replace it.
                    HttpEndpoint::via(|vars| {
                        Ok(WireCall::get("/:id").variables(vars).header(
                            HeaderName::from_static("x-signature"),
                            HeaderValue::from_static("from-the-closure"),
                        ))
                    })
                    .reads()
                    .headers(["x-signature", "authorization"]),
                )
                .endpoint("secret", HttpEndpoint::get("/:id").sensitive_variables())
                .endpoint(
                    "cookies",
                    HttpEndpoint::get("/:id").headers(["cookie", "set-cookie"]),
                )
                .endpoint(
                    "slow",
                    HttpEndpoint::get("/slow").timeout(Duration::from_millis(200)),
                ),
        )
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint("feed", courier_core::StreamEndpoint::get("/events"))
                .endpoint("room", courier_core::ChannelEndpoint::connect("/rooms/:id")),
        )
        .group(
            "market",
            GroupDef::new().expose(true).endpoint(
                "rates",
                HttpEndpoint::get("/rates").cache(CacheOptions::new().revalidate(30)),
            ),
        )
        .group(
            "admin",
            GroupDef::new().endpoint("get", HttpEndpoint::get("/users/:id")),
        )
        .build()
        .unwrap()
}

/// A source with a session: writes are checked (CSRF double submit, origin).
fn secure(upstream: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .session(
            SessionOptions::new()
                .cookies(["sid", "csrf_token"])
                .csrf("csrf_token", "x-csrf-token")
                .trusted_origins(["https://admin.example.com"]),
        )
        .group(
            "account",
            GroupDef::new()
                .expose(true)
                .endpoint("rename", HttpEndpoint::post("/users")),
        )
        .build()
        .unwrap()
}

async fn proxy(upstream: SocketAddr) -> SocketAddr {
    let app = Proxy::new()
        .source("demo", api(upstream))
        .source("secure", secure(upstream))
        .source("down", {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            ApiDef::builder()
                .base_url(format!("http://127.0.0.1:{port}"))
                .group(
                    "g",
                    GroupDef::new()
                        .expose(true)
                        .endpoint("ping", HttpEndpoint::get("/ping")),
                )
                .build()
                .unwrap()
        })
        .body_limit(256)
        .multipart_limit(2048)
        .ws_path("/api/ws")
        .into_router()
        .unwrap();
    listen(app).await
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// One raw HTTP/1.1 request, read to the end.
async fn send(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!("{method} {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut raw))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(": ").unwrap();
            (n.to_ascii_lowercase(), v.to_owned())
        })
        .collect();
    // Chunked bodies: take the JSON between the chunk sizes.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body.split("\r\n")
            .filter(|l| l.starts_with('{') || l.starts_with('['))
            .collect::<String>()
    } else {
        body.to_owned()
    };
    let body = serde_json::from_str(&body).unwrap_or(Value::String(body));
    Reply {
        status,
        headers,
        body,
    }
}

fn q(group: &str, name: &str, variables: Option<Value>) -> String {
    let mut target = format!("/api/request?_s=demo&_g={group}&_m={name}");
    if let Some(v) = variables {
        let encoded: String = v
            .to_string()
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        target.push_str(&format!("&_v={encoded}"));
    }
    target
}

#[tokio::test]
async fn a_read_over_get_with_headers_filtered_both_ways() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "GET",
        &q("users", "get", Some(json!({ "id": 7, "fields": "name" }))),
        &[
            ("x-tenant", "acme"),
            ("x-secret", "nope"),
            ("x-api-key", "evil"),
            ("cookie", "sid=abc"),
        ],
        "",
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let b = &reply.body;
    assert_eq!(
        (b["method"].as_str(), b["path"].as_str()),
        (Some("GET"), Some("/users/7"))
    );
    assert_eq!(b["query"], "fields=name");
    assert_eq!(b["x-tenant"], "acme", "an allowed header crosses");
    assert_eq!(b["x-secret"], Value::Null, "one not allowed does not");
    assert_eq!(
        b["x-api-key"], "secret",
        "the source's header wins over the browser's"
    );
    assert_eq!(b["cookie"], Value::Null, "cookies only where named");
    assert!(
        b["x-forwarded-for"].as_str().unwrap().contains("127.0.0.1"),
        "{b}"
    );
    assert_eq!(reply.header("content-type"), ["application/json"]);
    assert_eq!(
        reply.header("x-tenant"),
        ["acme"],
        "allowed on the way back too"
    );
    assert!(reply.header("x-internal").is_empty());
    assert!(reply.header("set-cookie").is_empty());
}

#[tokio::test]
async fn a_cached_reads_get_answer_may_be_kept_by_the_browser() {
    let proxy = proxy(backend().await).await;

    let reply = send(proxy, "GET", &q("market", "rates", None), &[], "").await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.header("cache-control"), ["private, max-age=30"]);
    // The proxy keeps it too: the next reads are answered without a call upstream.
    for _ in 0..2 {
        let again = send(proxy, "GET", &q("market", "rates", None), &[], "").await;
        assert_eq!(again.body, json!({ "eur": 1.08, "call": 1 }));
        assert_eq!(again.header("age").len(), 1, "{:?}", again.headers);
    }

    // Not for a POST, nor a read with no `revalidate`, nor an answer that sets a cookie or is
    // not a 200.
    let post = send(
        proxy,
        "POST",
        &q("market", "rates", None),
        &[("content-type", "application/json")],
        r#"{"variables":null}"#,
    )
    .await;
    assert_eq!(post.status, 200, "{:?}", post.body);
    assert!(post.header("cache-control").is_empty());
    let get = |name: &str, id: &str| q("users", name, Some(json!({ "id": id })));
    let plain = send(proxy, "GET", &get("get", "7"), &[], "").await;
    assert!(plain.header("cache-control").is_empty());
    let with_cookie = send(proxy, "GET", &get("cached", "7"), &[], "").await;
    assert_eq!(with_cookie.status, 200);
    assert!(with_cookie.header("cache-control").is_empty());
    let missing = send(proxy, "GET", &get("cached", "404"), &[], "").await;
    assert_eq!(missing.status, 404);
    assert!(missing.header("cache-control").is_empty());
}

#[tokio::test]
async fn an_upload_has_a_body_limit_of_its_own() {
    let proxy = proxy(backend().await).await;
    let form = |bytes: usize| {
        format!(
            "--b\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\
             content-type: application/octet-stream\r\n\r\n{}\r\n--b--\r\n",
            "x".repeat(bytes)
        )
    };
    let upload = |bytes: usize| {
        let body = form(bytes);
        async move {
            send(
                proxy,
                "POST",
                &q("users", "create", None),
                &[("content-type", "multipart/form-data; boundary=b")],
                &body,
            )
            .await
        }
    };
    // Over the JSON limit (256 bytes), under the upload limit (2 KiB): not refused by the proxy.
    let small = upload(1024).await;
    assert_ne!(small.status, 413, "{:?}", small.body);
    // Over the upload limit: refused, from its `content-length` alone.
    let large = upload(4096).await;
    assert_eq!(large.status, 413);
    assert_eq!(large.body["error"]["code"], "PAYLOAD_TOO_LARGE");
    // A JSON body over its own limit is refused as before.
    let json = format!(r#"{{"variables":{{"name":"{}"}}}}"#, "x".repeat(512));
    let refused = send(
        proxy,
        "POST",
        &q("users", "create", None),
        &[("content-type", "application/json")],
        &json,
    )
    .await;
    assert_eq!(refused.status, 413);
}

#[tokio::test]
async fn headers_the_closure_or_a_middleware_set_win_over_the_browsers() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "GET",
        &q("users", "signed", Some(json!({ "id": 5 }))),
        &[
            ("x-signature", "forged"),
            ("authorization", "Bearer from-the-browser"),
        ],
        "",
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["path"], "/users/5");
    assert_eq!(reply.body["x-signature"], "from-the-closure");
    assert_eq!(reply.body["authorization"], "Bearer from-the-middleware");
}

#[tokio::test]
async fn message_headers_are_the_proxys_own_even_when_listed() {
    let proxy = proxy(backend().await).await;
    let body = r#"{"variables":{"name":"Ada"}}"#;
    let reply = send(
        proxy,
        "POST",
        &q("users", "create", None),
        &[
            ("content-type", "application/json; charset=utf-8"),
            ("content-encoding", "identity"),
        ],
        body,
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["body"], json!({ "name": "Ada" }));
    assert_eq!(
        reply.body["content-type"], "application/json",
        "the proxy's own body, the proxy's own type"
    );
    assert_eq!(reply.body["content-encoding"], Value::Null);
}

#[tokio::test]
async fn cookies_cross_only_where_the_endpoint_names_them() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "GET",
        &q("users", "cookies", Some(json!({ "id": 1 }))),
        &[("cookie", "sid=abc")],
        "",
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["cookie"], "sid=abc");
    assert_eq!(reply.header("set-cookie"), ["upstream=1; Path=/"]);
}

#[tokio::test]
async fn writes_go_as_post_with_their_variables() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "POST",
        &q("users", "create", None),
        &[("content-type", "application/json")],
        r#"{"variables":{"name":"Ada"}}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["body"], json!({ "name": "Ada" }));
    // A sensitive read goes as POST too.
    let reply = send(
        proxy,
        "POST",
        &q("users", "secret", None),
        &[("content-type", "application/json")],
        r#"{"variables":{"id":3}}"#,
    )
    .await;
    assert_eq!(
        (reply.status, reply.body["path"].as_str()),
        (200, Some("/users/3"))
    );
}

#[tokio::test]
async fn refusals_are_json_with_a_status_and_a_code() {
    let proxy = proxy(backend().await).await;
    let long = format!(r#"{{"variables":{{"name":"{}"}}}}"#, "x".repeat(300));
    let json_type = [("content-type", "application/json")];
    // method, target, headers, body, status, code
    type Case<'a> = (
        &'a str,
        String,
        &'a [(&'a str, &'a str)],
        &'a str,
        u16,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "GET",
            q("users", "create", None),
            &[],
            "",
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            "GET",
            q("users", "secret", Some(json!({ "id": 1 }))),
            &[],
            "",
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            "PUT",
            q("users", "get", None),
            &[],
            "",
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            "GET",
            q("admin", "get", Some(json!({ "id": 1 }))),
            &[],
            "",
            404,
            "ENDPOINT_NOT_IN_ROUTES",
        ),
        (
            "GET",
            q("users", "nope", None),
            &[],
            "",
            404,
            "ENDPOINT_NOT_IN_ROUTES",
        ),
        (
            "GET",
            "/api/request?_s=demo&_g=users&_m=get&_v=%7Bx".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            "/api/request?_g=users&_m=get".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        // A malformed `_g` or `_m` is the caller's mistake, not a route: 400.
        (
            "GET",
            "/api/request?_s=demo&_m=get".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            "/api/request?_s=demo&_g=users..x&_m=get".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            "/api/request?_s=demo&_g=users&_m=get.x".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            "/api/request?_s=&_g=users&_m=get".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        // Streams and channels open with GET; another verb is refused in JSON too.
        (
            "POST",
            "/api/sse?_s=demo&_g=live&_m=feed".into(),
            &json_type,
            "{}",
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            "POST",
            "/api/ws?_s=demo&_g=live&_m=feed".into(),
            &[],
            "",
            405,
            "METHOD_NOT_ALLOWED",
        ),
        // A plain GET at the `ws` path is not a handshake.
        (
            "GET",
            "/api/ws?_s=demo&_g=live&_m=room&_v=%7B%22id%22%3A%22r%22%7D".into(),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        // A stream at the `ws` path is not a channel.
        (
            "GET",
            "/api/ws?_s=demo&_g=live&_m=feed".into(),
            &[],
            "",
            404,
            "ENDPOINT_NOT_IN_ROUTES",
        ),
        (
            "POST",
            q("users", "create", None),
            &json_type,
            &long,
            413,
            "PAYLOAD_TOO_LARGE",
        ),
        (
            "POST",
            q("users", "create", None),
            &[("content-type", "text/plain")],
            "hi",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "POST",
            q("users", "create", None),
            &json_type,
            "[1]",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            q("users", "get", Some(json!({}))),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "GET",
            format!("{}&_t=soon", q("users", "get", Some(json!({ "id": 1 })))),
            &[],
            "",
            400,
            "BAD_REQUEST",
        ),
        (
            "POST",
            q("users", "create", None),
            &[("content-type", "multipart/form-data; boundary=b")],
            "--b\r\ncontent-disposition: form-data; name=\"x\"\r\n\r\nno closing delimiter",
            400,
            "BAD_REQUEST",
        ),
    ];
    for (method, target, headers, body, status, code) in cases {
        let reply = send(proxy, method, &target, headers, body).await;
        assert_eq!(reply.status, status, "{method} {target}: {:?}", reply.body);
        assert_eq!(
            reply.body["error"]["code"], code,
            "{method} {target}: {:?}",
            reply.body
        );
        assert!(reply.body["error"]["message"].is_string());
    }
}

#[tokio::test]
async fn upstream_errors_pass_through_and_failures_are_502_or_504() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "GET",
        &q("users", "get", Some(json!({ "id": "404" }))),
        &[],
        "",
    )
    .await;
    assert_eq!(
        (reply.status, &reply.body),
        (404, &json!({ "error": "no such user" }))
    );
    let reply = send(proxy, "GET", &q("users", "slow", None), &[], "").await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (504, Some("UPSTREAM_TIMEOUT"))
    );
    let reply = send(proxy, "GET", "/api/request?_s=down&_g=g&_m=ping", &[], "").await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (502, Some("UPSTREAM_UNREACHABLE"))
    );
}

#[tokio::test]
async fn a_remote_stream_is_passed_through_with_the_last_event_id() {
    let proxy = proxy(backend().await).await;
    let reply = send(
        proxy,
        "GET",
        "/api/sse?_s=demo&_g=live&_m=feed",
        &[("last-event-id", "1"), ("x-tenant", "acme")],
        "",
    )
    .await;
    assert_eq!(reply.status, 200);
    assert!(reply.header("content-type")[0].starts_with("text/event-stream"));
    let text = reply.body.as_str().unwrap().to_owned();
    assert!(!text.contains("\"n\":1"), "{text}");
    assert!(
        text.contains("id: 2\ndata: {\"n\":2,\"tenant\":\"acme\"}"),
        "{text}"
    );
    assert!(text.contains("id: 3\n"), "{text}");
}

#[tokio::test]
async fn a_remote_channel_is_proxied_with_the_hellos_headers() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    // The upstream: an echo server recording the handshake's x-tenant.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = listener.local_addr().unwrap();
    let (tenants, mut tenant) = tokio::sync::mpsc::unbounded_channel::<Option<String>>();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        #[allow(clippy::result_large_err)]
        let record = |request: &tokio_tungstenite::tungstenite::handshake::server::Request,
                      response| {
            let value = request.headers().get("x-tenant");
            tenants
                .send(value.map(|v| v.to_str().unwrap().to_owned()))
                .unwrap();
            Ok(response)
        };
        let mut ws = tokio_tungstenite::accept_hdr_async(tcp, record)
            .await
            .unwrap();
        while let Some(Ok(message)) = ws.next().await {
            if message.is_text() {
                ws.send(message).await.unwrap();
            }
        }
    });
    let proxy = listen(chat_proxy(upstream, ["x-tenant"]).into_router().unwrap()).await;

    let tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    // `_h=1`: a hello frame follows.
    let url =
        format!("ws://{proxy}/api/ws?_s=demo&_g=chat&_m=room&_v=%7B%22id%22%3A%22r1%22%7D&_h=1");
    let (mut browser, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    browser
        .send(Message::text(
            r#"{"type":"courier.hello","auth":{"token":"t1"},"headers":{"x-tenant":"acme","x-secret":"no"}}"#,
        ))
        .await
        .unwrap();
    browser
        .send(Message::text(r#"{"type":"courier.ping"}"#))
        .await
        .unwrap();
    browser
        .send(Message::text(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    // Three frames come back: the proxy's own answer to the heartbeat, and what the echo
    // server hands back — first the proxy's own hello, carrying the browser's `auth` (not its
    // headers, which went in the handshake), then the message. The heartbeat never reached
    // the upstream, which would have echoed it.
    let mut frames = Vec::new();
    for _ in 0..3 {
        frames.push(next_text(&mut browser).await);
    }
    let pong = r#"{"type":"courier.pong"}"#;
    assert_eq!(
        frames.iter().filter(|f| *f == pong).count(),
        1,
        "{frames:?}"
    );
    frames.retain(|f| f != pong);
    let hello: serde_json::Value = serde_json::from_str(&frames[0]).unwrap();
    assert_eq!(
        hello,
        serde_json::json!({ "type": "courier.hello", "auth": { "token": "t1" } })
    );
    assert_eq!(frames[1], r#"{"text":"hi"}"#);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), next_text(&mut browser))
            .await
            .is_err(),
        "no echo of the heartbeat"
    );
    assert_eq!(tenant.recv().await.unwrap().as_deref(), Some("acme"));
}

/// A proxy (its WebSocket path `/api/ws`) for one source, `demo`: an exposed remote channel
/// `chat.room` at `upstream`'s `/rooms/:id` that takes messages, `allowed` crossing from the
/// browser.
fn chat_proxy<const N: usize>(upstream: SocketAddr, allowed: [&str; N]) -> Proxy {
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .allowed_headers(allowed)
        .group(
            "chat",
            GroupDef::new().expose(true).endpoint(
                "room",
                courier_core::ChannelEndpoint::connect("/rooms/:id").send(),
            ),
        )
        .build()
        .unwrap();
    Proxy::new().source("demo", api).ws_path("/api/ws")
}

/// The next text frame a test's socket receives, within 10 s.
async fn next_text<S>(socket: &mut S) -> String
where
    S: futures_util::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    use futures_util::StreamExt;
    tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("a frame within 10 s")
        .unwrap()
        .unwrap()
        .into_text()
        .unwrap()
        .as_str()
        .to_owned()
}

#[tokio::test]
async fn the_sessions_write_checks_refuse_with_403() {
    let proxy = proxy(backend().await).await;
    let target = "/api/request?_s=secure&_g=account&_m=rename";
    let body = r#"{"variables":{"name":"Ada"}}"#;
    let cookie = ("cookie", "sid=s1; csrf_token=tok");
    let json_type = ("content-type", "application/json");
    let cases: [(&[(&str, &str)], &str); 2] = [
        // No CSRF header to match the cookie.
        (&[json_type, cookie], "CSRF_CHECK_FAILED"),
        // The token matches, but the page is another site's.
        (
            &[
                json_type,
                cookie,
                ("x-csrf-token", "tok"),
                ("origin", "https://evil.example"),
            ],
            "ORIGIN_NOT_TRUSTED",
        ),
    ];
    for (headers, code) in cases {
        let reply = send(proxy, "POST", target, headers, body).await;
        assert_eq!(reply.status, 403, "{code}: {:?}", reply.body);
        assert_eq!(reply.body["error"]["code"], code);
        assert!(reply.body["error"]["message"].is_string());
    }
    // A trusted page with the token: the write goes through, with the session cookies.
    let reply = send(
        proxy,
        "POST",
        target,
        &[
            json_type,
            cookie,
            ("x-csrf-token", "tok"),
            ("origin", "https://admin.example.com"),
        ],
        body,
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["cookie"], "sid=s1; csrf_token=tok");
    assert_eq!(reply.body["body"], json!({ "name": "Ada" }));
}

#[tokio::test]
async fn the_upstream_body_is_streamed_back_not_buffered() {
    use futures_util::StreamExt;
    // The upstream sends its first chunk, then holds the rest until the test lets it go.
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = std::sync::Mutex::new(Some(released));
    let released = std::sync::Arc::new(released);
    let app = Router::new().route(
        "/download",
        get(move || {
            let held = released.lock().unwrap().take();
            async move {
                let first = futures_util::stream::once(async {
                    Ok::<_, std::convert::Infallible>(bytes::Bytes::from_static(b"first-chunk;"))
                });
                let rest = futures_util::stream::once(async move {
                    if let Some(held) = held {
                        let _ = held.await;
                    }
                    Ok(bytes::Bytes::from_static(b"last-chunk"))
                });
                axum::body::Body::from_stream(first.chain(rest))
            }
        }),
    );
    let upstream = listen(app).await;
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .group(
            "files",
            GroupDef::new()
                .expose(true)
                .endpoint("download", HttpEndpoint::get("/download")),
        )
        .build()
        .unwrap();
    let app = Proxy::new().source("demo", api).into_router().unwrap();
    let proxy = listen(app).await;

    let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    tcp.write_all(
        b"GET /api/request?_s=demo&_g=files&_m=download HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    // The first chunk arrives while the upstream still holds the last one.
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(Duration::from_secs(10), async {
        while !String::from_utf8_lossy(&seen).contains("first-chunk;") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("the first chunk before the upstream has finished");
    assert!(!String::from_utf8_lossy(&seen).contains("last-chunk"));
    release.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut seen))
        .await
        .expect("the rest within 10 s")
        .unwrap();
    let whole = String::from_utf8_lossy(&seen);
    assert!(whole.starts_with("HTTP/1.1 200"), "{whole}");
    assert!(whole.contains("last-chunk"), "{whole}");
}

#[tokio::test]
async fn a_remote_channels_messages_follow_the_implemented_channels_rules() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    // The upstream echoes every text message.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
                while let Some(Ok(message)) = ws.next().await {
                    if message.is_text() && ws.send(message).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let app = chat_proxy(upstream, [""; 0])
        .max_message_size(64)
        .into_router()
        .unwrap();
    let proxy = listen(app).await;
    let open = || async move {
        let tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
        let url = format!("ws://{proxy}/api/ws?_s=demo&_g=chat&_m=room&_v=%7B%22id%22%3A1%7D");
        tokio_tungstenite::client_async(url, tcp).await.unwrap().0
    };
    let close_code = |message: Message| match message {
        Message::Close(Some(frame)) => u16::from(frame.code),
        other => panic!("expected a close frame, got {other:?}"),
    };

    // A binary frame holding JSON is a message, as it is for an implemented channel.
    let mut browser = open().await;
    browser
        .send(Message::binary(&b"{\"b\":1}"[..]))
        .await
        .unwrap();
    assert_eq!(next_text(&mut browser).await, r#"{"b":1}"#);
    // One over the size limit closes with 1009.
    let big = format!(r#"{{"text":"{}"}}"#, "x".repeat(100));
    browser.send(Message::text(big)).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), browser.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(close_code(closed), 1009);

    // One that is not JSON closes with 1003.
    let mut browser = open().await;
    browser.send(Message::text("not json")).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), browser.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(close_code(closed), 1003);
}

#[tokio::test]
async fn the_router_is_a_tower_service_and_ws_has_no_default_path() {
    use tower::ServiceExt;
    let upstream = backend().await;
    let router = Proxy::new()
        .source("demo", api(upstream))
        .into_router()
        .unwrap();
    // Driven as any `tower::Service<http::Request<_>>`, without a server around it.
    let call = |target: &str| {
        axum::http::Request::get(target)
            .body(axum::body::Body::empty())
            .unwrap()
    };
    let response = router
        .clone()
        .oneshot(call("/api/request?_s=demo&_g=users&_m=get&_v=7"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["path"], "/users/7");
    // Without `ws_path`, no path serves channels.
    let response = router
        .oneshot(call("/api/ws?_s=demo&_g=live&_m=feed"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// An upstream that answers in HTTP/1.0 and closes, as Python's `http.server` does.
async fn http10_upstream() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tcp
                    .write_all(
                        b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{\"id\": 7}",
                    )
                    .await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn an_http10_upstream_is_answered_in_the_browsers_version_and_keeps_its_connection() {
    let upstream = http10_upstream().await;
    let app = Proxy::new()
        .source(
            "old",
            ApiDef::builder()
                .base_url(format!("http://{upstream}"))
                .group(
                    "users",
                    GroupDef::new()
                        .expose(true)
                        .endpoint("get", HttpEndpoint::get("/users/:id")),
                )
                .build()
                .unwrap(),
        )
        .into_router()
        .unwrap();
    let proxy = listen(app).await;
    let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    let get = "GET /api/request?_s=old&_g=users&_m=get&_v=7 HTTP/1.1\r\nhost: app\r\n\r\n";
    let mut seen = String::new();
    for n in 1..=2 {
        tcp.write_all(get.as_bytes()).await.unwrap();
        let mut buf = [0u8; 4096];
        tokio::time::timeout(Duration::from_secs(5), async {
            while seen.matches("{\"id\": 7}").count() < n {
                let read = tcp.read(&mut buf).await.unwrap();
                assert!(read > 0, "the proxy closed the connection: {seen}");
                seen.push_str(&String::from_utf8_lossy(&buf[..read]));
            }
        })
        .await
        .expect("an answer within 5 s");
    }
    assert_eq!(seen.matches("HTTP/1.1 200 OK").count(), 2, "{seen}");
    assert!(!seen.contains("HTTP/1.0"), "{seen}");
}
