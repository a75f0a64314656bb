//! The proxy's HTTP route: one call of an exposed HTTP endpoint per browser request, through
//! the source's [`Client`] with the browser's request as the served context.

use crate::{address, source_of, Proxy, Refusal};
use axum::body::Body as AxumBody;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderName, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use courier_client::Error;
use courier_core::context::ServedRequest;
use courier_core::encode::{FilePart, Form, Variables};
use courier_core::{CallOptions, EndpointDef, Kind};
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, SET_COOKIE};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Headers the allow-lists never govern: the proxy sets them itself.
fn is_message_header(name: &HeaderName) -> bool {
    name == CONTENT_TYPE || name == CONTENT_LENGTH || name == CONTENT_ENCODING
}

/// The names a call of this endpoint lets through, both ways: the source's `allowed_headers`
/// and the endpoint's `.headers([...])`.
fn allowed(
    api: &courier_core::ApiDef,
    endpoint: &courier_core::ResolvedEndpoint,
) -> Vec<HeaderName> {
    let mut names = api.options().allowed_headers.clone();
    for name in &endpoint.definition().options().headers {
        if let Ok(name) = HeaderName::try_from(name.as_str()) {
            names.push(name);
        }
    }
    names.retain(|name| !is_message_header(name));
    names
}

pub(crate) async fn serve_call(
    State(proxy): State<Arc<Proxy>>,
    Query(query): Query<HashMap<String, String>>,
    request: Request<AxumBody>,
) -> Result<Response, Refusal> {
    let (parts, body) = request.into_parts();
    let method = parts.method.clone();
    if method != Method::GET && method != Method::POST {
        return Err(Refusal::method(format!(
            "the proxy takes GET and POST, not {method}"
        )));
    }
    let (api, endpoint, get_variables) = address(&proxy, &query)?;
    let EndpointDef::Http(http) = endpoint.definition() else {
        return Err(Refusal::not_found(format!(
            "`{}` is a stream or a channel: call it at the proxy's sse or ws path",
            endpoint.path()
        )));
    };
    let variables: Variables = if method == Method::GET {
        if http.kind() == Kind::Mutation {
            return Err(Refusal::method(format!(
                "`{}` writes: call it with POST",
                endpoint.path()
            )));
        }
        if http.is_sensitive() {
            return Err(Refusal::method(format!(
                "`{}` has sensitive variables: call it with POST",
                endpoint.path()
            )));
        }
        get_variables.into()
    } else {
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
            return Err(Refusal {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                code: "UNSUPPORTED_MEDIA_TYPE",
                message: "a POST to the proxy carries `{\"variables\": …}` as application/json, \
                          or a form as multipart/form-data"
                    .to_owned(),
            });
        }
        let bytes = axum::body::to_bytes(body, proxy.body_limit)
            .await
            .map_err(|_| Refusal {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                code: "PAYLOAD_TOO_LARGE",
                message: format!("the request body is over {} bytes", proxy.body_limit),
            })?;
        if multipart {
            Variables::Form(form_of(&parts, bytes).await?)
        } else if bytes.is_empty() {
            Variables::None
        } else {
            let body: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Refusal::bad_request(format!("the body is not JSON: {e}")))?;
            match body {
                Value::Object(mut body) => body.remove("variables").unwrap_or(Value::Null).into(),
                _ => {
                    return Err(Refusal::bad_request(
                        "the body is `{\"variables\": …}`".to_owned(),
                    ))
                }
            }
        }
    };
    let timeout = sent_timeout(&query, &endpoint)?;

    let Some(client) = proxy.clients.get(source_of(&query)) else {
        return Err(Refusal::not_found("no such source".to_owned()));
    };
    let (mut options, served, names) = upstream_options(&api, &endpoint, parts);
    if let Some(timeout) = timeout {
        options = options.timeout(timeout);
    }
    match client
        .forward(endpoint.path(), variables, Some(&options))
        .await
    {
        Ok(upstream) => Ok(respond(upstream, &served, &names)),
        Err(e) => Ok(failure(&e)),
    }
}

/// The timeout a proxy caller sent for one call (`_t`, milliseconds): it may shorten the
/// endpoint's (or the source's) bound on the upstream call, never lengthen it.
fn sent_timeout(
    query: &HashMap<String, String>,
    endpoint: &courier_core::ResolvedEndpoint,
) -> Result<Option<Duration>, Refusal> {
    let Some(text) = query.get("_t") else {
        return Ok(None);
    };
    let sent = text
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| {
            Refusal::bad_request(format!("`_t` is a number of milliseconds, not `{text}`"))
        })?;
    Ok(Some(match endpoint.meta().timeout_value() {
        Some(own) => sent.min(own),
        None => sent,
    }))
}

/// The form a multipart POST carries, part for part: a part with a content type is a file,
/// one without is a text field.
async fn form_of(parts: &http::request::Parts, bytes: bytes::Bytes) -> Result<Form, Refusal> {
    use axum::extract::{FromRequest, Multipart};
    let request = Request::from_parts(parts.clone(), AxumBody::from(bytes));
    let bad = |e: axum::extract::multipart::MultipartError| {
        Refusal::bad_request(format!("the form does not parse: {}", e.body_text()))
    };
    let mut multipart = Multipart::from_request(request, &())
        .await
        .map_err(|e| Refusal::bad_request(format!("the form does not parse: {}", e.body_text())))?;
    let mut form = Form::new();
    while let Some(field) = multipart.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(str::to_owned);
        let kind = field.content_type().map(str::to_owned);
        let data = field.bytes().await.map_err(bad)?;
        if filename.is_none() && kind.is_none() {
            let text = String::from_utf8(data.to_vec()).map_err(|_| {
                Refusal::bad_request(format!("the form's text field `{name}` is not UTF-8"))
            })?;
            form = form.text(name, text);
        } else {
            let mut file = FilePart::new(data);
            if let Some(filename) = filename {
                file = file.filename(filename);
            }
            if let Some(kind) = kind {
                file = file.content_type(kind);
            }
            form = form.file(name, file);
        }
    }
    Ok(form)
}

/// The call options of a proxied call: the browser's allow-listed headers (not one the source
/// sets) and the browser's request as the served context; with the context and the names.
pub(crate) fn upstream_options(
    api: &courier_core::ApiDef,
    endpoint: &courier_core::ResolvedEndpoint,
    parts: http::request::Parts,
) -> (CallOptions, ServedRequest, Vec<HeaderName>) {
    let names = allowed(api, endpoint);
    let mut options = CallOptions::new();
    for name in &names {
        if api.options().headers.contains_key(name) {
            continue;
        }
        for value in parts.headers.get_all(name) {
            options = options.header(name.clone(), value.clone());
        }
    }
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    let served = ServedRequest::new(parts, peer);
    (options.context(served.clone()), served, names)
}

/// The browser's response from the upstream's: its status, its allowed headers and the message
/// headers, what the layers collected for the served response, and the body, streamed.
pub(crate) fn respond(
    upstream: http::Response<courier_core::Body>,
    served: &ServedRequest,
    names: &[HeaderName],
) -> Response {
    let (upstream, body) = upstream.into_parts();
    let mut headers = HeaderMap::new();
    for (name, value) in &upstream.headers {
        let passes = is_message_header(name) || (names.contains(name) && name != COOKIE);
        if passes {
            headers.append(name.clone(), value.clone());
        }
    }
    // What the layers collected for the served response (the session's set-cookie pass-back).
    for (name, value) in &served.take_response_headers() {
        if name != SET_COOKIE || !headers.get_all(SET_COOKIE).iter().any(|v| v == value) {
            headers.append(name.clone(), value.clone());
        }
    }
    let mut response = Response::new(AxumBody::new(body));
    *response.status_mut() = upstream.status;
    *response.headers_mut() = headers;
    response
}

/// The refusal for a call that failed before an upstream response came.
pub(crate) fn failure(error: &Error) -> Response {
    if let Some(http) = error.http_error() {
        // A layer's own refusal: cancelled (499), the session's checks (403).
        return (http.status, Json(http.data.clone())).into_response();
    }
    let (status, code) = if error.is_timeout() {
        (StatusCode::GATEWAY_TIMEOUT, "UPSTREAM_TIMEOUT")
    } else if error.is_configuration() {
        (StatusCode::BAD_REQUEST, "BAD_REQUEST")
    } else {
        (StatusCode::BAD_GATEWAY, "UPSTREAM_UNREACHABLE")
    };
    let body = json!({ "error": { "code": code, "message": error.to_string() } });
    (status, Json(body)).into_response()
}
