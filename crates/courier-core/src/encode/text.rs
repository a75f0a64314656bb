//! How single JSON values become text, and the one percent-encoding set everything uses.
//!
//! Path segments, search parameters and form fields all write a scalar the same way: a string
//! as-is, a number by its JSON text, a boolean as `true`/`false`. Keeping that in one place keeps
//! `/users/:id` and `?id=` in agreement about what `7` looks like.

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

/// Everything but RFC 3986's unreserved characters (ALPHA / DIGIT / `-` `.` `_` `~`).
///
/// One set for path segments, keys and values: the narrowest one is safe in every position, so
/// no value can be read as a separator (`/`, `?`, `#`, `&`, `=`, `+`, `[`, `]`) or as an escape
/// (`%`).
pub(super) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The text of a string, number or boolean; `None` for null, arrays and objects.
pub(super) fn scalar_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The text of any value: a scalar's own text, and JSON text for arrays and objects.
///
/// `None` only for null, which callers skip.
pub(super) fn any_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Null => None,
        Value::Array(_) | Value::Object(_) => Some(Cow::Owned(value.to_string())),
        _ => scalar_text(value),
    }
}

/// Names a value's kind for error messages: "a string", "an array", ...
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Percent-encodes `text` with [`COMPONENT`].
pub(super) fn encode_component(text: &str) -> percent_encoding::PercentEncode<'_> {
    percent_encoding::utf8_percent_encode(text, COMPONENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_by_their_json_text() {
        assert_eq!(scalar_text(&json!("a b")).as_deref(), Some("a b"));
        assert_eq!(scalar_text(&json!(7)).as_deref(), Some("7"));
        assert_eq!(scalar_text(&json!(-1.5)).as_deref(), Some("-1.5"));
        assert_eq!(scalar_text(&json!(true)).as_deref(), Some("true"));
        assert_eq!(scalar_text(&json!(false)).as_deref(), Some("false"));
        assert_eq!(scalar_text(&json!(null)), None);
        assert_eq!(scalar_text(&json!([1])), None);
        assert_eq!(scalar_text(&json!({})), None);
        assert_eq!(any_text(&json!([1, "a"])).as_deref(), Some(r#"[1,"a"]"#));
        assert_eq!(any_text(&json!(null)), None);
    }

    #[test]
    fn encodes_all_but_unreserved() {
        for byte in 0u8..0x80 {
            let c = char::from(byte);
            let encoded = encode_component(c.encode_utf8(&mut [0; 4])).to_string();
            if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                assert_eq!(encoded, c.to_string());
            } else {
                assert_eq!(encoded, format!("%{byte:02X}"));
            }
        }
        assert_eq!(encode_component("é/").to_string(), "%C3%A9%2F");
    }
}
