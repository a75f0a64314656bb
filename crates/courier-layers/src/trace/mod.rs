//! Logging calls: tower-http's [`TraceLayer`] with `tracing`, set up for courier's calls.
//!
//! courier has no logger of its own. [`trace_layer`] is tower-http's `TraceLayer` with:
//!
//! - [`CallSpan`]: each call runs in a span named `courier.call` (at `INFO`) with the fields
//!   `endpoint` (the [`EndpointMeta`]'s dotted path; not recorded for a request without one),
//!   `method` and `uri`.
//! - Every response logged at `INFO` when it arrives (`finished processing request`, with
//!   `status` and `latency` in milliseconds), and failures at `ERROR` (`response failed`, with
//!   the classification and latency).
//! - Failures as tower-http's [`ServerErrorsAsFailures`] classifies them: a 5xx status, an
//!   error from the inner service (a network error, a timeout, a cancelled call), or an error
//!   while the response body streams. A 4xx is an answer the caller acts on (a missing record, a
//!   refused write), not a failure of the call; its status shows in the response event. Logging
//!   each one at `ERROR` would bury the upstream failures that need someone's attention.
//!
//! Sensitive variables stay out of the logs: for an endpoint whose variables are sensitive
//! ([`EndpointMeta::is_sensitive`]), `uri` is logged without its query, where a read's variables
//! go. The path is kept; an endpoint that puts secrets in its path has them in every upstream
//! access log already. Headers are never logged, so neither is the `Authorization` value.
//!
//! Where this differs from `TraceLayer::new_for_http()`: the span name and its `endpoint` field,
//! the query dropped for sensitive endpoints, and responses logged at `INFO` rather than `DEBUG`
//! because a client's calls are the events worth seeing.
//!
//! ```
//! use courier::layers::trace::trace_layer;
//! use courier::tree::{EndpointMeta, Kind};
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! // Any `tracing` subscriber shows the calls; `tracing_subscriber::fmt::init()` for one.
//! let service = ServiceBuilder::new()
//!     .layer(trace_layer())
//!     .service(service_fn(|_: Request<String>| async {
//!         Ok::<_, Infallible>(Response::new(String::from("{}")))
//!     }));
//!
//! let request = Request::post("http://127.0.0.1:9000/login?user=ada")
//!     .extension(EndpointMeta::new("auth.login", Kind::Mutation).sensitive(true))
//!     .body(String::new())?;
//! // Logged as `courier.call{endpoint=auth.login method=POST uri=http://127.0.0.1:9000/login}`.
//! let response = service.oneshot(request).await?;
//! assert_eq!(response.status(), 200);
//! # Ok(())
//! # }
//! ```
//!
//! # Example: on a bare hyper-util client
//!
//! Without an [`EndpointMeta`], the span has no `endpoint` field and the query is logged. A span
//! of another shape is tower-http's business: `TraceLayer::make_span_with` takes any closure
//! over the request.
//!
//! ```
//! use courier::layers::trace::trace_layer;
//! use http::Request;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let app = axum::Router::new().route("/users", axum::routing::get(|| async { "[]" }));
//! # let addr = courier_test_support::serve(app).await;
//! let logs = courier_test_support::Captured::default();
//! let subscriber = tracing_subscriber::fmt().with_writer(logs.clone()).with_ansi(false).finish();
//! let _logging = tracing::subscriber::set_default(subscriber);
//!
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let service = ServiceBuilder::new().layer(trace_layer()).service(client);
//! let request = Request::get(format!("http://{addr}/users?page=2")).body(String::new())?;
//! assert_eq!(service.oneshot(request).await?.status(), 200);
//!
//! let logged = logs.text();
//! assert!(logged.contains(&format!("courier.call{{method=GET uri=http://{addr}/users?page=2}}")));
//! assert!(logged.contains("finished processing request"));
//! # Ok(())
//! # }
//! ```
//!
//! `TraceLayer` wraps the response body to see it end, so the service it makes answers a
//! `Response<ResponseBody<..>>`; a stack that needs `Response<courier_core::Body>` back, as a
//! source's middleware does, takes [`log_middleware`] instead.

#[cfg(test)]
mod tests;

use bytes::Bytes;
use courier_core::{Body, BoxError, EndpointMeta, Middleware};
use http::{Request, Response, Uri};
use std::fmt;
use tower::ServiceBuilder;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{DefaultOnFailure, DefaultOnResponse, MakeSpan, Trace, TraceLayer};
use tower_http::LatencyUnit;
use tracing::{Level, Span};

/// The type [`trace_layer`] returns.
pub type CallTraceLayer = TraceLayer<SharedClassifier<ServerErrorsAsFailures>, CallSpan>;

/// The service [`CallTraceLayer`] makes.
pub type CallTrace<S> = Trace<S, SharedClassifier<ServerErrorsAsFailures>, CallSpan>;

/// tower-http's `TraceLayer` set up for courier's calls: [`CallSpan`] spans, responses at
/// `INFO` and failures (5xx and errors) at `ERROR`, latencies in milliseconds. See the
/// [module docs](self).
///
/// Change any part with `TraceLayer`'s own builder methods, e.g.
/// `trace_layer().make_span_with(CallSpan::new().level(Level::DEBUG))`.
pub fn trace_layer() -> CallTraceLayer {
    TraceLayer::new_for_http()
        .make_span_with(CallSpan::new())
        .on_response(
            DefaultOnResponse::new()
                .level(Level::INFO)
                .latency_unit(LatencyUnit::Millis),
        )
        .on_failure(
            DefaultOnFailure::new()
                .level(Level::ERROR)
                .latency_unit(LatencyUnit::Millis),
        )
}

/// [`trace_layer`] as a source's or an endpoint's [`Middleware`], named `log`: the response body
/// goes back into a [`Body`], as a middleware's stack requires.
///
/// ```
/// use courier::layers::trace::log_middleware;
/// use courier::transport::{Body, HttpService};
/// use http::{Request, Response};
/// use tower::{service_fn, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), courier::BoxError> {
/// let transport = HttpService::new(service_fn(|_: Request<Body>| async {
///     Ok::<_, courier::BoxError>(Response::new(Body::from("{}")))
/// }));
/// let middleware = log_middleware();
/// assert_eq!(middleware.name(), "log");
/// let response = middleware
///     .apply(transport)
///     .oneshot(Request::get("http://127.0.0.1:9000/").body(Body::empty())?)
///     .await?;
/// assert_eq!(response.status(), 200);
/// # Ok(())
/// # }
/// ```
pub fn log_middleware() -> Middleware {
    Middleware::new(
        "log",
        ServiceBuilder::new()
            .map_response(into_body as fn(Response<_>) -> Response<Body>)
            .layer(trace_layer()),
    )
}

fn into_body<B>(response: Response<B>) -> Response<Body>
where
    B: http_body::Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    response.map(Body::new)
}

/// A [`MakeSpan`] for courier's calls: a span named `courier.call` with the fields `endpoint`,
/// `method` and `uri`, the query left out of `uri` for an endpoint with sensitive variables.
/// See the [module docs](self).
#[derive(Clone, Debug)]
pub struct CallSpan {
    level: Level,
}

impl CallSpan {
    /// Spans at `INFO`.
    pub fn new() -> Self {
        Self { level: Level::INFO }
    }

    /// Spans at `level`.
    #[must_use]
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }
}

impl Default for CallSpan {
    fn default() -> Self {
        Self::new()
    }
}

impl<B> MakeSpan<B> for CallSpan {
    fn make_span(&mut self, request: &Request<B>) -> Span {
        let meta = request.extensions().get::<EndpointMeta>();
        // Not recorded at all without an endpoint, rather than recorded empty.
        let endpoint = meta.map(|meta| tracing::field::display(meta.path()));
        let uri = LoggedUri {
            uri: request.uri(),
            query: !meta.is_some_and(EndpointMeta::is_sensitive),
        };
        // `tracing::span!` takes its level as a constant, hence one call per level.
        macro_rules! span {
            ($level:expr) => {
                tracing::span!(
                    $level,
                    "courier.call",
                    endpoint,
                    method = %request.method(),
                    uri = %uri,
                )
            };
        }
        match self.level {
            Level::ERROR => span!(Level::ERROR),
            Level::WARN => span!(Level::WARN),
            Level::INFO => span!(Level::INFO),
            Level::DEBUG => span!(Level::DEBUG),
            Level::TRACE => span!(Level::TRACE),
        }
    }
}

/// A request's address as logged: with or without its query.
struct LoggedUri<'a> {
    uri: &'a Uri,
    query: bool,
}

impl fmt::Display for LoggedUri<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.query {
            return write!(f, "{}", self.uri);
        }
        if let Some(scheme) = self.uri.scheme() {
            write!(f, "{scheme}://")?;
        }
        if let Some(authority) = self.uri.authority() {
            write!(f, "{authority}")?;
        }
        f.write_str(self.uri.path())
    }
}
