//! [`AllowHeadersLayer`]: only allow-listed headers cross a proxy, in both directions.
//!
//! A proxy between a browser and an upstream must not pass on whatever a page sends, nor hand a
//! page whatever the upstream answers. This layer sits in front of the service that makes the
//! upstream call, takes the **browser's request**, and:
//!
//! - **on the way in**, keeps only the headers whose names are allow-listed: those the layer's
//!   [`AllowFor`] gives for the call and those given with [`AllowHeadersLayer::allow`]. The
//!   default [`AllowFor`], [`FromMeta`], gives the request's
//!   [`EndpointMeta::get_allowed_headers`] (the source's `allowed_headers` and the endpoint's
//!   `.headers([...])`); a closure `Fn(&Request<B>) -> Vec<HeaderName>` gives them instead with
//!   [`AllowHeadersLayer::allow_for`]. A name the source
//!   sets itself ([`AllowHeadersLayer::source_headers`]) is dropped, so the source's value wins
//!   over the browser's copy.
//! - **on the way out**, keeps only the allow-listed names of the upstream's response, and
//!   `content-type`, `content-length` and `content-encoding`, which describe the body passed
//!   back.
//!
//! The rules:
//!
//! - `content-type`, `content-length` and `content-encoding` are never taken from the lists: on
//!   the way in they are the browser's envelope (the proxy sends a body of its own), so they
//!   are dropped even when listed; on the way out they always pass.
//! - `cookie` crosses in and `set-cookie` crosses out only where named; `cookie` never goes
//!   back to the browser, even when named.
//! - `host` and the hop-by-hop headers (`connection` and every header it names, `keep-alive`,
//!   `proxy-connection`, `te`, `trailer`, `transfer-encoding`, `upgrade`,
//!   `proxy-authenticate`, `proxy-authorization`) never cross, in either direction, whatever
//!   the lists say (RFC 9110 §7.6.1); a definition that lists one is refused when it
//!   is built, and the layer drops them all the same for a list made some other way.
//! - Every other header crosses only where named: a request for which the [`AllowFor`] gives
//!   nothing (by default, one without an `EndpointMeta`) passes only the layer's own names.
//!
//! Courier's proxy applies one such layer's rules to every call, stream and socket: it names
//! the browser's headers that cross ([`AllowHeadersLayer::relayed_names`]) for the client to
//! put under the call's own, and filters the answer ([`AllowHeadersLayer::filter_response`]),
//! rather than filtering a copy of the browser's head, which the session and forwarding still
//! read whole: that copy cost a proxied read 12.3 % of its instructions with the twelve headers
//! a browser sends with a `fetch` (callgrind).
//!
//! tower-http has no layer for this: its header layers set, override or propagate named
//! headers; here every header not named is dropped, and which names pass depends on each
//! call's endpoint.
//!
//! ```
//! use courier::layers::allow_headers::AllowHeadersLayer;
//! use courier::tree::{EndpointMeta, Kind};
//! use http::{HeaderName, Request, Response};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let upstream = service_fn(|request: Request<()>| async move {
//!     // What reaches the upstream call: the allow-listed header only.
//!     assert!(request.headers().contains_key("x-tenant"));
//!     assert!(!request.headers().contains_key("x-internal"));
//!     Ok::<_, std::convert::Infallible>(
//!         Response::builder()
//!             .header("x-tenant", "acme")
//!             .header("server", "upstream/1.0")
//!             .body(())
//!             .unwrap(),
//!     )
//! });
//! let service = AllowHeadersLayer::new().layer(upstream);
//! let meta = EndpointMeta::new("users.get", Kind::Query)
//!     .allowed_headers([HeaderName::from_static("x-tenant")]);
//! let request = Request::builder()
//!     .header("x-tenant", "acme")
//!     .header("x-internal", "secret")
//!     .extension(meta)
//!     .body(())
//!     .unwrap();
//! let response = service.oneshot(request).await.unwrap();
//! assert_eq!(response.headers()["x-tenant"], "acme");
//! assert!(!response.headers().contains_key("server"));
//! # }
//! ```
//!
//! # Example: on a bare hyper-util client
//!
//! No courier definition: every call may carry `x-tenant`, calls under `/debug/` `x-debug`
//! too, and nothing else crosses either way but the body's own headers.
//!
//! ```
//! use courier::layers::allow_headers::AllowHeadersLayer;
//! use http::{HeaderName, Request};
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), courier::BoxError> {
//! # let echo = |headers: http::HeaderMap| async move {
//! #     let mut names: Vec<&str> = headers.keys().map(|name| name.as_str()).collect();
//! #     names.sort_unstable();
//! #     ([("x-tenant", "acme"), ("server", "upstream/1.0")], names.join(","))
//! # };
//! # let app = axum::Router::new().route("/{*path}", axum::routing::get(echo));
//! # let addr = courier_test_support::serve(app).await;
//! let client = Client::builder(TokioExecutor::new()).build_http::<String>();
//! let allow = AllowHeadersLayer::new()
//!     .allow([HeaderName::from_static("x-tenant")])
//!     .allow_for(|request: &Request<String>| match request.uri().path().starts_with("/debug/") {
//!         true => vec![HeaderName::from_static("x-debug")],
//!         false => Vec::new(),
//!     });
//! let service = ServiceBuilder::new().layer(allow).service(client);
//!
//! let call = |path: &str| {
//!     Request::get(format!("http://{addr}{path}"))
//!         .header("x-tenant", "acme")
//!         .header("x-debug", "1")
//!         .header("x-internal", "secret")
//!         .body(String::new())
//! };
//! let response = service.clone().oneshot(call("/debug/users")?).await?;
//! // What crossed out: the allow-listed name and the body's own headers; not `server`.
//! assert_eq!(response.headers()["x-tenant"], "acme");
//! assert!(!response.headers().contains_key("server"));
//! let seen = http_body_util::BodyExt::collect(response.into_body()).await?.to_bytes();
//! // What crossed in (hyper adds `host`).
//! assert_eq!(seen, "host,x-debug,x-tenant");
//!
//! let response = service.oneshot(call("/users")?).await?;
//! let seen = http_body_util::BodyExt::collect(response.into_body()).await?.to_bytes();
//! assert_eq!(seen, "host,x-tenant");
//! # Ok(())
//! # }
//! ```

#[cfg(test)]
mod tests;

use crate::FromMeta;
use courier_core::headers::{named_by_connection, never_crosses};
use courier_core::EndpointMeta;
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, COOKIE};
use http::{HeaderMap, HeaderName, Request, Response};
use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower::{Layer, Service};

/// Whether `name` describes the message body: never taken from the allow-lists.
pub fn is_message_header(name: &HeaderName) -> bool {
    name == CONTENT_TYPE || name == CONTENT_LENGTH || name == CONTENT_ENCODING
}

/// Applies [`AllowHeaders`] to a service. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct AllowHeadersLayer<A = FromMeta> {
    rules: Arc<Rules>,
    allow_for: A,
}

/// The names [`AllowHeaders`] lets through for one call, besides the layer's own.
///
/// Implemented by [`FromMeta`] (the request's [`EndpointMeta::get_allowed_headers`]; none,
/// without one) and by any `Fn(&Request<B>) -> Vec<HeaderName>`. Whatever it gives, the
/// message headers, `host` and the hop-by-hop headers never cross.
pub trait AllowFor<B> {
    /// The names allowed for the call `request` makes.
    fn allow_for(&self, request: &Request<B>) -> Vec<HeaderName>;
}

impl<B> AllowFor<B> for FromMeta {
    fn allow_for(&self, request: &Request<B>) -> Vec<HeaderName> {
        request
            .extensions()
            .get::<EndpointMeta>()
            .map(|meta| meta.get_allowed_headers().to_vec())
            .unwrap_or_default()
    }
}

impl<B, F> AllowFor<B> for F
where
    F: Fn(&Request<B>) -> Vec<HeaderName>,
{
    fn allow_for(&self, request: &Request<B>) -> Vec<HeaderName> {
        self(request)
    }
}

#[derive(Clone, Debug, Default)]
struct Rules {
    /// Names allowed for every call, besides the request's `EndpointMeta`'s.
    allow: Vec<HeaderName>,
    /// Names the source sets itself: never taken from the browser.
    source: Vec<HeaderName>,
}

impl AllowHeadersLayer {
    /// Lets through what each request's [`EndpointMeta`] allows, and nothing else.
    pub fn new() -> Self {
        Self {
            rules: Arc::default(),
            allow_for: FromMeta,
        }
    }
}

impl Default for AllowHeadersLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<A> AllowHeadersLayer<A> {
    /// Takes the names each call lets through, besides the layer's own, from `allow_for`
    /// instead of its [`EndpointMeta`].
    pub fn allow_for<B>(self, allow_for: B) -> AllowHeadersLayer<B> {
        AllowHeadersLayer {
            rules: self.rules,
            allow_for,
        }
    }

    /// Also lets through `names`, for every call.
    #[must_use]
    pub fn allow<I>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = HeaderName>,
    {
        Arc::make_mut(&mut self.rules).allow.extend(names);
        self
    }

    /// The names the source sets itself (its `headers`): the browser's copies are dropped, so
    /// the source's values win.
    #[must_use]
    pub fn source_headers<I>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = HeaderName>,
    {
        Arc::make_mut(&mut self.rules).source.extend(names);
        self
    }

    /// The names a call with `meta` lets through, both ways (before the message headers and
    /// the cookie rules are applied).
    pub fn allowed(&self, meta: Option<&EndpointMeta>) -> Vec<HeaderName> {
        self.with_own(
            meta.map(|m| m.get_allowed_headers().to_vec())
                .unwrap_or_default(),
        )
    }

    /// `names` and the layer's own, less those that never come from the lists.
    fn with_own(&self, mut names: Vec<HeaderName>) -> Vec<HeaderName> {
        for name in &self.rules.allow {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names.retain(|name| !is_message_header(name) && !never_crosses(name));
        names
    }

    /// Keeps, of a browser's request headers, those that may go upstream for a call with
    /// `meta`.
    pub fn filter_request(&self, headers: &mut HeaderMap, meta: Option<&EndpointMeta>) {
        self.keep_in(headers, &self.allowed(meta));
    }

    /// The names of `headers` (a browser's request's) that may cross for a call with `meta`:
    /// what [`filter_request`](Self::filter_request) would keep, named rather than copied, for
    /// a caller that relays them itself (a proxy marks them with `ServedRequest::relaying`, and
    /// the client puts them under the call's own headers).
    ///
    /// ```
    /// use courier::layers::allow_headers::AllowHeadersLayer;
    /// use courier::tree::{EndpointMeta, Kind};
    /// use http::{HeaderMap, HeaderName, HeaderValue};
    ///
    /// let meta = EndpointMeta::new("users.get", Kind::Query)
    ///     .allowed_headers([HeaderName::from_static("x-tenant")]);
    /// let mut browser = HeaderMap::new();
    /// browser.insert("x-tenant", HeaderValue::from_static("acme"));
    /// browser.insert("x-internal", HeaderValue::from_static("secret"));
    /// let names = AllowHeadersLayer::new().relayed_names(&browser, Some(&meta));
    /// assert_eq!(names, [HeaderName::from_static("x-tenant")]);
    /// ```
    pub fn relayed_names(
        &self,
        headers: &HeaderMap,
        meta: Option<&EndpointMeta>,
    ) -> Vec<HeaderName> {
        let hop_by_hop = named_by_connection(headers);
        self.allowed(meta)
            .into_iter()
            .filter(|name| headers.contains_key(name) && self.crosses_in(name, &hop_by_hop))
            .collect()
    }

    /// Keeps, of an upstream's response headers, those that may go back to the browser for a
    /// call with `meta`.
    pub fn filter_response(&self, headers: &mut HeaderMap, meta: Option<&EndpointMeta>) {
        keep_out(headers, &self.allowed(meta));
    }

    /// Keeps, of a request's headers, the `allowed` ones the source does not set itself.
    fn keep_in(&self, headers: &mut HeaderMap, allowed: &[HeaderName]) {
        // `allowed` never holds `host` or a hop-by-hop name; what `connection` names is
        // hop-by-hop for this message only.
        let hop_by_hop = named_by_connection(headers);
        retain(headers, |name| {
            allowed.contains(name) && self.crosses_in(name, &hop_by_hop)
        });
    }

    /// Whether an allowed name of a browser's request may go upstream: not one the source sets
    /// itself, nor one this message's `connection` names.
    fn crosses_in(&self, name: &HeaderName, hop_by_hop: &[HeaderName]) -> bool {
        !self.rules.source.contains(name) && !hop_by_hop.contains(name)
    }
}

/// Keeps, of a response's headers, the message headers and the `allowed` ones but `cookie`.
fn keep_out(headers: &mut HeaderMap, allowed: &[HeaderName]) {
    let hop_by_hop = named_by_connection(headers);
    retain(headers, |name| {
        (is_message_header(name) || (allowed.contains(name) && name != COOKIE))
            && !hop_by_hop.contains(name)
    });
}

/// Removes the headers `keep` refuses, every value of each, in place: most messages lose a few
/// headers or none.
fn retain(headers: &mut HeaderMap, keep: impl Fn(&HeaderName) -> bool) {
    let refused: Vec<HeaderName> = headers.keys().filter(|name| !keep(name)).cloned().collect();
    for name in &refused {
        headers.remove(name);
    }
}

impl<S, A: Clone> Layer<S> for AllowHeadersLayer<A> {
    type Service = AllowHeaders<S, A>;

    fn layer(&self, inner: S) -> Self::Service {
        AllowHeaders {
            inner,
            layer: self.clone(),
        }
    }
}

/// Lets only allow-listed headers through, in both directions. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct AllowHeaders<S, A = FromMeta> {
    inner: S,
    layer: AllowHeadersLayer<A>,
}

impl<S, A> AllowHeaders<S, A> {
    /// Wraps `inner` with the rules of `layer`.
    pub fn new(inner: S, layer: AllowHeadersLayer<A>) -> Self {
        Self { inner, layer }
    }

    define_inner_service_accessors!();
}

impl<S, A, B, ResBody> Service<Request<B>> for AllowHeaders<S, A>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
    A: AllowFor<B>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let allowed = self
            .layer
            .with_own(self.layer.allow_for.allow_for(&request));
        self.layer.keep_in(request.headers_mut(), &allowed);
        ResponseFuture {
            inner: self.inner.call(request),
            allowed,
        }
    }
}

pin_project! {
    /// The response future of [`AllowHeaders`]: the inner future, its response's headers
    /// filtered.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // The names this call lets through.
        allowed: Vec<HeaderName>,
    }
}

impl<F, ResBody, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<ResBody>, E>>,
{
    type Output = Result<Response<ResBody>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        keep_out(response.headers_mut(), this.allowed);
        Poll::Ready(Ok(response))
    }
}
