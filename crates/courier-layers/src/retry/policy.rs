//! The rules behind [`Retry`](super::Retry): which policy, which requests, how long to wait.

use courier_core::{Backoff, EndpointMeta, Kind, Retry as RetrySetting, RetryPolicy};
use http::Method;
use std::time::Duration;

/// The policy for a request: none when its endpoint turned retries off, the endpoint's own,
/// else the layer's.
pub(super) fn policy_for<'a>(
    default: &'a RetryPolicy,
    meta: Option<&'a EndpointMeta>,
) -> Option<&'a RetryPolicy> {
    match meta.map(EndpointMeta::retry_value) {
        Some(RetrySetting::Off) => None,
        Some(RetrySetting::Policy(policy)) => Some(policy),
        Some(RetrySetting::Inherit) | None => Some(default),
    }
}

/// Whether sending the request again is safe: a read, an idempotent method, or a write whose
/// policy allows it.
pub(super) fn may_retry(
    method: &Method,
    meta: Option<&EndpointMeta>,
    policy: &RetryPolicy,
) -> bool {
    policy.writes || is_idempotent(method) || meta.is_some_and(EndpointMeta::is_read)
}

/// RFC 9110's idempotent methods, and QUERY, which courier treats as a read.
fn is_idempotent(method: &Method) -> bool {
    Kind::of_method(method) == Kind::Query
        || matches!(*method, Method::PUT | Method::DELETE | Method::TRACE)
}

/// The wait before retry `retry` (the first is 1): `initial_ms × factor^(retry-1)` capped at
/// `max_ms`, and with jitter, that times `unit` (uniform in `[0, 1)`), so between zero and it.
pub(super) fn backoff_delay(backoff: &Backoff, retry: u32, unit: f64) -> Duration {
    let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
    let cap = backoff.max_ms as f64;
    let ms = backoff.initial_ms as f64 * backoff.factor.powi(exponent);
    // A NaN (a NaN factor) or an overflow waits the longest; a negative factor waits nothing.
    let ms = if ms.is_nan() { cap } else { ms.clamp(0.0, cap) };
    let ms = if backoff.jitter {
        ms * unit.clamp(0.0, 1.0)
    } else {
        ms
    };
    Duration::from_secs_f64(ms / 1000.0)
}
