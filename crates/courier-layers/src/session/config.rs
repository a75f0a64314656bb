//! The session's options, parsed once: which cookies are the session's, the bearer cookie, the
//! CSRF token, the origins trusted — and what a call takes from the request being served.

use super::cookies::{constant_time_eq, cookies, sensitive, unquote};
use super::csrf;
use super::error::RefusalReason;
use super::site::{self, Origin};
use courier_core::context::ServedRequest;
use courier_core::{CsrfKey, EndpointMeta, SessionMode, SessionOptions};
use http::header::{AUTHORIZATION, COOKIE};
use http::{HeaderMap, HeaderName, HeaderValue, Request};
use std::sync::atomic::{AtomicBool, Ordering};

/// The options, parsed once.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) cookies: Vec<CookieName>,
    pub(super) bearer: Option<Box<str>>,
    pub(super) csrf: Option<Csrf>,
    pub(super) pass_set_cookie: bool,
    pub(super) trusted_origins: Vec<Origin>,
    pub(super) fetch_metadata: bool,
    /// Whether a call with no served request in scope was logged already: once is enough to
    /// say that the app's router lacks `ContextLayer`.
    pub(super) unserved_logged: AtomicBool,
}

#[derive(Debug)]
pub(super) struct Csrf {
    pub(super) cookie: Box<str>,
    /// `None` when the configured name is not a valid header name: the check then always fails.
    pub(super) header: Option<HeaderName>,
    /// The signing key of the signed form.
    pub(super) key: Option<CsrfKey>,
}

#[derive(Debug)]
pub(super) enum CookieName {
    Exact(Box<str>),
    Prefix(Box<str>),
}

impl CookieName {
    pub(super) fn new(entry: &str) -> Self {
        match entry.strip_suffix('*') {
            Some(prefix) => Self::Prefix(prefix.into()),
            None => Self::Exact(entry.into()),
        }
    }

    pub(super) fn matches(&self, name: &[u8]) -> bool {
        match self {
            Self::Exact(exact) => name == exact.as_bytes(),
            Self::Prefix(prefix) => name.starts_with(prefix.as_bytes()),
        }
    }
}

impl Config {
    pub(super) fn new(options: SessionOptions) -> Self {
        Self {
            cookies: options.cookies.iter().map(|c| CookieName::new(c)).collect(),
            bearer: options.bearer.map(String::into_boxed_str),
            csrf: options.csrf.map(|csrf| Csrf {
                header: HeaderName::from_bytes(csrf.header.as_bytes()).ok(),
                cookie: csrf.cookie.into_boxed_str(),
                key: csrf.key,
            }),
            fetch_metadata: options.fetch_metadata,
            unserved_logged: AtomicBool::new(false),
            pass_set_cookie: options.pass_set_cookie,
            // An entry that is not an origin can never match; it is left out.
            trusted_origins: options
                .trusted_origins
                .iter()
                .filter_map(|origin| Origin::parse(origin.trim().as_bytes()))
                .collect(),
        }
    }

    /// Says once, at `warn`, that a call of a source with a session was made with no served
    /// request in scope, so it carries no one's session: in a handler, the router lacks
    /// `ContextLayer`. A call the server makes on its own sets its endpoint's session off.
    pub(super) fn log_unserved<B>(&self, request: &Request<B>) {
        // A load first: every such call passes here, and only the first need write the flag
        // (a write on each would bounce its cache line between threads).
        if self.unserved_logged.load(Ordering::Relaxed)
            || self.unserved_logged.swap(true, Ordering::Relaxed)
        {
            return;
        }
        let endpoint = request
            .extensions()
            .get::<EndpointMeta>()
            .map_or("", EndpointMeta::path);
        tracing::warn!(
            endpoint,
            "a call of a source with a session was made with no served request in scope, so it \
             carries no session and no write of it is CSRF-checked: in a handler, add \
             `courier::layers::context::ContextLayer` to the app's router (or give the call \
             `CallOptions::context`); a call the server makes on its own sets the endpoint's \
             `session` off (said once)"
        );
    }

    pub(super) fn is_session_cookie(&self, name: &[u8]) -> bool {
        self.cookies.iter().any(|pattern| pattern.matches(name))
    }

    /// The double-submit check (see the module docs); with a key, the token must also be
    /// signed for the served request's session. The token, marked sensitive, when it passes.
    pub(super) fn check_csrf(
        &self,
        csrf: &Csrf,
        from: &HeaderMap,
    ) -> Result<HeaderValue, RefusalReason> {
        let header = csrf
            .header
            .as_ref()
            .and_then(|name| from.get(name))
            .filter(|value| !value.as_bytes().trim_ascii().is_empty())
            .ok_or(RefusalReason::CsrfHeaderMissing)?;
        let cookie = csrf_cookie(csrf, from)
            .filter(|value| !value.is_empty())
            .ok_or(RefusalReason::CsrfCookieMissing)?;
        let token = header.as_bytes().trim_ascii();
        if !constant_time_eq(token, cookie) {
            return Err(RefusalReason::CsrfMismatch);
        }
        if let Some(key) = &csrf.key {
            if self.session_signed(key, token, from).is_none() {
                return Err(RefusalReason::CsrfSignatureInvalid);
            }
        }
        let mut token = header.clone();
        token.set_sensitive(true);
        Ok(token)
    }

    /// What to do about a refusal for `reason` of a call made while serving a request with
    /// `headers`, in the names this session uses: which header must repeat which cookie, and,
    /// when the request carries no session at all, that the user signs in first.
    pub(super) fn hint(&self, reason: RefusalReason, headers: &HeaderMap) -> Option<String> {
        let csrf = self.csrf.as_ref();
        let header = csrf.and_then(|c| c.header.as_ref()).map(HeaderName::as_str);
        let cookie = csrf.map(|c| &*c.cookie);
        let fix = match (reason, header, cookie) {
            (RefusalReason::CsrfHeaderMissing, Some(header), Some(cookie))
                if !cookies(headers)
                    .any(|(name, value)| name == cookie.as_bytes() && !value.is_empty()) =>
            {
                // A page's caller repeats the cookie it reads: with no cookie, it sends no header.
                format!(
                    "the request carries no `{cookie}` cookie either, which the `{header}` header \
                     repeats: the session sets it when the user signs in (sign in again)"
                )
            }
            (RefusalReason::CsrfHeaderMissing, Some(header), Some(cookie)) => format!(
                "a write repeats the `{cookie}` cookie's value in the `{header}` header (a page's \
                 caller does it by itself when its routes, or its `csrf` option, name them)"
            ),
            (RefusalReason::CsrfCookieMissing, Some(header), Some(cookie)) => format!(
                "the `{header}` header came, the `{cookie}` cookie it repeats did not: the \
                 session sets that cookie when the user signs in"
            ),
            (RefusalReason::CsrfMismatch, Some(header), Some(cookie)) => {
                format!("the `{header}` header must equal the `{cookie}` cookie")
            }
            (RefusalReason::CsrfSignatureInvalid, _, Some(cookie)) => format!(
                "sign in again: the token in the `{cookie}` cookie belongs to another session"
            ),
            (RefusalReason::UntrustedOrigin, _, _) => {
                "list the page's origin in the session's `trusted_origins` if it may write".into()
            }
            _ => return None,
        };
        if matches!(
            reason,
            RefusalReason::UntrustedOrigin | RefusalReason::CrossSite
        ) {
            return Some(fix);
        }
        let signed_in = cookies(headers).any(|(name, _)| self.binds(name));
        if signed_in {
            return Some(fix);
        }
        let names: Vec<String> = self
            .cookies
            .iter()
            .map(|name| match name {
                CookieName::Exact(exact) => format!("`{exact}`"),
                CookieName::Prefix(prefix) => format!("`{prefix}*`"),
            })
            .chain(self.bearer.iter().map(|bearer| format!("`{bearer}`")))
            .collect();
        Some(format!(
            "{fix}; and no session was found (no {} cookie): sign in first",
            names.join(" or ")
        ))
    }

    /// The session `from` carries when its CSRF cookie's token is signed for it
    /// ([`SessionLayer::signed_session`](super::SessionLayer::signed_session)).
    pub(super) fn signed_session(&self, from: &HeaderMap) -> Option<String> {
        let csrf = self.csrf.as_ref()?;
        let key = csrf.key.as_ref()?;
        let token = csrf_cookie(csrf, from)?;
        // A token issued before sign-in is signed for the empty session, which is nobody's.
        self.session_signed(key, token, from)
            .filter(|session| !session.is_empty())
    }

    /// The session `from`'s cookies carry (its session and bearer cookies, [`csrf::binding`]),
    /// when `token` is signed for it with `key`.
    fn session_signed(&self, key: &CsrfKey, token: &[u8], from: &HeaderMap) -> Option<String> {
        let session = csrf::binding(cookies(from), |name| self.binds(name));
        let signed = std::str::from_utf8(token).is_ok_and(|t| csrf::verify(key, &session, t));
        signed.then_some(session)
    }

    /// Whether a cookie named `name` is part of the session a signed token is bound to: a
    /// session cookie or the bearer cookie.
    pub(super) fn binds(&self, name: &[u8]) -> bool {
        self.is_session_cookie(name) || self.bearer.as_deref().is_some_and(|b| b.as_bytes() == name)
    }

    /// Whether an upstream `set-cookie` for `name` goes back to the served response.
    pub(super) fn passes_back(&self, name: &[u8]) -> bool {
        self.is_session_cookie(name)
            || self.bearer.as_deref().is_some_and(|b| b.as_bytes() == name)
            || self
                .csrf
                .as_ref()
                .is_some_and(|csrf| csrf.cookie.as_bytes() == name)
    }

    /// Runs the write checks when `guarded`, then adds the session to `headers`. With
    /// `add_to_cookies`, a `cookie` header already there (written from path options) gets the
    /// session's cookies added, those of its names excepted; without, it is left as it is.
    pub(super) fn apply(
        &self,
        served: &ServedRequest,
        headers: &mut HeaderMap,
        mode: SessionMode,
        guarded: bool,
        add_to_cookies: bool,
    ) -> Result<(), RefusalReason> {
        let from = served.headers();
        if self.fetch_metadata && mode == SessionMode::On {
            site::check_fetch_metadata(&self.trusted_origins, served)?;
        }
        let mut token = None;
        if guarded {
            if let Some(csrf) = &self.csrf {
                token = Some((csrf, self.check_csrf(csrf, from)?));
            }
            site::check_origin(&self.trusted_origins, from, served.uri())?;
        }
        let csrf_cookie = token.as_ref().map(|(csrf, _)| csrf.cookie.as_bytes());

        if !headers.contains_key(COOKIE) || add_to_cookies {
            let existing = headers.get(COOKIE).map(|value| value.as_bytes().to_vec());
            // Room for the browser's cookies too, the most that can be taken from them.
            let browser = from
                .get_all(COOKIE)
                .iter()
                .map(HeaderValue::len)
                .sum::<usize>();
            let mut cookie =
                Vec::with_capacity(existing.as_ref().map_or(0, Vec::len) + browser + 2);
            cookie.extend_from_slice(existing.as_deref().unwrap_or_default());
            let taken = |name: &[u8]| {
                existing.as_deref().is_some_and(|header| {
                    header
                        .split(|&b| b == b';')
                        .any(|pair| pair.trim_ascii().split(|&b| b == b'=').next() == Some(name))
                })
            };
            for (name, value) in cookies(from) {
                if (self.is_session_cookie(name) || csrf_cookie == Some(name)) && !taken(name) {
                    if !cookie.is_empty() {
                        cookie.extend_from_slice(b"; ");
                    }
                    cookie.extend_from_slice(name);
                    cookie.push(b'=');
                    cookie.extend_from_slice(value);
                }
            }
            if !cookie.is_empty() {
                if let Ok(value) = sensitive(cookie) {
                    headers.insert(COOKIE, value);
                }
            }
        }

        if let Some(bearer) = &self.bearer {
            if !headers.contains_key(AUTHORIZATION) {
                let token = cookies(from)
                    .find(|(name, _)| *name == bearer.as_bytes())
                    .map(|(_, value)| unquote(value))
                    .filter(|value| !value.is_empty());
                if let Some(token) = token {
                    if let Ok(value) = sensitive([b"Bearer ", token].concat()) {
                        headers.insert(AUTHORIZATION, value);
                    }
                }
            }
        }

        if let Some((csrf, value)) = token {
            if let Some(name) = &csrf.header {
                if !headers.contains_key(name) {
                    headers.insert(name.clone(), value);
                }
            }
        }
        Ok(())
    }
}

/// The value of `from`'s CSRF cookie, if it has one.
fn csrf_cookie<'a>(csrf: &Csrf, from: &'a HeaderMap) -> Option<&'a [u8]> {
    cookies(from)
        .find(|(name, _)| *name == csrf.cookie.as_bytes())
        .map(|(_, value)| value)
}
