//! What the proxy counts of itself through the `metrics` facade, beside its clients' call
//! durations (`Proxy::metrics`): the refusals it answers, by code, and the streams and channels
//! it holds open, always; and, with [`Proxy::metrics`](crate::Proxy::metrics) on, the duration of
//! each request at its call route ([`SERVER_REQUEST_DURATION`], its labels each of a fixed set
//! whatever a request says). Without a recorder installed, each costs a load and a branch; the
//! call route's duration costs a branch with metrics off.

use courier_core::EndpointMeta;
use http::{Method, StatusCode};
use metrics::{Label, SharedString};
use std::time::Instant;

/// The histogram of the requests at the proxy's call route, recorded when
/// [`Proxy::metrics`](crate::Proxy::metrics) is on: `http.server.request.duration`,
/// OpenTelemetry's HTTP server request duration, in seconds, from a request's arrival to its
/// response's head, both ways the call route is served ([`Proxy::serve`](crate::Proxy::serve),
/// and the router's route: [`Proxy::into_router`](crate::Proxy::into_router),
/// [`Proxy::serve_with`](crate::Proxy::serve_with)).
///
/// Its labels, as OpenTelemetry's HTTP server conventions name them, each taking its values
/// from a fixed set whatever a request says (its method, its query):
///
/// | label | value |
/// |---|---|
/// | `http.request.method` | `GET`, `POST`, … (`_OTHER` for a method not in RFC 9110 or PATCH, as `MetricsLayer` names it) |
/// | `http.route` | the proxy's call path ([`Proxy::http_path`](crate::Proxy::http_path), `/api/request` by default) |
/// | `http.response.status_code` | the status answered |
/// | `error.type` | the refusal's code (`ENDPOINT_NOT_IN_ROUTES`, `RATE_LIMITED`, `UPSTREAM_TIMEOUT`, …: `courier.proxy.refusals`' codes) when the proxy refused; else the status, for 500 and more; else none |
/// | `courier.endpoint` | the endpoint's dotted path once the call route has found it among the source's exposed endpoints, else `_OTHER`: never what the query says |
pub const SERVER_REQUEST_DURATION: &str = "http.server.request.duration";

/// The counter of refusals: `courier.proxy.refusals`, labelled `code` (the refusal's code, one
/// of a fixed set).
pub(crate) const REFUSALS: &str = "courier.proxy.refusals";

/// The gauge of open streams: `courier.proxy.open_streams`.
pub(crate) const OPEN_STREAMS: &str = "courier.proxy.open_streams";

/// The gauge of open channels: `courier.proxy.open_channels`.
pub(crate) const OPEN_CHANNELS: &str = "courier.proxy.open_channels";

/// The `courier.endpoint` of a request whose endpoint was not found, or not looked for.
const OTHER_ENDPOINT: &str = "_OTHER";

/// Counts a refusal answered with `code`.
pub(crate) fn refused(code: &'static str) {
    metrics::counter!(REFUSALS, "code" => code).increment(1);
}

/// One request at the call route, timed from its arrival, with what its labels are made of.
pub(crate) struct TimedCall {
    started: Instant,
    method: &'static str,
    /// The endpoint's dotted path, once found among the source's exposed endpoints.
    endpoint: Option<SharedString>,
}

impl TimedCall {
    /// A request with `method`, arrived now.
    pub(crate) fn start(method: &Method) -> Self {
        Self {
            started: Instant::now(),
            method: courier_layers::metrics::method(method),
            endpoint: None,
        }
    }

    /// The request addresses the exposed endpoint of `meta`: one of the finite set of the
    /// proxy's sources.
    pub(crate) fn addressed(&mut self, meta: &EndpointMeta) {
        self.endpoint = Some(meta.path_arc().clone().into());
    }

    /// Records the duration until now, of a request at `route` answered with `status`, refused
    /// with the code `refused` when the proxy refused it.
    pub(crate) fn record(self, route: &str, status: StatusCode, refused: Option<&'static str>) {
        let status_code = status.as_u16();
        let error = match refused {
            Some(code) => Some(SharedString::const_str(code)),
            None => (status_code >= 500).then(|| status_code.to_string().into()),
        };
        let mut labels = Vec::with_capacity(5);
        labels.push(Label::new("http.request.method", self.method));
        labels.push(Label::new("http.route", route.to_owned()));
        labels.push(Label::new(
            "http.response.status_code",
            status_code.to_string(),
        ));
        if let Some(error) = error {
            labels.push(Label::new("error.type", error));
        }
        let endpoint = self
            .endpoint
            .unwrap_or(SharedString::const_str(OTHER_ENDPOINT));
        labels.push(Label::new("courier.endpoint", endpoint));
        metrics::histogram!(SERVER_REQUEST_DURATION, labels)
            .record(self.started.elapsed().as_secs_f64());
    }
}

/// One open stream or channel, counted in its gauge while it lives.
pub(crate) struct Open(&'static str);

impl Open {
    /// An open stream, counted until dropped.
    pub(crate) fn stream() -> Self {
        Self::of(OPEN_STREAMS)
    }

    /// An open channel, counted until dropped.
    pub(crate) fn channel() -> Self {
        Self::of(OPEN_CHANNELS)
    }

    fn of(gauge: &'static str) -> Self {
        metrics::gauge!(gauge).increment(1.0);
        Self(gauge)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        metrics::gauge!(self.0).decrement(1.0);
    }
}
