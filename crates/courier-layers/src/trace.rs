//! Logging calls: tower-http's [`TraceLayer`] with `tracing`, set up for courier's calls (the
//! spec's `logMiddleware()`).
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
//! use courier_core::{EndpointMeta, Kind};
//! use courier_layers::trace::trace_layer;
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier_core::BoxError> {
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
//! `TraceLayer` wraps the response body to see it end, so the service it makes answers a
//! `Response<ResponseBody<..>>`; a stack that needs `Response<courier_core::Body>` back, as a
//! source's middleware does, takes [`log_middleware`] instead.

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
/// use courier_core::{Body, HttpService};
/// use courier_layers::trace::log_middleware;
/// use http::{Request, Response};
/// use tower::{service_fn, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), courier_core::BoxError> {
/// let transport = HttpService::new(service_fn(|_: Request<Body>| async {
///     Ok::<_, courier_core::BoxError>(Response::new(Body::from("{}")))
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

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::Kind;
    use http::StatusCode;
    use std::convert::Infallible;
    use std::io;
    use std::sync::{Arc, Mutex};
    use tower::{service_fn, Layer, ServiceExt};
    use tracing_subscriber::fmt::MakeWriter;

    /// Everything a `fmt` subscriber writes, kept for the test to read.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    impl io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Self;

        fn make_writer(&'a self) -> Self {
            self.clone()
        }
    }

    /// Runs `request` through `trace_layer()` over an upstream answering `status`, and returns
    /// what was logged.
    async fn logged(request: Request<String>, status: StatusCode) -> String {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_max_level(Level::TRACE)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let service = trace_layer().layer(service_fn(move |_: Request<String>| async move {
            let mut response = Response::new(http_body_util::Empty::<Bytes>::new());
            *response.status_mut() = status;
            Ok::<_, Infallible>(response)
        }));
        let response = service.oneshot(request).await.unwrap();
        assert_eq!(response.status(), status);
        captured.text()
    }

    fn request(uri: &str, meta: Option<EndpointMeta>) -> Request<String> {
        let mut request = Request::get(uri).body(String::new()).unwrap();
        if let Some(meta) = meta {
            request.extensions_mut().insert(meta);
        }
        request
    }

    #[tokio::test]
    async fn a_call_runs_in_a_courier_call_span() {
        let meta = EndpointMeta::new("users.get", Kind::Query);
        let log = logged(
            request("http://127.0.0.1:1/users/7?x=1", Some(meta)),
            StatusCode::OK,
        )
        .await;
        assert!(
            log.contains(
                "courier.call{endpoint=users.get method=GET uri=http://127.0.0.1:1/users/7?x=1}"
            ),
            "{log}"
        );
        assert!(log.contains("INFO"), "{log}");
        assert!(log.contains("finished processing request"), "{log}");
        assert!(log.contains("status=200"), "{log}");
        assert!(log.contains(" ms"), "latency in milliseconds: {log}");
        assert!(!log.contains("response failed"), "{log}");
    }

    #[tokio::test]
    async fn a_sensitive_endpoint_is_logged_without_its_query() {
        let meta = EndpointMeta::new("users.search", Kind::Query).sensitive(true);
        let log = logged(
            request(
                "http://127.0.0.1:1/users/search?email=ada%40example.com",
                Some(meta),
            ),
            StatusCode::OK,
        )
        .await;
        assert!(
            log.contains("uri=http://127.0.0.1:1/users/search}"),
            "{log}"
        );
        assert!(!log.contains("email"), "{log}");
        assert!(!log.contains("example.com"), "{log}");
    }

    #[tokio::test]
    async fn without_meta_no_endpoint_is_recorded() {
        let log = logged(request("/health", None), StatusCode::OK).await;
        assert!(
            log.contains("courier.call{method=GET uri=/health}"),
            "{log}"
        );
        assert!(!log.contains("endpoint"), "{log}");
    }

    #[tokio::test]
    async fn a_5xx_is_logged_as_a_failure() {
        let meta = EndpointMeta::new("users.get", Kind::Query);
        let log = logged(
            request("http://127.0.0.1:1/users/7", Some(meta)),
            StatusCode::BAD_GATEWAY,
        )
        .await;
        let failure = log
            .lines()
            .find(|line| line.contains("response failed"))
            .unwrap_or_else(|| panic!("no failure logged: {log}"));
        assert!(failure.contains("ERROR"), "{failure}");
        assert!(
            failure.contains("courier.call{endpoint=users.get"),
            "{failure}"
        );
        assert!(failure.contains("502"), "{failure}");
    }

    #[tokio::test]
    async fn a_4xx_is_a_response_not_a_failure() {
        let log = logged(request("/users/7", None), StatusCode::NOT_FOUND).await;
        assert!(log.contains("status=404"), "{log}");
        assert!(!log.contains("response failed"), "{log}");
        assert!(!log.contains("ERROR"), "{log}");
    }

    #[tokio::test]
    async fn an_inner_error_is_logged_as_a_failure() {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let service = trace_layer().layer(service_fn(|_: Request<String>| async {
            Err::<Response<http_body_util::Empty<Bytes>>, BoxError>("connection refused".into())
        }));
        let Err(err) = service.oneshot(request("/users/7", None)).await else {
            panic!("the call should fail");
        };
        assert_eq!(err.to_string(), "connection refused");
        let log = captured.text();
        assert!(log.contains("ERROR"), "{log}");
        assert!(log.contains("response failed"), "{log}");
        assert!(log.contains("connection refused"), "{log}");
    }

    #[tokio::test]
    async fn the_span_level_is_configurable() {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_max_level(Level::INFO)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let service = trace_layer()
            .make_span_with(CallSpan::new().level(Level::DEBUG))
            .layer(service_fn(|_: Request<String>| async {
                Ok::<_, Infallible>(Response::new(http_body_util::Empty::<Bytes>::new()))
            }));
        service.oneshot(request("/users/7", None)).await.unwrap();
        let log = captured.text();
        // The response event is still logged, outside a span the subscriber does not enable.
        assert!(log.contains("finished processing request"), "{log}");
        assert!(!log.contains("courier.call"), "{log}");
    }

    #[tokio::test]
    async fn log_middleware_keeps_a_courier_body() {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let transport = courier_core::HttpService::new(service_fn(|_: Request<Body>| async {
            Ok::<_, BoxError>(Response::new(Body::from("pong")))
        }));
        let request = Request::get("http://127.0.0.1:1/ping")
            .extension(EndpointMeta::new("ping", Kind::Query))
            .body(Body::empty())
            .unwrap();
        let response = log_middleware()
            .apply(transport)
            .oneshot(request)
            .await
            .unwrap();
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        assert_eq!(body, "pong");
        let log = captured.text();
        assert!(
            log.contains("courier.call{endpoint=ping method=GET"),
            "{log}"
        );
    }
}
