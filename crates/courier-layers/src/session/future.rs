//! The future [`Session`](super::Session) returns.

use super::config::Config;
use super::cookies::set_cookie_name;
use super::error::SessionRefused;
use courier_core::context::ServedRequest;
use courier_core::BoxError;
use http::header::SET_COOKIE;
use http::Response;
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// Where the upstream's session cookies go back to.
pub(super) struct PassBack {
    pub(super) served: ServedRequest,
    pub(super) config: Arc<Config>,
}

impl PassBack {
    fn pass<B>(&self, response: &mut Response<B>) {
        let passed: Vec<_> = response
            .headers()
            .get_all(SET_COOKIE)
            .iter()
            .filter(|value| {
                set_cookie_name(value.as_bytes()).is_some_and(|name| self.config.passes_back(name))
            })
            .cloned()
            .collect();
        for value in passed {
            self.served.add_response_header(response, SET_COOKIE, value);
        }
    }
}

pin_project! {
    /// The response future of [`Session`](super::Session): the inner call, or the refusal
    /// of a write that failed a check.
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Refused { error: SessionRefused },
        Called { #[pin] future: F, pass_back: Option<PassBack> },
    }
}

impl<F> ResponseFuture<F> {
    pub(super) fn called(future: F, pass_back: Option<PassBack>) -> Self {
        Self {
            state: State::Called { future, pass_back },
        }
    }

    pub(super) fn refused(error: SessionRefused) -> Self {
        Self {
            state: State::Refused { error },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Response<B>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Refused { error } => Poll::Ready(Err(Box::new(error.clone()))),
            StateProj::Called { future, pass_back } => {
                let mut response = ready!(future.poll(cx)).map_err(Into::into)?;
                if let Some(pass_back) = pass_back.take() {
                    pass_back.pass(&mut response);
                }
                Poll::Ready(Ok(response))
            }
        }
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Refused { error } => error.reason().as_str(),
            State::Called { .. } => "called",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
