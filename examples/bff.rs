//! A backend-for-frontend, whole: an axum app in front of a to-do API (embedded here, on
//! 127.0.0.1), where
//!
//! - the app's own handlers call the API with a typed `Caller` (`GET /summary`), and a failed
//!   call is their response (`?` on a `courier::Error`);
//! - the browser calls it too, through courier's `Proxy` mounted on the same app and **sharing
//!   the handlers' client** (one connection pool, one cache, one coalescing map, one hub);
//! - a sign-in route issues the session itself (`POST /login`: a signed, `HttpOnly` session
//!   cookie and a CSRF token, `SessionCookies`), which every call then carries upstream — the
//!   handlers' calls too, through `ContextLayer`;
//! - the page (`examples/bff/`) uses the browser package: a typed read, a write with the CSRF
//!   token, a stream and a chat room that the app implements itself.
//!
//! ```sh
//! (cd js && npm ci && npm run build)     # the browser package, once
//! cargo run --example bff                # prints the address to open
//! ```

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use courier::layers::context::ContextLayer;
use courier::layers::session::{IssueRefused, IssuedSession, SessionCookies};
use courier::live::Event;
use courier::options::{CsrfKey, SessionOptions};
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{
    channel, endpoint, stream, Channel, ChannelHandlers, ChannelPeer, Group, Http, Mutation, Stream,
};
use courier::{ApiDef, Caller};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Todo {
    id: usize,
    title: String,
    owner: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct NewTodo {
    title: String,
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
}

#[derive(courier::Group)]
struct Live {
    clock: Stream<Tick>,
    chat: Channel<Said, String, Said>,
}

#[derive(courier::Api)]
struct App {
    todos: Group<Todos>,
    live: Group<Live>,
}

/// The session: the `sid` cookie, and a CSRF token signed for it with the app's key.
fn session(key: &CsrfKey) -> SessionOptions {
    SessionOptions::new()
        .cookies(["sid"])
        .csrf_signed("csrf_token", "x-csrf-token", key.clone())
}

/// The API: the to-dos on the backend (exposed to the browser), a clock and a chat room the app
/// serves itself.
fn api(
    backend: SocketAddr,
    key: &CsrfKey,
) -> Result<courier::Api<App>, courier::ConfigurationError> {
    let todos = Group::new(Todos {
        list: endpoint().get(""),
        create: endpoint().post(""),
    })
    .prefix("/todos");
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
        .session(session(key))
        .build_typed(App { todos, live })
}

/// The app server's state: the typed caller its handlers use, and the session's options.
#[derive(Clone)]
struct AppState {
    caller: Caller<App>,
    session: Arc<SessionOptions>,
}

#[derive(Deserialize)]
struct SignIn {
    user: String,
}

#[derive(Serialize)]
struct SignedIn {
    user: String,
}

/// `POST /login`: the session, issued by the app (a real app checks a password first).
async fn login(
    State(state): State<AppState>,
    Json(who): Json<SignIn>,
) -> Result<(IssuedSession, Json<SignedIn>), IssueRefused> {
    let issued = SessionCookies::new(&state.session)
        .cookie("sid", who.user.clone())
        .max_age(Duration::from_secs(8 * 3600))
        .issue()?;
    Ok((issued, Json(SignedIn { user: who.user })))
}

/// `POST /logout`: the session's cookies, expired.
async fn logout(State(state): State<AppState>) -> (IssuedSession, &'static str) {
    (SessionCookies::clear(&state.session), "signed out")
}

#[derive(Serialize)]
struct Summary {
    count: usize,
    mine: usize,
}

/// `GET /summary`: a handler that calls the API itself, as the signed-in user (`ContextLayer`
/// puts the request in scope; the session layer carries its `sid` upstream). A failed call is
/// the response: the backend's own error, or 502 / 504.
async fn summary(State(state): State<AppState>) -> Result<Json<Summary>, courier::Error> {
    let todos = state.caller.todos().list().await?;
    let me = courier::layers::context::ServedRequest::current()
        .and_then(|served| cookie(served.parts().headers.get("cookie")?.to_str().ok()?, "sid"));
    Ok(Json(Summary {
        count: todos.len(),
        mine: todos
            .iter()
            .filter(|t| Some(&t.owner) == me.as_ref())
            .count(),
    }))
}

fn cookie(header: &str, name: &str) -> Option<String> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_owned())
}

/// The embedded to-do backend: it trusts the `sid` cookie it is sent as the user.
fn backend() -> Router {
    type Store = Arc<Mutex<Vec<Todo>>>;
    let todos: Store = Arc::new(Mutex::new(vec![Todo {
        id: 1,
        title: "open this page".into(),
        owner: "courier".into(),
    }]));
    async fn list(State(todos): State<Store>) -> Json<Vec<Todo>> {
        Json(todos.lock().map(|t| t.clone()).unwrap_or_default())
    }
    async fn create(
        State(todos): State<Store>,
        headers: axum::http::HeaderMap,
        Json(new): Json<NewTodo>,
    ) -> Result<Json<Todo>, (axum::http::StatusCode, &'static str)> {
        let unauthorized = (axum::http::StatusCode::UNAUTHORIZED, "sign in first");
        let owner = headers
            .get("cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| cookie(v, "sid"))
            .ok_or(unauthorized)?;
        let mut todos = todos.lock().map_err(|_| unauthorized)?;
        let todo = Todo {
            id: todos.len() + 1,
            title: new.title,
            owner,
        };
        todos.push(todo.clone());
        Ok(Json(todo))
    }
    Router::new()
        .route("/todos", get(list).post(create))
        .with_state(todos)
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

    // The key the CSRF tokens are signed with: random per run here; a real app keeps one
    // secret (`key_env` in courier.toml) so that tokens outlive a restart.
    let mut key = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
    let key = CsrfKey::new(key);
    let api = api(backend_addr, &key)?;
    let routes = Routes::from_api("demo", api.def());
    let caller = Caller::new(api)?;
    let state = AppState {
        caller: caller.clone(),
        session: Arc::new(session(&key)),
    };

    // The proxy calls with the handlers' own client: one pool, cache and hub for both.
    let proxy = Proxy::new()
        .source_client("demo", caller.client().clone())
        .ws_path("/api/ws")
        .static_dir(root.join("examples/bff"))
        // The browser package's modules, from inside the binary: the page imports `/pkg/index.js`.
        .browser_package("/pkg");
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    // The app's own routes, beside the proxy's.
    let own = Router::new()
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/summary", get(summary))
        .with_state(state);
    let served = tokio::spawn(proxy.serve_with(listener, move |router| {
        router
            .merge(own)
            .route("/routes.json", get(move || async move { Json(routes) }))
            // The served request in scope for the handlers' calls.
            .layer(ContextLayer::new())
    }));
    println!("open http://{addr}/ (Ctrl-C to stop)");
    tokio::signal::ctrl_c().await?;
    stop.begin();
    served.await??;
    Ok(())
}
