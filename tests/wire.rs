//! Requests built from definitions, sent over a real socket to an axum backend on 127.0.0.1: the
//! backend's own extractors must read back exactly what the caller meant — path parameters as one
//! segment each, search parameters, JSON, URL-encoded and multipart bodies, headers.

use axum::extract::{Multipart, Path, RawQuery};
use axum::http::{HeaderMap, Method};
use axum::routing::any;
use axum::{Json, Router};
use courier::config::Config;
use courier::encode::{FilePart, Form, UrlEncodedBody, Variables};
// Request building is below the facade's API: tested through the core crate.
use courier::transport::Body;
use courier::tree::PathOptions;
use courier::{ApiDef, GroupDef, HttpEndpoint};
use courier_core::{build_request, resolve_path_options};
use http_body_util::BodyExt;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Map, Value};
use std::net::SocketAddr;

/// What the backend saw, as its own extractors read it.
async fn echo(
    method: Method,
    Path(params): Path<Vec<(String, String)>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Json<Value> {
    let params: Map<String, Value> = params
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let pairs: Vec<(String, String)> = query.as_deref().map(query_pairs).unwrap_or_default();
    Json(json!({
        "method": method.as_str(),
        "params": params,
        "query": pairs,
        "content_type": headers.get("content-type").and_then(|v| v.to_str().ok()),
        "api_key": headers.get("x-api-key").and_then(|v| v.to_str().ok()),
        "body": String::from_utf8_lossy(&body),
    }))
}

/// Decodes a query string the way servers do (`form_urlencoded` via axum's own `Query`).
fn query_pairs(query: &str) -> Vec<(String, String)> {
    let uri: axum::http::Uri = format!("/?{query}").parse().unwrap();
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .map(|q| q.0)
        .unwrap_or_default()
}

async fn upload(Path((_tenant, id)): Path<(String, String)>, mut form: Multipart) -> Json<Value> {
    let mut parts = Vec::new();
    while let Ok(Some(field)) = form.next_field().await {
        let name = field.name().map(str::to_owned);
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let bytes = field.bytes().await.unwrap_or_default();
        parts.push(json!({
            "name": name,
            "file_name": file_name,
            "content_type": content_type,
            "text": String::from_utf8_lossy(&bytes),
        }));
    }
    Json(json!({ "id": id, "parts": parts }))
}

async fn backend() -> SocketAddr {
    let app = Router::new()
        .route("/t/{tenant}/users/{id}", any(echo))
        .route("/t/{tenant}/users/{id}/files/{name}", any(echo))
        .route("/t/{tenant}/users", any(echo_no_params))
        .route("/t/{tenant}/users/{id}/avatar", any(upload));
    let addr = courier_test_support::serve(app).await;
    addr
}

async fn echo_no_params(
    method: Method,
    Path(tenant): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Json<Value> {
    echo(
        method,
        Path(vec![("tenant".into(), tenant)]),
        RawQuery(query),
        headers,
        body,
    )
    .await
}

fn api(addr: SocketAddr, urlencoded: bool) -> ApiDef {
    let builder = ApiDef::builder()
        .base_url(format!("http://{addr}/t"))
        .header("x-api-key", "k")
        .default_query_params(json!({ "lang": "en" }))
        .default_body(json!({ "client": "web" }))
        .path_options(PathOptions::fixed(json!({ "tenant": "acme" })));
    let builder = if urlencoded {
        builder.body_serializer(UrlEncodedBody)
    } else {
        builder
    };
    builder
        .group(
            "users",
            GroupDef::new()
                .prefix("/:tenant/users")
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("file", HttpEndpoint::get("/:id/files/:name"))
                .endpoint("create", HttpEndpoint::post(""))
                .endpoint("update", HttpEndpoint::put("/:id"))
                .endpoint("remove", HttpEndpoint::del("/:id"))
                .endpoint("avatar", HttpEndpoint::post("/:id/avatar")),
        )
        .build()
        .unwrap()
}

async fn send(api: &ApiDef, path: &str, vars: impl Into<Variables>) -> Value {
    let endpoint = api.endpoint(path).unwrap();
    let values = resolve_path_options(endpoint.path_options(), None)
        .await
        .unwrap();
    let request = build_request(api, endpoint, vars.into(), &values, None, None).unwrap();
    let client: Client<HttpConnector, Body> = Client::builder(TokioExecutor::new()).build_http();
    let response = client.request(request).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn path_parameters_arrive_as_one_segment_each() {
    let addr = backend().await;
    let api = api(addr, false);
    for id in ["7", "a/b", "x?y#z", "über", "%2F", "a b", "..."] {
        let seen = send(&api, "users.get", json!({ "id": id })).await;
        assert_eq!(seen["params"]["id"], id, "{seen}");
        assert_eq!(seen["params"]["tenant"], "acme");
    }
    let seen = send(
        &api,
        "users.file",
        json!({ "id": 1, "name": "../../etc/passwd" }),
    )
    .await;
    assert_eq!(seen["params"]["name"], "../../etc/passwd");
}

#[tokio::test]
async fn a_variable_cannot_override_a_path_option() {
    let addr = backend().await;
    let api = api(addr, false);
    let seen = send(&api, "users.get", json!({ "id": 1, "tenant": "evil" })).await;
    assert_eq!(seen["params"]["tenant"], "acme");
    assert!(!seen["query"].to_string().contains("evil"), "{seen}");
}

#[tokio::test]
async fn reads_and_deletes_send_search_parameters() {
    let addr = backend().await;
    let api = api(addr, false);
    let seen = send(
        &api,
        "users.get",
        json!({ "id": 1, "q": "a&b=c", "tags": ["x", "y"], "filter": { "age": 30 }, "none": null, "on": true }),
    )
    .await;
    assert_eq!(seen["method"], "GET");
    assert_eq!(
        seen["query"],
        json!([
            ["filter[age]", "30"],
            ["lang", "en"],
            ["on", "true"],
            ["q", "a&b=c"],
            ["tags", "x"],
            ["tags", "y"]
        ])
    );
    assert_eq!(seen["api_key"], "k");
    assert_eq!(seen["body"], "");

    let seen = send(&api, "users.remove", json!({ "id": 2, "hard": true })).await;
    assert_eq!(seen["method"], "DELETE");
    assert_eq!(seen["query"], json!([["hard", "true"], ["lang", "en"]]));
}

#[tokio::test]
async fn writes_send_json_merged_over_the_default_body() {
    let addr = backend().await;
    let api = api(addr, false);
    let seen = send(
        &api,
        "users.update",
        json!({ "id": 3, "name": "Ada", "client": "cli" }),
    )
    .await;
    assert_eq!(seen["method"], "PUT");
    assert_eq!(seen["params"]["id"], "3");
    assert_eq!(seen["content_type"], "application/json");
    let body: Value = serde_json::from_str(seen["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({ "client": "cli", "name": "Ada" }));
    assert_eq!(seen["query"], json!([["lang", "en"]]));
}

#[tokio::test]
async fn a_custom_body_serializer_is_honoured() {
    let addr = backend().await;
    let api = api(addr, true);
    let seen = send(
        &api,
        "users.create",
        json!({ "name": "A B", "tags": ["x", "y"] }),
    )
    .await;
    assert_eq!(seen["content_type"], "application/x-www-form-urlencoded");
    let uri: axum::http::Uri = format!("/?{}", seen["body"].as_str().unwrap())
        .parse()
        .unwrap();
    let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .unwrap()
        .0;
    let expected: Vec<(String, String)> = [
        ("client", "web"),
        ("name", "A B"),
        ("tags", "x"),
        ("tags", "y"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(pairs, expected);
}

#[tokio::test]
async fn forms_arrive_as_multipart_with_their_files() {
    let addr = backend().await;
    let api = api(addr, false);
    let form = Form::new()
        .text("id", "9")
        .text("caption", "me \"quoted\"")
        .file(
            "avatar",
            FilePart::new(b"\x89PNG...".to_vec())
                .filename("me.png")
                .content_type("image/png"),
        );
    let seen = send(&api, "users.avatar", form).await;
    assert_eq!(seen["id"], "9");
    let parts = seen["parts"].as_array().unwrap();
    let names: Vec<_> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["caption", "client", "avatar"]);
    assert_eq!(parts[0]["text"], "me \"quoted\"");
    assert_eq!(parts[1]["text"], "web");
    assert_eq!(parts[2]["file_name"], "me.png");
    assert_eq!(parts[2]["content_type"], "image/png");
}

#[tokio::test]
async fn a_streamed_file_arrives_as_the_same_form() {
    let addr = backend().await;
    let api = api(addr, false);
    let chunks =
        futures_util::stream::iter([&b"\x89PN"[..], b"G.", b".."].map(Ok::<_, std::io::Error>));
    let form = Form::new().text("id", "9").text("caption", "me").file(
        "avatar",
        FilePart::streamed(courier::transport::Body::from_stream(chunks))
            .filename("me.png")
            .content_type("image/png"),
    );
    let seen = send(&api, "users.avatar", form).await;
    assert_eq!(seen["id"], "9");
    let parts = seen["parts"].as_array().unwrap();
    let names: Vec<_> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["caption", "client", "avatar"]);
    assert_eq!(parts[2]["file_name"], "me.png");
    assert_eq!(parts[2]["content_type"], "image/png");
    assert_eq!(parts[2]["text"], "\u{fffd}PNG...", "{seen}");
}

#[tokio::test]
async fn a_config_file_tree_sends_the_same_requests() {
    let addr = backend().await;
    let config = Config::from_toml_str(&format!(
        r#"
        [sources.demo]
        base_url = "http://{addr}/t"
        headers = {{ "x-api-key" = "k" }}
        default_query_params = {{ lang = "en" }}
        path_options = {{ tenant = "acme" }}

        [sources.demo.groups.users]
        prefix = "/:tenant/users"

        [sources.demo.groups.users.endpoints.get]
        get = "/:id"
        "#
    ))
    .unwrap();
    let api = config.source("demo").unwrap();
    let seen = send(api, "users.get", json!({ "id": "a/b", "page": 2 })).await;
    assert_eq!(seen["params"], json!({ "tenant": "acme", "id": "a/b" }));
    assert_eq!(seen["query"], json!([["lang", "en"], ["page", "2"]]));
    assert_eq!(seen["api_key"], "k");
}
