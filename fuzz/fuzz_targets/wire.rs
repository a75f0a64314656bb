//! The proxy's wire parameters (the query of `/api/request`, `/api/sse` and the socket path) and
//! a POST's JSON body, checked against the rules `docs/PROTOCOL.md` states for them.
//!
//! Input: the same bytes as a query string (lossy UTF-8) and as a body.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::collections::HashSet;

/// The wire protocol's own parameters (names starting with `_`) may not repeat; any other
/// query is taken.
fn query_is_taken(query: &str) -> bool {
    let mut seen = HashSet::new();
    form_urlencoded::parse(query.as_bytes())
        .all(|(name, _)| seen.insert(name.clone()) || !name.starts_with('_'))
}

/// A body is empty (whitespace only), or a JSON object whose one key is `variables`.
fn body_is_taken(bytes: &[u8]) -> bool {
    if bytes.trim_ascii().is_empty() {
        return true;
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(body)) => body.len() == 1 && body.contains_key("variables"),
        _ => false,
    }
}

fuzz_target!(|input: &[u8]| {
    let query = String::from_utf8_lossy(input);
    assert_eq!(
        courier_server::fuzzing::wire_query(&query),
        query_is_taken(&query),
        "query {query:?}"
    );
    assert_eq!(
        courier_server::fuzzing::call_body(input),
        body_is_taken(input),
        "body {query:?}"
    );
});
