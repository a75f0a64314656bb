//! The error of [`Timeout`](super::Timeout).

use std::fmt;
use std::time::Duration;

/// A request's bound ran out before the inner service answered.
///
/// [`Timeout`](super::Timeout) returns it boxed as a [`BoxError`](courier_core::BoxError);
/// find it with `error.downcast_ref::<Elapsed>()`, or by walking an error's `source()`
/// chain when another layer wraps it.
///
/// ```
/// use courier::layers::timeout::error::Elapsed;
/// use std::time::Duration;
///
/// let error = Elapsed::new(Duration::from_millis(200));
/// assert_eq!(error.to_string(), "the call did not finish within 200 ms");
/// assert_eq!(Elapsed::new(Duration::from_secs(2)).to_string(), "the call did not finish within 2 s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed {
    after: Duration,
}

impl Elapsed {
    /// The error for a bound of `after`.
    pub const fn new(after: Duration) -> Self {
        Self { after }
    }

    /// The bound that ran out.
    pub const fn after(&self) -> Duration {
        self.after
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call did not finish within ")?;
        let after = self.after;
        if after.subsec_nanos() == 0 && !after.is_zero() {
            write!(f, "{} s", after.as_secs())
        } else if after.subsec_nanos() % 1_000_000 == 0 {
            write!(f, "{} ms", after.as_millis())
        } else {
            write!(f, "{} µs", after.as_micros())
        }
    }
}

impl std::error::Error for Elapsed {}
