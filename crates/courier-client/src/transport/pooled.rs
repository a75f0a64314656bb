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
    client: Arc<Client<Connector, Sent>>,
}

impl Pooled {
    pub(crate) fn new(client: Client<Connector, Sent>) -> Self {
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
            response: Some(self.client.request(request.map(Sent::from))),
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

/// A request body as hyper-util sends it: buffered bytes, or any other body boxed. Smaller than
/// [`Body`] (which also holds hyper's `Incoming` unboxed, for responses), so the request hyper
/// moves through its connection task is too.
pub(crate) enum Sent {
    /// Bytes not yet sent; empty once sent.
    Full(bytes::Bytes),
    Boxed(http_body_util::combinators::BoxBody<bytes::Bytes, BoxError>),
}

impl From<Body> for Sent {
    fn from(body: Body) -> Self {
        match body.into_bytes() {
            Ok(bytes) => Self::Full(bytes),
            Err(body) => Self::Boxed(http_body_util::BodyExt::boxed(body)),
        }
    }
}

impl http_body::Body for Sent {
    type Data = bytes::Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, BoxError>>> {
        match self.get_mut() {
            Self::Full(bytes) if bytes.is_empty() => Poll::Ready(None),
            Self::Full(bytes) => {
                Poll::Ready(Some(Ok(http_body::Frame::data(std::mem::take(bytes)))))
            }
            Self::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Full(bytes) => bytes.is_empty(),
            Self::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self {
            Self::Full(bytes) => http_body::SizeHint::with_exact(bytes.len() as u64),
            Self::Boxed(body) => body.size_hint(),
        }
    }
}

const _: () = assert!(std::mem::size_of::<Sent>() == 32);
