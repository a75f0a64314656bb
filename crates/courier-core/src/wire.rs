//! The proxy route's wire, written and read here only: a call's query parameters and its body,
//! a channel's first frame and heartbeat, the close of a channel refused for good, the body of a
//! refusal, and which media types are JSON.
//!
//! The Rust proxy caller writes calls with it and the proxy reads them with it; the proxy
//! writes refusals and frames with it and the clients read them with it. `docs/PROTOCOL.md`
//! describes the same wire for a reader. The browser package speaks it too, in TypeScript: its
//! unit tests read `js/test/wire-vectors.json`, the calls and frames this module writes (its
//! test `the_browser_packages_vectors_are_current` keeps the file current), so the two sides
//! cannot drift apart.
//!
//! ```
//! use courier_core::wire;
//!
//! // A read of `users.get` with the variables 7, as a GET: the query, and no body.
//! let mut query = form_urlencoded::Serializer::new(String::new());
//! wire::CallAddress { source: "demo", group: "users", name: "get" }
//!     .append_to(|name, value| { query.append_pair(name, value); });
//! query.append_pair(wire::VARIABLES, &wire::variables_json(&serde_json::json!(7)));
//! assert_eq!(query.finish(), "_s=demo&_g=users&_m=get&_v=7");
//!
//! // The proxy reads it back.
//! let read = wire::WireQuery::parse("_s=demo&_g=users&_m=get&_v=7").unwrap();
//! assert_eq!((read.source(), read.variables.as_deref()), ("demo", Some("7")));
//! ```

use crate::encode::Variables;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// The query parameter naming the source, as the proxy registered it.
pub const SOURCE: &str = "_s";
/// The query parameter naming the endpoint's group, by its dotted path (empty at the root).
pub const GROUP: &str = "_g";
/// The query parameter naming the endpoint in its group.
pub const NAME: &str = "_m";
/// The query parameter holding a GET's (or a stream's, or a channel's) variables, as JSON.
pub const VARIABLES: &str = "_v";
/// The query parameter holding the call's timeout, in whole milliseconds.
pub const TIMEOUT: &str = "_t";
/// The query parameter announcing that a channel's first frame may be a hello.
pub const HELLO: &str = "_h";

/// Where a call goes: the source, the group and the endpoint's name, the first three
/// parameters of every call's query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallAddress<'a> {
    /// The source's name (`_s`).
    pub source: &'a str,
    /// The group's dotted path (`_g`).
    pub group: &'a str,
    /// The endpoint's name (`_m`).
    pub name: &'a str,
}

impl CallAddress<'_> {
    /// Hands `_s`, `_g` and `_m` to `append`, in that order (to a query serializer, say).
    pub fn append_to(&self, mut append: impl FnMut(&str, &str)) {
        append(SOURCE, self.source);
        append(GROUP, self.group);
        append(NAME, self.name);
    }
}

/// A timeout as `_t` writes it: whole milliseconds, rounded up (a timeout under a millisecond
/// is not zero, which would mean none).
pub fn timeout_millis(timeout: std::time::Duration) -> String {
    let millis = timeout.as_nanos().div_ceil(1_000_000);
    millis.to_string()
}

/// A wait as a refusal's `Retry-After` gives it (a shed call's 503, the rate limit's 429): whole
/// seconds, rounded up, and at least one, so that a caller told to wait never retries at once.
///
/// ```
/// use courier_core::wire::retry_after_secs;
/// use std::time::Duration;
///
/// assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
/// assert_eq!(retry_after_secs(Duration::ZERO), 1);
/// ```
pub fn retry_after_secs(wait: std::time::Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// Variables as `_v` writes them: compact JSON.
pub fn variables_json(variables: &Value) -> String {
    variables.to_string()
}

/// A POST's JSON body: `{"variables": …}`; `null` for a call without variables.
pub fn call_body(variables: Option<&Value>) -> String {
    #[derive(Serialize)]
    struct Body<'a> {
        variables: Option<&'a Value>,
    }
    serde_json::to_string(&Body { variables }).unwrap_or_else(|_| unreachable!("a JSON value"))
}

/// Input the proxy refuses to read: the message says what was expected. The proxy answers it
/// `400 BAD_REQUEST`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError(String);

impl WireError {
    /// What was wrong, and the shape expected.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

/// The wire's parameters of a request's query: `_s`, `_g`, `_m`, `_v`, `_t` and `_h`. None may
/// repeat, nor may any other parameter starting with `_`: two `_s` or two `_v` would be read
/// one way here and perhaps another way by whatever logged or cached the request, so the
/// request is refused. The page's own parameters (no `_`) are left alone.
///
/// Named fields rather than a map: reading them is on every proxied call's path, and a map of
/// owned names hashed its keys and allocated for each (6,400 instructions of a proxied call's
/// 87,000 under `valgrind --tool=callgrind`, docs/benchmarks-history.md, "The proxy hop as a process").
/// The values borrow the query where they need no decoding, as the protocol's own names and
/// most addresses do ([`WireQuery::into_owned`] for one kept longer than the query).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WireQuery<'a> {
    /// `_s`.
    pub source: Option<Cow<'a, str>>,
    /// `_g`.
    pub group: Option<Cow<'a, str>>,
    /// `_m`.
    pub name: Option<Cow<'a, str>>,
    /// `_v`, the JSON text as it came.
    pub variables: Option<Cow<'a, str>>,
    /// `_t`, as it came.
    pub timeout: Option<Cow<'a, str>>,
    /// `_h`, as it came.
    pub hello: Option<Cow<'a, str>>,
}

impl<'a> WireQuery<'a> {
    /// Parses a query string (`application/x-www-form-urlencoded`, as browsers write it).
    ///
    /// # Errors
    ///
    /// A parameter of the wire, or any other starting with `_`, that appears twice.
    pub fn parse(query: &'a str) -> Result<Self, WireError> {
        let mut wire = Self::default();
        // Other `_` names the protocol does not use: refused when repeated, as its own are.
        let mut others: Vec<Cow<'a, str>> = Vec::new();
        for (name, value) in pairs(query) {
            let slot = match name.as_ref() {
                SOURCE => &mut wire.source,
                GROUP => &mut wire.group,
                NAME => &mut wire.name,
                VARIABLES => &mut wire.variables,
                TIMEOUT => &mut wire.timeout,
                HELLO => &mut wire.hello,
                other if other.starts_with('_') => {
                    if others.iter().any(|seen| seen == other) {
                        return Err(repeated(other));
                    }
                    others.push(name);
                    continue;
                }
                _ => continue,
            };
            if slot.is_some() {
                return Err(repeated(&name));
            }
            *slot = Some(value);
        }
        Ok(wire)
    }

    /// The same parameters, owned: kept past the query they were read from.
    pub fn into_owned(self) -> WireQuery<'static> {
        let owned = |value: Option<Cow<'a, str>>| value.map(|v| Cow::Owned(v.into_owned()));
        WireQuery {
            source: owned(self.source),
            group: owned(self.group),
            name: owned(self.name),
            variables: owned(self.variables),
            timeout: owned(self.timeout),
            hello: owned(self.hello),
        }
    }

    /// The source named, empty when none is.
    pub fn source(&self) -> &str {
        self.source.as_deref().unwrap_or_default()
    }

    /// The call's address and its variables (`null` without `_v`), checked for shape only —
    /// whether the proxy exposes that endpoint is the proxy's to say.
    ///
    /// # Errors
    ///
    /// `_s`, `_g` or `_m` missing; an empty source; a group path with an empty name in it (a
    /// group path is names joined with dots); an endpoint's name empty or dotted; `_v` that is
    /// not JSON. None could ever name an endpoint: they are the caller's mistake, not a route.
    pub fn address(&self) -> Result<(CallAddress<'_>, Value), WireError> {
        fn required<'b>(value: &'b Option<Cow<'_, str>>, name: &str) -> Result<&'b str, WireError> {
            value
                .as_deref()
                .ok_or_else(|| WireError(format!("the `{name}` parameter is missing")))
        }
        let source = required(&self.source, SOURCE)?;
        let group = required(&self.group, GROUP)?;
        let name = required(&self.name, NAME)?;
        if source.is_empty() {
            return Err(WireError(format!("`{SOURCE}` is empty")));
        }
        if group.split('.').any(str::is_empty) {
            return Err(WireError(format!(
                "`{GROUP}` is a group path (names joined with dots), not `{group}`"
            )));
        }
        if name.is_empty() || name.contains('.') {
            return Err(WireError(format!(
                "`{NAME}` is an endpoint's name (no dots), not `{name}`"
            )));
        }
        let variables = match &self.variables {
            None => Value::Null,
            Some(text) => serde_json::from_str(text)
                .map_err(|e| WireError(format!("`{VARIABLES}` is not JSON: {e}")))?,
        };
        Ok((
            CallAddress {
                source,
                group,
                name,
            },
            variables,
        ))
    }
}

/// The query's name-value pairs, as `form_urlencoded::parse` reads them: split at `&`, empty
/// pairs skipped, the name up to the first `=`, `+` a space and `%XX` a byte, then UTF-8 with
/// any invalid sequence replaced.
///
/// The one optimisation of the wire reading: a pair with neither `%` nor `+` decodes to itself,
/// so it is borrowed as it is, and only other pairs go through `form_urlencoded`. The
/// protocol's own parameters seldom need decoding; decoding every pair cost about 2,000 of a
/// proxied read's instructions (callgrind, docs/benchmarks-history.md, "One thread per
/// connection's work").
fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            // Bytes, not chars: `%`, `+` and `=` are ASCII, so each is a char boundary too.
            let bytes = pair.as_bytes();
            if bytes.iter().any(|&b| b == b'%' || b == b'+') {
                // One pair, not empty: `parse` yields exactly one.
                return form_urlencoded::parse(bytes).next().unwrap_or_default();
            }
            match bytes.iter().position(|&b| b == b'=') {
                Some(at) => (Cow::Borrowed(&pair[..at]), Cow::Borrowed(&pair[at + 1..])),
                None => (Cow::Borrowed(pair), Cow::Borrowed("")),
            }
        })
}

fn repeated(name: &str) -> WireError {
    WireError(format!("the `{name}` parameter appears more than once"))
}

/// The expected shape of a POST's JSON body, for refusals.
const SHAPE: &str = "a POST's JSON body is `{\"variables\": …}` (`{\"variables\": null}`, or no \
                     body at all, for a call without variables)";

/// The variables of a POST's JSON body: `{"variables": …}` and nothing else. An empty body is
/// a call without variables.
///
/// # Errors
///
/// A body that is not JSON, not an object, without `variables` (a REST-shaped body, say) or
/// with other keys beside it: taken as "no variables", a filtered read would come back
/// unfiltered and a write would reach the upstream empty.
pub fn read_call_body(bytes: &[u8]) -> Result<Variables, WireError> {
    if bytes.trim_ascii().is_empty() {
        return Ok(Variables::None);
    }
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|e| WireError(format!("the body is not JSON ({e}); {SHAPE}")))?;
    let Value::Object(mut body) = body else {
        return Err(WireError(format!("the body is not a JSON object; {SHAPE}")));
    };
    let Some(variables) = body.remove("variables") else {
        return Err(WireError(format!(
            "the body has no `variables` key; {SHAPE}"
        )));
    };
    if let Some(key) = body.keys().next() {
        return Err(WireError(format!(
            "the body has the key `{key}` beside `variables`; {SHAPE}"
        )));
    }
    Ok(variables.into())
}

/// The `type` of courier's hello frame.
const HELLO_TYPE: &str = "courier.hello";

/// A channel's first frame, when a client has something to say before its messages:
/// `{"type":"courier.hello","since":…,"auth":{…},"headers":{…}}`, each part when it has one.
/// `since` is `Some` for a client that keeps positions (`docs/PROTOCOL.md`, "Positions and
/// recovery"): `Some(None)`, written `null`, while it has none, else the last one it was given.
/// `None` when there is nothing to say.
pub fn hello_frame(
    since: Option<Option<&str>>,
    auth: Option<&Map<String, Value>>,
    headers: &Map<String, Value>,
) -> Option<String> {
    #[derive(Serialize)]
    struct Hello<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        since: Option<Option<&'a str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        auth: Option<&'a Map<String, Value>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        headers: Option<&'a Map<String, Value>>,
    }
    if since.is_none() && auth.is_none() && headers.is_empty() {
        return None;
    }
    let hello = Hello {
        kind: HELLO_TYPE,
        since,
        auth,
        headers: (!headers.is_empty()).then_some(headers),
    };
    Some(serde_json::to_string(&hello).unwrap_or_else(|_| unreachable!("JSON values")))
}

/// A frame that is not JSON: the socket is closed with [`CLOSE_NOT_JSON`].
#[derive(Debug, PartialEq, Eq)]
pub struct NotJson;

/// What an announced first frame was: a hello's parts, or the first message.
#[derive(Debug, Default, PartialEq)]
pub struct FirstFrame {
    /// The hello's `auth`, when it is an object.
    pub auth: Option<Map<String, Value>>,
    /// The hello's `headers`, when it is an object.
    pub headers: Option<Map<String, Value>>,
    /// The hello's `since`, when it has one: the client keeps positions. `Some(None)` for
    /// `null` (it has none yet); `Some(Some(text))` for the position it had — a string's text,
    /// or any other JSON value's, which is then no position.
    pub since: Option<Option<String>>,
    /// The first frame, when it was a message and not a hello.
    pub pending: Option<Value>,
}

/// Reads an announced first text frame: a hello, or else the first message (a heartbeat is
/// neither: its answer goes with the next one).
///
/// # Errors
///
/// [`NotJson`] for a frame that is not JSON.
pub fn first_frame(text: &str) -> Result<FirstFrame, NotJson> {
    match serde_json::from_str::<Value>(text).map_err(|_| NotJson)? {
        Value::Object(mut hello) if is_hello_object(&hello) => {
            let object = |v: Option<Value>| match v {
                Some(Value::Object(map)) => Some(map),
                _ => None,
            };
            let since = hello.remove("since").map(|since| match since {
                Value::Null => None,
                Value::String(text) => Some(text),
                other => Some(other.to_string()),
            });
            Ok(FirstFrame {
                auth: object(hello.remove("auth")),
                headers: object(hello.remove("headers")),
                since,
                pending: None,
            })
        }
        message if is_ping(&message) => Ok(FirstFrame::default()),
        message => Ok(FirstFrame {
            pending: Some(message),
            ..FirstFrame::default()
        }),
    }
}

/// Reads a message frame's payload: JSON text (a binary frame's bytes must be UTF-8 JSON too).
///
/// # Errors
///
/// [`NotJson`] for a payload that is not UTF-8 JSON.
pub fn message(payload: &[u8]) -> Result<Value, NotJson> {
    let text = std::str::from_utf8(payload).map_err(|_| NotJson)?;
    serde_json::from_str(text).map_err(|_| NotJson)
}

/// courier's heartbeat: a browser cannot send a WebSocket ping, so its caller sends this
/// instead, and the proxy answers [`PONG`] itself, never handing it to a channel's handlers or
/// its upstream.
pub const PING: &str = r#"{"type":"courier.ping"}"#;

/// The answer to a heartbeat.
pub const PONG: &str = r#"{"type":"courier.pong"}"#;

/// The `type` of the frame that tells a client that keeps positions where its subscription
/// begins: `{"type":"courier.at","at":"EPOCH:OFFSET"}`.
pub const AT_TYPE: &str = "courier.at";

/// The `type` of a message with its position, to a client that keeps positions:
/// `{"type":"courier.message","at":"EPOCH:OFFSET","data":…}`.
pub const POSITIONED_TYPE: &str = "courier.message";

/// A server's frame of courier's own, `type` first (a client looks for that prefix before it
/// parses a frame).
#[derive(Serialize)]
struct Positioned<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
}

impl Positioned<'_> {
    fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("JSON values"))
    }
}

/// The frame that tells a client where its subscription begins ([`AT_TYPE`]).
pub fn at_frame(at: &str) -> String {
    let kind = AT_TYPE;
    Positioned {
        kind,
        at,
        data: None,
    }
    .text()
}

/// A message with its position, as a client that keeps positions is written it
/// ([`POSITIONED_TYPE`]).
pub fn positioned_frame(at: &str, data: &Value) -> String {
    let kind = POSITIONED_TYPE;
    Positioned {
        kind,
        at,
        data: Some(data),
    }
    .text()
}

/// What a server's frame says to a client that keeps positions: where its subscription begins
/// ([`AT_TYPE`]), a message with its position ([`POSITIONED_TYPE`]), or a message as it is (any
/// other frame, a positioned frame without a string `at` or without `data` included). Each part
/// is the frame's own text, so a message is read once, by whoever wants it typed.
#[derive(Debug, PartialEq)]
pub enum ServerFrame<'a> {
    /// Where the subscription begins.
    At(&'a str),
    /// A message (its JSON text) and, when it has one, its position.
    Message(&'a str, Option<&'a str>),
}

/// Reads a server's text frame for a client that keeps positions ([`ServerFrame`]).
pub fn server_frame(text: &str) -> ServerFrame<'_> {
    /// courier's own frame, its parts borrowed from the text (neither a type nor a position
    /// holds an escape; a frame whose do is not courier's).
    #[derive(Deserialize)]
    struct Own<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        at: &'a str,
        /// Required (`null` too): a positioned frame without it is no message of courier's.
        #[serde(borrow)]
        data: &'a serde_json::value::RawValue,
    }
    // The server writes its own frames with `type` first; anything else is a message, and is
    // not parsed here.
    if !text.starts_with(r#"{"type":"courier."#) {
        return ServerFrame::Message(text, None);
    }
    /// A frame that only says where the subscription begins: no `data`.
    #[derive(Deserialize)]
    struct At<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        at: &'a str,
    }
    if let Ok(Own {
        kind: POSITIONED_TYPE,
        at,
        data,
    }) = serde_json::from_str(text)
    {
        return ServerFrame::Message(data.get(), Some(at));
    }
    match serde_json::from_str(text) {
        Ok(At { kind: AT_TYPE, at }) => ServerFrame::At(at),
        _ => ServerFrame::Message(text, None),
    }
}

/// Whether a message is courier's heartbeat, [`PING`].
pub fn is_ping(message: &Value) -> bool {
    message
        .as_object()
        .is_some_and(|m| m.get("type").and_then(Value::as_str) == Some("courier.ping"))
}

/// Whether a first frame is courier's hello.
pub fn is_hello(message: &Value) -> bool {
    message.as_object().is_some_and(is_hello_object)
}

fn is_hello_object(message: &Map<String, Value>) -> bool {
    message.get("type").and_then(Value::as_str) == Some(HELLO_TYPE)
}

/// The close code for a frame that is not JSON.
pub const CLOSE_NOT_JSON: u16 = 1003;

/// The first close code of a channel refused for good: `4000 + the HTTP status` (4401 sign in,
/// 4403 forbidden, 4404 not exposed or not found, …). A client does not reconnect.
pub const CLOSE_REFUSED: u16 = 4000;

/// The longest reason a close frame holds: 125 bytes of payload, less the code's two.
pub const MAX_CLOSE_REASON: usize = 123;

/// The close of a channel refused for good with `status`: code `4000 + status`, reason
/// `CODE: message`, cut to [`MAX_CLOSE_REASON`].
pub fn refusal_close(status: u16, code: &str, message: &str) -> (u16, String) {
    (
        CLOSE_REFUSED + status,
        close_reason(format!("{code}: {message}")),
    )
}

/// `reason`, cut to [`MAX_CLOSE_REASON`] bytes on a character's boundary, as RFC 6455 requires.
pub fn close_reason(mut reason: String) -> String {
    if reason.len() > MAX_CLOSE_REASON {
        let mut end = MAX_CLOSE_REASON;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    reason
}

/// A refusal's body, `{"error":{"code":…,"message":…}}`: the proxy's refusals, a layer's
/// refusal as a direct caller sees it, a handler's failed call, a stream's last event.
pub fn error_body(code: &str, message: &str) -> Value {
    #[derive(Serialize)]
    struct Fields<'a> {
        code: &'a str,
        message: &'a str,
    }
    #[derive(Serialize)]
    struct Body<'a> {
        error: Fields<'a>,
    }
    serde_json::to_value(Body {
        error: Fields { code, message },
    })
    .unwrap_or_else(|_| unreachable!("strings"))
}

/// The code and message of a refusal's body ([`error_body`]); `None` for any other value (an
/// upstream's own error body). A body without a message has none.
pub fn read_error_body(value: &Value) -> Option<(&str, Option<&str>)> {
    let error = value.as_object()?.get("error")?.as_object()?;
    let code = error.get("code")?.as_str()?;
    Some((code, error.get("message").and_then(Value::as_str)))
}

/// Whether a `content-type` is JSON: `application/json` or any `+json` type
/// (`application/problem+json`, say), parameters and case aside.
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = match content_type.bytes().position(|b| b == b';') {
        Some(end) => &content_type[..end],
        None => content_type,
    }
    .trim();
    let bytes = essence.as_bytes();
    essence.eq_ignore_ascii_case("application/json")
        || (bytes.len() >= 5 && bytes[bytes.len() - 5..].eq_ignore_ascii_case(b"+json"))
}

#[cfg(test)]
mod vectors;

#[cfg(test)]
mod tests;
