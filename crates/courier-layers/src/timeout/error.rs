//! The error of [`Timeout`](super::Timeout).

use std::fmt;
use std::time::Duration;

/// A bound ran out before the inner service answered: the call's deadline, one attempt's bound,
/// or the call's deadline while its response body was still arriving.
///
/// [`Timeout`](super::Timeout) returns it boxed as a [`BoxError`](courier_core::BoxError);
/// find it with `error.downcast_ref::<Elapsed>()`, or by walking an error's `source()`
/// chain when another layer wraps it. It says what happened: how long the bound was and, for a
/// call whose attempts were counted, how many were made.
///
/// ```
/// use courier::layers::timeout::error::Elapsed;
/// use std::time::Duration;
///
/// let error = Elapsed::new(Duration::from_millis(200));
/// assert_eq!(error.to_string(), "the call did not finish within 200 ms");
/// let error = Elapsed::new(Duration::from_secs(1)).with_attempts(3);
/// assert_eq!(error.to_string(), "the call did not finish within 1 s (3 attempts)");
/// let error = Elapsed::attempt(Duration::from_millis(300));
/// assert_eq!(error.to_string(), "an attempt did not finish within 300 ms (its attempt_timeout)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed {
    after: Duration,
    attempts: Option<u32>,
    bound: Bound,
}

/// Which bound ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// The call's deadline, before its response head.
    Call,
    /// One attempt's.
    Attempt,
    /// The call's deadline, while its response body was read.
    Body,
}

impl Elapsed {
    /// The call's deadline of `after` ran out.
    pub const fn new(after: Duration) -> Self {
        Self {
            after,
            attempts: None,
            bound: Bound::Call,
        }
    }

    /// One attempt's bound of `after` ran out (a per-attempt timeout, `attempt_timeout`).
    pub const fn attempt(after: Duration) -> Self {
        Self {
            after,
            attempts: None,
            bound: Bound::Attempt,
        }
    }

    /// The call's deadline of `after` ran out while its response body was still arriving.
    pub const fn reading_body(after: Duration) -> Self {
        Self {
            after,
            attempts: None,
            bound: Bound::Body,
        }
    }

    /// Notes that the call had made `attempts` attempts when its deadline ran out.
    #[must_use]
    pub const fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = Some(attempts);
        self
    }

    /// The bound that ran out.
    pub const fn after(&self) -> Duration {
        self.after
    }

    /// The attempts the call had made, when they were counted.
    pub const fn attempts(&self) -> Option<u32> {
        self.attempts
    }

    /// Whether it was one attempt's bound, not the call's deadline.
    pub const fn is_attempt(&self) -> bool {
        matches!(self.bound, Bound::Attempt)
    }
}

/// `200 ms`, `2 s`, `1.5 s`, `250 µs`.
struct Shown(Duration);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 && !d.is_zero() {
            write!(f, "{} s", d.as_secs())
        } else if d.subsec_nanos() % 1_000_000 == 0 {
            write!(f, "{} ms", d.as_millis())
        } else {
            write!(f, "{} µs", d.as_micros())
        }
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let after = Shown(self.after);
        match self.bound {
            Bound::Attempt => {
                return write!(
                    f,
                    "an attempt did not finish within {after} (its attempt_timeout)"
                )
            }
            Bound::Call | Bound::Body => write!(f, "the call did not finish within {after}")?,
        }
        match (self.attempts, self.bound) {
            (Some(1), Bound::Body) => {
                f.write_str(" (1 attempt; its response body was still arriving)")
            }
            (Some(n), Bound::Body) => write!(
                f,
                " ({n} attempts; the last one's response body was still arriving)"
            ),
            (None, Bound::Body) => f.write_str(" (its response body was still arriving)"),
            (Some(1), _) => f.write_str(" (1 attempt)"),
            (Some(n), _) if n > 1 => write!(f, " ({n} attempts)"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Elapsed {}
