//! The rules behind [`Retry`](super::Retry): which policy, which requests, how long to wait.

use courier_core::{EndpointMeta, Kind, RetryPolicy, RetrySetting};
use http::Method;

/// The policy for a request: none when its endpoint turned retries off, the endpoint's own,
/// else the layer's.
pub(super) fn policy_for<'a>(
    default: &'a RetryPolicy,
    meta: Option<&'a EndpointMeta>,
) -> Option<&'a RetryPolicy> {
    match meta.map(EndpointMeta::get_retry) {
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
