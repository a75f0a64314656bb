//! The [`tower::retry::Policy`] behind [`Retry`](super::Retry): which requests, which
//! outcomes, how long to wait.

use super::retry_after::retry_after;
use crate::BufferedBody;
use courier_core::{Backoff, EndpointMeta, Kind, Retry as RetrySetting, RetryPolicy};
use http::{Method, Request, Response};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::time::Sleep;
use tower::retry::budget::{Budget, TpsBudget};
use tower::util::rng::{HasherRng, Rng};

/// The policy state of one call.
///
/// tower clones the service's copy (with `attempts == 0`) into each call's future; that clone
/// counts the call's attempts. `clone_request` also runs on the service's copy for the first
/// attempt, so it only reads.
#[derive(Clone, Debug)]
pub(crate) struct Attempts {
    default: Arc<RetryPolicy>,
    budget: Arc<TpsBudget>,
    /// Attempts of this call that have finished.
    attempts: u32,
}

impl Attempts {
    pub(super) fn new(default: Arc<RetryPolicy>, budget: Arc<TpsBudget>) -> Self {
        Self {
            default,
            budget,
            attempts: 0,
        }
    }
}

impl<ReqBody, ResBody, E> tower::retry::Policy<Request<ReqBody>, Response<ResBody>, E> for Attempts
where
    ReqBody: BufferedBody,
    E: fmt::Display,
{
    type Future = Sleep;

    fn retry(
        &mut self,
        request: &mut Request<ReqBody>,
        result: &mut Result<Response<ResBody>, E>,
    ) -> Option<Self::Future> {
        self.attempts += 1;
        let attempt = self.attempts;
        let meta = request.extensions().get::<EndpointMeta>();
        let policy = policy_for(&self.default, meta)?;
        let endpoint = meta.map(EndpointMeta::path);
        if attempt == 1 {
            // Every call that may be retried pays into the budget once, whatever its outcome.
            self.budget.deposit();
        }

        let status = match result {
            Ok(response) => response.status().as_u16(),
            Err(_) => 0,
        };
        if !policy.statuses.contains(&status) || attempt >= policy.max_attempts {
            return None;
        }
        if !self.budget.withdraw() {
            tracing::debug!(
                endpoint,
                attempt,
                status,
                "not retrying: the retry budget is spent"
            );
            return None;
        }

        let hinted = match result {
            Ok(response) if policy.honor_retry_after => {
                retry_after(response.headers(), SystemTime::now())
            }
            _ => None,
        };
        let delay = match hinted {
            Some(hinted) => hinted.min(Duration::from_millis(policy.backoff.max_ms)),
            None => backoff_delay(&policy.backoff, attempt, HasherRng::new().next_f64()),
        };
        let delay_ms = delay.as_millis();
        match result {
            Ok(_) => tracing::debug!(
                endpoint,
                attempt,
                max_attempts = policy.max_attempts,
                status,
                retry_after = hinted.is_some(),
                delay_ms,
                "retrying"
            ),
            Err(error) => tracing::debug!(
                endpoint,
                attempt,
                max_attempts = policy.max_attempts,
                %error,
                delay_ms,
                "retrying"
            ),
        }
        Some(tokio::time::sleep(delay))
    }

    fn clone_request(&mut self, request: &Request<ReqBody>) -> Option<Request<ReqBody>> {
        let meta = request.extensions().get::<EndpointMeta>();
        let policy = policy_for(&self.default, meta)?;
        // No copy is needed for the last attempt the policy allows (nor for the only one).
        if self.attempts.saturating_add(1) >= policy.max_attempts
            || !may_retry(request.method(), meta, policy)
        {
            return None;
        }
        let Some(body) = request.body().try_clone_body() else {
            tracing::trace!(
                endpoint = meta.map(EndpointMeta::path),
                "not retryable: the request body is streamed"
            );
            return None;
        };
        let mut copy = Request::new(body);
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.version_mut() = request.version();
        *copy.headers_mut() = request.headers().clone();
        *copy.extensions_mut() = request.extensions().clone();
        Some(copy)
    }
}

/// The policy for a request: none when its endpoint turned retries off, the endpoint's own,
/// else the layer's.
fn policy_for<'a>(
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
