//! [`Answer`]: what a mock answers one call with.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;
use std::fmt;
use std::io;
use std::time::Duration;

/// What a [`Mock`](super::Mock) answers one call with: a response (a JSON value, or a status
/// with a body and headers), a network failure (no response at all), a stream's events or a
/// channel's messages, each after an optional delay. [`When`](super::When)'s methods make the
/// usual ones; a sequence of them answers calls in turn ([`When::answers`](super::When::answers)).
///
/// ```
/// use courier::mock::Answer;
/// use std::time::Duration;
///
/// let busy = Answer::status(503).header("retry-after", "1");
/// let slow = Answer::json(&serde_json::json!({ "id": 7 })).delay(Duration::from_millis(50));
/// let gone = Answer::reset();
/// # let _ = (busy, slow, gone);
/// ```
#[derive(Clone)]
#[must_use]
pub struct Answer {
    pub(super) reply: Reply,
    pub(super) delay: Option<Duration>,
}

/// The answer itself.
#[derive(Clone)]
pub(super) enum Reply {
    /// A response: status, headers, body.
    Http {
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
    },
    /// No response: the connection failed this way.
    Failure(io::ErrorKind),
    /// A stream's opening, then these events' data (JSON), then whatever is pushed.
    Events(Vec<String>),
    /// A channel's opening, then these messages (JSON), then whatever is pushed.
    Messages(Vec<String>),
}

impl Answer {
    /// `200 OK` with `value` as its JSON body.
    ///
    /// # Panics
    ///
    /// When `value` does not serialize to JSON (a map with keys that are not strings).
    #[track_caller]
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Self {
        Self::status(200).body_json(value)
    }

    /// A response of `status` with no body. A status of 400 or more fails the call with an
    /// [`HttpError`](crate::HttpError), as an upstream's would.
    ///
    /// # Panics
    ///
    /// When `status` is not between 100 and 999.
    #[track_caller]
    pub fn status(status: u16) -> Self {
        let status = StatusCode::from_u16(status)
            .unwrap_or_else(|_| panic!("courier::mock: {status} is not an HTTP status"));
        Self::reply(Reply::Http {
            status,
            headers: HeaderMap::new(),
            body: Bytes::new(),
        })
    }

    /// The connection refused: no response, what [`Error::network`](crate::Error::network)
    /// names `Connect`. A retried call is retried on it.
    pub fn refused() -> Self {
        Self::reply(Reply::Failure(io::ErrorKind::ConnectionRefused))
    }

    /// The connection reset before an answer: no response, the write possibly applied. A read
    /// is retried on it; a write only with an idempotency key.
    pub fn reset() -> Self {
        Self::reply(Reply::Failure(io::ErrorKind::ConnectionReset))
    }

    /// `value` as the body, JSON, with its content type.
    ///
    /// # Panics
    ///
    /// When `value` does not serialize to JSON, or the answer is not a response.
    #[track_caller]
    pub fn body_json<T: Serialize + ?Sized>(self, value: &T) -> Self {
        let body = serde_json::to_vec(value)
            .unwrap_or_else(|e| panic!("courier::mock: the answer does not serialize: {e}"));
        self.header("content-type", "application/json").body(body)
    }

    /// `body` as the body, as it is.
    ///
    /// # Panics
    ///
    /// When the answer is not a response.
    #[track_caller]
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        match &mut self.reply {
            Reply::Http { body: own, .. } => *own = body.into(),
            _ => panic!("courier::mock: only a response has a body"),
        }
        self
    }

    /// A header of the response (replacing one of its name).
    ///
    /// # Panics
    ///
    /// When the name or the value is not valid in a header, or the answer is not a response.
    #[track_caller]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::try_from(name)
            .unwrap_or_else(|e| panic!("courier::mock: `{name}` is not a header name: {e}"));
        let value = HeaderValue::try_from(value)
            .unwrap_or_else(|e| panic!("courier::mock: `{value}` is not a header value: {e}"));
        match &mut self.reply {
            Reply::Http { headers, .. } => {
                headers.insert(name, value);
            }
            _ => panic!("courier::mock: only a response has headers"),
        }
        self
    }

    /// Answers after `delay`: a call's timeout, a newer call cancelling this one, or a second
    /// caller sharing it while it is in flight, meet it as they would a slow upstream's.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// A stream's opening, then `events`' data, each serialized to JSON, then whatever the test
    /// pushes ([`Mock::push`](super::Mock::push)). The stream stays open. In a sequence
    /// ([`When::answers`](super::When::answers)), each attempt to open takes the next answer: a
    /// stream refused first (`Answer::status(503)`) is retried as a read is, and opened.
    ///
    /// # Panics
    ///
    /// When an event does not serialize to JSON.
    #[track_caller]
    pub fn events<T: Serialize>(events: impl IntoIterator<Item = T>) -> Self {
        Self::reply(Reply::Events(texts(events)))
    }

    /// A channel's opening, then `messages`, each serialized to JSON, then whatever the test
    /// pushes. The channel stays open.
    ///
    /// # Panics
    ///
    /// When a message does not serialize to JSON.
    #[track_caller]
    pub fn messages<T: Serialize>(messages: impl IntoIterator<Item = T>) -> Self {
        Self::reply(Reply::Messages(texts(messages)))
    }

    fn reply(reply: Reply) -> Self {
        Self { reply, delay: None }
    }
}

/// Each value as JSON text.
#[track_caller]
pub(super) fn texts<T: Serialize>(values: impl IntoIterator<Item = T>) -> Vec<String> {
    values.into_iter().map(|value| text(&value)).collect()
}

/// `value` as JSON text.
#[track_caller]
pub(super) fn text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|e| panic!("courier::mock: the value does not serialize: {e}"))
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Answer");
        match &self.reply {
            Reply::Http { status, body, .. } => out
                .field("status", status)
                .field("body", &String::from_utf8_lossy(body)),
            Reply::Failure(kind) => out.field("failure", kind),
            Reply::Events(events) => out.field("events", events),
            Reply::Messages(messages) => out.field("messages", messages),
        };
        out.field("delay", &self.delay).finish()
    }
}
