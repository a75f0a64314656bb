//! The copy of a request that [`Retry`](super::Retry) sends again.

use crate::BufferedBody;
use courier_core::context::ServedRequest;
use courier_core::{EndpointMeta, RetryPolicy};
use http::{Extensions, HeaderMap, Method, Request, Uri, Version};
use std::sync::Arc;

/// Everything of a request but its body's consumption: what each later attempt is made from.
pub(super) struct Copy<B> {
    method: Method,
    uri: Uri,
    version: Version,
    headers: HeaderMap,
    extensions: Extras,
    body: B,
    /// The policy the call is retried by.
    policy: Arc<RetryPolicy>,
}

/// A request's extensions, as kept for later attempts.
///
/// The one optimisation of this layer: copying the extension map whole (a map allocated, each
/// value boxed again) for every retryable call cost 1.8 % of a call's instructions at
/// concurrency 1 and 4.1 % at 64 (callgrind, `benches/client.rs`, 38,690 → 39,370 and
/// 42,400 → 44,160), and 0.8 % of a proxied read's, so the usual request, whose extensions are
/// its `EndpointMeta` and, served, its `ServedRequest`, keeps those values alone.
enum Extras {
    /// The request's extensions are its `EndpointMeta` and perhaps the `ServedRequest` it is made
    /// for, as on every request a courier client sends: those values are kept, and the map
    /// rebuilt only for an attempt actually sent again.
    Meta(EndpointMeta, Option<ServedRequest>),
    /// Any other set of extensions, copied whole.
    All(Extensions),
}

impl<B: BufferedBody> Copy<B> {
    /// The copy of `request`, retried by `policy`, when the policy allows more than one attempt
    /// and the body can be copied.
    pub(super) fn of_retryable(request: &Request<B>, policy: Arc<RetryPolicy>) -> Option<Self> {
        if policy.max_attempts <= 1 {
            return None;
        }
        let meta = request.extensions().get::<EndpointMeta>();
        let Some(body) = request.body().try_clone_body() else {
            tracing::trace!(
                endpoint = meta.map(EndpointMeta::path),
                "not retryable: the request body is streamed"
            );
            return None;
        };
        let extensions = request.extensions();
        let served = extensions.get::<ServedRequest>();
        let extensions = match meta {
            Some(meta) if extensions.len() == 1 + usize::from(served.is_some()) => {
                Extras::Meta(meta.clone(), served.cloned())
            }
            _ => Extras::All(extensions.clone()),
        };
        Some(Self {
            method: request.method().clone(),
            uri: request.uri().clone(),
            version: request.version(),
            headers: request.headers().clone(),
            extensions,
            body,
            policy,
        })
    }

    /// The policy the call is retried by.
    pub(super) fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// The request's meta, which names the endpoint in the logs.
    pub(super) fn meta(&self) -> Option<&EndpointMeta> {
        match &self.extensions {
            Extras::Meta(meta, _) => Some(meta),
            Extras::All(extensions) => extensions.get::<EndpointMeta>(),
        }
    }

    /// A request equal to the one copied, its body unread; `None` if the body cannot be copied
    /// again.
    pub(super) fn to_request(&self) -> Option<Request<B>> {
        let mut request = Request::new(self.body.try_clone_body()?);
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.version_mut() = self.version;
        *request.headers_mut() = self.headers.clone();
        match &self.extensions {
            Extras::Meta(meta, served) => {
                request.extensions_mut().insert(meta.clone());
                if let Some(served) = served {
                    request.extensions_mut().insert(served.clone());
                }
            }
            Extras::All(extensions) => *request.extensions_mut() = extensions.clone(),
        }
        Some(request)
    }
}
