//! [`Client`]: an API's calls over a transport, untyped (dotted paths and JSON) or through the
//! typed views of a [`Caller`](super::Caller).

use crate::error::{Error, HttpError};
use crate::progress::ProgressBody;
use crate::proxy::Route;
use crate::transport::{Transport, TransportCache, TransportService};
use bytes::Bytes;
use courier_core::encode::Variables;
use courier_core::{
    build_request, call_transport, resolve_path_options, ApiDef, Body, BodyService, BoxError,
    CallOptions, CancellationToken, Dispatch, EndpointMeta, FromResponse, HttpCallRequest,
    HttpResponse, HttpService, IntoVariables, Middleware, ResolvedEndpoint, ResponseBody,
    ResponseType, RetryPolicy, RetrySetting,
};
use courier_layers::cancel_previous::{CancelPrevious, CancelPreviousLayer};
use courier_layers::coalesce::{Coalesce, CoalesceBody, CoalesceLayer};
use courier_layers::forward::{Forward, ForwardLayer};
use courier_layers::retry::{self, RetryLayer};
use courier_layers::session::{Session, SessionLayer};
use courier_layers::timeout::{Timeout, TimeoutLayer};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::util::{Either, MapResponse};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

/// An API's calls over a transport: cheap to clone (an `Arc` inside), usable from any task.
///
/// A `Client` calls endpoints by dotted path with JSON variables ([`Client::call`]) — what the
/// CLI and the proxy do — and is the [`Dispatch`] that typed views run on; most code holds a
/// [`Caller`](super::Caller), which derefs to the typed views over a `Client`. It is also a
/// `tower::Service<Call>`.
///
/// Each endpoint's service is built once, from the layers of [`courier_layers`], outermost
/// first:
///
/// | layer | when |
/// |---|---|
/// | `CancelPreviousLayer` | the source lists endpoints in `cancel_previous` |
/// | `SessionLayer` | the source has `session` options |
/// | `ForwardLayer` | the source has `forward` options |
/// | the source's `middleware`, then [`ClientBuilder::layer`]s, then the endpoint's `.layer()`s | any |
/// | `CoalesceLayer` | always; it shares reads whose `coalesce` resolves to true |
/// | `RetryLayer` | unless [`ClientBuilder::retry`] turned the default off |
/// | `TimeoutLayer` | always; it bounds the attempts of calls with a timeout |
/// | the transport | the call's, group's or source's `fetch` or `dispatcher`, or the default |
///
/// Each layer reads the call's [`EndpointMeta`](courier_core::EndpointMeta), which `Client`
/// puts in every request's extensions. The timeout (the call's, else the endpoint's, else the
/// source's) bounds each attempt up to the response head, then the reading of a buffered body.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    api: ApiDef,
    transports: TransportCache,
    stack: Stack,
    /// Each endpoint's stack, at its [ordinal](ResolvedEndpoint::ordinal), with the address of
    /// the endpoint it was built for.
    services: Vec<(usize, EndpointService)>,
    ws: courier_core::WsOptions,
    /// Set for a proxy caller's client: calls go to the proxy route.
    proxy: Option<Route>,
}

/// Builds a [`Client`]: the API, the default transport's settings, the default retry policy
/// and layers of the user's own.
#[must_use]
pub struct ClientBuilder {
    api: ApiDef,
    transport: Transport,
    retry: Option<RetryPolicy>,
    layers: Vec<Middleware>,
    ws: courier_core::WsOptions,
    proxy: Option<Route>,
}

impl ClientBuilder {
    /// Sends every call to a proxy route instead of the upstream (the proxy caller).
    pub(crate) fn proxy(mut self, route: Route) -> Self {
        self.proxy = Some(route);
        self
    }

    /// The default transport (for endpoints whose group and source set neither `fetch` nor
    /// `dispatcher`).
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// The retry policy of endpoints that set none (`.retry(...)` wins over it):
    /// [`RetryPolicy::default()`] unless set here; `false` retries nothing by default.
    ///
    /// [`RetryPolicy::default()`]: courier_core::RetryPolicy::default
    pub fn retry(mut self, retry: impl Into<RetrySetting>) -> Self {
        self.retry = match retry.into() {
            RetrySetting::Inherit => Some(RetryPolicy::default()),
            RetrySetting::Off => None,
            RetrySetting::Policy(policy) => Some(policy),
        };
        self
    }

    /// Adds a tower layer to every call, where the source's `middleware` goes (the spec's
    /// `.use()`): inside the session and forwarded headers, outside coalescing, retry and the
    /// timeout. Layers added first run first.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<HttpService, Service: BodyService> + Send + Sync + 'static,
    {
        self.layers
            .push(Middleware::new(std::any::type_name::<L>(), layer));
        self
    }

    /// Adds a [`Middleware`] to every call, as [`ClientBuilder::layer`] does.
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.layers.push(middleware);
        self
    }

    /// The settings of the sockets the client's channels open (the spec's `ws` option).
    pub fn ws(mut self, ws: courier_core::WsOptions) -> Self {
        self.ws = ws;
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
        let source = self.api.options();
        let stack = match &self.proxy {
            // A proxy caller's calls run the caller's own layers; the source's middleware,
            // session and forwarded headers are the server's.
            Some(route) => Stack {
                retry: None,
                coalesce: CoalesceLayer::new(),
                middleware: self.layers,
                session: None,
                forward: None,
                cancel_previous: route
                    .metas
                    .values()
                    .any(EndpointMeta::cancels_previous)
                    .then(CancelPreviousLayer::new),
                proxied: true,
            },
            None => {
                let mut middleware = source.middleware.clone();
                middleware.extend(self.layers);
                Stack {
                    retry: self.retry.map(RetryLayer::new),
                    coalesce: CoalesceLayer::new(),
                    middleware,
                    session: source.session.clone().map(SessionLayer::new),
                    forward: source.forward.clone().map(ForwardLayer::new),
                    cancel_previous: (!source.cancel_previous.is_empty())
                        .then(CancelPreviousLayer::new),
                    proxied: false,
                }
            }
        };
        // Ordinals run from 0 up to the number of endpoints: in their order, each stack sits at
        // its endpoint's ordinal.
        let mut endpoints = self.api.endpoints();
        endpoints.sort_by_key(|endpoint| endpoint.ordinal());
        let services = endpoints
            .into_iter()
            .map(|endpoint| {
                let service = stack.service(endpoint, &transports, None)?;
                Ok((address(endpoint), service))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Client {
            inner: Arc::new(Inner {
                api: self.api,
                transports,
                stack,
                services,
                ws: self.ws,
                proxy: self.proxy,
            }),
        })
    }
}

/// The layers every endpoint's service is built with, in DESIGN order, outermost first:
/// cancel-previous, session, forward, middleware (the source's, then the builder's, then the
/// endpoint's own), coalesce, retry, timeout, transport.
struct Stack {
    /// One for the client: its clones share one retry budget, so every endpoint draws on it.
    retry: Option<RetryLayer>,
    coalesce: CoalesceLayer,
    middleware: Vec<Middleware>,
    session: Option<SessionLayer>,
    forward: Option<ForwardLayer>,
    /// One for the client: a newer call cancels an older one of the same endpoint.
    cancel_previous: Option<CancelPreviousLayer>,
    /// A proxy caller's stack: one transport (the builder's, or the call's), no endpoint
    /// layers.
    proxied: bool,
}

/// Coalescing, retry (unless turned off) and the timeout over the transport: the layers below
/// the middleware.
type Core = MapResponse<
    Coalesce<Either<retry::Retry<Timeout<TransportService>>, Timeout<TransportService>>>,
    fn(Response<CoalesceBody<Body>>) -> Response<Body>,
>;
/// The middleware over the core, type-erased, when there is any.
type Middle = Either<Core, HttpService>;
type Forwarded = Either<Forward<Middle>, Middle>;
type Sessioned = Either<Session<Forwarded>, Forwarded>;

/// The layers over the middleware that a client or source may turn on.
type Outer = Either<CancelPrevious<Sessioned>, Sessioned>;

/// An endpoint's whole stack, one concrete type whatever layers the source turns on: a call polls
/// every layer's future in place, inside the call's own future, rather than each through a box.
/// Only the middleware, whose types the client cannot know, is boxed, and only when there is
/// some. Without any of the outer layers (the usual case) a call goes straight to the middle,
/// not through one pass-through `Either` for each layer turned off.
type EndpointService = Either<Outer, Middle>;

impl Stack {
    /// The service for `endpoint` over its transport (the call's, group's or source's).
    fn service(
        &self,
        endpoint: &ResolvedEndpoint,
        transports: &TransportCache,
        options: Option<&CallOptions>,
    ) -> Result<EndpointService, Error> {
        let settings = if self.proxied {
            options.map(|o| o.transport().clone()).unwrap_or_default()
        } else {
            call_transport(endpoint, options)
        };
        let transport = transports.transport(&settings).map_err(Error::transport)?;
        let core: Core = ServiceBuilder::new()
            .map_response(into_body as fn(_) -> _)
            .layer(self.coalesce.clone())
            .option_layer(self.retry.clone())
            .layer(TimeoutLayer::from_meta())
            .service(transport);
        let none = Vec::new();
        let own = if self.proxied {
            &none
        } else {
            &endpoint.definition().options().layers
        };
        let middle = if self.middleware.is_empty() && own.is_empty() {
            Either::Left(core)
        } else {
            let mut service = HttpService::new(core);
            for layer in own.iter().rev() {
                service = layer.apply(service);
            }
            for layer in self.middleware.iter().rev() {
                service = layer.apply(service);
            }
            Either::Right(service)
        };
        if self.cancel_previous.is_none() && self.session.is_none() && self.forward.is_none() {
            return Ok(Either::Right(middle));
        }
        Ok(Either::Left(
            ServiceBuilder::new()
                .option_layer(self.cancel_previous.clone())
                .option_layer(self.session.clone())
                .option_layer(self.forward.clone())
                .service(middle),
        ))
    }
}

/// Where `endpoint` lives: tells the client's own endpoints from those of another API.
fn address(endpoint: &ResolvedEndpoint) -> usize {
    std::ptr::from_ref(endpoint) as usize
}

/// A response from the coalescing layer with courier's body: the inner body as it came, or the
/// bytes of a shared answer.
fn into_body(response: Response<CoalesceBody<Body>>) -> Response<Body> {
    response.map(Body::from)
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
            retry: Some(RetryPolicy::default()),
            layers: Vec::new(),
            ws: courier_core::WsOptions::default(),
            proxy: None,
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
        let endpoint = self.endpoint_at(path)?;
        self.execute(&endpoint, Variables::Json(variables), options)
            .await
    }

    async fn execute<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let source = self.inner.api.options();
        let call_signal = options.and_then(CallOptions::signal_value);
        // The call's future is pinned here once and borrowed by either way of awaiting it:
        // moving it into `select!` would keep room for it twice in this future.
        let mut work = pin!(self.send::<R>(endpoint, variables, options));
        let result = if call_signal.is_none() && source.signal.is_none() {
            work.await
        } else {
            tokio::select! {
                biased;
                () = cancelled(call_signal, source.signal.as_ref()) => Err(Error::cancelled()),
                result = &mut work => result,
            }
        };
        let result = result.map_err(|e| e.with_endpoint(endpoint.path()));
        if let Some(route) = &self.inner.proxy {
            route.report(endpoint.path(), &result);
        }
        result
    }

    async fn send<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let api = &self.inner.api;
        // Without path options to resolve (which may be async) the request is built at once.
        let mut request = if self.inner.proxy.is_none() && endpoint.path_options().is_empty() {
            self.build(endpoint, variables, &Map::new(), options)?
        } else {
            self.request(endpoint, variables, options).await?
        };
        let head = request.method() == Method::HEAD;
        let meta = self.meta(endpoint, options);
        let timeout = meta.timeout_value();
        request.extensions_mut().insert(meta);
        if let Some(progress) = options.and_then(CallOptions::upload_progress) {
            let body = std::mem::take(request.body_mut());
            let done = Arc::new(AtomicBool::new(false));
            *request.body_mut() = Body::new(ProgressBody::new(body, progress.clone(), done));
        }
        let response = match self
            .inner
            .proxy
            .as_ref()
            .and_then(|route| route.jar.as_ref())
        {
            None => {
                // Readied and called here rather than through `oneshot`, which would move the
                // request and the stack into a future of its own first.
                let mut service = self.service_for(endpoint, options)?;
                let call = service
                    .ready()
                    .await
                    .map_err(Error::from_stack)?
                    .call(request);
                drop(service);
                call.await.map_err(Error::from_stack)?
            }
            // Boxed: only a proxy caller with a cookie jar goes this way, and its future would
            // otherwise set the size of every call's.
            Some(_) => Box::pin(self.dispatch(endpoint, request, options)).await?,
        };
        let (parts, body) = response.into_parts();

        if parts.status.as_u16() >= 400 {
            let bytes = collect(body, timeout).await?;
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
            let bytes = collect(body, timeout).await?;
            if parts.status == StatusCode::NO_CONTENT || head {
                ResponseBody::Empty
            } else if let Some(parser) = &api.options().response_parser {
                let value = parser
                    .parse(&parts, bytes)
                    .map_err(|e| Error::decode(parts.status, e))?;
                ResponseBody::Value(value)
            } else {
                let by_content_type = self
                    .inner
                    .proxy
                    .as_ref()
                    .and_then(|route| route.response_type(&parts.headers));
                let response_type = by_content_type
                    .or_else(|| http.and_then(|h| h.response_type_override()))
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

impl Client {
    /// Builds `endpoint`'s request: path options resolved, variables encoded, the call's headers
    /// and served context applied.
    async fn request(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        if let Some(route) = &self.inner.proxy {
            return route.request(endpoint, variables, options);
        }
        let values = resolve_path_options(endpoint.path_options(), None)
            .await
            .map_err(Error::path_options)?;
        self.build(endpoint, variables, &values, options)
    }

    /// Builds `endpoint`'s request with its path options resolved to `values`.
    fn build(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        values: &Map<String, Value>,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        let headers = options.map(CallOptions::headers);
        let mut request = build_request(&self.inner.api, endpoint, variables, values, headers)
            .map_err(Error::request)?;
        if let Some(served) = options.and_then(CallOptions::context_value) {
            request.extensions_mut().insert(served.clone());
        }
        Ok(request)
    }

    /// Sends `request` down `endpoint`'s layer stack and transport; a proxy caller's cookie jar
    /// adds its cookies first and keeps what the response sets.
    async fn dispatch(
        &self,
        endpoint: &ResolvedEndpoint,
        mut request: Request<Body>,
        options: Option<&CallOptions>,
    ) -> Result<Response<Body>, Error> {
        let service = self.service_for(endpoint, options)?;
        let jar = self
            .inner
            .proxy
            .as_ref()
            .and_then(|route| route.jar.as_ref())
            .map(|jar| {
                let uri = request.uri().clone();
                jar.add_to(&uri, request.headers_mut());
                (jar, uri)
            });
        let response = service.oneshot(request).await.map_err(Error::from_stack)?;
        if let Some((jar, uri)) = jar {
            jar.store_from(&uri, response.headers());
        }
        Ok(response)
    }

    /// The stack a call of `endpoint` goes down: the endpoint's own, or one over the call's
    /// transport when its options set `fetch` or `dispatcher`.
    fn service_for(
        &self,
        endpoint: &ResolvedEndpoint,
        options: Option<&CallOptions>,
    ) -> Result<EndpointService, Error> {
        let own_transport =
            options.filter(|o| o.transport().fetch.is_some() || o.transport().dispatcher.is_some());
        if own_transport.is_none() {
            // The endpoint's own stack, unless it comes from another API than the client's.
            if let Some((built_for, service)) = self.inner.services.get(endpoint.ordinal()) {
                if *built_for == address(endpoint) {
                    return Ok(service.clone());
                }
            }
        }
        self.inner
            .stack
            .service(endpoint, &self.inner.transports, own_transport)
    }

    /// The facts of a call of `endpoint` that the layers read, the call's options applied.
    fn meta(&self, endpoint: &ResolvedEndpoint, options: Option<&CallOptions>) -> EndpointMeta {
        match &self.inner.proxy {
            Some(route) => route.meta(endpoint, options),
            None => endpoint.meta().with_call(options),
        }
    }

    /// A typed view's variables, encoded for `endpoint`; a proxy caller first refuses raw bytes
    /// (`PROXY_VARIABLE_NOT_SERIALIZABLE`), before anything is sent.
    pub(crate) fn variables<V: IntoVariables>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: V,
    ) -> Result<Variables, Error> {
        if self.inner.proxy.is_some() {
            if let Some(at) = variables.raw_bytes() {
                return Err(crate::proxy::not_serializable(
                    endpoint.path(),
                    format!(
                        "`{at}` holds raw bytes, which JSON cannot carry: send files in a `Form`"
                    ),
                ));
            }
        }
        typed_variables(endpoint, variables)
    }

    /// Whether this client calls through a proxy route: streams and channels are then never
    /// served in process, even implemented ones.
    pub(crate) fn is_proxy(&self) -> bool {
        self.inner.proxy.is_some()
    }

    /// The headers a proxy caller sends in each socket's first frame.
    pub(crate) fn proxy_headers(&self) -> Option<&http::HeaderMap> {
        self.inner.proxy.as_ref().map(|r| &r.headers)
    }

    /// Sends the opening request of a stream or channel (its handshake GET, with `headers`
    /// added over the built ones) through the endpoint's layer stack, and returns the response
    /// with its body unread and its extensions (a protocol upgrade) intact. The status is the
    /// caller's to judge. A stream or channel reconnecting calls this again, so path options,
    /// middleware and the served context apply to every connection.
    pub(crate) async fn handshake(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
        headers: http::HeaderMap,
    ) -> Result<Response<Body>, Error> {
        self.handshake_with(endpoint, variables, options, headers, None)
            .await
    }

    /// [`Client::handshake`] with a query parameter added to the address (a channel's `_h=1`,
    /// announcing its hello frame).
    pub(crate) async fn handshake_with(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
        headers: http::HeaderMap,
        param: Option<(&str, &str)>,
    ) -> Result<Response<Body>, Error> {
        let mut request = self
            .request(endpoint, variables, options)
            .await
            .map_err(|e| e.with_endpoint(endpoint.path()))?;
        if let Some((name, value)) = param {
            let uri = request.uri();
            let joined = match uri.query() {
                Some(query) if !query.is_empty() => format!("{}&{name}={value}", uri),
                _ => format!("{}?{name}={value}", uri.to_string().trim_end_matches('?')),
            };
            *request.uri_mut() = joined.parse().map_err(|e| {
                Error::from(courier_core::ConfigurationError::new(
                    courier_core::ErrorCode::InvalidOption,
                    format!("the handshake address does not parse: {e}"),
                ))
            })?;
        }
        for (name, value) in &headers {
            request.headers_mut().insert(name, value.clone());
        }
        request
            .extensions_mut()
            .insert(self.meta(endpoint, options));
        self.dispatch(endpoint, request, options)
            .await
            .map_err(|e| e.with_endpoint(endpoint.path()))
    }

    /// Calls the endpoint at `path` and hands back the upstream response as it came — status,
    /// headers and the body unread (streaming) — whatever its status: what a proxy passes on.
    /// The call goes through the endpoint's whole layer stack as [`Client::call`] does; the
    /// timeout bounds the response head only.
    ///
    /// # Errors
    ///
    /// An unknown path (`ENDPOINT_NOT_IN_ROUTES`), variables the endpoint cannot use, a layer's
    /// refusal (499, 403), a timeout, or a network failure. An upstream status of 400 or more is
    /// not an error here.
    pub async fn pass_through(
        &self,
        path: &str,
        variables: impl Into<Variables>,
        options: Option<&CallOptions>,
    ) -> Result<Response<Body>, Error> {
        let endpoint = self.endpoint_at(path)?;
        self.handshake(&endpoint, variables.into(), options, http::HeaderMap::new())
            .await
    }

    /// The endpoint at dotted `path`; an unknown one is `ENDPOINT_NOT_IN_ROUTES`.
    pub(crate) fn endpoint_at(&self, path: &str) -> Result<Arc<ResolvedEndpoint>, Error> {
        self.inner.api.endpoint(path).cloned().ok_or_else(|| {
            Error::from(
                courier_core::ConfigurationError::new(
                    courier_core::ErrorCode::EndpointNotInRoutes,
                    format!("`{path}` is not an endpoint of this API"),
                )
                .at(path),
            )
        })
    }

    /// The settings of the sockets this client's channels open ([`ClientBuilder::ws`]).
    pub fn ws_options(&self) -> &courier_core::WsOptions {
        &self.inner.ws
    }
}

/// A typed view's variables, encoded for `endpoint`; one that does not serialise is a
/// configuration error naming the endpoint.
pub(crate) fn typed_variables<V: IntoVariables>(
    endpoint: &ResolvedEndpoint,
    variables: V,
) -> Result<Variables, Error> {
    variables
        .into_variables()
        .map_err(|e| Error::variables(e).with_endpoint(endpoint.path()))
}

/// The variables of a stream or channel served in process, as its handler takes them: JSON.
pub(crate) fn in_process_variables(variables: Variables) -> Result<Value, Error> {
    match variables {
        Variables::None => Ok(Value::Null),
        Variables::Json(value) => Ok(value),
        Variables::Form(_) => Err(courier_core::ConfigurationError::new(
            courier_core::ErrorCode::InvalidOption,
            "the variables of a stream or channel are JSON, not a form",
        )
        .into()),
    }
}

/// The error for a response a stream or channel cannot use: an [`HttpError`] with the body
/// read (up to 64 KiB) for a status of 400 or more, else a protocol error with `cause`.
pub(crate) async fn refused(response: Response<Body>, cause: impl Into<BoxError>) -> Error {
    let (parts, body) = response.into_parts();
    if parts.status.as_u16() < 400 {
        return Error::protocol(parts.status, cause);
    }
    let read = http_body_util::Limited::new(body, 64 * 1024).collect();
    let bytes = match tokio::time::timeout(Duration::from_secs(10), read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        _ => Bytes::new(),
    };
    Error::from_http(HttpError::from_parts(parts.status, parts.headers, &bytes))
}

/// Reads a buffered body whole; the call's timeout bounds the reading too, as it bounds each
/// attempt up to the response head.
async fn collect(body: Body, timeout: Option<Duration>) -> Result<Bytes, Error> {
    let read = body.collect();
    let collected = match timeout {
        Some(limit) => tokio::time::timeout(limit, read)
            .await
            .map_err(|_| Error::timeout())?,
        None => read.await,
    };
    Ok(collected.map_err(Error::from_network)?.to_bytes())
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
        let variables = self.variables(endpoint, request.variables)?;
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
