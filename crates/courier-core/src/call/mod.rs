//! What a call carries besides its variables, and what it returns: [`CallOptions`],
//! [`HttpResponse`], and the [`Dispatch`] trait a caller implements.

pub(crate) mod options;

pub use self::options::{CallOptions, Progress, UploadProgress};

use crate::encode::{Form, Variables};
use crate::error::ConfigurationError;
use crate::response::FromResponse;
use crate::transport::TransportOptions;
use crate::tree::api::ApiDef;
use crate::tree::resolve::ResolvedEndpoint;
use http::{HeaderMap, StatusCode};
use std::future::Future;
use std::sync::Arc;

/// A whole response: status, headers and the parsed body (the browser package's `HttpResponse`).
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
/// group's, over the source's.
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
    use http::{HeaderName, HeaderValue};
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

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
        let settings = merged.get_settings();
        assert_eq!(settings.get_timeout(), Some(Duration::from_millis(5)));
        assert_eq!(settings.get_coalesce(), Some(false));
        assert_eq!(merged.headers()["x-a"], "1");
        assert_eq!(merged.headers().get_all("x-b").iter().count(), 1);
        assert_eq!(merged.headers()["x-b"], "2");
        token.cancel();
        assert!(merged
            .get_signal()
            .is_some_and(CancellationToken::is_cancelled));
    }

    #[test]
    fn a_calls_transport_wins_over_the_groups_and_the_sources() {
        let api = ApiDef::builder()
            .base_url("http://api.example")
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
