//! The site under attack: a recording upstream on 127.0.0.1, a `Proxy` in front of it served
//! by `Proxy::serve` on worker threads of its own (the path `courier serve` takes; mounted in
//! an app, on the test's runtime), and raw HTTP/1.1 over TCP to talk to it as an attacker does,
//! byte for byte.

use axum::extract::ws::{Message, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use courier_core::{
    ApiDef, CacheOptions, ChannelEndpoint, ChannelHandler, ChannelHandlers, CsrfKey, Event,
    GroupDef, HttpEndpoint, Peer, PeerHandler, SessionOptions, StreamEndpoint, StreamHandler,
    StreamRequest,
};
use courier_server::{Proxy, Shutdown};

use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The CSRF signing key of the site's session.
pub(crate) fn key() -> CsrfKey {
    CsrfKey::new(*b"attack-suite-key-of-32-bytes-ok!")
}

/// The bounds the site is served with: short, so the slow-client tests are quick.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_millis(800);
pub(crate) const BODY_READ_TIMEOUT: Duration = Duration::from_millis(800);
pub(crate) const BODY_LIMIT: usize = 64 * 1024;

pub(crate) use courier_test_support::Recorder;

/// How many WebSocket handshakes the upstream accepted (recorded with the method `WS`).
pub(crate) fn sockets(recorder: &Recorder) -> usize {
    recorder
        .seen()
        .iter()
        .filter(|seen| seen.method == "WS")
        .count()
}

async fn record(State(recorder): State<Recorder>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let target = parts
        .uri
        .path_and_query()
        .map_or("/".into(), |p| p.to_string());
    recorder.record_body(&Request::from_parts(parts, ()), body);
    if target.starts_with("/users/slow") {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let mut response = axum::Json(json!({ "ok": true, "target": target })).into_response();
    let headers = response.headers_mut();
    headers.insert("x-tenant", "from-upstream".parse().unwrap());
    headers.insert("x-internal", "upstream-secret".parse().unwrap());
    if target.starts_with("/users/hop") {
        // Hop-by-hop headers an upstream (or something between) may answer with: none of
        // them, nor what `connection` names, may reach the browser.
        headers.insert("connection", "x-tenant".parse().unwrap());
        headers.insert("keep-alive", "timeout=600".parse().unwrap());
        headers.insert(
            "proxy-authenticate",
            "Basic realm=upstream".parse().unwrap(),
        );
        headers.insert("trailer", "x-signature".parse().unwrap());
    }
    response
}

async fn room(
    State(recorder): State<Recorder>,
    upgrade: WebSocketUpgrade,
    request: Request,
) -> Response {
    let (mut parts, _) = request.into_parts();
    parts.method = http::Method::from_bytes(b"WS").expect("a valid extension method");
    recorder.record(&Request::from_parts(parts, ()));
    upgrade.on_upgrade(|mut socket| async move {
        while let Some(Ok(message)) = socket.recv().await {
            if let Message::Text(text) = message {
                let _ = socket.send(Message::Text(text)).await;
            }
        }
    })
}

async fn events(State(recorder): State<Recorder>, request: Request) -> Response {
    recorder.record(&request);
    (
        [("content-type", "text/event-stream")],
        "id: 1\ndata: {\"n\":1}\n\n",
    )
        .into_response()
}

/// The recording upstream, on an ephemeral port.
pub(crate) async fn upstream() -> (SocketAddr, Recorder) {
    let recorder = Recorder::default();
    let app = Router::new()
        .route("/users/rooms/{id}", get(room))
        .route("/users/events", get(events))
        .fallback(record)
        .with_state(recorder.clone());
    let addr = courier_test_support::serve(app).await;
    (addr, recorder)
}

/// The API the proxy serves as source `demo`: a session with signed CSRF and the Fetch
/// Metadata policy, allow-listed headers, exposed reads, writes, a sensitive read, a stream, a
/// remote and an implemented channel, and an unexposed group.
pub(crate) fn api(upstream: SocketAddr, joins: Arc<AtomicUsize>) -> ApiDef {
    let lobby = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
        peer.publish(json!({ "said": message }))
    })
    .on_join(PeerHandler::new(move |_peer| {
        let joins = Arc::clone(&joins);
        async move {
            joins.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }));
    // Names its events after what the subscriber sent, as a handler might: a line break in it
    // must not let the subscriber write fields of their own into the event stream.
    let named = StreamHandler::new(|request: StreamRequest| {
        let name = request.variables["name"]
            .as_str()
            .unwrap_or("tick")
            .to_owned();
        futures_util::stream::iter([
            Ok(Event::new(json!({ "n": 1 })).event(name)),
            Ok(Event::new(json!({ "n": 2 }))),
        ])
    });
    let users = GroupDef::new()
        .prefix("/users")
        .expose(true)
        .endpoint("get", HttpEndpoint::get("/:id").cache(CacheOptions::new()))
        .endpoint("search", HttpEndpoint::get(""))
        .endpoint("create", HttpEndpoint::post(""))
        .endpoint(
            "login",
            HttpEndpoint::post("/login").reads().sensitive_variables(),
        )
        .endpoint("hop", HttpEndpoint::get("/hop"))
        .endpoint(
            "slow",
            HttpEndpoint::get("/slow").timeout(Duration::from_millis(300)),
        )
        .endpoint("events", StreamEndpoint::get("/events"))
        .endpoint("named", StreamEndpoint::implement(named))
        .endpoint("room", ChannelEndpoint::connect("/rooms/:id").send())
        .endpoint(
            "lobby",
            ChannelEndpoint::implement(ChannelHandler::Duplex(lobby)),
        );
    ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .header("x-api-key", "source-secret")
        .allowed_headers(["x-tenant", "x-api-key"])
        .session(
            SessionOptions::new()
                .cookies(["sid"])
                .csrf_signed("csrf", "x-csrf", key())
                .trusted_origins(["https://admin.example.com"])
                .fetch_metadata(true),
        )
        .group("users", users)
        .group(
            "admin",
            GroupDef::new()
                .prefix("/admin")
                .endpoint("purge", HttpEndpoint::post("/purge"))
                .endpoint("list", HttpEndpoint::get("")),
        )
        .build()
        .expect("the attack suite's API builds")
}

/// The site: the proxy's address, what its upstream received, how many subscribers the
/// implemented channel admitted, and the proxy's stop handle.
pub(crate) struct Site {
    pub(crate) proxy: SocketAddr,
    pub(crate) upstream: Recorder,
    pub(crate) upstream_addr: SocketAddr,
    pub(crate) joins: Arc<AtomicUsize>,
    #[allow(dead_code)]
    pub(crate) stop: Shutdown,
}

impl Site {
    /// The `host` the upstream's requests carry: its own address.
    pub(crate) fn upstream_host(&self) -> String {
        self.upstream_addr.to_string()
    }
}

/// The proxy as `courier serve` runs it (`Proxy::serve`, its call route ahead of the router, on
/// worker threads of its own), in front of a fresh recording upstream.
pub(crate) async fn site() -> Site {
    site_of(None, None, 2).await
}

/// As [`site`], the proxy's router made into an app by `app` (an axum app mounting `Proxy`).
pub(crate) async fn site_with(app: fn(Router) -> Router) -> Site {
    site_of(Some(app), None, 0).await
}

/// As [`site`], the proxy also serving the files under `dir` (`Proxy::static_dir`).
pub(crate) async fn site_with_files(dir: &std::path::Path) -> Site {
    site_of(None, Some(dir), 2).await
}

/// `app`: what makes an app of the proxy's router (`Proxy::serve_with`), or none for the proxy
/// alone (`Proxy::serve`); `threads`: the proxy's worker threads, or `0` to serve on the
/// test's runtime.
async fn site_of(
    app: Option<fn(Router) -> Router>,
    files: Option<&std::path::Path>,
    threads: usize,
) -> Site {
    let (upstream, recorder) = upstream().await;
    let joins = Arc::new(AtomicUsize::new(0));
    let mut proxy = Proxy::new().worker_threads(threads);
    if let Some(dir) = files {
        proxy = proxy.static_dir(dir);
    }
    let proxy = proxy
        .source("demo", api(upstream, Arc::clone(&joins)))
        .ws_path("/api/ws")
        .body_limit(BODY_LIMIT)
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .body_read_timeout(BODY_READ_TIMEOUT);
    let stop = proxy.shutdown_handle();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    match app {
        Some(app) => tokio::spawn(proxy.serve_with(listener, app)),
        None => tokio::spawn(proxy.serve(listener)),
    };
    Site {
        proxy: addr,
        upstream: recorder,
        upstream_addr: upstream,
        joins,
        stop,
    }
}

/// What came back on a connection: the bytes, and whether the server closed it.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub(crate) raw: Vec<u8>,
    pub(crate) closed: bool,
}

impl Exchange {
    /// The responses in the bytes, in order.
    pub(crate) fn responses(&self) -> Vec<Answer> {
        parse_responses(&self.raw)
    }

    /// The one response there must be.
    pub(crate) fn answer(&self) -> Answer {
        let mut responses = self.responses();
        assert_eq!(
            responses.len(),
            1,
            "one response, got {}",
            String::from_utf8_lossy(&self.raw)
        );
        responses.remove(0)
    }
}

/// Writes `bytes` on a fresh connection, then reads until the server closes it or stays silent
/// for `quiet`.
pub(crate) async fn exchange_within(addr: SocketAddr, bytes: &[u8], quiet: Duration) -> Exchange {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    // A server may refuse before reading all of it; what it did not read is not our concern.
    let _ = tcp.write_all(bytes).await;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let closed = loop {
        match tokio::time::timeout(quiet, tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Err(_) => break false,
        }
    };
    Exchange { raw, closed }
}

/// [`exchange_within`] with a second of quiet.
pub(crate) async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Exchange {
    exchange_within(addr, bytes, Duration::from_secs(1)).await
}

/// A request as a browser on the proxy's own origin sends it, `connection: close`.
pub(crate) fn request(
    site: &Site,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Vec<u8> {
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n",
        site.proxy
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    head.push_str(body);
    head.into_bytes()
}

/// The headers of a browser on the proxy's own origin making a write the session admits: its
/// own `Origin`, the session cookie and a signed CSRF token in cookie and header.
pub(crate) fn good_write_headers(site: &Site) -> Vec<(String, String)> {
    let token = courier_layers::session::csrf::issue(&key(), "sid=victim").unwrap();
    vec![
        ("origin".into(), format!("http://{}", site.proxy)),
        ("cookie".into(), format!("sid=victim; csrf={token}")),
        ("x-csrf".into(), token),
        ("content-type".into(), "application/json".into()),
    ]
}

/// Borrowed pairs of owned headers.
pub(crate) fn pairs(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// After an attack: the proxy still answers a normal call, and the upstream gets it.
pub(crate) async fn still_serves(site: &Site) {
    let normal = |site: &Site| {
        site.upstream
            .seen()
            .iter()
            .filter(|seen| seen.target == "/users/42")
            .count()
    };
    let before = normal(site);
    let call = request(
        site,
        "GET",
        "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A42%7D",
        &[],
        "",
    );
    let answer = exchange(site.proxy, &call).await.answer();
    assert_eq!(
        answer.status, 200,
        "a normal call after the attack: {answer:?}"
    );
    assert_eq!(normal(site), before + 1, "the upstream got the normal call");
}

/// One HTTP response read off the wire.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("a JSON body ({e}): {}", String::from_utf8_lossy(&self.body))
        })
    }

    /// The refusal's `error.code`.
    pub(crate) fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("a refusal body: {}", String::from_utf8_lossy(&self.body)))
            .to_owned()
    }
}

fn parse_responses(mut raw: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    while let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        raw = &raw[end + 4..];
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let body =
            if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
                let length = length.min(raw.len());
                let body = raw[..length].to_vec();
                raw = &raw[length..];
                body
            } else if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
                let mut body = Vec::new();
                loop {
                    let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else {
                        raw = &[];
                        break;
                    };
                    let size = usize::from_str_radix(
                        String::from_utf8_lossy(&raw[..line_end])
                            .split(';')
                            .next()
                            .unwrap_or("")
                            .trim(),
                        16,
                    )
                    .unwrap_or(0);
                    raw = &raw[line_end + 2..];
                    if size == 0 {
                        raw = raw.get(2..).unwrap_or(&[]);
                        break;
                    }
                    let size = size.min(raw.len());
                    body.extend_from_slice(&raw[..size]);
                    raw = raw.get(size + 2..).unwrap_or(&[]);
                }
                body
            } else {
                Vec::new()
            };
        answers.push(Answer {
            status,
            headers,
            body,
        });
    }
    answers
}

/// How long `f` took.
pub(crate) async fn timed<F: std::future::Future>(f: F) -> (F::Output, Duration) {
    let start = Instant::now();
    let out = f.await;
    (out, start.elapsed())
}

/// A GET call of `users.MEMBER` with `variables` in `_v`, as the page's own, answered.
pub(crate) async fn read(site: &Site, member: &str, variables: &Value) -> Answer {
    let variables: String =
        form_urlencoded::byte_serialize(variables.to_string().as_bytes()).collect();
    let target = format!("/api/request?_s=demo&_g=users&_m={member}&_v={variables}");
    exchange(site.proxy, &request(site, "GET", &target, &[], ""))
        .await
        .answer()
}
