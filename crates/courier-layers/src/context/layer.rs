//! [`ContextLayer`] and its service.

use super::future;

use courier_core::context::ServedRequest;
use http::request::Parts;
use http::{HeaderMap, Request, Response};
use std::fmt;
use std::net::SocketAddr;
use std::task::Poll;
use tower::{Layer, Service};

/// Where the peer's address of a served request comes from.
///
/// Implemented by [`PeerFromExtensions`] (the default) and by any
/// `Fn(&http::request::Parts) -> Option<SocketAddr>`:
///
/// ```
/// use courier::layers::context::ContextLayer;
/// use http::request::Parts;
/// use std::net::SocketAddr;
///
/// // A server behind a socket whose peer it stores in an extension type of its own.
/// #[derive(Clone)]
/// struct Remote(SocketAddr);
///
/// let layer = ContextLayer::new()
///     .peer_address(|parts: &Parts| parts.extensions.get::<Remote>().map(|remote| remote.0));
/// # let _ = layer;
/// ```
pub trait PeerAddress {
    /// The peer's address for the request with this head, if known.
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr>;
}

impl<F> PeerAddress for F
where
    F: Fn(&Parts) -> Option<SocketAddr>,
{
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr> {
        self(parts)
    }
}

/// Reads the peer's address from the request's extensions: a [`SocketAddr`], else (with the
/// `axum` feature) axum's `ConnectInfo<SocketAddr>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerFromExtensions;

impl PeerAddress for PeerFromExtensions {
    fn peer_address(&self, parts: &Parts) -> Option<SocketAddr> {
        if let Some(addr) = parts.extensions.get::<SocketAddr>() {
            return Some(*addr);
        }
        #[cfg(feature = "axum")]
        if let Some(info) = parts
            .extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
        {
            return Some(info.0);
        }
        None
    }
}

/// Puts each served request in scope for the calls its handler makes; see the
/// [module docs](super).
#[derive(Clone, Default)]
pub struct ContextLayer<P = PeerFromExtensions> {
    peer: P,
}

impl ContextLayer {
    /// A layer that reads the peer's address from the request's extensions.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<P> ContextLayer<P> {
    /// Reads the peer's address with `peer` instead.
    pub fn peer_address<Q: PeerAddress>(self, peer: Q) -> ContextLayer<Q> {
        ContextLayer { peer }
    }
}

impl<P> fmt::Debug for ContextLayer<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextLayer")
            .field("peer", &std::any::type_name::<P>())
            .finish()
    }
}

impl<S, P: Clone> Layer<S> for ContextLayer<P> {
    type Service = Context<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Context {
            inner,
            peer: self.peer.clone(),
        }
    }
}

/// The service [`ContextLayer`] makes: runs `S` with each served request in scope.
#[derive(Clone)]
pub struct Context<S, P = PeerFromExtensions> {
    inner: S,
    peer: P,
}

impl<S> Context<S> {
    /// Wraps `inner`, reading the peer's address from the request's extensions.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            peer: PeerFromExtensions,
        }
    }

    /// A [`ContextLayer`], for `ServiceBuilder`.
    pub fn layer() -> ContextLayer {
        ContextLayer::new()
    }
}

impl<S, P> Context<S, P> {
    define_inner_service_accessors!();
}

impl<S: fmt::Debug, P> fmt::Debug for Context<S, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("inner", &self.inner)
            .field("peer", &std::any::type_name::<P>())
            .finish()
    }
}

impl<S, P, ReqBody, ResBody> Service<Request<ReqBody>> for Context<S, P>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    P: PeerAddress,
    ReqBody: Send + 'static,
    ResBody: Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = future::ResponseFuture<Response<ResBody>, S::Error>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        let peer = self.peer.peer_address(&parts);
        // The copy is taken before the context joins the extensions, so the context never
        // holds itself.
        let served = ServedRequest::new(parts.clone(), peer);
        parts.extensions.insert(served.clone());
        let request = Request::from_parts(parts, body);

        // The inner service is called inside the scope too, not only polled there: a service
        // whose `call` starts an outgoing call right away must see the context. That needs the
        // instance `poll_ready` prepared, so it moves into the future and a clone stays here.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let scope = served.clone();
        future::ResponseFuture::new(scope.scope(async move {
            let mut response = inner.call(request).await?;
            append(response.headers_mut(), served.take_response_headers());
            Ok(response)
        }))
    }
}

/// Appends every value of `added` to `headers`, keeping what is there.
fn append(headers: &mut HeaderMap, added: HeaderMap) {
    let mut name = None;
    for (next, value) in added {
        if next.is_some() {
            name = next;
        }
        if let Some(name) = &name {
            headers.append(name, value);
        }
    }
}
