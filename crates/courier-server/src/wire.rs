//! The wire's query parameters as an extractor: what the proxy reads off a browser's request
//! before anything else, with courier-core's [`wire`](courier_core::wire) reader. The query
//! comes from a hostile party: it is read strictly, and refused with a 400 that says why.

use crate::refusal::Refusal;
use axum::extract::FromRequestParts;
use courier_core::wire::{WireError, WireQuery};

/// The request's [`WireQuery`], refused `400 BAD_REQUEST` when a parameter repeats.
pub(crate) struct Wire(pub(crate) WireQuery<'static>);

impl<S: Send + Sync> FromRequestParts<S> for Wire {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(Self::read(parts)?.into_owned()))
    }
}

impl Wire {
    /// The query of `parts`, read, borrowing it.
    pub(crate) fn read(parts: &http::request::Parts) -> Result<WireQuery<'_>, Refusal> {
        Ok(WireQuery::parse(parts.uri.query().unwrap_or_default())?)
    }
}

impl From<WireError> for Refusal {
    fn from(error: WireError) -> Self {
        Refusal::BadRequest(error.message().to_owned())
    }
}
