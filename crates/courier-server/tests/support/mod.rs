//! What the proxy's integration tests share: an app served on 127.0.0.1, and the JSON of a
//! socket's next text message.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use axum::Router;
use futures_util::StreamExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// A browser's WebSocket, as the tests open it.
pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// Serves `app` on an ephemeral port of 127.0.0.1, in a task of its own.
pub(crate) async fn listen(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

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
