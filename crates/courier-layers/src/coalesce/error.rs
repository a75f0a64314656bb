//! The errors a coalesced call can end with.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// The failure of an upstream call that coalesced requests shared, given to each of them.
///
/// The inner service's error (or the error met while reading the response body) happens once
/// and reaches every caller of the shared call, the first one included. An error is not
/// `Clone`, so each caller gets a `Shared` holding the same original behind an [`Arc`]:
/// [`source()`](StdError::source) returns it, so code that classifies an error by walking its
/// chain of causes finds what it would have found without coalescing. [`get_ref`](Shared::get_ref)
/// reaches it directly.
///
/// ```
/// use courier::layers::coalesce::error::Shared;
/// use std::error::Error;
///
/// let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
/// let shared = Shared::new(Box::new(io));
/// let cause = shared.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(cause.kind(), std::io::ErrorKind::ConnectionReset);
/// assert_eq!(shared.clone().to_string(), "shared in-flight call failed: reset by peer");
/// ```
#[derive(Clone, Debug)]
pub struct Shared {
    inner: Arc<dyn StdError + Send + Sync + 'static>,
}

impl Shared {
    /// Wraps the error of a shared call.
    pub fn new(error: courier_core::BoxError) -> Self {
        Self {
            inner: Arc::from(error),
        }
    }

    /// The original error.
    pub fn get_ref(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.inner
    }
}

impl fmt::Display for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shared in-flight call failed: {}", self.inner)
    }
}

impl StdError for Shared {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.inner)
    }
}

/// The shared upstream call stopped before it answered the reads waiting on it: its inner
/// future panicked, the task its leader handed it to panicked or lost its runtime, or its
/// leader left outside a tokio runtime, with no task to hand it to.
///
/// Only waiters see this: a leader whose inner future panics gets the panic, as without
/// coalescing. Callers that gave up on the call never see it either: when the last of them goes,
/// the call is cancelled and nobody is left to tell.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Interrupted;

impl Interrupted {
    /// The error.
    pub fn new() -> Self {
        Self
    }
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("shared in-flight call stopped before it answered")
    }
}

impl StdError for Interrupted {}
