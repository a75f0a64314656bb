//! What goes on a Redis channel: a message or a gap, with the instance that published it.

use courier_live::Outbound;
use serde::{Deserialize, Serialize};

/// The envelope's format version.
const VERSION: u8 = 1;

/// One payload on a topic's Redis channel.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Envelope {
    v: u8,
    /// The publishing instance.
    pub(crate) from: String,
    /// The message, for a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<Outbound>,
    /// `true` for a gap: the publisher lost messages meant for this topic.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) gap: bool,
}

impl Envelope {
    pub(crate) fn message(from: &str, message: Outbound) -> Self {
        Self {
            v: VERSION,
            from: from.to_owned(),
            message: Some(message),
            gap: false,
        }
    }

    pub(crate) fn gap(from: &str) -> Self {
        Self {
            v: VERSION,
            from: from.to_owned(),
            message: None,
            gap: true,
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        // Serializing a struct of strings and JSON values cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a payload; `None` for one that is not an envelope of this version, with a
    /// message or a gap.
    pub(crate) fn read(payload: &[u8]) -> Option<Self> {
        let envelope: Self = serde_json::from_slice(payload).ok()?;
        (envelope.v == VERSION && (envelope.message.is_some() != envelope.gap)).then_some(envelope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_and_gaps_read_back_and_anything_else_is_refused() {
        let message = Envelope::message(
            "a1",
            Outbound::Message {
                data: json!({ "text": "hi" }),
            },
        );
        let bytes = message.to_bytes();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap(),
            json!({ "v": 1, "from": "a1", "message": { "type": "message", "data": { "text": "hi" } } })
        );
        assert_eq!(Envelope::read(&bytes), Some(message));
        let gap = Envelope::gap("a1");
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&gap.to_bytes()).unwrap(),
            json!({ "v": 1, "from": "a1", "gap": true })
        );
        assert_eq!(Envelope::read(&gap.to_bytes()), Some(gap));
        for foreign in [
            &b"hello"[..],
            br#"{"v":2,"from":"a","gap":true}"#,
            br#"{"v":1,"from":"a"}"#,
            br#"{"v":1,"from":"a","gap":true,"message":{"type":"message","data":1}}"#,
            br#"{"v":1,"message":{"type":"message","data":1}}"#,
            br#"{"v":1,"from":"a","message":{"type":"nope"}}"#,
        ] {
            assert_eq!(
                Envelope::read(foreign),
                None,
                "{}",
                String::from_utf8_lossy(foreign)
            );
        }
    }
}
