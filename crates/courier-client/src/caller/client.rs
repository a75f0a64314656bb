//! [`Client`]: an API's calls over a transport, untyped (dotted paths and JSON) or through the
//! typed views of a [`Caller`](super::Caller).

use crate::error::Error;
use crate::opener::{handshake_request, Opener};
use crate::read::{self, ReadAs, Reading};
use crate::sent::Sent;
use crate::transport::{Transport, TransportCache, TransportService};
use courier_core::context::ServedRequest;
use courier_core::encode::Variables;
use courier_core::{
    build_request, call_transport, resolve_path_options, ApiDef, Body, BodyService, BoxFuture,
    CallOptions, ConfigurationError, Dispatch, EndpointDef, ErrorCode, FromResponse,
    HttpCallRequest, HttpResponse, HttpService, IntoVariables, Kind, LayerSettings, Middleware,
    PathOptionCookies, ResolvedEndpoint, ResolvedPathOptions, RetryPolicy, RetrySetting,
};
use courier_layers::cache::{CacheBody, CacheLayer};
use courier_layers::cancel_previous::{CancelPrevious, CancelPreviousLayer};
use courier_layers::coalesce::{Coalesce, CoalesceBody, CoalesceLayer};
use courier_layers::forward::{Forward, ForwardLayer};
use courier_layers::metrics::MetricsLayer;
use courier_layers::retry::{self, IdempotencyKeyLayer, RetryLayer};
use courier_layers::session::{Session, SessionLayer};
use courier_layers::shed::{Shed, ShedLayer};
use courier_layers::timeout::{AttemptFromMeta, Timeout, TimeoutLayer};
use courier_live::Hub;
use http::{HeaderMap, Method, Request, Response};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::util::{Either, MapResponse};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

/// An API's calls, straight to its upstream over a transport: cheap to clone (an `Arc` inside),
/// usable from any task. (Calls through an app server's proxy route are
/// [`ProxyClient`](crate::proxy::ProxyClient)'s.)
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
/// | `CancelPreviousLayer` | the source lists endpoints in `cancel_previous`, or sets `deduplicate` |
/// | `SessionLayer` | the source has `session` options |
/// | `ForwardLayer` | the source has `forward` options |
/// | the source's `middleware`, then [`ClientBuilder::layer`]s, then the endpoint's `.layer()`s | any |
/// | `CacheLayer` | the endpoint declares `.cache()` |
/// | `CoalesceLayer` | always; it shares reads whose `coalesce` resolves to true |
/// | `RetryLayer` | unless [`ClientBuilder::retry`] turned the default off |
/// | `TimeoutLayer::per_attempt` | the endpoint (or, in a stack built for it, the call) has an `attempt_timeout`: it bounds each attempt |
/// | the transport | the call's, group's or source's `fetch` or `dispatcher`, or the default |
///
/// Each layer reads the call's [`EndpointMeta`](courier_core::EndpointMeta), which `Client`
/// puts in every request's extensions. The `timeout` (the call's, else the endpoint's, its
/// groups', the source's) is the deadline of the whole call, kept around the stack: every
/// attempt, the waits between them, and the reading of a buffered body (for a stream, a
/// channel or a pass-through call, the answer's head); past it the call fails with
/// [`Error::is_timeout`](crate::Error::is_timeout), saying how many attempts were made.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    api: ApiDef,
    transports: TransportCache,
    stack: Stack,
    /// Each endpoint's stack, by its dotted path.
    /// Each endpoint's stack, at the endpoint's [`position`](ResolvedEndpoint::position), with
    /// the endpoint it is for.
    services: Vec<(Arc<ResolvedEndpoint>, EndpointStack)>,
    ws: courier_core::WsOptions,
    hub: Hub,
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
    hub: Option<Hub>,
    metrics: bool,
    /// The service that answers every call instead of a transport: a mock's.
    answering: Option<HttpService>,
}

impl ClientBuilder {
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
            RetrySetting::Policy(policy) => Some(Arc::unwrap_or_clone(policy)),
        };
        self
    }

    /// Adds a tower layer to every call, where the source's `middleware` goes: inside the session
    /// and forwarded headers, outside coalescing, retry and the timeout. Layers added first run
    /// first.
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

    /// Records each call's duration, by endpoint, method, status and error, through the
    /// `metrics` facade ([`MetricsLayer`]: `http.client.request.duration`, OpenTelemetry's name),
    /// outermost of the middleware, so that a call is timed as its caller waits: its retries
    /// and waits included. Off by default; what the app's installed recorder (a Prometheus or
    /// OpenTelemetry exporter) shows.
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// The settings of the sockets the client's channels open (the browser package's `ws` option).
    pub fn ws(mut self, ws: courier_core::WsOptions) -> Self {
        self.ws = ws;
        self
    }

    /// The hub that runs the API's implemented channels when this client's callers join them
    /// in process. Default: a hub of the client's own, over an in-process
    /// [`LocalBus`](courier_live::LocalBus). Give a proxy route's client and in-process callers
    /// clones of one hub (or one client) and they share topics.
    pub fn hub(mut self, hub: Hub) -> Self {
        self.hub = Some(hub);
        self
    }

    /// Answers every call with `mock` instead of a transport, whatever transport the source, its
    /// groups or the call name (`fetch`, `dispatcher`): the requests go down the same layers (middleware,
    /// coalescing, retry, timeouts, session, forwarded headers) and the mock answers them as
    /// an upstream would. See [`crate::mock`].
    #[cfg(feature = "mock")]
    pub fn mock<A: courier_core::typed::ApiSpec>(self, mock: &crate::mock::Mock<A>) -> Self {
        self.answered_by(mock.service())
    }

    /// Answers every call with `service` instead of a transport (a mock's).
    #[cfg(feature = "mock")]
    pub(crate) fn answered_by(mut self, service: HttpService) -> Self {
        self.answering = Some(service);
        self
    }

    /// Builds every endpoint's service.
    ///
    /// # Errors
    ///
    /// When a transport cannot be built (a bad certificate or proxy in a `Dispatcher`), or an
    /// endpoint has no address (a definition [built for its routes
    /// only](courier_core::ApiBuilder::for_routes), without `base_url`); the error is a
    /// configuration error.
    pub fn build(self) -> Result<Client, Error> {
        // A definition built for its routes only may have no address to call.
        self.api.check_addressed()?;
        let transports = TransportCache::answered_by(self.transport, self.answering)
            .map_err(Error::transport)?;
        let source = self.api.options();
        let mut middleware = Vec::new();
        if self.metrics {
            let name = std::any::type_name::<MetricsLayer>();
            middleware.push(Middleware::new(name, MetricsLayer::new()));
        }
        middleware.extend(source.middleware.iter().cloned());
        middleware.extend(self.layers);
        let stack = Stack {
            shed: source.max_in_flight.map(ShedLayer::new),
            retry: self.retry.map(RetryLayer::new),
            cache: CacheLayer::new(),
            coalesce: CoalesceLayer::new(),
            middleware,
            session: source.session.clone().map(SessionLayer::new),
            forward: source.forward.clone().map(ForwardLayer::new),
            cancel_previous: (!source.cancel_previous.is_empty() || source.deduplicate)
                .then(CancelPreviousLayer::new),
        };
        let mut endpoints = self.api.endpoints();
        endpoints.sort_by_key(|endpoint| endpoint.position());
        let services = endpoints
            .into_iter()
            .map(|endpoint| {
                let service = stack.service(endpoint, &transports, None)?;
                Ok((Arc::clone(endpoint), service))
            })
            .collect::<Result<_, Error>>()?;
        Ok(Client {
            inner: Arc::new(Inner {
                api: self.api,
                transports,
                stack,
                services,
                ws: self.ws,
                hub: self.hub.unwrap_or_default(),
            }),
        })
    }
}

/// The layers every endpoint's service is built with, outermost first: cancel-previous,
/// session, forward, middleware (the source's, then the builder's, then the endpoint's own),
/// cache, coalesce, the bound on calls in flight, retry, each attempt's bound, transport; the
/// call's deadline is kept around them all (`read::Deadline`).
struct Stack {
    /// One for the client: the source's bound on calls in flight, which every endpoint shares.
    shed: Option<ShedLayer>,
    /// One for the client: its clones share one retry budget, so every endpoint draws on it.
    retry: Option<RetryLayer>,
    /// One for the client: the answers of the endpoints that declare `.cache()`, in one bounded
    /// memory. Only their stacks have it.
    cache: CacheLayer,
    coalesce: CoalesceLayer,
    middleware: Vec<Middleware>,
    session: Option<SessionLayer>,
    forward: Option<ForwardLayer>,
    /// One for the client: a newer call cancels an older one of the same endpoint.
    cancel_previous: Option<CancelPreviousLayer>,
}

/// Retry (unless turned off) over `T`, the transport or each attempt's bound over it.
type Retried<T> = Either<retry::Retry<T>, T>;
/// Coalescing, the source's bound on calls in flight (when it has one) and retry over `T`: a
/// read that shares a call in flight takes no place in the bound, and a retried call keeps its
/// one.
type Coalesced<T = TransportService> = Coalesce<Either<Shed<Retried<T>>, Retried<T>>>;
/// The transport under each attempt's bound, for an endpoint or a call with an
/// `attempt_timeout`.
type Bounded = Timeout<TransportService, AttemptFromMeta>;
/// The layers below the middleware, for an endpoint without `.cache()`.
type Core = MapResponse<Coalesced, fn(Response<CoalesceBody<Body>>) -> Response<Body>>;
/// The middleware (and an endpoint's cache) over the core, type-erased, when there is any.
type Middle = Either<Core, HttpService>;
type Forwarded = Either<Forward<Middle>, Middle>;
type Sessioned = Either<Session<Forwarded>, Forwarded>;

/// An endpoint's whole stack, one concrete type whatever layers the source turns on (each
/// optional layer an `Either` with the stack under it).
///
/// The one optimisation of the client: a call polls every layer's future in place, inside the
/// call's own future, rather than each through a box. Only the middleware, whose types the
/// client cannot know, is boxed, and only when there is some. The stack boxed whole
/// (`HttpService`, twice: under and over the middleware) cost 4.1 % of a call's instructions at
/// concurrency 1 and 5.1 % at 64 (callgrind, `benches/client.rs`: 38,630 → 40,210 and
/// 42,630 → 44,800).
type EndpointStack = Either<CancelPrevious<Sessioned>, Sessioned>;

impl Stack {
    /// The service for `endpoint` over its transport (the call's, group's or source's).
    fn service(
        &self,
        endpoint: &ResolvedEndpoint,
        transports: &TransportCache,
        options: Option<&CallOptions>,
    ) -> Result<EndpointStack, Error> {
        let settings = call_transport(endpoint, options);
        let transport = transports.transport(&settings).map_err(Error::transport)?;
        // The call's deadline is kept around the whole call (`read::Deadline`), above
        // coalescing, so that each caller's wait is bounded by its own timeout. Each attempt's
        // bound sits under retry, only in the stacks with one to keep, boxed with them: the
        // layer in every stack cost a call 0.9 % of its instructions (callgrind,
        // `benches/client.rs`, c1, 33,501 → 33,813), copying the transport's future into its
        // own.
        let bounded = bounds_attempts(endpoint, options);
        let own = &endpoint.definition().options().layers;
        // A call over a transport of its own (a client certificate per user, say) may be
        // answered differently: it is kept out of the client's cache, both ways.
        let cached = endpoint.meta().get_cache().is_some()
            && options.is_none_or(|o| o.transport().is_empty());
        // A write with an idempotency key has its key made over retry, so that every attempt
        // carries it; only those stacks have the layer, boxed with the middleware.
        let keyed = IdempotencyKeyLayer::applies_to(endpoint.meta());
        let middle =
            if self.middleware.is_empty() && own.is_empty() && !cached && !bounded && !keyed {
                Either::Left(self.core(transport).map_response(into_body as fn(_) -> _))
            } else {
                // The cache sits under the middleware, over coalescing, and only in the stacks of
                // endpoints that declare `.cache()`, boxed with the middleware: in every stack, a
                // cache that keeps nothing cost every call 2–3 % of its instructions (callgrind,
                // `benches/client.rs`: 38,441 → 39,616 at concurrency 1).
                let mut service = if bounded {
                    let bounded: Bounded = TimeoutLayer::per_attempt().layer(transport);
                    self.erased(self.core(bounded), cached)
                } else {
                    self.erased(self.core(transport), cached)
                };
                if keyed {
                    service = HttpService::new(IdempotencyKeyLayer::new().layer(service));
                }
                for layer in own.iter().rev() {
                    service = layer.apply(service);
                }
                for layer in self.middleware.iter().rev() {
                    service = layer.apply(service);
                }
                Either::Right(service)
            };
        Ok(ServiceBuilder::new()
            .option_layer(self.cancel_previous.clone())
            .option_layer(self.session.clone())
            .option_layer(self.forward.clone())
            .service(middle))
    }
}

impl Stack {
    /// Coalescing, the bound on calls in flight and retry (each unless turned off) over
    /// `attempt`.
    fn core<T>(&self, attempt: T) -> Coalesced<T> {
        ServiceBuilder::new()
            .layer(self.coalesce.clone())
            .option_layer(self.shed.clone())
            .option_layer(self.retry.clone())
            .service(attempt)
    }

    /// `core` as an [`HttpService`], under the cache when `cached`.
    fn erased<S>(&self, core: Coalesce<S>, cached: bool) -> HttpService
    where
        Coalesce<S>: Service<
                Request<Body>,
                Response = Response<CoalesceBody<Body>>,
                Error = courier_core::BoxError,
            > + Clone
            + Send
            + Sync
            + 'static,
        <Coalesce<S> as Service<Request<Body>>>::Future: Send + 'static,
    {
        if cached {
            HttpService::new(
                ServiceBuilder::new()
                    .map_response(from_cache)
                    .layer(self.cache.clone())
                    .service(core),
            )
        } else {
            HttpService::new(core.map_response(into_body))
        }
    }
}

/// Whether a call of `endpoint` with `options` has an `attempt_timeout` to keep.
fn bounds_attempts(endpoint: &ResolvedEndpoint, options: Option<&CallOptions>) -> bool {
    let set = |settings: &LayerSettings| settings.get_attempt_timeout().is_some();
    set(endpoint.meta().get_settings()) || options.is_some_and(|o| set(o.get_settings()))
}

/// A response from the coalescing layer with courier's body: the inner body as it came, or the
/// bytes of a shared answer.
fn into_body(response: Response<CoalesceBody<Body>>) -> Response<Body> {
    response.map(Body::from)
}

/// A response from the cache over the coalescing layer with courier's body: the inner body as it
/// came, or the bytes of a kept or shared answer.
fn from_cache(response: Response<CacheBody<CoalesceBody<Body>>>) -> Response<Body> {
    response.map(Body::from)
}

/// Puts path options' headers and cookies on `request`. A header replaces any of its name (the
/// source's, a `.via()` closure's, the call's), as path values are never replaced by a caller's
/// variables. Cookies replace those of their names in the `cookie` header; a `cookie` header
/// written from path options alone is marked, so that a session layer adds the session's cookies
/// to it.
fn with_path_headers(
    request: &mut Request<Body>,
    headers: HeaderMap,
    cookies: &[(String, String)],
) {
    for name in headers.keys() {
        request.headers_mut().remove(name);
    }
    for (name, value) in &headers {
        request.headers_mut().append(name.clone(), value.clone());
    }
    if cookies.is_empty() {
        return;
    }
    let existing = request
        .headers()
        .get(http::header::COOKIE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut pairs: Vec<String> = existing
        .iter()
        .flat_map(|header| header.split(';'))
        .map(str::trim)
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or_default();
            !pair.is_empty() && !cookies.iter().any(|(own, _)| own == name)
        })
        .map(str::to_owned)
        .collect();
    pairs.extend(
        cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    // Names and values were checked to be a token and cookie octets: a valid header value.
    if let Ok(mut value) = http::HeaderValue::try_from(pairs.join("; ")) {
        value.set_sensitive(true);
        request.headers_mut().insert(http::header::COOKIE, value);
        if existing.is_none() {
            request.extensions_mut().insert(PathOptionCookies);
        }
    }
}

/// The verb a call forces on an HTTP endpoint ([`CallOptions::method`]): GET or POST, never GET
/// for a write (it would be sent again by anything that retries or prefetches a GET) nor for a
/// read with sensitive variables (they would travel in the address, and into access logs).
fn forced_method<'a>(
    endpoint: &ResolvedEndpoint,
    options: Option<&'a CallOptions>,
) -> Result<Option<&'a Method>, Error> {
    let Some(method) = options.and_then(CallOptions::get_method) else {
        return Ok(None);
    };
    let EndpointDef::Http(http) = endpoint.definition() else {
        return Ok(None);
    };
    let refuse = |why: String| {
        Err(Error::from(
            ConfigurationError::new(ErrorCode::InvalidOption, why).at(endpoint.path()),
        ))
    };
    if *method != Method::GET && *method != Method::POST {
        return refuse(format!("a call's method is GET or POST, not {method}"));
    }
    if *method == Method::GET && http.kind() == Kind::Mutation {
        return refuse(format!(
            "`{}` writes: it cannot be sent as GET",
            endpoint.path()
        ));
    }
    if *method == Method::GET && http.is_sensitive() {
        return refuse(format!(
            "`{}` has sensitive variables: it cannot be sent as GET",
            endpoint.path()
        ));
    }
    Ok(Some(method))
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
    /// As [`ClientBuilder::build`]: a transport named by the API cannot be built, or an endpoint
    /// has no address.
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
            hub: None,
            metrics: false,
            answering: None,
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
        let work = pin!(self.send::<R>(endpoint, variables, options));
        read::unless_cancelled(
            options.and_then(CallOptions::get_signal),
            self.inner.api.options().signal.as_ref(),
            work,
        )
        .await
        .map_err(|e| e.with_endpoint(endpoint.path()))
    }

    async fn send<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let mut request = self.request(endpoint, variables, options).await?;
        let head = request.method() == Method::HEAD;
        let mut meta = endpoint.meta().with_call(options);
        let reading = Reading::of(&mut meta);
        request.extensions_mut().insert(meta);
        crate::progress::watch_upload(&mut request, options);
        // Named by the error of a call that failed, with the endpoint.
        let (method, uri) = (request.method().clone(), request.uri().clone());
        // The answer's future made where it is bound: one held in a local and then moved into
        // `bound`'s was kept twice in this future's state (5,048 bytes where 2,848 do).
        let answered = reading
            .bound(async {
                let response = self.down_the_stack(endpoint, options, request).await?;
                reading.head_came();
                let api = &self.inner.api;
                let read_as = ReadAs::Definition;
                read::response(api, endpoint, response, head, read_as, &reading).await
            })
            .await;
        answered.map_err(|e| e.with_request(method, uri))
    }
}

impl Client {
    /// Builds `endpoint`'s request: path options resolved, variables encoded, the call's headers
    /// and served context applied.
    ///
    /// Computed path options see the request being served: the call's own
    /// ([`CallOptions::context`]), else the one in scope ([`ServedRequest::current`], set by a
    /// `ContextLayer` or the proxy); none outside a server.
    async fn request(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        let sent = Sent::kept(&self.inner.transports, &variables);
        let mut request = self.request_of(endpoint, variables, options).await?;
        Sent::put(sent, &mut request);
        Ok(request)
    }

    /// [`Client::request`], without the variables kept for a mock.
    async fn request_of(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        // Without path options to resolve (which may be async) the request is built at once.
        if endpoint.path_options().is_empty() {
            return self.build(endpoint, variables, &Map::new(), options);
        }
        let served = options
            .and_then(CallOptions::get_context)
            .cloned()
            .or_else(ServedRequest::current);
        let resolved = resolve_path_options(
            endpoint.path_options(),
            served.as_ref().map(ServedRequest::parts),
        )
        .await
        .and_then(ResolvedPathOptions::split)
        .map_err(Error::path_options)?;
        let mut request = self.build(endpoint, variables, &resolved.values, options)?;
        with_path_headers(&mut request, resolved.headers, &resolved.cookies);
        Ok(request)
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
        let method = forced_method(endpoint, options)?;
        let mut request = build_request(
            &self.inner.api,
            endpoint,
            variables,
            values,
            headers,
            method,
        )
        .map_err(Error::request)?;
        if let Some(served) = options.and_then(CallOptions::get_context) {
            // Room for as many headers as the served request has. hyper keeps the header map of
            // each message it writes for the next it reads on that connection: this one is read
            // into by the upstream's answer, which the proxy hands on to the browser, whose next
            // request is read into it in turn. Made that large here, it never grows on the way
            // (the map of a browser's request, twelve headers, grew each time): 57,709 → 57,504
            // instructions a proxied read (callgrind, `courier serve --threads 1`).
            request.headers_mut().reserve(served.headers().len());
            // A proxy's relayed headers, under what the definition and the call set.
            served.relay_into(request.headers_mut());
            request.extensions_mut().insert(served.clone());
        }
        Ok(request)
    }

    /// The stack built for `endpoint`: found at its position when it is this client's own (the
    /// usual case: the endpoint came from this client's API, or a clone of it), else by its
    /// dotted path, for an endpoint of another `ApiDef` with the same shape.
    fn stack_of(&self, endpoint: &ResolvedEndpoint) -> Option<&EndpointStack> {
        let services = &self.inner.services;
        match services.get(endpoint.position()) {
            Some((own, stack)) if std::ptr::eq(own.as_ref(), endpoint) => Some(stack),
            _ => {
                let own = self.inner.api.endpoint(endpoint.path())?;
                services.get(own.position()).map(|(_, stack)| stack)
            }
        }
    }

    /// The stack a call of `endpoint` goes down: the endpoint's own, or one built for the call
    /// when its options set `fetch` or `dispatcher`, or an `attempt_timeout` the endpoint's
    /// stack has no layer for.
    fn service_for(
        &self,
        endpoint: &ResolvedEndpoint,
        options: Option<&CallOptions>,
    ) -> Result<EndpointStack, Error> {
        let own_stack = options.is_some_and(|o| {
            !o.transport().is_empty()
                || (o.get_settings().get_attempt_timeout().is_some()
                    && !bounds_attempts(endpoint, None))
        });
        if !own_stack {
            if let Some(service) = self.stack_of(endpoint) {
                return Ok(service.clone());
            }
        }
        self.inner
            .stack
            .service(endpoint, &self.inner.transports, options)
    }

    /// Sends the opening request of a stream or channel, or a pass-through call, through the
    /// endpoint's layer stack; see [`Opener::handshake`].
    async fn handshake_with(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
        headers: HeaderMap,
        param: Option<(&str, &str)>,
    ) -> Result<Response<Body>, Error> {
        let mut request = self.request(endpoint, variables, options).await?;
        handshake_request(&mut request, headers, param)?;
        let mut meta = endpoint.meta().with_call(options);
        // The deadline bounds the answer's head; its body streams on.
        let reading = Reading::of(&mut meta);
        request.extensions_mut().insert(meta);
        let (method, uri) = (request.method().clone(), request.uri().clone());
        let answered = reading
            .bound(self.down_the_stack(endpoint, options, request))
            .await;
        answered.map_err(|e| e.with_request(method, uri))
    }

    /// Sends `request` down `endpoint`'s stack, readied and called here rather than through
    /// `oneshot`, which would move the request and the stack into a future of their own first.
    async fn down_the_stack(
        &self,
        endpoint: &ResolvedEndpoint,
        options: Option<&CallOptions>,
        request: Request<Body>,
    ) -> Result<Response<Body>, Error> {
        let mut service = self.service_for(endpoint, options)?;
        let call = service
            .ready()
            .await
            .map_err(Error::from_stack)?
            .call(request);
        drop(service);
        call.await.map_err(Error::from_stack)
    }

    /// Calls `endpoint` (resolved already: [`ApiDef::endpoint`], or what a proxy's address
    /// named) and hands back the upstream response as it came — status, headers and the body
    /// unread (streaming) — whatever its status: what a proxy passes on. The call goes through
    /// the endpoint's whole layer stack as [`Client::call`] does; the timeout bounds the response
    /// head only.
    ///
    /// # Errors
    ///
    /// Variables the endpoint cannot use, a layer's refusal (499, 403), a timeout, or a network
    /// failure. An upstream status of 400 or more is not an error here.
    pub async fn pass_through(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: impl Into<Variables>,
        options: Option<&CallOptions>,
    ) -> Result<Response<Body>, Error> {
        self.handshake_with(endpoint, variables.into(), options, HeaderMap::new(), None)
            .await
            .map_err(|e| e.with_endpoint(endpoint.path()))
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

    /// The hub that runs the API's implemented channels for this client's callers and for a
    /// proxy route given this client ([`ClientBuilder::hub`]).
    pub fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    /// The session layer of the client's calls, when the source has `session` options: what
    /// a proxy route given this client asks which session a browser's request carries
    /// ([`SessionLayer::signed_session`]).
    pub fn session(&self) -> Option<&SessionLayer> {
        self.inner.stack.session.as_ref()
    }
}

impl Opener for Client {
    fn api(&self) -> &ApiDef {
        &self.inner.api
    }

    fn hub(&self) -> Option<&Hub> {
        Some(&self.inner.hub)
    }

    fn variables<V: IntoVariables>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: V,
    ) -> Result<Variables, Error> {
        read::variables(endpoint, variables)
    }

    fn hello_headers(&self) -> Option<&HeaderMap> {
        None
    }

    fn handshake<'a>(
        &'a self,
        endpoint: &'a ResolvedEndpoint,
        variables: Variables,
        options: Option<&'a CallOptions>,
        headers: HeaderMap,
        param: Option<(&'static str, &'static str)>,
    ) -> BoxFuture<'a, Result<Response<Body>, Error>> {
        Box::pin(async move {
            self.handshake_with(endpoint, variables, options, headers, param)
                .await
                .map_err(|e| e.with_endpoint(endpoint.path()))
        })
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
        let variables = read::variables(endpoint, request.variables)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use courier_core::{GroupDef, HttpEndpoint};

    fn api(groups: &[&str]) -> ApiDef {
        let mut builder = ApiDef::builder().base_url("http://127.0.0.1:9");
        for group in groups {
            builder = builder.group(
                *group,
                GroupDef::new().endpoint("get", HttpEndpoint::get("/")),
            );
        }
        builder.build().unwrap()
    }

    #[test]
    fn each_endpoint_has_its_stack_at_its_position() {
        let own = api(&["b", "c"]);
        let client = Client::new(own.clone()).unwrap();
        for endpoint in own.endpoints() {
            let (stored, _) = &client.inner.services[endpoint.position()];
            assert!(Arc::ptr_eq(stored, endpoint), "{}", endpoint.path());
            assert!(client.stack_of(endpoint).is_some());
        }
        // A twin API's `c.get` sits at another position; it finds the stack by its path.
        let twin = api(&["a", "b", "c"]);
        let other = twin.endpoint("c.get").unwrap();
        assert_ne!(other.position(), own.endpoint("c.get").unwrap().position());
        assert!(client.stack_of(other).is_some());
        // An endpoint this client has no stack for.
        assert!(client.stack_of(twin.endpoint("a.get").unwrap()).is_none());
    }
}
