//! What a browser's frames on a channel's socket say, read without the socket: a message is
//! JSON, as text or as a binary frame holding it; the first frame may be courier's hello
//! (`{"type":"courier.hello","auth":{…},"headers":{…}}`). See `docs/PROTOCOL.md`.

use serde_json::{Map, Value};

/// A frame that is not JSON: the socket is closed with 1003.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NotJson;

/// What an announced first frame was.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Hello {
    /// The hello's `auth`, when it is an object.
    pub(crate) auth: Option<Map<String, Value>>,
    /// The hello's `headers`, when it is an object.
    pub(crate) headers: Option<Map<String, Value>>,
    /// The first frame, when it was a message and not a hello.
    pub(crate) pending: Option<Value>,
}

/// Reads an announced first text frame: a hello, or else the first message.
pub(crate) fn first_frame(text: &str) -> Result<Hello, NotJson> {
    match serde_json::from_str::<Value>(text).map_err(|_| NotJson)? {
        Value::Object(mut hello) if is_hello_object(&hello) => {
            let object = |v: Option<Value>| match v {
                Some(Value::Object(map)) => Some(map),
                _ => None,
            };
            Ok(Hello {
                auth: object(hello.remove("auth")),
                headers: object(hello.remove("headers")),
                pending: None,
            })
        }
        // A heartbeat before any hello is no message; the next one gets its answer.
        message if is_ping(&message) => Ok(Hello::default()),
        message => Ok(Hello {
            pending: Some(message),
            ..Hello::default()
        }),
    }
}

/// Reads a message frame's payload: JSON text (a binary frame's bytes must be UTF-8 JSON too).
pub(crate) fn message(payload: &[u8]) -> Result<Value, NotJson> {
    let text = std::str::from_utf8(payload).map_err(|_| NotJson)?;
    serde_json::from_str(text).map_err(|_| NotJson)
}

/// Whether a message is courier's heartbeat, `{"type":"courier.ping"}`: a browser cannot send
/// a WebSocket ping, so its caller sends this instead, and the proxy answers
/// [`PONG`] itself. Never handed to a channel's handlers or its upstream.
pub(crate) fn is_ping(message: &Value) -> bool {
    message
        .as_object()
        .is_some_and(|m| m.get("type").and_then(Value::as_str) == Some("courier.ping"))
}

/// The answer to a heartbeat.
pub(crate) const PONG: &str = r#"{"type":"courier.pong"}"#;

/// Whether a first frame is courier's hello.
pub(crate) fn is_hello(message: &Value) -> bool {
    message.as_object().is_some_and(is_hello_object)
}

fn is_hello_object(message: &Map<String, Value>) -> bool {
    message.get("type").and_then(Value::as_str) == Some("courier.hello")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hello_gives_its_objects_and_a_message_is_kept() {
        let hello = first_frame(r#"{"type":"courier.hello","auth":{"t":1},"headers":"no"}"#);
        assert_eq!(
            hello,
            Ok(Hello {
                auth: Some(json!({"t": 1}).as_object().unwrap().clone()),
                headers: None,
                pending: None,
            })
        );
        let message = first_frame(r#"{"text":"hi"}"#).unwrap();
        assert_eq!(message.pending, Some(json!({"text": "hi"})));
        assert_eq!(first_frame("not json"), Err(NotJson));
        assert!(is_hello(&json!({"type": "courier.hello"})));
        assert!(!is_hello(&json!(["courier.hello"])));
        assert!(is_ping(&json!({"type": "courier.ping"})));
        assert!(!is_ping(&json!({"type": "courier.hello"})));
        assert!(!is_ping(&json!("courier.ping")));
    }

    #[test]
    fn a_message_is_utf8_json() {
        assert_eq!(message(b"[1]"), Ok(json!([1])));
        assert_eq!(message(b"\xff\xfe"), Err(NotJson));
        assert_eq!(message(b"{"), Err(NotJson));
        assert_eq!(message("[".repeat(100_000).as_bytes()), Err(NotJson));
    }
}
