//! `courier serve`, the real binary: the proxy route from a config file in front of an axum
//! backend on 127.0.0.1, a call through it, and a graceful stop on SIGTERM: open streams end,
//! calls in flight finish, for up to `--grace-ms`.

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn serves_the_files_sources_and_stops_on_sigterm() {
    let backend = users_backend().await;

    let dir = tempfile::tempdir().unwrap();
    let config = users_config(&dir, backend, "[proxy]\nhttp = \"/rpc\"");

    let (mut child, addr) = spawn_serve(&config, &[]).await;

    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(
        b"GET /rpc?_s=demo&_g=users&_m=get&_v=7 HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body, json!({ "id": 7 }));

    sigterm(&child);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("courier stops within 30 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_to_the_browser_and_a_log_line_with_its_address() {
    // A port that was just bound and released: nothing listens there.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = users_config(&dir, down, "");
    let (mut child, addr) = spawn_serve(&config, &[]).await;

    let (tcp, head) = open(
        &addr,
        "GET /api/request?_s=demo&_g=users&_m=get&_v=7 HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n",
        "\r\n\r\n",
    )
    .await;
    let answer = head + &rest_of(tcp).await;
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "UPSTREAM_UNREACHABLE");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`users.get`: network error (connect): "),
        "{message}"
    );
    assert!(!message.contains(&down.port().to_string()), "{message}");

    sigterm(&child);
    let out = tokio::time::timeout(Duration::from_secs(30), async {
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .await
            .unwrap();
        stderr
    })
    .await
    .expect("courier stops within 30 s");
    let line = out
        .lines()
        .find(|line| line.contains("ERROR"))
        .unwrap_or_else(|| panic!("no error logged: {out}"));
    assert!(line.contains("status=502"), "{line}");
    assert!(
        line.contains(&format!(
            "GET http://{down}/users/7: network error (connect)"
        )),
        "{line}"
    );
}

#[test]
fn a_bad_address_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, "").unwrap();
    // Port 1 needs privileges the tests do not have; a taken port is just as good.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "-c", config.to_str().unwrap(), "-l", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_IO");
    assert!(report["message"]
        .as_str()
        .unwrap()
        .contains("cannot listen"));
}

/// A backend whose `/slow` tells the test it was reached and answers once the test lets it, and
/// whose `/events` sends one event and never ends.
async fn held_backend() -> (
    std::net::SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<()>,
    tokio::sync::oneshot::Sender<()>,
) {
    use axum::response::sse::{Event, Sse};
    use futures_util::StreamExt;
    use std::sync::{Arc, Mutex};
    let (reached, reached_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let app = Router::new()
        .route(
            "/slow",
            get(move || {
                let (reached, released) = (reached.clone(), released.clone());
                async move {
                    reached.send(()).unwrap();
                    let released = released.lock().unwrap().take();
                    if let Some(released) = released {
                        let _ = released.await;
                    }
                    Json(json!("finished"))
                }
            }),
        )
        .route(
            "/events",
            get(|| async {
                let first = futures_util::stream::once(async {
                    Ok::<_, std::convert::Infallible>(Event::default().data("{\"n\":1}"))
                });
                Sse::new(first.chain(futures_util::stream::pending()))
            }),
        );
    let backend = courier_test_support::serve(app).await;
    (backend, reached_rx, release)
}

#[tokio::test]
async fn serves_the_static_front_end_beside_the_proxy_on_one_origin() {
    let backend = users_backend().await;

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("web")).unwrap();
    std::fs::write(dir.path().join("web/index.html"), "<h1>the app</h1>").unwrap();
    std::fs::write(dir.path().join("web/app.js"), "export {};").unwrap();
    // `dir` resolves against the file's own folder, wherever `courier serve` runs.
    let config = users_config(&dir, backend, "[static]\ndir = \"web\"");
    let (mut child, addr) = spawn_serve(&config, &[]).await;
    let get =
        |target: &str| format!("GET {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n");
    let (tcp, head) = open(&addr, &get("/"), "\r\n\r\n").await;
    let page = head + &rest_of(tcp).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("content-type: text/html"), "{page}");
    assert!(page.ends_with("<h1>the app</h1>"), "{page}");
    let (tcp, head) = open(&addr, &get("/app.js"), "\r\n\r\n").await;
    let script = head + &rest_of(tcp).await;
    assert!(script.contains("content-type: text/javascript"), "{script}");
    let (tcp, head) = open(
        &addr,
        &get("/api/request?_s=demo&_g=users&_m=get&_v=7"),
        "\r\n\r\n",
    )
    .await;
    let call = head + &rest_of(tcp).await;
    assert!(call.ends_with(r#"{"id":7}"#), "{call}");
    sigterm(&child);
    child.wait().await.unwrap();

    // A folder that is not there: a configuration error, before anything is served.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0", "--static", "/no/such/folder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not a directory"), "{stderr}");
}

#[tokio::test]
async fn serves_the_browser_package_under_the_files_path_and_the_flag_wins() {
    let backend = users_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let config = users_config(&dir, backend, "[static]\npackage = \"/courier\"");
    let (mut child, addr) = spawn_serve(&config, &[]).await;
    let get = |target: &str, extra: &str| {
        format!("GET {target} HTTP/1.1\r\nhost: app\r\nconnection: close\r\n{extra}\r\n")
    };
    let (tcp, head) = open(&addr, &get("/courier/index.js", ""), "\r\n\r\n").await;
    let module = head + &rest_of(tcp).await;
    assert!(module.starts_with("HTTP/1.1 200"), "{module}");
    assert!(
        module.contains("content-type: text/javascript; charset=utf-8"),
        "{module}"
    );
    assert!(module.contains("export { createProxyCaller } from \"./caller.js\""));
    let etag = module
        .lines()
        .find_map(|line| line.strip_prefix("etag: "))
        .unwrap_or_else(|| panic!("no etag: {module}"));
    let (tcp, head) = open(&addr, &get("/courier/caller.js", ""), "\r\n\r\n").await;
    let imported = head + &rest_of(tcp).await;
    assert!(imported.starts_with("HTTP/1.1 200"), "{imported}");
    let matching = format!("if-none-match: {etag}\r\n");
    let (tcp, head) = open(&addr, &get("/courier/index.js", &matching), "\r\n\r\n").await;
    let revalidated = head + &rest_of(tcp).await;
    assert!(revalidated.starts_with("HTTP/1.1 304"), "{revalidated}");
    let (tcp, head) = open(&addr, &get("/courier/nope.js", ""), "\r\n\r\n").await;
    let unknown = head + &rest_of(tcp).await;
    assert!(unknown.starts_with("HTTP/1.1 404"), "{unknown}");
    sigterm(&child);
    child.wait().await.unwrap();

    // `--package` wins over the file's key.
    let (mut child, addr) = spawn_serve(&config, &["--package", "/lib/courier"]).await;
    let (tcp, head) = open(&addr, &get("/lib/courier/index.js", ""), "\r\n\r\n").await;
    let moved = head + &rest_of(tcp).await;
    assert!(moved.starts_with("HTTP/1.1 200"), "{moved}");
    let (tcp, head) = open(&addr, &get("/courier/index.js", ""), "\r\n\r\n").await;
    let gone = head + &rest_of(tcp).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    sigterm(&child);
    child.wait().await.unwrap();

    // A path that is not absolute, in the file or the flag: a configuration error.
    for (text, flag) in [
        ("[static]\npackage = \"courier\"", None),
        ("", Some("courier")),
    ] {
        let config = users_config(&dir, backend, text);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
            .args(["serve", "--config", config.to_str().unwrap()])
            .args(["--listen", "127.0.0.1:0"])
            .args(flag.map(|flag| ["--package", flag]).into_iter().flatten())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text} {flag:?}");
        let report: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(report["code"], "CONFIG_INVALID", "{report}");
        assert!(
            report["message"]
                .as_str()
                .unwrap()
                .contains("static.package"),
            "{report}"
        );
    }
}

/// `courier.toml` in `dir`: `head` (a `[proxy]` or `[static]` table), then source `demo` at
/// `backend` with its exposed `users.get` (`GET /users/:id`).
fn users_config(
    dir: &tempfile::TempDir,
    backend: std::net::SocketAddr,
    head: &str,
) -> std::path::PathBuf {
    let config = dir.path().join("courier.toml");
    std::fs::write(
        &config,
        format!(
            r#"{head}

[sources.demo]
base_url = "http://{backend}"

[sources.demo.groups.users]
prefix = "/users"
expose = true

[sources.demo.groups.users.endpoints.get]
get = "/:id"
"#
        ),
    )
    .unwrap();
    config
}

/// A backend answering `GET /users/{id}` with `{"id": id}`, on 127.0.0.1.
async fn users_backend() -> std::net::SocketAddr {
    let app = Router::new().route(
        "/users/{id}",
        get(|Path(id): Path<u64>| async move { Json(json!({ "id": id })) }),
    );
    let backend = courier_test_support::serve(app).await;
    backend
}

/// `courier serve` over a file with `users.slow` and `users.events` on `backend`, with `extra`
/// arguments; the child and the address it listens on.
async fn serve_held(
    dir: &tempfile::TempDir,
    backend: std::net::SocketAddr,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let config = dir.path().join("courier.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[sources.demo]
base_url = "http://{backend}"

[sources.demo.groups.users]
expose = true

[sources.demo.groups.users.endpoints.slow]
get = "/slow"

[sources.demo.groups.users.endpoints.create]
post = "/slow"

[sources.demo.groups.users.endpoints.events]
stream = "/events"
"#
        ),
    )
    .unwrap();
    spawn_serve(&config, extra).await
}

/// `courier serve` on `config` (an ephemeral port) with `extra` arguments, and the address its
/// "listening on" line gives.
async fn spawn_serve(config: &std::path::Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let addr = courier_test_support::listening_on(&mut child)
        .await
        .to_string();
    (child, addr)
}

/// Sends `request` and returns the connection and what came back up to `until`.
async fn open(addr: &str, request: &str, until: &str) -> (tokio::net::TcpStream, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(Duration::from_secs(10), async {
        while !String::from_utf8_lossy(&seen).contains(until) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("an answer within 10 s");
    (tcp, String::from_utf8_lossy(&seen).into_owned())
}

async fn rest_of(mut tcp: tokio::net::TcpStream) -> String {
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut rest))
        .await
        .expect("the response ends within 10 s")
        .unwrap();
    String::from_utf8_lossy(&rest).into_owned()
}

fn sigterm(child: &tokio::process::Child) {
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
}

const GET_SLOW: &str =
    "GET /api/request?_s=demo&_g=users&_m=slow HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n";
const GET_EVENTS: &str =
    "GET /api/sse?_s=demo&_g=users&_m=events HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n";

#[tokio::test]
async fn on_sigterm_open_streams_end_and_calls_in_flight_finish() {
    let (backend, mut reached, release) = held_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = serve_held(&dir, backend, &[]).await;

    let (stream, _) = open(&addr, GET_EVENTS, "{\"n\":1}").await;
    let mut call = tokio::net::TcpStream::connect(&addr).await.unwrap();
    call.write_all(GET_SLOW.as_bytes()).await.unwrap();
    reached.recv().await.expect("the call reached the backend");

    sigterm(&child);
    // The open stream is cut short (no last chunk: its client reconnects, elsewhere) instead
    // of holding the stop up...
    let rest = rest_of(stream).await;
    assert!(!rest.ends_with("0\r\n\r\n"), "{rest:?}");
    // ...while the call in flight is waited for.
    assert!(
        child.try_wait().unwrap().is_none(),
        "courier waits for the call"
    );
    release.send(()).unwrap();
    let answer = rest_of(call).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("\"finished\""), "{answer}");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("courier stops within 10 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn the_body_limit_and_the_grace_period_are_arguments() {
    let (backend, mut reached, _held_forever) = held_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) =
        serve_held(&dir, backend, &["--body-limit", "64", "--grace-ms", "300"]).await;

    let body = format!(r#"{{"variables":{{"name":"{}"}}}}"#, "x".repeat(64));
    let post = format!(
        "POST /api/request?_s=demo&_g=users&_m=create HTTP/1.1\r\nhost: app\r\n\
         connection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let (_, answer) = open(&addr, &post, "}}").await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("PAYLOAD_TOO_LARGE"), "{answer}");

    // A call the backend never answers is cut off once the grace period is over.
    let mut call = tokio::net::TcpStream::connect(&addr).await.unwrap();
    call.write_all(GET_SLOW.as_bytes()).await.unwrap();
    reached.recv().await.expect("the call reached the backend");
    sigterm(&child);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("courier stops within 10 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let cut = rest_of(call).await;
    assert!(!cut.starts_with("HTTP/1.1 200"), "{cut}");
}

/// Reads until the server closes the connection (`true`) or `within` passes (`false`).
async fn closed_within(tcp: &mut tokio::net::TcpStream, within: Duration) -> (bool, String) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(within, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .is_ok();
    (closed, String::from_utf8_lossy(&seen).into_owned())
}

#[tokio::test]
async fn the_files_limits_bound_slow_and_large_requests_and_the_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(
        &config,
        r#"
[proxy]
body_limit = 1000
header_read_timeout_ms = 400
body_read_timeout_ms = 400

[sources.demo]
base_url = "http://127.0.0.1:9"

[sources.demo.groups.users]
expose = true

[sources.demo.groups.users.endpoints.create]
post = "/users"
"#,
    )
    .unwrap();
    let (_child, addr) = spawn_serve(&config, &[]).await;

    // Half a head: closed at the file's 400 ms.
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(b"POST /api/request?_s=demo HTTP/1.1\r\nhost: app\r\n")
        .await
        .unwrap();
    let start = std::time::Instant::now();
    let (closed, _) = closed_within(&mut tcp, Duration::from_secs(5)).await;
    assert!(
        closed && start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );

    // A body declared over the file's limit: 413 from the head alone.
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(
        b"POST /api/request?_s=demo&_g=users&_m=create HTTP/1.1\r\nhost: app\r\ncontent-type: application/json\r\ncontent-length: 1001\r\n\r\n",
    )
    .await
    .unwrap();
    let (_, answer) = closed_within(&mut tcp, Duration::from_secs(2)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("PAYLOAD_TOO_LARGE"), "{answer}");

    // A body that stops arriving: 408 at the file's 400 ms.
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(
        b"POST /api/request?_s=demo&_g=users&_m=create HTTP/1.1\r\nhost: app\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{\"vari",
    )
    .await
    .unwrap();
    let (_, answer) = closed_within(&mut tcp, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");

    // The flag wins over the file: a larger body limit lets the same head through to the
    // body read.
    let (_child, addr) = spawn_serve(&config, &["--body-limit", "5000"]).await;
    let mut tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(
        b"POST /api/request?_s=demo&_g=users&_m=create HTTP/1.1\r\nhost: app\r\ncontent-type: application/json\r\ncontent-length: 1001\r\n\r\n",
    )
    .await
    .unwrap();
    let (_, answer) = closed_within(&mut tcp, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

/// The status line and body of `GET users.get` through the proxy at `addr`.
async fn get_user(addr: &str) -> String {
    let (tcp, head) = open(
        addr,
        "GET /api/request?_s=demo&_g=users&_m=get&_v=7 HTTP/1.1\r\nhost: app\r\nconnection: close\r\n\r\n",
        "\r\n\r\n",
    )
    .await;
    head + &rest_of(tcp).await
}

#[tokio::test]
async fn the_rate_limit_is_a_flag_and_a_key_and_the_flag_wins() {
    let backend = users_backend().await;
    let dir = tempfile::tempdir().unwrap();

    // Flags: 1 a second in bursts of 2; the third call is refused with 429.
    let config = users_config(&dir, backend, "");
    let (_child, addr) = spawn_serve(&config, &["--rate-limit", "1", "--rate-burst", "2"]).await;
    for _ in 0..2 {
        let answer = get_user(&addr).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let over = get_user(&addr).await;
    assert!(over.starts_with("HTTP/1.1 429"), "{over}");
    assert!(
        over.to_ascii_lowercase().contains("\r\nretry-after: 1\r\n"),
        "{over}"
    );
    let body: Value = serde_json::from_str(over.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED");

    // The file's key: 1 a second, a burst of one.
    let config = users_config(&dir, backend, "[proxy]\nrate_limit = 1");
    let (_child, addr) = spawn_serve(&config, &[]).await;
    assert!(get_user(&addr).await.starts_with("HTTP/1.1 200"));
    assert!(get_user(&addr).await.starts_with("HTTP/1.1 429"));

    // The flag wins over the file.
    let (_child, addr) = spawn_serve(&config, &["--rate-limit", "1000"]).await;
    for _ in 0..5 {
        let answer = get_user(&addr).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}

#[test]
fn a_burst_without_a_rate_or_a_rate_of_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, "").unwrap();
    let serve = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
            .args(["serve", "-c", config.to_str().unwrap(), "-l", "127.0.0.1:0"])
            .args(extra)
            .output()
            .unwrap()
    };
    let lone = serve(&["--rate-burst", "5"]);
    assert_eq!(lone.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&lone.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_INVALID");
    assert!(report["message"].as_str().unwrap().contains("--rate-limit"));
    // Zero is refused by the flag's parser (clap's usage error, exit 2).
    let zero = serve(&["--rate-limit", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--rate-limit"));
}

#[test]
fn a_zero_timeout_in_the_file_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, "[proxy]\nheader_read_timeout_ms = 0\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "-c", config.to_str().unwrap(), "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_INVALID");
    assert!(report["message"]
        .as_str()
        .unwrap()
        .contains("proxy.header_read_timeout_ms"));
}

/// A file serving one room, its subscribers sharing a topic by `id`, on the bus `redis`.
fn room_config(dir: &std::path::Path, redis: &str) -> std::path::PathBuf {
    room_config_with(dir, redis, "")
}

/// [`room_config`], with `more` keys in `[bus]` (and no Redis when `redis` is empty).
fn room_config_with(dir: &std::path::Path, redis: &str, more: &str) -> std::path::PathBuf {
    let redis = if redis.is_empty() {
        String::new()
    } else {
        format!("redis = \"{redis}\"")
    };
    let config = dir.join("courier.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[proxy]
ws = "/api/ws"

[bus]
{redis}
{more}

[sources.chat.groups.rooms]
expose = true

[sources.chat.groups.rooms.endpoints.room]
room = true
topic = ["id"]
"#
        ),
    )
    .unwrap();
    config
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// A subscriber of room `id` at the proxy at `addr`.
async fn join_room(addr: &str, id: &str, user: &str) -> Socket {
    join_room_from(addr, id, user, None).await
}

/// [`join_room`] for a subscriber that keeps positions: its hello frame's `since`.
async fn join_room_from(addr: &str, id: &str, user: &str, since: Option<Value>) -> Socket {
    let variables = format!(r#"{{"id":"{id}","user":"{user}"}}"#);
    let encoded: String = variables
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let hello = if since.is_some() { "&_h=1" } else { "" };
    let url = format!("ws://{addr}/api/ws?_s=chat&_g=rooms&_m=room&_v={encoded}{hello}");
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut socket, _) = tokio_tungstenite::client_async(url, tcp).await.unwrap();
    if let Some(since) = since {
        use futures_util::SinkExt;
        let hello = json!({ "type": "courier.hello", "since": since }).to_string();
        socket
            .send(tokio_tungstenite::tungstenite::Message::text(hello))
            .await
            .unwrap();
    }
    socket
}

/// Reads until the socket's close frame: its code and reason.
async fn close_of(socket: &mut Socket) -> (u16, String) {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    let read = async {
        while let Some(message) = socket.next().await {
            if let Ok(Message::Close(Some(frame))) = message {
                return (u16::from(frame.code), frame.reason.as_str().to_owned());
            }
        }
        panic!("no close frame")
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("closed within 20 s")
}

/// Waits until both processes hold the room's subscription on Redis.
async fn both_subscribed(redis: &courier_test_support::redis::RedisServer, id: &str) {
    let channel = format!("courier:rooms.room\u{1f}{{\"id\":\"{id}\"}}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while redis.subscribers(&channel) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "not subscribed within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_member_dropped_for_two_seconds_gets_all_200_messages_sent_on_another_process() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut redis = courier_test_support::redis::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = room_config_with(dir.path(), &redis.url(), "history = 1000");
    let (_first, first) = spawn_serve(&config, &[]).await;
    let (_second, second) = spawn_serve(&config, &[]).await;

    let mut ada = join_room_from(&first, "lobby", "ada", Some(Value::Null)).await;
    let at = next_message(&mut ada).await;
    assert_eq!(at["type"], "courier.at", "{at}");
    let mut bob = join_room(&second, "lobby", "bob").await;
    both_subscribed(&redis, "lobby").await;
    bob.send(Message::text(r#""before""#)).await.unwrap();
    let before = next_message(&mut ada).await;
    assert_eq!(
        (&before["type"], &before["data"]),
        (&json!("courier.message"), &json!("before"))
    );
    let last = before["at"].clone();
    assert_eq!(next_message(&mut bob).await, json!("before"));

    // ada's socket drops; bob says 200 things over the next 2 s, on the other process.
    drop(ada);
    let away = std::time::Instant::now();
    for n in 0..200 {
        bob.send(Message::text(n.to_string())).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for n in 0..200 {
        assert_eq!(next_message(&mut bob).await, json!(n));
    }
    assert!(away.elapsed() >= Duration::from_secs(2));
    let mut ada = join_room_from(&first, "lobby", "ada", Some(last.clone())).await;
    assert_eq!(
        next_message(&mut ada).await,
        json!({ "type": "courier.at", "at": last })
    );
    let mut at = String::new();
    for n in 0..200 {
        let message = next_message(&mut ada).await;
        assert_eq!(message["data"], json!(n), "{message}");
        at = message["at"].as_str().unwrap().to_owned();
    }
    bob.send(Message::text(r#""after""#)).await.unwrap();
    let after = next_message(&mut ada).await;
    assert_eq!(after["data"], "after", "once each: {after}");

    // Redis restarts empty: the history's epoch is gone, and the members are told.
    redis.restart();
    let (code, reason) = close_of(&mut ada).await;
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.starts_with("messages were missed: "), "{reason}");
    // Coming back from a position of the lost history is told of the gap at once; afresh works.
    let mut stale = join_room_from(&first, "lobby", "ada", Some(json!(at))).await;
    let (code, reason) = close_of(&mut stale).await;
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.starts_with("messages were missed: "), "{reason}");
    let mut fresh = join_room_from(&first, "lobby", "ada", Some(Value::Null)).await;
    let start = next_message(&mut fresh).await;
    assert_eq!(start["type"], "courier.at", "{start}");
    assert_ne!(start["at"], json!(at));
}

/// The next text message, as JSON, within 10 s.
async fn next_message(socket: &mut Socket) -> Value {
    use futures_util::StreamExt;
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a message within 10 s")
            .expect("open")
            .expect("no error");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

#[tokio::test]
async fn two_processes_on_one_redis_share_a_room() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let redis = courier_test_support::redis::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = room_config(dir.path(), &redis.url());
    let (_first, first) = spawn_serve(&config, &[]).await;
    let (_second, second) = spawn_serve(&config, &[]).await;

    let mut ada = join_room(&first, "lobby", "ada").await;
    let mut bob = join_room(&second, "lobby", "bob").await;
    let mut cy = join_room(&second, "kitchen", "cy").await;
    // Both processes hold their room's subscription on Redis before anyone speaks.
    both_subscribed(&redis, "lobby").await;

    ada.send(Message::text(r#"{"text":"hi from the first"}"#))
        .await
        .unwrap();
    assert_eq!(
        next_message(&mut bob).await,
        json!({ "text": "hi from the first" })
    );
    assert_eq!(
        next_message(&mut ada).await,
        json!({ "text": "hi from the first" })
    );
    bob.send(Message::text(r#""and from the second""#))
        .await
        .unwrap();
    assert_eq!(next_message(&mut ada).await, json!("and from the second"));
    assert_eq!(next_message(&mut bob).await, json!("and from the second"));
    // Another room hears nothing, and each message came once.
    use futures_util::StreamExt;
    for socket in [&mut ada, &mut bob, &mut cy] {
        let more = tokio::time::timeout(Duration::from_millis(300), socket.next()).await;
        assert!(more.is_err(), "nothing more: {more:?}");
    }
}

#[test]
fn a_bus_that_cannot_be_reached_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = room_config(dir.path(), &format!("redis://:s3cret@127.0.0.1:{closed}"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "-c", config.to_str().unwrap(), "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_IO");
    let message = report["message"].as_str().unwrap();
    assert!(message.contains("bus.redis"), "{message}");
    assert!(
        message.contains(&format!("127.0.0.1:{closed}")),
        "{message}"
    );
    assert!(!message.contains("s3cret"), "{message}");
}

#[tokio::test]
async fn a_history_without_redis_recovers_a_members_messages_in_one_process() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let dir = tempfile::tempdir().unwrap();
    let config = room_config_with(dir.path(), "", "history = 50");
    let (_serve, addr) = spawn_serve(&config, &[]).await;
    let mut ada = join_room_from(&addr, "lobby", "ada", Some(Value::Null)).await;
    let last = next_message(&mut ada).await["at"].clone();
    drop(ada);
    let mut bob = join_room(&addr, "lobby", "bob").await;
    for n in 0..5 {
        bob.send(Message::text(n.to_string())).await.unwrap();
        assert_eq!(next_message(&mut bob).await, json!(n));
    }
    let mut ada = join_room_from(&addr, "lobby", "ada", Some(last)).await;
    assert_eq!(next_message(&mut ada).await["type"], "courier.at");
    for n in 0..5 {
        assert_eq!(next_message(&mut ada).await["data"], json!(n));
    }
}
