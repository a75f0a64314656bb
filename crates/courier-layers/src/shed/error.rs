//! The error of [`Shed`](super::Shed).

use http::StatusCode;
use std::fmt;
use std::time::Duration;

/// The error of a call refused because its service had as many calls in flight as its
/// [`ShedLayer`](super::ShedLayer) allows: 503, to be tried again after
/// [`retry_after`](Self::retry_after).
///
/// It reaches the caller boxed in a [`BoxError`](courier_core::BoxError); find it with
/// `downcast_ref::<Overloaded>()`, or by walking an error's `source()` chain when another layer
/// wraps it.
#[derive(Clone, Debug)]
pub struct Overloaded {
    max_in_flight: usize,
    retry_after: Duration,
}

impl Overloaded {
    pub(super) fn new(max_in_flight: usize, retry_after: Duration) -> Self {
        Self {
            max_in_flight,
            retry_after,
        }
    }

    /// The bound on calls in flight that was reached.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// How long the caller is asked to wait before calling again.
    pub fn retry_after(&self) -> Duration {
        self.retry_after
    }

    /// [`retry_after`](Self::retry_after) as a `Retry-After` header's value: whole seconds,
    /// rounded up, at least one.
    pub fn retry_after_secs(&self) -> u64 {
        courier_core::wire::retry_after_secs(self.retry_after)
    }

    /// 503 Service Unavailable.
    pub fn status(&self) -> StatusCode {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

impl fmt::Display for Overloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused at once: {} calls are in flight, the most allowed; try again in {} s",
            self.max_in_flight,
            self.retry_after_secs()
        )
    }
}

impl std::error::Error for Overloaded {}
