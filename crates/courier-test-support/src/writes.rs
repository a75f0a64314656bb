//! An upstream for the tests of writes sent again: it applies each write once per
//! `idempotency-key` (as an upstream that deduplicates by the key does), and drops the first
//! connection after applying its write, before it answers.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What [`dropping_upstream`] saw: each request's `idempotency-key`, in order of arrival.
pub type Keys = Arc<Mutex<Vec<Option<String>>>>;

/// Serves raw HTTP/1.1 on 127.0.0.1: reads each request whole and records its key; drops the
/// first connection without an answer; answers every later request
/// `201 {"applied":N}`, N the writes applied so far (distinct keys, and each keyless request).
///
/// # Panics
///
/// When no port of 127.0.0.1 is free.
pub async fn dropping_upstream() -> (SocketAddr, Keys) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port of 127.0.0.1");
    let addr = listener.local_addr().expect("its address");
    let keys: Keys = Arc::default();
    let record = keys.clone();
    tokio::spawn(async move {
        let mut applied: Vec<String> = Vec::new();
        let mut keyless = 0;
        while let Ok((mut tcp, _)) = listener.accept().await {
            let Some(head) = read_request(&mut tcp).await else {
                continue;
            };
            let key = head
                .lines()
                .find_map(|line| line.strip_prefix("idempotency-key: "))
                .map(str::to_owned);
            let first = {
                let mut keys = record.lock().unwrap_or_else(|e| e.into_inner());
                keys.push(key.clone());
                keys.len() == 1
            };
            match key {
                Some(key) if !applied.contains(&key) => applied.push(key),
                Some(_) => {}
                None => keyless += 1,
            }
            if first {
                // Applied; the connection drops before the answer.
                continue;
            }
            let body = format!("{{\"applied\":{}}}", applied.len() + keyless);
            let answer = format!(
                "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tcp.write_all(answer.as_bytes()).await;
        }
    });
    (addr, keys)
}

/// Reads a request's head and its `content-length` body; the head, lowercased. `None` when the
/// connection ends first.
async fn read_request(tcp: &mut tokio::net::TcpStream) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tcp.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).to_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|l| l.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return Some(text[..end].to_owned());
            }
        }
    }
}
