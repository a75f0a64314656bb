//! `courier call`, the real binary against an axum backend on 127.0.0.1: what the backend
//! received, what the binary printed (every stdout and stderr line parsed as JSON) and its exit
//! code, for successes, HTTP errors, calls with no response and configuration errors.
//!
//! The backend runs on the test's tokio runtime; the binary runs as a child process awaited with
//! `tokio::process`, so the runtime keeps serving while the child calls it.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;

/// Every request the backend received, as it read it.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Value>>>);

impl Seen {
    fn record(&self, request: Value) {
        self.0.lock().unwrap().push(request);
    }

    fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }
}

fn query(raw: Option<String>) -> Value {
    let uri: axum::http::Uri = format!("/?{}", raw.unwrap_or_default()).parse().unwrap();
    let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .map(|q| q.0)
        .unwrap_or_default();
    json!(pairs)
}

fn header(headers: &HeaderMap, name: &str) -> Value {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map_or(Value::Null, |v| json!(v))
}

async fn get_user(
    State(seen): State<Seen>,
    method: Method,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> impl IntoResponse {
    seen.record(json!({
        "method": method.as_str(),
        "id": id,
        "query": query(raw),
        "api_key": header(&headers, "x-api-key"),
    }));
    (
        AppendHeaders([("x-served-by", "backend"), ("x-tag", "a"), ("x-tag", "b")]),
        Json(json!({ "id": id, "name": "Ada" })),
    )
}

async fn create_user(
    State(seen): State<Seen>,
    method: Method,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> impl IntoResponse {
    seen.record(json!({
        "method": method.as_str(),
        "content_type": header(&headers, "content-type"),
        "body": body,
    }));
    (
        StatusCode::CREATED,
        Json(json!({ "id": 8, "created": true })),
    )
}

async fn missing(Path(id): Path<String>) -> impl IntoResponse {
    (
        StatusCode::NOT_FOUND,
        [("x-reason", "gone")],
        Json(json!({ "message": format!("no user {id}") })),
    )
}

async fn boom() -> impl IntoResponse {
    (StatusCode::INTERNAL_SERVER_ERROR, "internal trouble")
}

async fn garbled() -> &'static str {
    "{not json"
}

async fn slow() -> Json<Value> {
    tokio::time::sleep(Duration::from_secs(10)).await;
    Json(json!("too late"))
}

/// Five events, then the end event.
async fn events() -> impl IntoResponse {
    use axum::response::sse::{Event, Sse};
    let events = (1..=5).map(|n| Event::default().data(format!("{{\"n\":{n}}}")));
    let end = Event::default().event("courier.end").data("{}");
    Sse::new(futures_util::stream::iter(
        events.chain([end]).map(Ok::<_, std::convert::Infallible>),
    ))
}

/// Six events, two to a response, each response ended as a server behind an idle timeout
/// ends it; then the end event.
async fn ticks(headers: HeaderMap) -> impl IntoResponse {
    let from = headers
        .get("last-event-id")
        .map_or(1, |v| v.to_str().unwrap().parse::<u64>().unwrap() + 1);
    let mut body = String::from("retry: 10\n\n");
    for n in from..(from + 2).min(7) {
        body.push_str(&format!("id: {n}\ndata: {{\"n\":{n}}}\n\n"));
    }
    if from + 2 > 6 {
        body.push_str("event: courier.end\ndata: {}\n\n");
    }
    ([("content-type", "text/event-stream")], body)
}

/// Echoes each message with the room's id.
async fn room(
    Path(id): Path<String>,
    upgrade: axum::extract::ws::WebSocketUpgrade,
) -> impl IntoResponse {
    use axum::extract::ws::Message;
    upgrade.on_upgrade(move |mut socket| async move {
        while let Some(Ok(Message::Text(text))) = socket.recv().await {
            let message: Value = serde_json::from_str(text.as_str()).unwrap();
            let echo = json!({ "room": id, "echo": message }).to_string();
            if socket.send(Message::Text(echo.into())).await.is_err() {
                return;
            }
        }
    })
}

async fn backend() -> (SocketAddr, Seen) {
    let seen = Seen::default();
    let app = Router::new()
        .route("/users/{id}", get(get_user))
        .route("/users", post(create_user))
        .route("/missing/{id}", get(missing))
        .route("/boom", get(boom))
        .route("/garbled", get(garbled))
        .route("/slow", get(slow))
        .route("/users/events", get(events))
        .route("/users/ticks", get(ticks))
        .route("/users/rooms/{id}", get(room))
        .with_state(seen.clone());
    let addr = courier_test_support::serve(app).await;
    (addr, seen)
}

/// A port nothing listens on: bound, read, and released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A config file in a temporary directory: `demo` at the backend, `down` at a closed port.
fn config(addr: SocketAddr) -> (TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("courier.toml");
    let text = format!(
        r#"
[sources.demo]
base_url = "http://{addr}"
headers = {{ "x-api-key" = "secret" }}
default_query_params = {{ lang = "en" }}

[sources.demo.groups.users]
prefix = "/users"

[sources.demo.groups.users.endpoints.get]
get = "/:id"

[sources.demo.groups.users.endpoints.create]
post = ""


[sources.demo.groups.users.endpoints.events]
stream = "/events"

[sources.demo.groups.users.endpoints.ticks]
stream = "/ticks"

[sources.demo.groups.users.endpoints.room]
channel = "/rooms/:id"

[sources.demo.groups.archive.endpoints.user]
get = "/missing/:id"

[sources.demo.groups.health.endpoints.boom]
get = "/boom"

[sources.demo.groups.health.endpoints.garbled]
get = "/garbled"

[sources.demo.groups.health.endpoints.slow]
get = "/slow"
timeout_ms = 300

[sources.down]
base_url = "http://127.0.0.1:{port}"

[sources.down.groups.health.endpoints.ping]
get = "/ping"
"#,
        port = closed_port(),
    );
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// What a run of the binary left.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The one JSON line on stdout of a successful run.
    #[track_caller]
    fn ok(&self) -> Value {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert!(self.stderr.is_empty(), "stderr: {}", self.stderr);
        one_json_line(&self.stdout)
    }

    /// The one JSON line on stderr of a run that exited with `code`.
    #[track_caller]
    fn failed(&self, code: i32) -> Value {
        assert_eq!(self.code, Some(code), "stderr: {}", self.stderr);
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        one_json_line(&self.stderr)
    }

    /// The stderr of a configuration error with `code`, after checking its shape.
    #[track_caller]
    fn configuration(&self, code: &str) -> Value {
        let report = self.failed(2);
        assert_eq!(keys(&self.stderr), ["error", "code", "message"], "{report}");
        assert_eq!(report["error"], "configuration", "{report}");
        assert_eq!(report["code"], code, "{report}");
        assert!(
            message(&report).starts_with(code),
            "the message is the error's Display: {report}"
        );
        report
    }
}

#[track_caller]
fn one_json_line(text: &str) -> Value {
    assert!(text.ends_with('\n'), "a newline ends the line: {text:?}");
    assert_eq!(text.lines().count(), 1, "exactly one line: {text:?}");
    serde_json::from_str(text.trim_end()).expect("the line is JSON")
}

/// The top-level keys of a JSON object line, in the order they were written (a parsed `Value`
/// sorts them).
#[track_caller]
fn keys(text: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((key, serde::de::IgnoredAny)) = map.next_entry::<String, _>()? {
                        keys.push(key);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    serde_json::from_str::<Keys>(text.trim_end())
        .expect("an object")
        .0
}

fn message(report: &Value) -> &str {
    report["message"].as_str().expect("a message")
}

async fn courier(args: &[&str], stdin: Option<&str>) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_courier"));
    command
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("the courier binary runs");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(text.as_bytes()).await.unwrap();
        drop(pipe);
    }
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("courier finishes")
        .expect("courier's output is read");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// `courier call --config FILE ARGS…`.
async fn call(file: &std::path::Path, args: &[&str]) -> Run {
    let file = file.to_str().unwrap();
    let mut all = vec!["call", "--config", file];
    all.extend_from_slice(args);
    courier(&all, None).await
}

#[tokio::test]
async fn a_get_sends_path_and_query_variables() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(
        &file,
        &["demo", "users.get", r#"{"id": "a b", "fields": "name"}"#],
    )
    .await;
    assert_eq!(run.ok(), json!({ "id": "a b", "name": "Ada" }));
    assert_eq!(
        seen.all(),
        [json!({
            "method": "GET",
            "id": "a b",
            "query": [["fields", "name"], ["lang", "en"]],
            "api_key": "secret",
        })]
    );
}

#[tokio::test]
async fn a_post_sends_a_json_body() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(
        &file,
        &["demo", "users.create", r#"{"name": "Ada", "tags": [1, 2]}"#],
    )
    .await;
    assert_eq!(run.ok(), json!({ "id": 8, "created": true }));
    assert_eq!(
        seen.all(),
        [json!({
            "method": "POST",
            "content_type": "application/json",
            "body": { "name": "Ada", "tags": [1, 2] },
        })]
    );
}

#[tokio::test]
async fn variables_from_stdin() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let file = file.to_str().unwrap();
    let run = courier(
        &["call", "--config", file, "demo", "users.create", "-"],
        Some("{\n  \"name\": \"Grace\"\n}\n"),
    )
    .await;
    assert_eq!(run.ok(), json!({ "id": 8, "created": true }));
    assert_eq!(seen.all()[0]["body"], json!({ "name": "Grace" }));

    let run = courier(
        &["call", "--config", file, "demo", "users.create", "-"],
        Some("{\"name\": "),
    )
    .await;
    let report = run.configuration("INVALID_VARIABLES");
    assert!(message(&report).contains("from stdin"), "{report}");
    assert_eq!(seen.all().len(), 1, "nothing was sent");
}

#[tokio::test]
async fn raw_prints_status_headers_and_data() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    // A scalar fills the template's only parameter.
    let run = call(&file, &["demo", "users.get", "7", "--raw"]).await;
    let raw = run.ok();
    assert_eq!(keys(&run.stdout), ["status", "headers", "data"], "{raw}");
    assert_eq!(raw["status"], 200);
    assert_eq!(raw["headers"]["x-served-by"], "backend");
    assert_eq!(
        raw["headers"]["x-tag"],
        json!(["a", "b"]),
        "a repeated header"
    );
    assert_eq!(raw["headers"]["content-type"], "application/json");
    assert_eq!(raw["data"], json!({ "id": "7", "name": "Ada" }));
}

#[tokio::test]
async fn an_http_error_with_a_json_body() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "archive.user", r#"{"id": 9}"#]).await;
    let report = run.failed(1);
    assert_eq!(
        keys(&run.stderr),
        ["error", "status", "headers", "data"],
        "{report}"
    );
    assert_eq!(report["error"], "http");
    assert_eq!(report["status"], 404);
    assert_eq!(report["headers"]["x-reason"], "gone");
    assert_eq!(report["data"], json!({ "message": "no user 9" }));
}

#[tokio::test]
async fn an_http_error_with_a_text_body() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "health.boom"]).await;
    let report = run.failed(1);
    assert_eq!(report["error"], "http");
    assert_eq!(report["status"], 500);
    assert_eq!(report["data"], "internal trouble");
    assert!(
        report["headers"]["content-type"]
            .as_str()
            .is_some_and(|t| t.starts_with("text/plain")),
        "{report}"
    );
}

#[tokio::test]
async fn a_body_that_does_not_parse_is_a_decode_error() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "health.garbled"]).await;
    let report = run.failed(1);
    assert_eq!(
        keys(&run.stderr),
        ["error", "status", "message"],
        "{report}"
    );
    assert_eq!(report["error"], "decode");
    assert_eq!(report["status"], 200);
    assert!(message(&report).contains("health.garbled"), "{report}");
    assert!(message(&report).contains("JSON"), "{report}");
}

#[tokio::test]
async fn a_negative_number_is_a_variable_not_an_option() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.get", "-1"]).await;
    assert_eq!(run.ok()["id"], "-1");
    assert_eq!(seen.all()[0]["id"], "-1");
}

#[tokio::test]
async fn connection_refused_is_status_0_connect() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["down", "health.ping"]).await;
    let report = run.failed(1);
    assert_eq!(
        keys(&run.stderr),
        ["error", "status", "headers", "data", "kind", "message"],
        "{report}"
    );
    assert_eq!(report["error"], "http");
    assert_eq!(report["status"], 0);
    assert_eq!(report["headers"], json!({}));
    assert_eq!(report["data"], Value::Null);
    assert_eq!(report["kind"], "connect");
    assert!(message(&report).contains("health.ping"), "{report}");
}

#[tokio::test]
async fn the_files_timeout_is_status_0_timeout() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let started = std::time::Instant::now();
    let run = call(&file, &["demo", "health.slow"]).await;
    let report = run.failed(1);
    assert_eq!(report["status"], 0);
    assert_eq!(report["kind"], "timeout");
    assert_eq!(report["data"], Value::Null);
    assert!(message(&report).contains("timed out"), "{report}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the 300 ms limit ended the call, not the backend"
    );
}

#[tokio::test]
async fn variables_that_are_not_json() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.get", "{id: 7}"]).await;
    let report = run.configuration("INVALID_VARIABLES");
    assert!(message(&report).contains("not valid JSON"), "{report}");
    assert!(message(&report).contains("line 1 column 2"), "{report}");
    assert!(seen.all().is_empty());
}

#[tokio::test]
async fn an_unknown_endpoint() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.nope"]).await;
    let report = run.configuration("UNKNOWN_ENDPOINT");
    assert!(message(&report).contains("`users.nope`"), "{report}");
    assert!(
        message(&report).contains("health.boom, health.garbled, health.slow, users.create"),
        "the known endpoints are listed: {report}"
    );
    // A near miss is named.
    let run = call(&file, &["demo", "users.gte", "7"]).await;
    let report = run.configuration("UNKNOWN_ENDPOINT");
    assert!(
        message(&report).contains("did you mean `users.get`?"),
        "{report}"
    );
}

#[tokio::test]
async fn an_unknown_source() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["nope", "users.get", "7"]).await;
    let report = run.configuration("UNKNOWN_SOURCE");
    assert!(message(&report).contains("no source `nope`"), "{report}");
    assert!(
        message(&report).ends_with("its sources: demo, down"),
        "{report}"
    );
    // The same kind of error as an unknown endpoint, and a near miss is named.
    let run = call(&file, &["dmeo", "users.get", "7"]).await;
    let report = run.configuration("UNKNOWN_SOURCE");
    assert!(
        message(&report).ends_with("did you mean `demo`? Its sources: demo, down"),
        "{report}"
    );
}

#[tokio::test]
async fn a_missing_path_parameter() {
    let (addr, seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.get", r#"{"fields": "name"}"#]).await;
    let report = run.configuration("INVALID_VARIABLES");
    assert!(message(&report).contains("`users.get`"), "{report}");
    assert!(
        message(&report).contains("no value for path parameter `id`"),
        "{report}"
    );
    // And with no variables at all.
    let run = call(&file, &["demo", "users.get"]).await;
    let report = run.configuration("INVALID_VARIABLES");
    assert!(
        message(&report).contains("no value for path parameter `id`"),
        "{report}"
    );
    assert!(seen.all().is_empty(), "nothing was sent");
}

fn json_lines(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert!(run.stderr.is_empty(), "stderr: {}", run.stderr);
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[tokio::test]
async fn a_stream_prints_each_events_data_until_it_ends_or_max_events() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.events"]).await;
    let all: Vec<Value> = (1..=5).map(|n| json!({ "n": n })).collect();
    assert_eq!(json_lines(&run), all);
    let run = call(&file, &["demo", "users.events", "--max-events", "3"]).await;
    assert_eq!(json_lines(&run), all[..3]);
}

#[tokio::test]
async fn a_stream_whose_server_ends_each_response_is_followed_to_its_end_event() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.ticks"]).await;
    let all: Vec<Value> = (1..=6).map(|n| json!({ "n": n })).collect();
    assert_eq!(
        json_lines(&run),
        all,
        "resumed from each last id, nothing lost"
    );
}

#[tokio::test]
async fn a_channel_sends_stdin_lines_and_prints_each_message() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let file = file.to_str().unwrap();
    let args = [
        "call",
        "--config",
        file,
        "demo",
        "users.room",
        r#"{"id": "r1"}"#,
        "--max-events",
        "2",
    ];
    let run = courier(&args, Some("{\"text\": \"a\"}\n\n\"b\"\n")).await;
    assert_eq!(
        json_lines(&run),
        [
            json!({ "room": "r1", "echo": { "text": "a" } }),
            json!({ "room": "r1", "echo": "b" }),
        ]
    );
    // A line that is not JSON is a configuration error, and nothing more is sent.
    let run = courier(&args, Some("{nope\n")).await;
    run.configuration("INVALID_VARIABLES");
}

#[tokio::test]
async fn max_events_is_accepted_and_must_be_positive() {
    let (addr, _seen) = backend().await;
    let (_dir, file) = config(addr);
    let run = call(&file, &["demo", "users.get", "7", "--max-events", "2"]).await;
    assert_eq!(run.ok()["id"], "7", "no effect on an HTTP endpoint");
    let run = call(&file, &["demo", "users.get", "7", "--max-events", "0"]).await;
    assert_eq!(run.code, Some(2), "a usage error");
    assert!(run.stderr.contains("--max-events"), "{}", run.stderr);
}

#[tokio::test]
async fn a_config_file_error_is_reported_as_check_does() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.toml");
    let run = call(&missing, &["demo", "users.get"]).await;
    let report = run.configuration("CONFIG_IO");
    assert!(message(&report).contains("nowhere.toml"), "{report}");
}
