//! What a team writes instead of courier's proxy, for `benches/proxy_hop.sh` to load beside it:
//!
//! - `axum`: a bare pass-through on axum and hyper-util — a `fallback` route that sends every
//!   request on to the upstream as it came (path, query, headers; `Host` set to the
//!   upstream's) with hyper-util's pooled client, and streams the answer back. It checks
//!   nothing: no address, no variables, no allow-lists, no session.
//! - `reqwest`: the backend-for-frontend a Rust team writes by hand for the same calls as the
//!   browser package's — an axum route at `/api/request` that reads `_s`, `_g`, `_m` and `_v`,
//!   parses `_v` as JSON, and calls the upstream with reqwest (`GET /users/{id}`), answering
//!   with the upstream's status, content type and body. Nothing else is checked or relayed.
//!
//! Both run as such a service usually runs, on `#[tokio::main]`'s runtime (a worker thread per
//! CPU), with the allocator `courier serve` has (mimalloc), so that the figures compare the
//! proxies rather than the allocators. The Node one is `benches/peer_hop.mjs`.
//!
//! ```sh
//! cargo bench --bench peer_hop -- axum 127.0.0.1:8082 http://127.0.0.1:8080
//! cargo bench --bench peer_hop -- reqwest 127.0.0.1:8083 http://127.0.0.1:8080
//! ```
//!
//! Without arguments (as when `cargo bench` runs every benchmark) it says how to run it and
//! exits.

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use std::sync::Arc;
use tokio::net::TcpListener;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [mode, listen, upstream] = &args[..] else {
        eprintln!(
            "usage: cargo bench --bench peer_hop -- axum|reqwest LISTEN UPSTREAM_URL (see benches/proxy_hop.sh)"
        );
        return;
    };
    let upstream: Uri = upstream.parse().expect("UPSTREAM_URL is a URL");
    let app = match mode.as_str() {
        "axum" => pass_through(upstream),
        "reqwest" => hand_written(upstream),
        other => panic!("axum or reqwest, not {other}"),
    };
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let listener = TcpListener::bind(listen).await.expect("LISTEN is free");
            axum::serve(listener, app).await.expect("served");
        });
}

/// Every request on to `upstream` as it came, the answer streamed back.
fn pass_through(upstream: Uri) -> Router {
    let client: Client<HttpConnector, Body> = Client::builder(TokioExecutor::new()).build_http();
    let upstream = Arc::new(upstream);
    Router::new().fallback(move |mut request: Request| {
        let client = client.clone();
        let upstream = Arc::clone(&upstream);
        async move {
            let path = request.uri().path_and_query().map_or("/", |p| p.as_str());
            let Ok(uri) = format!("{}{path}", upstream.to_string().trim_end_matches('/')).parse()
            else {
                return StatusCode::BAD_REQUEST.into_response();
            };
            *request.uri_mut() = uri;
            request.headers_mut().remove(header::HOST);
            match client.request(request).await {
                Ok(response) => response.map(Body::new).into_response(),
                Err(_) => StatusCode::BAD_GATEWAY.into_response(),
            }
        }
    })
}

/// The query a browser's call sends: source, group, method and variables.
#[derive(Deserialize)]
struct Wire {
    _s: String,
    _g: String,
    _m: String,
    _v: String,
}

struct Upstream {
    client: reqwest::Client,
    base: String,
}

/// An axum route for `users.get`, calling the upstream with reqwest.
fn hand_written(upstream: Uri) -> Router {
    // reqwest's TLS needs a provider named (the workspace builds it without one); this BFF
    // calls over `http://` only.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let state = Arc::new(Upstream {
        client: reqwest::Client::new(),
        base: upstream.to_string().trim_end_matches('/').to_owned(),
    });
    Router::new()
        .route("/api/request", get(call))
        .with_state(state)
}

async fn call(State(upstream): State<Arc<Upstream>>, Query(wire): Query<Wire>) -> Response {
    if (wire._s.as_str(), wire._g.as_str(), wire._m.as_str()) != ("demo", "users", "get") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Ok(variables) = serde_json::from_str::<serde_json::Value>(&wire._v) else {
        return (StatusCode::BAD_REQUEST, "`_v` is not JSON").into_response();
    };
    let id = match &variables {
        serde_json::Value::Object(fields) => fields.get("id").cloned().unwrap_or_default(),
        other => other.clone(),
    };
    let id = match id {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s,
        _ => return (StatusCode::BAD_REQUEST, "no id").into_response(),
    };
    let sent = upstream
        .client
        .get(format!("{}/users/{id}", upstream.base))
        .send()
        .await;
    let Ok(answer) = sent else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let kind = answer
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    match answer.bytes().await {
        Ok(body) => (status, [(header::CONTENT_TYPE, kind)], body).into_response(),
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}
