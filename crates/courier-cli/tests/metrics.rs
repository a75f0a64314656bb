//! `courier serve --metrics ADDR`, the real binary: after known calls through the proxy, a
//! scrape of `http://ADDR/metrics` counts them in Prometheus's text format — each request's
//! duration at the proxy's call path and each upstream call's, by endpoint and status, and the
//! proxy's refusals by code. The address comes from the flag, else the file's
//! `[metrics] listen`.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// `courier serve` on `config` with `extra` flags: the child, the proxy's address and the
/// metrics' (its first two lines of stdout).
async fn serve(
    config: &std::path::Path,
    extra: &[&str],
) -> (tokio::process::Child, SocketAddr, SocketAddr) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "-c", config.to_str().unwrap(), "-l", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("a line within 30 s")
            .unwrap()
            .expect("a line")
    };
    let listening = next().await;
    let metrics = next().await;
    let proxy = listening
        .strip_prefix("listening on http://")
        .unwrap()
        .parse()
        .unwrap();
    let metrics = metrics
        .strip_prefix("metrics on http://")
        .and_then(|m| m.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("not the metrics line: {metrics}"))
        .parse()
        .unwrap();
    (child, proxy, metrics)
}

/// A GET of `target` at `addr`: the status and the body.
async fn get_text(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_string(&mut answer))
        .await
        .expect("answered within 10 s")
        .unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// The value of the sample line that starts with `name` and holds every one of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|line| {
            line.starts_with(&format!("{name}{{")) || line.starts_with(&format!("{name} "))
        })
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

#[tokio::test]
async fn a_scrape_counts_the_requests_and_calls_by_endpoint_and_status_and_the_refusals_by_code() {
    let backend = courier_test_support::users_backend().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    let text = format!(
        "[metrics]\nlisten = \"127.0.0.1:1\"\n\n{}",
        courier_test_support::users_source(backend)
    );
    std::fs::write(&config, text).unwrap();
    // The flag wins over the file's address.
    let (_child, proxy, metrics) = serve(&config, &["--metrics", "127.0.0.1:0"]).await;
    for id in [1, 2] {
        let target = format!("/api/request?_s=demo&_g=users&_m=get&_v={id}");
        assert_eq!(get_text(proxy, &target).await.0, 200);
    }
    let (status, _) = get_text(proxy, "/api/request?_s=demo&_g=users&_m=nope").await;
    assert_eq!(status, 404);

    let (status, text) = get_text(metrics, "/metrics").await;
    assert_eq!(status, 200);
    let calls = sample(
        &text,
        "http_client_request_duration_count",
        &[
            "courier_endpoint=\"users.get\"",
            "http_response_status_code=\"200\"",
            "http_request_method=\"GET\"",
        ],
    );
    assert_eq!(calls, Some(2.0), "{text}");
    let bucket = sample(
        &text,
        "http_client_request_duration_bucket",
        &["courier_endpoint=\"users.get\"", "le=\"+Inf\""],
    );
    assert_eq!(bucket, Some(2.0), "a histogram: {text}");
    let served = sample(
        &text,
        "http_server_request_duration_count",
        &[
            "courier_endpoint=\"users.get\"",
            "http_route=\"/api/request\"",
            "http_response_status_code=\"200\"",
            "http_request_method=\"GET\"",
        ],
    );
    assert_eq!(served, Some(2.0), "{text}");
    let served_bucket = sample(
        &text,
        "http_server_request_duration_bucket",
        &["courier_endpoint=\"users.get\"", "le=\"+Inf\""],
    );
    assert_eq!(served_bucket, Some(2.0), "a histogram: {text}");
    let unknown = sample(
        &text,
        "http_server_request_duration_count",
        &[
            "courier_endpoint=\"_OTHER\"",
            "error_type=\"ENDPOINT_NOT_IN_ROUTES\"",
            "http_response_status_code=\"404\"",
        ],
    );
    assert_eq!(unknown, Some(1.0), "{text}");
    let refused = sample(
        &text,
        "courier_proxy_refusals",
        &["code=\"ENDPOINT_NOT_IN_ROUTES\""],
    );
    assert_eq!(refused, Some(1.0), "{text}");
}

#[test]
fn a_metrics_address_that_cannot_be_bound_or_read_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, "[metrics]\nlisten = \"not an address\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(["serve", "-c", config.to_str().unwrap(), "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_INVALID", "{report}");
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("metrics.listen"),
        "{report}"
    );

    // Taken: the address is another's.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    std::fs::write(&config, "").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args([
            "serve",
            "-c",
            config.to_str().unwrap(),
            "-l",
            "127.0.0.1:0",
            "--metrics",
            &addr,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["code"], "CONFIG_IO", "{report}");
    assert!(
        report["message"].as_str().unwrap().contains(&addr),
        "{report}"
    );
}
