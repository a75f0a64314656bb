//! How a file's faults become [`ConfigurationError`]s: TOML syntax (`CONFIG_SYNTAX`, with line
//! and column), a key courier does not know (`CONFIG_UNKNOWN_KEY`, with the key path and the
//! keys expected there), and a value of the wrong type or shape (`CONFIG_INVALID`).

use super::key_path::KeyPath;
use crate::error::{ConfigurationError, ErrorCode};

/// The file is not valid TOML.
pub(super) fn syntax(text: &str, err: &toml::de::Error) -> ConfigurationError {
    let message = one_line(err.message());
    let message = match err.span().and_then(|span| line_column(text, span.start)) {
        Some((line, column)) => format!("line {line}, column {column}: {message}"),
        None => message,
    };
    ConfigurationError::new(ErrorCode::ConfigSyntax, message)
}

/// The file is not UTF-8 (TOML must be).
pub(super) fn not_utf8(bytes: &[u8], err: &std::str::Utf8Error) -> ConfigurationError {
    let valid = bytes
        .get(..err.valid_up_to())
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("");
    let line = valid.matches('\n').count() + 1;
    ConfigurationError::new(
        ErrorCode::ConfigSyntax,
        format!("line {line}: the file is not UTF-8 text (TOML must be)"),
    )
}

/// Valid TOML that does not fit courier's shape.
pub(super) fn shape(
    text: &str,
    err: &serde_path_to_error::Error<toml::de::Error>,
) -> ConfigurationError {
    let inner = err.inner();
    let message = one_line(inner.message());
    let mut path = KeyPath::from_serde(err.path());
    let location = inner
        .span()
        .and_then(|span| line_column(text, span.start))
        .map(|(line, column)| format!(" (line {line}, column {column})"))
        .unwrap_or_default();

    // serde words these two itself (`Error::unknown_field`, `Error::missing_field`), the same in
    // every format; courier says "key", as TOML does.
    if let Some(rest) = message.strip_prefix("unknown field") {
        if let Some(key) = first_quoted(rest) {
            if !path.ends_with_key(key) {
                path = path.key(key);
            }
        }
        let hint = first_quoted(rest).map_or_else(String::new, |key| hint(key, rest, &path));
        return ConfigurationError::new(
            ErrorCode::ConfigUnknownKey,
            format!("unknown key{rest}{location}{hint}"),
        )
        .at(path.as_str());
    }
    let message = if let Some(rest) = message.strip_prefix("missing field") {
        format!("missing key{rest}")
    } else if message.starts_with("data did not match any variant of untagged enum") {
        "this value has none of the accepted types (see docs/CONFIG.md for the key)".to_owned()
    } else {
        message
    };
    ConfigurationError::new(ErrorCode::ConfigInvalid, format!("{message}{location}"))
        .at(path.as_str())
}

/// What to write instead of the unknown `key`, whose message (serde's, after "unknown field")
/// is `rest` and whose place is `path`: endpoints put straight under a source go in a group;
/// else the expected key closest to it, if one is close.
fn hint(key: &str, rest: &str, path: &KeyPath) -> String {
    let segments: Vec<&str> = path.as_str().split('.').collect();
    if key == "endpoints" && segments.len() == 3 && segments[0] == "sources" {
        return format!(
            "; endpoints live in a group: `[sources.{}.groups.NAME.endpoints.…]`",
            segments[1]
        );
    }
    let expected = rest
        .split_once("expected")
        .map_or("", |(_, expected)| expected)
        .split('`')
        .skip(1)
        .step_by(2);
    crate::suggest::closest(key, expected)
        .map(|name| format!("; did you mean `{name}`?"))
        .unwrap_or_default()
}

/// The first `backquoted` word of a serde message: the key it is about.
fn first_quoted(text: &str) -> Option<&str> {
    let start = text.find('`')? + 1;
    let len = text.get(start..)?.find('`')?;
    text.get(start..start + len)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> Option<(usize, usize)> {
    let before = text.get(..offset)?;
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..)?.chars().count() + 1;
    Some((line, column))
}

/// The CLI prints errors as one JSON line; keep messages to one line of text too.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_column("ab\ncé=x", 6), Some((2, 3)));
        assert_eq!(line_column("abc", 0), Some((1, 1)));
        // Inside a multi-byte character: no position rather than a panic.
        assert_eq!(line_column("é", 1), None);
        assert_eq!(line_column("é", 99), None);
    }

    #[test]
    fn quoted_keys_are_found() {
        assert_eq!(first_quoted(" `cach`, expected one of `get`"), Some("cach"));
        assert_eq!(first_quoted(" `"), None);
    }

    #[test]
    fn messages_are_one_line() {
        assert_eq!(one_line("a\n  b\n\n"), "a; b");
    }
}
