//! The future [`CancelPrevious`](super::CancelPrevious) returns.

use super::error::Cancelled;
use super::Ticket;
use courier_core::BoxError;
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::sync::oneshot;

pin_project! {
    /// The response future of [`CancelPrevious`](super::CancelPrevious): the inner future,
    /// unless a newer call of the same endpoint cancels it first.
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateReplace]
    enum State<F> {
        // Not a watched call: the inner future alone.
        Unwatched {
            #[pin]
            future: F,
        },
        Watched {
            #[pin]
            future: F,
            cancelled: oneshot::Receiver<()>,
            // Taken when the call finishes, so its slot goes as soon as it is done rather than
            // when the future is dropped.
            ticket: Option<Ticket>,
        },
        // Cancelled: the inner future is gone; polling again answers the same error.
        Cancelled {
            endpoint: Arc<str>,
        },
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn unwatched(future: F) -> Self {
        Self {
            state: State::Unwatched { future },
        }
    }

    pub(super) fn watched(future: F, cancelled: oneshot::Receiver<()>, ticket: Ticket) -> Self {
        Self {
            state: State::Watched {
                future,
                cancelled,
                ticket: Some(ticket),
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

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let endpoint = match self.as_mut().project().state.project() {
            StateProj::Unwatched { future } => {
                return future.poll(cx).map_err(Into::into);
            }
            StateProj::Watched {
                future,
                cancelled,
                ticket,
            } => {
                // The cancellation first: a call cancelled while its answer is also ready is
                // still cancelled, as the newer call already superseded it.
                match (Pin::new(&mut *cancelled).poll(cx), ticket.as_ref()) {
                    // A newer call fires the channel. The sender is otherwise only dropped with
                    // the slot, which a newer call has taken too, so either outcome means
                    // cancelled.
                    (Poll::Ready(_), Some(ticket)) => Arc::clone(&ticket.key),
                    _ => {
                        let output = ready!(future.poll(cx));
                        drop(ticket.take());
                        return Poll::Ready(output.map_err(Into::into));
                    }
                }
            }
            StateProj::Cancelled { endpoint } => {
                return Poll::Ready(Err(Cancelled::new(Arc::clone(endpoint)).into()));
            }
        };
        // Drops the inner future, abandoning the upstream request, and the ticket, which finds
        // the slot taken by the newer call and leaves it alone.
        self.as_mut()
            .project()
            .state
            .project_replace(State::Cancelled {
                endpoint: Arc::clone(&endpoint),
            });
        Poll::Ready(Err(Cancelled::new(endpoint).into()))
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Unwatched { .. } => "unwatched",
            State::Watched { .. } => "watched",
            State::Cancelled { .. } => "cancelled",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
