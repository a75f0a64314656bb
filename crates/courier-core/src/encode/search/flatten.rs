//! Writing nested variables as `key=value` pairs, shared by search parameters and the
//! URL-encoded body.

use serde_json::{Map, Value};

use crate::encode::text::{any_text, encode_component, scalar_text};

/// Appends `params` to `out` as `application/x-www-form-urlencoded` pairs joined by `&`.
///
/// Keys and values are percent-encoded with the unreserved set only, so a space is `%20` and a
/// structural bracket is `%5B`/`%5D`: RFC 3986 does not allow raw brackets in a query, and every
/// form decoder reads the encoded ones.
pub(in crate::encode) fn write_urlencoded(params: &Map<String, Value>, out: &mut String) {
    for (key, value) in params {
        write_value(&encode_component(key).to_string(), value, out);
    }
}

/// Writes one value under an already encoded key.
fn write_value(key: &str, value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            for item in items {
                // Only one level of repetition can be expressed; deeper values travel as JSON.
                if let Some(text) = any_text(item) {
                    write_pair(key, &text, out);
                }
            }
        }
        Value::Object(fields) => {
            for (field, value) in fields {
                let nested = format!("{key}%5B{}%5D", encode_component(field));
                write_value(&nested, value, out);
            }
        }
        _ => {
            if let Some(text) = scalar_text(value) {
                write_pair(key, &text, out);
            }
        }
    }
}

fn write_pair(key: &str, value: &str, out: &mut String) {
    if !out.is_empty() {
        out.push('&');
    }
    out.push_str(key);
    out.push('=');
    out.extend(encode_component(value));
}
