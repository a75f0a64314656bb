//! The error of [`Auth`](super::Auth).

use courier_core::BoxError;
use http::header::InvalidHeaderValue;
use std::fmt;

/// Why [`AuthLayer`](super::AuthLayer) failed a call before sending it: the supplier failed,
/// or its token is not a valid header value. `source()` is the supplier's error or the header
/// value's.
#[derive(Debug)]
pub struct TokenError {
    kind: TokenErrorKind,
    source: BoxError,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenErrorKind {
    Supplier,
    InvalidValue,
}

impl TokenError {
    pub(super) fn supplier(source: BoxError) -> Self {
        Self {
            kind: TokenErrorKind::Supplier,
            source,
        }
    }

    pub(super) fn invalid_value(source: InvalidHeaderValue) -> Self {
        Self {
            kind: TokenErrorKind::InvalidValue,
            source: source.into(),
        }
    }

    /// Whether the supplier answered a token (or the layer has a scheme) that cannot be a
    /// header value, rather than failing itself.
    pub fn is_invalid_value(&self) -> bool {
        self.kind == TokenErrorKind::InvalidValue
    }
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the token itself: it is a secret.
        f.write_str(match self.kind {
            TokenErrorKind::Supplier => "the token supplier failed",
            TokenErrorKind::InvalidValue => "the token is not a valid header value",
        })
    }
}

impl std::error::Error for TokenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}
