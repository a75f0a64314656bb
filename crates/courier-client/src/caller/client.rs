//! [`Client`]: an API's calls over a transport, untyped (dotted paths and JSON) or through the
//! typed views of a [`Caller`](super::Caller).

use crate::error::{Error, HttpError};
use crate::progress::ProgressBody;
use crate::transport::{Transport, TransportCache};
use courier_core::encode::Variables;
use courier_core::{
    build_request, call_transport, resolve_path_options, ApiDef, Body, CallOptions,
    CancellationToken, Dispatch, FromResponse, HttpCallRequest, HttpResponse, HttpService,
    IntoVariables, ResolvedEndpoint, ResponseBody, ResponseType,
};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::ServiceExt;

/// An API's calls over a transport: cheap to clone (an `Arc` inside), usable from any task.
///
/// A `Client` calls endpoints by dotted path with JSON variables ([`Client::call`]) — what the
/// CLI and the proxy do — and is the [`Dispatch`] that typed views run on; most code holds a
/// [`Caller`](super::Caller), which derefs to the typed views over a `Client`. It is also a
/// `tower::Service<Call>`.
///
/// Each endpoint's service is built once: the transport its group or source names (a `fetch`, a
/// client for its `dispatcher`, or the default), wrapped in the endpoint's `.layer()`s, then the
/// source's `middleware` outermost.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    api: ApiDef,
    transports: TransportCache,
    services: HashMap<String, HttpService>,
}

/// Builds a [`Client`]: the API and, optionally, the default transport's settings.
#[must_use]
pub struct ClientBuilder {
    api: ApiDef,
    transport: Transport,
}

impl ClientBuilder {
    /// The default transport (for endpoints whose group and source set neither `fetch` nor
    /// `dispatcher`).
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Builds every endpoint's service.
    ///
    /// # Errors
    ///
    /// When a transport cannot be built (a bad certificate or proxy in a `Dispatcher`); the
    /// error is a configuration error.
    pub fn build(self) -> Result<Client, Error> {
        let transports = TransportCache::new(self.transport).map_err(Error::transport)?;
        let mut services = HashMap::new();
        for endpoint in self.api.endpoints() {
            let service = stack(&self.api, endpoint, &transports, None)?;
            services.insert(endpoint.path().to_owned(), service);
        }
        Ok(Client {
            inner: Arc::new(Inner {
                api: self.api,
                transports,
                services,
            }),
        })
    }
}

/// The transport for `endpoint` (its call's, group's or source's), wrapped in its layers and the
/// source's middleware.
fn stack(
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    transports: &TransportCache,
    options: Option<&CallOptions>,
) -> Result<HttpService, Error> {
    let transport = call_transport(endpoint, options);
    let mut service = transports.service(&transport).map_err(Error::transport)?;
    for layer in endpoint.definition().options().layers.iter().rev() {
        service = layer.apply(service);
    }
    for layer in api.options().middleware.iter().rev() {
        service = layer.apply(service);
    }
    Ok(service)
}

/// One untyped call, as [`Client`]'s `tower::Service` takes it.
#[derive(Clone, Debug)]
pub struct Call {
    /// The endpoint's dotted path (`users.posts.list`).
    pub endpoint: String,
    /// The variables.
    pub variables: Value,
    /// Per-call options.
    pub options: CallOptions,
}

impl Client {
    /// A client for `api` over the default transport.
    ///
    /// # Errors
    ///
    /// When a transport named by the API cannot be built.
    pub fn new(api: ApiDef) -> Result<Self, Error> {
        Self::builder(api).build()
    }

    /// A client for `api` with transport settings.
    pub fn builder(api: ApiDef) -> ClientBuilder {
        ClientBuilder {
            api,
            transport: Transport::new(),
        }
    }

    /// The API.
    pub fn api(&self) -> &ApiDef {
        &self.inner.api
    }

    /// Calls the endpoint at `path` with JSON `variables`, returning the whole response with its
    /// body as JSON.
    ///
    /// # Errors
    ///
    /// See [`Error`]; an unknown path is `ENDPOINT_NOT_IN_ROUTES`.
    pub async fn call(&self, path: &str, variables: Value) -> Result<HttpResponse<Value>, Error> {
        self.call_with(path, variables, None).await
    }

    /// [`Client::call`] with per-call options.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub async fn call_with(
        &self,
        path: &str,
        variables: Value,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<Value>, Error> {
        let endpoint = self.inner.api.endpoint(path).ok_or_else(|| {
            Error::from(
                courier_core::ConfigurationError::new(
                    courier_core::ErrorCode::EndpointNotInRoutes,
                    format!("`{path}` is not an endpoint of this API"),
                )
                .at(path),
            )
        })?;
        self.execute(endpoint, Variables::Json(variables), options)
            .await
    }

    async fn execute<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let source = self.inner.api.options();
        let timeout = options
            .and_then(CallOptions::timeout_value)
            .or(endpoint.definition().options().timeout)
            .or(source.timeout);
        let call_signal = options.and_then(CallOptions::signal_value);
        let work = async {
            match timeout {
                Some(limit) => {
                    tokio::time::timeout(limit, self.send::<R>(endpoint, variables, options))
                        .await
                        .unwrap_or_else(|_| Err(Error::timeout()))
                }
                None => self.send::<R>(endpoint, variables, options).await,
            }
        };
        let result = if call_signal.is_none() && source.signal.is_none() {
            work.await
        } else {
            tokio::select! {
                biased;
                () = cancelled(call_signal, source.signal.as_ref()) => Err(Error::cancelled()),
                result = work => result,
            }
        };
        result.map_err(|e| e.with_endpoint(endpoint.path()))
    }

    async fn send<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let api = &self.inner.api;
        let values = resolve_path_options(endpoint.path_options(), None)
            .await
            .map_err(Error::path_options)?;
        let headers = options.map(CallOptions::headers);
        let mut request =
            build_request(api, endpoint, variables, &values, headers).map_err(Error::request)?;
        let method = request.method().clone();
        if let Some(progress) = options.and_then(CallOptions::upload_progress) {
            let body = std::mem::take(request.body_mut());
            let done = Arc::new(AtomicBool::new(false));
            *request.body_mut() = Body::new(ProgressBody::new(body, progress.clone(), done));
        }

        let service = match options
            .filter(|o| o.transport().fetch.is_some() || o.transport().dispatcher.is_some())
        {
            Some(options) => stack(api, endpoint, &self.inner.transports, Some(options))?,
            None => match self.inner.services.get(endpoint.path()) {
                Some(service) => service.clone(),
                None => stack(api, endpoint, &self.inner.transports, None)?,
            },
        };
        let response = service
            .oneshot(request)
            .await
            .map_err(Error::from_network)?;
        let (parts, body) = response.into_parts();

        if parts.status.as_u16() >= 400 {
            let bytes = body
                .collect()
                .await
                .map_err(Error::from_network)?
                .to_bytes();
            return Err(Error::from_http(HttpError::from_parts(
                parts.status,
                parts.headers,
                &bytes,
            )));
        }

        let http = endpoint.definition().as_http();
        let streams = R::STREAM || http.is_some_and(|h| h.is_stream_response());
        let body = if streams {
            ResponseBody::Stream(body)
        } else {
            let bytes = body
                .collect()
                .await
                .map_err(Error::from_network)?
                .to_bytes();
            if parts.status == StatusCode::NO_CONTENT || method == Method::HEAD {
                ResponseBody::Empty
            } else if let Some(parser) = &api.options().response_parser {
                let value = parser
                    .parse(&parts, bytes)
                    .map_err(|e| Error::decode(parts.status, e))?;
                ResponseBody::Value(value)
            } else {
                let response_type = http
                    .and_then(|h| h.response_type_override())
                    .unwrap_or(api.options().response_type);
                match response_type {
                    ResponseType::Json if bytes.is_empty() => ResponseBody::Empty,
                    ResponseType::Json => ResponseBody::Json(bytes),
                    ResponseType::Text => ResponseBody::Text(
                        String::from_utf8(bytes.to_vec())
                            .map_err(|e| Error::decode(parts.status, e))?,
                    ),
                    ResponseType::Bytes => ResponseBody::Bytes(bytes),
                    ResponseType::Form => ResponseBody::Form(bytes),
                }
            }
        };
        let data = R::from_response(body).map_err(|e| Error::decode(parts.status, e))?;
        Ok(HttpResponse {
            status: parts.status,
            headers: parts.headers,
            data,
        })
    }
}

/// Resolves when either signal is cancelled; never when neither is given.
async fn cancelled(a: Option<&CancellationToken>, b: Option<&CancellationToken>) {
    match (a, b) {
        (Some(a), Some(b)) => tokio::select! {
            () = a.cancelled() => {},
            () = b.cancelled() => {},
        },
        (Some(one), None) | (None, Some(one)) => one.cancelled().await,
        (None, None) => std::future::pending().await,
    }
}

impl Dispatch for Client {
    type Error = Error;

    fn api(&self) -> &ApiDef {
        &self.inner.api
    }

    async fn http<R, V>(&self, request: HttpCallRequest<'_, V>) -> Result<HttpResponse<R>, Error>
    where
        R: FromResponse,
        V: IntoVariables + Send,
    {
        let endpoint = request.endpoint;
        let variables = request
            .variables
            .into_variables()
            .map_err(|e| Error::variables(e).with_endpoint(endpoint.path()))?;
        self.execute(endpoint, variables, request.options).await
    }
}

impl tower::Service<Call> for Client {
    type Response = HttpResponse<Value>;
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse<Value>, Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> Self::Future {
        let client = self.clone();
        Box::pin(async move {
            client
                .call_with(&call.endpoint, call.variables, Some(&call.options))
                .await
        })
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("api", &self.inner.api)
            .finish_non_exhaustive()
    }
}
