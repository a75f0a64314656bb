//! `Cache-Control`: the directives the cache reads, and whether an answer may be kept.

use super::CacheRule;
use http::header::{CACHE_CONTROL, SET_COOKIE, VARY};
use http::{HeaderMap, StatusCode};
use std::time::Duration;

/// The `Cache-Control` directives the cache acts on, from every `cache-control` header.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Directives {
    pub(super) no_store: bool,
    pub(super) no_cache: bool,
    pub(super) private: bool,
    pub(super) max_age: Option<u64>,
}

impl Directives {
    /// Reads `headers`. A directive is matched without regard to case; a `max-age` that is not
    /// a number is taken as 0 (not fresh), as RFC 9111 asks of an invalid one.
    pub(super) fn of(headers: &HeaderMap) -> Self {
        let mut directives = Self::default();
        for value in headers.get_all(CACHE_CONTROL) {
            let Ok(value) = value.to_str() else {
                // Not text: nothing in it can be trusted; treat it as `no-store`.
                directives.no_store = true;
                continue;
            };
            for directive in value.split(',') {
                let (name, argument) = match directive.split_once('=') {
                    Some((name, argument)) => {
                        (name.trim(), Some(argument.trim().trim_matches('"')))
                    }
                    None => (directive.trim(), None),
                };
                if name.eq_ignore_ascii_case("no-store") {
                    directives.no_store = true;
                } else if name.eq_ignore_ascii_case("no-cache") {
                    directives.no_cache = true;
                } else if name.eq_ignore_ascii_case("private") {
                    directives.private = true;
                } else if name.eq_ignore_ascii_case("max-age") {
                    let seconds = argument.and_then(|a| a.parse().ok()).unwrap_or(0);
                    // Of two, the shorter.
                    directives.max_age =
                        Some(directives.max_age.map_or(seconds, |m| m.min(seconds)));
                }
            }
        }
        directives
    }
}

/// How long a browser may keep the answer of a read with `rule`: its `revalidate`, or the
/// answer's `max-age` when shorter; `None` for an answer that is not a `200`, that sets a cookie,
/// that says `no-store` or `no-cache`, or when neither gives a time.
pub(super) fn browser_max_age(
    rule: &CacheRule,
    status: StatusCode,
    headers: &HeaderMap,
) -> Option<Duration> {
    fresh_for(rule, status, headers, &Directives::of(headers))
}

/// How long an answer may be kept: fresh for the first duration, then stale (answered while
/// it is fetched again) for the second. `None` when it may not be kept at all.
///
/// Kept: what a browser may keep ([`browser_max_age`]), but not with `Vary: *`, and an answer
/// marked `private` only for a request that carried `credentials` (an `authorization` or
/// `cookie` header): its key holds them, so that no other user's request finds it.
pub(super) fn keep_for(
    rule: &CacheRule,
    status: StatusCode,
    headers: &HeaderMap,
    credentials: bool,
) -> Option<(Duration, Duration)> {
    let varies_on_anything = headers.get_all(VARY).iter().any(|v| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|n| n.trim_ascii() == b"*")
    });
    let directives = Directives::of(headers);
    if varies_on_anything || (directives.private && !credentials) {
        return None;
    }
    let fresh = fresh_for(rule, status, headers, &directives)?;
    Some((fresh, rule.stale_while_revalidate))
}

/// The freshness of a `200` that sets no cookie and says neither `no-store` nor `no-cache`: the
/// shorter of the rule's `revalidate` and the answer's `max-age` (one must be given, not 0).
fn fresh_for(
    rule: &CacheRule,
    status: StatusCode,
    headers: &HeaderMap,
    directives: &Directives,
) -> Option<Duration> {
    if status != StatusCode::OK
        || headers.contains_key(SET_COOKIE)
        || directives.no_store
        || directives.no_cache
    {
        return None;
    }
    let max_age = directives.max_age.map(Duration::from_secs);
    match (rule.revalidate, max_age) {
        (Some(revalidate), Some(max_age)) => Some(revalidate.min(max_age)),
        (fresh @ Some(_), None) | (None, fresh @ Some(_)) => fresh,
        (None, None) => None,
    }
    .filter(|fresh| !fresh.is_zero())
}
