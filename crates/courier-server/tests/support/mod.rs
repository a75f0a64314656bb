//! What the proxy's integration tests share: an app served on 127.0.0.1, the JSON of a
//! socket's next text message, whether the server closes a connection, a connection from
//! another address of the loopback, and an answer read whole.

// Each test binary uses the part it needs.
#![allow(dead_code, unused_imports)]

/// Serves an app on 127.0.0.1 and says where.
pub(crate) use courier_test_support::serve as listen;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// Serves `api`'s streams and channels as source `demo`, on `hub`, through a proxy whose
/// channels are at `/api/ws`; where it listens.
pub(crate) async fn serve_on(
    api: courier_core::ApiDef,
    hub: &courier_live::Hub,
) -> std::net::SocketAddr {
    let client = courier_client::Client::builder(api)
        .hub(hub.clone())
        .build()
        .expect("the client builds");
    let app = courier_server::Proxy::new()
        .source_client("demo", client)
        .ws_path("/api/ws")
        .into_router()
        .expect("the proxy builds");
    listen(app).await
}

/// A browser's WebSocket, as the tests open it.
pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// The next text message, as JSON, within 10 s.
pub(crate) async fn next_json(ws: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s")
            .expect("open")
            .expect("no error");
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// Reads until the server closes the connection, for at most `within`; `true` when it did.
pub(crate) async fn closed_within(tcp: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// A connection to `proxy` from `from`, any port (Linux routes all of 127.0.0.0/8 to the
/// loopback, so 127.0.0.2 is another client address).
pub(crate) async fn connect_from(
    from: std::net::IpAddr,
    proxy: std::net::SocketAddr,
) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::new(from, 0)).unwrap();
    socket.connect(proxy).await.unwrap()
}

/// An answer read until the server closes the connection, within 10 s: its head and its body.
pub(crate) async fn read_answer(tcp: &mut tokio::net::TcpStream) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut raw))
        .await
        .expect("an answer within 10 s")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), body.to_owned())
}

/// The status of an answer's `head`.
pub(crate) fn status_of(head: &str) -> u16 {
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

/// The value of the header `name` in an answer's `head`.
pub(crate) fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (found, value) = line.split_once(": ")?;
        found.eq_ignore_ascii_case(name).then_some(value)
    })
}

/// Reads the next answer off a kept-alive connection, within 10 s: its head and its body, framed
/// by `content-length` or, chunked, of one chunk.
pub(crate) async fn next_answer(tcp: &mut tokio::net::TcpStream) -> (String, String) {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let text = String::from_utf8_lossy(&seen).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = header(head, "content-length").map(|n| n.trim().parse().unwrap());
                if let Some(length) = length {
                    if body.len() >= length {
                        return (head.to_owned(), body[..length].to_owned());
                    }
                } else if let Some(end) = body.find("\r\n0\r\n\r\n") {
                    let (_, chunk) = body[..end].split_once("\r\n").unwrap();
                    return (head.to_owned(), chunk.to_owned());
                }
            }
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the connection closed mid-answer: {text}");
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("an answer within 10 s")
}

/// Reads until the close frame; its code and reason.
pub(crate) async fn close_of(ws: &mut Socket) -> (u16, String) {
    let read = async {
        let mut seen = Vec::new();
        while let Some(message) = ws.next().await {
            if let Ok(Message::Close(Some(frame))) = message {
                return (u16::from(frame.code), frame.reason.as_str().to_owned());
            }
            seen.push(format!("{message:?}"));
        }
        panic!("no close frame; saw {seen:?}")
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("closed within 20 s")
}
