//! Reading cookies off headers, comparing tokens in constant time, and marking what is written
//! as sensitive.

use http::header::COOKIE;
use http::{HeaderMap, HeaderValue};

/// Compares two tokens without stopping at the first difference, so the time taken says
/// nothing about how much of a guess was right. The length is not secret.
pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The `name=value` pairs of every `cookie` header, in order. Pairs without a name are skipped.
pub(super) fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&[u8], &[u8])> {
    headers
        .get_all(COOKIE)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b';'))
        .filter_map(|pair| {
            let eq = pair.iter().position(|&b| b == b'=')?;
            let name = pair[..eq].trim_ascii();
            let value = pair[eq + 1..].trim_ascii();
            (!name.is_empty()).then_some((name, value))
        })
}

/// The cookie name a `set-cookie` value sets.
pub(super) fn set_cookie_name(value: &[u8]) -> Option<&[u8]> {
    let pair = value.split(|&b| b == b';').next()?;
    let eq = pair.iter().position(|&b| b == b'=')?;
    let name = pair[..eq].trim_ascii();
    (!name.is_empty()).then_some(name)
}

/// A cookie value without the double quotes RFC 6265 allows around it.
pub(super) fn unquote(value: &[u8]) -> &[u8] {
    value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(value)
}

pub(super) fn sensitive(bytes: Vec<u8>) -> Result<HeaderValue, http::header::InvalidHeaderValue> {
    // The buffer becomes the value: checked, not copied.
    let mut value = HeaderValue::from_maybe_shared(bytes::Bytes::from(bytes))?;
    value.set_sensitive(true);
    Ok(value)
}
