//! The rules behind [`Retry`](super::Retry): which requests, by which policy.

use crate::FromMeta;
use courier_core::{EndpointMeta, Kind, RetryPolicy, RetrySetting};
use http::{Method, Request};
use std::sync::Arc;

/// Which requests [`Retry`](super::Retry) may send again, and by which policy.
///
/// Asked once, when the call is made; the answer holds for all its attempts. Implemented by
/// [`FromMeta`] (the rules of the [module docs](super): the request's
/// [`EndpointMeta::get_retry`], and only reads, idempotent methods, or writes the policy allows)
/// and by any `Fn(&Request<B>) -> bool`, which says whether a request may be sent again, by the
/// layer's policy, whatever its method. Implement it on a type of your own to give requests
/// policies of their own.
pub trait RetryFor<B> {
    /// The policy `request` is retried by (`default` is the layer's), or `None` when it must
    /// be sent once.
    fn retry_for(
        &self,
        request: &Request<B>,
        default: &Arc<RetryPolicy>,
    ) -> Option<Arc<RetryPolicy>>;
}

impl<B> RetryFor<B> for FromMeta {
    fn retry_for(
        &self,
        request: &Request<B>,
        default: &Arc<RetryPolicy>,
    ) -> Option<Arc<RetryPolicy>> {
        let meta = request.extensions().get::<EndpointMeta>();
        let policy = match meta.map(EndpointMeta::get_retry) {
            Some(RetrySetting::Off) => return None,
            // The endpoint's own, shared: set with the setting, so never missing here.
            Some(RetrySetting::Policy(_)) => Arc::clone(meta?.get_retry_policy()?),
            Some(RetrySetting::Inherit) | None => Arc::clone(default),
        };
        if may_retry(request.method(), meta, &policy) {
            return Some(policy);
        }
        // A write that carries its idempotency key may be sent again where it cannot have been
        // applied twice by an upstream that honours the key.
        let keyed = meta.is_some_and(super::idempotency::keyed)
            && request
                .headers()
                .contains_key(courier_core::IDEMPOTENCY_KEY);
        keyed.then(|| Arc::new(keyed_write(&policy)))
    }
}

/// The statuses a write with an idempotency key is sent again on: a connection failure (0),
/// 429 and 503, where the policy retries them (`Retry-After` honoured as the policy says).
const KEYED_WRITE_STATUSES: [u16; 3] = [0, 429, 503];

/// `policy` for a write with an idempotency key: its statuses narrowed to
/// [`KEYED_WRITE_STATUSES`].
fn keyed_write(policy: &RetryPolicy) -> RetryPolicy {
    let mut keyed = policy.clone();
    keyed
        .statuses
        .retain(|status| KEYED_WRITE_STATUSES.contains(status));
    keyed
}

impl<B, F> RetryFor<B> for F
where
    F: Fn(&Request<B>) -> bool,
{
    fn retry_for(
        &self,
        request: &Request<B>,
        default: &Arc<RetryPolicy>,
    ) -> Option<Arc<RetryPolicy>> {
        self(request).then(|| Arc::clone(default))
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
