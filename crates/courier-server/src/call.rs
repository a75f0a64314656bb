//! The proxy's HTTP route: one call of an exposed HTTP endpoint per browser request, through
//! the source's [`Client`] with the browser's request as the served context.

use crate::address::Addressed;
use crate::gauges::TimedCall;
use crate::refusal::Refusal;
use crate::Proxy;
use axum::body::Body as AxumBody;
use axum::extract::{ConnectInfo, State};
use axum::http::{Method, Request};
use axum::response::{IntoResponse, Response};
use courier_client::Error;
use courier_core::context::{ResponseHeaders, ServedRequest};
use courier_core::encode::Variables;
use courier_core::wire::WireQuery;
use courier_core::{CallOptions, EndpointDef, Kind, ResolvedEndpoint, ResponseType};
use courier_layers::allow_headers::AllowHeadersLayer;
use courier_layers::cache::CacheRule;
use futures_util::future::Either;
use futures_util::FutureExt;
use http::header::{AGE, CACHE_CONTROL, CONTENT_TYPE, SET_COOKIE};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A call served without axum's router ([`Proxy::serve`]'s call route; the
/// [`serve`](crate::serve) module says why): the peer's address given rather than read off a
/// `ConnectInfo` in the request's extensions, and the body hyper's own, made axum's only for a
/// POST's variables.
pub(crate) fn serve_at_front(
    proxy: Arc<Proxy>,
    request: Request<Incoming>,
    peer: SocketAddr,
) -> impl Future<Output = Result<Response, Infallible>> {
    serve(proxy, request, Some(peer)).map(Ok)
}

/// The call route's handler, under axum's router.
pub(crate) async fn serve_call(
    State(proxy): State<Arc<Proxy>>,
    request: Request<AxumBody>,
) -> Response {
    let peer = peer_of(request.extensions());
    serve(proxy, request, peer).await
}

/// One call, the browser's `request` from `peer`, answered: a refusal as its JSON. Both ways in
/// ([`serve_at_front`], [`serve_call`]) come here, so here alone the call is timed
/// ([`TimedCall`]) when the proxy's metrics are on; when they are off, the call's own future is
/// returned as it is, for a branch.
fn serve<B>(
    proxy: Arc<Proxy>,
    request: Request<B>,
    peer: Option<SocketAddr>,
) -> impl Future<Output = Response>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    if !proxy.metrics {
        return Either::Left(call(proxy, request, peer, None).map(answered));
    }
    Either::Right(async move {
        let mut timed = TimedCall::start(request.method());
        let called = call(Arc::clone(&proxy), request, peer, Some(&mut timed)).await;
        let refused = called.as_ref().err().map(Refusal::code);
        let response = answered(called);
        timed.record(&proxy.http_path, response.status(), refused);
        response
    })
}

/// A call's answer: its response, or its refusal's.
fn answered(called: Result<Response, Refusal>) -> Response {
    called.unwrap_or_else(IntoResponse::into_response)
}

/// One call: the browser's `request`, from `peer`; what it addresses, once found, told to
/// `timed`.
async fn call<B>(
    proxy: Arc<Proxy>,
    request: Request<B>,
    peer: Option<SocketAddr>,
    timed: Option<&mut TimedCall>,
) -> Result<Response, Refusal>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let (parts, body) = request.into_parts();
    // 1. The verb, then the address (docs/PROTOCOL.md, "A call"): an exposed HTTP endpoint.
    let method = parts.method.clone();
    if method != Method::GET && method != Method::POST {
        return Err(Refusal::MethodNotAllowed(format!(
            "the proxy takes GET and POST, not {method}"
        )));
    }
    let Addressed {
        client,
        endpoint,
        variables,
        query,
    } = Addressed::read(&proxy, &parts)?;
    if let Some(timed) = timed {
        timed.addressed(endpoint.meta());
    }
    if let Some(limiter) = &proxy.rate_limit {
        limiter.check(client.session(), &parts.headers, peer)?;
    }
    let EndpointDef::Http(http) = endpoint.definition() else {
        return Err(Refusal::NotInRoutes(format!(
            "`{}` is a stream or a channel: call it at the proxy's sse or ws path",
            endpoint.path()
        )));
    };
    // 2. The variables: `_v` on a GET, the body on a POST.
    let (variables, upload) =
        call_variables(&proxy, &endpoint, http, &parts, body, variables).await?;
    // 3. The upstream call: through the source's client, the browser's request as its served
    //    context, `_t` shortening its timeout.
    let timeout = sent_timeout(&query, &endpoint)?;
    // A cached read's GET answer may be kept by the browser too ([`CacheRule::for_browser`]);
    // a browser keeps no POST answer.
    let browser_rule = (method == Method::GET)
        .then(|| endpoint.meta().get_cache().map(CacheRule::from_options))
        .flatten();
    let mut options = upstream_options(&proxy.allow, &endpoint, parts, peer);
    if let Some(timeout) = timeout {
        options = options.timeout(timeout);
    }
    let called = client
        .pass_through(&endpoint, variables, Some(&options))
        .await;
    // 4. The answer: the upstream's, through the allow-lists; or the refusal of a failed call
    //    (a broken upload's own, when one broke it off).
    let upstream = match called {
        Ok(upstream) => upstream,
        Err(e) => return Err(upload.take().unwrap_or_else(|| failure(e))),
    };
    let response = answer(
        &proxy,
        client.api(),
        &endpoint,
        http,
        browser_rule,
        upstream,
    );
    Ok(with_served_headers(response))
}

/// A call's variables: a GET's from `_v` (a write, or a read with sensitive variables, refused
/// 405), a POST's from its body, `{"variables": …}` as JSON or a multipart form handed on as it
/// arrives; with where a streamed upload's failure is kept, so that the browser hears of it
/// rather than of the upstream call it broke off.
async fn call_variables<B>(
    proxy: &Proxy,
    endpoint: &ResolvedEndpoint,
    http: &courier_core::HttpEndpoint,
    parts: &http::request::Parts,
    body: B,
    query_variables: serde_json::Value,
) -> Result<(Variables, crate::upload::Failure), Refusal>
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    if parts.method == Method::GET {
        if http.kind() == Kind::Mutation {
            return Err(Refusal::MethodNotAllowed(format!(
                "`{}` writes: call it with POST",
                endpoint.path()
            )));
        }
        if http.is_sensitive() {
            return Err(Refusal::MethodNotAllowed(format!(
                "`{}` has sensitive variables: call it with POST",
                endpoint.path()
            )));
        }
        return Ok((query_variables.into(), crate::upload::Failure::default()));
    }
    let kind = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase);
    let multipart = kind
        .as_deref()
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let json = kind
        .as_deref()
        .is_none_or(|v| v.starts_with("application/json"));
    if !multipart && !json {
        return Err(Refusal::UnsupportedMediaType(
            "a POST to the proxy carries `{\"variables\": …}` as application/json, \
             or a form as multipart/form-data"
                .to_owned(),
        ));
    }
    let body = AxumBody::new(body);
    if multipart {
        let (form, failure) = crate::upload::form(proxy, parts, body).await?;
        return Ok((Variables::Form(form), failure));
    }
    let body = read_body(proxy, body, proxy.body_limit).await?;
    Ok((
        courier_core::wire::read_call_body(&body)?,
        crate::upload::Failure::default(),
    ))
}

/// The browser's answer from the upstream's: its status and body as they are (the body
/// streamed), its allowed headers and the message headers, the content type the source reads
/// the answer by, and a cached read's browser caching.
fn answer(
    proxy: &Proxy,
    api: &courier_core::ApiDef,
    endpoint: &ResolvedEndpoint,
    http: &courier_core::HttpEndpoint,
    browser_rule: Option<CacheRule>,
    upstream: http::Response<courier_core::Body>,
) -> Response {
    if upstream.status().is_server_error() {
        tracing::warn!(
            endpoint = endpoint.path(),
            status = upstream.status().as_u16(),
            "the upstream answered with a server error"
        );
    }
    // Read off the upstream's own headers, before the allow-list drops them. With the
    // `Cache-Control` goes the `Age` of an answer the proxy's own cache kept, so the browser
    // counts `max-age` from when the answer was fetched.
    let browser_cache = browser_rule
        .and_then(|rule| rule.for_browser(upstream.status(), upstream.headers()))
        .map(|control| (control, upstream.headers().get(AGE).cloned()));
    let mut response = for_browser(upstream, &proxy.allow, endpoint.meta());
    // The answer's content type says how the source reads it, so that a caller that decodes by
    // content type (the routes and boundary forms, the browser package) reads what a direct call
    // reads.
    let read_as = http
        .response_type_override()
        .unwrap_or(api.options().response_type);
    if response.status().is_success() && !same_reading(read_as, &response) {
        response
            .headers_mut()
            .insert(CONTENT_TYPE, content_type_read_as(read_as));
    }
    if let Some((control, age)) = browser_cache {
        response.headers_mut().insert(CACHE_CONTROL, control);
        if let Some(age) = age {
            response.headers_mut().insert(AGE, age);
        }
    }
    response
}

/// The content type the proxy gives an endpoint's successful answers, so that a caller that
/// reads by content type (the routes and boundary forms, the browser package) reads what a
/// direct call reads: that of the endpoint's `response_type`, else the source's. A custom
/// `response_parser` cannot cross the proxy: such a caller reads the answer by this content type,
/// not by the parser.
fn content_type_read_as(kind: ResponseType) -> http::HeaderValue {
    http::HeaderValue::from_static(match kind {
        ResponseType::Json => "application/json",
        ResponseType::Text => "text/plain; charset=utf-8",
        ResponseType::Bytes => "application/octet-stream",
        ResponseType::Form => "application/x-www-form-urlencoded",
    })
}

/// Whether `response`'s own content type is read as `read_as` is anyway: a JSON answer of any
/// JSON type (`application/problem+json`, say) keeps its own.
fn same_reading(read_as: ResponseType, response: &Response) -> bool {
    read_as == ResponseType::Json
        && response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(courier_core::wire::is_json_media_type)
}

/// A POST's whole body, within the proxy's limits: a declared `content-length` over the body
/// limit is refused (413) from the head alone, before a byte of the body is read; a body that
/// grows past it while arriving (chunked) is refused as soon as it does; one that does not
/// arrive whole within the body read timeout is refused with 408; broken framing (a malformed
/// chunk, a connection that ends early) is the browser's error, 400.
async fn read_body(proxy: &Proxy, body: AxumBody, limit: usize) -> Result<bytes::Bytes, Refusal> {
    use http_body_util::{BodyExt, LengthLimitError, Limited};
    let too_large = || {
        Refusal::PayloadTooLarge(format!(
            "the request body is over the limit of {limit} bytes"
        ))
    };
    // hyper read the declared `content-length` into the body's size hint (and refused one that
    // does not parse or repeats with another value); a chunked body's hint starts at zero.
    if http_body::Body::size_hint(&body).lower() > limit as u64 {
        return Err(too_large());
    }
    let read = Limited::new(body, limit).collect();
    match tokio::time::timeout(proxy.body_read_timeout, read).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Ok(Err(e)) => Err(Refusal::BadRequest(format!(
            "the request body could not be read: {e}"
        ))),
        Err(_elapsed) => Err(Refusal::RequestTimeout(format!(
            "the request body did not arrive within {} ms",
            proxy.body_read_timeout.as_millis()
        ))),
    }
}

/// The timeout a proxy caller sent for one call (`_t`, milliseconds): it may shorten the
/// endpoint's (or the source's) bound on the upstream call, never lengthen it.
fn sent_timeout(
    query: &WireQuery<'_>,
    endpoint: &courier_core::ResolvedEndpoint,
) -> Result<Option<Duration>, Refusal> {
    let Some(text) = &query.timeout else {
        return Ok(None);
    };
    let sent = text
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| {
            Refusal::BadRequest(format!("`_t` is a number of milliseconds, not `{text}`"))
        })?;
    Ok(Some(match endpoint.meta().get_timeout() {
        Some(own) => sent.min(own),
        None => sent,
    }))
}

/// The peer's address, as the server put it in a request's extensions.
pub(crate) fn peer_of(extensions: &http::Extensions) -> Option<SocketAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr)
}

/// The browser's request as the served context of the upstream call.
pub(crate) fn served_request(parts: http::request::Parts) -> ServedRequest {
    let peer = peer_of(&parts.extensions);
    ServedRequest::new(parts, peer)
}

/// The browser's request, from `peer`, as the served context of the upstream call, the names of
/// its headers that may cross (`allow`) marked relayed: the client puts them under the call's own
/// ([`ServedRequest::relay_into`]), so a header the source, the endpoint's `.via()` or the call
/// sets wins over the browser's copy. The browser's head is taken, not copied, and the `.via()`
/// closure runs once, when the client builds the call. The request is answered by the call's
/// response ([`ServedRequest::answered_by_call`]): what the layers add for the browser (the
/// session's `set-cookie`) comes back in that response, not through the served request.
///
/// The one optimisation of the proxy's allow-lists: the [`AllowHeadersLayer`] names what
/// crosses ([`AllowHeadersLayer::relayed_names`]) rather than wrapping the upstream call as a
/// service, which would filter a request of its own — a copy of the browser's head, since the
/// session and forwarding read the whole of it. That copy, filtered, cost a proxied read 1.3 %
/// of its instructions with wrk's bare request (52,453 → 53,139) and 12.3 % with the twelve
/// headers a browser sends with a `fetch` (62,413 → 70,092: user agent, `accept-*`, two
/// cookies, referer, `sec-fetch-*`, `sec-ch-ua*`); callgrind, `courier serve --threads 1`, as
/// `benches/proxy_hop.sh --callgrind` counts. The answer goes through the layer's own filter
/// ([`AllowHeadersLayer::filter_response`]) as the browser's response is made.
pub(crate) fn upstream_options(
    allow: &AllowHeadersLayer,
    endpoint: &ResolvedEndpoint,
    parts: http::request::Parts,
    peer: Option<SocketAddr>,
) -> CallOptions {
    let relayed = allow.relayed_names(&parts.headers, Some(endpoint.meta()));
    let served = ServedRequest::new(parts, peer)
        .relaying(relayed)
        .answered_by_call();
    CallOptions::new().context(served)
}

/// The browser's response from the upstream's: its status, its allowed headers and the message
/// headers, what the layers added for the browser, and the body, streamed.
pub(crate) fn respond(
    upstream: http::Response<courier_core::Body>,
    allow: &AllowHeadersLayer,
    meta: &courier_core::EndpointMeta,
) -> Response {
    with_served_headers(for_browser(upstream, allow, meta))
}

/// The upstream's response as the browser gets it: the body streamed, the browser connection's
/// own HTTP version (an HTTP/1.0 upstream's would make hyper answer HTTP/1.1 browsers in
/// HTTP/1.0 and close each connection), the allowed headers and the message headers only.
fn for_browser(
    upstream: http::Response<courier_core::Body>,
    allow: &AllowHeadersLayer,
    meta: &courier_core::EndpointMeta,
) -> Response {
    let mut response = upstream.map(AxumBody::new);
    *response.version_mut() = http::Version::default();
    allow.filter_response(response.headers_mut(), Some(meta));
    response
}

/// `response` with what the call's layers added for the browser, brought back in the upstream
/// response's extensions (the session's `set-cookie` pass-back: [`ResponseHeaders`]), whatever
/// the allow-lists say.
fn with_served_headers(mut response: Response) -> Response {
    let Some(ResponseHeaders(added)) = response.extensions_mut().remove::<ResponseHeaders>() else {
        return response;
    };
    let headers = response.headers_mut();
    for (name, value) in &added {
        if name != SET_COOKIE || !headers.get_all(SET_COOKIE).iter().any(|v| v == value) {
            headers.append(name.clone(), value.clone());
        }
    }
    response
}

/// The refusal for a call that failed before an upstream response came: a layer's own
/// (cancelled by a newer call, the session's checks), from its typed cause; else the upstream's
/// silence (502), its timeout (504), or variables the endpoint cannot use (400).
///
/// A 502 or 504 is logged (`tracing`, at `error`) with the upstream's address; the browser's
/// answer names the endpoint and the cause but not the upstream's host.
pub(crate) fn failure(error: Error) -> Refusal {
    if let Some(refused) = error.refused() {
        return Refusal::Layer(refused);
    }
    if error.is_configuration() {
        return Refusal::BadRequest(error.to_string());
    }
    let timeout = error.is_timeout();
    tracing::error!(
        endpoint = error.endpoint().unwrap_or_default(),
        status = if timeout { 504 } else { 502 },
        error = %error,
        "the proxy answered without the upstream's response"
    );
    let message = error.without_url().to_string();
    if timeout {
        Refusal::UpstreamTimeout(message)
    } else {
        Refusal::UpstreamUnreachable(message)
    }
}
