//! Uploads through the proxy: what one large upload costs the proxy's process in memory, and how
//! fast it crosses, against the same upload sent straight to the backend.
//!
//! The backend (axum, in this process) reads each multipart form part by part and counts its
//! bytes. The proxy runs in a child process of its own (this binary, started again with
//! `--proxy`: `Proxy::serve` with the source's upload endpoint exposed), so its peak resident
//! memory (`VmHWM` in `/proc/PID/status`) is the proxy's alone. The client (in this process)
//! writes each form over a plain connection from a 64 KiB pattern, with its `content-length`,
//! a text field then the file, as the browser package sends it.
//!
//! Each size is sent three times to the backend directly, then three times through the proxy;
//! the table gives each run's time and rate, and the proxy's peak memory after the size's runs
//! (a peak only grows: each row is the largest so far).
//!
//! Run: `cargo bench --bench upload` (environment: `UPLOAD_BENCH_MIB`, the sizes in MiB, comma
//! separated, default `16,256,1024`).

use axum::extract::{DefaultBodyLimit, Multipart};
use axum::routing::post;
use axum::Router;
use courier::server::Proxy;
use courier::{ApiDef, GroupDef, HttpEndpoint};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BOUNDARY: &str = "bench-boundary-7MA4YWxkTrZu0gW";

/// Counts the bytes of every part of the form.
async fn sink(mut form: Multipart) -> String {
    let mut total = 0usize;
    while let Ok(Some(mut field)) = form.next_field().await {
        while let Ok(Some(chunk)) = field.chunk().await {
            total += chunk.len();
        }
    }
    format!("{{\"bytes\":{total}}}")
}

/// The proxy's process: serves the upload endpoint of the backend at `backend`, prints its
/// address, and runs until killed.
fn proxy_process(backend: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let api = ApiDef::builder()
            .base_url(format!("http://{backend}"))
            .group(
                "files",
                GroupDef::new()
                    .expose(true)
                    .endpoint("up", HttpEndpoint::post("/up")),
            )
            .build()
            .expect("the source");
        let proxy = Proxy::new()
            .source("demo", api)
            .multipart_limit(4 << 30)
            .body_read_timeout(Duration::from_secs(600));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap());
        proxy.serve(listener).await.expect("serving");
    });
}

/// The proxy's child process, killed when dropped.
struct ProxyChild(Child);

impl Drop for ProxyChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A field of `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Sends one form with a file of `size` bytes to `target` and reads the answer's body.
async fn upload(addr: SocketAddr, target: &str, size: usize) -> (u16, String) {
    let head = format!(
        "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"title\"\r\n\r\nbench\r\n\
         --{BOUNDARY}\r\ncontent-disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\
         content-type: application/octet-stream\r\n\r\n"
    );
    let tail = format!("\r\n--{BOUNDARY}--\r\n");
    let length = head.len() + size + tail.len();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {target} HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\
         content-type: multipart/form-data; boundary={BOUNDARY}\r\ncontent-length: {length}\r\n\r\n{head}"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let pattern: Vec<u8> = (0..64 * 1024)
        .map(|i| b"0123456789abcdef"[i % 16])
        .collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(pattern.len());
        tcp.write_all(&pattern[..n]).await.unwrap();
        left -= n;
    }
    tcp.write_all(tail.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn main() {
    let mut args = std::env::args().skip_while(|a| a != "--proxy").skip(1);
    if let Some(backend) = args.next() {
        proxy_process(&backend);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, with small sizes.
    let testing =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = std::env::var("UPLOAD_BENCH_MIB")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| {
            if testing {
                vec![1]
            } else {
                vec![16, 256, 1024]
            }
        });

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let backend = runtime.block_on(courier_test_support::serve(
        Router::new()
            .route("/up", post(sink))
            .layer(DefaultBodyLimit::disable()),
    ));
    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .args(["--proxy", &backend.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the proxy's process");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("its output"))
        .read_line(&mut line)
        .expect("its address");
    let proxy = ProxyChild(child);
    let proxy_addr: SocketAddr = line.trim().parse().expect("an address");
    let pid = proxy.0.id();
    println!(
        "\nThe proxy's process at rest: {} KiB resident",
        status_kib(pid, "VmRSS:")
    );
    println!("\n| upload | target | run | time | MiB/s | proxy's peak resident |");
    println!("|---|---|---|---|---|---|");
    for &mib in &sizes {
        let size = mib << 20;
        for (name, addr, target) in [
            ("backend", backend, "/up"),
            ("courier", proxy_addr, "/api/request?_s=demo&_g=files&_m=up"),
        ] {
            for run in 1..=3 {
                let started = Instant::now();
                let (status, body) = runtime.block_on(upload(addr, target, size));
                let elapsed = started.elapsed();
                assert_eq!(status, 200, "{name}: {body}");
                assert!(
                    body.contains(&format!("\"bytes\":{}", size + "bench".len())),
                    "{name}: {body}"
                );
                let peak = match name {
                    "courier" => format!("{} KiB", status_kib(pid, "VmHWM:")),
                    _ => "—".to_owned(),
                };
                println!(
                    "| {mib} MiB | {name} | {run} | {:.0} ms | {:.0} | {peak} |",
                    elapsed.as_secs_f64() * 1000.0,
                    mib as f64 / elapsed.as_secs_f64()
                );
            }
        }
    }
}
