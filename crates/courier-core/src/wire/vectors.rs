//! The wire's vectors: calls, frames and refusals as [`wire`](super) writes them, for the
//! browser package's unit tests, which read them from `js/test/wire-vectors.json` and check
//! that the TypeScript writes (and reads) the same. A test here keeps that file equal to
//! [`json()`](json()).

use super::{
    at_frame, call_body, error_body, hello_frame, is_json_media_type, positioned_frame,
    refusal_close, server_frame, timeout_millis, variables_json, CallAddress, ServerFrame, PING,
    PONG, TIMEOUT, VARIABLES,
};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// One call: what it is, and what goes on the wire.
struct Call {
    what: &'static str,
    group: &'static str,
    name: &'static str,
    /// `None`: called with no variables.
    variables: Option<Value>,
    timeout: Option<Duration>,
    /// Whether it goes as GET (a read the routes allow in an address).
    get: bool,
    /// Whether the endpoint writes (else it reads).
    mutation: bool,
}

fn calls() -> Vec<Call> {
    let call = |what: &'static str, group, name, variables: Option<Value>, get| Call {
        what,
        group,
        name,
        variables,
        timeout: None,
        get,
        mutation: what.starts_with("a write"),
    };
    vec![
        call(
            "a read by a single value",
            "users",
            "get",
            Some(json!(7)),
            true,
        ),
        call("a read with no variables", "users", "list", None, true),
        call(
            "a read whose variables need encoding",
            "users",
            "search",
            Some(json!({"page": 2, "q": "ada lovelace & co/é+"})),
            true,
        ),
        call(
            "a write: the variables are the body",
            "users",
            "create",
            Some(json!({"name": "Ada", "tags": ["a", "b"], "team": {"id": 1}})),
            false,
        ),
        call("a write with no variables", "users", "ping", None, false),
        call(
            "a read sent as POST (not `get` in its routes)",
            "admin.reports",
            "daily",
            Some(json!({"day": "2026-11-28"})),
            false,
        ),
        Call {
            timeout: Some(Duration::from_micros(1_500_300)),
            ..call(
                "a read with a timeout: whole milliseconds, rounded up",
                "users",
                "get",
                Some(json!(7)),
                true,
            )
        },
    ]
}

/// The query and body of a call to source `demo`, as the wire writes them.
fn wire_of(call: &Call) -> (String, Option<String>) {
    let mut query = form_urlencoded::Serializer::new(String::new());
    CallAddress {
        source: "demo",
        group: call.group,
        name: call.name,
    }
    .append_to(|name, value| {
        query.append_pair(name, value);
    });
    if let Some(timeout) = call.timeout {
        query.append_pair(TIMEOUT, &timeout_millis(timeout));
    }
    if call.get {
        if let Some(variables) = &call.variables {
            query.append_pair(VARIABLES, &variables_json(variables));
        }
        (query.finish(), None)
    } else {
        (query.finish(), Some(call_body(call.variables.as_ref())))
    }
}

fn hellos() -> Vec<Value> {
    let map = |value: Value| match value {
        Value::Object(map) => map,
        _ => unreachable!("an object"),
    };
    type Object = Map<String, Value>;
    /// What a hello says: the case, `since`, `auth` and `headers`.
    type Case<'a> = (&'a str, Option<Option<&'a str>>, Option<Object>, Object);
    let cases: [Case<'_>; 7] = [
        ("nothing to say: no hello", None, None, Map::new()),
        (
            "auth only",
            None,
            Some(map(json!({"token": "t-1"}))),
            Map::new(),
        ),
        (
            "headers only",
            None,
            None,
            map(json!({"x-tenant": "acme", "x-trace": "t"})),
        ),
        (
            "auth and headers",
            None,
            Some(map(json!({"token": "t-1", "user": 7}))),
            map(json!({"x-tenant": "acme"})),
        ),
        ("keeps positions, none yet", Some(None), None, Map::new()),
        (
            "comes back from a position",
            Some(Some("3f9a0c1d2b4e5f60:41")),
            None,
            Map::new(),
        ),
        (
            "a position, auth and headers",
            Some(Some("3f9a0c1d2b4e5f60:41")),
            Some(map(json!({"token": "t-1"}))),
            map(json!({"x-tenant": "acme"})),
        ),
    ];
    cases
        .into_iter()
        .map(|(what, since, auth, headers)| {
            json!({
                "what": what,
                "since": since,
                "auth": auth,
                "headers": headers,
                "frame": hello_frame(since, auth.as_ref(), &headers),
            })
        })
        .collect()
}

/// A server's frames as a client that keeps positions reads them: the position it then keeps
/// (`at`, `null` for none) and the message it hands on (`message`, `null` for none).
fn positions() -> Vec<Value> {
    let frames = [
        (
            "where the subscription begins",
            at_frame("3f9a0c1d2b4e5f60:41"),
        ),
        (
            "a message with its position",
            positioned_frame("3f9a0c1d2b4e5f60:42", &json!({"from": "ada", "text": "hi"})),
        ),
        (
            "a plain message",
            r#"{"from":"ada","text":"hi"}"#.to_owned(),
        ),
        (
            "a position that is not a string",
            r#"{"type":"courier.message","at":42,"data":1}"#.to_owned(),
        ),
        (
            "a positioned message without data",
            r#"{"type":"courier.message","at":"e:1"}"#.to_owned(),
        ),
        (
            "a message of courier's type namespace",
            r#"{"type":"courier.other","at":"e:1"}"#.to_owned(),
        ),
    ];
    frames
        .into_iter()
        .map(|(what, frame)| {
            let (at, message) = match server_frame(&frame) {
                ServerFrame::At(at) => (Some(at), None),
                ServerFrame::Message(message, at) => (
                    at,
                    Some(serde_json::from_str::<Value>(message).unwrap_or(Value::Null)),
                ),
            };
            json!({ "what": what, "frame": frame, "at": at, "message": message })
        })
        .collect()
}

/// The vectors, as the JSON text `js/test/wire-vectors.json` holds.
pub(super) fn json() -> String {
    let calls: Vec<Value> = calls()
        .iter()
        .map(|call| {
            let (query, body) = wire_of(call);
            json!({
                "what": call.what,
                "source": "demo",
                "group": call.group,
                "name": call.name,
                "variables": call.variables,
                "timeoutMs": call.timeout.map(|t| t.as_secs_f64() * 1000.0),
                "type": if call.mutation { "mutation" } else { "query" },
                "method": if call.get { "GET" } else { "POST" },
                "query": query,
                "body": body,
            })
        })
        .collect();
    let refusals: Vec<Value> = [
        (
            404,
            "ENDPOINT_NOT_IN_ROUTES",
            "`users.delete` is not exposed by `demo`",
        ),
        (
            403,
            "CSRF_CHECK_FAILED",
            "write refused by the session: CSRF check failed",
        ),
    ]
    .into_iter()
    .map(|(status, code, message)| {
        let (close, reason) = refusal_close(status, code, message);
        json!({
            "status": status,
            "code": code,
            "message": message,
            "body": error_body(code, message).to_string(),
            "close": { "code": close, "reason": reason },
        })
    })
    .collect();
    let media_types: Vec<Value> = [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/problem+json",
        "application/vnd.api+JSON; v=1",
        "text/plain",
        "application/jsonx",
        "text/json",
    ]
    .into_iter()
    .map(|kind| json!({ "contentType": kind, "json": is_json_media_type(kind) }))
    .collect();
    let vectors = json!({
        "about": "the proxy's wire as courier-core's `wire` module writes it (crates/courier-core/src/wire/vectors.rs); `cargo test -p courier-core wire` checks this file, and writes it with COURIER_WRITE_VECTORS=1",
        "calls": calls,
        "hellos": hellos(),
        "positions": positions(),
        "ping": PING,
        "pong": PONG,
        "refusals": refusals,
        "mediaTypes": media_types,
    });
    let mut text = serde_json::to_string_pretty(&vectors).unwrap_or_else(|_| unreachable!("JSON"));
    text.push('\n');
    text
}
