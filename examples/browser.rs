//! The browser side, end to end: a page that uses courier's browser package (`js/`) against an
//! app server on 127.0.0.1 — courier's `Proxy` in front of an embedded to-do backend, serving
//! the page too, so page and proxy share one origin. The page makes a typed call, signs in (the
//! backend's `HttpOnly` session cookie passes back through the proxy), writes with the session's
//! CSRF token (the caller adds it by itself), uploads a file with progress, reads a stream and
//! talks in a chat room.
//!
//! ```sh
//! cargo run --example browser                          # prints the address to open
//! cargo run --example browser -- --listen 127.0.0.1:8080
//! ```
//!
//! The page is `examples/browser/` (plain JavaScript, no build step); the package is served from
//! `js/dist/` at `/pkg/`, and the routes record at `/routes.json`.

use axum::extract::{Multipart, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use courier::live::Event;
use courier::options::{CacheOptions, SessionMode, SessionOptions};
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{
    channel, endpoint, stream, Channel, ChannelHandlers, ChannelPeer, Group, Http, Mutation, Stream,
};
use courier::ApiDef;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Todo {
    id: usize,
    title: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct NewTodo {
    title: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct SignIn {
    user: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Tick {
    n: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Said {
    text: String,
}

#[derive(courier::Group)]
struct Todos {
    list: Http<Vec<Todo>>,
    create: Http<Todo, NewTodo, Mutation>,
    attach: Http<Value, courier::encode::Form, Mutation>,
}

#[derive(courier::Group)]
struct Account {
    login: Http<SignIn, SignIn, Mutation>,
}

#[derive(courier::Group)]
struct Live {
    clock: Stream<Tick>,
    chat: Channel<Said, String, Said>,
}

#[derive(courier::Api)]
struct App {
    todos: Group<Todos>,
    account: Group<Account>,
    live: Group<Live>,
}

/// The API the page calls: HTTP endpoints on the embedded backend, a stream and a chat room
/// served by the app itself (`.implement()`); a session of the backend's `sid` cookie with a
/// double-submit CSRF token.
fn api(backend: SocketAddr) -> Result<courier::Api<App>, courier::ConfigurationError> {
    let todos = Group::new(Todos {
        list: endpoint().get("").cache(CacheOptions::new()),
        create: endpoint().post(""),
        attach: endpoint().post("/attach"),
    })
    .prefix("/todos");
    let account = Group::new(Account {
        login: endpoint().post("/login").session(SessionMode::Unguarded),
    });
    let live = Group::new(Live {
        clock: stream().implement(|()| {
            futures_util::stream::iter(1..).then(|n| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Event::new(Tick { n }).id(n.to_string())
            })
        }),
        chat: channel().implement_handlers(ChannelHandlers::on_message(
            |peer: ChannelPeer<Said, String>, said: Said| async move { peer.publish(&said) },
        )),
    });
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .expose(true)
        .session(
            SessionOptions::new()
                .cookies(["sid"])
                .csrf("csrf_token", "x-csrf-token")
                .pass_set_cookie(true),
        )
        .build_typed(App {
            todos,
            account,
            live,
        })
}

/// The embedded backend: to-dos in memory, a sign-in that sets the session and CSRF cookies,
/// and an upload that reports what it got.
fn backend() -> Router {
    let todos = Arc::new(Mutex::new(vec![Todo {
        id: 1,
        title: "open this page".into(),
    }]));
    Router::new()
        .route("/todos", get(list).post(create))
        .route("/todos/attach", post(attach))
        .route("/login", post(login))
        .with_state(todos)
}

type Store = Arc<Mutex<Vec<Todo>>>;

async fn list(State(todos): State<Store>) -> Json<Vec<Todo>> {
    Json(todos.lock().map(|t| t.clone()).unwrap_or_default())
}

async fn create(State(todos): State<Store>, Json(new): Json<NewTodo>) -> Response {
    let Ok(mut todos) = todos.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let todo = Todo {
        id: todos.len() + 1,
        title: new.title,
    };
    todos.push(todo.clone());
    (StatusCode::CREATED, Json(todo)).into_response()
}

async fn attach(mut form: Multipart) -> Json<Value> {
    let mut parts = Vec::new();
    while let Ok(Some(field)) = form.next_field().await {
        let name = field.file_name().unwrap_or("").to_owned();
        let size = field.bytes().await.map(|b| b.len()).unwrap_or(0);
        parts.push(json!({ "file": name, "bytes": size }));
    }
    Json(json!({ "received": parts }))
}

async fn login(Json(who): Json<SignIn>) -> Response {
    let token: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    (
        [
            (
                header::SET_COOKIE,
                format!("sid={}; Path=/; HttpOnly; SameSite=Lax", who.user),
            ),
            (
                header::SET_COOKIE,
                format!("csrf_token={token:x}; Path=/; SameSite=Lax"),
            ),
        ],
        Json(who),
    )
        .into_response()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen: SocketAddr = match std::env::args().skip_while(|a| a != "--listen").nth(1) {
        Some(addr) => addr.parse()?,
        None => SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));

    let backend_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let backend_addr = backend_listener.local_addr()?;
    tokio::spawn(async move { axum::serve(backend_listener, backend()).await });

    let api = api(backend_addr)?.into_def();
    let routes = Routes::from_api("demo", &api);
    let proxy = Proxy::new()
        .source("demo", api)
        .ws_path("/api/ws")
        .static_dir(root.join("examples/browser"));
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let dist = root.join("js/dist");
    let served = tokio::spawn(proxy.serve_with(listener, move |router| {
        router
            .route("/routes.json", get(move || async move { Json(routes) }))
            .nest_service("/pkg", tower_http::services::ServeDir::new(dist))
    }));
    println!("open http://{addr}/ (Ctrl-C to stop)");
    tokio::signal::ctrl_c().await?;
    stop.begin();
    served.await??;
    Ok(())
}
