//! Path templates and variable encoding (`courier_core::encode`): a template a definition gives,
//! and variables a caller (through the proxy, a browser) gives.
//!
//! Input: the template up to the first line feed, then the variables: JSON when the rest parses
//! as JSON, else the rest split at NUL bytes into string values for the template's parameters
//! (in order), and for query keys past them.
//!
//! Checked for every call that encodes: a value fills exactly one segment (the path has the
//! template's `/`s, its literal segments unchanged, and each parameter's segment decodes back
//! to the value); nothing reaches a fragment; no control character, space or `#` is written;
//! no substituted segment is `.` or `..`; a server-set path option can't be overridden; the
//! result is a valid URI path-and-query; the query string reads back and writes out the same.

#![no_main]

use courier_core::encode::{
    encode, DefaultSearchParams, EncodeInput, Encoded, EncodedBody, PathTemplate,
    SearchParamsSerializer, Variables,
};
use http::Method;
use libfuzzer_sys::fuzz_target;
use percent_encoding::percent_decode_str;
use serde_json::{json, Map, Value};

/// A path option the server sets: a variable of this name must never reach the query or body.
const SERVER_SET: &str = "tenant";

fn variables(template: &PathTemplate, rest: &[u8]) -> Value {
    if let Ok(value) = serde_json::from_slice::<Value>(rest) {
        return value;
    }
    let mut names = template.params();
    let mut object = Map::new();
    for (i, piece) in rest.split(|&b| b == 0).enumerate() {
        let key = names.next().map_or_else(|| format!("k{i}"), str::to_owned);
        object.insert(
            key,
            Value::String(String::from_utf8_lossy(piece).into_owned()),
        );
    }
    Value::Object(object)
}

/// The text a scalar stands for in a path segment.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The value a parameter took: from the path options first, then the variables (an object's
/// key, or a lone scalar for a template with one parameter).
fn value_of<'a>(
    name: &str,
    options: &'a Map<String, Value>,
    variables: &'a Value,
) -> Option<&'a Value> {
    options.get(name).or(match variables {
        Value::Object(map) => map.get(name),
        scalar => Some(scalar),
    })
}

/// The identifier a template segment starts with when it is a parameter (`:name...`).
fn param_of(segment: &str) -> Option<&str> {
    let name = segment.strip_prefix(':')?;
    let len = name
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    (len > 0).then(|| &name[..len])
}

fn check_path(template: &PathTemplate, options: &Map<String, Value>, vars: &Value, path: &str) {
    let written: Vec<&str> = template.as_str().split('/').collect();
    let rendered: Vec<&str> = path.split('/').collect();
    assert_eq!(
        written.len(),
        rendered.len(),
        "a value added or removed a segment: {:?} -> {path:?}",
        template.as_str()
    );
    for (pattern, segment) in written.iter().zip(&rendered) {
        let Some(name) = param_of(pattern) else {
            assert_eq!(pattern, segment, "a literal segment changed");
            continue;
        };
        assert!(
            *segment != "." && *segment != "..",
            "a value made a dot segment: {path:?}"
        );
        let literal = &pattern[1 + name.len()..];
        let value = segment
            .strip_suffix(literal)
            .unwrap_or_else(|| panic!("{segment:?} lost the literal {literal:?}"));
        let decoded = percent_decode_str(value)
            .decode_utf8()
            .expect("a segment decodes to UTF-8");
        let given = value_of(name, options, vars).and_then(scalar_text);
        assert_eq!(Some(decoded.as_ref()), given.as_deref(), "parameter {name}");
    }
}

/// Whether every key of `value`'s objects, nested objects too, is non-empty and bracket-free
/// (objects inside arrays travel as JSON text, so their keys don't count).
fn plain_keys(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .all(|(k, v)| !k.is_empty() && !k.contains(['[', ']']) && plain_keys(v)),
        _ => true,
    }
}

fn check(template: &PathTemplate, options: &Map<String, Value>, vars: &Value, encoded: &Encoded) {
    let text = &encoded.path_and_query;
    assert!(
        !text.contains(['#', ' ']) && !text.chars().any(char::is_control),
        "{text:?}"
    );
    // Relative to the base URL, which `join_path` puts before it with one `/`.
    let joined = format!("/{}", text.trim_start_matches('/'));
    http::uri::PathAndQuery::try_from(joined.as_str())
        .unwrap_or_else(|e| panic!("{text:?} is not a path and query: {e}"));
    let (path, query) = text.split_once('?').unwrap_or((text, ""));
    check_path(template, options, vars, path);

    let serializer = DefaultSearchParams;
    // Keys with brackets, or empty field names, have no query form of their own (the module
    // docs): only queries of other keys must read back.
    if !query.is_empty() && plain_keys(vars) {
        let read = serializer
            .parse(query)
            .unwrap_or_else(|e| panic!("the query {query:?} does not read back: {e}"));
        assert!(!read.contains_key(SERVER_SET), "{query:?}");
        assert_eq!(
            serializer.stringify(&read),
            query,
            "read back and written out"
        );
    }
    if let EncodedBody::Json(body) = &encoded.body {
        let body: Map<String, Value> = serde_json::from_slice(body).expect("a JSON object body");
        assert!(!body.contains_key(SERVER_SET));
    }
}

fuzz_target!(|input: &[u8]| {
    let (template, rest) = match input.iter().position(|&b| b == b'\n') {
        Some(end) => (&input[..end], &input[end + 1..]),
        None => (input, &[][..]),
    };
    let Ok(template) = std::str::from_utf8(template) else {
        return;
    };
    let Ok(template) = PathTemplate::parse(template) else {
        return;
    };
    assert_eq!(
        PathTemplate::parse(template.as_str()).as_ref(),
        Ok(&template)
    );
    let vars = variables(&template, rest);
    let Value::Object(options) = json!({ SERVER_SET: "acme" }) else {
        unreachable!()
    };
    for method in [Method::GET, Method::POST] {
        let input = EncodeInput {
            method: &method,
            path: &template,
            path_options: &options,
            variables: Variables::Json(vars.clone()),
            default_query: None,
            default_body: None,
            body_serializer: None,
            search_params: &DefaultSearchParams,
        };
        if let Ok(encoded) = encode(input) {
            check(&template, &options, &vars, &encoded);
        }
    }
    // A query string read by the same rules (as `parse`, whatever a page sent): what it reads
    // writes out to a query that reads back and writes out the same.
    let query = String::from_utf8_lossy(rest);
    if let Ok(read) = DefaultSearchParams.parse(&query) {
        let written = DefaultSearchParams.stringify(&read);
        let again = DefaultSearchParams
            .parse(&written)
            .unwrap_or_else(|e| panic!("{query:?} -> {written:?} does not read back: {e}"));
        assert_eq!(DefaultSearchParams.stringify(&again), written, "{query:?}");
    }
});
