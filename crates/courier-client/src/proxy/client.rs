//! [`ProxyClient`]: the proxy caller's calls — the wire encoder ([`Route`]) over a small tower
//! stack of the caller's own.

use super::cookies::Jar;
use super::route::Route;
use crate::error::Error;
use crate::opener::{handshake_request, Opener};
use crate::read::{self, Reading};
use crate::sent::Sent;
use crate::transport::{TransportCache, TransportService};
use courier_core::encode::Variables;
use courier_core::{
    ApiDef, Body, BoxFuture, CallOptions, Dispatch, FromResponse, HttpCallRequest, HttpResponse,
    HttpService, IntoVariables, Middleware, ResolvedEndpoint, WsOptions,
};
use courier_layers::cancel_previous::CancelPreviousLayer;
use courier_layers::coalesce::{CoalesceBody, CoalesceLayer};
use http::{HeaderMap, Request, Response};
use std::fmt;
use std::pin::pin;
use std::sync::Arc;
use tower::{Layer, ServiceBuilder, ServiceExt};

/// The calls of a [`ProxyCaller`](super::ProxyCaller): each endpoint's call written as the proxy
/// route's wire (its docs tell the wire) and sent through the caller's own stack, outermost
/// first:
///
/// | layer | when |
/// |---|---|
/// | the cookie jar | [`Credentials::Include`](super::Credentials::Include), the default |
/// | `CancelPreviousLayer` | some read cancels the previous one (`cancel_previous`, `deduplicate`) |
/// | [`ProxyCallerBuilder::layer`](super::ProxyCallerBuilder::layer)s | any |
/// | `CoalesceLayer` | always; it shares reads whose `coalesce` resolves to true |
/// | the transport | the call's `fetch` or `dispatcher`, else the builder's |
///
/// A call's timeout (the caller's, else the call's own) is its deadline, kept around the whole
/// call: the stack and the reading of the body. No retry: the proxy's own client retries the
/// upstream call. It is the
/// [`Dispatch`] a `ProxyCaller`'s typed views run on; cheap to clone.
#[derive(Clone)]
pub struct ProxyClient {
    inner: Arc<Inner>,
}

struct Inner {
    api: ApiDef,
    route: Route,
    transports: TransportCache,
    stack: Stack,
    /// The stack over the default transport.
    service: HttpService,
    ws: WsOptions,
}

/// The caller's layers, each shared by every endpoint.
struct Stack {
    jar: Option<Jar>,
    cancel_previous: Option<CancelPreviousLayer>,
    layers: Vec<Middleware>,
    coalesce: CoalesceLayer,
}

impl Stack {
    /// The stack over `transport`.
    fn service(&self, transport: TransportService) -> HttpService {
        // The call's deadline is kept around the whole call (`read::Deadline`), above
        // coalescing: each caller's wait is bounded by its own timeout.
        let core = ServiceBuilder::new()
            .map_response(|response: Response<CoalesceBody<Body>>| response.map(Body::from))
            .layer(self.coalesce.clone())
            .service(transport);
        let mut service = HttpService::new(core);
        for layer in self.layers.iter().rev() {
            service = layer.apply(service);
        }
        if let Some(cancel_previous) = &self.cancel_previous {
            service = HttpService::new(cancel_previous.layer(service));
        }
        match &self.jar {
            Some(jar) => HttpService::new(jar.layer(service)),
            None => service,
        }
    }
}

impl ProxyClient {
    /// The client for `api`'s endpoints through `route`, over `transports`.
    pub(super) fn new(
        api: ApiDef,
        route: Route,
        transports: TransportCache,
        layers: Vec<Middleware>,
        jar: Option<Jar>,
        ws: WsOptions,
    ) -> Result<Self, Error> {
        let stack = Stack {
            jar,
            cancel_previous: route.cancels_previous().then(CancelPreviousLayer::new),
            layers,
            coalesce: CoalesceLayer::new(),
        };
        let transport = transports
            .transport(&courier_core::TransportOptions::default())
            .map_err(Error::transport)?;
        let service = stack.service(transport);
        Ok(Self {
            inner: Arc::new(Inner {
                api,
                route,
                transports,
                stack,
                service,
                ws,
            }),
        })
    }

    /// The API the caller's typed views are built from (the routes' shape, or the source).
    pub fn api(&self) -> &ApiDef {
        &self.inner.api
    }

    /// The settings of the sockets the caller's channels open.
    pub fn ws_options(&self) -> &WsOptions {
        &self.inner.ws
    }

    async fn execute<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let work = pin!(self.send::<R>(endpoint, variables, options));
        let result = read::unless_cancelled(
            options.and_then(CallOptions::get_signal),
            self.inner.api.options().signal.as_ref(),
            work,
        )
        .await
        .map_err(|e| e.with_endpoint(endpoint.path()));
        self.inner.route.report(endpoint.path(), &result);
        result
    }

    async fn send<R: FromResponse>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<HttpResponse<R>, Error> {
        let route = &self.inner.route;
        let mut request = self.request(endpoint, variables, options)?;
        let mut meta = route.meta(endpoint, options);
        let reading = Reading::of(&mut meta);
        request.extensions_mut().insert(meta);
        crate::progress::watch_upload(&mut request, options);
        let answer = async {
            let response = self.dispatch(request, options).await?;
            reading.head_came();
            let read_as = route.read_as(response.headers());
            let api = &self.inner.api;
            read::response(api, endpoint, response, false, read_as, &reading).await
        };
        reading.bound(answer).await
    }

    /// `endpoint`'s call written as the proxy route's wire, with its variables kept on it when a
    /// mock answers.
    fn request(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        let sent = Sent::kept(&self.inner.transports, &variables);
        let mut request = self.inner.route.request(endpoint, variables, options)?;
        Sent::put(sent, &mut request);
        Ok(request)
    }

    /// Sends `request` through the caller's stack: over the call's own transport when its
    /// options set `fetch` or `dispatcher`, else the builder's.
    async fn dispatch(
        &self,
        request: Request<Body>,
        options: Option<&CallOptions>,
    ) -> Result<Response<Body>, Error> {
        let own = options.filter(|o| !o.transport().is_empty());
        let service = match own {
            None => self.inner.service.clone(),
            Some(options) => {
                let transport = self
                    .inner
                    .transports
                    .transport(options.transport())
                    .map_err(Error::transport)?;
                self.inner.stack.service(transport)
            }
        };
        service.oneshot(request).await.map_err(Error::from_stack)
    }
}

impl Dispatch for ProxyClient {
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
        let variables = Opener::variables(self, endpoint, request.variables)?;
        self.execute(endpoint, variables, request.options).await
    }
}

impl Opener for ProxyClient {
    fn api(&self) -> &ApiDef {
        &self.inner.api
    }

    fn hub(&self) -> Option<&courier_live::Hub> {
        None
    }

    // Raw bytes are refused (`PROXY_VARIABLE_NOT_SERIALIZABLE`) before anything is sent.
    fn variables<V: IntoVariables>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: V,
    ) -> Result<Variables, Error> {
        if let Some(at) = variables.raw_bytes() {
            return Err(super::not_serializable(
                endpoint.path(),
                format!("`{at}` holds raw bytes, which JSON cannot carry: send files in a `Form`"),
            ));
        }
        read::variables(endpoint, variables)
    }

    fn hello_headers(&self) -> Option<&HeaderMap> {
        Some(&self.inner.route.headers)
    }

    fn refused(&self, error: &Error) {
        self.inner.route.refused(error);
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
            let opened = async {
                let mut request = self.request(endpoint, variables, options)?;
                handshake_request(&mut request, headers, param)?;
                let mut meta = self.inner.route.meta(endpoint, options);
                // The deadline bounds the answer's head; its body streams on.
                let reading = Reading::of(&mut meta);
                request.extensions_mut().insert(meta);
                reading.bound(self.dispatch(request, options)).await
            };
            opened.await.map_err(|e| e.with_endpoint(endpoint.path()))
        })
    }
}

impl fmt::Debug for ProxyClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyClient")
            .field("api", &self.inner.api)
            .finish_non_exhaustive()
    }
}
