//! A mocked channel: the WebSocket handshake answered over a connection in memory, so that the
//! channel client upgrades it as it would a socket, and a server on its other end that sends
//! the channel's messages and records what the client sends.

use super::state::State;
use courier_core::{Body, BoxError};
use futures_util::{SinkExt, StreamExt};
use http::request::Parts;
use http::{Request, Response, Uri};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::sync::Arc;
use tokio::io::DuplexStream;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::Message;

/// The bytes either end of the connection in memory may have written and the other not read.
const IN_FLIGHT: usize = 64 * 1024;

/// Answers a channel's handshake `parts`: the channel opens, is sent `messages`, then what is
/// `pushed`; what its client sends is recorded under `path`.
pub(super) async fn open(
    parts: Parts,
    messages: Vec<String>,
    pushed: broadcast::Receiver<String>,
    state: Arc<State>,
    path: Arc<str>,
) -> Result<Response<Body>, BoxError> {
    let (near, far) = tokio::io::duplex(IN_FLIGHT);
    tokio::spawn(serve(far, messages, pushed, state, path));
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(near)).await?;
    tokio::spawn(async move {
        // Ends when the channel does; its error is the channel's to report.
        let _ = connection.with_upgrades().await;
    });
    let mut request = Request::from_parts(parts, Body::empty());
    // Written as an upstream reads it: the path and query, not the whole address.
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    *request.uri_mut() = Uri::try_from(target)?;
    let response = sender.send_request(request).await?;
    Ok(response.map(Body::new))
}

/// The server end: the WebSocket handshake, then the channel's messages.
async fn serve(
    io: DuplexStream,
    messages: Vec<String>,
    mut pushed: broadcast::Receiver<String>,
    state: Arc<State>,
    path: Arc<str>,
) {
    let Ok(mut socket) = tokio_tungstenite::accept_async(io).await else {
        return;
    };
    for message in messages {
        if socket.send(Message::text(message)).await.is_err() {
            return;
        }
    }
    loop {
        tokio::select! {
            message = pushed.recv() => match message {
                Ok(text) => {
                    if socket.send(Message::text(text)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    let _ = socket.close(None).await;
                    return;
                }
            },
            frame = socket.next() => match frame {
                Some(Ok(Message::Text(text))) => received(&state, &path, text.as_str()),
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Records a message from the client: its JSON (or its text, when it is not JSON). The hello
/// a proxy caller opens with is courier's, not the channel's: not recorded.
fn received(state: &State, path: &Arc<str>, text: &str) {
    let message = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()));
    let hello = message.get("type").and_then(Value::as_str) == Some("courier.hello");
    if !hello {
        state.receive(path, message);
    }
}
