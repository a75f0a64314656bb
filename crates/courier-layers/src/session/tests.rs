use super::cookies::constant_time_eq;
use super::error::{RefusalReason, SessionRefused};
use super::*;
use courier_core::CsrfKey;
use courier_core::{Body, Kind};
use http::header::SET_COOKIE;
use http::StatusCode;
use http::{HeaderMap, HeaderValue};
use std::sync::Mutex;
use tower::ServiceExt;

/// A backend that records the headers of every request it gets and answers with
/// `set_cookies`.
#[derive(Clone, Default)]
struct Backend {
    seen: Arc<Mutex<Vec<HeaderMap>>>,
    set_cookies: Vec<&'static str>,
}

impl Backend {
    fn setting(set_cookies: &[&'static str]) -> Self {
        Self {
            set_cookies: set_cookies.to_vec(),
            ..Self::default()
        }
    }

    fn calls(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn last(&self) -> HeaderMap {
        self.seen
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the backend was called")
    }
}

impl Service<Request<Body>> for Backend {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = std::future::Ready<Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        self.seen.lock().unwrap().push(request.headers().clone());
        let mut response = Response::new(Body::empty());
        for cookie in &self.set_cookies {
            response
                .headers_mut()
                .append(SET_COOKIE, HeaderValue::from_static(cookie));
        }
        std::future::ready(Ok(response))
    }
}

fn options() -> SessionOptions {
    SessionOptions::new()
        .cookies(["sid", "sess_*"])
        .bearer("access_token")
        .csrf("csrf_token", "x-csrf-token")
}

/// A served request with these headers, from `app.example.com`.
fn served(method: &str, headers: &[(&str, &str)]) -> ServedRequest {
    let mut builder = Request::builder()
        .method(method)
        .uri("/page")
        .header("host", "app.example.com");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let (parts, ()) = builder.body(()).unwrap().into_parts();
    ServedRequest::new(parts, None)
}

fn call(kind: Kind) -> Request<Body> {
    let method = if kind == Kind::Query { "GET" } else { "POST" };
    Request::builder()
        .method(method)
        .uri("http://127.0.0.1:9000/x")
        .extension(EndpointMeta::new("x.y", kind))
        .body(Body::empty())
        .unwrap()
}

fn write_with(mode: SessionMode) -> Request<Body> {
    Request::post("http://127.0.0.1:9000/x")
        .extension(EndpointMeta::new("x.y", Kind::Mutation).session(mode))
        .body(Body::empty())
        .unwrap()
}

async fn send(
    options: SessionOptions,
    backend: &Backend,
    served: &ServedRequest,
    request: Request<Body>,
) -> Result<Response<Body>, BoxError> {
    let service = SessionLayer::new(options).layer(backend.clone());
    served.clone().scope(service.oneshot(request)).await
}

async fn refusal(served: &ServedRequest, options: SessionOptions) -> RefusalReason {
    let backend = Backend::default();
    let err = send(options, &backend, served, call(Kind::Mutation))
        .await
        .expect_err("the write is refused");
    assert_eq!(backend.calls(), 0, "a refused write is never sent");
    err.downcast_ref::<SessionRefused>()
        .expect("a SessionRefused")
        .reason()
}

/// A write from the site's own page with a valid double-submit token.
const GOOD_WRITE: [(&str, &str); 3] = [
    ("origin", "https://app.example.com"),
    ("cookie", "sid=s1; csrf_token=tok123"),
    ("x-csrf-token", "tok123"),
];

#[tokio::test]
async fn session_cookies_match_exact_names_and_prefixes() {
    let backend = Backend::default();
    let served = served(
        "GET",
        &[(
            "cookie",
            "sid=s1; theme=dark; sess_a=x; sessa=no; sess_b=y; sid2=no",
        )],
    );
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    let headers = backend.last();
    assert_eq!(headers["cookie"], "sid=s1; sess_a=x; sess_b=y");
    assert!(headers["cookie"].is_sensitive());
    assert_eq!(headers.get_all("cookie").iter().count(), 1);
}

#[tokio::test]
async fn cookies_from_several_cookie_headers_go_in_one() {
    let backend = Backend::default();
    let served = served(
        "GET",
        &[("cookie", "theme=dark; sid=s1"), ("cookie", "sess_x=2")],
    );
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    let headers = backend.last();
    assert_eq!(
        headers.get_all("cookie").iter().collect::<Vec<_>>(),
        ["sid=s1; sess_x=2"]
    );
}

#[tokio::test]
async fn a_star_alone_matches_every_cookie() {
    let backend = Backend::default();
    let served = served("GET", &[("cookie", "a=1; b=2")]);
    let options = SessionOptions::new().cookies(["*"]);
    send(options, &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    assert_eq!(backend.last()["cookie"], "a=1; b=2");
}

#[tokio::test]
async fn no_cookie_header_when_no_cookie_matches() {
    let backend = Backend::default();
    let served = served("GET", &[("cookie", "theme=dark; =odd; novalue")]);
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    let headers = backend.last();
    assert!(headers.get("cookie").is_none());
    assert!(headers.get("authorization").is_none());
}

#[tokio::test]
async fn bearer_cookie_becomes_a_sensitive_authorization_header() {
    let backend = Backend::default();
    let served = served("GET", &[("cookie", "theme=dark; access_token=abc.def")]);
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    let headers = backend.last();
    assert_eq!(headers["authorization"], "Bearer abc.def");
    assert!(headers["authorization"].is_sensitive());
    // The bearer cookie is not a session cookie here, so it does not go as a cookie.
    assert!(headers.get("cookie").is_none());
}

#[tokio::test]
async fn bearer_cookie_value_loses_its_quotes_and_an_empty_one_is_not_sent() {
    let backend = Backend::default();
    let quoted = served("GET", &[("cookie", "access_token=\"q1\"")]);
    send(options(), &backend, &quoted, call(Kind::Query))
        .await
        .unwrap();
    assert_eq!(backend.last()["authorization"], "Bearer q1");

    let empty = served("GET", &[("cookie", "access_token=; sid=s1")]);
    send(options(), &backend, &empty, call(Kind::Query))
        .await
        .unwrap();
    assert!(backend.last().get("authorization").is_none());
}

#[tokio::test]
async fn headers_already_on_the_request_win() {
    let backend = Backend::default();
    let served = served("GET", &[("cookie", "sid=s1; access_token=user")]);
    let request = Request::get("http://127.0.0.1:9000/x")
        .header("cookie", "service=1")
        .header("authorization", "Basic c3ZjOnB3")
        .body(Body::empty())
        .unwrap();
    send(options(), &backend, &served, request).await.unwrap();
    let headers = backend.last();
    assert_eq!(
        headers.get_all("cookie").iter().collect::<Vec<_>>(),
        ["service=1"]
    );
    assert_eq!(
        headers.get_all("authorization").iter().collect::<Vec<_>>(),
        ["Basic c3ZjOnB3"]
    );
}

#[tokio::test]
async fn nothing_happens_without_a_served_request() {
    let backend = Backend::default();
    let service = SessionLayer::new(options()).layer(backend.clone());
    // A write without a served request: no checks, no session.
    service.oneshot(call(Kind::Mutation)).await.unwrap();
    let headers = backend.last();
    assert!(headers.get("cookie").is_none());
    assert!(headers.get("authorization").is_none());
}

#[tokio::test]
async fn session_off_sends_no_session_and_checks_nothing() {
    let backend = Backend::setting(&["sid=new"]);
    let served = served(
        "POST",
        &[
            ("cookie", "sid=s1; access_token=t"),
            ("origin", "https://evil.example"),
        ],
    );
    let options = options().pass_set_cookie(true);
    send(options, &backend, &served, write_with(SessionMode::Off))
        .await
        .unwrap();
    let headers = backend.last();
    assert!(headers.get("cookie").is_none());
    assert!(headers.get("authorization").is_none());
    assert!(
        served.take_response_headers().is_empty(),
        "no pass-back either"
    );
}

#[tokio::test]
async fn a_write_with_a_matching_token_carries_it_upstream() {
    let backend = Backend::default();
    let served = served("POST", &GOOD_WRITE);
    send(options(), &backend, &served, call(Kind::Mutation))
        .await
        .unwrap();
    let headers = backend.last();
    assert_eq!(headers["x-csrf-token"], "tok123");
    assert_eq!(headers["cookie"], "sid=s1; csrf_token=tok123");
}

#[tokio::test]
async fn a_write_without_the_token_header_is_refused() {
    let served = served(
        "POST",
        &[
            ("cookie", "sid=s1; csrf_token=tok123"),
            ("x-csrf-token", " "),
        ],
    );
    assert_eq!(
        refusal(&served, options()).await,
        RefusalReason::CsrfHeaderMissing
    );
    let served = self::served("POST", &[("cookie", "sid=s1; csrf_token=tok123")]);
    assert_eq!(
        refusal(&served, options()).await,
        RefusalReason::CsrfHeaderMissing
    );
}

/// The message a write refused while serving `served` ends with.
async fn refusal_message(served: &ServedRequest) -> String {
    let backend = Backend::default();
    let err = send(options(), &backend, served, call(Kind::Mutation))
        .await
        .expect_err("the write is refused");
    err.to_string()
}

#[tokio::test]
async fn a_refusal_names_the_header_the_cookie_and_a_missing_session() {
    // Signed in, no header: which header repeats which cookie.
    let signed_in = served("POST", &[("cookie", "sid=s1; csrf_token=tok123")]);
    let message = refusal_message(&signed_in).await;
    assert!(
        message.contains("repeats the `csrf_token` cookie's value in the `x-csrf-token` header"),
        "{message}"
    );
    assert!(!message.contains("sign in first"), "{message}");
    // Signed in, but the CSRF cookie is gone (a page's caller then sends no header): the
    // missing cookie is the cause.
    let no_token = served("POST", &[("cookie", "sid=s1")]);
    let message = refusal_message(&no_token).await;
    assert!(
        message.contains(
            "carries no CSRF token header; the request carries no `csrf_token` cookie either, \
             which the `x-csrf-token` header repeats: the session sets it when the user signs in"
        ),
        "{message}"
    );
    // No session at all: sign in first, naming the session's cookies.
    let anonymous = served("POST", &[("x-csrf-token", "tok123")]);
    let message = refusal_message(&anonymous).await;
    assert!(
        message.contains("the `csrf_token` cookie it repeats did not"),
        "{message}"
    );
    assert!(
        message.contains(
            "no session was found (no `sid` or `sess_*` or `access_token` cookie): sign in first"
        ),
        "{message}"
    );
    // A mismatch says what must be equal.
    let mismatch = served(
        "POST",
        &[("cookie", "sid=s1; csrf_token=a"), ("x-csrf-token", "b")],
    );
    let message = refusal_message(&mismatch).await;
    assert!(
        message.contains("the `x-csrf-token` header must equal the `csrf_token` cookie"),
        "{message}"
    );
}

#[tokio::test]
async fn a_write_without_the_token_cookie_is_refused() {
    let served = served("POST", &[("cookie", "sid=s1"), ("x-csrf-token", "tok123")]);
    assert_eq!(
        refusal(&served, options()).await,
        RefusalReason::CsrfCookieMissing
    );
    let served = self::served(
        "POST",
        &[("cookie", "csrf_token="), ("x-csrf-token", "tok123")],
    );
    assert_eq!(
        refusal(&served, options()).await,
        RefusalReason::CsrfCookieMissing
    );
}

#[tokio::test]
async fn a_write_whose_token_differs_from_the_cookie_is_refused() {
    for header in ["tok124", "tok12", "tok1234", "TOK123"] {
        let served = served(
            "POST",
            &[("cookie", "csrf_token=tok123"), ("x-csrf-token", header)],
        );
        assert_eq!(
            refusal(&served, options()).await,
            RefusalReason::CsrfMismatch
        );
    }
}

#[tokio::test]
async fn an_invalid_csrf_header_name_refuses_every_checked_write() {
    let options = SessionOptions::new().csrf("csrf_token", "bad header");
    let served = served("POST", &[("cookie", "csrf_token=t")]);
    assert_eq!(
        refusal(&served, options).await,
        RefusalReason::CsrfHeaderMissing
    );
}

#[tokio::test]
async fn the_refusal_names_the_check_and_is_a_403() {
    let backend = Backend::default();
    let served = served("POST", &[("cookie", "sid=s1; csrf_token=tok")]);
    let err = send(options(), &backend, &served, call(Kind::Mutation))
        .await
        .unwrap_err();
    let refused = err.downcast_ref::<SessionRefused>().unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(refused.reason().as_str(), "csrf_header_missing");
    assert_eq!(
        err.to_string(),
        "write refused by the session: CSRF check failed: the served request carries no CSRF \
         token header; a write repeats the `csrf_token` cookie's value in the `x-csrf-token` \
         header (a page's caller does it by itself when its routes, or its `csrf` option, name \
         them)"
    );
}

#[tokio::test]
async fn unguarded_writes_skip_the_checks_but_carry_the_session() {
    let backend = Backend::default();
    let served = served(
        "POST",
        &[
            ("cookie", "sid=s1; csrf_token=tok; access_token=t"),
            ("origin", "https://evil.example"),
        ],
    );
    send(
        options(),
        &backend,
        &served,
        write_with(SessionMode::Unguarded),
    )
    .await
    .unwrap();
    let headers = backend.last();
    assert_eq!(
        headers["cookie"], "sid=s1",
        "no CSRF cookie: nothing vouched for it"
    );
    assert_eq!(headers["authorization"], "Bearer t");
    assert!(headers.get("x-csrf-token").is_none());
}

#[tokio::test]
async fn reads_are_never_checked() {
    let backend = Backend::default();
    let served = served(
        "GET",
        &[
            ("cookie", "sid=s1; csrf_token=tok"),
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ],
    );
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    let headers = backend.last();
    assert_eq!(headers["cookie"], "sid=s1");
    assert!(headers.get("x-csrf-token").is_none());
}

#[tokio::test]
async fn without_meta_the_method_decides_what_is_checked() {
    let served = served("POST", &[("cookie", "sid=s1")]);
    let backend = Backend::default();
    for method in ["GET", "HEAD", "OPTIONS"] {
        let request = Request::builder()
            .method(method)
            .uri("http://127.0.0.1:9000/x")
            .body(Body::empty())
            .unwrap();
        send(options(), &backend, &served, request).await.unwrap();
        assert_eq!(backend.last()["cookie"], "sid=s1");
    }
    for method in ["POST", "PUT", "PATCH", "DELETE"] {
        let request = Request::builder()
            .method(method)
            .uri("http://127.0.0.1:9000/x")
            .body(Body::empty())
            .unwrap();
        let err = send(options(), &backend, &served, request)
            .await
            .unwrap_err();
        assert!(err.is::<SessionRefused>(), "{method} is checked");
    }
    assert_eq!(backend.calls(), 3);
}

/// A served write from a page of `origin`, to `host`.
fn served_from(origin: &str, host: &str) -> ServedRequest {
    let (parts, ()) = Request::post("/page")
        .header("host", host)
        .header("origin", origin)
        .body(())
        .unwrap()
        .into_parts();
    ServedRequest::new(parts, None)
}

#[tokio::test]
async fn own_origin_passes_by_host_and_port() {
    let own = [
        ("https://app.example.com", "app.example.com"),
        ("https://APP.example.com/", "app.example.com"),
        ("https://app.example.com", "app.example.com:443"),
        ("http://app.example.com", "app.example.com:80"),
        ("http://127.0.0.1:3000", "127.0.0.1:3000"),
        ("http://[::1]:3000", "[::1]:3000"),
    ];
    for (origin, host) in own {
        let served = served_from(origin, host);
        let backend = Backend::default();
        send(
            SessionOptions::new(),
            &backend,
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap_or_else(|err| panic!("{origin} on {host}: {err}"));
    }
    let other = [
        ("https://app.example.com:8443", "app.example.com"),
        ("https://app.example.com", "app.example.com:8443"),
        ("https://evil.example.com", "app.example.com"),
        ("https://app.example.com.evil.example", "app.example.com"),
    ];
    for (origin, host) in other {
        let served = served_from(origin, host);
        assert_eq!(
            refusal(&served, SessionOptions::new()).await,
            RefusalReason::UntrustedOrigin,
            "{origin} on {host}"
        );
    }
}

#[tokio::test]
async fn own_origin_comes_from_the_uri_without_a_host_header() {
    // HTTP/2 carries the authority in the URI.
    let (parts, ()) = Request::post("https://app.example.com/page")
        .header("origin", "https://app.example.com")
        .body(())
        .unwrap()
        .into_parts();
    let served = ServedRequest::new(parts, None);
    let backend = Backend::default();
    send(
        SessionOptions::new(),
        &backend,
        &served,
        call(Kind::Mutation),
    )
    .await
    .unwrap();
    assert_eq!(backend.calls(), 1);
}

#[tokio::test]
async fn trusted_origins_pass_and_others_are_refused() {
    let options = SessionOptions::new().trusted_origins([
        "https://admin.example.com/",
        "http://localhost:5173",
        "not an origin",
    ]);
    for origin in [
        "https://admin.example.com",
        "https://admin.example.com:443",
        "http://localhost:5173",
    ] {
        let backend = Backend::default();
        let served = served("POST", &[("origin", origin)]);
        send(options.clone(), &backend, &served, call(Kind::Mutation))
            .await
            .unwrap_or_else(|err| panic!("{origin}: {err}"));
    }
    for origin in [
        "http://admin.example.com",
        "https://admin.example.com:8443",
        "http://localhost:5174",
        "https://evil.example",
        "null",
        "https://admin.example.com/path",
        "not an origin",
    ] {
        let served = served("POST", &[("origin", origin)]);
        assert_eq!(
            refusal(&served, options.clone()).await,
            RefusalReason::UntrustedOrigin,
            "{origin}"
        );
    }
}

#[tokio::test]
async fn without_origin_sec_fetch_site_decides() {
    for site in ["same-origin", "none"] {
        let backend = Backend::default();
        let served = served("GET", &[("sec-fetch-site", site)]);
        send(
            SessionOptions::new(),
            &backend,
            &served,
            call(Kind::Mutation),
        )
        .await
        .unwrap_or_else(|err| panic!("{site}: {err}"));
    }
    for site in ["cross-site", "same-site", "something-new"] {
        let served = served("GET", &[("sec-fetch-site", site)]);
        assert_eq!(
            refusal(&served, SessionOptions::new()).await,
            RefusalReason::CrossSite,
            "{site}"
        );
    }
}

#[tokio::test]
async fn origin_wins_over_sec_fetch_site() {
    let backend = Backend::default();
    let served = served(
        "POST",
        &[
            ("origin", "https://app.example.com"),
            ("sec-fetch-site", "cross-site"),
        ],
    );
    send(
        SessionOptions::new(),
        &backend,
        &served,
        call(Kind::Mutation),
    )
    .await
    .unwrap();
    let served = self::served(
        "POST",
        &[
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "same-origin"),
        ],
    );
    assert_eq!(
        refusal(&served, SessionOptions::new()).await,
        RefusalReason::UntrustedOrigin
    );
}

#[tokio::test]
async fn a_client_without_origin_or_fetch_metadata_passes_the_origin_check() {
    let backend = Backend::default();
    let served = served("POST", &[("cookie", "sid=s1")]);
    send(
        SessionOptions::new().cookies(["sid"]),
        &backend,
        &served,
        call(Kind::Mutation),
    )
    .await
    .unwrap();
    assert_eq!(backend.last()["cookie"], "sid=s1");
}

#[tokio::test]
async fn session_set_cookies_pass_back_to_the_served_response() {
    let backend = Backend::setting(&[
        "sid=new; Path=/; HttpOnly",
        "sess_region=us",
        "theme=light",
        "access_token=t2; Secure",
        "csrf_token=c2",
        "broken",
    ]);
    let served = served("GET", &[("cookie", "sid=s1")]);
    let response = send(
        options().pass_set_cookie(true),
        &backend,
        &served,
        call(Kind::Query),
    )
    .await
    .unwrap();
    let passed = served.take_response_headers();
    assert_eq!(
        passed.get_all(SET_COOKIE).iter().collect::<Vec<_>>(),
        [
            "sid=new; Path=/; HttpOnly",
            "sess_region=us",
            "access_token=t2; Secure",
            "csrf_token=c2"
        ]
    );
    assert_eq!(passed.len(), 4);
    // The caller still sees the upstream's whole answer.
    assert_eq!(response.headers().get_all(SET_COOKIE).iter().count(), 6);
}

#[tokio::test]
async fn set_cookies_stay_upstream_without_pass_set_cookie() {
    let backend = Backend::setting(&["sid=new"]);
    let served = served("GET", &[("cookie", "sid=s1")]);
    send(options(), &backend, &served, call(Kind::Query))
        .await
        .unwrap();
    assert!(served.take_response_headers().is_empty());
}

#[tokio::test]
async fn an_explicit_context_wins_over_the_one_in_scope() {
    let backend = Backend::default();
    let in_scope = served("GET", &[("cookie", "sid=scoped")]);
    let explicit = served("GET", &[("cookie", "sid=explicit")]);
    let mut request = call(Kind::Query);
    request.extensions_mut().insert(explicit);
    send(options(), &backend, &in_scope, request).await.unwrap();
    assert_eq!(backend.last()["cookie"], "sid=explicit");

    // With only the explicit one, outside any scope.
    let service = SessionLayer::new(options()).layer(backend.clone());
    let mut request = call(Kind::Query);
    request
        .extensions_mut()
        .insert(served("GET", &[("cookie", "sid=alone")]));
    service.oneshot(request).await.unwrap();
    assert_eq!(backend.last()["cookie"], "sid=alone");
}

#[tokio::test]
async fn inner_errors_come_through_boxed() {
    let service = SessionLayer::new(options()).layer(tower::service_fn(|_: Request<Body>| async {
        Err::<Response<Body>, _>(std::io::Error::other("down"))
    }));
    let err = service.oneshot(call(Kind::Query)).await.unwrap_err();
    assert!(err.is::<std::io::Error>());
}

fn signing_key() -> CsrfKey {
    CsrfKey::new(*b"0123456789abcdef0123456789abcdef")
}

fn signed_options() -> SessionOptions {
    SessionOptions::new()
        .cookies(["sid"])
        .csrf_signed("csrf_token", "x-csrf-token", signing_key())
}

fn write_with_token(session: &str, token: &str) -> ServedRequest {
    let cookie = format!("{session}; csrf_token={token}");
    served(
        "POST",
        &[
            ("origin", "https://app.example.com"),
            ("cookie", &cookie),
            ("x-csrf-token", token),
        ],
    )
}

#[tokio::test]
async fn a_signed_token_passes_for_its_own_session() {
    let backend = Backend::default();
    let token = csrf::issue(&signing_key(), "sid=s1").unwrap();
    let served = write_with_token("sid=s1", &token);
    send(signed_options(), &backend, &served, call(Kind::Mutation))
        .await
        .expect("a token signed for this session passes");
    assert_eq!(backend.last()["x-csrf-token"], token.as_str());
}

#[tokio::test]
async fn a_planted_or_foreign_token_is_refused_even_when_header_and_cookie_match() {
    // Someone who can write the victim's cookies (a sibling subdomain) sets a token of
    // their own choosing and makes the page repeat it: plain double-submit would pass.
    let planted = write_with_token("sid=s1", "attacker-chosen");
    assert_eq!(
        refusal(&planted, signed_options()).await,
        RefusalReason::CsrfSignatureInvalid
    );
    // The plain form cannot tell: header and cookie match, so the planted token passes.
    send(
        options(),
        &Backend::default(),
        &planted,
        call(Kind::Mutation),
    )
    .await
    .expect("plain double-submit takes a planted token");
    // A real token, but issued for another user's session.
    let theirs = csrf::issue(&signing_key(), "sid=attacker").unwrap();
    let served = write_with_token("sid=s1", &theirs);
    assert_eq!(
        refusal(&served, signed_options()).await,
        RefusalReason::CsrfSignatureInvalid
    );
    // A token signed with another key.
    let forged = csrf::issue(&CsrfKey::new([7u8; 32]), "sid=s1").unwrap();
    let served = write_with_token("sid=s1", &forged);
    let err = send(
        signed_options(),
        &Backend::default(),
        &served,
        call(Kind::Mutation),
    )
    .await
    .unwrap_err();
    let refused = err.downcast_ref::<SessionRefused>().unwrap();
    assert_eq!(refused.reason().code(), "CSRF_CHECK_FAILED");
    assert_eq!(
        err.to_string(),
        "write refused by the session: CSRF check failed: the CSRF token is not signed for this \
         session; sign in again: the token in the `csrf_token` cookie belongs to another session"
    );
}

#[test]
fn only_a_session_the_key_signed_a_token_for_is_a_signed_session() {
    let layer = SessionLayer::new(signed_options());
    let with = |cookie: &str| {
        let mut headers = HeaderMap::new();
        headers.insert("cookie", HeaderValue::from_str(cookie).unwrap());
        layer.signed_session(&headers)
    };
    let token = csrf::issue(&signing_key(), "sid=s1").unwrap();
    assert_eq!(
        with(&format!("theme=dark; sid=s1; csrf_token={token}")).as_deref(),
        Some("sid=s1")
    );
    // Made-up values: another session with that token, a second `sid`, a token of another key.
    assert_eq!(with(&format!("sid=s2; csrf_token={token}")), None);
    assert_eq!(with(&format!("sid=s1; sid=s2; csrf_token={token}")), None);
    let forged = csrf::issue(&CsrfKey::new([7u8; 32]), "sid=s1").unwrap();
    assert_eq!(with(&format!("sid=s1; csrf_token={forged}")), None);
    assert_eq!(with("sid=s1; csrf_token=made-up"), None);
    assert_eq!(with("sid=s1"), None);
    // A token issued before sign-in signs the empty session, which is nobody's.
    let anonymous = csrf::issue(&signing_key(), "").unwrap();
    assert_eq!(with(&format!("csrf_token={anonymous}")), None);
    // Without a key nothing vouches for a session.
    let unsigned = SessionLayer::new(options());
    let mut headers = HeaderMap::new();
    let cookie = format!("sid=s1; csrf_token={token}");
    headers.insert("cookie", HeaderValue::from_str(&cookie).unwrap());
    assert_eq!(unsigned.signed_session(&headers), None);
}

fn fetch(method: &str, site: &str, extra: &[(&str, &str)]) -> ServedRequest {
    let mut headers = vec![("cookie", "sid=s1"), ("sec-fetch-site", site)];
    headers.extend_from_slice(extra);
    served(method, &headers)
}

#[tokio::test]
async fn fetch_metadata_refuses_reads_another_site_sends() {
    let policy = || SessionOptions::new().cookies(["sid"]).fetch_metadata(true);
    let backend = Backend::default();
    let cross = fetch("GET", "cross-site", &[("sec-fetch-mode", "cors")]);
    let err = send(policy(), &backend, &cross, call(Kind::Query))
        .await
        .expect_err("a cross-site read is refused");
    let refused = err.downcast_ref::<SessionRefused>().unwrap();
    assert_eq!(refused.reason(), RefusalReason::CrossSite);
    assert!(
        err.to_string().starts_with("read refused by the session"),
        "{err}"
    );
    assert_eq!(backend.calls(), 0);
    let sibling = fetch(
        "GET",
        "same-site",
        &[("origin", "https://blog.example.com")],
    );
    assert!(send(policy(), &backend, &sibling, call(Kind::Query))
        .await
        .is_err());
    // Without the policy, reads are never checked.
    let plain = SessionOptions::new().cookies(["sid"]);
    send(plain, &backend, &cross, call(Kind::Query))
        .await
        .unwrap();
    assert_eq!(backend.last()["cookie"], "sid=s1");
}

#[tokio::test]
async fn fetch_metadata_lets_through_own_trusted_navigations_and_non_browsers() {
    let policy = || {
        SessionOptions::new()
            .cookies(["sid"])
            .fetch_metadata(true)
            .trusted_origins(["https://admin.example.com"])
    };
    let backend = Backend::default();
    let passes = [
        fetch("GET", "same-origin", &[]),
        fetch("GET", "none", &[]),
        served("GET", &[("cookie", "sid=s1")]),
        fetch(
            "GET",
            "same-site",
            &[("origin", "https://admin.example.com")],
        ),
        fetch(
            "GET",
            "cross-site",
            &[
                ("sec-fetch-mode", "navigate"),
                ("sec-fetch-dest", "document"),
            ],
        ),
    ];
    for served in &passes {
        send(policy(), &backend, served, call(Kind::Query))
            .await
            .unwrap_or_else(|e| panic!("{:?}: {e}", served.headers()));
    }
    let refused = [
        fetch("POST", "cross-site", &[("sec-fetch-mode", "navigate")]),
        fetch(
            "GET",
            "cross-site",
            &[("sec-fetch-mode", "navigate"), ("sec-fetch-dest", "embed")],
        ),
    ];
    for served in &refused {
        assert!(
            send(policy(), &backend, served, call(Kind::Query))
                .await
                .is_err(),
            "{:?}",
            served.headers()
        );
    }
    // An unguarded endpoint opted out of every cross-site check.
    let cross = fetch("POST", "cross-site", &[]);
    send(
        policy(),
        &backend,
        &cross,
        write_with(SessionMode::Unguarded),
    )
    .await
    .unwrap();
}

#[test]
fn a_handshake_passes_from_its_own_or_a_trusted_origin_only() {
    let layer = SessionLayer::new(options().trusted_origins(["https://admin.example.com"]));
    let handshake = |headers: &[(&str, &str)]| layer.check_handshake(&served("GET", headers));
    assert!(handshake(&[("origin", "https://app.example.com")]).is_ok());
    assert!(handshake(&[("origin", "https://admin.example.com")]).is_ok());
    assert!(handshake(&[]).is_ok(), "not a browser");
    let refused = handshake(&[("origin", "https://evil.example")]).unwrap_err();
    assert_eq!(refused.reason(), RefusalReason::UntrustedOrigin);
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused
        .to_string()
        .starts_with("socket handshake refused by the session"));
    assert!(handshake(&[("origin", "null")]).is_err());
    assert!(handshake(&[("sec-fetch-site", "cross-site")]).is_err());
    // The handshake cannot carry a CSRF header: the origin alone decides.
    assert!(handshake(&[("origin", "https://app.example.com"), ("cookie", "sid=1")]).is_ok());
}

#[test]
fn tokens_compare_whole() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(constant_time_eq(b"", b""));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"abc", b"ab"));
    assert!(!constant_time_eq(b"xbc", b"abc"));
}

#[tokio::test]
async fn a_call_with_no_served_request_is_logged_once_unless_its_session_is_off() {
    let logs = courier_test_support::Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let backend = Backend::default();
    let mut service = SessionLayer::new(options()).layer(backend.clone());
    tracing::subscriber::with_default(subscriber, || {
        // Made outside any served request: `call` runs here, under this subscriber.
        drop(service.call(write_with(SessionMode::Off)));
        assert!(
            logs.text().is_empty(),
            "a session off is the server's own call"
        );
        drop(service.call(call(Kind::Query)));
        drop(service.call(call(Kind::Mutation)));
    });
    let logged = logs.text();
    assert_eq!(logged.lines().count(), 1, "said once: {logged}");
    assert!(logged.contains("WARN"), "{logged}");
    assert!(logged.contains("endpoint=\"x.y\""), "{logged}");
    assert!(
        logged.contains("add `courier::layers::context::ContextLayer`"),
        "{logged}"
    );
}
