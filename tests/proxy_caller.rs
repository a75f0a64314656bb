//! `ProxyCaller` end to end: a typed caller → `courier::server::Proxy` → an axum backend, all on
//! 127.0.0.1. Every rule of the proxy caller: the two forms, GET or POST, forced verbs, the
//! address limit, forms, errors raised before sending, timeouts (the caller's kept, a call's
//! sent), coalescing and deduplication, hooks, the cookie jar, upload progress, streams and
//! channels; and that a proxied call resolves to what the direct call does.

use axum::extract::{Multipart, Path, Query, Request};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use courier::client::Credentials;
use courier::config::ProxyPaths;
use courier::encode::{FilePart, Form};
use courier::error::ErrorCode;
use courier::live::Event;
use courier::options::{CacheOptions, ResponseType};
use courier::routes::Routes;
use courier::server::Proxy;
use courier::typed::{
    channel, endpoint, stream, Channel, ChannelHandlers, ChannelPeer, Group, Http, Mutation, Stream,
};
use courier::ProxyCaller;
use courier::{ApiDef, CallOptions, Caller};
use courier_test_support::serve;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[derive(Serialize)]
struct UserId(u64);

#[derive(Serialize)]
struct Search {
    q: String,
}

#[derive(Serialize)]
struct NewUser {
    name: String,
}

#[derive(Serialize)]
struct Login {
    user: String,
    password: String,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Token {
    token: String,
}

/// Variables holding raw bytes, which JSON cannot carry.
struct Blob(&'static [u8]);

impl Serialize for Blob {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[derive(Serialize)]
struct Upload {
    name: String,
    data: Blob,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tick {
    n: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Said {
    room: String,
    text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Say {
    text: String,
}

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    search: Http<Vec<User>, Search>,
    create: Http<User, NewUser, Mutation>,
    login: Http<Token, Login>,
    avatar: Http<Value, Form, Mutation>,
    upload: Http<Value, Upload, Mutation>,
    greeting: Http<String>,
    /// Read as text whatever its content type says (`response_type(Text)`).
    as_text: Http<String>,
    /// Read as JSON (the default), though its upstream answers text.
    not_json: Http<Value>,
    missing: Http<Value, UserId>,
    slow: Http<Value>,
    set_session: Http<Value>,
    whoami: Http<Value>,
    ticks: Stream<Tick, u64>,
    room: Channel<Said, String, Say>,
    guarded: Channel<Said, String, Say>,
}

#[derive(courier::Group)]
struct Admin {
    purge: Http<Value, (), Mutation>,
}

#[derive(courier::Api)]
struct Demo {
    users: Group<Users>,
    admin: Group<Admin>,
}

fn api(backend: SocketAddr) -> courier::Api<Demo> {
    api_with(backend, |source| source)
}

/// The API, with what `source` adds to its source options.
fn api_with(
    backend: SocketAddr,
    source: impl FnOnce(courier::ApiBuilder) -> courier::ApiBuilder,
) -> courier::Api<Demo> {
    let users = Group::new(Users {
        get: endpoint().get("/:id").cache(CacheOptions::new()),
        search: endpoint().get("/search"),
        create: endpoint().post(""),
        login: endpoint()
            .post("/login")
            .reads()
            .cache(CacheOptions::new())
            .sensitive_variables(),
        avatar: endpoint().post("/:id/avatar"),
        upload: endpoint().post("/upload"),
        greeting: endpoint()
            .get("/greeting")
            .response_type(ResponseType::Text),
        as_text: endpoint().get("/as-text").response_type(ResponseType::Text),
        not_json: endpoint().get("/not-json"),
        missing: endpoint().get("/missing/:id"),
        slow: endpoint().get("/slow"),
        set_session: endpoint().get("/session").headers(["set-cookie"]),
        whoami: endpoint().get("/whoami").headers(["cookie"]),
        ticks: stream().implement(|every: u64| {
            futures_util::stream::iter(
                (1..=3).map(move |n| Event::new(Tick { n: n * every }).id(n.to_string())),
            )
        }),
        room: channel().implement_handlers(ChannelHandlers::on_message(
            |peer: ChannelPeer<Said, String>, say: Say| async move {
                peer.publish(&Said {
                    room: peer.variables().clone(),
                    text: say.text,
                })
            },
        )),
        guarded: channel().implement_handlers(
            ChannelHandlers::on_message(|_: ChannelPeer<Said, String>, _: Say| async { Ok(()) })
                .on_join(|peer: ChannelPeer<Said, String>| async move {
                    let token = peer.auth().and_then(|a| a.get("token")).cloned();
                    match token.as_ref().and_then(Value::as_str) {
                        Some("let-me-in") => peer.send(&Said {
                            room: peer.variables().clone(),
                            text: "welcome".into(),
                        }),
                        _ => Err("no valid token".into()),
                    }
                }),
        ),
    })
    .prefix("/users")
    .expose(true);
    let admin = Group::new(Admin {
        purge: endpoint().post("/purge"),
    });
    source(
        ApiDef::builder()
            .base_url(format!("http://{backend}"))
            .cancel_previous(["users.search"]),
    )
    .build_typed(Demo { users, admin })
    .expect("a valid definition")
}

/// What reached a server: method, path and query, and the body as text.
type Seen = Arc<Mutex<Vec<String>>>;

async fn backend(seen: Seen) -> SocketAddr {
    let app = Router::new()
        .route(
            "/users/{id}",
            get(|Path(id): Path<u64>| async move {
                Json(json!({ "id": id, "name": format!("user {id}") }))
            }),
        )
        .route(
            "/users/search",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                tokio::time::sleep(Duration::from_millis(150)).await;
                let name = q.get("q").cloned().unwrap_or_default();
                Json(json!([{ "id": 1, "name": name }]))
            }),
        )
        .route(
            "/users",
            post(|Json(v): Json<Value>| async move { Json(json!({ "id": 2, "name": v["name"] })) }),
        )
        .route(
            "/users/login",
            post(|Json(v): Json<Value>| async move {
                Json(json!({ "token": format!("t-{}", v["user"].as_str().unwrap_or("")) }))
            }),
        )
        .route(
            "/users/{id}/avatar",
            post(|Path(id): Path<u64>, mut form: Multipart| async move {
                let mut parts = Vec::new();
                while let Ok(Some(field)) = form.next_field().await {
                    let name = field.name().unwrap_or_default().to_owned();
                    let file = field.file_name().map(str::to_owned);
                    let len = field.bytes().await.map(|b| b.len()).unwrap_or(0);
                    parts.push(json!([name, file, len]));
                }
                Json(json!({ "id": id, "parts": parts }))
            }),
        )
        .route("/users/greeting", get(|| async { "hello" }))
        .route("/users/as-text", get(|| async { Json(json!({ "a": 1 })) }))
        .route("/users/not-json", get(|| async { "plain words" }))
        .route(
            "/users/missing/{id}",
            get(|| async {
                (
                    StatusCode::NOT_FOUND,
                    Json(json!({ "error": "no such user" })),
                )
            }),
        )
        .route(
            "/users/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(600)).await;
                Json(json!("late"))
            }),
        )
        .route(
            "/users/session",
            get(|| async {
                (
                    [("set-cookie", "sid=abc; Path=/; HttpOnly")],
                    Json(json!("signed in")),
                )
            }),
        )
        .route(
            "/users/whoami",
            get(|headers: HeaderMap| async move {
                let cookie = headers.get("cookie").and_then(|v| v.to_str().ok());
                Json(json!({ "cookie": cookie }))
            }),
        )
        .layer(axum::middleware::from_fn_with_state(seen, record));
    serve(app).await
}

async fn record(
    axum::extract::State(seen): axum::extract::State<Seen>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let kind = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .to_owned();
    let line = if kind == "multipart/form-data" {
        format!("{} {} <form>", parts.method, parts.uri)
    } else {
        format!(
            "{} {} {}",
            parts.method,
            parts.uri,
            String::from_utf8_lossy(&bytes)
        )
    };
    let mut line = line.trim_end().to_owned();
    if let Some(app) = parts.headers.get("x-app").and_then(|v| v.to_str().ok()) {
        line.push_str(&format!(" [x-app: {app}]"));
    }
    seen.lock().unwrap().push(line);
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
        .into_response()
}

/// A backend, a proxy in front of it (channels at `/api/ws`), and what each saw.
struct Setup {
    proxy: String,
    backend: SocketAddr,
    at_proxy: Seen,
    at_backend: Seen,
}

async fn setup() -> Setup {
    let at_backend = Seen::default();
    let backend = backend(at_backend.clone()).await;
    let at_proxy = Seen::default();
    let router = Proxy::new()
        .source("demo", api(backend).def().clone())
        .ws_path("/api/ws")
        .into_router()
        .unwrap()
        .layer(axum::middleware::from_fn_with_state(
            at_proxy.clone(),
            record,
        ));
    let proxy = serve(router).await;
    Setup {
        proxy: format!("http://{proxy}"),
        backend,
        at_proxy,
        at_backend,
    }
}

impl Setup {
    fn routes(&self) -> Routes {
        Routes::from_api("demo", api(self.backend).def())
    }

    fn routes_caller(&self) -> ProxyCaller<Demo> {
        ProxyCaller::<Demo>::routes(&self.proxy, self.routes())
            .proxy_path(ProxyPaths {
                ws: Some("/api/ws".into()),
                ..ProxyPaths::default()
            })
            .build()
            .unwrap()
    }

    fn source_caller(&self) -> ProxyCaller<Demo> {
        ProxyCaller::source(&self.proxy, "demo", api(self.backend))
            .build()
            .unwrap()
    }

    fn proxy_saw(&self) -> Vec<String> {
        std::mem::take(&mut *self.at_proxy.lock().unwrap())
    }

    fn backend_saw(&self) -> Vec<String> {
        std::mem::take(&mut *self.at_backend.lock().unwrap())
    }
}

fn code(error: &courier::Error) -> Option<ErrorCode> {
    error.configuration().map(|c| c.code())
}

#[tokio::test]
async fn a_proxied_call_resolves_to_what_the_direct_call_does() {
    let s = setup().await;
    let direct = Caller::new(api(s.backend)).unwrap();
    for caller in [s.routes_caller(), s.source_caller()] {
        let user = caller.users().get(UserId(7)).await.unwrap();
        assert_eq!(user, direct.users().get(UserId(7)).await.unwrap());
        let created = caller
            .users()
            .create(NewUser { name: "Ada".into() })
            .await
            .unwrap();
        assert_eq!(
            created,
            User {
                id: 2,
                name: "Ada".into()
            }
        );
        let hello: String = caller.users().greeting().await.unwrap();
        assert_eq!(hello, direct.users().greeting().await.unwrap());
        // JSON from the upstream, read as text by the definition: the same text either way
        // (the proxy's answer says `text/plain`, so the routes form reads it so too).
        let text: String = caller.users().as_text().await.unwrap();
        assert_eq!(text, r#"{"a":1}"#);
        assert_eq!(text, direct.users().as_text().await.unwrap());
        // Text from the upstream of an endpoint read as JSON: the same decode error either way
        // (the proxy's answer says `application/json`), not the text.
        let err = caller.users().not_json().await.unwrap_err();
        let direct_err = direct.users().not_json().await.unwrap_err();
        assert!(
            err.is_decode() && direct_err.is_decode(),
            "{err} / {direct_err}"
        );
        let whole = caller.users().raw().get(UserId(8)).await.unwrap();
        assert_eq!(whole.status, 200);
        assert_eq!(whole.headers["content-type"], "application/json");
        assert_eq!(whole.data.id, 8);

        let err = caller.users().missing(UserId(1)).await.unwrap_err();
        let direct_err = direct.users().missing(UserId(1)).await.unwrap_err();
        assert_eq!(err.status_code(), 404);
        assert_eq!(
            err.http_error().unwrap().data,
            direct_err.http_error().unwrap().data
        );
    }
}

#[tokio::test]
async fn reads_go_as_get_writes_and_sensitive_reads_as_post() {
    let s = setup().await;
    let routes = s.routes_caller();
    routes.users().get(UserId(7)).await.unwrap();
    routes
        .users()
        .search(Search { q: "ada".into() })
        .await
        .unwrap();
    routes
        .users()
        .create(NewUser { name: "Ada".into() })
        .await
        .unwrap();
    let token = routes
        .users()
        .login(Login {
            user: "ada".into(),
            password: "s3cret".into(),
        })
        .await
        .unwrap();
    assert_eq!(token.token, "t-ada");
    assert_eq!(
        s.proxy_saw(),
        [
            r#"GET /api/request?_s=demo&_g=users&_m=get&_v=7"#.to_owned(),
            // Not `.cache()`d: the routes say POST.
            r#"POST /api/request?_s=demo&_g=users&_m=search {"variables":{"q":"ada"}}"#.into(),
            r#"POST /api/request?_s=demo&_g=users&_m=create {"variables":{"name":"Ada"}}"#.into(),
            // Cached, but sensitive: never in an address.
            r#"POST /api/request?_s=demo&_g=users&_m=login {"variables":{"password":"s3cret","user":"ada"}}"#.into(),
        ]
    );

    // The source form: every read that is not sensitive goes as GET.
    let source = s.source_caller();
    source
        .users()
        .search(Search { q: "bo".into() })
        .await
        .unwrap();
    source
        .users()
        .login(Login {
            user: "bo".into(),
            password: "pw".into(),
        })
        .await
        .unwrap();
    let seen = s.proxy_saw();
    assert_eq!(
        seen[0],
        "GET /api/request?_s=demo&_g=users&_m=search&_v=%7B%22q%22%3A%22bo%22%7D"
    );
    assert!(seen[1].starts_with("POST /api/request?_s=demo&_g=users&_m=login "));
}

#[tokio::test]
async fn a_forced_verb_is_sent_and_the_proxy_judges_it() {
    let s = setup().await;
    let caller = s.routes_caller();
    // A read forced to POST works.
    let user = caller
        .users()
        .with(CallOptions::new().method(http::Method::POST))
        .get(UserId(3))
        .await
        .unwrap();
    assert_eq!(user.id, 3);
    // A write or a sensitive read forced to GET is refused with 405.
    let err = caller
        .users()
        .with(CallOptions::new().method(http::Method::GET))
        .create(NewUser { name: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 405);
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        "METHOD_NOT_ALLOWED"
    );
    let err = caller
        .users()
        .with(CallOptions::new().method(http::Method::GET))
        .login(Login {
            user: "a".into(),
            password: "b".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 405);
    let seen = s.proxy_saw();
    assert!(seen[0].starts_with("POST "));
    assert!(seen[1].starts_with("GET ") && seen[2].starts_with("GET "));
    // Only the read reached the backend.
    assert_eq!(s.backend_saw(), ["GET /users/3"]);
    // A verb other than GET or POST is refused before sending.
    let err = caller
        .users()
        .with(CallOptions::new().method(http::Method::PUT))
        .get(UserId(3))
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::InvalidOption));
    assert!(s.proxy_saw().is_empty());
}

#[tokio::test]
async fn a_long_address_goes_as_post() {
    let s = setup().await;
    let caller = s.source_caller();
    let long = "x".repeat(2100);
    let found = caller
        .users()
        .search(Search { q: long.clone() })
        .await
        .unwrap();
    assert_eq!(found[0].name, long);
    let short = caller
        .users()
        .search(Search {
            q: "x".repeat(1900),
        })
        .await
        .unwrap();
    assert_eq!(short.len(), 1);
    let seen = s.proxy_saw();
    assert!(seen[0].starts_with("POST /api/request?_s=demo&_g=users&_m=search {"));
    assert!(seen[1].starts_with("GET /api/request?_s=demo&_g=users&_m=search&_v="));
    assert!(seen[1].len() < 2100);
}

#[tokio::test]
async fn forms_go_as_multipart_and_reach_the_upstream_as_forms() {
    let s = setup().await;
    let caller = s.routes_caller();
    let seen_progress = Arc::new(Mutex::new(Vec::new()));
    let progress = seen_progress.clone();
    let form = Form::new().text("id", "5").text("title", "Holiday").file(
        "photo",
        FilePart::new(vec![7u8; 100_000])
            .filename("beach.png")
            .content_type("image/png"),
    );
    let answer = caller
        .users()
        .with(CallOptions::new().on_upload_progress(move |p| {
            progress.lock().unwrap().push(p.percent);
        }))
        .avatar(form)
        .await
        .unwrap();
    assert_eq!(
        answer,
        json!({ "id": 5, "parts": [["title", null, 7], ["photo", "beach.png", 100000]] })
    );
    let progress = seen_progress.lock().unwrap().clone();
    assert_eq!(
        progress.last(),
        Some(&1.0),
        "progress ends at 1.0: {progress:?}"
    );
    assert!(progress.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(
        s.proxy_saw(),
        ["POST /api/request?_s=demo&_g=users&_m=avatar <form>"]
    );
    assert!(s.backend_saw()[0].ends_with("/avatar <form>"));
}

#[tokio::test]
async fn a_form_or_a_watched_upload_forced_to_get_is_refused_before_sending() {
    let s = setup().await;
    let caller = s.routes_caller();
    let form = || Form::new().text("id", "5").text("title", "Holiday");
    let err = caller
        .users()
        .with(CallOptions::new().method(http::Method::GET))
        .avatar(form())
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::InvalidOption), "{err}");
    assert!(err.to_string().contains("form"), "{err}");
    let err = caller
        .users()
        .with(
            CallOptions::new()
                .method(http::Method::GET)
                .on_upload_progress(|_| {}),
        )
        .get(UserId(3))
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::InvalidOption), "{err}");
    assert!(err.to_string().contains("upload"), "{err}");
    assert!(s.proxy_saw().is_empty(), "nothing reached the proxy");
    assert!(s.backend_saw().is_empty());
}

#[tokio::test]
async fn a_streamed_file_goes_through_the_proxy_as_it_is_read() {
    let s = setup().await;
    let caller = s.routes_caller();
    let chunks =
        futures_util::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(vec![7u8; 10_000])));
    let form = Form::new().text("id", "5").text("title", "Holiday").file(
        "photo",
        FilePart::streamed(courier::transport::Body::from_stream(chunks))
            .filename("beach.png")
            .content_type("image/png"),
    );
    let answer = caller.users().avatar(form).await.unwrap();
    assert_eq!(
        answer,
        json!({ "id": 5, "parts": [["title", null, 7], ["photo", "beach.png", 100000]] })
    );
}

#[tokio::test]
async fn what_cannot_be_sent_is_refused_before_sending() {
    let s = setup().await;
    let caller = s.routes_caller();

    // Not in the routes: the group is not exposed, so the routes leave it out.
    let err = caller.admin().purge().await.unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::EndpointNotInRoutes));
    // Nor in the source form, which knows the definition.
    let err = s.source_caller().admin().purge().await.unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::EndpointNotInRoutes));

    // Raw bytes cannot travel as JSON.
    let err = caller
        .users()
        .upload(Upload {
            name: "a.bin".into(),
            data: Blob(b"\x00\x01"),
        })
        .await
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::ProxyVariableNotSerializable));
    assert!(err.to_string().contains("variables.data"), "{err}");

    // No `ws` path: a channel cannot be reached.
    let no_ws = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .build()
        .unwrap();
    let err = no_ws.users().room("lobby".into()).await.unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::WsPathNotConfigured));

    assert!(s.proxy_saw().is_empty(), "nothing reached the proxy");
}

#[tokio::test]
async fn the_callers_timeout_stays_home_and_a_calls_own_is_sent() {
    let s = setup().await;
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .timeout(Duration::from_millis(150))
        .build()
        .unwrap();
    let err = caller.users().slow().await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let seen = s.proxy_saw();
    assert!(!seen[0].contains("_t="), "{seen:?}");

    // A call's own timeout is sent, and bounds the upstream call at the proxy.
    let caller = s.routes_caller();
    let err = caller
        .users()
        .with(CallOptions::new().timeout(Duration::from_millis(200)))
        .slow()
        .await
        .unwrap_err();
    assert!(
        err.is_timeout() || err.status_code() == 504,
        "a timeout, at the caller or the proxy: {err}"
    );
    let seen = s.proxy_saw();
    assert!(seen[0].contains("&_t=200"), "{seen:?}");
    // Longer than the call: it completes.
    let late: Value = caller
        .users()
        .with(CallOptions::new().timeout(Duration::from_secs(5)))
        .slow()
        .await
        .unwrap();
    assert_eq!(late, "late");
}

#[tokio::test]
async fn identical_reads_reach_the_proxy_once_and_deduplicate_cancels_the_older() {
    let s = setup().await;
    let caller = s.routes_caller();
    let calls = (0..5).map(|_| caller.users().get(UserId(9)).into_future());
    let users = futures_util::future::join_all(calls).await;
    assert!(users.iter().all(|u| u.as_ref().unwrap().id == 9));
    assert_eq!(s.proxy_saw().len(), 1);

    // `users.search` is the source's cancel_previous: the newer search cancels the older.
    let first = caller.users().search(Search { q: "a".into() });
    let second = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        caller.users().search(Search { q: "ab".into() }).await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap_err().status_code(), 499);
    assert_eq!(second.unwrap()[0].name, "ab");

    // Not listed, `users.get` is cancelled only with `deduplicate`.
    let dedup = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .deduplicate(true)
        .coalesce(false)
        .build()
        .unwrap();
    let first = dedup.users().slow();
    let second = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        dedup.users().slow().await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap_err().status_code(), 499);
    assert_eq!(second.unwrap(), "late");

    // The source form takes the source's own `deduplicate` as its default.
    let source = api_with(s.backend, |source| source.deduplicate(true));
    let from_source = ProxyCaller::source(&s.proxy, "demo", source)
        .coalesce(false)
        .build()
        .unwrap();
    let first = from_source.users().slow();
    let second = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        from_source.users().slow().await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap_err().status_code(), 499);
    assert_eq!(second.unwrap(), "late");
}

#[tokio::test]
async fn a_deduplicating_source_cancels_the_older_read_in_the_direct_client_too() {
    let s = setup().await;
    let caller = Caller::new(api_with(s.backend, |source| source.deduplicate(true))).unwrap();
    let first = caller
        .users()
        .with(CallOptions::new().coalesce(false))
        .slow();
    let second = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        caller
            .users()
            .with(CallOptions::new().coalesce(false))
            .slow()
            .await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap_err().status_code(), 499);
    assert_eq!(second.unwrap(), "late");
}

#[tokio::test]
async fn hooks_see_every_success_and_every_http_error() {
    let s = setup().await;
    let successes = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(AtomicUsize::new(0));
    let (ok, failed) = (successes.clone(), errors.clone());
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .on_success(move |success| {
            let id = success.data.downcast_ref::<User>().map(|u| u.id);
            ok.lock()
                .unwrap()
                .push((success.endpoint.to_owned(), success.status.as_u16(), id));
        })
        .on_error(move |error| {
            assert_eq!(error.status_code(), 404);
            failed.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    caller.users().get(UserId(4)).await.unwrap();
    caller.users().missing(UserId(4)).await.unwrap_err();
    // An error with no status (refused before sending) is not an HTTP error.
    caller.admin().purge().await.unwrap_err();
    assert_eq!(
        *successes.lock().unwrap(),
        [("users.get".to_owned(), 200, Some(4))]
    );
    assert_eq!(errors.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn on_error_hears_a_stream_or_a_channel_refused_with_a_status() {
    let s = setup().await;
    let refused = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&refused);
    // A record naming a source the proxy does not serve: every opening is refused 404.
    let mut routes = s.routes();
    routes.source = "elsewhere".into();
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, routes)
        .proxy_path(ProxyPaths {
            ws: Some("/api/ws".into()),
            ..ProxyPaths::default()
        })
        .on_error(move |error| {
            let endpoint = error.endpoint().unwrap_or_default().to_owned();
            heard.lock().unwrap().push((endpoint, error.status_code()));
        })
        .build()
        .unwrap();
    let stream = caller.users().ticks(10).await.unwrap_err();
    assert_eq!(stream.status_code(), 404, "{stream}");
    let channel = caller.users().room("lobby".into()).await.unwrap_err();
    assert_eq!(channel.status_code(), 404, "{channel}");
    assert_eq!(
        *refused.lock().unwrap(),
        [
            ("users.ticks".to_owned(), 404),
            ("users.room".to_owned(), 404)
        ]
    );
}

#[tokio::test]
async fn the_builders_cancel_previous_names_reads_of_the_routes() {
    let s = setup().await;
    for (path, why) in [
        ("users.nope", "do not name"),
        ("users.create", "writes"),
        ("users.ticks", "stream or channel"),
    ] {
        let err = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
            .cancel_previous([path])
            .build()
            .unwrap_err();
        assert_eq!(code(&err), Some(ErrorCode::CancelPreviousInvalid), "{err}");
        assert!(
            err.to_string().contains(path) && err.to_string().contains(why),
            "{err}"
        );
    }
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .cancel_previous(["users.search", "users.get"])
        .build();
    assert!(caller.is_ok(), "reads are accepted");
}

#[tokio::test]
async fn a_records_sensitive_list_wins_over_its_get() {
    let s = setup().await;
    // A record written by hand that says `get: true` for a read it also lists as sensitive.
    let mut routes = s.routes();
    routes.sensitive.push("users.get".into());
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, routes)
        .build()
        .unwrap();
    assert_eq!(caller.users().get(UserId(3)).await.unwrap().id, 3);
    let seen = s.proxy_saw();
    assert!(
        seen[0].starts_with("POST /api/request?_s=demo&_g=users&_m=get "),
        "a sensitive read never goes in an address: {seen:?}"
    );
}

#[tokio::test]
async fn on_error_sees_network_failures_and_timeouts_as_status_0() {
    let s = setup().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hooks = |seen: &Arc<Mutex<Vec<(u16, bool)>>>| {
        let seen = Arc::clone(seen);
        move |error: &courier::Error| {
            seen.lock()
                .unwrap()
                .push((error.status_code(), error.is_timeout()));
        }
    };

    // A timeout: the caller's bound passes before the slow upstream answers.
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .timeout(Duration::from_millis(150))
        .on_error(hooks(&seen))
        .build()
        .unwrap();
    assert!(caller.users().slow().await.unwrap_err().is_timeout());

    // A network failure: nothing listens where the proxy should be.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let nowhere = ProxyCaller::<Demo>::routes(format!("http://{closed}/api"), s.routes())
        .on_error(hooks(&seen))
        .build()
        .unwrap();
    assert!(nowhere
        .users()
        .get(UserId(4))
        .await
        .unwrap_err()
        .is_network());

    assert_eq!(*seen.lock().unwrap(), [(0, true), (0, false)]);
}

#[tokio::test]
async fn the_cookie_jar_keeps_what_the_proxy_sets() {
    let s = setup().await;
    let caller = s.routes_caller();
    let before: Value = caller.users().whoami().await.unwrap();
    assert_eq!(before["cookie"], Value::Null);
    caller.users().set_session().await.unwrap();
    let after: Value = caller.users().whoami().await.unwrap();
    assert_eq!(after["cookie"], "sid=abc");

    let omit = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .credentials(Credentials::Omit)
        .build()
        .unwrap();
    omit.users().set_session().await.unwrap();
    let after: Value = omit.users().whoami().await.unwrap();
    assert_eq!(after["cookie"], Value::Null);
}

#[tokio::test]
async fn default_headers_go_with_every_call() {
    let s = setup().await;
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .header("x-app", "courier-test")
        .build()
        .unwrap();
    let user = caller.users().get(UserId(1)).await.unwrap();
    assert_eq!(user.id, 1);
    caller
        .users()
        .with(CallOptions::new().header(
            http::HeaderName::from_static("x-app"),
            http::HeaderValue::from_static("own"),
        ))
        .get(UserId(2))
        .await
        .unwrap();
    let seen = s.proxy_saw();
    assert!(seen[0].ends_with("[x-app: courier-test]"), "{seen:?}");
    assert!(
        seen[1].ends_with("[x-app: own]"),
        "a call's own header wins: {seen:?}"
    );
    let bad = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .header("bad header", "x")
        .build()
        .unwrap_err();
    assert_eq!(code(&bad), Some(ErrorCode::InvalidOption));
}

#[tokio::test]
async fn streams_and_channels_through_the_proxy() {
    let s = setup().await;
    for caller in [s.routes_caller(), s.source_caller_with_ws()] {
        let ticks: Vec<Tick> = tokio::time::timeout(Duration::from_secs(10), async {
            caller
                .users()
                .ticks(10)
                .await
                .unwrap()
                .map(|e| e.unwrap().data)
                .collect()
                .await
        })
        .await
        .unwrap();
        assert_eq!(ticks, [Tick { n: 10 }, Tick { n: 20 }, Tick { n: 30 }]);

        let room = caller.users().room("lobby".into()).await.unwrap();
        room.send(Say { text: "hi".into() }).unwrap();
        let said = tokio::time::timeout(Duration::from_secs(10), room.skip(0).next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            said,
            Said {
                room: "lobby".into(),
                text: "hi".into()
            }
        );
    }
    let seen = s.proxy_saw();
    assert!(seen
        .iter()
        .any(|l| l.starts_with("GET /api/sse?_s=demo&_g=users&_m=ticks&_v=10")));
    assert!(seen
        .iter()
        .any(|l| l.starts_with("GET /api/ws?_s=demo&_g=users&_m=room&_v=%22lobby%22")));
}

impl Setup {
    fn source_caller_with_ws(&self) -> ProxyCaller<Demo> {
        ProxyCaller::source(&self.proxy, "demo", api(self.backend))
            .proxy_path(ProxyPaths {
                ws: Some(format!("{}/api/ws", self.proxy)),
                ..ProxyPaths::default()
            })
            .build()
            .unwrap()
    }
}

#[tokio::test]
async fn routes_read_from_json_make_a_caller() {
    let s = setup().await;
    let json = s.routes().to_json();
    let routes: Routes = serde_json::from_str(&json).unwrap();
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, routes)
        .build()
        .unwrap();
    assert_eq!(caller.users().get(UserId(5)).await.unwrap().id, 5);
    // A hand-written record with a route that names no group is refused.
    let bad: Routes = serde_json::from_value(
        json!({ "source": "demo", "endpoints": { "get": { "type": "query" } } }),
    )
    .unwrap();
    let err = ProxyCaller::<Demo>::routes(&s.proxy, bad)
        .build()
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::DottedName));
}

#[tokio::test]
async fn the_proxy_refuses_what_the_routes_do_not_name_even_past_the_caller() {
    let s = setup().await;
    // A caller whose (hand-edited) routes name an endpoint the server does not expose.
    let mut routes = s.routes();
    routes.endpoints.insert(
        "admin.purge".into(),
        courier::routes::RouteShape::Mutation {
            idempotency_key: false,
        },
    );
    let caller = ProxyCaller::<Demo>::routes(&s.proxy, routes)
        .build()
        .unwrap();
    let err = caller.admin().purge().await.unwrap_err();
    assert_eq!(err.status_code(), 404);
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        "ENDPOINT_NOT_IN_ROUTES"
    );
    assert!(s.backend_saw().is_empty());
}

#[tokio::test]
async fn a_caller_with_no_proxy_is_a_network_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let routes = Routes::from_api("demo", api(addr).def());
    let caller = ProxyCaller::<Demo>::routes(format!("http://{addr}"), routes)
        .build()
        .unwrap();
    let err = caller.users().get(UserId(1)).await.unwrap_err();
    assert!(err.is_network(), "{err}");
    assert_eq!(err.status_code(), 0);
    let err = ProxyCaller::<Demo>::routes("not a url", Routes::from_api("demo", api(addr).def()))
        .build()
        .unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::InvalidOption));
}

#[tokio::test]
async fn ws_auth_goes_in_the_first_frame_and_on_join_judges_it() {
    let s = setup().await;
    let paths = ProxyPaths {
        ws: Some("/api/ws".into()),
        ..ProxyPaths::default()
    };
    let mut params = serde_json::Map::new();
    params.insert("token".into(), json!("let-me-in"));
    let ws = courier::options::WsOptions::new().auth(courier::options::WsAuth::Params(params));
    let admitted = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .proxy_path(paths.clone())
        .ws(ws)
        .build()
        .unwrap();
    let mut guarded = admitted.users().guarded("vault".into()).await.unwrap();
    let welcome = tokio::time::timeout(Duration::from_secs(10), guarded.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(welcome.text, "welcome");
    // Announced in the handshake: the server read the hello before joining.
    assert!(s
        .proxy_saw()
        .iter()
        .any(|l| l.starts_with("GET /api/ws?_s=demo&_g=users&_m=guarded&_v=%22vault%22&_h=1")));

    let refused = ProxyCaller::<Demo>::routes(&s.proxy, s.routes())
        .proxy_path(paths)
        .build()
        .unwrap();
    let mut guarded = refused.users().guarded("vault".into()).await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(10), guarded.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.close().map(|c| c.code), Some(1008), "{err}");
}

#[tokio::test]
async fn variables_that_do_not_fit_a_typed_channel_refuse_the_subscriber() {
    // In process: the hub checks them before joining.
    let client =
        courier::Client::new(api(SocketAddr::from(([127, 0, 0, 1], 9))).def().clone()).unwrap();
    let err = client
        .channel("users.room", json!({ "not": "a string" }), None)
        .await
        .unwrap_err();
    assert_eq!(err.close().map(|c| c.code), Some(1008), "{err}");

    // Over the wire: closed with 1008, so the client does not reconnect.
    let s = setup().await;
    let addr = s.proxy.trim_start_matches("http://");
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let url = format!("ws://{addr}/api/ws?_s=demo&_g=users&_m=room&_v=42");
    let (mut socket, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match closed {
        tokio_tungstenite::tungstenite::Message::Close(Some(frame)) => {
            assert_eq!(u16::from(frame.code), 1008);
            assert!(frame.reason.contains("do not fit"), "{}", frame.reason);
        }
        other => panic!("expected a close frame, got {other:?}"),
    }
}

// ---- a source with a session, through the proxy --------------------------------------------

#[derive(courier::Group)]
struct Account {
    login: Http<Value>,
    me: Http<Value>,
    rename: Http<Value, NewUser, Mutation>,
}

#[derive(courier::Api)]
struct Secure {
    account: Group<Account>,
}

fn secure_api(backend: SocketAddr) -> courier::Api<Secure> {
    let account = Group::new(Account {
        login: endpoint().get("/login"),
        me: endpoint().get("/whoami"),
        rename: endpoint().post("/rename"),
    })
    .prefix("/users")
    .expose(true);
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .session(
            courier::options::SessionOptions::new()
                .cookies(["sid", "csrf_token"])
                .csrf("csrf_token", "x-csrf-token")
                .pass_set_cookie(true),
        )
        .build_typed(Secure { account })
        .expect("a valid definition")
}

#[tokio::test]
async fn the_browsers_session_crosses_the_proxy_and_writes_repeat_the_csrf_token() {
    let app = Router::new()
        .route(
            "/users/login",
            get(|| async {
                (
                    axum::response::AppendHeaders([
                        ("set-cookie", "sid=s1; Path=/"),
                        ("set-cookie", "csrf_token=tok; Path=/"),
                    ]),
                    Json(json!("signed in")),
                )
            }),
        )
        .route(
            "/users/whoami",
            get(|headers: HeaderMap| async move {
                let cookie = headers.get("cookie").and_then(|v| v.to_str().ok());
                Json(json!({ "cookie": cookie }))
            }),
        )
        .route(
            "/users/rename",
            post(|Json(v): Json<Value>| async move { Json(v) }),
        );
    let backend = serve(app).await;
    let router = Proxy::new()
        .source("secure", secure_api(backend).def().clone())
        .into_router()
        .unwrap();
    let proxy = format!("http://{}", serve(router).await);
    let routes = Routes::from_api("secure", secure_api(backend).def());
    let caller = ProxyCaller::<Secure>::routes(&proxy, routes)
        .build()
        .unwrap();

    // No session yet: the upstream sees no cookie.
    let me: Value = caller.account().me().await.unwrap();
    assert_eq!(me["cookie"], Value::Null);
    // The upstream's session cookies come back through the session layer's pass-back, and the
    // caller's jar keeps them.
    caller.account().login().await.unwrap();
    let me: Value = caller.account().me().await.unwrap();
    let cookie = me["cookie"].as_str().unwrap();
    assert!(
        cookie.contains("sid=s1") && cookie.contains("csrf_token=tok"),
        "{cookie}"
    );

    // A write repeats the CSRF cookie the proxy set in the CSRF header, by itself, as a page
    // does: the routes record names both.
    let renamed: Value = caller
        .account()
        .rename(NewUser { name: "Ada".into() })
        .await
        .unwrap();
    assert_eq!(renamed["name"], "Ada");
    // A header the call sets itself is kept, and the proxy judges it.
    let err = caller
        .account()
        .with(CallOptions::new().header(
            http::HeaderName::from_static("x-csrf-token"),
            http::HeaderValue::from_static("forged"),
        ))
        .rename(NewUser { name: "Eve".into() })
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 403);
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        "CSRF_CHECK_FAILED"
    );

    // The error says what the proxy refused, and why.
    assert!(
        err.to_string().contains(
            "HTTP status 403 Forbidden: CSRF_CHECK_FAILED: write refused by the session: CSRF \
             check failed: the CSRF token header does not match the CSRF cookie"
        ),
        "{err}"
    );

    // Before signing in there is no token to repeat: the proxy refuses the write.
    let fresh = ProxyCaller::<Secure>::routes(
        &proxy,
        Routes::from_api("secure", secure_api(backend).def()),
    )
    .build()
    .unwrap();
    let err = fresh
        .account()
        .rename(NewUser { name: "Ada".into() })
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 403);
    assert!(err.to_string().contains("sign in first"), "{err}");
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        "CSRF_CHECK_FAILED"
    );

    // A record without the names (written by hand): the builder's `csrf` gives them.
    let mut unnamed = Routes::from_api("secure", secure_api(backend).def());
    unnamed.csrf = None;
    let without = ProxyCaller::<Secure>::routes(&proxy, unnamed.clone())
        .build()
        .unwrap();
    without.account().login().await.unwrap();
    let err = without
        .account()
        .rename(NewUser { name: "Ada".into() })
        .await
        .unwrap_err();
    assert_eq!(err.status_code(), 403, "no names, no header");
    let named = ProxyCaller::<Secure>::routes(&proxy, unnamed)
        .csrf("csrf_token", "x-csrf-token")
        .build()
        .unwrap();
    named.account().login().await.unwrap();
    let renamed: Value = named
        .account()
        .rename(NewUser { name: "Ada".into() })
        .await
        .unwrap();
    assert_eq!(renamed["name"], "Ada");
    let bad = ProxyCaller::<Secure>::routes(
        &proxy,
        Routes::from_api("secure", secure_api(backend).def()),
    )
    .csrf("csrf_token", "not a header")
    .build()
    .unwrap_err();
    assert_eq!(code(&bad), Some(ErrorCode::InvalidOption), "{bad}");
}

#[tokio::test]
async fn the_boundary_form_follows_the_source_forms_rules_without_the_definition() {
    let s = setup().await;
    // Written where the definition is, read where it is not.
    let json = serde_json::to_string(&Routes::boundary("demo", api(s.backend).def())).unwrap();
    let boundary: Routes = serde_json::from_str(&json).unwrap();
    let caller = ProxyCaller::<Demo>::boundary(&s.proxy, boundary)
        .build()
        .unwrap();
    let found = caller
        .users()
        .search(Search { q: "cy".into() })
        .await
        .unwrap();
    assert_eq!(found[0].name, "cy");
    caller
        .users()
        .login(Login {
            user: "cy".into(),
            password: "pw".into(),
        })
        .await
        .unwrap();
    // The boundary names only what the proxy exposes: the unexposed endpoint is not in it, so
    // the caller refuses it before sending anything.
    assert!(!json.contains("purge"), "{json}");
    let err = caller.admin().purge().await.unwrap_err();
    assert_eq!(
        err.configuration().map(|e| e.code()),
        Some(ErrorCode::EndpointNotInRoutes),
        "{err}"
    );
    let seen = s.proxy_saw();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].starts_with("GET /api/request?_s=demo&_g=users&_m=search&_v="));
    assert!(seen[1].starts_with("POST /api/request?_s=demo&_g=users&_m=login "));
    assert!(s.backend_saw().iter().all(|l| !l.contains("purge")));
}

// ---- streams and channels another process serves, through the proxy -----------------------

#[derive(courier::Group)]
struct Remote {
    session: Http<Value>,
    feed: Stream<Value>,
    relay: Channel<Value, String, Value>,
}

#[derive(courier::Api)]
struct Relayed {
    remote: Group<Remote>,
}

fn relayed_api(upstream: SocketAddr) -> courier::Api<Relayed> {
    let remote = Group::new(Remote {
        session: endpoint().get("/session").headers(["set-cookie"]),
        feed: stream().get("/feed").headers(["cookie"]),
        relay: channel().connect("/rooms/:id").send(),
    })
    .expose(true);
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .allowed_headers(["x-app"])
        .build_typed(Relayed { remote })
        .expect("a valid definition")
}

/// An upstream serving a session cookie, an event stream that reports the headers it was
/// opened with, and a socket that first reports its handshake's headers, then echoes.
async fn relay_upstream() -> SocketAddr {
    use axum::extract::ws::{Message as WsMessage, WebSocketUpgrade};
    let header = |headers: &HeaderMap, name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let app = Router::new()
        .route(
            "/session",
            get(|| async { ([("set-cookie", "sid=abc; Path=/")], Json(json!("signed in"))) }),
        )
        .route(
            "/feed",
            get(move |headers: HeaderMap| async move {
                let seen = json!({ "x-app": header(&headers, "x-app"), "cookie": header(&headers, "cookie") });
                let mut body: String = (1..=2)
                    .map(|n| format!("id: {n}\ndata: {{\"n\":{n},\"seen\":{seen}}}\n\n"))
                    .collect();
                // A finite stream says it is over, or its clients reconnect for more.
                body.push_str("event: courier.end\ndata: {}\n\n");
                ([("content-type", "text/event-stream")], body)
            }),
        )
        .route(
            "/rooms/{id}",
            get(move |headers: HeaderMap, upgrade: WebSocketUpgrade| async move {
                let seen = json!({ "handshake": { "x-app": header(&headers, "x-app") } });
                upgrade.on_upgrade(move |mut socket| async move {
                    if socket.send(WsMessage::Text(seen.to_string().into())).await.is_err() {
                        return;
                    }
                    while let Some(Ok(message)) = socket.recv().await {
                        if matches!(message, WsMessage::Text(_))
                            && socket.send(message).await.is_err()
                        {
                            break;
                        }
                    }
                })
            }),
        );
    serve(app).await
}

#[tokio::test]
async fn remote_streams_and_channels_carry_the_callers_headers_cookies_and_auth() {
    let upstream = relay_upstream().await;
    let router = Proxy::new()
        .source("relay", relayed_api(upstream).def().clone())
        .ws_path("/api/ws")
        .into_router()
        .unwrap();
    let proxy = format!("http://{}", serve(router).await);
    let mut params = serde_json::Map::new();
    params.insert("token".into(), json!("t1"));
    let caller = ProxyCaller::<Relayed>::routes(
        &proxy,
        Routes::from_api("relay", relayed_api(upstream).def()),
    )
    .proxy_path(ProxyPaths {
        ws: Some("/api/ws".into()),
        ..ProxyPaths::default()
    })
    .header("x-app", "courier-test")
    .ws(courier::options::WsOptions::new().auth(courier::options::WsAuth::Params(params)))
    .build()
    .unwrap();

    // The jar keeps the cookie the upstream sets through the proxy...
    let _: Value = caller.remote().session().await.unwrap();
    // ...and the stream's handshake carries it, with the caller's default header.
    let events: Vec<Value> = tokio::time::timeout(Duration::from_secs(10), async {
        let events = caller.remote().feed().await.unwrap();
        events.map(|e| e.unwrap().data).collect().await
    })
    .await
    .unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(
        events[0],
        json!({ "n": 1, "seen": { "x-app": "courier-test", "cookie": "sid=abc" } })
    );

    // The socket's first frame carries the default header (into the upstream's handshake)
    // and `ws.auth` (into the upstream socket's own first frame).
    let mut relay = caller.remote().relay("r1".into()).await.unwrap();
    let mut received = Vec::new();
    for _ in 0..2 {
        let message = tokio::time::timeout(Duration::from_secs(10), relay.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        received.push(message);
    }
    assert_eq!(
        received,
        [
            json!({ "handshake": { "x-app": "courier-test" } }),
            json!({ "type": "courier.hello", "auth": { "token": "t1" } }),
        ]
    );
    relay.send(json!({ "text": "hi" })).unwrap();
    let echoed = tokio::time::timeout(Duration::from_secs(10), relay.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(echoed, json!({ "text": "hi" }));
}
