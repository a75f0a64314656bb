//! `courier serve`, the real binary: the proxy route from a config file in front of an axum
//! backend on 127.0.0.1, a call through it, and a graceful stop on SIGTERM.

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

#[tokio::test]
async fn serves_the_files_sources_and_stops_on_sigterm() {
    let app = Router::new().route(
        "/users/{id}",
        get(|Path(id): Path<u64>| async move { Json(json!({ "id": id })) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let backend = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[proxy]
http = "/rpc"

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

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_courier"))
        .args([
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(30), stdout.read_line(&mut line))
        .await
        .expect("the listening line within 30 s")
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();

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

    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("courier stops within 30 s")
        .unwrap();
    assert_eq!(status.code(), Some(0));
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
