//! [`MetricsLayer`]: each call's duration, by endpoint, method, status and error, recorded
//! through the [`metrics`] facade and named as OpenTelemetry's HTTP client conventions name
//! them, so that whatever exporter the app installs (Prometheus, OpenTelemetry, StatsD) shows
//! them.
//!
//! One histogram, `http.client.request.duration`, in seconds, from the call to its response's
//! head (or its error), with the attributes:
//!
//! | attribute | value |
//! |---|---|
//! | `http.request.method` | `GET`, `POST`, … (`_OTHER` for a method not in RFC 9110 or PATCH) |
//! | `server.address` | the upstream's host |
//! | `http.response.status_code` | the status, when there is a response |
//! | `error.type` | for a failed call: the status for one of 400 and more, `timeout` for a call past its deadline, `overloaded` for one a source's bound on calls in flight refused, else `_OTHER` |
//! | `courier.endpoint` | the endpoint's dotted path (its [`EndpointMeta`]), when the request has one |
//!
//! Its count is the calls made, and `error.type` splits the failed ones by kind. Beside it, the
//! layers that answer a read without a call of its own count those answers, whether or not this
//! layer is in the stack: [`COALESCED`] (`CoalesceLayer`) and [`CACHE_HITS`] (`CacheLayer`). Without a
//! recorder installed (`metrics::set_global_recorder`, or an exporter's `install`), recording
//! costs a load and a branch.
//!
//! A courier client puts the layer over each endpoint's stack with `ClientBuilder::metrics`, so
//! that a call is timed as its caller waits for it: every attempt and wait of its retries, and a
//! read that shares another's call in flight counted as a call of its own.
//!
//! ```
//! use courier::layers::metrics::MetricsLayer;
//! use courier::transport::Body;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! let service = ServiceBuilder::new()
//!     .layer(MetricsLayer::new())
//!     .service(service_fn(|_: http::Request<Body>| async {
//!         Ok::<_, courier::BoxError>(http::Response::new(Body::empty()))
//!     }));
//! // With a recorder installed, this records one `http.client.request.duration`.
//! let request = http::Request::get("http://127.0.0.1:9000/users/7").body(Body::empty())?;
//! assert_eq!(service.oneshot(request).await?.status(), 200);
//! # Ok(())
//! # }
//! ```

use courier_core::EndpointMeta;
use http::{Method, Request, Response};
use metrics::Label;
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

/// The histogram's name: OpenTelemetry's HTTP client request duration.
pub const CLIENT_REQUEST_DURATION: &str = "http.client.request.duration";

/// The counter of reads answered by sharing another's call in flight (`CoalesceLayer`).
pub const COALESCED: &str = "courier.client.coalesced";

/// The counter of reads answered from the cache (`CacheLayer`), labelled `state`: `fresh`, or
/// `stale` for an answer given while it is fetched again.
pub const CACHE_HITS: &str = "courier.client.cache.hits";

/// Counts one read answered by sharing a call in flight.
#[cfg(feature = "coalesce")]
pub(crate) fn coalesced() {
    metrics::counter!(COALESCED).increment(1);
}

/// Counts one read answered from the cache, `fresh` or `stale`.
#[cfg(feature = "cache")]
pub(crate) fn cache_hit(state: &'static str) {
    metrics::counter!(CACHE_HITS, "state" => state).increment(1);
}

/// Records each call's duration ([module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct MetricsLayer;

impl MetricsLayer {
    /// The layer.
    pub fn new() -> Self {
        Self
    }
}

impl<S> Layer<S> for MetricsLayer {
    type Service = Metrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Metrics { inner }
    }
}

/// The service of [`MetricsLayer`].
#[derive(Clone, Debug)]
pub struct Metrics<S> {
    inner: S,
}

impl<S, B, RB> Service<Request<B>> for Metrics<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Error: Into<courier_core::BoxError>,
{
    type Response = Response<RB>;
    type Error = courier_core::BoxError;
    type Future = Timed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let mut labels = Vec::with_capacity(5);
        labels.push(Label::new("http.request.method", method(request.method())));
        if let Some(host) = request.uri().host() {
            labels.push(Label::new("server.address", host.to_owned()));
        }
        if let Some(meta) = request.extensions().get::<EndpointMeta>() {
            labels.push(Label::new("courier.endpoint", meta.path().to_owned()));
        }
        Timed {
            inner: self.inner.call(request),
            started: Instant::now(),
            labels,
        }
    }
}

pin_project! {
    /// The future of [`Metrics`]: the inner call's, timed.
    pub struct Timed<F> {
        #[pin]
        inner: F,
        started: Instant,
        labels: Vec<Label>,
    }
}

impl<F, RB, E> Future for Timed<F>
where
    F: Future<Output = Result<Response<RB>, E>>,
    E: Into<courier_core::BoxError>,
{
    type Output = Result<Response<RB>, courier_core::BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let outcome = ready!(this.inner.poll(cx)).map_err(Into::into);
        let mut labels = std::mem::take(this.labels);
        match &outcome {
            Ok(response) => {
                let status = response.status();
                labels.push(Label::new(
                    "http.response.status_code",
                    status.as_u16().to_string(),
                ));
                if status.as_u16() >= 400 {
                    labels.push(Label::new("error.type", status.as_u16().to_string()));
                }
            }
            Err(error) => labels.push(Label::new("error.type", error_type(error))),
        }
        metrics::histogram!(CLIENT_REQUEST_DURATION, labels)
            .record(this.started.elapsed().as_secs_f64());
        Poll::Ready(outcome)
    }
}

/// A method as OpenTelemetry's `http.request.method` names it: RFC 9110's and PATCH, else
/// `_OTHER`, so that the label's values stay a fixed set whatever method a request carries. The
/// proxy labels the requests at its call route with it too (`http.server.request.duration`).
///
/// ```
/// use courier::layers::metrics::method;
///
/// assert_eq!(method(&http::Method::GET), "GET");
/// assert_eq!(method(&http::Method::from_bytes(b"PURGE").unwrap()), "_OTHER");
/// ```
pub fn method(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "_OTHER",
    }
}

/// A failed call's kind: `timeout`, `overloaded`, or `_OTHER`, by the error or its sources.
fn error_type(error: &courier_core::BoxError) -> &'static str {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&**error);
    while let Some(error) = source {
        #[cfg(feature = "timeout")]
        if error.is::<crate::timeout::error::Elapsed>() {
            return "timeout";
        }
        #[cfg(feature = "shed")]
        if error.is::<crate::shed::Overloaded>() {
            return "overloaded";
        }
        source = error.source();
    }
    "_OTHER"
}

#[cfg(test)]
mod tests;
