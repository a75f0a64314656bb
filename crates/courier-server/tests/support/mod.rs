//! What the proxy's integration tests share: an app served on 127.0.0.1, the JSON of a
//! socket's next text message, and whether the server closes a connection.

// Each test binary uses the part it needs.
#![allow(dead_code, unused_imports)]

/// Serves an app on 127.0.0.1 and says where.
pub(crate) use courier_test_support::serve as listen;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

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
