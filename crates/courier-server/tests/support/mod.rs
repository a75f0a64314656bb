//! What the proxy's integration tests share: an app served on 127.0.0.1, and the JSON of a
//! socket's next text message.

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
