//! The future [`Cache`](super::Cache) returns.

use super::body::{CacheBody, Pending};
use courier_core::BoxError;
use http::Response;
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// The response future of [`Cache`](super::Cache): a kept answer at once, or the upstream's,
    /// kept as its body streams past when it may be.
    pub struct ResponseFuture<F, B> {
        #[pin]
        state: State<F, B>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, B> {
        Calling {
            #[pin]
            future: F,
            // `Some` when the answer may be kept.
            pending: Option<Pending>,
        },
        Kept {
            response: Option<Response<CacheBody<B>>>,
        },
    }
}

impl<F, B> ResponseFuture<F, B> {
    pub(super) fn calling(future: F, pending: Option<Pending>) -> Self {
        Self {
            state: State::Calling { future, pending },
        }
    }

    pub(super) fn kept(response: Response<CacheBody<B>>) -> Self {
        Self {
            state: State::Kept {
                response: Some(response),
            },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Response<CacheBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Kept { response } => Poll::Ready(Ok(response
                .take()
                .expect("a cache future polled after it answered"))),
            StateProj::Calling { future, pending } => {
                let response = ready!(future.poll(cx)).map_err(Into::into)?;
                let (parts, body) = response.into_parts();
                let tee = pending.take().and_then(|pending| pending.tee(&parts));
                let body = match tee {
                    Some(tee) => CacheBody::teeing(body, tee),
                    None => CacheBody::inner(body),
                };
                Poll::Ready(Ok(Response::from_parts(parts, body)))
            }
        }
    }
}
