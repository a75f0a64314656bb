//! The futures of this module: [`ResponseFuture`], what [`Timeout`](super::Timeout) returns,
//! and [`Within`], a future raced against a bound, which [`within`](super::within) makes.

use super::error::Elapsed;
use courier_core::{Attempts, BoxError};
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::time::Sleep;

pin_project! {
    /// A future raced against a bound: its own output when it finishes first, else the
    /// [`Elapsed`] it was given, with the attempts counted so far. Without a bound, the future
    /// as it is, and no timer.
    #[derive(Debug)]
    pub struct Within<F> {
        #[pin]
        inner: F,
        // `None` when there is no bound: no timer is registered at all.
        #[pin]
        sleep: Option<Sleep>,
        // What to fail with when the bound runs out.
        elapsed: Elapsed,
        // The call's attempts, counted under the bound, told in the error.
        attempts: Option<Attempts>,
    }
}

impl<F> Within<F> {
    pub(super) fn new(inner: F, bound: Option<(Elapsed, Option<Attempts>)>) -> Self {
        match bound {
            Some((elapsed, attempts)) => Self {
                inner,
                sleep: Some(tokio::time::sleep(elapsed.after())),
                elapsed,
                attempts,
            },
            None => Self {
                inner,
                sleep: None,
                elapsed: Elapsed::new(std::time::Duration::ZERO),
                attempts: None,
            },
        }
    }

    /// Whether a timer bounds the future.
    #[cfg(test)]
    pub(super) fn is_bounded(&self) -> bool {
        self.sleep.is_some()
    }
}

impl<F: Future> Future for Within<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // The inner future goes first, so an answer that is ready when the bound runs out
        // still wins.
        if let Poll::Ready(output) = this.inner.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        match this.sleep.as_pin_mut() {
            Some(sleep) => {
                ready!(sleep.poll(cx));
                Poll::Ready(Err(match this.attempts {
                    Some(attempts) => this.elapsed.with_attempts(attempts.get()),
                    None => *this.elapsed,
                }))
            }
            None => Poll::Pending,
        }
    }
}

pin_project! {
    /// The response future of [`Timeout`](super::Timeout): the inner future, raced against a
    /// timer when the request has a bound.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        within: Within<F>,
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn new(inner: F, bound: Option<(Elapsed, Option<Attempts>)>) -> Self {
        Self {
            within: Within::new(inner, bound),
        }
    }

    /// Whether a timer bounds this call or attempt.
    #[cfg(test)]
    pub(super) fn is_bounded(&self) -> bool {
        self.within.is_bounded()
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(match ready!(self.project().within.poll(cx)) {
            Ok(result) => result.map_err(Into::into),
            Err(elapsed) => Err(Box::new(elapsed)),
        })
    }
}
