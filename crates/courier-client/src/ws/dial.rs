//! One connection attempt: the opening handshake through the endpoint's layer stack, upgraded
//! to a WebSocket, with the hello frame.

use super::position::Kept;
use super::socket::{stall, Socket};
use crate::error::Error;
use crate::opener::Opener;
use courier_core::encode::Variables;
use courier_core::{CallOptions, ResolvedEndpoint, WsOptions};
use futures_util::SinkExt;
use http::header::{CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL};
use http::header::{SEC_WEBSOCKET_VERSION, UPGRADE};
use http::{HeaderMap, HeaderValue, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The handshake did not switch protocols as RFC 6455 requires.
#[derive(Debug)]
pub(super) struct BadHandshake(pub(super) &'static str);

impl fmt::Display for BadHandshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BadHandshake {}

/// Everything one connection attempt needs; cloned into the socket task.
#[derive(Clone)]
pub(super) struct Dialer {
    pub(super) opener: Arc<dyn Opener>,
    pub(super) endpoint: Arc<ResolvedEndpoint>,
    pub(super) variables: Value,
    pub(super) options: Option<CallOptions>,
    pub(super) ws: WsOptions,
    /// The channel's position, when the client keeps one (a proxy caller's).
    pub(super) kept: Option<Arc<Kept>>,
}

impl Dialer {
    /// The hello frame opening the next connection, its parameters computed afresh, with the
    /// position kept; `None` with nothing to say.
    pub(super) async fn hello(&self) -> Result<Option<Message>, Error> {
        let params = match &self.ws.auth {
            Some(auth) => auth
                .params()
                .await
                .map_err(|e| Error::path_options(Box::new(AuthFailed(e))))?,
            None => None,
        };
        // A proxy caller's default headers travel in the first frame too.
        let headers: serde_json::Map<String, Value> = self
            .opener
            .hello_headers()
            .into_iter()
            .flatten()
            .filter_map(|(name, value)| Some((name.to_string(), Value::from(value.to_str().ok()?))))
            .collect();
        let since = self.kept.as_ref().map(|kept| kept.get());
        // Nothing to authenticate with, no headers and no position kept: no hello frame.
        let hello = courier_core::wire::hello_frame(
            since.as_ref().map(Option::as_deref),
            params.as_ref(),
            &headers,
        );
        Ok(hello.map(Message::text))
    }

    /// The hello frame, then a connection: what `connect` awaits.
    pub(super) async fn first(&self) -> Result<Socket, Error> {
        let hello = self.hello().await?;
        self.dial(hello).await
    }

    /// One handshake through the endpoint's layer stack, then the socket, opened with `hello`.
    pub(super) async fn dial(&self, hello: Option<Message>) -> Result<Socket, Error> {
        let key = generate_key();
        let mut headers = HeaderMap::new();
        headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        headers.insert(
            SEC_WEBSOCKET_KEY,
            HeaderValue::try_from(key.as_str()).map_err(|e| Error::protocol(StatusCode::OK, e))?,
        );
        if !self.ws.protocols.is_empty() {
            let offered = self.ws.protocols.join(", ");
            let value = HeaderValue::try_from(offered).map_err(|e| {
                Error::from(courier_core::ConfigurationError::new(
                    courier_core::ErrorCode::InvalidOption,
                    format!("a WebSocket subprotocol is not a valid header value: {e}"),
                ))
            })?;
            headers.insert(SEC_WEBSOCKET_PROTOCOL, value);
        }
        // `_h=1` tells a courier server that a hello frame follows, so it reads it before
        // joining the subscriber (see docs/PROTOCOL.md).
        let announce = hello.is_some().then_some(("_h", "1"));
        let mut response = self
            .opener
            .handshake(
                &self.endpoint,
                Variables::Json(self.variables.clone()),
                self.options.as_ref(),
                headers,
                announce,
            )
            .await?;
        if response.status() != StatusCode::SWITCHING_PROTOCOLS {
            let error = crate::read::refused(
                response,
                BadHandshake("the server did not switch to the WebSocket protocol"),
            )
            .await
            .with_endpoint(self.endpoint.path());
            if error.is_http() {
                self.opener.refused(&error);
            }
            return Err(error);
        }
        let accepted = response
            .headers()
            .get(SEC_WEBSOCKET_ACCEPT)
            .is_some_and(|v| v.as_bytes() == derive_accept_key(key.as_bytes()).as_bytes());
        if !accepted {
            return Err(Error::protocol(
                StatusCode::SWITCHING_PROTOCOLS,
                BadHandshake("the server's `sec-websocket-accept` does not match the key"),
            ));
        }
        if let Some(chosen) = response.headers().get(SEC_WEBSOCKET_PROTOCOL) {
            let offered = chosen
                .to_str()
                .is_ok_and(|chosen| self.ws.protocols.iter().any(|p| p == chosen));
            if !offered {
                return Err(Error::protocol(
                    StatusCode::SWITCHING_PROTOCOLS,
                    BadHandshake("the server chose a WebSocket subprotocol that was not offered"),
                ));
            }
        }
        let upgraded = hyper::upgrade::on(&mut response)
            .await
            .map_err(|e| Error::from_network(Box::new(e)))?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(self.ws.max_message_size))
            .max_frame_size(Some(self.ws.max_message_size));
        let mut socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, Some(config))
                .await;
        if let Some(hello) = hello {
            let sent = tokio::time::timeout(stall(&self.ws), socket.send(hello)).await;
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::from_network(Box::new(e))),
                Err(_) => return Err(Error::timeout()),
            }
        }
        Ok(socket)
    }
}

/// `WsOptions::auth`'s function failed.
#[derive(Debug)]
pub(super) struct AuthFailed(pub(super) courier_core::BoxError);

impl fmt::Display for AuthFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the channel's auth parameters could not be computed: {}",
            self.0
        )
    }
}

impl std::error::Error for AuthFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}
