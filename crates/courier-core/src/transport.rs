//! Transport overrides and middleware as descriptors: [`Fetch`], [`Dispatcher`] and
//! [`Middleware`]. They are stored in the tree here and put to work by `courier-client`.

use crate::body::{Body, BoxError};
use http::{Request, Response, Uri};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service, ServiceExt};

/// The future of an [`HttpService`] call.
pub type HttpFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

/// The type-erased HTTP service every courier transport and stack is: a `tower::Service` from
/// `http::Request<Body>` to `http::Response<Body>`.
///
/// Cloning one is a reference-count increment: the wrapped service sits behind an `Arc`, and
/// each call runs on a fresh clone of it, driven to readiness inside the returned future
/// (tower's "clone, then `oneshot`" pattern). So [`poll_ready`](Service::poll_ready) is always
/// ready and a call costs one allocation, its boxed future, however often the service is cloned
/// on the way (layers such as retry and coalescing clone their inner service for every call).
///
/// ```
/// use courier::transport::{Body, HttpService};
/// use http::{Request, Response};
/// use tower::{service_fn, ServiceExt};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = HttpService::new(service_fn(|_: Request<Body>| async {
///     Ok::<_, std::convert::Infallible>(Response::new(Body::from("ok")))
/// }));
/// let response = service.clone().oneshot(Request::new(Body::empty())).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # });
/// ```
#[derive(Clone)]
pub struct HttpService(Arc<dyn Erased>);

/// A service a courier stack can hold — a transport, a middleware's service: from
/// `Request<Body>` to `Response<Body>`, its error any error, its future `Send`, and itself
/// `Clone + Send + Sync + 'static`. Every tower service with those properties is one; it names
/// the bound once, for the functions that take one.
pub trait BodyService:
    Service<Request<Body>, Response = Response<Body>, Error: Into<BoxError>, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> BodyService for S where
    S: Service<
            Request<Body>,
            Response = Response<Body>,
            Error: Into<BoxError>,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// A service that can be called through a shared reference, by cloning it first.
trait Erased: Send + Sync {
    fn call(&self, request: Request<Body>) -> HttpFuture;
}

impl<S: BodyService> Erased for S {
    fn call(&self, request: Request<Body>) -> HttpFuture {
        let service = self.clone();
        Box::pin(async move { service.oneshot(request).await.map_err(Into::into) })
    }
}

impl HttpService {
    /// Wraps a service.
    pub fn new<S: BodyService>(service: S) -> Self {
        Self(Arc::new(service))
    }
}

impl Service<Request<Body>> for HttpService {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = HttpFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> HttpFuture {
        self.0.call(request)
    }
}

impl fmt::Debug for HttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpService(..)")
    }
}

/// A replacement transport for a source or group: any `tower::Service` from `http::Request<Body>`
/// to `http::Response<Body>`.
///
/// ```
/// use courier::transport::{Body, Fetch};
/// use http::{Request, Response};
///
/// let fetch = Fetch::new(tower::service_fn(|_req: Request<Body>| async {
///     Ok::<_, std::convert::Infallible>(Response::new(Body::from("{}")))
/// }));
/// # let _ = fetch;
/// ```
#[derive(Clone)]
pub struct Fetch(HttpService);

impl Fetch {
    /// Wraps a service as a transport.
    pub fn new<S: BodyService>(service: S) -> Self {
        Self(HttpService::new(service))
    }

    /// The transport as a boxed service.
    pub fn service(&self) -> HttpService {
        self.0.clone()
    }
}

impl fmt::Debug for Fetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fetch(..)")
    }
}

/// A client identity for mutual TLS: a certificate chain and its private key, PEM-encoded.
#[derive(Clone)]
pub struct ClientIdentity {
    /// The certificate chain, PEM.
    pub cert_pem: Vec<u8>,
    /// The private key, PEM.
    pub key_pem: Vec<u8>,
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

/// How connections are made for a source or group (what Bun's `proxy` / `tls` and Deno's
/// `client` fetch options carry in JavaScript): an HTTP proxy, a client certificate, extra
/// trusted roots.
///
/// courier-client builds its connector from these; a fully custom connector replaces the whole
/// transport through [`Fetch`].
#[derive(Clone, Debug, Default)]
pub struct Dispatcher {
    /// An HTTP proxy (`http://host:port`) every connection goes through.
    pub proxy: Option<Uri>,
    /// A client certificate and key presented to servers that ask for one.
    pub identity: Option<ClientIdentity>,
    /// Extra trusted root certificates, PEM.
    pub root_certs: Vec<Vec<u8>>,
}

impl Dispatcher {
    /// A dispatcher with nothing set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Connects through an HTTP proxy.
    #[must_use]
    pub fn proxy(mut self, proxy: Uri) -> Self {
        self.proxy = Some(proxy);
        self
    }

    /// Presents a client certificate.
    #[must_use]
    pub fn identity(mut self, identity: ClientIdentity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// Trusts a further root certificate (PEM).
    #[must_use]
    pub fn root_cert(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certs.push(pem.into());
        self
    }
}

/// The transport settings a source or group may set; the nearest group that sets each wins over
/// the source, and a call's own options win over both.
#[derive(Clone, Debug, Default)]
pub struct TransportOptions {
    /// A replacement HTTP transport.
    pub fetch: Option<Fetch>,
    /// How connections are made.
    pub dispatcher: Option<Dispatcher>,
}

impl TransportOptions {
    /// Whether neither `fetch` nor `dispatcher` is set: the default transport applies.
    pub fn is_empty(&self) -> bool {
        self.fetch.is_none() && self.dispatcher.is_none()
    }

    /// Each setting of `self` where set, else `outer`'s: `self` is the nearer level.
    pub fn over(&self, outer: &TransportOptions) -> TransportOptions {
        TransportOptions {
            fetch: self.fetch.clone().or_else(|| outer.fetch.clone()),
            dispatcher: self.dispatcher.clone().or_else(|| outer.dispatcher.clone()),
        }
    }
}

/// A tower layer given to a source's `middleware` or an endpoint's `.use()`, type-erased so the
/// tree can hold layers of any type.
///
/// ```
/// use courier::transport::Middleware;
/// use std::time::Duration;
///
/// let mw = Middleware::new("concurrency", tower::limit::ConcurrencyLimitLayer::new(8));
/// assert_eq!(mw.name(), "concurrency");
/// ```
#[derive(Clone)]
pub struct Middleware {
    name: Arc<str>,
    wrap: Arc<dyn Fn(HttpService) -> HttpService + Send + Sync>,
}

impl Middleware {
    /// Wraps a tower layer; `name` shows in `Debug` output and logs.
    pub fn new<L>(name: impl Into<Arc<str>>, layer: L) -> Self
    where
        L: Layer<HttpService, Service: BodyService> + Send + Sync + 'static,
    {
        Self {
            name: name.into(),
            wrap: Arc::new(move |inner| HttpService::new(layer.layer(inner))),
        }
    }

    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Wraps `inner` in this middleware.
    pub fn apply(&self, inner: HttpService) -> HttpService {
        (self.wrap)(inner)
    }
}

impl fmt::Debug for Middleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Middleware").field(&self.name).finish()
    }
}
