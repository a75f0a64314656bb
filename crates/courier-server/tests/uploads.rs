//! Uploads through the proxy are handed on as they arrive: the upstream reads a file while the
//! browser is still sending it, and the proxy never holds it whole. The bounds of a body hold
//! as the bytes arrive (size, time, framing, text fields in memory): past one, the upstream's
//! request breaks off and the browser is refused with the proxy's code. Parts that arrive after
//! the first file cannot smuggle a server-set value.

mod support;

use axum::extract::{Multipart, State};
use axum::routing::post;
use axum::{Json, Router};
use courier::tree::PathOptions;
use courier::{ApiDef, GroupDef, HttpEndpoint};
use courier_server::Proxy;
use serde_json::{json, Map, Value};
use std::net::SocketAddr;
use std::time::Duration;
use support::listen;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const BOUNDARY: &str = "browser-boundary";

/// What the upstream saw of one upload.
#[derive(Debug)]
enum Seen {
    /// So many bytes of the file `name` have arrived.
    Bytes(usize),
    /// The form arrived whole: its text fields, and each file's name, length and checksum.
    Whole(Value),
    /// The request's body broke off.
    BrokeOff,
}

/// An upstream that reads each upload part by part, as a server that streams files does,
/// telling the test each step as it happens.
async fn upstream() -> (SocketAddr, mpsc::UnboundedReceiver<Seen>) {
    let (tell, seen) = mpsc::unbounded_channel();
    async fn upload(
        State(tell): State<mpsc::UnboundedSender<Seen>>,
        axum::extract::Path((tenant, id)): axum::extract::Path<(String, String)>,
        mut form: Multipart,
    ) -> Json<Value> {
        let mut texts = Map::new();
        let mut files = Vec::new();
        loop {
            let mut field = match form.next_field().await {
                Ok(Some(field)) => field,
                Ok(None) => break,
                Err(_) => {
                    let _ = tell.send(Seen::BrokeOff);
                    return Json(json!({"broke_off": true}));
                }
            };
            let name = field.name().unwrap_or_default().to_owned();
            if field.file_name().is_none() {
                texts.insert(name, Value::String(field.text().await.unwrap_or_default()));
                continue;
            }
            let (filename, kind) = (
                field.file_name().map(str::to_owned),
                field.content_type().map(str::to_owned),
            );
            let (mut len, mut sum) = (0usize, 0u64);
            loop {
                match field.chunk().await {
                    Ok(Some(chunk)) => {
                        len += chunk.len();
                        sum = checksum(sum, &chunk);
                        let _ = tell.send(Seen::Bytes(len));
                    }
                    Ok(None) => break,
                    Err(_) => {
                        let _ = tell.send(Seen::BrokeOff);
                        return Json(json!({"broke_off": true}));
                    }
                }
            }
            files.push(
                json!({"name": name, "filename": filename, "type": kind, "len": len, "sum": sum}),
            );
        }
        let whole = json!({"tenant": tenant, "id": id, "texts": texts, "files": files});
        let _ = tell.send(Seen::Whole(whole.clone()));
        Json(whole)
    }
    let app = Router::new()
        .route("/t/{tenant}/docs/{id}", post(upload))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(tell);
    (listen(app).await, seen)
}

fn checksum(mut sum: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        sum = sum.wrapping_mul(31).wrapping_add(u64::from(b));
    }
    sum
}

/// A file's contents: `len` bytes of a pattern that no boundary matches.
fn file_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| b"abcdefghij"[i % 10]).collect()
}

async fn proxy(upstream: SocketAddr, tune: impl FnOnce(Proxy) -> Proxy) -> SocketAddr {
    let api = ApiDef::builder()
        .base_url(format!("http://{upstream}"))
        .path_options(PathOptions::fixed(json!({"tenant": "acme"})))
        .group(
            "docs",
            GroupDef::new()
                .prefix("/t/:tenant/docs")
                .expose(true)
                .endpoint("upload", HttpEndpoint::post("/:id")),
        )
        .build()
        .unwrap();
    let app = tune(Proxy::new().source("demo", api).body_limit(1024))
        .into_router()
        .unwrap();
    listen(app).await
}

/// A browser's upload, sent chunk by chunk over a raw connection.
struct Browser(TcpStream);

impl Browser {
    async fn start(proxy: SocketAddr) -> Self {
        let mut tcp = TcpStream::connect(proxy).await.unwrap();
        let head = format!(
            "POST /api/request?_s=demo&_g=docs&_m=upload HTTP/1.1\r\nhost: app\r\n\
             connection: close\r\ntransfer-encoding: chunked\r\n\
             content-type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n"
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        Browser(tcp)
    }

    async fn send(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
        chunk.extend_from_slice(bytes);
        chunk.extend_from_slice(b"\r\n");
        // The proxy may answer (and close) before the browser is done: a refusal cuts it short.
        let _ = self.0.write_all(&chunk).await;
    }

    async fn text(&mut self, name: &str, value: &str) {
        let part = format!(
            "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        );
        self.send(part.as_bytes()).await;
    }

    async fn file_head(&mut self, name: &str, filename: &str) {
        let head = format!(
            "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"; \
             filename=\"{filename}\"\r\ncontent-type: application/octet-stream\r\n\r\n"
        );
        self.send(head.as_bytes()).await;
    }

    async fn file_end(&mut self) {
        self.send(b"\r\n").await;
    }

    async fn finish(&mut self) {
        self.send(format!("--{BOUNDARY}--\r\n").as_bytes()).await;
        let _ = self.0.write_all(b"0\r\n\r\n").await;
    }

    /// The proxy's answer: status and JSON body.
    async fn answer(mut self) -> (u16, Value) {
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.0.read_to_end(&mut raw))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        let text = String::from_utf8_lossy(&raw);
        let status = text[9..12].parse().unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_owned()
        };
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// The next thing the upstream saw, within 5 s.
async fn next(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(Duration::from_secs(5), seen.recv())
        .await
        .expect("the upstream sees something within 5 s")
        .expect("the upstream is up")
}

/// Skips the upstream's progress until it says something else.
async fn after_progress(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    loop {
        match next(seen).await {
            Seen::Bytes(_) => continue,
            other => return other,
        }
    }
}

#[tokio::test]
async fn an_upload_reaches_the_upstream_while_the_browser_is_still_sending_it() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| p.multipart_limit(64 * 1024 * 1024)).await;
    let file = file_bytes(8 * 1024 * 1024);

    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.text("title", "Holiday").await;
    browser.file_head("photo", "beach.bin").await;
    browser.send(&file[..64 * 1024]).await;
    // The browser holds the rest back until the upstream has seen the first of the file: an
    // upload read whole before it goes upstream would never get here.
    let Seen::Bytes(first) = next(&mut seen).await else {
        panic!("the upstream saw something other than the file's first bytes")
    };
    assert!(first > 0 && first <= 64 * 1024, "{first}");
    for chunk in file[64 * 1024..].chunks(256 * 1024) {
        browser.send(chunk).await;
    }
    browser.file_end().await;
    // A text after the file arrives as the browser sends it.
    browser.text("caption", "the sea").await;
    browser.finish().await;

    let Seen::Whole(whole) = after_progress(&mut seen).await else {
        panic!("the upload did not arrive whole")
    };
    let (status, body) = browser.answer().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, whole);
    assert_eq!(whole["id"], "7", "the text before the file filled `:id`");
    assert_eq!(
        whole["texts"],
        json!({"title": "Holiday", "caption": "the sea"})
    );
    assert_eq!(
        whole["files"],
        json!([{
            "name": "photo", "filename": "beach.bin", "type": "application/octet-stream",
            "len": file.len(), "sum": checksum(0, &file),
        }])
    );
}

#[tokio::test]
async fn an_upload_that_grows_past_the_limit_breaks_off_upstream_and_is_refused_413() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| p.multipart_limit(256 * 1024)).await;
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.file_head("photo", "big.bin").await;
    browser.send(&file_bytes(64 * 1024)).await;
    assert!(matches!(next(&mut seen).await, Seen::Bytes(_)));
    for _ in 0..8 {
        browser.send(&file_bytes(64 * 1024)).await;
    }
    browser.file_end().await;
    browser.finish().await;
    assert!(matches!(after_progress(&mut seen).await, Seen::BrokeOff));
    let (status, body) = browser.answer().await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("262144 bytes"),
        "{body}"
    );
}

#[tokio::test]
async fn an_upload_that_stops_arriving_breaks_off_upstream_and_is_refused_408() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| {
        p.body_read_timeout(Duration::from_millis(500))
    })
    .await;
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.file_head("photo", "slow.bin").await;
    browser.send(&file_bytes(1000)).await;
    // ... and nothing more.
    assert!(matches!(after_progress(&mut seen).await, Seen::BrokeOff));
    let (status, body) = browser.answer().await;
    assert_eq!(status, 408, "{body}");
    assert_eq!(body["error"]["code"], "REQUEST_TIMEOUT");
}

#[tokio::test]
async fn a_form_that_breaks_after_its_first_file_is_refused_400() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| p).await;
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.file_head("photo", "a.bin").await;
    browser.send(&file_bytes(1000)).await;
    // The body ends in the middle of the file: no closing delimiter ever comes.
    let _ = browser.0.write_all(b"0\r\n\r\n").await;
    assert!(matches!(after_progress(&mut seen).await, Seen::BrokeOff));
    let (status, body) = browser.answer().await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "BAD_REQUEST");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the form does not parse"),
        "{body}"
    );
}

#[tokio::test]
async fn parts_after_the_first_file_cannot_set_a_path_option_or_a_spent_parameter() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| p).await;
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.file_head("photo", "a.bin").await;
    browser.send(&file_bytes(100)).await;
    browser.file_end().await;
    // A path option's name and a spent parameter's, after the file: too late, and left out.
    browser.text("tenant", "evil").await;
    browser.file_head("tenant", "evil.bin").await;
    browser.send(b"evil").await;
    browser.file_end().await;
    browser.text("id", "8").await;
    browser.text("kept", "yes").await;
    browser.finish().await;
    let Seen::Whole(whole) = after_progress(&mut seen).await else {
        panic!("the upload did not arrive whole")
    };
    assert_eq!(
        (&whole["tenant"], &whole["id"]),
        (&json!("acme"), &json!("7"))
    );
    assert_eq!(whole["texts"], json!({"kept": "yes"}));
    assert_eq!(whole["files"].as_array().unwrap().len(), 1, "{whole}");
    assert_eq!(whole["files"][0]["name"], "photo");
    assert_eq!(browser.answer().await.0, 200);
}

#[tokio::test]
async fn text_fields_held_in_memory_are_bounded_by_the_body_limit() {
    let (upstream, mut seen) = upstream().await;
    let proxy = proxy(upstream, |p| p).await;
    // Before the first file: refused before the upstream is called.
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.text("essay", &"x".repeat(2000)).await;
    browser.finish().await;
    let (status, body) = browser.answer().await;
    assert_eq!(status, 413, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("text fields"),
        "{body}"
    );
    assert!(seen.try_recv().is_err(), "the upstream was called");

    // After the first file: the upstream's request breaks off, and the browser hears why.
    let mut browser = Browser::start(proxy).await;
    browser.text("id", "7").await;
    browser.file_head("photo", "a.bin").await;
    browser.send(&file_bytes(100)).await;
    browser.file_end().await;
    browser.text("essay", &"x".repeat(2000)).await;
    browser.finish().await;
    assert!(matches!(after_progress(&mut seen).await, Seen::BrokeOff));
    let (status, body) = browser.answer().await;
    assert_eq!(status, 413, "{body}");
}
