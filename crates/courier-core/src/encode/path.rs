//! Path templates: `:name` parameters and their substitution.
//!
//! A template is checked once, when an endpoint is defined, so a bad address is a definition
//! error and not a failed call. At call time each parameter's value is written as exactly one
//! path segment: no value can add a segment, remove one, or reach a query or fragment.

use serde_json::Value;

use super::text::{encode_component, kind, scalar_text};
use super::{EncodeError, PathTemplateError};

/// A parsed path template such as `/users/:id/posts` or `/files/:name.json`.
///
/// A parameter is a `:` at the start of a segment (after a `/`, or at the very start of the
/// template) followed by an identifier `[A-Za-z_][A-Za-z0-9_]*`. The identifier ends at the first
/// other character and the rest of the segment is literal, so `/files/:name.json` has the
/// parameter `name`. A `:` anywhere else is literal (`/a:b`, `/x/y:z`).
///
/// `{name}` at the start of a segment, as axum 0.8 and OpenAPI write a parameter, is another
/// spelling of `:name`: `/users/{id}/posts` is `/users/:id/posts`, and the template is kept in
/// the `:` spelling. A brace anywhere else, and axum's catch-all `{*rest}`, are refused.
///
/// ```
/// use courier::encode::PathTemplate;
///
/// let axum = PathTemplate::parse("/users/{id}/files/{name}.json").unwrap();
/// assert_eq!(axum.as_str(), "/users/:id/files/:name.json");
/// assert_eq!(axum, PathTemplate::parse("/users/:id/files/:name.json").unwrap());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTemplate {
    template: String,
    tokens: Vec<Token>,
    distinct: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Literal(String),
    Param(String),
}

impl PathTemplate {
    /// Parses and checks a template.
    ///
    /// Refused: `?` and `#` (a template is a path, never a query or fragment), spaces, control
    /// characters, non-ASCII, any other character RFC 3986 does not allow in a path, a `%` not
    /// followed by two hex digits, and a segment-initial `:` with no identifier after it. The
    /// empty template is allowed: it addresses a group's prefix itself.
    pub fn parse(template: &str) -> Result<PathTemplate, PathTemplateError> {
        let unbraced = unbrace(template)?;
        let template = unbraced.as_deref().unwrap_or(template);
        check_chars(template)?;
        let bytes = template.as_bytes();
        let mut tokens = Vec::new();
        let mut literal = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let segment_start = i == 0 || bytes[i - 1] == b'/';
            if segment_start && bytes[i] == b':' {
                let len = identifier_len(&bytes[i + 1..]);
                if len == 0 {
                    return Err(PathTemplateError::MissingParamName {
                        template: template.to_owned(),
                        index: i,
                    });
                }
                if !literal.is_empty() {
                    tokens.push(Token::Literal(std::mem::take(&mut literal)));
                }
                // The template is ASCII (checked above), so byte offsets are char boundaries.
                tokens.push(Token::Param(template[i + 1..i + 1 + len].to_owned()));
                i += 1 + len;
            } else {
                literal.push(char::from(bytes[i]));
                i += 1;
            }
        }
        if !literal.is_empty() {
            tokens.push(Token::Literal(literal));
        }
        let mut parsed = PathTemplate {
            template: template.to_owned(),
            tokens,
            distinct: 0,
        };
        parsed.distinct = parsed.distinct_params().len();
        Ok(parsed)
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The parameter names in order of appearance; a name used twice appears twice.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.tokens.iter().filter_map(|token| match token {
            Token::Param(name) => Some(name.as_str()),
            Token::Literal(_) => None,
        })
    }

    /// The distinct parameter names, in order of first appearance.
    pub(super) fn distinct_params(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self.params() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// How many distinct parameters there are.
    pub(super) fn distinct_len(&self) -> usize {
        self.distinct
    }

    /// Whether `name` is one of the parameters.
    pub(super) fn has_param(&self, name: &str) -> bool {
        self.params().any(|param| param == name)
    }

    /// Renders the path, taking each parameter's value from `values`.
    ///
    /// Each value becomes one percent-encoded segment (see the [module docs](super)): strings
    /// as-is, numbers by their JSON text, booleans as `true`/`false`. A missing parameter, a
    /// null/array/object value, the empty string, `.` and `..` are errors naming the parameter.
    ///
    /// `values` returns references that outlive the call (`'v`), so a closure over a map works:
    /// `template.render(&|name| map.get(name))`.
    pub fn render<'v>(
        &self,
        values: &dyn Fn(&str) -> Option<&'v Value>,
    ) -> Result<String, EncodeError> {
        let mut out = String::with_capacity(self.template.len());
        self.render_into(&mut out, values)?;
        Ok(out)
    }

    /// [`render`](Self::render), appending to `out`.
    pub(super) fn render_into<'v>(
        &self,
        out: &mut String,
        values: &dyn Fn(&str) -> Option<&'v Value>,
    ) -> Result<(), EncodeError> {
        for token in &self.tokens {
            match token {
                Token::Literal(text) => out.push_str(text),
                Token::Param(name) => {
                    let value = values(name)
                        .ok_or_else(|| EncodeError::MissingPathParam { name: name.clone() })?;
                    push_segment(out, name, value)?;
                }
            }
        }
        Ok(())
    }
}

/// Appends the percent-encoded text of `value` as a path segment. An integer is written
/// straight into `out`: its digits and sign need no encoding and are never a dot segment.
fn push_segment(out: &mut String, name: &str, value: &Value) -> Result<(), EncodeError> {
    use std::fmt::Write;
    if let Value::Number(number) = value {
        // Writing to a `String` cannot fail.
        if let Some(n) = number.as_u64() {
            let _ = write!(out, "{n}");
            return Ok(());
        }
        if let Some(n) = number.as_i64() {
            let _ = write!(out, "{n}");
            return Ok(());
        }
    }
    out.extend(encode_component(&segment_text(name, value)?));
    Ok(())
}

impl std::fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.template)
    }
}

/// The text a value stands for in a path segment, refusing values that would change the path.
fn segment_text<'a>(
    name: &str,
    value: &'a Value,
) -> Result<std::borrow::Cow<'a, str>, EncodeError> {
    let text = scalar_text(value).ok_or_else(|| EncodeError::PathParamNotScalar {
        name: name.to_owned(),
        found: kind(value),
    })?;
    match &*text {
        "" => Err(EncodeError::EmptyPathParam {
            name: name.to_owned(),
        }),
        // `%2E%2E` is still `..` to WHATWG URL parsers and most servers, so encoding cannot
        // save these; they are refused.
        "." | ".." => Err(EncodeError::DotSegmentPathParam {
            name: name.to_owned(),
            value: text.into_owned(),
        }),
        _ => Ok(text),
    }
}

/// Length of the identifier `[A-Za-z_][A-Za-z0-9_]*` at the start of `bytes` (0 if none).
fn identifier_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => bytes
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count(),
        _ => 0,
    }
}

/// `template` with each `{name}` that starts a segment written `:name`; `None` when it has no
/// brace. A brace that is not such a parameter is refused, as the character it is, with the
/// catch-all `{*rest}` named.
fn unbrace(template: &str) -> Result<Option<String>, PathTemplateError> {
    if !template.contains(['{', '}']) {
        return Ok(None);
    }
    let refused = |ch, index| PathTemplateError::ForbiddenChar {
        template: template.to_owned(),
        ch,
        index,
    };
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        let index = template.len() - rest.len() + at;
        let segment_start = index == 0 || template.as_bytes()[index - 1] == b'/';
        let braced = rest[at..]
            .strip_prefix('{')
            .and_then(|inner| inner.split_once('}'))
            .map(|(name, _)| name);
        match braced {
            Some(name)
                if segment_start
                    && identifier_len(name.as_bytes()) == name.len()
                    && !name.is_empty() =>
            {
                out.push_str(&rest[..at]);
                out.push(':');
                out.push_str(name);
                rest = &rest[at + name.len() + 2..];
            }
            _ => return Err(refused(char::from(template.as_bytes()[index]), index)),
        }
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// Checks every character against RFC 3986's `path-abempty`: pchar and `/`.
fn check_chars(template: &str) -> Result<(), PathTemplateError> {
    let bytes = template.as_bytes();
    for (index, ch) in template.char_indices() {
        let allowed = ch.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%".contains(ch);
        if !allowed {
            return Err(PathTemplateError::ForbiddenChar {
                template: template.to_owned(),
                ch,
                index,
            });
        }
        if ch == '%' {
            let hex = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(index + 1) && hex(index + 2)) {
                return Err(PathTemplateError::BadPercentEncoding {
                    template: template.to_owned(),
                    index,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
