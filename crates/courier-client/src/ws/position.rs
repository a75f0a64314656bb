//! A channel's position, for a client that keeps one (a proxy caller's, which speaks courier's
//! wire): the last position the server gave, sent back in the next connection's hello so that
//! the messages missed meanwhile are handed first (`docs/PROTOCOL.md`, "Positions and
//! recovery").

use courier_core::wire::{self, ServerFrame};
use courier_live::MISSED_REASON;
use std::sync::Mutex;

/// The position a channel was last given; `None` before the first.
#[derive(Debug, Default)]
pub(super) struct Kept(Mutex<Option<String>>);

impl Kept {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The position the next hello sends.
    pub(super) fn get(&self) -> Option<String> {
        self.lock().clone()
    }

    /// Reads a server's text frame: the message text to hand on, or `None` for a frame that
    /// only says where the channel is. A positioned message is handed on as its `data`.
    pub(super) fn read(&self, text: String) -> Option<String> {
        match wire::server_frame(&text) {
            ServerFrame::At(at) => {
                *self.lock() = Some(at.to_owned());
                None
            }
            ServerFrame::Message(data, Some(at)) => {
                *self.lock() = Some(at.to_owned());
                Some(data.to_owned())
            }
            ServerFrame::Message(_, None) => Some(text),
        }
    }

    /// Forgets the position when the server's close says the messages after it are gone (1012
    /// with [`MISSED_REASON`]): the next connection joins afresh.
    pub(super) fn closed(&self, code: u16, reason: &str) {
        if code == courier_live::MISSED && reason.starts_with(MISSED_REASON) {
            *self.lock() = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_kept_from_the_servers_frames_and_forgotten_on_a_gap() {
        let kept = Kept::default();
        assert_eq!(kept.get(), None);
        assert_eq!(kept.read(wire::at_frame("e1:4")), None);
        assert_eq!(kept.get().as_deref(), Some("e1:4"));
        let message = wire::positioned_frame("e1:5", &serde_json::json!({ "text": "hi" }));
        assert_eq!(kept.read(message).as_deref(), Some(r#"{"text":"hi"}"#));
        assert_eq!(kept.get().as_deref(), Some("e1:5"));
        // Plain messages, and courier-looking frames that are not positions, pass as they are.
        for text in [
            r#"{"text":"plain"}"#,
            r#"{"type":"courier.message","at":5}"#,
            r#"{"type":"courier.pong"}"#,
            r#"{"type":"courier.nope"#,
        ] {
            assert_eq!(kept.read(text.to_owned()).as_deref(), Some(text));
        }
        assert_eq!(kept.get().as_deref(), Some("e1:5"));
        kept.closed(1012, "the server is restarting");
        kept.closed(1006, "messages were missed: no");
        assert_eq!(kept.get().as_deref(), Some("e1:5"));
        kept.closed(
            1012,
            "messages were missed: the history no longer holds e1:6",
        );
        assert_eq!(kept.get(), None);
    }
}
