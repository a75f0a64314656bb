//! [`ForwardLayer`]: a call made while serving a request carries that request's tracing and
//! client headers.
//!
//! For each outgoing request the layer looks for the request being served
//! ([`ServedRequest::for_request`]: one given in the request's extensions, else the one a
//! [`ContextLayer`](crate::context::ContextLayer) put in scope). Without one, or when the
//! layer's [`ForwardFor`] says [`Forwarding::Off`] for the call, the request passes untouched.
//! Otherwise it copies, as [`ForwardOptions`] asks:
//!
//! | item | header(s) sent | value |
//! |---|---|---|
//! | `request_id` | `x-request-id`, or the toggle's own name | the served request's tower-http [`RequestId`] extension (set by `SetRequestIdLayer`), else its header of that name |
//! | `trace` | `traceparent`, `tracestate` | the served request's |
//! | `client_address` | `x-forwarded-for` | the served request's `x-forwarded-for` chain with the peer's IP appended: `a, b, peer` |
//! | `client_address` naming a header | that header | the peer's IP alone |
//! | `user_agent` | `user-agent` | the served request's |
//! | `locale` | `accept-language` | the served request's |
//! | `headers` | each named header | the served request's |
//!
//! The default [`ForwardFor`] is [`FromMeta`]: off when the request's
//! [`EndpointMeta::forwards`] is false (the endpoint's `forward: false`), with the cookies when
//! its allowed headers name `cookie`, on otherwise. A closure
//! `Fn(&Request<B>) -> Forwarding` decides instead with [`ForwardLayer::forward_for`].
//!
//! # Choices
//!
//! - **A header already on the outgoing request wins.** A header set by the source, a
//!   middleware, an endpoint's closure or an outer layer (the session's `cookie`) is left as it
//!   is, and the served copy is dropped: never sent in its place, never beside it.
//! - **Cookies cross only where named.** The served request's cookies are forwarded only when
//!   `cookie` is in `headers` or the call is [`Forwarding::WithCookies`] (by default, when
//!   the endpoint's allowed headers name it: [`EndpointMeta::get_allowed_headers`]); several `cookie` headers (as HTTP/2 sends them)
//!   go as one, joined by `; `, as HTTP/1.1 requires. A session's cookies are the
//!   [`SessionLayer`](crate::session::SessionLayer)'s business, which sits outside this layer
//!   and so wins.
//! - **The client address needs the peer.** When the peer's address is unknown nothing is
//!   sent, not even the served chain: a backend trusts the last entry as the one its own proxy
//!   added, and without the peer that entry would be whatever the client wrote. An IPv4 peer
//!   reached over an IPv6 socket (`::ffff:a.b.c.d`) is written in IPv4 form. A `client_address`
//!   naming `x-forwarded-for` itself means the chain, as `true` does.
//! - **Headers that describe the message are never forwarded**, even when named: `host`,
//!   `content-type`, `content-length`, `content-encoding` and the hop-by-hop headers
//!   (`connection`, `keep-alive`, `proxy-connection`, `te`, `trailer`, `transfer-encoding`,
//!   `upgrade`, `proxy-authenticate`, `proxy-authorization`: RFC 9110 §7.6.1). The
//!   outgoing request has its own body and connection.
//! - A name in the options that is not a valid header name is ignored: no request could carry it.
//!
//! # Compared with tower-http
//!
//! tower-http's `PropagateHeaderLayer` copies a header from a request to *its own* response, and
//! `SetRequestHeaderLayer` sets a fixed or computed value. This layer copies from a different
//! request, the one being served, to the calls made while serving it. It changes only headers,
//! so it needs no future of its own and keeps the inner service's error type.
//!
//! # Example: what crosses
//!
//! ```
//! use courier::layers::context::ServedRequest;
//! use courier::layers::forward::ForwardLayer;
//! use courier::options::ForwardOptions;
//! use courier::transport::Body;
//! use http::{Request, Response};
//! use std::convert::Infallible;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let backend = tower::service_fn(|request: Request<Body>| async move {
//!     // The backend answers with the headers it received.
//!     let mut response = Response::new(Body::empty());
//!     *response.headers_mut() = request.headers().clone();
//!     Ok::<_, Infallible>(response)
//! });
//! let client = ServiceBuilder::new()
//!     .layer(ForwardLayer::new(
//!         ForwardOptions::new()
//!             .request_id(true)
//!             .trace(true)
//!             .client_address(true)
//!             .headers(["x-tenant"]),
//!     ))
//!     .service(backend);
//!
//! // The request a server is serving (normally put in scope by `ContextLayer`).
//! let (served, ()) = Request::get("/dashboard")
//!     .header("x-request-id", "req-1")
//!     .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
//!     .header("x-forwarded-for", "203.0.113.7")
//!     .header("x-tenant", "acme")
//!     .header("cookie", "sid=secret")
//!     .body(())?
//!     .into_parts();
//! let served = ServedRequest::new(served, Some(([192, 0, 2, 10], 51000).into()));
//!
//! let call = Request::get("http://127.0.0.1:9000/reports").body(Body::empty())?;
//! let echoed = served.scope(client.oneshot(call)).await?;
//! let headers = echoed.headers();
//! assert_eq!(headers["x-request-id"], "req-1");
//! assert_eq!(headers["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
//! assert_eq!(headers["x-forwarded-for"], "203.0.113.7, 192.0.2.10");
//! assert_eq!(headers["x-tenant"], "acme");
//! assert!(headers.get("cookie").is_none(), "cookies cross only where named");
//! # Ok(())
//! # }
//! ```
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: the request id and the tenant go to the company's own services, and a
//! closure keeps them from a third party's.
//!
//! ```
//! use courier::layers::context::ServedRequest;
//! use courier::layers::forward::{ForwardLayer, Forwarding};
//! use courier::options::ForwardOptions;
//! use http::Request;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let echo = |headers: http::HeaderMap| async move {
//! #     let named = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
//! #     format!("{:?} {:?}", named("x-request-id"), named("x-tenant"))
//! # };
//! # let app = axum::Router::new().route("/{*path}", axum::routing::get(echo));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let forward = ForwardLayer::new(ForwardOptions::new().request_id(true).headers(["x-tenant"]))
//!     .forward_for(|request: &Request<String>| match request.uri().path().starts_with("/partner/") {
//!         true => Forwarding::Off,
//!         false => Forwarding::On,
//!     });
//! let service = ServiceBuilder::new().layer(forward).service(client);
//!
//! // The request being served, as `ContextLayer` puts it in scope.
//! let (served, ()) = Request::get("/orders")
//!     .header("x-request-id", "req-1")
//!     .header("x-tenant", "acme")
//!     .body(())?
//!     .into_parts();
//! let served = ServedRequest::new(served, None);
//!
//! let echoed = |path: &str| {
//!     let request = Request::get(format!("http://{addr}{path}")).body(String::new());
//!     let (service, served) = (service.clone(), served.clone());
//!     async move {
//!         let response = served.scope(service.oneshot(request?)).await?;
//!         let body = http_body_util::BodyExt::collect(response.into_body()).await?;
//!         Ok::<_, courier::BoxError>(body.to_bytes())
//!     }
//! };
//! assert_eq!(echoed("/billing/invoices").await?, r#"Some("req-1") Some("acme")"#);
//! assert_eq!(echoed("/partner/rates").await?, "None None");
//! # Ok(())
//! # }
//! ```

#[cfg(test)]
mod tests;

use crate::FromMeta;
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::headers::never_crosses;
use courier_core::{EndpointMeta, ForwardOptions, HeaderToggle};
use http::header::{
    ACCEPT_LANGUAGE, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, USER_AGENT,
};
use http::{HeaderMap, HeaderName, HeaderValue, Request};
use std::io::Write as _;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};
use tower_http::request_id::RequestId;

const X_REQUEST_ID: &str = "x-request-id";
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// Carries the served request's headers on outgoing calls; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct ForwardLayer<F = FromMeta> {
    config: Arc<Config>,
    forward_for: F,
}

/// What [`Forward`] copies from the served request onto one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forwarding {
    /// Nothing: the call goes as it is.
    Off,
    /// What the [`ForwardOptions`] name.
    On,
    /// What the [`ForwardOptions`] name, and the served request's cookies even where the options
    /// do not name `cookie`.
    WithCookies,
}

/// Whether [`Forward`] copies the served request's headers onto a call, and its cookies.
///
/// Implemented by [`FromMeta`] (off for an [`EndpointMeta`] with `forward: false`, with the
/// cookies when its allowed headers name `cookie`, on otherwise and without one) and by any
/// `Fn(&Request<B>) -> Forwarding`.
pub trait ForwardFor<B> {
    /// What is copied onto the call `request` makes.
    fn forward_for(&self, request: &Request<B>) -> Forwarding;
}

impl<B> ForwardFor<B> for FromMeta {
    fn forward_for(&self, request: &Request<B>) -> Forwarding {
        match request.extensions().get::<EndpointMeta>() {
            None => Forwarding::On,
            Some(meta) if !meta.forwards() => Forwarding::Off,
            Some(meta) if meta.get_allowed_headers().contains(&COOKIE) => Forwarding::WithCookies,
            Some(_) => Forwarding::On,
        }
    }
}

impl<B, F> ForwardFor<B> for F
where
    F: Fn(&Request<B>) -> Forwarding,
{
    fn forward_for(&self, request: &Request<B>) -> Forwarding {
        self(request)
    }
}

impl ForwardLayer {
    /// A layer that forwards what `options` names.
    pub fn new(options: ForwardOptions) -> Self {
        Self {
            config: Arc::new(Config::new(&options)),
            forward_for: FromMeta,
        }
    }
}

impl<F> ForwardLayer<F> {
    /// Decides with `forward_for` what each call carries, instead of its [`EndpointMeta`].
    pub fn forward_for<G>(self, forward_for: G) -> ForwardLayer<G> {
        ForwardLayer {
            config: self.config,
            forward_for,
        }
    }
}

impl<S, F: Clone> Layer<S> for ForwardLayer<F> {
    type Service = Forward<S, F>;

    fn layer(&self, inner: S) -> Self::Service {
        Forward {
            inner,
            config: Arc::clone(&self.config),
            forward_for: self.forward_for.clone(),
        }
    }
}

/// The service [`ForwardLayer`] makes.
#[derive(Clone, Debug)]
pub struct Forward<S, F = FromMeta> {
    inner: S,
    config: Arc<Config>,
    forward_for: F,
}

impl<S> Forward<S> {
    /// Wraps `inner`, forwarding what `options` names.
    pub fn new(inner: S, options: ForwardOptions) -> Self {
        ForwardLayer::new(options).layer(inner)
    }

    /// A [`ForwardLayer`], for `ServiceBuilder`.
    pub fn layer(options: ForwardOptions) -> ForwardLayer {
        ForwardLayer::new(options)
    }
}

impl<S, F> Forward<S, F> {
    define_inner_service_accessors!();
}

impl<S, F, B> Service<Request<B>> for Forward<S, F>
where
    S: Service<Request<B>>,
    F: ForwardFor<B>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let forwarding = self.forward_for.forward_for(&request);
        if forwarding != Forwarding::Off {
            if let Some(served) = ServedRequest::for_request(&request) {
                let with_cookies = forwarding == Forwarding::WithCookies;
                self.config
                    .apply(&served, request.headers_mut(), with_cookies);
            }
        }
        self.inner.call(request)
    }
}

/// The options, parsed once.
#[derive(Debug)]
struct Config {
    request_id: Option<HeaderName>,
    trace: bool,
    client_address: ClientAddress,
    user_agent: bool,
    locale: bool,
    headers: Vec<HeaderName>,
    cookie: bool,
}

#[derive(Debug)]
enum ClientAddress {
    Off,
    ForwardedFor,
    Header(HeaderName),
}

fn header_name(name: &str) -> Option<HeaderName> {
    HeaderName::from_bytes(name.trim().as_bytes()).ok()
}

/// Headers that describe the message or a connection are never copied from another request.
fn forwardable(name: &HeaderName) -> bool {
    !never_crosses(name)
        && name != CONTENT_TYPE
        && name != CONTENT_LENGTH
        && name != CONTENT_ENCODING
}

impl Config {
    fn new(options: &ForwardOptions) -> Self {
        let client_address = match &options.client_address {
            HeaderToggle::Enabled(false) => ClientAddress::Off,
            HeaderToggle::Enabled(true) => ClientAddress::ForwardedFor,
            HeaderToggle::Header(name) => match header_name(name) {
                Some(name) if name == X_FORWARDED_FOR => ClientAddress::ForwardedFor,
                Some(name) if forwardable(&name) => ClientAddress::Header(name),
                _ => ClientAddress::Off,
            },
        };
        let mut cookie = false;
        let mut headers = Vec::new();
        for name in options.headers.iter().filter_map(|name| header_name(name)) {
            if name == COOKIE {
                cookie = true;
            } else if forwardable(&name) && !headers.contains(&name) {
                headers.push(name);
            }
        }
        Self {
            request_id: options
                .request_id
                .header_or(X_REQUEST_ID)
                .and_then(header_name)
                .filter(forwardable),
            trace: options.trace,
            client_address,
            user_agent: options.user_agent,
            locale: options.locale,
            headers,
            cookie,
        }
    }

    fn apply(&self, served: &ServedRequest, to: &mut HeaderMap, cookie_allowed: bool) {
        let from = served.headers();

        if let Some(name) = &self.request_id {
            if !to.contains_key(name) {
                let id = served
                    .parts()
                    .extensions
                    .get::<RequestId>()
                    .map(RequestId::header_value)
                    .or_else(|| from.get(name));
                if let Some(id) = id {
                    to.insert(name.clone(), id.clone());
                }
            }
        }

        if self.trace {
            copy(from, to, &TRACEPARENT);
            copy(from, to, &TRACESTATE);
        }

        match &self.client_address {
            ClientAddress::Off => {}
            ClientAddress::ForwardedFor => {
                if let (false, Some(peer)) = (to.contains_key(&X_FORWARDED_FOR), served.peer()) {
                    let hops = from.get_all(&X_FORWARDED_FOR);
                    // The chain and the peer's address (at most 39 bytes), written in one buffer
                    // that becomes the header's value.
                    let mut chain =
                        Vec::with_capacity(hops.iter().map(|h| h.len() + 2).sum::<usize>() + 39);
                    for hop in hops {
                        let hop = hop.as_bytes().trim_ascii();
                        if !hop.is_empty() {
                            chain.extend_from_slice(hop);
                            chain.extend_from_slice(b", ");
                        }
                    }
                    // Writing to a `Vec` cannot fail.
                    let _ = write!(chain, "{}", peer.ip().to_canonical());
                    if let Ok(chain) = HeaderValue::from_maybe_shared(Bytes::from(chain)) {
                        to.insert(X_FORWARDED_FOR, chain);
                    }
                }
            }
            ClientAddress::Header(name) => {
                if let (false, Some(peer)) = (to.contains_key(name), served.peer()) {
                    let ip = peer.ip().to_canonical().to_string();
                    if let Ok(ip) = HeaderValue::from_str(&ip) {
                        to.insert(name.clone(), ip);
                    }
                }
            }
        }

        if self.user_agent {
            copy(from, to, &USER_AGENT);
        }
        if self.locale {
            copy(from, to, &ACCEPT_LANGUAGE);
        }
        for name in &self.headers {
            copy(from, to, name);
        }

        if (self.cookie || cookie_allowed) && !to.contains_key(COOKIE) {
            let mut joined = Vec::new();
            for value in from.get_all(COOKIE) {
                let value = value.as_bytes().trim_ascii();
                if !value.is_empty() {
                    if !joined.is_empty() {
                        joined.extend_from_slice(b"; ");
                    }
                    joined.extend_from_slice(value);
                }
            }
            if let Ok(mut cookie) = HeaderValue::from_bytes(&joined) {
                if !joined.is_empty() {
                    cookie.set_sensitive(true);
                    to.insert(COOKIE, cookie);
                }
            }
        }
    }
}

/// Copies every value of `name` from the served request, unless the outgoing one has it.
fn copy(from: &HeaderMap, to: &mut HeaderMap, name: &HeaderName) {
    if to.contains_key(name) {
        return;
    }
    for value in from.get_all(name) {
        to.append(name.clone(), value.clone());
    }
}
