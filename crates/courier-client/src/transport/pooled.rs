//! [`Pooled`]: the default transport as a concrete service, so the layers above it poll its
//! future in place rather than through a box of their own.

use super::connect::Connector;
use super::error::Missing;
use courier_core::{Body, BoxError, HttpService};
use http::{Request, Response};
use hyper_util::client::legacy::{Client, ResponseFuture};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A transport as the client's layers call it: the default one ([`Pooled`]) concretely, or any
/// other ([`Fetch`](courier_core::Fetch)) type-erased.
pub(crate) type TransportService = tower::util::Either<Pooled, HttpService>;

/// The same transport behind courier's type-erased [`HttpService`], as the public API hands it
/// out.
pub(crate) fn erase(transport: TransportService) -> HttpService {
    match transport {
        tower::util::Either::Left(pooled) => HttpService::new(pooled),
        tower::util::Either::Right(service) => service,
    }
}

/// hyper-util's pooled client over courier's [`Connector`], as a `tower::Service`: hyper's
/// `Incoming` body wrapped (still streaming) in [`Body`], hyper-util's error boxed whole so its
/// chain of causes stays intact. A clone is a reference count: the client sits behind an `Arc`.
#[derive(Clone)]
pub(crate) struct Pooled {
    client: Arc<Client<Connector, Body>>,
}

impl Pooled {
    pub(crate) fn new(client: Client<Connector, Body>) -> Self {
        Self {
            client: Arc::new(client),
        }
    }
}

impl fmt::Debug for Pooled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").finish_non_exhaustive()
    }
}

impl tower::Service<Request<Body>> for Pooled {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = PooledFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // hyper-util's client is always ready: its pool waits inside the response future.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> PooledFuture {
        // hyper-util spawns onto the current tokio runtime when the future is polled, and would
        // panic without one: fail the call instead.
        if tokio::runtime::Handle::try_current().is_err() {
            return PooledFuture { response: None };
        }
        PooledFuture {
            response: Some(self.client.request(request)),
        }
    }
}

/// The response future of [`Pooled`].
pub(crate) struct PooledFuture {
    /// `None` when the call was made outside a tokio runtime.
    response: Option<ResponseFuture>,
}

impl Future for PooledFuture {
    type Output = Result<Response<Body>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(response) = &mut self.response else {
            return Poll::Ready(Err(Box::new(Missing(
                "the transport needs a tokio runtime",
            ))));
        };
        Pin::new(response).poll(cx).map(|result| match result {
            Ok(response) => Ok(response.map(Body::from)),
            Err(error) => Err(Box::new(error) as BoxError),
        })
    }
}
