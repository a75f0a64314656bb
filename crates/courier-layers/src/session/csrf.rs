//! Signed CSRF tokens (OWASP's signed double-submit cookie): a token is bound to the user's
//! session with the server's key, so a token planted by someone who can write cookies but does
//! not hold the key (a sibling subdomain, a man in the middle on plain HTTP) is refused.
//!
//! A token is `NONCE.SIGNATURE`: sixteen random bytes and the HMAC-SHA256, with the
//! [`CsrfKey`], of the session and the nonce, both in lowercase hex. The session is the user's
//! session cookies as `name=value` pairs, sorted by name and joined by `; ` ([`binding`]): with
//! one session cookie `sid=abc`, the session is `sid=abc`. A request without session cookies
//! has the empty session, so a token issued before sign-in stops working after it.
//!
//! An app issues a token where it sets the session cookie (on sign-in) and again whenever the
//! session changes, and sets it as the CSRF cookie, readable by its own pages' script, which
//! repeat it in the CSRF header on writes:
//!
//! ```
//! use courier::layers::session::csrf;
//! use courier::options::CsrfKey;
//!
//! let key = CsrfKey::new(*b"a 32-byte key, random in real use");
//! let token = csrf::issue(&key, "sid=s1")?;
//! assert!(csrf::verify(&key, "sid=s1", &token));
//! assert!(!csrf::verify(&key, "sid=s2", &token), "bound to the session");
//! assert!(!csrf::verify(&CsrfKey::new(*b"another key of thirty-two bytes!!"), "sid=s1", &token));
//! # Ok::<(), courier::layers::session::csrf::IssueError>(())
//! ```

use courier_core::CsrfKey;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use std::fmt;

const NONCE_LEN: usize = 16;

/// A token for `session`, signed with `key`, with a fresh random nonce.
///
/// # Errors
///
/// When the system's random number generator fails (it does not on a running Linux system).
pub fn issue(key: &CsrfKey, session: &str) -> Result<String, IssueError> {
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new()
        .fill(&mut nonce)
        .map_err(|_| IssueError)?;
    let signature = sign(key, session, &nonce);
    Ok(format!("{}.{}", hex(&nonce), hex(signature.as_ref())))
}

/// Whether `token` was issued with `key` for `session`. The signature is compared in constant
/// time; anything that is not a well-formed token is simply not valid.
pub fn verify(key: &CsrfKey, session: &str, token: &str) -> bool {
    let Some((nonce, signature)) = token.split_once('.') else {
        return false;
    };
    let (Some(nonce), Some(signature)) = (unhex(nonce), unhex(signature)) else {
        return false;
    };
    if nonce.len() != NONCE_LEN {
        return false;
    }
    hmac::verify(
        &hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes()),
        &message(session, &nonce),
        &signature,
    )
    .is_ok()
}

/// The session a token is bound to, from a request's cookies: those `is_session` accepts, as
/// `name=value`, sorted by name (then value) and joined by `; `.
pub fn binding<'a>(
    cookies: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    is_session: impl Fn(&[u8]) -> bool,
) -> String {
    let mut pairs: Vec<(&[u8], &[u8])> = cookies.filter(|(name, _)| is_session(name)).collect();
    pairs.sort_unstable();
    let mut session = Vec::new();
    for (name, value) in pairs {
        if !session.is_empty() {
            session.extend_from_slice(b"; ");
        }
        session.extend_from_slice(name);
        session.push(b'=');
        session.extend_from_slice(value);
    }
    String::from_utf8_lossy(&session).into_owned()
}

fn sign(key: &CsrfKey, session: &str, nonce: &[u8]) -> hmac::Tag {
    hmac::sign(
        &hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes()),
        &message(session, nonce),
    )
}

/// The signed message: the session's length (so no session and nonce pair can be shifted into
/// another), the session, the nonce.
fn message(session: &str, nonce: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(8 + session.len() + nonce.len());
    message.extend_from_slice(&(session.len() as u64).to_be_bytes());
    message.extend_from_slice(session.as_bytes());
    message.extend_from_slice(nonce);
    message
}

/// `bytes` in lowercase hex.
pub(super) fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || text.len() > 128 {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let digit = |d: u8| char::from(d).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

/// The system's random number generator failed while issuing a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueError;

impl fmt::Display for IssueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the system's random number generator failed")
    }
}

impl std::error::Error for IssueError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CsrfKey {
        CsrfKey::new(*b"0123456789abcdef0123456789abcdef")
    }

    #[test]
    fn a_token_verifies_for_its_session_only() {
        let token = issue(&key(), "sid=s1").unwrap();
        assert_eq!(token.len(), 32 + 1 + 64, "{token}");
        assert!(verify(&key(), "sid=s1", &token));
        assert!(!verify(&key(), "sid=s1x", &token));
        assert!(!verify(&key(), "", &token));
        assert_ne!(
            issue(&key(), "sid=s1").unwrap(),
            token,
            "a fresh nonce each time"
        );
    }

    #[test]
    fn a_tampered_or_malformed_token_is_refused() {
        let token = issue(&key(), "sid=s1").unwrap();
        let (nonce, signature) = token.split_once('.').unwrap();
        let flipped = format!(
            "{nonce}.{}{}",
            &signature[..63],
            if signature.ends_with('0') { '1' } else { '0' }
        );
        for bad in [
            flipped.as_str(),
            nonce,
            "",
            ".",
            "zz.zz",
            &format!("{}.{signature}", &nonce[..30]),
            &format!("{nonce}.{}", &signature[..62]),
            "é.é",
        ] {
            assert!(!verify(&key(), "sid=s1", bad), "{bad:?}");
        }
    }

    #[test]
    fn the_binding_sorts_the_session_cookies_by_name() {
        let cookies: Vec<(&[u8], &[u8])> =
            vec![(b"sess_b", b"2"), (b"theme", b"dark"), (b"sess_a", b"1")];
        let session = binding(cookies.into_iter(), |name| name.starts_with(b"sess_"));
        assert_eq!(session, "sess_a=1; sess_b=2");
        assert_eq!(binding(std::iter::empty(), |_| true), "");
    }
}
