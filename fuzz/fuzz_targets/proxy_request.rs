//! The whole proxy route, as a browser reaches it: a request of the input's making through
//! `Proxy`'s router (`tower::ServiceExt::oneshot`, no socket) to an in-memory upstream.
//!
//! The sources have reads, writes, a sensitive read, a `.via()` endpoint, a multipart upload,
//! remote and implemented streams and channels, a session with CSRF (plain and signed) and
//! origin checks, and allow-listed headers. The input is the request as HTTP/1.1 spells it
//! (see [`request`]), so seeds are readable and the dictionary's words (`_s=demo`,
//! `multipart/form-data; boundary=X`, …) splice in where they mean something.
//!
//! Checked: the proxy never answers 500 or another 5xx than 502/504; every 4xx on its paths is
//! `{"error":{"code","message"}}`; the upstream never sees a header the browser may not send
//! (not allow-listed, `host`, hop-by-hop), never a browser's copy of a header the source sets,
//! and never a dot segment; the browser never sees a header the upstream may not send back.

#![no_main]

use axum::body::Body as AxumBody;
use axum::extract::ConnectInfo;
use axum::Router;
use courier_core::{
    ApiDef, Body, BoxError, CacheOptions, ChannelEndpoint, ChannelHandler, CsrfKey, Event, Fetch,
    ForwardOptions, GroupDef, HttpEndpoint, SessionOptions, StreamEndpoint, StreamHandler,
    WireCall,
};
use courier_layers::session::csrf;
use courier_server::Proxy;
use http::header::{CONTENT_LENGTH, COOKIE, HOST, SET_COOKIE, TRANSFER_ENCODING};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::OnceLock;
use tower::ServiceExt;

const OWN_HOST: &str = "app.test";
const UPSTREAM: &str = "upstream.test";
/// The proxy's paths, as the router below mounts them.
const PATHS: [&str; 3] = ["/api/request", "/api/sse", "/api/ws"];
const TRUSTED: &str = "https://admin.example.com";
const SIGNING_KEY: &[u8; 32] = b"a 32-byte key, fixed for fuzzing";

/// Headers that belong to one hop and never cross the proxy.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

// ---- the sources ----

/// The in-memory upstream: checks what crossed the proxy, then answers 200 with headers the
/// proxy must filter on the way back (and an event stream for streams).
async fn upstream(request: Request<Body>) -> Result<Response<Body>, BoxError> {
    let (parts, body) = request.into_parts();
    let read = body.collect().await.map(|b| b.to_bytes().len());
    assert_eq!(parts.uri.host(), Some(UPSTREAM), "{}", parts.uri);
    // A transport sets its own host; the browser's never crosses.
    assert!(parts.headers.get_all(HOST).iter().all(|v| v == UPSTREAM));
    for name in std::iter::once("x-secret").chain(HOP_BY_HOP) {
        assert!(!parts.headers.contains_key(name), "`{name}` crossed");
    }
    let keys: Vec<_> = parts.headers.get_all("x-api-key").iter().collect();
    assert_eq!(keys, ["secret"], "the source's x-api-key, once");
    let path = parts.uri.path();
    assert!(
        path.split('/').all(|s| s != "." && s != ".."),
        "a dot segment reached the upstream: {path}"
    );
    let stream = path.ends_with("/events");
    let body = if stream {
        Body::from("id: 1\ndata: {\"n\":1}\n\n")
    } else {
        let echo = json!({ "method": parts.method.as_str(), "uri": parts.uri.to_string(),
                           "body": read.ok() });
        Body::from(echo.to_string())
    };
    let response = Response::builder()
        .header(
            "content-type",
            if stream {
                "text/event-stream"
            } else {
                "application/json"
            },
        )
        .header("x-tenant", "acme")
        .header("x-internal", "do-not-leak")
        .header("set-cookie", "sid=fresh; Path=/")
        .header("set-cookie", "upstream=1; Path=/")
        .body(body)?;
    Ok(response)
}

/// The groups every source shares; the endpoint that names `cookie` and `set-cookie` only where
/// there is no session (a session owns those headers).
fn groups(builder: courier_core::ApiBuilder, cookies: bool) -> courier_core::ApiBuilder {
    let ticks = StreamHandler::new(|request: courier_core::StreamRequest| {
        // A handler that names its events after what the subscriber asked for, and resumes
        // from the id it sent: both come from the browser.
        let name = request
            .variables
            .get("topic")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let from = request.last_event_id.clone().unwrap_or_default();
        let events = (1..=2).map(move |n| {
            let mut event = Event::new(json!({ "n": n })).id(format!("{from}{n}"));
            if let Some(name) = &name {
                event = event.event(name.clone());
            }
            Ok(event)
        });
        futures_util::stream::iter(events)
    });
    let push = ChannelHandler::push(|_request| futures_util::stream::empty());
    let mut users = GroupDef::new()
        .prefix("/users")
        .expose(true)
        .endpoint("get", HttpEndpoint::get("/:id").cache(CacheOptions::new()))
        .endpoint("list", HttpEndpoint::get(""))
        .endpoint("create", HttpEndpoint::post(""))
        .endpoint("update", HttpEndpoint::put("/:id"))
        .endpoint("remove", HttpEndpoint::del("/:id"))
        .endpoint("upload", HttpEndpoint::post("/:id/avatar"))
        .endpoint(
            "signed",
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
        .endpoint("file", HttpEndpoint::get("/files/:name.json"));
    if cookies {
        users = users.endpoint(
            "cookies",
            HttpEndpoint::get("/:id").headers(["cookie", "set-cookie"]),
        );
    }
    builder
        .group("users", users)
        .group(
            "live",
            GroupDef::new()
                .expose(true)
                .endpoint("feed", StreamEndpoint::get("/events"))
                .endpoint("ticks", StreamEndpoint::implement(ticks))
                .endpoint("room", ChannelEndpoint::connect("/ws"))
                .endpoint("news", ChannelEndpoint::implement(push)),
        )
        .group(
            "admin",
            GroupDef::new().endpoint("get", HttpEndpoint::get("/admin/:id")),
        )
}

fn source(session: Option<SessionOptions>) -> ApiDef {
    let mut builder = ApiDef::builder()
        .base_url(format!("http://{UPSTREAM}"))
        .fetch(Fetch::new(tower::service_fn(upstream)))
        .header("x-api-key", "secret")
        .allowed_headers(["x-tenant", "x-api-key"])
        .forward(
            ForwardOptions::new()
                .client_address(true)
                .request_id(true)
                .user_agent(true)
                .locale(true),
        );
    let cookies = session.is_none();
    if let Some(session) = session {
        builder = builder.session(session);
    }
    groups(builder, cookies)
        .build()
        .expect("the fuzzed sources build")
}

/// The router, built once: every run calls the same proxy, as a server's requests do.
fn proxy() -> &'static (tokio::runtime::Runtime, Router) {
    static PROXY: OnceLock<(tokio::runtime::Runtime, Router)> = OnceLock::new();
    PROXY.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let router = Proxy::new()
            .source("open", source(None))
            .source(
                "demo",
                source(Some(
                    SessionOptions::new()
                        .cookies(["sid", "csrf_token"])
                        .bearer("token")
                        .csrf("csrf_token", "x-csrf-token")
                        .pass_set_cookie(true)
                        .trusted_origins([TRUSTED]),
                )),
            )
            .source(
                "signed",
                source(Some(
                    SessionOptions::new()
                        .cookies(["sid"])
                        .csrf_signed("csrf_token", "x-csrf-token", CsrfKey::new(*SIGNING_KEY))
                        .fetch_metadata(true)
                        .trusted_origins([TRUSTED]),
                )),
            )
            .body_limit(4096)
            .http_path(PATHS[0])
            .sse_path(PATHS[1])
            .ws_path(PATHS[2])
            .into_router()
            .expect("the proxy builds");
        (runtime, router)
    })
}

// ---- from the input to a request ----

/// Stands for a CSRF token signed for the request's session, as the app issues it: a fuzzer
/// can't forge the HMAC, and without one the signed source refuses every write. Every header
/// value that holds it (the cookie and the header a page repeats it in) gets the same token.
const SIGNED_TOKEN: &str = "{signed}";

/// The request the input spells, as an HTTP/1.1 request without its version: a request line
/// (`METHOD TARGET`), header lines (`name: value`), a blank line, the body; lines end in LF or
/// CRLF. `None` for one no HTTP server would hand on (a verb, target or header that does not
/// parse).
///
/// The `host` defaults to the proxy's own, the `content-length` is the body's (a larger one
/// declared is kept: the proxy must refuse it from the head), and the peer is set as
/// `Proxy::serve` sets it.
fn request(input: &[u8]) -> Option<Request<AxumBody>> {
    let mut rest = input;
    let mut next_line = || {
        let end = rest.iter().position(|&b| b == b'\n');
        let line = &rest[..end.unwrap_or(rest.len())];
        rest = end.map_or(&[][..], |end| &rest[end + 1..]);
        line.strip_suffix(b"\r").unwrap_or(line)
    };
    let (method, target) = split_once(next_line(), b" ")?;
    let mut headers = Vec::new();
    loop {
        let line = next_line();
        if line.is_empty() {
            break;
        }
        let (name, value) = split_once(line, b":")?;
        headers.push((
            HeaderName::from_bytes(name).ok()?,
            value.trim_ascii().to_vec(),
        ));
    }
    let body = rest;

    let mut builder = Request::builder()
        .method(Method::from_bytes(method).ok()?)
        .uri(http::Uri::try_from(target).ok()?);
    let signed = headers
        .iter()
        .any(|(_, v)| find(v, SIGNED_TOKEN.as_bytes()).is_some());
    let token = if signed {
        signed_token(&headers)
    } else {
        String::new()
    };
    let mut declared = None;
    for (name, mut value) in headers.iter().cloned() {
        if name == CONTENT_LENGTH {
            declared = std::str::from_utf8(&value).ok()?.parse::<u64>().ok();
            continue;
        }
        if name == TRANSFER_ENCODING {
            // Framing is the server's: it hands on a whole body, never its framing.
            continue;
        }
        if let Some(at) = find(&value, SIGNED_TOKEN.as_bytes()) {
            value.splice(at..at + SIGNED_TOKEN.len(), token.bytes());
        }
        builder = builder.header(name, HeaderValue::from_bytes(&value).ok()?);
    }
    if !headers.iter().any(|(name, _)| name == HOST) {
        builder = builder.header(HOST, OWN_HOST);
    }
    let length = declared.map_or(body.len() as u64, |d| d.max(body.len() as u64));
    builder = builder.header(CONTENT_LENGTH, length);
    let mut request = builder.body(AxumBody::from(body.to_vec())).ok()?;
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 7], 50_000))));
    Some(request)
}

fn find(bytes: &[u8], needle: &[u8]) -> Option<usize> {
    bytes.windows(needle.len()).position(|w| w == needle)
}

fn split_once<'a>(bytes: &'a [u8], separator: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = find(bytes, separator)?;
    Some((&bytes[..at], &bytes[at + separator.len()..]))
}

/// A token signed for the session the request's cookies carry (the signed source's session
/// cookie is `sid`).
fn signed_token(headers: &[(HeaderName, Vec<u8>)]) -> String {
    let pairs = headers
        .iter()
        .filter(|(name, _)| name == COOKIE)
        .flat_map(|(_, value)| value.split(|&b| b == b';'))
        .filter_map(|pair| split_once(pair.trim_ascii(), b"="));
    let session = csrf::binding(pairs, |name| name == b"sid");
    csrf::issue(&CsrfKey::new(*SIGNING_KEY), &session).expect("a token")
}

/// The endpoint name the query addresses, when it names one once.
fn endpoint_name(request: &Request<AxumBody>) -> Option<String> {
    let query = request.uri().query()?;
    let mut names = form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == "_m");
    let (_, name) = names.next()?;
    names.next().is_none().then(|| name.into_owned())
}

// ---- the checks ----

fn check(
    ours: bool,
    endpoint: Option<&str>,
    method: &Method,
    status: StatusCode,
    headers: &http::HeaderMap,
    body: &[u8],
) {
    assert!(
        status != StatusCode::INTERNAL_SERVER_ERROR
            && (!status.is_server_error()
                || status == StatusCode::BAD_GATEWAY
                || status == StatusCode::GATEWAY_TIMEOUT),
        "the proxy failed on hostile input: {status} {}",
        String::from_utf8_lossy(body)
    );
    assert!(
        !headers.contains_key("x-internal"),
        "an upstream header leaked"
    );
    if endpoint != Some("cookies") {
        assert!(
            headers
                .get_all(SET_COOKIE)
                .iter()
                .all(|v| v != "upstream=1; Path=/"),
            "the upstream's set-cookie crossed where the endpoint does not name it"
        );
    }
    // HEAD answers carry no body; the upstream answers 200, so every 4xx on the proxy's
    // paths is the proxy's (another path is the app's, and axum's fallback answers it).
    if status.is_client_error() && method != Method::HEAD && ours {
        let refusal: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
            panic!(
                "a {status} refusal is not JSON ({e}): {}",
                String::from_utf8_lossy(body)
            )
        });
        let error = &refusal["error"];
        assert!(
            error["code"].is_string() && error["message"].is_string(),
            "a {status} refusal is not {{\"error\":{{\"code\",\"message\"}}}}: {refusal}"
        );
    }
}

fuzz_target!(|input: &[u8]| {
    let Some(request) = request(input) else {
        return;
    };
    let method = request.method().clone();
    let target = request.uri().clone();
    let endpoint = endpoint_name(&request);
    let (runtime, router) = proxy();
    runtime.block_on(async {
        let response = router.clone().oneshot(request).await.expect("infallible");
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        if std::env::var_os("FUZZ_SHOW").is_some() {
            // Running an input by hand (`FUZZ_SHOW=1 cargo fuzz run proxy_request FILE`)
            // shows what the proxy answered.
            let body = String::from_utf8_lossy(&body);
            eprintln!("{method} {target} -> {} {body:.300}", parts.status);
        }
        let ours = PATHS.contains(&target.path());
        check(
            ours,
            endpoint.as_deref(),
            &method,
            parts.status,
            &parts.headers,
            &body,
        );
    });
});
