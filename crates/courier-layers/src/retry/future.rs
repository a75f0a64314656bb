//! The future [`Retry`](super::Retry) returns.

use super::copy::Copy;
use super::retry_after::retry_after;
use super::Shared;
use crate::BufferedBody;
use courier_core::EndpointMeta;
use http::{Request, Response};
use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, SystemTime};
use tokio::time::Sleep;
use tower::retry::budget::Budget;
use tower::util::rng::{HasherRng, Rng};
use tower::Service;

pin_project! {
    /// The response future of [`Retry`](super::Retry): runs attempts until one succeeds, the
    /// policy gives up, or the budget runs out.
    pub struct ResponseFuture<S, ReqBody, ResBody>
    where
        S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    {
        #[pin]
        state: State<S::Future, ReqBody>,
        // `None` for a call that cannot be retried: its first outcome is its last.
        again: Option<Again<S, ReqBody>>,
        _body: PhantomData<fn() -> ResBody>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, B> {
        // An attempt in flight.
        Calling {
            #[pin]
            future: F,
        },
        // Waiting out the delay before the next attempt (boxed: most calls never wait),
        // with that attempt's request.
        Waiting {
            sleep: Pin<Box<Sleep>>,
            request: Option<Request<B>>,
        },
        // Waiting for the inner service to be ready for the next attempt.
        Readying {
            request: Option<Request<B>>,
        },
    }
}

/// What a call that may be retried needs for its next attempts.
pub(super) struct Again<S, B> {
    copy: Copy<B>,
    service: S,
    shared: Arc<Shared>,
    /// Attempts that have finished.
    attempts: u32,
}

impl<S, B: BufferedBody> Again<S, B> {
    pub(super) fn new(copy: Copy<B>, service: S, shared: Arc<Shared>) -> Self {
        Self {
            copy,
            service,
            shared,
            attempts: 0,
        }
    }

    /// The call's meta, which counts its attempts for a deadline above.
    pub(super) fn meta(&self) -> Option<&EndpointMeta> {
        self.copy.meta()
    }

    /// Counts the attempt that ended with `result` and, when another one follows, makes
    /// its request and says how long to wait before it; `None` when `result` is the call's
    /// outcome.
    fn retry<T, E: fmt::Display>(
        &mut self,
        result: &Result<Response<T>, E>,
    ) -> Option<(Duration, Request<B>)> {
        let delay = self.delay(result)?;
        let request = self.copy.to_request()?;
        if let Some(meta) = self.copy.meta() {
            meta.count_attempt();
        }
        Some((delay, request))
    }

    /// Counts the attempt that ended with `result`, and says how long to wait before the
    /// next one; `None` when there is none.
    fn delay<T, E: fmt::Display>(&mut self, result: &Result<Response<T>, E>) -> Option<Duration> {
        self.attempts += 1;
        let attempt = self.attempts;
        let policy = self.copy.policy();
        let endpoint = self.copy.meta().map(EndpointMeta::path);
        if attempt == 1 {
            // Every call that may be retried pays into the budget once, whatever its
            // outcome.
            self.shared.budget.deposit();
        }

        let status = match result {
            Ok(response) => response.status().as_u16(),
            Err(_) => 0,
        };
        if !policy.statuses.contains(&status) || attempt >= policy.max_attempts {
            return None;
        }
        if !self.shared.budget.withdraw() {
            tracing::debug!(
                endpoint,
                attempt,
                status,
                "not retrying: the retry budget is spent"
            );
            return None;
        }

        let hinted = match result {
            Ok(response) if policy.honor_retry_after => {
                retry_after(response.headers(), SystemTime::now())
            }
            _ => None,
        };
        let delay = match hinted {
            Some(hinted) => hinted.min(Duration::from_millis(policy.backoff.max_ms)),
            None => policy.backoff.delay(attempt, HasherRng::new().next_f64()),
        };
        let delay_ms = delay.as_millis();
        match result {
            Ok(_) => tracing::debug!(
                endpoint,
                attempt,
                max_attempts = policy.max_attempts,
                status,
                retry_after = hinted.is_some(),
                delay_ms,
                "retrying"
            ),
            Err(error) => tracing::debug!(
                endpoint,
                attempt,
                max_attempts = policy.max_attempts,
                %error,
                delay_ms,
                "retrying"
            ),
        }
        Some(delay)
    }
}

impl<S, ReqBody, ResBody> ResponseFuture<S, ReqBody, ResBody>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    pub(super) fn new(future: S::Future, again: Option<Again<S, ReqBody>>) -> Self {
        Self {
            state: State::Calling { future },
            again,
            _body: PhantomData,
        }
    }
}

impl<S, ReqBody, ResBody> Future for ResponseFuture<S, ReqBody, ResBody>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Error: fmt::Display,
    ReqBody: BufferedBody,
{
    type Output = Result<Response<ResBody>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            // Only a call that may be retried gets past its first outcome.
            match this.state.as_mut().project() {
                StateProj::Calling { future } => {
                    let result = ready!(future.poll(cx));
                    let next = this.again.as_mut().and_then(|a| a.retry(&result));
                    let Some((delay, request)) = next else {
                        return Poll::Ready(result);
                    };
                    // The response is dropped unread: its connection is not reused.
                    drop(result);
                    let sleep = Box::pin(tokio::time::sleep(delay));
                    let request = Some(request);
                    this.state.set(State::Waiting { sleep, request });
                }
                StateProj::Waiting { sleep, request } => {
                    ready!(sleep.as_mut().poll(cx));
                    let request = request.take();
                    this.state.set(State::Readying { request });
                }
                StateProj::Readying { request } => {
                    let Some(again) = this.again.as_mut() else {
                        unreachable!("a call that cannot be retried never waits to retry");
                    };
                    ready!(again.service.poll_ready(cx))?;
                    let Some(request) = request.take() else {
                        unreachable!("a retry is decided with its request made");
                    };
                    let future = again.service.call(request);
                    this.state.set(State::Calling { future });
                }
            }
        }
    }
}

impl<S, ReqBody, ResBody> fmt::Debug for ResponseFuture<S, ReqBody, ResBody>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Calling { .. } => "calling",
            State::Waiting { .. } => "waiting",
            State::Readying { .. } => "readying",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .field("attempts", &self.again.as_ref().map_or(0, |a| a.attempts))
            .finish_non_exhaustive()
    }
}
