//! TOML values to the JSON values the tree holds (`default_body`, `default_query_params`,
//! `path_options`, `meta`).
//!
//! Done by hand rather than by deserializing straight into `serde_json::Value`, which would turn
//! a TOML date into a private marker object and a NaN into `null` without a word.

use super::key_path::KeyPath;
use crate::error::{ConfigurationError, ErrorCode};
use serde_json::{Map, Number, Value};

/// A TOML table as a JSON object; `at` is the table's key path, for errors.
pub(super) fn table(
    table: toml::Table,
    at: &KeyPath,
) -> Result<Map<String, Value>, ConfigurationError> {
    table
        .into_iter()
        .map(|(key, value)| {
            let converted = value_at(value, &at.key(&key))?;
            Ok((key, converted))
        })
        .collect()
}

fn value_at(value: toml::Value, at: &KeyPath) -> Result<Value, ConfigurationError> {
    Ok(match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(n) => Value::Number(n.into()),
        toml::Value::Float(f) => match Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None => {
                return Err(ConfigurationError::new(
                    ErrorCode::ConfigInvalid,
                    format!("`{f}` has no JSON form; use a finite number"),
                )
                .at(at.as_str()))
            }
        },
        toml::Value::Boolean(b) => Value::Bool(b),
        // A date travels as JSON does it: RFC 3339 text.
        toml::Value::Datetime(date) => Value::String(date.to_string()),
        toml::Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| value_at(item, &at.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(inner) => Value::Object(table(inner, at)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> toml::Table {
        text.parse().expect("test TOML parses")
    }

    #[test]
    fn every_toml_type_has_its_json_form() {
        let converted = table(
            parse("s = 'x'\ni = 7\nf = 1.5\nb = true\nd = 1979-05-27T07:32:00Z\na = [1, 'two']\nt = { k = 'v' }"),
            &KeyPath::root(),
        )
        .unwrap();
        assert_eq!(
            Value::Object(converted),
            json!({
                "s": "x", "i": 7, "f": 1.5, "b": true, "d": "1979-05-27T07:32:00Z",
                "a": [1, "two"], "t": { "k": "v" }
            })
        );
    }

    #[test]
    fn non_finite_floats_are_refused_with_their_path() {
        let err = table(parse("a = [1, { x = nan }]"), &KeyPath::root().key("meta")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ConfigInvalid);
        assert_eq!(err.path(), Some("meta.a[1].x"));
    }
}
