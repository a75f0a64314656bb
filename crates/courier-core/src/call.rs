//! What a call carries besides its variables, and what it returns: [`CallOptions`],
//! [`HttpResponse`], and the [`Dispatch`] trait a caller implements.

use crate::context::ServedRequest;
use crate::encode::{Form, Variables};
use crate::error::ConfigurationError;
use crate::response::FromResponse;
use crate::transport::{Dispatcher, Fetch, TransportOptions};
use crate::tree::api::ApiDef;
use crate::tree::resolve::ResolvedEndpoint;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Options for one call, set with `.with(...)` on a typed view (the spec's `CallOptions`).
///
/// Each set option wins over the endpoint's and the source's; `.with()` twice merges, the later
/// call's options winning.
///
/// ```
/// use courier_core::CallOptions;
/// use std::time::Duration;
///
/// let opts = CallOptions::new().timeout(Duration::from_millis(200)).coalesce(false);
/// assert_eq!(opts.timeout_value(), Some(Duration::from_millis(200)));
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct CallOptions {
    timeout: Option<Duration>,
    method: Option<Method>,
    coalesce: Option<bool>,
    headers: HeaderMap,
    signal: Option<CancellationToken>,
    transport: TransportOptions,
    upload_progress: Option<UploadProgress>,
    context: Option<ServedRequest>,
}

type ProgressFn = dyn Fn(Progress) + Send + Sync;

/// How far an upload has got: bytes handed to the connection so far, the total when the body's
/// size is known, and the fraction `0.0..=1.0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Bytes of the body read by the connection so far.
    pub loaded: u64,
    /// The body's size, when known.
    pub total: Option<u64>,
    /// `loaded / total`, or `0.0` until the end when the size is unknown; `1.0` at the end.
    pub percent: f64,
}

/// A callback told of an upload's progress (the spec's `onUploadProgress`).
#[derive(Clone)]
pub struct UploadProgress(Arc<ProgressFn>);

impl UploadProgress {
    /// Wraps a callback.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Reports progress.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl std::fmt::Debug for UploadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UploadProgress(..)")
    }
}

impl CallOptions {
    /// No options set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bounds each attempt of this call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Forces the verb the proxy caller uses (GET or POST).
    pub fn method(mut self, method: Method) -> Self {
        self.method = Some(method);
        self
    }

    /// Turns coalescing on or off for this call.
    pub fn coalesce(mut self, coalesce: bool) -> Self {
        self.coalesce = Some(coalesce);
        self
    }

    /// Adds a header to this call.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Aborts this call when `signal` is cancelled (the spec's `signal`).
    pub fn signal(mut self, signal: CancellationToken) -> Self {
        self.signal = Some(signal);
        self
    }

    /// A replacement transport for this call, over the endpoint's groups and source (address
    /// rule 6).
    pub fn fetch(mut self, fetch: Fetch) -> Self {
        self.transport.fetch = Some(fetch);
        self
    }

    /// How this call's connection is made, over the endpoint's groups and source.
    pub fn dispatcher(mut self, dispatcher: Dispatcher) -> Self {
        self.transport.dispatcher = Some(dispatcher);
        self
    }

    /// Reports the upload's progress as the connection reads the body, ending at `1.0` before
    /// the call resolves (the spec's `onUploadProgress`).
    pub fn on_upload_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.upload_progress = Some(UploadProgress::new(f));
        self
    }

    /// The served request this call is made for, when it is made outside the server's own scope
    /// (the spec's per-call `Context`): its session and forwarded headers go with the call as if
    /// the server were serving it here. Within a handler wrapped in the server's context layer
    /// there is no need: the served request is found on its own.
    pub fn context(mut self, served: ServedRequest) -> Self {
        self.context = Some(served);
        self
    }

    /// The explicit served-request context, if set.
    pub fn context_value(&self) -> Option<&ServedRequest> {
        self.context.as_ref()
    }

    /// The upload progress callback, if set.
    pub fn upload_progress(&self) -> Option<&UploadProgress> {
        self.upload_progress.as_ref()
    }

    /// The timeout, if set.
    pub fn timeout_value(&self) -> Option<Duration> {
        self.timeout
    }

    /// The forced verb, if set.
    pub fn method_value(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// The coalescing setting, if set.
    pub fn coalesce_value(&self) -> Option<bool> {
        self.coalesce
    }

    /// The call's own headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The call's cancellation signal, if set.
    pub fn signal_value(&self) -> Option<&CancellationToken> {
        self.signal.as_ref()
    }

    /// The call's own transport settings.
    pub fn transport(&self) -> &TransportOptions {
        &self.transport
    }

    /// `self` with every option `later` sets replaced by `later`'s; headers of `later` replace
    /// those of the same name.
    pub fn merged(&self, later: &CallOptions) -> CallOptions {
        let mut headers = self.headers.clone();
        for name in later.headers.keys() {
            headers.remove(name);
        }
        for (name, value) in &later.headers {
            headers.append(name.clone(), value.clone());
        }
        CallOptions {
            timeout: later.timeout.or(self.timeout),
            method: later.method.clone().or_else(|| self.method.clone()),
            coalesce: later.coalesce.or(self.coalesce),
            headers,
            signal: later.signal.clone().or_else(|| self.signal.clone()),
            transport: later.transport.over(&self.transport),
            upload_progress: later
                .upload_progress
                .clone()
                .or_else(|| self.upload_progress.clone()),
            context: later.context.clone().or_else(|| self.context.clone()),
        }
    }
}

/// A whole response: status, headers and the parsed body (the spec's `HttpResponse`).
#[derive(Clone, Debug)]
pub struct HttpResponse<T> {
    /// The status code.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The parsed body.
    pub data: T,
}

impl<T> HttpResponse<T> {
    /// Maps the body, keeping status and headers.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> HttpResponse<U> {
        HttpResponse {
            status: self.status,
            headers: self.headers,
            data: f(self.data),
        }
    }
}

/// What a typed call's variables become: JSON for any `Serialize` type, or a multipart
/// [`Form`].
pub trait IntoVariables {
    /// Converts the variables.
    ///
    /// # Errors
    ///
    /// When the value cannot be represented as JSON (a map with non-string keys, say).
    fn into_variables(self) -> Result<Variables, serde_json::Error>;

    /// Where the variables hold raw bytes (`serialize_bytes`), which JSON cannot carry: the
    /// proxy caller refuses them before sending (`PROXY_VARIABLE_NOT_SERIALIZABLE`). `None`
    /// by default; see [`raw_bytes_at`](crate::encode::raw_bytes_at).
    fn raw_bytes(&self) -> Option<String> {
        None
    }
}

impl<T: serde::Serialize> IntoVariables for T {
    fn into_variables(self) -> Result<Variables, serde_json::Error> {
        serde_json::to_value(self).map(Variables::from)
    }

    fn raw_bytes(&self) -> Option<String> {
        crate::encode::raw_bytes_at(self)
    }
}

impl IntoVariables for Form {
    fn into_variables(self) -> Result<Variables, serde_json::Error> {
        Ok(Variables::Form(self))
    }
}

/// The transport settings that apply to one call of `endpoint`: the call's own, over the nearest
/// group's, over the source's (address rule 6).
pub fn call_transport(
    endpoint: &ResolvedEndpoint,
    options: Option<&CallOptions>,
) -> TransportOptions {
    match options {
        Some(options) => options.transport.over(endpoint.transport()),
        None => endpoint.transport().clone(),
    }
}

/// One call as a typed view hands it to its caller: an HTTP call, a stream subscription or a
/// channel connection.
#[derive(Debug)]
#[non_exhaustive]
pub struct HttpCallRequest<'a, V> {
    /// The endpoint.
    pub endpoint: &'a Arc<ResolvedEndpoint>,
    /// The caller's variables.
    pub variables: V,
    /// The call's options, when `.with()` set any.
    pub options: Option<&'a CallOptions>,
}

impl<'a, V> HttpCallRequest<'a, V> {
    /// A request for `endpoint` with `variables`.
    pub fn new(
        endpoint: &'a Arc<ResolvedEndpoint>,
        variables: V,
        options: Option<&'a CallOptions>,
    ) -> Self {
        Self {
            endpoint,
            variables,
            options,
        }
    }
}

/// A caller the typed views run on: the direct `Caller`, the `ProxyCaller`, or a test double.
///
/// A view finds the endpoint in [`Dispatch::api`] and hands the call to [`Dispatch::http`].
pub trait Dispatch: Send + Sync {
    /// The caller's error; a missing endpoint becomes one through `From<ConfigurationError>`.
    type Error: From<ConfigurationError> + Send + 'static;

    /// The tree the caller serves.
    fn api(&self) -> &ApiDef;

    /// Makes one HTTP call and parses its body as `R`.
    fn http<R, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<HttpResponse<R>, Self::Error>> + Send
    where
        R: FromResponse,
        V: IntoVariables + Send;
}

/// A caller that opens stream subscriptions (the typed views' `Stream` fields).
///
/// Awaiting a [`StreamCall`](crate::typed::StreamCall) hands it to [`StreamDispatch::subscribe`],
/// which resolves once the first connection is open (or the stream is served in-process) and
/// yields the events as they come.
pub trait StreamDispatch: Dispatch {
    /// The subscription: a stream of typed events.
    type Events<R: serde::de::DeserializeOwned + Send + 'static>: futures_core::Stream<Item = Result<crate::Event<R>, Self::Error>>
        + Send
        + 'static;

    /// Opens a subscription to the stream `request` names.
    fn subscribe<R, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<Self::Events<R>, Self::Error>> + Send
    where
        R: serde::de::DeserializeOwned + Send + 'static,
        V: IntoVariables + Send;
}

/// A caller that opens channel connections (the typed views' `Channel` fields).
///
/// Awaiting a [`ChannelCall`](crate::typed::ChannelCall) hands it to [`ChannelDispatch::connect`],
/// which resolves once the first connection is open (or joined in-process).
pub trait ChannelDispatch: Dispatch {
    /// The connection: a stream of typed messages, taking `S` when the channel has `.send()`.
    type Connection<R: serde::de::DeserializeOwned + Send + 'static, S: Send + 'static>: futures_core::Stream<Item = Result<R, Self::Error>>
        + Send
        + 'static;

    /// Opens a connection to the channel `request` names.
    fn connect<R, S, V>(
        &self,
        request: HttpCallRequest<'_, V>,
    ) -> impl Future<Output = Result<Self::Connection<R, S>, Self::Error>> + Send
    where
        R: serde::de::DeserializeOwned + Send + 'static,
        S: Send + 'static,
        V: IntoVariables + Send;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiDef, Dispatcher, GroupDef, HttpEndpoint};

    fn proxy(uri: &str) -> Dispatcher {
        Dispatcher::new().proxy(uri.parse().expect("a valid URI"))
    }

    #[test]
    fn later_options_win_and_headers_replace_by_name() {
        let first = CallOptions::new()
            .timeout(Duration::from_secs(1))
            .coalesce(false)
            .header(
                HeaderName::from_static("x-a"),
                HeaderValue::from_static("1"),
            )
            .header(
                HeaderName::from_static("x-b"),
                HeaderValue::from_static("1"),
            );
        let token = CancellationToken::new();
        let later = CallOptions::new()
            .timeout(Duration::from_millis(5))
            .signal(token.clone())
            .header(
                HeaderName::from_static("x-b"),
                HeaderValue::from_static("2"),
            );
        let merged = first.merged(&later);
        assert_eq!(merged.timeout_value(), Some(Duration::from_millis(5)));
        assert_eq!(merged.coalesce_value(), Some(false));
        assert_eq!(merged.headers()["x-a"], "1");
        assert_eq!(merged.headers().get_all("x-b").iter().count(), 1);
        assert_eq!(merged.headers()["x-b"], "2");
        token.cancel();
        assert!(merged
            .signal_value()
            .is_some_and(CancellationToken::is_cancelled));
    }

    #[test]
    fn a_calls_transport_wins_over_the_groups_and_the_sources() {
        let api = ApiDef::builder()
            .dispatcher(proxy("http://source:1"))
            .group(
                "g",
                GroupDef::new()
                    .dispatcher(proxy("http://group:1"))
                    .endpoint("e", HttpEndpoint::get("")),
            )
            .group(
                "plain",
                GroupDef::new().endpoint("e", HttpEndpoint::get("")),
            )
            .build()
            .expect("a valid tree");
        let proxy_of =
            |t: TransportOptions| t.dispatcher.and_then(|d| d.proxy).map(|u| u.to_string());
        let g = api.endpoint("g.e").expect("defined");
        let plain = api.endpoint("plain.e").expect("defined");
        assert_eq!(
            proxy_of(call_transport(g, None)).as_deref(),
            Some("http://group:1/")
        );
        assert_eq!(
            proxy_of(call_transport(plain, None)).as_deref(),
            Some("http://source:1/")
        );
        let call = CallOptions::new().dispatcher(proxy("http://call:1"));
        assert_eq!(
            proxy_of(call_transport(g, Some(&call))).as_deref(),
            Some("http://call:1/")
        );
        let timeout_only = CallOptions::new().timeout(Duration::from_secs(1));
        assert_eq!(
            proxy_of(call_transport(g, Some(&timeout_only))).as_deref(),
            Some("http://group:1/")
        );
    }
}
