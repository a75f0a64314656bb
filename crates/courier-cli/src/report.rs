//! What every subcommand prints and exits with, so the contract is written once.
//!
//! - Success: exit 0 ([`OK`]); output on stdout.
//! - A [`ConfigurationError`]: exactly one line of JSON on stderr,
//!   `{"error":"configuration","code":"DOTTED_NAME","message":"…"}`, where `message` is the
//!   error's `Display` (code, key path, explanation); exit 2 ([`CONFIGURATION`]).
//! - A call that failed after it was sent (`courier call`): one line of JSON on stderr, exit 1
//!   ([`FAILED`]):
//!   - an HTTP error, `{"error":"http","status":404,"headers":{…},"data":…}`;
//!   - no response (network failure, timeout, cancellation): the same with `status` 0, empty
//!     `headers`, `data` `null`, and `kind` and `message` added;
//!   - a response that could not be decoded, `{"error":"decode","status":200,"message":"…"}`.
//! - A usage error: clap's message and exit 2.
//!
//! Headers are a JSON object keyed by lowercase name; a value is a string, or an array of
//! strings, in order, when the header repeats (see [`headers`]).
//!
//! Output goes through `writeln!` rather than `println!`, so a closed pipe is ignored instead
//! of panicking.

use courier_client::HttpError;
use courier_core::ConfigurationError;
use http::HeaderMap;
use serde::Serialize;
use serde_json::{Map, Value};
use std::io::Write;
use std::process::ExitCode;

/// The command did what it was asked.
pub(crate) const OK: ExitCode = ExitCode::SUCCESS;

/// A call was made and failed: an HTTP error, no response, or a response that did not decode.
pub(crate) const FAILED: u8 = 1;

/// The config file, or a definition, is not usable.
pub(crate) const CONFIGURATION: u8 = 2;

/// The stderr body of a configuration error; the field order is the documented one.
#[derive(Serialize)]
struct ConfigurationReport<'a> {
    error: &'static str,
    code: &'static str,
    message: &'a str,
}

/// Prints `err` as one line of JSON on stderr; returns exit code 2.
pub(crate) fn configuration_error(err: &ConfigurationError) -> ExitCode {
    let message = err.to_string();
    let report = ConfigurationReport {
        error: "configuration",
        code: err.code().as_str(),
        message: &message,
    };
    stderr_json(&report, || {
        format!(
            r#"{{"error":"configuration","code":"{}","message":""}}"#,
            err.code()
        )
    });
    ExitCode::from(CONFIGURATION)
}

/// The stderr body of an HTTP error, and of a call that got no response (status 0, with `kind`
/// and `message`); the field order is the documented one.
#[derive(Serialize)]
struct HttpReport<'a> {
    error: &'static str,
    status: u16,
    headers: Map<String, Value>,
    data: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

/// Prints a response with status 400 or above as one line of JSON on stderr; returns exit code 1.
pub(crate) fn http_error(err: &HttpError) -> ExitCode {
    let status = err.status.as_u16();
    let report = HttpReport {
        error: "http",
        status,
        headers: headers(&err.headers),
        data: &err.data,
        kind: None,
        message: None,
    };
    stderr_json(&report, || {
        format!(r#"{{"error":"http","status":{status},"headers":{{}},"data":null}}"#)
    });
    ExitCode::from(FAILED)
}

/// Prints a call that got no response (status 0) as one line of JSON on stderr; `kind` is
/// `connect`, `dns`, `tls`, `reset`, `timeout`, `cancelled`, `closed` (a channel or stream ended
/// by its server), `protocol` or `other`.
/// Returns exit code 1.
pub(crate) fn no_response(kind: &str, message: &str) -> ExitCode {
    let report = HttpReport {
        error: "http",
        status: 0,
        headers: Map::new(),
        data: &Value::Null,
        kind: Some(kind),
        message: Some(message),
    };
    stderr_json(&report, || {
        format!(
            r#"{{"error":"http","status":0,"headers":{{}},"data":null,"kind":"{kind}","message":""}}"#
        )
    });
    ExitCode::from(FAILED)
}

/// The stderr body of a response that did not decode.
#[derive(Serialize)]
struct DecodeReport<'a> {
    error: &'static str,
    status: u16,
    message: &'a str,
}

/// Prints a response that could not be decoded as one line of JSON on stderr; returns exit
/// code 1.
pub(crate) fn decode_error(status: u16, message: &str) -> ExitCode {
    let report = DecodeReport {
        error: "decode",
        status,
        message,
    };
    stderr_json(&report, || {
        format!(r#"{{"error":"decode","status":{status},"message":""}}"#)
    });
    ExitCode::from(FAILED)
}

/// Headers as JSON: an object keyed by name (lowercase, as HTTP/1.1 and HTTP/2 carry them),
/// whose value is the header's text, or an array of its values in order when it repeats. A value
/// that is not UTF-8 is read lossily.
pub(crate) fn headers(headers: &HeaderMap) -> Map<String, Value> {
    let mut out = Map::new();
    for name in headers.keys() {
        let mut values: Vec<Value> = headers
            .get_all(name)
            .iter()
            .map(|v| Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        let value = if values.len() == 1 {
            values.pop().unwrap_or(Value::Null)
        } else {
            Value::Array(values)
        };
        out.insert(name.as_str().to_owned(), value);
    }
    out
}

/// Prints one line on stdout.
pub(crate) fn stdout_line(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Prints `value` as one line of compact JSON on stdout.
pub(crate) fn stdout_json(value: &impl Serialize) {
    // A `serde_json::Value` or a struct of them always serialises; `null` keeps the promise of
    // one JSON line should that ever change.
    let line = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
    stdout_line(&line);
}

/// Prints `report` as one line of compact JSON on stderr, or `fallback()` if it cannot be
/// serialised (strings, numbers and JSON values always can: the fallback keeps the promise of
/// one JSON line).
fn stderr_json(report: &impl Serialize, fallback: impl FnOnce() -> String) {
    let line = serde_json::to_string(report).unwrap_or_else(|_| fallback());
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::headers;
    use http::{HeaderMap, HeaderValue};
    use serde_json::json;

    #[test]
    fn a_repeated_header_is_an_array_in_order() {
        let mut map = HeaderMap::new();
        map.insert("content-type", HeaderValue::from_static("application/json"));
        map.append("set-cookie", HeaderValue::from_static("a=1"));
        map.append("set-cookie", HeaderValue::from_static("b=2"));
        map.insert(
            "x-bytes",
            HeaderValue::from_bytes(b"caf\xe9").expect("obs-text is a valid header value"),
        );
        assert_eq!(
            serde_json::Value::Object(headers(&map)),
            json!({
                "content-type": "application/json",
                "set-cookie": ["a=1", "b=2"],
                "x-bytes": "caf\u{fffd}",
            })
        );
    }
}
