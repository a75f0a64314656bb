//! A load test of the proxy route: a small JSON read (`GET /users/7` answered with
//! `{"id":7,"name":"user 7","email":"user7@example.com"}`) reached three ways in one run:
//!
//! - `backend`: the axum backend itself;
//! - `courier`: through `courier::server::Proxy`
//!   (`GET /api/request?_s=demo&_g=users&_m=get&_v=7`), which calls the backend with courier's
//!   client (its default transport — for this `http://` backend, courier's own pool of HTTP/1.1
//!   connections — and default layers) and streams the answer back, its router served by
//!   `axum::serve`;
//! - `courier serve`: the same proxy served by `Proxy::serve`, as `courier serve --threads 1`
//!   serves it (the header read timeout, the bound on heads, the first request's deadline,
//!   TCP_NODELAY; the connections served on one worker thread of a single-threaded runtime);
//! - `nginx`: through nginx as a reverse proxy (`proxy_pass` with an upstream keep-alive pool) in
//!   front of the same backend.
//!
//! Three loads, each with wrk (`wrk -t1 -c64 -d10s --latency`), one target after another, each
//! after a 2-second warm-up run:
//!
//! - **distinct reads** (the headline): every request reads another user (`/users/1`,
//!   `/users/2`, … by a wrk Lua script), so no two requests in flight are identical and
//!   coalescing shares nothing: what a proxy in front of many users does;
//! - **users**: the same distinct reads from 64 signed-in users, each request with the session
//!   cookie of one of them and a request id of its own, through a source with a session and
//!   forwarding on (request id, client address, user agent): the session's and forwarding's
//!   work in the figure (nginx passes the same headers on, and sets `X-Forwarded-For`);
//! - **one read** (`/users/7` on every request): identical reads in flight, which courier's
//!   coalescing answers with one upstream call for several requests — work nginx does not skip,
//!   so this figure flatters courier and is labelled as such.
//!
//! The backend runs on a tokio runtime of one worker, the courier proxy on
//! another of one worker, nginx with one worker process: each proxy has one thread, as has wrk.
//! The table gives requests per second and wrk's latency percentiles.
//!
//! Needs `nginx` and `wrk` on the `PATH` (Debian: `apt-get install nginx-light wrk`); without
//! them it says so and measures what it can.
//!
//! Run: `cargo bench --bench proxy` (environment: `PROXY_BENCH_SECONDS`, default 10;
//! `PROXY_BENCH_CONNECTIONS`, default 64; `PROXY_BENCH_LOAD`: `distinct`, `users`, `same`, or all three, the
//! default).

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use courier::server::Proxy;
use courier::{ApiDef, GroupDef, HttpEndpoint};
use serde_json::json;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn serve(runtime: &Runtime, app: Router) -> SocketAddr {
    runtime.block_on(courier_test_support::serve(app))
}

fn backend() -> Router {
    Router::new().route(
        "/users/{id}",
        get(|Path(id): Path<u64>| async move {
            Json(json!({ "id": id, "name": format!("user {id}"), "email": format!("user{id}@example.com") }))
        }),
    )
}

fn api(backend: SocketAddr) -> ApiDef {
    builder(backend).build().expect("a valid definition")
}

/// The same source with a session (the `sid` cookie) and forwarding (request id, client
/// address, user agent): what a proxy in front of signed-in users does for every read.
fn users_api(backend: SocketAddr) -> ApiDef {
    builder(backend)
        .session(courier::options::SessionOptions::new().cookies(["sid"]))
        .forward(
            courier::options::ForwardOptions::new()
                .request_id(true)
                .client_address(true)
                .user_agent(true),
        )
        .build()
        .expect("a valid definition")
}

fn builder(backend: SocketAddr) -> courier::ApiBuilder {
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/:id")),
        )
}

/// nginx in front of `backend`, listening on a free port; stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM, not SIGKILL: the master stops its worker processes before it exits. Killed
        // outright, it leaves them running, listening and using CPU through the next runs.
        // SAFETY: kill(2) on our own child's pid touches no memory of this process.
        let stopped = i32::try_from(self.child.id())
            .is_ok_and(|pid| unsafe { libc::kill(pid, libc::SIGTERM) } == 0);
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn nginx(backend: SocketAddr) -> Option<Nginx> {
    let dir = tempfile::tempdir().ok()?;
    let port = free_port();
    let conf = format!(
        r#"worker_processes 1;
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream backend {{
        server {backend};
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
"#,
        dir = dir.path().display(),
    );
    let path = dir.path().join("nginx.conf");
    std::fs::write(&path, conf).ok()?;
    let child = Command::new("nginx")
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(&path)
        .arg("-g")
        .arg("daemon off;")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .ok()?;
    let nginx = Nginx {
        child,
        port,
        _dir: dir,
    };
    for _ in 0..50 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(nginx);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("nginx did not start listening on {port}");
    None
}

/// What wrk reported for one target.
struct Measured {
    requests_per_second: f64,
    p50: String,
    p90: String,
    p99: String,
    errors: String,
}

/// A wrk script whose requests read `template` with `{id}` replaced by 1, 2, 3, … (up to
/// 100,000, then again), so that no two requests in flight are identical.
fn distinct_script(dir: &std::path::Path, name: &str, template: &str) -> Option<String> {
    let (before, after) = template.split_once("{id}")?;
    let script = format!(
        "local n = 0\nrequest = function()\n  n = n % 100000 + 1\n  \
         return wrk.format(nil, \"{before}\" .. n .. \"{after}\")\nend\n"
    );
    let path = dir.join(format!("{}.lua", name.replace(' ', "-")));
    std::fs::write(&path, script).ok()?;
    Some(path.to_str()?.to_owned())
}

/// A wrk script of distinct reads (as [`distinct_script`]) from 64 users: each request carries
/// the session cookie of user `n % 64` and a request id of its own.
fn users_script(dir: &std::path::Path, name: &str, template: &str) -> Option<String> {
    let (before, after) = template.split_once("{id}")?;
    let script = format!(
        "local n = 0\nrequest = function()\n  n = n % 100000 + 1\n  \
         local headers = {{ [\"Cookie\"] = \"sid=session-\" .. (n % 64), \
         [\"X-Request-Id\"] = \"req-\" .. n }}\n  \
         return wrk.format(nil, \"{before}\" .. n .. \"{after}\", headers)\nend\n"
    );
    let path = dir.join(format!("{}-users.lua", name.replace(' ', "-")));
    std::fs::write(&path, script).ok()?;
    Some(path.to_str()?.to_owned())
}

fn wrk(url: &str, script: Option<&str>, seconds: u64, connections: u64) -> Option<Measured> {
    let mut command = Command::new("wrk");
    command.args([
        "-t1",
        &format!("-c{connections}"),
        &format!("-d{seconds}s"),
        "--latency",
    ]);
    if let Some(script) = script {
        command.args(["-s", script]);
    }
    let output = command.arg(url).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let field = |prefix: &str| {
        text.lines()
            .map(str::trim)
            .find(|line| line.starts_with(prefix))
            .and_then(|line| line.split_whitespace().nth(1))
            .map(str::to_owned)
    };
    let errors = text
        .lines()
        .find(|l| l.contains("Non-2xx") || l.contains("Socket errors"))
        .map_or_else(|| "none".to_owned(), |l| l.trim().to_owned());
    Some(Measured {
        requests_per_second: field("Requests/sec:")?.parse().ok()?,
        p50: field("50%")?,
        p90: field("90%")?,
        p99: field("99%")?,
        errors,
    })
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, briefly.
    let testing =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let seconds: u64 = std::env::var("PROXY_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if testing { 1 } else { 10 });
    let connections: u64 = std::env::var("PROXY_BENCH_CONNECTIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);

    let backend_runtime = runtime();
    let backend_addr = serve(&backend_runtime, backend());
    let proxy_runtime = runtime();
    let proxy_addr = serve(
        &proxy_runtime,
        Proxy::new()
            .source("demo", api(backend_addr))
            .source("users", users_api(backend_addr))
            .into_router()
            .expect("the proxy"),
    );
    let served_runtime = runtime();
    let served_addr = served_runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // As `courier serve --threads 1` serves it: one worker thread, as nginx has one worker.
        let proxy = Proxy::new()
            .worker_threads(1)
            .source("demo", api(backend_addr))
            .source("users", users_api(backend_addr));
        tokio::spawn(proxy.serve(listener));
        addr
    });
    let nginx = nginx(backend_addr);

    // Each target's base address and its read's path, `{id}` standing for the user.
    let mut targets = vec![
        ("backend", format!("http://{backend_addr}"), "/users/{id}"),
        (
            "courier",
            format!("http://{proxy_addr}"),
            "/api/request?_s=demo&_g=users&_m=get&_v={id}",
        ),
        (
            "courier serve",
            format!("http://{served_addr}"),
            "/api/request?_s=demo&_g=users&_m=get&_v={id}",
        ),
    ];
    match &nginx {
        Some(nginx) => targets.push((
            "nginx",
            format!("http://127.0.0.1:{}", nginx.port),
            "/users/{id}",
        )),
        None => {
            eprintln!("nginx is not available: install it (apt-get install nginx-light) to compare")
        }
    }
    let scripts = tempfile::tempdir().expect("a directory for the wrk scripts");
    let load = std::env::var("PROXY_BENCH_LOAD").unwrap_or_default();
    let loads: &[&str] = match load.as_str() {
        "distinct" => &["distinct"],
        "users" => &["users"],
        "same" => &["same"],
        _ => &["distinct", "users", "same"],
    };

    for &load in loads {
        match load {
            "distinct" => println!("\nDistinct reads: every request another user's (the headline)\n"),
            "users" => println!("\nDistinct reads from 64 signed-in users: a session cookie each, a request id, forwarding on\n"),
            _ => println!("\nOne read on every request: coalescing shares them (flatters courier; not a comparison)\n"),
        }
        println!("| target | requests/s | p50 | p90 | p99 | errors |");
        println!("|---|---|---|---|---|---|");
        for (name, base, template) in &targets {
            let (url, script) = match load {
                "distinct" => (
                    base.clone(),
                    Some(distinct_script(scripts.path(), name, template).expect("a wrk script")),
                ),
                "users" => (
                    base.clone(),
                    Some(
                        users_script(
                            scripts.path(),
                            name,
                            &template.replace("_s=demo", "_s=users"),
                        )
                        .expect("a wrk script"),
                    ),
                ),
                _ => (format!("{base}{}", template.replace("{id}", "7")), None),
            };
            // Warm-up: pools filled, code paths hot.
            let Some(_) = wrk(&url, script.as_deref(), 2.min(seconds), connections) else {
                eprintln!("wrk is not available: install it (apt-get install wrk)");
                return;
            };
            let Some(m) = wrk(&url, script.as_deref(), seconds, connections) else {
                eprintln!("wrk failed on {url}");
                return;
            };
            println!(
                "| {name} | {:.0} | {} | {} | {} | {} |",
                m.requests_per_second, m.p50, m.p90, m.p99, m.errors
            );
        }
    }
    drop(nginx);
}
