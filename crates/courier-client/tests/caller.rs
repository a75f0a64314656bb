//! The direct client against a real axum backend on 127.0.0.1: how each verb sends its
//! variables, response types and parsers, each error kind, responses, and per-call options.

use axum::body::Bytes;
use axum::extract::{Multipart, Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use courier_client::{Client, Error, NetworkErrorKind};
use courier_core::encode::{FilePart, Form};
use courier_core::{
    ApiDef, CallOptions, CancellationToken, GroupDef, HttpEndpoint, ResponseParser, ResponseType,
    WireCall,
};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn pairs(query: Option<String>) -> Value {
    let uri: axum::http::Uri = format!("/?{}", query.unwrap_or_default()).parse().unwrap();
    let q = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .unwrap()
        .0;
    json!(q)
}

async fn user(Path(id): Path<String>, RawQuery(q): RawQuery) -> axum::response::Response {
    match id.as_str() {
        "404" => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "no such user" })),
        )
            .into_response(),
        "500" => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        "slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(json!({ "id": 0 })).into_response()
        }
        _ => Json(json!({ "id": id, "query": pairs(q) })).into_response(),
    }
}

async fn echo_body(headers: HeaderMap, RawQuery(q): RawQuery, body: Bytes) -> impl IntoResponse {
    (
        StatusCode::CREATED,
        Json(json!({
            "content_type": headers.get("content-type").and_then(|v| v.to_str().ok()),
            "body": serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null),
            "query": pairs(q),
        })),
    )
}

async fn headers(headers: HeaderMap) -> Json<Value> {
    let pick = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Json(json!({ "api_key": pick("x-api-key"), "call": pick("x-call") }))
}

async fn upload(mut form: Multipart) -> Json<Value> {
    let mut sizes = serde_json::Map::new();
    while let Ok(Some(field)) = form.next_field().await {
        let name = field.name().unwrap_or_default().to_owned();
        let len = field.bytes().await.map(|b| b.len()).unwrap_or(0);
        sizes.insert(name, json!(len));
    }
    Json(Value::Object(sizes))
}

async fn backend(hits: Arc<AtomicUsize>) -> SocketAddr {
    let counted = move || {
        let hits = hits.clone();
        async move {
            hits.fetch_add(1, Ordering::SeqCst);
            Json(json!({ "ok": true }))
        }
    };
    let app = Router::new()
        .route(
            "/users/{id}",
            get(user)
                .put(echo_body)
                .patch(echo_body)
                .delete(|| async { StatusCode::NO_CONTENT }),
        )
        .route("/users", post(echo_body))
        .route(
            "/search",
            get(|RawQuery(q): RawQuery| async move { Json(pairs(q)) }).post(echo_body),
        )
        .route("/headers", get(headers))
        .route("/text", get(|| async { "hello" }))
        .route("/bytes", get(|| async { vec![0u8, 159, 146, 150] }))
        .route(
            "/form",
            get(|| async {
                (
                    [("content-type", "application/x-www-form-urlencoded")],
                    "a=1&b=x%20y",
                )
            }),
        )
        .route("/empty", get(|| async { StatusCode::OK }))
        .route(
            "/stream",
            get(|| async {
                let chunks =
                    (0..5).map(|i| Ok::<_, std::io::Error>(Bytes::from(format!("chunk{i};"))));
                axum::body::Body::from_stream(futures_util::stream::iter(chunks))
            }),
        )
        .route("/upload", post(upload))
        .route("/counted", get(counted))
        .layer(axum::extract::DefaultBodyLimit::max(8 * 1024 * 1024));
    let addr = courier_test_support::serve(app).await;
    addr
}

fn api(addr: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .header("x-api-key", "source-key")
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("create", HttpEndpoint::post(""))
                .endpoint("put", HttpEndpoint::put("/:id"))
                .endpoint("patch", HttpEndpoint::patch("/:id"))
                .endpoint("remove", HttpEndpoint::del("/:id"))
                .endpoint("head", HttpEndpoint::method(http::Method::HEAD, "/:id"))
                .endpoint(
                    "slow_endpoint",
                    HttpEndpoint::get("/slow").timeout(Duration::from_millis(100)),
                )
                .endpoint(
                    "lookup",
                    HttpEndpoint::via(|vars| {
                        Ok(WireCall::get("/:id")
                            .variables(json!({ "id": vars["user"], "via": true })))
                    })
                    .reads(),
                ),
        )
        .group(
            "misc",
            GroupDef::new()
                .endpoint("search", HttpEndpoint::get("/search"))
                .endpoint(
                    "login",
                    HttpEndpoint::post("/search").reads().sensitive_variables(),
                )
                .endpoint("headers", HttpEndpoint::get("/headers"))
                .endpoint(
                    "text",
                    HttpEndpoint::get("/text").response_type(ResponseType::Text),
                )
                .endpoint(
                    "bytes",
                    HttpEndpoint::get("/bytes").response_type(ResponseType::Bytes),
                )
                .endpoint(
                    "form",
                    HttpEndpoint::get("/form").response_type(ResponseType::Form),
                )
                .endpoint("empty", HttpEndpoint::get("/empty"))
                .endpoint("stream", HttpEndpoint::get("/stream").stream_response())
                .endpoint("upload", HttpEndpoint::post("/upload")),
        )
        .build()
        .unwrap()
}

async fn client() -> Client {
    let addr = backend(Arc::default()).await;
    Client::new(api(addr)).unwrap()
}

#[tokio::test]
async fn get_and_delete_send_the_rest_as_search_parameters() {
    let client = client().await;
    let res = client
        .call("users.get", json!({ "id": "a b", "tags": ["x", "y"] }))
        .await
        .unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(
        res.data,
        json!({ "id": "a b", "query": [["tags", "x"], ["tags", "y"]] })
    );
    let res = client
        .call("users.remove", json!({ "id": 1, "hard": true }))
        .await
        .unwrap();
    assert_eq!(res.status, StatusCode::NO_CONTENT);
    assert_eq!(res.data, Value::Null, "204 gives null");
}

#[tokio::test]
async fn head_has_no_body() {
    let client = client().await;
    let res = client.call("users.head", json!({ "id": 1 })).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.data, Value::Null);
}

#[tokio::test]
async fn post_put_patch_send_json_bodies() {
    let client = client().await;
    for path in ["users.create", "users.put", "users.patch"] {
        let res = client
            .call(path, json!({ "id": 3, "name": "Ada" }))
            .await
            .unwrap();
        assert_eq!(res.status, StatusCode::CREATED, "{path}");
        assert_eq!(res.data["content_type"], "application/json", "{path}");
        let expected = if path == "users.create" {
            json!({ "id": 3, "name": "Ada" })
        } else {
            json!({ "name": "Ada" })
        };
        assert_eq!(res.data["body"], expected, "{path}");
    }
}

#[tokio::test]
async fn via_runs_at_request_time() {
    let client = client().await;
    let res = client
        .call("users.lookup", json!({ "user": 9 }))
        .await
        .unwrap();
    assert_eq!(res.data, json!({ "id": "9", "query": [["via", "true"]] }));
}

#[tokio::test]
async fn response_types_and_parsers() {
    let client = client().await;
    assert_eq!(
        client.call("misc.text", json!({})).await.unwrap().data,
        json!("hello")
    );
    assert_eq!(
        client.call("misc.bytes", json!({})).await.unwrap().data,
        json!([0, 159, 146, 150])
    );
    assert_eq!(
        client.call("misc.form", json!({})).await.unwrap().data,
        json!({ "a": "1", "b": "x y" })
    );
    assert_eq!(
        client.call("misc.empty", json!({})).await.unwrap().data,
        Value::Null
    );

    let addr = backend(Arc::default()).await;
    let parsed = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .response_parser(ResponseParser::new(|parts, body| {
            Ok(json!({ "status": parts.status.as_u16(), "length": body.len() }))
        }))
        .group(
            "misc",
            GroupDef::new().endpoint("text", HttpEndpoint::get("/text")),
        )
        .build()
        .unwrap();
    let client = Client::new(parsed).unwrap();
    assert_eq!(
        client.call("misc.text", json!({})).await.unwrap().data,
        json!({ "status": 200, "length": 5 })
    );
}

#[tokio::test]
async fn a_streamed_response_is_handed_over_unread() {
    use http_body_util::BodyExt;
    let addr = backend(Arc::default()).await;
    let client = Client::new(api(addr)).unwrap();
    let endpoint = client.api().endpoint("misc.stream").unwrap().clone();
    let request = courier_core::HttpCallRequest::new(&endpoint, (), None);
    let res: courier_core::HttpResponse<courier_core::BodyStream> =
        courier_core::Dispatch::http(&client, request)
            .await
            .unwrap();
    let mut body = res.data.into_body();
    let mut frames = 0;
    let mut text = String::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            frames += 1;
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    assert_eq!(text, "chunk0;chunk1;chunk2;chunk3;chunk4;");
    assert!(frames >= 1);
}

#[tokio::test]
async fn http_errors_carry_status_headers_and_parsed_data() {
    let client = client().await;
    let err = client
        .call("users.get", json!({ "id": 404 }))
        .await
        .unwrap_err();
    assert!(err.is_http());
    assert_eq!(err.status_code(), 404);
    let http = err.http_error().unwrap();
    assert_eq!(http.data, json!({ "error": "no such user" }));
    assert_eq!(http.headers["content-type"], "application/json");
    assert_eq!(err.endpoint(), Some("users.get"));

    let err = client
        .call("users.get", json!({ "id": 500 }))
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 500);
    assert_eq!(
        err.http_error().unwrap().data,
        json!("boom"),
        "text when it is not JSON"
    );
    // The message names the request that was answered so.
    assert_eq!(err.method(), Some(&http::Method::GET));
    assert!(
        err.to_string()
            .starts_with("`users.get`: GET http://127.0.0.1:"),
        "{err}"
    );
    assert!(
        err.to_string()
            .ends_with("/users/500: HTTP status 500 Internal Server Error"),
        "{err}"
    );
}

#[tokio::test]
async fn network_failures_are_status_zero_with_their_cause() {
    // A port that was just bound and released: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::new(api(addr)).unwrap();
    let err = client
        .call("users.get", json!({ "id": 1 }))
        .await
        .unwrap_err();
    assert!(err.is_network() && err.is_connect(), "{err:?}");
    assert_eq!(err.status_code(), 0);
    assert_eq!(err.network(), Some(NetworkErrorKind::Connect));
    assert!(
        std::error::Error::source(&err).is_some(),
        "the cause is kept"
    );
    // The message names the endpoint, the method and the address tried, and the root cause
    // once; the links between stay on the `source` chain.
    assert_eq!(err.method(), Some(&http::Method::GET));
    assert_eq!(
        err.url().map(ToString::to_string),
        Some(format!("http://{addr}/users/1"))
    );
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "`users.get`: GET http://{addr}/users/1: network error (connect): "
        )),
        "{message}"
    );
    let root = std::iter::successors(
        std::error::Error::source(&err),
        |e: &&(dyn std::error::Error + 'static)| e.source(),
    )
    .last()
    .unwrap()
    .to_string();
    assert!(message.ends_with(&format!(": {root}")), "{message}");
    assert_eq!(message.matches(&root).count(), 1, "{message}");
    assert!(root.to_lowercase().contains("connection refused"), "{root}");
    // A message for outside the process leaves the upstream's address out.
    let outside = err.without_url().to_string();
    assert!(!outside.contains(&addr.to_string()), "{outside}");
    assert!(outside.starts_with("`users.get`: network error (connect): "));
}

#[tokio::test]
async fn an_error_message_leaves_the_query_out_of_the_address() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group(
            "search",
            GroupDef::new().endpoint("find", HttpEndpoint::get("/find")),
        )
        .build()
        .unwrap();
    let err = Client::new(api)
        .unwrap()
        .call("search.find", json!({ "api_key": "s3cret", "q": "x" }))
        .await
        .unwrap_err();
    assert!(err.url().unwrap().query().unwrap().contains("s3cret"));
    let message = err.to_string();
    assert!(
        message.contains(&format!("GET http://{addr}/find: ")),
        "{message}"
    );
    assert!(!message.contains("s3cret"), "{message}");
}

#[tokio::test]
async fn timeouts_take_the_call_then_the_endpoint_then_the_source() {
    let addr = backend(Arc::default()).await;
    let client = Client::new(api(addr)).unwrap();

    let started = std::time::Instant::now();
    let err = client
        .call("users.slow_endpoint", json!({}))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));

    let opts = CallOptions::new().timeout(Duration::from_millis(50));
    let err = client
        .call_with("users.get", json!({ "id": "slow" }), Some(&opts))
        .await
        .unwrap_err();
    assert!(err.is_timeout() && !err.is_network(), "{err:?}");
    assert_eq!(err.status_code(), 0);

    let source = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .timeout(Duration::from_millis(50))
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id")),
        )
        .build()
        .unwrap();
    let client = Client::new(source).unwrap();
    let err = client
        .call("users.get", json!({ "id": "slow" }))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    // A call's own timeout is longer than the source's: the call's wins.
    let opts = CallOptions::new().timeout(Duration::from_secs(5));
    let ok = client
        .call_with("users.get", json!({ "id": 1 }), Some(&opts))
        .await
        .unwrap();
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn signals_cancel_a_call_and_are_told_apart_from_timeouts() {
    let addr = backend(Arc::default()).await;
    let client = Client::new(api(addr)).unwrap();
    let token = CancellationToken::new();
    let opts = CallOptions::new().signal(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let err = client
        .call_with("users.get", json!({ "id": "slow" }), Some(&opts))
        .await
        .unwrap_err();
    assert!(err.is_cancelled() && !err.is_timeout(), "{err:?}");
    canceller.await.unwrap();

    let token = CancellationToken::new();
    let source = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .signal(token.clone())
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id")),
        )
        .build()
        .unwrap();
    let client = Client::new(source).unwrap();
    token.cancel();
    let err = client
        .call("users.get", json!({ "id": 1 }))
        .await
        .unwrap_err();
    assert!(
        err.is_cancelled(),
        "an already-cancelled source signal stops calls: {err:?}"
    );
}

#[tokio::test]
async fn decode_failures_are_not_http_errors() {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Wrong {
        missing: u64,
    }
    let client = client().await;
    let endpoint = client.api().endpoint("users.get").unwrap().clone();
    let request = courier_core::HttpCallRequest::new(&endpoint, json!({ "id": 1 }), None);
    let err = courier_core::Dispatch::http::<Wrong, _>(&client, request)
        .await
        .unwrap_err();
    assert!(err.is_decode() && !err.is_http(), "{err:?}");
    assert_eq!(err.status_code(), 200);
}

#[tokio::test]
async fn per_call_headers_win_over_the_sources() {
    let client = client().await;
    let res = client.call("misc.headers", json!({})).await.unwrap();
    assert_eq!(res.data, json!({ "api_key": "source-key", "call": null }));
    let opts = CallOptions::new()
        .header("x-api-key".parse().unwrap(), "call-key".parse().unwrap())
        .header("x-call".parse().unwrap(), "1".parse().unwrap());
    let res = client
        .call_with("misc.headers", json!({}), Some(&opts))
        .await
        .unwrap();
    assert_eq!(res.data, json!({ "api_key": "call-key", "call": "1" }));
}

#[tokio::test]
async fn upload_progress_reaches_one_before_the_call_resolves() {
    let addr = backend(Arc::default()).await;
    let client = Client::new(api(addr)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::<f64>::new()));
    let sink = seen.clone();
    let opts = CallOptions::new().on_upload_progress(move |p| sink.lock().unwrap().push(p.percent));
    let form = Form::new().text("name", "big").file(
        "file",
        FilePart::new(vec![7u8; 1024 * 1024]).filename("big.bin"),
    );
    let endpoint = client.api().endpoint("misc.upload").unwrap().clone();
    let request = courier_core::HttpCallRequest::new(&endpoint, form, Some(&opts));
    let res: courier_core::HttpResponse<Value> = courier_core::Dispatch::http(&client, request)
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(res.data["file"], 1024 * 1024);
    assert_eq!(seen.first(), Some(&0.0));
    assert_eq!(
        seen.last(),
        Some(&1.0),
        "1.0 was reported before the call resolved"
    );
    assert!(
        seen.len() > 10,
        "a 1 MiB body reports as it goes: {}",
        seen.len()
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
}

#[tokio::test]
async fn an_unknown_endpoint_is_a_configuration_error() {
    let client = client().await;
    let err = client.call("users.nope", json!({})).await.unwrap_err();
    assert!(err.is_configuration());
    assert_eq!(
        err.configuration().unwrap().code(),
        courier_core::ErrorCode::EndpointNotInRoutes
    );
    let err = client.call("users.get", json!({})).await.unwrap_err();
    assert!(err.is_configuration(), "a missing path parameter: {err:?}");
    assert!(err.to_string().contains("`id`"), "{err}");
}

#[tokio::test]
async fn the_client_is_a_tower_service() {
    use tower::ServiceExt;
    let client = client().await;
    let res = client
        .oneshot(courier_client::Call {
            endpoint: "misc.search".into(),
            variables: json!({ "q": "x" }),
            options: CallOptions::new(),
        })
        .await
        .unwrap();
    assert_eq!(res.data, json!([["q", "x"]]));
}

#[tokio::test]
async fn a_calls_method_forces_the_verb_and_the_encoding() {
    let client = client().await;
    let search = |method: Option<http::Method>| {
        let options = method.map(|m| CallOptions::new().method(m));
        let client = client.clone();
        async move {
            client
                .call_with("misc.search", json!({ "q": "x" }), options.as_ref())
                .await
        }
    };
    // As defined: a GET, the variables in the query.
    assert_eq!(search(None).await.unwrap().data, json!([["q", "x"]]));
    // Forced to POST: the variables go in the body.
    let posted = search(Some(http::Method::POST)).await.unwrap();
    assert_eq!(posted.status, 201);
    assert_eq!(posted.data["body"], json!({ "q": "x" }));
    assert_eq!(posted.data["query"], json!([]));

    // Neither another verb, nor a write as GET, is sent.
    let err = search(Some(http::Method::PUT)).await.unwrap_err();
    assert!(err.to_string().contains("GET or POST, not PUT"), "{err}");
    let err = client
        .call_with(
            "users.create",
            json!({ "name": "ada" }),
            Some(&CallOptions::new().method(http::Method::GET)),
        )
        .await
        .unwrap_err();
    assert!(err.is_configuration(), "{err}");
    assert!(
        err.to_string().contains("writes: it cannot be sent as GET"),
        "{err}"
    );
    // Nor a read whose variables are sensitive: they would travel in the address.
    let err = client
        .call_with(
            "misc.login",
            json!({ "password": "hunter2" }),
            Some(&CallOptions::new().method(http::Method::GET)),
        )
        .await
        .unwrap_err();
    assert!(err.is_configuration(), "{err}");
    assert!(err.to_string().contains("sensitive variables"), "{err}");
}

#[allow(dead_code)]
fn _error_is_send_sync(e: Error) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(e)
}

/// A handler that `?`s a call: the browser gets the upstream's error as it came, or the
/// proxy's code for a call with no response.
#[tokio::test]
async fn a_handler_returns_a_failed_call_as_its_response() {
    use axum::extract::State;

    async fn show(
        State(client): State<Client>,
        Path(id): Path<String>,
    ) -> Result<Json<Value>, Error> {
        Ok(Json(
            client.call("users.get", json!({ "id": id })).await?.data,
        ))
    }
    let backend_addr = backend(Arc::default()).await;
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let app = |upstream: SocketAddr| {
        Router::new()
            .route("/show/{id}", get(show))
            .with_state(Client::new(api(upstream)).unwrap())
    };
    let up = courier_test_support::serve(app(backend_addr)).await;
    let broken = courier_test_support::serve(app(down)).await;

    // The app itself called as a source: what a browser would read.
    let browser = |addr: SocketAddr| {
        Client::new(
            ApiDef::builder()
                .base_url(format!("http://{addr}"))
                .group(
                    "app",
                    GroupDef::new().endpoint("show", HttpEndpoint::get("/show/:id")),
                )
                .build()
                .unwrap(),
        )
        .unwrap()
    };
    let ok = browser(up)
        .call("app.show", json!({ "id": "7" }))
        .await
        .unwrap();
    assert_eq!(ok.data["id"], "7");

    let err = browser(up)
        .call("app.show", json!({ "id": "404" }))
        .await
        .unwrap_err();
    let http = err.http_error().unwrap();
    assert_eq!(http.status, 404);
    assert_eq!(http.data, json!({ "error": "no such user" }));

    let err = browser(up)
        .call("app.show", json!({ "id": "500" }))
        .await
        .unwrap_err();
    assert_eq!(
        err.http_error().unwrap().data,
        json!("boom"),
        "text stays text"
    );

    let err = browser(broken)
        .call("app.show", json!({ "id": "7" }))
        .await
        .unwrap_err();
    let http = err.http_error().unwrap();
    assert_eq!(http.status, 502);
    assert_eq!(http.data["error"]["code"], "UPSTREAM_UNREACHABLE");
    let message = http.data["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`users.get`: network error (connect)"),
        "{message}"
    );
    assert!(!message.contains(&down.port().to_string()), "{message}");
}

/// Search parameters written `key:value;key:value`: a source's own rules, both ways.
#[derive(Debug)]
struct Semicolons;

impl courier_core::encode::SearchParamsSerializer for Semicolons {
    fn stringify(&self, params: &serde_json::Map<String, Value>) -> String {
        let pairs: Vec<String> = params
            .iter()
            .map(|(key, value)| format!("{key}:{}", value.as_str().unwrap_or_default()))
            .collect();
        pairs.join(";")
    }

    fn parse(
        &self,
        query: &str,
    ) -> Result<serde_json::Map<String, Value>, courier_core::encode::SearchParamsError> {
        query
            .split(';')
            .map(|pair| match pair.split_once(':') {
                Some((key, value)) => Ok((key.to_owned(), json!(value))),
                None => Err(courier_core::encode::SearchParamsError::new(format!(
                    "`{pair}` is not key:value"
                ))),
            })
            .collect()
    }
}

#[tokio::test]
async fn form_responses_read_multipart_and_the_sources_own_search_rules() {
    const BOUNDARY: &str = "courier-test-boundary";
    let multipart = [
        "--courier-test-boundary\r\ncontent-disposition: form-data; name=\"name\"\r\n\r\nAda\r\n",
        "--courier-test-boundary\r\ncontent-disposition: form-data; name=\"tag\"\r\n\r\na\r\n",
        "--courier-test-boundary\r\ncontent-disposition: form-data; name=\"tag\"\r\n\r\nb\r\n",
        "--courier-test-boundary\r\ncontent-disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\ncontent-type: image/png\r\n\r\n\x01\x02\x03\r\n",
        "--courier-test-boundary--\r\n",
    ]
    .concat();
    let app = Router::new()
        .route(
            "/multipart",
            get(move || async move {
                (
                    [(
                        "content-type",
                        format!("multipart/form-data; boundary={BOUNDARY}"),
                    )],
                    multipart,
                )
            }),
        )
        .route(
            "/semicolons",
            get(|| async {
                (
                    [("content-type", "application/x-www-form-urlencoded")],
                    "a:1;b:two",
                )
            }),
        );
    let addr = courier_test_support::serve(app).await;
    let api = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .response_type(ResponseType::Form)
        .search_params_serializer(Semicolons)
        .group(
            "forms",
            GroupDef::new()
                .endpoint("multipart", HttpEndpoint::get("/multipart"))
                .endpoint("semicolons", HttpEndpoint::get("/semicolons")),
        )
        .build()
        .unwrap();
    let client = Client::new(api).unwrap();

    let fields = client
        .call("forms.multipart", json!({}))
        .await
        .unwrap()
        .data;
    assert_eq!(
        fields,
        json!({
            "name": "Ada",
            "tag": ["a", "b"],
            "avatar": { "filename": "a.png", "content_type": "image/png", "bytes": [1, 2, 3] },
        })
    );
    // The source's own rules read a URL-encoded form back.
    let fields = client
        .call("forms.semicolons", json!({}))
        .await
        .unwrap()
        .data;
    assert_eq!(fields, json!({ "a": "1", "b": "two" }));

    // Typed: a file part is what `Vec<u8>` takes.
    #[derive(serde::Deserialize)]
    struct Avatar {
        filename: String,
        bytes: Vec<u8>,
    }
    #[derive(serde::Deserialize)]
    struct Profile {
        name: String,
        tag: Vec<String>,
        avatar: Avatar,
    }
    let profile: Profile = serde_json::from_value(
        client
            .call("forms.multipart", json!({}))
            .await
            .unwrap()
            .data,
    )
    .unwrap();
    assert_eq!(
        (
            profile.name.as_str(),
            profile.tag.len(),
            profile.avatar.filename.as_str()
        ),
        ("Ada", 2, "a.png")
    );
    assert_eq!(profile.avatar.bytes, [1, 2, 3]);
}

/// A call finds its endpoint's stack at the endpoint's position in the client; an endpoint of
/// another `ApiDef` of the same shape — here at another position — finds it by its dotted path,
/// and goes down the same stack.
#[tokio::test]
async fn pass_through_finds_the_endpoints_stack_its_own_or_a_twin_apis() {
    use courier_core::Middleware;
    use http::HeaderValue;
    let addr = backend(Arc::default()).await;
    let mark = Middleware::new(
        "mark",
        tower::util::MapRequestLayer::new(|mut request: http::Request<courier_core::Body>| {
            let mark = HeaderValue::from_static("from-the-stack");
            request.headers_mut().insert("x-call", mark);
            request
        }),
    );
    let marked = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .middleware(mark)
        .group(
            "misc",
            GroupDef::new().endpoint("headers", HttpEndpoint::get("/headers")),
        )
        .build()
        .unwrap();
    let client = Client::new(marked.clone()).unwrap();
    // The same endpoint in an API with one more group first: another position.
    let twin = ApiDef::builder()
        .base_url(format!("http://{addr}"))
        .group(
            "aaa",
            GroupDef::new().endpoint("x", HttpEndpoint::get("/x")),
        )
        .group(
            "misc",
            GroupDef::new().endpoint("headers", HttpEndpoint::get("/headers")),
        )
        .build()
        .unwrap();
    let own = marked.endpoint("misc.headers").unwrap();
    let other = twin.endpoint("misc.headers").unwrap();
    assert_ne!(own.position(), other.position());
    for endpoint in [own, other] {
        let response = client
            .pass_through(endpoint, Value::Null, None)
            .await
            .unwrap();
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let seen: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(seen["call"], "from-the-stack", "{}", endpoint.path());
    }
}
