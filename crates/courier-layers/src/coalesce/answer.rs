//! The answer of a call that others joined: its response read to its end once, and a copy of
//! it for each caller.

use super::body::CoalesceBody;
use super::error::Shared;
use bytes::Bytes;
use courier_core::BoxError;
use http::{Extensions, HeaderMap, Response, StatusCode, Version};
use http_body_util::BodyExt;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What a shared call ends with, as each caller receives it.
pub(super) type Outcome = Result<Arc<Buffered>, Shared>;

/// Where one waiter's outcome goes.
pub(super) type Sender = oneshot::Sender<Outcome>;

/// A response read to its end.
pub(super) struct Buffered {
    status: StatusCode,
    version: Version,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
    trailers: Option<HeaderMap>,
}

impl Buffered {
    /// A copy for one caller. The body's bytes are shared, not copied; every extension value is
    /// `Clone` (http 1 requires it), so each caller gets all of them.
    pub(super) fn response<B>(&self) -> Response<CoalesceBody<B>> {
        let body = CoalesceBody::shared(self.body.clone(), self.trailers.clone());
        let mut response = Response::new(body);
        *response.status_mut() = self.status;
        *response.version_mut() = self.version;
        *response.headers_mut() = self.headers.clone();
        *response.extensions_mut() = self.extensions.clone();
        response
    }
}

/// Reads `response`'s body to its end: the one copy every caller shares.
pub(super) async fn buffer<B>(response: Response<B>) -> Outcome
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let (parts, body) = response.into_parts();
    let collected = match body.collect().await {
        Ok(collected) => collected,
        Err(error) => return Err(Shared::new(error.into())),
    };
    let trailers = collected.trailers().cloned();
    Ok(Arc::new(Buffered {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        extensions: parts.extensions,
        body: collected.to_bytes(),
        trailers,
    }))
}

/// Gives each waiter its copy of `outcome`.
pub(super) fn deliver(senders: Vec<Sender>, outcome: &Outcome) {
    for sender in senders {
        // A waiter that left in the meantime has dropped its receiver; nothing to do.
        let _ = sender.send(outcome.clone());
    }
}
