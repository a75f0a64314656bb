//! The error a call that fails a session check ends with.

use http::StatusCode;
use std::fmt;
use std::sync::Arc;

/// What a refusal refused, for its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Subject {
    Read,
    Write,
    Handshake,
}

/// A call was refused before it was sent: the served request failed the CSRF or the
/// origin check (a write), the Fetch Metadata policy (any call, with `fetch_metadata`), or
/// a socket's handshake failed the origin check ([`SessionLayer::check_handshake`]). Its
/// status is 403.
///
/// It reaches the caller as a [`BoxError`](courier_core::BoxError); find it with
/// `err.downcast_ref::<SessionRefused>()`.
///
/// [`SessionLayer::check_handshake`]: super::SessionLayer::check_handshake
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRefused {
    reason: RefusalReason,
    subject: Subject,
    /// What to do about it, with the names the session uses: the CSRF header and cookie,
    /// whether a session was found at all.
    hint: Option<Arc<str>>,
}

impl SessionRefused {
    pub(super) fn new(reason: RefusalReason, subject: Subject) -> Self {
        Self {
            reason,
            subject,
            hint: None,
        }
    }

    /// This refusal, saying `hint` after its reason.
    pub(super) fn hinted(mut self, hint: Option<String>) -> Self {
        self.hint = hint.map(Into::into);
        self
    }

    /// Which check failed.
    pub fn reason(&self) -> RefusalReason {
        self.reason
    }

    /// The status a server answers the served request with: 403 Forbidden.
    pub fn status(&self) -> StatusCode {
        StatusCode::FORBIDDEN
    }
}

impl fmt::Display for SessionRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = match self.subject {
            Subject::Read => "read",
            Subject::Write => "write",
            Subject::Handshake => "socket handshake",
        };
        write!(f, "{subject} refused by the session: {}", self.reason)?;
        match &self.hint {
            Some(hint) => write!(f, "; {hint}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for SessionRefused {}

/// Which session check a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The served request has no (or an empty) CSRF header.
    CsrfHeaderMissing,
    /// The served request has no (or an empty) CSRF cookie.
    CsrfCookieMissing,
    /// The CSRF header and cookie differ.
    CsrfMismatch,
    /// The CSRF token is not signed with the source's key for the served request's
    /// session (the signed form: [`csrf`](super::csrf)).
    CsrfSignatureInvalid,
    /// The served request's `Origin` is neither its own nor a trusted origin.
    UntrustedOrigin,
    /// Another site sent the served request: it has no `Origin` and its `Sec-Fetch-Site`
    /// is not `same-origin` or `none`, or (with `fetch_metadata`) its `Sec-Fetch-Site`
    /// says so and its `Origin` is not trusted.
    CrossSite,
}

impl RefusalReason {
    /// A short snake_case name, for logs and error codes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CsrfHeaderMissing => "csrf_header_missing",
            Self::CsrfCookieMissing => "csrf_cookie_missing",
            Self::CsrfMismatch => "csrf_mismatch",
            Self::CsrfSignatureInvalid => "csrf_signature_invalid",
            Self::UntrustedOrigin => "untrusted_origin",
            Self::CrossSite => "cross_site",
        }
    }

    /// The stable code a refusal carries on the wire (`{"error": {"code", …}}`):
    /// `CSRF_CHECK_FAILED` for the CSRF checks, `ORIGIN_NOT_TRUSTED` for the others.
    pub fn code(self) -> &'static str {
        match self {
            Self::UntrustedOrigin | Self::CrossSite => "ORIGIN_NOT_TRUSTED",
            Self::CsrfHeaderMissing
            | Self::CsrfCookieMissing
            | Self::CsrfMismatch
            | Self::CsrfSignatureInvalid => "CSRF_CHECK_FAILED",
        }
    }
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CsrfHeaderMissing => {
                "CSRF check failed: the served request carries no CSRF token header"
            }
            Self::CsrfCookieMissing => {
                "CSRF check failed: the served request carries no CSRF token cookie"
            }
            Self::CsrfMismatch => {
                "CSRF check failed: the CSRF token header does not match the CSRF cookie"
            }
            Self::CsrfSignatureInvalid => {
                "CSRF check failed: the CSRF token is not signed for this session"
            }
            Self::UntrustedOrigin => {
                "origin check failed: the served request's Origin is neither its own nor trusted"
            }
            Self::CrossSite => {
                "origin check failed: the served request came from another site (Sec-Fetch-Site)"
            }
        })
    }
}
