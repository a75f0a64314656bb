//! The future [`Timeout`](super::Timeout) returns.

use super::error::Elapsed;
use courier_core::BoxError;
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

pin_project! {
    /// The response future of [`Timeout`](super::Timeout): the inner future, raced against a
    /// timer when the request has a bound.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // `None` when the request has no bound: no timer is registered at all.
        #[pin]
        sleep: Option<Sleep>,
        after: Duration,
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn new(inner: F, bound: Option<Duration>) -> Self {
        Self {
            inner,
            sleep: bound.map(tokio::time::sleep),
            after: bound.unwrap_or_default(),
        }
    }

    /// Whether a timer bounds this attempt.
    #[cfg(test)]
    pub(super) fn is_bounded(&self) -> bool {
        self.sleep.is_some()
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // The inner future goes first, so an answer that is ready when the bound runs out
        // still wins.
        if let Poll::Ready(result) = this.inner.poll(cx) {
            return Poll::Ready(result.map_err(Into::into));
        }
        match this.sleep.as_pin_mut() {
            Some(sleep) => {
                ready!(sleep.poll(cx));
                Poll::Ready(Err(Box::new(Elapsed::new(*this.after))))
            }
            None => Poll::Pending,
        }
    }
}
