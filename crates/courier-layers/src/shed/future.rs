//! The future [`Shed`](super::Shed) returns.

use super::error::Overloaded;
use courier_core::BoxError;
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::OwnedSemaphorePermit;

pin_project! {
    /// The response future of [`Shed`](super::Shed): the inner call, holding its permit until it
    /// is answered, or the refusal of a call over the bound.
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Called {
            #[pin]
            future: F,
            // Given back as soon as the call is answered, not when the future is dropped.
            permit: Option<OwnedSemaphorePermit>,
        },
        Refused {
            overloaded: Option<Overloaded>,
        },
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn called(future: F, permit: OwnedSemaphorePermit) -> Self {
        Self {
            state: State::Called {
                future,
                permit: Some(permit),
            },
        }
    }

    pub(super) fn refused(overloaded: Overloaded) -> Self {
        Self {
            state: State::Refused {
                overloaded: Some(overloaded),
            },
        }
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Called { future, permit } => {
                let answered = ready!(future.poll(cx));
                permit.take();
                Poll::Ready(answered.map_err(Into::into))
            }
            StateProj::Refused { overloaded } => Poll::Ready(Err(match overloaded.take() {
                Some(overloaded) => Box::new(overloaded),
                None => "the shed call was polled again after its refusal".into(),
            })),
        }
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
