//! The served-request context end to end: an axum app on 127.0.0.1, wrapped in `ContextLayer`,
//! whose handlers call a backend on 127.0.0.1 through a typed `Caller` whose source has
//! `session` and `forward`; the backend records every request it receives and echoes it. A
//! hyper client plays the browser.
//!
//! Covered: each session item (cookies exact and `prefix*`, bearer, CSRF, set-cookie pass-back,
//! trusted origins) and each forward item (request id, trace, client address, user agent,
//! locale, named headers), each refusal, `session(false)` / `"unguarded"` / `forward(false)`,
//! cookies crossing only where named, concurrent users with coalescing on, an explicit per-call
//! context, and spawned tasks.

use axum::extract::{Request, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use courier::layers::context::{ContextLayer, ServedRequest};
use courier::options::{ForwardOptions, SessionMode, SessionOptions};
use courier::typed::{endpoint, Group, Http, Mutation};
use courier::{ApiDef, CallOptions, Caller};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tower_http::request_id::{MakeRequestId, RequestId, SetRequestIdLayer};

/// Different users whose reads of `/me` the backend holds until all of them are in flight.
const USERS: usize = 60;

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const TRACESTATE: &str = "vendor=opaque";

// ---- what the backend received -----------------------------------------------------------

/// One request as the backend received it, which it also echoes as its answer: the path and
/// every header (the values of one name joined by `", "`, so a header sent twice shows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Seen {
    path: String,
    headers: BTreeMap<String, String>,
}

impl Seen {
    fn of<B>(request: &http::Request<B>) -> Self {
        let mut headers = BTreeMap::new();
        for name in request.headers().keys() {
            let values: Vec<_> = request
                .headers()
                .get_all(name)
                .iter()
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .collect();
            headers.insert(name.as_str().to_owned(), values.join(", "));
        }
        Self {
            path: request.uri().path().to_owned(),
            headers,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

// ---- the typed API the app calls -----------------------------------------------------------

#[derive(Serialize)]
struct Settings {
    theme: String,
}

#[derive(courier::Group)]
struct Account {
    profile: Http<Seen>,
    login: Http<Seen>,
    settings: Http<Seen, Settings, Mutation>,
    logout: Http<Seen, (), Mutation>,
    public: Http<Seen>,
    public_write: Http<Seen, (), Mutation>,
    untraced: Http<Seen>,
    me: Http<Seen>,
}

#[derive(courier::Api)]
struct Remote {
    account: Group<Account>,
}

/// The source with a session and every forward item; it sets `x-tenant` itself.
fn remote(backend: SocketAddr) -> courier::Api<Remote> {
    let account = Group::new(Account {
        profile: endpoint().get("/profile"),
        login: endpoint().get("/login"),
        settings: endpoint().post("/settings"),
        logout: endpoint().post("/logout").session(SessionMode::Unguarded),
        public: endpoint().get("/public").session(false),
        public_write: endpoint().post("/public").session(false),
        untraced: endpoint().get("/untraced").forward(false),
        me: endpoint().get("/me"),
    });
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .header("x-tenant", "from-source")
        .coalesce(true)
        .session(
            SessionOptions::new()
                .cookies(["sid", "sess_*"])
                .bearer("access_token")
                .csrf("csrf_token", "x-csrf-token")
                .pass_set_cookie(true)
                .trusted_origins(["https://admin.example.com"]),
        )
        .forward(
            ForwardOptions::new()
                .request_id(true)
                .trace(true)
                .client_address(true)
                .user_agent(true)
                .locale(true)
                .headers(["x-tenant", "x-feature"]),
        )
        .build_typed(Remote { account })
        .unwrap()
}

#[derive(courier::Group)]
struct Pages {
    named: Http<Seen>,
    unnamed: Http<Seen>,
}

#[derive(courier::Api)]
struct Relay {
    pages: Group<Pages>,
}

/// A source without a session that forwards the headers `forwarded` names; its endpoint
/// `named` names `cookie` among its own headers, `unnamed` does not.
fn relay(backend: SocketAddr, forwarded: &[&str]) -> courier::Api<Relay> {
    let pages = Group::new(Pages {
        named: endpoint().get("/named").headers(["cookie"]),
        unnamed: endpoint().get("/unnamed"),
    });
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .forward(ForwardOptions::new().headers(forwarded.iter().copied()))
        .build_typed(Relay { pages })
        .unwrap()
}

// ---- the backend ---------------------------------------------------------------------------

#[derive(Clone)]
struct Backend {
    seen: Arc<Mutex<Vec<Seen>>>,
    /// The cookies of the `/me` reads that have arrived.
    users: watch::Sender<BTreeSet<String>>,
}

impl Backend {
    async fn start() -> (Self, SocketAddr) {
        let backend = Self {
            seen: Arc::default(),
            users: watch::Sender::new(BTreeSet::new()),
        };
        let app = Router::new()
            .fallback(any(answer))
            .with_state(backend.clone());
        let addr = courier_test_support::serve(app).await;
        (backend, addr)
    }

    /// Every request received at `path`, in order.
    fn at(&self, path: &str) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|seen| seen.path == path)
            .cloned()
            .collect()
    }

    /// The last request received at `path`.
    fn last(&self, path: &str) -> Seen {
        let seen = self.at(path);
        seen.last()
            .cloned()
            .unwrap_or_else(|| panic!("the backend received nothing at {path}"))
    }
}

/// Records the request and echoes it. `/login` also sets cookies, session and other; `/me`
/// waits until every user's read is in flight, then renews the caller's `sid`.
async fn answer(State(backend): State<Backend>, request: Request) -> Response {
    let seen = Seen::of(&request);
    backend.seen.lock().unwrap().push(seen.clone());
    match seen.path.as_str() {
        "/login" => {
            let mut response = Json(&seen).into_response();
            for cookie in [
                "sid=renewed; Path=/; HttpOnly",
                "sess_region=us",
                "theme=light",
                "access_token=t1; Secure",
                "csrf_token=c2",
            ] {
                response
                    .headers_mut()
                    .append(SET_COOKIE, HeaderValue::from_static(cookie));
            }
            response
        }
        "/me" => {
            let cookie = seen.header("cookie").unwrap_or_default().to_owned();
            backend.users.send_modify(|users| {
                users.insert(cookie.clone());
            });
            // Hold every read until all users' reads are in flight together, so a coalescing
            // key that left the session out would have merged them. Bounded: with such a bug
            // fewer users arrive and the test fails on the counts instead of hanging.
            let mut users = backend.users.subscribe();
            let all_in = users.wait_for(|users| users.len() >= USERS);
            let _ = tokio::time::timeout(Duration::from_secs(10), all_in).await;
            let mut response = Json(&seen).into_response();
            if let Ok(renewed) = HeaderValue::from_str(&format!("{cookie}-renewed")) {
                response.headers_mut().append(SET_COOKIE, renewed);
            }
            response
        }
        _ => Json(&seen).into_response(),
    }
}

// ---- the app: an axum server whose handlers call the backend -------------------------------

#[derive(Clone)]
struct App {
    remote: Caller<Remote>,
    /// Forwards `x-tenant`; only the endpoint `named` names `cookie`.
    relay: Caller<Relay>,
    /// Forwards `cookie` for every endpoint.
    relay_all: Caller<Relay>,
}

/// The request ids the app makes for requests that come without one: `app-1`, `app-2`, …
#[derive(Clone, Default)]
struct Sequential(Arc<AtomicU64>);

impl MakeRequestId for Sequential {
    fn make_request_id<B>(&mut self, _: &http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        HeaderValue::from_str(&format!("app-{n}"))
            .ok()
            .map(RequestId::new)
    }
}

/// What a handler answers: the backend's echo, or the call's error with its status.
fn reply(result: Result<Seen, courier::Error>) -> Response {
    match result {
        Ok(seen) => Json(seen).into_response(),
        Err(err) => {
            let status = StatusCode::from_u16(err.status_code()).unwrap_or(StatusCode::BAD_GATEWAY);
            let body = json!({
                "status": err.status_code(),
                "data": err.http_error().map(|http| http.data.clone()),
                "message": err.to_string(),
            });
            (status, Json(body)).into_response()
        }
    }
}

async fn profile(State(app): State<App>) -> Response {
    reply(app.remote.account().profile().await)
}

async fn login(State(app): State<App>) -> Response {
    reply(app.remote.account().login().await)
}

async fn settings(State(app): State<App>) -> Response {
    let settings = Settings {
        theme: "dark".into(),
    };
    reply(app.remote.account().settings(settings).await)
}

async fn logout(State(app): State<App>) -> Response {
    reply(app.remote.account().logout().await)
}

async fn public(State(app): State<App>) -> Response {
    reply(app.remote.account().public().await)
}

async fn public_write(State(app): State<App>) -> Response {
    reply(app.remote.account().public_write().await)
}

async fn untraced(State(app): State<App>) -> Response {
    reply(app.remote.account().untraced().await)
}

async fn me(State(app): State<App>) -> Response {
    reply(app.remote.account().me().await)
}

async fn relay_named(State(app): State<App>) -> Response {
    reply(app.relay.pages().named().await)
}

async fn relay_unnamed(State(app): State<App>) -> Response {
    reply(app.relay.pages().unnamed().await)
}

async fn relay_all_unnamed(State(app): State<App>) -> Response {
    reply(app.relay_all.pages().unnamed().await)
}

/// Calls from a spawned task that was not given the context.
async fn spawned_bare(State(app): State<App>) -> Response {
    let task = tokio::spawn(async move { app.remote.account().profile().await });
    reply(task.await.expect("the task ran"))
}

/// Calls from a spawned task that carries the context, as the docs show.
async fn spawned_carried(State(app): State<App>) -> Response {
    let context = ServedRequest::current().expect("ContextLayer put the served request in scope");
    let task = tokio::spawn(context.scope(async move { app.remote.account().profile().await }));
    reply(task.await.expect("the task ran"))
}

async fn start_app(backend: SocketAddr) -> (SocketAddr, App) {
    let app = App {
        remote: Caller::new(remote(backend)).unwrap(),
        relay: Caller::new(relay(backend, &["x-tenant"])).unwrap(),
        relay_all: Caller::new(relay(backend, &["x-tenant", "cookie"])).unwrap(),
    };
    let router = Router::new()
        .route("/profile", get(profile))
        .route("/login", get(login))
        .route("/settings", post(settings))
        .route("/logout", post(logout))
        .route("/public", get(public).post(public_write))
        .route("/untraced", get(untraced))
        .route("/me", get(me))
        .route("/relay/named", get(relay_named))
        .route("/relay/unnamed", get(relay_unnamed))
        .route("/relay-all/unnamed", get(relay_all_unnamed))
        .route("/spawned/bare", get(spawned_bare))
        .route("/spawned/carried", get(spawned_carried))
        .with_state(app.clone())
        // The last layer added runs first: the request id is set before the context copies
        // the request's head.
        .layer(ContextLayer::new())
        .layer(SetRequestIdLayer::x_request_id(Sequential::default()));
    let addr = courier_test_support::serve(router).await;
    (addr, app)
}

// ---- the browser ---------------------------------------------------------------------------

struct Browser {
    client: Client<HttpConnector, Empty<Bytes>>,
    app: SocketAddr,
}

/// The app's answer to the browser.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    /// What the backend received for this call, as the app passed it on.
    fn seen(&self) -> Seen {
        assert_eq!(self.status, StatusCode::OK, "{}", self.body);
        serde_json::from_value(self.body.clone()).unwrap()
    }

    fn set_cookies(&self) -> Vec<&str> {
        self.headers
            .get_all(SET_COOKIE)
            .iter()
            .map(|value| value.to_str().unwrap())
            .collect()
    }

    /// Asserts the handler's call was refused by the session with `code`.
    fn assert_refused(&self, code: &str) {
        assert_eq!(self.status, StatusCode::FORBIDDEN, "{}", self.body);
        assert_eq!(self.body["status"], 403, "status_code() is 403");
        assert_eq!(self.body["data"]["error"]["code"], code, "{}", self.body);
        let message = self.body["data"]["error"]["message"].as_str();
        assert!(message.is_some_and(|m| !m.is_empty()), "{}", self.body);
    }
}

impl Browser {
    async fn send(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.app));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Empty::new()).unwrap();
        let response = tokio::time::timeout(Duration::from_secs(30), self.client.request(request))
            .await
            .expect("the app answers in time")
            .expect("the app answers");
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        Answer {
            status: parts.status,
            headers: parts.headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    async fn get(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        self.send("GET", path, headers).await
    }

    async fn post(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        self.send("POST", path, headers).await
    }
}

struct Setup {
    backend: Backend,
    browser: Browser,
    app: App,
}

async fn setup() -> Setup {
    let (backend, backend_addr) = Backend::start().await;
    let (app_addr, app) = start_app(backend_addr).await;
    let client = Client::builder(TokioExecutor::new()).build_http();
    Setup {
        backend,
        browser: Browser {
            client,
            app: app_addr,
        },
        app,
    }
}

/// A write's session, with a CSRF token header that matches its cookie.
const GOOD_WRITE: [(&str, &str); 2] = [
    ("cookie", "sid=s1; csrf_token=tok-1; access_token=t0k"),
    ("x-csrf-token", "tok-1"),
];

// ---- session -------------------------------------------------------------------------------

#[tokio::test]
async fn session_cookies_and_the_bearer_reach_the_backend_and_other_cookies_do_not() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let answer = browser
        .get(
            "/profile",
            &[(
                "cookie",
                "theme=dark; sid=s1; sess_region=eu; other=1; sess_lang=fr; access_token=t0k; csrf_token=c1",
            )],
        )
        .await;
    let seen = backend.last("/profile");
    assert_eq!(
        answer.seen(),
        seen,
        "the app answers with the backend's echo"
    );
    assert_eq!(
        seen.header("cookie"),
        Some("sid=s1; sess_region=eu; sess_lang=fr"),
        "exact and prefixed session cookies, in the browser's order; no others"
    );
    assert_eq!(seen.header("authorization"), Some("Bearer t0k"));
    assert_eq!(
        seen.header("x-csrf-token"),
        None,
        "a read carries no CSRF token"
    );
}

#[tokio::test]
async fn session_set_cookies_pass_back_to_the_browser_and_others_do_not() {
    let Setup { browser, .. } = setup().await;
    let answer = browser.get("/login", &[("cookie", "sid=s1")]).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.set_cookies(),
        [
            "sid=renewed; Path=/; HttpOnly",
            "sess_region=us",
            "access_token=t1; Secure",
            "csrf_token=c2",
        ],
        "the session's cookies (session, bearer and CSRF) pass back; `theme` does not"
    );
}

#[tokio::test]
async fn a_write_whose_csrf_header_matches_the_cookie_passes_and_carries_the_token() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let answer = browser.post("/settings", &GOOD_WRITE).await;
    let seen = answer.seen();
    assert_eq!(seen, backend.last("/settings"));
    assert_eq!(seen.header("cookie"), Some("sid=s1; csrf_token=tok-1"));
    assert_eq!(seen.header("x-csrf-token"), Some("tok-1"));
    assert_eq!(seen.header("authorization"), Some("Bearer t0k"));
}

#[tokio::test]
async fn failed_csrf_checks_refuse_the_write_before_it_is_sent() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let cases: [&[(&str, &str)]; 4] = [
        // No header.
        &[("cookie", "sid=s1; csrf_token=tok-1")],
        // No cookie.
        &[("cookie", "sid=s1"), ("x-csrf-token", "tok-1")],
        // They differ.
        &[
            ("cookie", "sid=s1; csrf_token=tok-1"),
            ("x-csrf-token", "tok-2"),
        ],
        // Nothing at all.
        &[],
    ];
    for headers in cases {
        let answer = browser.post("/settings", headers).await;
        answer.assert_refused("CSRF_CHECK_FAILED");
    }
    assert!(
        backend.at("/settings").is_empty(),
        "the backend saw none of the refused writes"
    );
}

#[tokio::test]
async fn writes_from_other_sites_are_refused_and_trusted_origins_pass() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let with = |extra: (&'static str, &'static str)| [GOOD_WRITE[0], GOOD_WRITE[1], extra];

    let answer = browser
        .post("/settings", &with(("origin", "https://evil.example")))
        .await;
    answer.assert_refused("ORIGIN_NOT_TRUSTED");
    let answer = browser
        .post("/settings", &with(("sec-fetch-site", "cross-site")))
        .await;
    answer.assert_refused("ORIGIN_NOT_TRUSTED");
    assert!(backend.at("/settings").is_empty());

    let answer = browser
        .post("/settings", &with(("origin", "https://admin.example.com")))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "a trusted origin passes");
    let own = format!("http://{}", browser.app);
    let answer = browser
        .post(
            "/settings",
            &[GOOD_WRITE[0], GOOD_WRITE[1], ("origin", &own)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "the app's own origin passes");
    let answer = browser
        .post("/settings", &with(("sec-fetch-site", "same-origin")))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "same-origin without Origin");
    assert_eq!(backend.at("/settings").len(), 3);
}

#[tokio::test]
async fn reads_are_never_checked() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let answer = browser
        .get(
            "/profile",
            &[
                ("cookie", "sid=s1"),
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "cross-site"),
            ],
        )
        .await;
    assert_eq!(answer.seen().header("cookie"), Some("sid=s1"));
    assert_eq!(backend.at("/profile").len(), 1);
}

#[tokio::test]
async fn an_unguarded_write_skips_the_checks_but_carries_the_session() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let answer = browser
        .post(
            "/logout",
            &[
                ("cookie", "sid=s1; csrf_token=tok-1; access_token=t0k"),
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "cross-site"),
            ],
        )
        .await;
    let seen = answer.seen();
    assert_eq!(seen, backend.last("/logout"));
    assert_eq!(
        seen.header("cookie"),
        Some("sid=s1"),
        "no CSRF cookie: no check vouched for it"
    );
    assert_eq!(seen.header("authorization"), Some("Bearer t0k"));
    assert_eq!(seen.header("x-csrf-token"), None);
}

#[tokio::test]
async fn session_false_sends_no_session_at_all() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let headers = [
        ("cookie", "sid=s1; sess_region=eu; access_token=t0k"),
        ("origin", "https://evil.example"),
        ("x-request-id", "req-public"),
    ];
    for answer in [
        browser.get("/public", &headers).await,
        browser.post("/public", &headers).await,
    ] {
        let seen = answer.seen();
        assert_eq!(seen.header("cookie"), None, "{seen:?}");
        assert_eq!(seen.header("authorization"), None, "{seen:?}");
        assert_eq!(
            seen.header("x-request-id"),
            Some("req-public"),
            "forwarding still applies"
        );
    }
    assert_eq!(backend.at("/public").len(), 2, "the write was not checked");
}

// ---- forward -------------------------------------------------------------------------------

/// A browser request with every forwarded item, a named header the source also sets, and one
/// nobody names.
const EVERYTHING: [(&str, &str); 10] = [
    ("cookie", "sid=s1"),
    ("x-request-id", "req-browser-1"),
    ("traceparent", TRACEPARENT),
    ("tracestate", TRACESTATE),
    ("x-forwarded-for", "203.0.113.7"),
    ("user-agent", "browser/1.0"),
    ("accept-language", "fr-CH, fr;q=0.9"),
    ("x-feature", "beta"),
    ("x-tenant", "from-browser"),
    ("x-unnamed", "stays"),
];

#[tokio::test]
async fn forward_carries_every_item_from_the_served_request() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let answer = browser.get("/profile", &EVERYTHING).await;
    let seen = answer.seen();
    assert_eq!(seen, backend.last("/profile"));
    assert_eq!(seen.header("x-request-id"), Some("req-browser-1"));
    assert_eq!(seen.header("traceparent"), Some(TRACEPARENT));
    assert_eq!(seen.header("tracestate"), Some(TRACESTATE));
    assert_eq!(
        seen.header("x-forwarded-for"),
        Some("203.0.113.7, 127.0.0.1"),
        "the browser's chain with the real peer appended"
    );
    assert_eq!(seen.header("user-agent"), Some("browser/1.0"));
    assert_eq!(seen.header("accept-language"), Some("fr-CH, fr;q=0.9"));
    assert_eq!(seen.header("x-feature"), Some("beta"));
    assert_eq!(
        seen.header("x-tenant"),
        Some("from-source"),
        "the source's own header wins, and is sent once"
    );
    assert_eq!(seen.header("x-unnamed"), None);
}

#[tokio::test]
async fn the_request_id_the_app_generates_is_forwarded() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    browser.get("/profile", &[]).await.seen();
    browser.get("/profile", &[]).await.seen();
    let ids: Vec<_> = backend
        .at("/profile")
        .iter()
        .map(|seen| seen.header("x-request-id").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids.iter().all(|id| id.starts_with("app-")),
        "SetRequestIdLayer's ids: {ids:?}"
    );
    assert_ne!(ids[0], ids[1], "one per served request");
    assert_eq!(
        backend.last("/profile").header("x-forwarded-for"),
        Some("127.0.0.1"),
        "the peer alone when the browser sent no chain"
    );
}

#[tokio::test]
async fn forward_false_sends_none_of_the_forwarded_headers() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let seen = browser.get("/untraced", &EVERYTHING).await.seen();
    assert_eq!(seen, backend.last("/untraced"));
    for name in [
        "x-request-id",
        "traceparent",
        "tracestate",
        "x-forwarded-for",
        "accept-language",
        "x-feature",
        "x-unnamed",
    ] {
        assert_eq!(seen.header(name), None, "{name}");
    }
    assert_ne!(seen.header("user-agent"), Some("browser/1.0"));
    assert_eq!(seen.header("x-tenant"), Some("from-source"));
    assert_eq!(
        seen.header("cookie"),
        Some("sid=s1"),
        "the session is not forwarding"
    );
}

#[tokio::test]
async fn cookies_cross_through_forward_only_where_cookie_is_named() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let headers = [("cookie", "sid=s1; theme=dark"), ("x-tenant", "acme")];

    let seen = browser.get("/relay/named", &headers).await.seen();
    assert_eq!(
        seen.header("cookie"),
        Some("sid=s1; theme=dark"),
        "the endpoint names `cookie`"
    );
    assert_eq!(seen.header("x-tenant"), Some("acme"));

    let seen = browser.get("/relay/unnamed", &headers).await.seen();
    assert_eq!(seen.header("cookie"), None, "nobody names `cookie`");
    assert_eq!(seen.header("x-tenant"), Some("acme"));

    let seen = browser.get("/relay-all/unnamed", &headers).await.seen();
    assert_eq!(
        seen.header("cookie"),
        Some("sid=s1; theme=dark"),
        "the source's forward headers name `cookie`"
    );
    assert_eq!(backend.at("/unnamed").len(), 2);
}

// ---- many users at once --------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_users_each_carry_only_their_own_session_with_coalescing_on() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    // Two browser requests per user, side by side, so a user's identical reads can share a call.
    let cookies: Vec<String> = (0..USERS)
        .flat_map(|user| [user, user])
        .map(|user| format!("theme=t{user}; sid=u{user}; access_token=tok-u{user}"))
        .collect();
    let calls = cookies.iter().enumerate().map(|(i, cookie)| {
        let browser = &browser;
        async move { (i / 2, browser.get("/me", &[("cookie", cookie)]).await) }
    });
    let answers = tokio::time::timeout(
        Duration::from_secs(60),
        futures_util::future::join_all(calls),
    )
    .await
    .expect("every user is answered");

    for (user, answer) in &answers {
        let seen = answer.seen();
        assert_eq!(seen.header("cookie"), Some(&*format!("sid=u{user}")));
        assert_eq!(
            seen.header("authorization"),
            Some(&*format!("Bearer tok-u{user}"))
        );
        assert_eq!(
            answer.set_cookies(),
            [format!("sid=u{user}-renewed")],
            "each user gets back only their own renewed session"
        );
    }

    let received = backend.at("/me");
    let mut users = BTreeSet::new();
    for seen in &received {
        let cookie = seen.header("cookie").expect("every call carries a session");
        let user = cookie.strip_prefix("sid=u").expect("one session cookie");
        assert_eq!(
            seen.header("authorization"),
            Some(&*format!("Bearer tok-u{user}")),
            "cookie and bearer of one user: {seen:?}"
        );
        users.insert(user.to_owned());
    }
    assert_eq!(
        users.len(),
        USERS,
        "every user's session reached the backend"
    );
    assert!(
        received.len() >= USERS,
        "different users never share a call: {} calls",
        received.len()
    );
    assert!(
        received.len() < 2 * USERS,
        "some of a user's identical reads shared a call: coalescing was on"
    );
}

// ---- the context given explicitly, and spawned tasks ---------------------------------------

#[tokio::test]
async fn an_explicit_context_carries_the_session_outside_any_server() {
    let Setup { backend, app, .. } = setup().await;
    assert!(!ServedRequest::is_serving());
    let (parts, ()) = http::Request::get("/somewhere")
        .header("cookie", "sid=explicit; access_token=tx; theme=dark")
        .header("x-request-id", "explicit-1")
        .body(())
        .unwrap()
        .into_parts();
    let served = ServedRequest::new(parts, Some(([192, 0, 2, 10], 5000).into()));
    let account = app.remote.account();

    let seen = account
        .with(CallOptions::new().context(served.clone()))
        .profile()
        .await
        .unwrap();
    assert_eq!(seen, backend.last("/profile"));
    assert_eq!(seen.header("cookie"), Some("sid=explicit"));
    assert_eq!(seen.header("authorization"), Some("Bearer tx"));
    assert_eq!(seen.header("x-request-id"), Some("explicit-1"));
    assert_eq!(seen.header("x-forwarded-for"), Some("192.0.2.10"));

    // The session's cookies the backend sets are collected on the context.
    account
        .with(CallOptions::new().context(served.clone()))
        .login()
        .await
        .unwrap();
    let passed = served.take_response_headers();
    assert_eq!(passed.get_all(SET_COOKIE).iter().count(), 4);

    // Its writes are checked: this one carries no CSRF token.
    let err = account
        .with(CallOptions::new().context(served))
        .settings(Settings {
            theme: "dark".into(),
        })
        .await
        .unwrap_err();
    assert!(err.is_http());
    assert_eq!(err.status_code(), 403);
    assert_eq!(
        err.http_error().unwrap().data["error"]["code"],
        "CSRF_CHECK_FAILED"
    );
    assert!(backend.at("/settings").is_empty());

    // Without it, the same call carries no session and forwards nothing.
    let seen = account.profile().await.unwrap();
    assert_eq!(seen.header("cookie"), None);
    assert_eq!(seen.header("authorization"), None);
    assert_eq!(seen.header("x-request-id"), None);
    assert_eq!(seen.header("x-forwarded-for"), None);
    assert_eq!(seen.header("x-tenant"), Some("from-source"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_task_carries_the_session_only_when_given_the_context() {
    let Setup {
        backend, browser, ..
    } = setup().await;
    let headers = [
        ("cookie", "sid=s1; access_token=t0k"),
        ("x-request-id", "req-spawn"),
    ];

    let seen = browser.get("/spawned/bare", &headers).await.seen();
    assert_eq!(seen.header("cookie"), None, "the task did not inherit it");
    assert_eq!(seen.header("authorization"), None);
    assert_eq!(seen.header("x-request-id"), None);

    let seen = browser.get("/spawned/carried", &headers).await.seen();
    assert_eq!(seen.header("cookie"), Some("sid=s1"));
    assert_eq!(seen.header("authorization"), Some("Bearer t0k"));
    assert_eq!(seen.header("x-request-id"), Some("req-spawn"));
    assert_eq!(backend.at("/profile").len(), 2);
}
