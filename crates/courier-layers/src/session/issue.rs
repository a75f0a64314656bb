//! Issuing a session: [`SessionCookies`], the `set-cookie` headers a sign-in route answers
//! with, next to the checks that read them.

use super::config::Config;
use super::csrf::{self, IssueError};
use courier_core::{headers, SessionOptions};
use http::{HeaderMap, HeaderValue};
use ring::rand::{SecureRandom, SystemRandom};
use std::fmt;
use std::time::Duration;

/// The `set-cookie` headers that start (or end) a user's session: what a sign-in route answers
/// with, next to the checks that read them.
///
/// `SessionCookies` takes the same [`SessionOptions`] as the [`SessionLayer`](super::SessionLayer)
/// and the values of the session's cookies (a session id, a bearer token: only names the options
/// call the session's are accepted), and writes:
///
/// - each session cookie `HttpOnly; Secure; SameSite=Lax; Path=/`: the page's script cannot read
///   it, it travels over HTTPS only, and a cross-site subrequest does not carry it;
/// - with `csrf`, the CSRF cookie, with a fresh token: `Secure; SameSite=Lax; Path=/` but not
///   `HttpOnly`, since the page's script repeats it in the CSRF header. With the options' key
///   ([`SessionOptions::csrf_signed`]) the token is signed for exactly the session being issued
///   ([`csrf::issue`]), so the layer's signed check accepts it and no other.
///
/// `Max-Age` when [`max_age`](SessionCookies::max_age) is set (else the cookies last as long
/// as the browser session), `Domain` never (host-only cookies: a sibling subdomain cannot read
/// them). [`insecure`](SessionCookies::insecure) leaves `Secure` out, for plain-HTTP
/// development on another host than `localhost` (browsers keep `Secure` cookies from
/// `http://localhost`). [`SessionCookies::clear`] writes the sign-out: every cookie the options
/// name exactly, expired.
///
/// ```
/// use courier::layers::session::SessionCookies;
/// use courier::options::{CsrfKey, SessionOptions};
///
/// let options = SessionOptions::new()
///     .cookies(["sid"])
///     .csrf_signed("csrf", "x-csrf-token", CsrfKey::new(*b"a 32-byte key, random in real use"));
/// let issued = SessionCookies::new(&options).cookie("sid", "s-81f2").issue()?;
/// let lines: Vec<&str> = issued.set_cookies().iter().map(|v| v.to_str().unwrap()).collect();
/// assert_eq!(lines[0], "sid=s-81f2; Path=/; HttpOnly; Secure; SameSite=Lax");
/// let token = issued.csrf_token().unwrap();
/// assert_eq!(lines[1], format!("csrf={token}; Path=/; Secure; SameSite=Lax"));
/// assert!(courier::layers::session::csrf::verify(
///     &CsrfKey::new(*b"a 32-byte key, random in real use"),
///     "sid=s-81f2",
///     token,
/// ));
/// # Ok::<(), courier::layers::session::IssueRefused>(())
/// ```
///
/// In an axum sign-in handler (with the `axum` feature the issued session is a response part):
///
/// ```
/// # #[cfg(feature = "axum")] {
/// use axum::Json;
/// use courier::layers::session::{IssueRefused, IssuedSession, SessionCookies};
/// use courier::options::SessionOptions;
///
/// async fn sign_in() -> Result<(IssuedSession, Json<&'static str>), IssueRefused> {
///     let options = SessionOptions::new().cookies(["sid"]).csrf("csrf", "x-csrf-token");
///     // … check the credentials, make the session on the backend, then:
///     let issued = SessionCookies::new(&options).cookie("sid", "s-81f2").issue()?;
///     Ok((issued, Json("signed in")))
/// }
/// # let _ = axum::Router::<()>::new().route("/login", axum::routing::post(sign_in));
/// # }
/// ```
#[derive(Debug)]
pub struct SessionCookies<'a> {
    options: &'a SessionOptions,
    cookies: Vec<(String, String)>,
    max_age: Option<Duration>,
    secure: bool,
}

/// An issued session: its `set-cookie` header values, and the CSRF token when the options have
/// `csrf`.
#[derive(Clone, Debug)]
pub struct IssuedSession {
    set_cookies: Vec<HeaderValue>,
    csrf_token: Option<String>,
}

/// Why a session could not be issued.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IssueRefused {
    /// The name is not one of the options' session cookies (nor the bearer cookie): the layer
    /// would never send it upstream.
    NotASessionCookie(String),
    /// The name is not a cookie name (an RFC 6265 token), or the value not cookie octets
    /// (no space, `"`, `,`, `;`, `\`, control characters).
    InvalidCookie(String),
    /// No session cookie was given.
    NoCookies,
    /// The system's random number generator failed (it does not on a running Linux system).
    Random,
}

impl fmt::Display for IssueRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotASessionCookie(name) => write!(
                f,
                "`{name}` is not one of the session's cookies (its `cookies` or `bearer`)"
            ),
            Self::InvalidCookie(name) => write!(
                f,
                "the cookie `{name}` cannot be written: its name must be a token and its value \
                 cookie octets (no space, quote, comma, semicolon or backslash)"
            ),
            Self::NoCookies => f.write_str("a session needs at least one of its cookies"),
            Self::Random => IssueError.fmt(f),
        }
    }
}

impl std::error::Error for IssueRefused {}

impl<'a> SessionCookies<'a> {
    /// The session of `options`, with no cookie yet.
    pub fn new(options: &'a SessionOptions) -> Self {
        Self {
            options,
            cookies: Vec::new(),
            max_age: None,
            secure: true,
        }
    }

    /// Sets the session cookie `name` (one the options' `cookies` or `bearer` name) to `value`.
    #[must_use]
    pub fn cookie(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.cookies.push((name.into(), value.into()));
        self
    }

    /// How long the browser keeps the cookies (`Max-Age`, in whole seconds); without it, until
    /// the browser session ends.
    #[must_use]
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// Leaves `Secure` out, for plain-HTTP development on a host other than `localhost`. Never
    /// in production: the session would travel in the clear.
    #[must_use]
    pub fn insecure(mut self) -> Self {
        self.secure = false;
        self
    }

    /// The session cookies and, with `csrf`, the CSRF cookie with a fresh token (signed for this
    /// session with the options' key, when they have one).
    ///
    /// # Errors
    ///
    /// A name that is not the session's, a name or value a cookie cannot hold, no cookie at all,
    /// or a failed random number generator: see [`IssueRefused`].
    pub fn issue(&self) -> Result<IssuedSession, IssueRefused> {
        if self.cookies.is_empty() {
            return Err(IssueRefused::NoCookies);
        }
        let config = Config::new(self.options.clone());
        let mut set_cookies = Vec::new();
        for (name, value) in &self.cookies {
            if !config.binds(name.as_bytes()) {
                return Err(IssueRefused::NotASessionCookie(name.clone()));
            }
            set_cookies.push(self.line(name, value, true)?);
        }
        let csrf_token = match &self.options.csrf {
            None => None,
            Some(options) => {
                let token = match &options.key {
                    Some(key) => {
                        let pairs = self
                            .cookies
                            .iter()
                            .map(|(name, value)| (name.as_bytes(), value.as_bytes()));
                        let session = csrf::binding(pairs, |name| config.binds(name));
                        csrf::issue(key, &session).map_err(|_| IssueRefused::Random)?
                    }
                    None => random_token()?,
                };
                set_cookies.push(self.line(&options.cookie, &token, false)?);
                Some(token)
            }
        };
        Ok(IssuedSession {
            set_cookies,
            csrf_token,
        })
    }

    /// The sign-out: every cookie the options name exactly (session cookies, the bearer, the
    /// CSRF cookie), empty and expired. A prefix entry (`"sess_*"`) names no cookie to clear:
    /// set those with [`cookie`](Self::cookie) on a `SessionCookies` and clear them by name.
    pub fn clear(options: &SessionOptions) -> IssuedSession {
        let exact = options
            .cookies
            .iter()
            .filter(|name| !name.ends_with('*'))
            .chain(options.bearer.as_ref())
            .chain(options.csrf.as_ref().map(|csrf| &csrf.cookie));
        let set_cookies = exact
            .filter(|name| is_token(name))
            .filter_map(|name| {
                HeaderValue::try_from(format!("{name}=; Path=/; Max-Age=0; Secure; SameSite=Lax"))
                    .ok()
            })
            .collect();
        IssuedSession {
            set_cookies,
            csrf_token: None,
        }
    }

    fn line(&self, name: &str, value: &str, http_only: bool) -> Result<HeaderValue, IssueRefused> {
        if !is_token(name) || !value.bytes().all(headers::is_cookie_octet) {
            return Err(IssueRefused::InvalidCookie(name.to_owned()));
        }
        let mut line = format!("{name}={value}; Path=/");
        if let Some(max_age) = self.max_age {
            line.push_str(&format!("; Max-Age={}", max_age.as_secs()));
        }
        if http_only {
            line.push_str("; HttpOnly");
        }
        if self.secure {
            line.push_str("; Secure");
        }
        line.push_str("; SameSite=Lax");
        let mut value = HeaderValue::try_from(line)
            .map_err(|_| IssueRefused::InvalidCookie(name.to_owned()))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl IssuedSession {
    /// The `set-cookie` header values, session cookies first, then the CSRF cookie.
    pub fn set_cookies(&self) -> &[HeaderValue] {
        &self.set_cookies
    }

    /// The CSRF token the CSRF cookie holds, for a page that takes it from the sign-in's answer
    /// rather than from the cookie.
    pub fn csrf_token(&self) -> Option<&str> {
        self.csrf_token.as_deref()
    }

    /// Appends the `set-cookie` headers to `headers`.
    pub fn append_to(&self, headers: &mut HeaderMap) {
        for value in &self.set_cookies {
            headers.append(http::header::SET_COOKIE, value.clone());
        }
    }
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponseParts for IssuedSession {
    type Error = std::convert::Infallible;

    fn into_response_parts(
        self,
        mut parts: axum::response::ResponseParts,
    ) -> Result<axum::response::ResponseParts, Self::Error> {
        self.append_to(parts.headers_mut());
        Ok(parts)
    }
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponse for IssueRefused {
    /// A session that cannot be issued is the server's fault: 500.
    fn into_response(self) -> axum::response::Response {
        (http::StatusCode::INTERNAL_SERVER_ERROR, self.to_string()).into_response()
    }
}

/// A random token for an unsigned double-submit cookie: 32 bytes, in lowercase hex.
fn random_token() -> Result<String, IssueRefused> {
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| IssueRefused::Random)?;
    Ok(csrf::hex(&bytes))
}

/// An RFC 6265 cookie name: an RFC 9110 token.
fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(headers::is_token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::CsrfKey;

    fn key() -> CsrfKey {
        CsrfKey::new(*b"0123456789abcdef0123456789abcdef")
    }

    fn lines(issued: &IssuedSession) -> Vec<String> {
        issued
            .set_cookies()
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn session_cookies_are_http_only_secure_and_lax() {
        let options = SessionOptions::new().cookies(["sess_*"]).bearer("token");
        let issued = SessionCookies::new(&options)
            .cookie("sess_id", "a1")
            .cookie("token", "eyJ.x.y")
            .max_age(Duration::from_secs(3600))
            .issue()
            .unwrap();
        assert_eq!(
            lines(&issued),
            [
                "sess_id=a1; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax",
                "token=eyJ.x.y; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax",
            ]
        );
        assert_eq!(issued.csrf_token(), None);
        assert!(issued.set_cookies().iter().all(HeaderValue::is_sensitive));
    }

    #[test]
    fn an_unsigned_csrf_token_is_random_and_script_readable() {
        let options = SessionOptions::new()
            .cookies(["sid"])
            .csrf("csrf", "x-csrf");
        let issue = || {
            SessionCookies::new(&options)
                .cookie("sid", "s1")
                .issue()
                .unwrap()
        };
        let (first, second) = (issue(), issue());
        let token = first.csrf_token().unwrap();
        assert_eq!(token.len(), 64);
        assert_ne!(Some(token), second.csrf_token());
        assert_eq!(
            lines(&first)[1],
            format!("csrf={token}; Path=/; Secure; SameSite=Lax")
        );
    }

    #[test]
    fn a_signed_token_is_bound_to_the_issued_session() {
        let options = SessionOptions::new()
            .cookies(["sid", "tenant"])
            .csrf_signed("csrf", "x-csrf", key());
        let issued = SessionCookies::new(&options)
            .cookie("tenant", "acme")
            .cookie("sid", "s1")
            .issue()
            .unwrap();
        let token = issued.csrf_token().unwrap();
        assert!(csrf::verify(&key(), "sid=s1; tenant=acme", token));
        assert!(!csrf::verify(&key(), "sid=s2; tenant=acme", token));
    }

    #[test]
    fn names_and_values_a_session_cannot_hold_are_refused() {
        let options = SessionOptions::new().cookies(["sid"]);
        let refused = |name: &str, value: &str| {
            SessionCookies::new(&options)
                .cookie(name, value)
                .issue()
                .unwrap_err()
        };
        assert_eq!(
            refused("theme", "dark"),
            IssueRefused::NotASessionCookie("theme".into())
        );
        for value in ["a b", "a;b", "a,b", "a\"b", "a\\b", "a\nb", "é"] {
            assert_eq!(
                refused("sid", value),
                IssueRefused::InvalidCookie("sid".into()),
                "{value:?}"
            );
        }
        assert_eq!(
            SessionCookies::new(&options).issue().unwrap_err(),
            IssueRefused::NoCookies
        );
        let options = SessionOptions::new().cookies(["sid"]).csrf("bad name", "x");
        assert_eq!(
            SessionCookies::new(&options)
                .cookie("sid", "s1")
                .issue()
                .unwrap_err(),
            IssueRefused::InvalidCookie("bad name".into())
        );
    }

    #[test]
    fn insecure_leaves_secure_out() {
        let options = SessionOptions::new().cookies(["sid"]);
        let issued = SessionCookies::new(&options)
            .cookie("sid", "s1")
            .insecure()
            .issue()
            .unwrap();
        assert_eq!(lines(&issued), ["sid=s1; Path=/; HttpOnly; SameSite=Lax"]);
    }

    #[test]
    fn the_sign_out_expires_every_cookie_named_exactly() {
        let options = SessionOptions::new()
            .cookies(["sid", "sess_*"])
            .bearer("token")
            .csrf("csrf", "x-csrf");
        let cleared = SessionCookies::clear(&options);
        assert_eq!(
            lines(&cleared),
            [
                "sid=; Path=/; Max-Age=0; Secure; SameSite=Lax",
                "token=; Path=/; Max-Age=0; Secure; SameSite=Lax",
                "csrf=; Path=/; Max-Age=0; Secure; SameSite=Lax",
            ]
        );
        let mut headers = HeaderMap::new();
        cleared.append_to(&mut headers);
        assert_eq!(headers.get_all(http::header::SET_COOKIE).iter().count(), 3);
    }
}
