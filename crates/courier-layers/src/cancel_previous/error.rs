//! The error of [`CancelPrevious`](super::CancelPrevious).

use http::StatusCode;
use std::fmt;
use std::sync::Arc;

/// The error of a read cancelled by a newer call of the same endpoint. Its status is 499, as is
/// the browser package's `HTTPError` for a cancelled read.
///
/// It reaches the caller boxed in a [`BoxError`](courier_core::BoxError); find it with
/// `downcast_ref::<Cancelled>()`, or by walking an error's `source()` chain when another layer
/// wraps it.
#[derive(Clone, Debug)]
pub struct Cancelled {
    endpoint: Arc<str>,
}

impl Cancelled {
    pub(super) fn new(endpoint: Arc<str>) -> Self {
        Self { endpoint }
    }

    /// The dotted path of the endpoint whose newer call cancelled this one.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// 499, the status of a call the client gave up on.
    pub fn status(&self) -> StatusCode {
        // 499 is within 100..=999, the only range `from_u16` checks.
        StatusCode::from_u16(499).expect("499 is a valid status code")
    }
}

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cancelled by a newer call of `{}`", self.endpoint)
    }
}

impl std::error::Error for Cancelled {}
