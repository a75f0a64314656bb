//! What a call carries besides its variables, and what it returns: [`CallOptions`],
//! [`HttpResponse`], and the [`Dispatch`] trait a caller implements.

use crate::encode::{Form, Variables};
use crate::error::ConfigurationError;
use crate::tree::api::ApiDef;
use crate::tree::resolve::ResolvedEndpoint;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

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
}

impl<T: serde::Serialize> IntoVariables for T {
    fn into_variables(self) -> Result<Variables, serde_json::Error> {
        serde_json::to_value(self).map(Variables::from)
    }
}

impl IntoVariables for Form {
    fn into_variables(self) -> Result<Variables, serde_json::Error> {
        Ok(Variables::Form(self))
    }
}

/// One HTTP call as a typed view hands it to its caller.
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
        R: DeserializeOwned + Send + 'static,
        V: IntoVariables + Send;
}
