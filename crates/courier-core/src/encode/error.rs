//! Errors of variable encoding.
//!
//! Three types, one per stage that can fail: [`PathTemplateError`] when an address template is
//! parsed (definition time), [`EncodeError`] when a call's variables are encoded (call time), and
//! [`SearchParamsError`] when a query string is parsed back into variables.

use std::fmt;

/// A call's variables could not be turned into an address and a body.
///
/// Every variant that concerns one variable names it, so the message alone tells a caller what to
/// fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// The template has a parameter that neither `pathOptions` nor the variables supply.
    MissingPathParam {
        /// The parameter's name.
        name: String,
    },
    /// A path parameter's value is `null`, an array, an object or a file; only strings, numbers
    /// and booleans have one obvious text form.
    PathParamNotScalar {
        /// The parameter's name.
        name: String,
        /// What was found instead, e.g. `"an array"`.
        found: &'static str,
    },
    /// A path parameter's value is the empty string, which would leave an empty segment.
    EmptyPathParam {
        /// The parameter's name.
        name: String,
    },
    /// A path parameter's value is `.` or `..`; URL parsers resolve those (even percent-encoded)
    /// as dot-segments, which would change the path's structure.
    DotSegmentPathParam {
        /// The parameter's name.
        name: String,
        /// The refused value.
        value: String,
    },
    /// The variables are neither an object, nor a single scalar filling the template's only
    /// parameter.
    VariablesNotObject {
        /// What was found, e.g. `"an array"` or `"a string"`.
        found: &'static str,
        /// How many distinct parameters the template has (a scalar needs exactly one).
        path_params: usize,
    },
    /// A [`Form`](super::Form) was given for a method that carries no body.
    FormWithoutBody {
        /// The request method.
        method: http::Method,
    },
    /// A file part's content type is not of the form `type/subtype[; parameters]`.
    InvalidContentType {
        /// The form part's name.
        part: String,
        /// The refused content type.
        content_type: String,
    },
    /// Serializing the body failed; custom [`BodySerializer`](super::BodySerializer)s report
    /// their own failures through [`EncodeError::body`].
    Body(Box<dyn std::error::Error + Send + Sync>),
}

impl EncodeError {
    /// Wraps a body serializer's own error.
    pub fn body(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        EncodeError::Body(error.into())
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::MissingPathParam { name } => {
                write!(f, "no value for path parameter `{name}`")
            }
            EncodeError::PathParamNotScalar { name, found } => write!(
                f,
                "path parameter `{name}` must be a string, number or boolean, not {found}"
            ),
            EncodeError::EmptyPathParam { name } => write!(
                f,
                "path parameter `{name}` is an empty string, which would leave an empty path segment"
            ),
            EncodeError::DotSegmentPathParam { name, value } => write!(
                f,
                "path parameter `{name}` is `{value}`, a dot-segment that would change the path"
            ),
            EncodeError::VariablesNotObject { found, path_params } => write!(
                f,
                "variables must be an object, or a single value when the path has exactly one \
                 parameter (it has {path_params}); got {found}"
            ),
            EncodeError::FormWithoutBody { method } => {
                write!(f, "a form cannot be sent with {method}, which carries no body")
            }
            EncodeError::InvalidContentType { part, content_type } => write!(
                f,
                "form part `{part}` has content type {content_type:?}, not of the form type/subtype"
            ),
            EncodeError::Body(error) => write!(f, "body serializer failed: {error}"),
        }
    }
}

impl std::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EncodeError::Body(error) => Some(&**error),
            _ => None,
        }
    }
}

/// An address template was refused by [`PathTemplate::parse`](super::PathTemplate::parse).
///
/// Positions are byte offsets into the template.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathTemplateError {
    /// A character that may not stand in a URI path: `?` and `#` (they start a query or a
    /// fragment), spaces, control characters, non-ASCII and the other characters RFC 3986 leaves
    /// out of paths.
    ForbiddenChar {
        /// The template.
        template: String,
        /// The character.
        ch: char,
        /// Its byte offset.
        index: usize,
    },
    /// A `%` not followed by two hexadecimal digits.
    BadPercentEncoding {
        /// The template.
        template: String,
        /// The `%`'s byte offset.
        index: usize,
    },
    /// A `:` at the start of a segment with no parameter name after it.
    MissingParamName {
        /// The template.
        template: String,
        /// The `:`'s byte offset.
        index: usize,
    },
}

impl fmt::Display for PathTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathTemplateError::ForbiddenChar {
                template,
                ch,
                index,
            } => {
                write!(
                    f,
                    "path template {template:?}: {ch:?} at byte {index} is not allowed in a path"
                )?;
                // A brace that is not a parameter courier reads: say what it does read.
                let braced = template
                    .get(*index..)
                    .filter(|_| *ch == '{')
                    .and_then(|rest| Some(&rest[1..rest.find('}')?]));
                match braced {
                    Some(name) if name.starts_with('*') => write!(
                        f,
                        "; a catch-all `{{{name}}}` has no courier counterpart: a parameter is one segment, `{{{}}}` or `:{}`",
                        &name[1..],
                        &name[1..]
                    ),
                    Some(_) | None if *ch == '{' || *ch == '}' => f.write_str(
                        "; a parameter is `{name}` or `:name` at the start of a segment, `name` an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                    ),
                    _ => Ok(()),
                }
            }
            PathTemplateError::BadPercentEncoding { template, index } => write!(
                f,
                "path template {template:?}: `%` at byte {index} is not followed by two hex digits"
            ),
            PathTemplateError::MissingParamName { template, index } => write!(
                f,
                "path template {template:?}: `:` at byte {index} starts a segment but no \
                 parameter name ([A-Za-z_][A-Za-z0-9_]*) follows"
            ),
        }
    }
}

impl std::error::Error for PathTemplateError {}

/// A query string could not be parsed back into variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchParamsError {
    message: String,
}

impl SearchParamsError {
    /// Creates an error with the given message; custom
    /// [`SearchParamsSerializer`](super::SearchParamsSerializer)s use it for their own failures.
    pub fn new(message: impl Into<String>) -> Self {
        SearchParamsError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SearchParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid search parameters: {}", self.message)
    }
}

impl std::error::Error for SearchParamsError {}
