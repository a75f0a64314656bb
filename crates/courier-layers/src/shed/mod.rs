//! [`ShedLayer`]: a bound on the calls in flight through a service. A call beyond it is refused
//! at once with [`Overloaded`] (503, with the `Retry-After` the layer names) rather than queued
//! behind the others: a slow upstream then costs the callers over the bound one quick refusal
//! each, not a pile of calls waiting without end.
//!
//! tower's [`ConcurrencyLimit`] under [`LoadShed`] is the model, and answers alike; the
//! difference is when the permit is taken. tower takes it in `poll_ready`, for whatever call
//! follows; this layer takes it in `call`, so that a layer above that readies the service and
//! then answers the call itself — coalescing, whose followers share their leader's call — takes
//! none. A permit is held until the call's response (its head) comes, or the call fails or is
//! dropped, as tower's is; one layer's services (its clones, every endpoint of a source) share
//! its bound.
//!
//! [`ConcurrencyLimit`]: https://docs.rs/tower/0.5/tower/limit/struct.ConcurrencyLimit.html
//! [`LoadShed`]: https://docs.rs/tower/0.5/tower/load_shed/struct.LoadShed.html
//!
//! ```
//! use courier::layers::shed::{Overloaded, ShedLayer};
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use std::time::Duration;
//! use tower::{service_fn, Layer, Service, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (release, wait) = tokio::sync::oneshot::channel::<()>();
//! let wait = std::sync::Mutex::new(Some(wait));
//! // An upstream that answers its first call only once released.
//! let upstream = service_fn(move |_: Request<()>| {
//!     let wait = wait.lock().unwrap().take();
//!     async move {
//!         if let Some(wait) = wait {
//!             let _ = wait.await;
//!         }
//!         Ok::<_, Infallible>(Response::new(()))
//!     }
//! });
//! let mut shed = ShedLayer::new(1)
//!     .retry_after(Duration::from_secs(2))
//!     .layer(upstream);
//!
//! let first = shed.ready().await.unwrap().call(Request::new(()));
//! let refused = shed.ready().await.unwrap().call(Request::new(())).await.unwrap_err();
//! let overloaded = refused.downcast_ref::<Overloaded>().unwrap();
//! assert_eq!(overloaded.status(), 503);
//! assert_eq!(overloaded.retry_after(), Duration::from_secs(2));
//!
//! release.send(()).unwrap();
//! first.await.unwrap();
//! // The first call's permit is back: the next call goes through.
//! shed.ready().await.unwrap().call(Request::new(())).await.unwrap();
//! # }
//! ```

mod error;
mod future;
#[cfg(test)]
mod tests;

pub use self::error::Overloaded;
pub use self::future::ResponseFuture;

use courier_core::BoxError;
use http::Request;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Semaphore;
use tower::{Layer, Service};

/// How long a refused caller is told to wait before calling again, unless the layer says.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Refuses the calls beyond `max_in_flight` at once. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct ShedLayer {
    bound: Arc<Bound>,
}

#[derive(Debug)]
struct Bound {
    permits: Arc<Semaphore>,
    max_in_flight: usize,
    retry_after: Duration,
}

impl ShedLayer {
    /// A bound of `max_in_flight` calls at once (at least one), shared by every service this
    /// layer makes; refused callers are told to retry after a second.
    pub fn new(max_in_flight: usize) -> Self {
        let max_in_flight = max_in_flight.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            bound: Arc::new(Bound {
                permits: Arc::new(Semaphore::new(max_in_flight)),
                max_in_flight,
                retry_after: RETRY_AFTER,
            }),
        }
    }

    /// The wait a refused caller is told of (`Retry-After`, in whole seconds, rounded up).
    #[must_use]
    pub fn retry_after(self, retry_after: Duration) -> Self {
        Self {
            bound: Arc::new(Bound {
                permits: Arc::clone(&self.bound.permits),
                max_in_flight: self.bound.max_in_flight,
                retry_after,
            }),
        }
    }

    /// The bound.
    pub fn max_in_flight(&self) -> usize {
        self.bound.max_in_flight
    }

    /// The calls in flight through this layer's services now.
    pub fn in_flight(&self) -> usize {
        self.bound.max_in_flight - self.bound.permits.available_permits()
    }
}

impl<S> Layer<S> for ShedLayer {
    type Service = Shed<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Shed {
            inner,
            bound: Arc::clone(&self.bound),
        }
    }
}

/// Refuses the calls beyond its layer's bound at once. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Shed<S> {
    inner: S,
    bound: Arc<Bound>,
}

impl<S> Shed<S> {
    define_inner_service_accessors!();
}

impl<S, B> Service<Request<B>> for Shed<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match Arc::clone(&self.bound.permits).try_acquire_owned() {
            Ok(permit) => ResponseFuture::called(self.inner.call(request), permit),
            Err(_) => {
                tracing::debug!(
                    max_in_flight = self.bound.max_in_flight,
                    path = request.uri().path(),
                    "refused a call over the bound on calls in flight"
                );
                ResponseFuture::refused(Overloaded::new(
                    self.bound.max_in_flight,
                    self.bound.retry_after,
                ))
            }
        }
    }
}
