//! The response future of [`Coalesce`](super::Coalesce).

use super::body::CoalesceBody;
use super::flight::Waiter;
use courier_core::BoxError;
use http::Response;
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// The response future of [`Coalesce`](super::Coalesce): the inner service's own future for
    /// a request that is not shared, or a place among the waiters of a shared call.
    ///
    /// Dropping it leaves the shared call; the call is cancelled when its last waiter leaves.
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Passthrough {
            #[pin]
            future: F,
        },
        Shared {
            waiter: Waiter,
        },
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn passthrough(future: F) -> Self {
        Self {
            state: State::Passthrough { future },
        }
    }

    pub(super) fn shared(waiter: Waiter) -> Self {
        Self {
            state: State::Shared { waiter },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Response<CoalesceBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Passthrough { future } => {
                let response = ready!(future.poll(cx)).map_err(Into::into)?;
                Poll::Ready(Ok(response.map(CoalesceBody::inner)))
            }
            StateProj::Shared { waiter } => waiter.poll_response(cx),
        }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = matches!(self.state, State::Shared { .. });
        f.debug_struct("ResponseFuture")
            .field("shared", &shared)
            .finish_non_exhaustive()
    }
}
