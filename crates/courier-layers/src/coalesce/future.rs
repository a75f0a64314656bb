//! The response future of [`Coalesce`](super::Coalesce).

use super::answer::deliver;
use super::body::CoalesceBody;
use super::error::Shared;
use super::flight::Waiter;
use super::lead::{Collector, Leader};
use bytes::Bytes;
use courier_core::BoxError;
use http::Response;
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// The response future of [`Coalesce`](super::Coalesce): the inner service's own future
    /// for a request that is not shared; for a shared read, the call it leads and drives
    /// itself, or its place among the waiters of a call another read leads.
    ///
    /// Dropping it leaves the call. A leader that leaves while others wait hands the call to a
    /// task that finishes it for them; the call is cancelled when its last party leaves.
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
        Leading {
            leader: Leader<F>,
        },
        Collecting {
            collector: Collector,
        },
        Waiting {
            waiter: Waiter,
        },
        Done,
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn passthrough(future: F) -> Self {
        Self {
            state: State::Passthrough { future },
        }
    }

    pub(super) fn leading(leader: Leader<F>) -> Self {
        Self {
            state: State::Leading { leader },
        }
    }

    pub(super) fn waiting(waiter: Waiter) -> Self {
        Self {
            state: State::Waiting { waiter },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response<CoalesceBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Passthrough { future } => {
                    let response = ready!(future.poll(cx)).map_err(Into::into)?;
                    return Poll::Ready(Ok(response.map(CoalesceBody::inner)));
                }
                StateProj::Leading { leader } => {
                    let (output, senders) = ready!(leader.poll_head(cx));
                    if senders.is_empty() {
                        // Nobody joined: the response is the leader's alone, its body streamed
                        // through as it comes.
                        state.set(State::Done);
                        let response = output.map_err(Into::into)?;
                        return Poll::Ready(Ok(response.map(CoalesceBody::inner)));
                    }
                    match output {
                        Ok(response) => {
                            let collector = Collector::new(response, senders);
                            state.set(State::Collecting { collector });
                        }
                        Err(error) => {
                            // Shared with the waiters, the failure is theirs too.
                            state.set(State::Done);
                            let shared = Shared::new(error.into());
                            deliver(senders, &Err(shared.clone()));
                            return Poll::Ready(Err(shared.into()));
                        }
                    }
                }
                StateProj::Collecting { collector } => {
                    let outcome = ready!(collector.poll_answer(cx));
                    state.set(State::Done);
                    return Poll::Ready(match outcome {
                        Ok(buffered) => Ok(buffered.response()),
                        Err(shared) => Err(shared.into()),
                    });
                }
                StateProj::Waiting { waiter } => return waiter.poll_response(cx),
                StateProj::Done => panic!("coalesce response future polled after completion"),
            }
        }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Passthrough { .. } => "passthrough",
            State::Leading { .. } => "leading",
            State::Collecting { .. } => "collecting",
            State::Waiting { .. } => "waiting",
            State::Done => "done",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish_non_exhaustive()
    }
}
