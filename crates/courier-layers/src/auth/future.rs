//! The future [`Auth`](super::Auth) returns.

use super::error::TokenError;
use super::{header_value, Config, GetToken, IntoToken};
use courier_core::BoxError;
use http::Request;
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower::Service;

pin_project! {
    /// The response future of [`Auth`](super::Auth): the supplier's future, then the inner
    /// service's.
    pub struct ResponseFuture<S, B, G>
    where
        S: Service<Request<B>>,
        G: GetToken,
    {
        #[pin]
        state: State<S, B, G::Future, S::Future>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateReplace]
    enum State<S, B, T, F> {
        Token {
            #[pin]
            token: T,
            inner: S,
            request: Request<B>,
            config: Arc<Config>,
        },
        Call {
            #[pin]
            future: F,
        },
        // Between the supplier's answer and the inner call, and for good once the supplier's
        // failure has been handed out.
        Done,
    }
}

impl<S, B, G> ResponseFuture<S, B, G>
where
    S: Service<Request<B>>,
    G: GetToken,
{
    /// Calls `inner` with `request` straight away.
    pub(super) fn call(future: S::Future) -> Self {
        Self {
            state: State::Call { future },
        }
    }

    /// Calls `inner` with `request` once `token` answers.
    pub(super) fn after_token(
        token: G::Future,
        inner: S,
        request: Request<B>,
        config: Arc<Config>,
    ) -> Self {
        Self {
            state: State::Token {
                token,
                inner,
                request,
                config,
            },
        }
    }
}

impl<S, B, G> Future for ResponseFuture<S, B, G>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    G: GetToken,
{
    type Output = Result<S::Response, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let token = match self.as_mut().project().state.project() {
                StateProj::Token { token, .. } => ready!(token.poll(cx)),
                StateProj::Call { future } => return future.poll(cx).map_err(Into::into),
                StateProj::Done => panic!("auth::ResponseFuture polled after completion"),
            };
            let StateReplace::Token {
                mut inner,
                mut request,
                config,
                ..
            } = self.as_mut().project().state.project_replace(State::Done)
            else {
                unreachable!("the state was Token a moment ago");
            };
            let token = token.map_err(|e| TokenError::supplier(e.into()))?;
            if let Some(token) = token.into_token() {
                let value = header_value(config.scheme.as_deref(), token.as_ref())
                    .map_err(TokenError::invalid_value)?;
                request.headers_mut().insert(config.header.clone(), value);
            }
            let future = inner.call(request);
            self.as_mut()
                .project()
                .state
                .project_replace(State::Call { future });
        }
    }
}

impl<S, B, G> fmt::Debug for ResponseFuture<S, B, G>
where
    S: Service<Request<B>>,
    G: GetToken,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Token { .. } => "token",
            State::Call { .. } => "call",
            State::Done => "done",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
