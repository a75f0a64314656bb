//! What goes on a Redis channel, and into a topic's history: a message or a gap, with the
//! instance that published it and, with a history, its position.

use courier_live::{Outbound, Position};
use serde::{Deserialize, Serialize};

/// The envelope's format version.
const VERSION: u8 = 1;

/// One payload on a topic's Redis channel, or one entry of its history.
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
    /// Its position in the topic's history, when the bus keeps one: the publishing script adds
    /// it on the channel; a history entry has it from its id and the topic's epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at: Option<Position>,
}

impl Envelope {
    pub(crate) fn message(from: &str, message: Outbound) -> Self {
        Self {
            v: VERSION,
            from: from.to_owned(),
            message: Some(message),
            gap: false,
            at: None,
        }
    }

    pub(crate) fn gap(from: &str) -> Self {
        Self {
            v: VERSION,
            from: from.to_owned(),
            message: None,
            gap: true,
            at: None,
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        // Serializing a struct of strings and JSON values cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a payload; `None` for one that is not an envelope of this version, with a
    /// message or a gap (and, with a position, a message that is a channel's message).
    pub(crate) fn read(payload: &[u8]) -> Option<Self> {
        let envelope: Self = serde_json::from_slice(payload).ok()?;
        let positioned = envelope.at.is_none()
            || matches!(envelope.message, None | Some(Outbound::Message { .. }));
        (envelope.v == VERSION && (envelope.message.is_some() != envelope.gap) && positioned)
            .then_some(envelope)
    }

    /// The message it carries, stamped with its position; `None` for a gap.
    pub(crate) fn into_message(self) -> Option<Outbound> {
        match (self.message?, self.at) {
            (Outbound::Message { data, .. }, Some(at)) => {
                Some(Outbound::Message { data, at: Some(at) })
            }
            (message, _) => Some(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_and_gaps_read_back_and_anything_else_is_refused() {
        let message = Envelope::message("a1", Outbound::message(json!({ "text": "hi" })));
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
            br#"{"at":"e1:1","v":1,"from":"a","message":{"type":"close","code":1000,"reason":""}}"#,
            br#"{"at":"no position","v":1,"from":"a","gap":true}"#,
            br#"{"at":"e1:-1","v":1,"from":"a","gap":true}"#,
        ] {
            assert_eq!(
                Envelope::read(foreign),
                None,
                "{}",
                String::from_utf8_lossy(foreign)
            );
        }
    }

    #[test]
    fn a_position_added_in_front_by_the_script_is_read_and_stamps_the_message() {
        // What the publishing script writes on the channel: `{"at":"…",` then the envelope
        // after its opening brace.
        let bytes = Envelope::message("a1", Outbound::message(json!([1, 2]))).to_bytes();
        let published = [&br#"{"at":"3f9a0c1d:42","#[..], &bytes[1..]].concat();
        let envelope = Envelope::read(&published).expect("an envelope with a position");
        let at: Position = "3f9a0c1d:42".parse().unwrap();
        assert_eq!(envelope.at, Some(at.clone()));
        assert_eq!(envelope.from, "a1");
        assert_eq!(
            envelope.into_message(),
            Some(Outbound::Message {
                data: json!([1, 2]),
                at: Some(at.clone()),
            })
        );
        let gap = [
            &br#"{"at":"3f9a0c1d:43","#[..],
            &Envelope::gap("a1").to_bytes()[1..],
        ]
        .concat();
        let gap = Envelope::read(&gap).expect("a gap with a position");
        assert!(gap.gap);
        assert_eq!(gap.at.unwrap().offset(), 43);
        // An envelope written with its position reads back the same.
        let mut written = Envelope::message("a1", Outbound::message(json!("hi")));
        written.at = Some(at);
        assert_eq!(Envelope::read(&written.to_bytes()), Some(written));
    }
}
