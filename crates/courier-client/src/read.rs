//! What the direct client and the proxy caller do alike once a response has come: judge its
//! status, read its body as the call asks, and hand it to the call's type. Also the variables'
//! encoding and the cancellation both clients race a call against.

use crate::error::{Error, HttpError};
use bytes::Bytes;
use courier_core::encode::Variables;
use courier_core::{
    ApiDef, Body, BoxError, CancellationToken, FromResponse, HttpResponse, IntoVariables,
    ResolvedEndpoint, ResponseBody, ResponseType,
};
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// How a buffered body is read when the source has no `response_parser`.
pub(crate) enum ReadAs {
    /// As the definition says: the endpoint's response type, else the source's.
    Definition,
    /// As this type (the proxy caller's routes form reads by the answer's content type).
    Type(ResponseType),
}

/// `response` to a call of `endpoint`, judged and read: a status of 400 or more is an
/// [`HttpError`] with the body read; otherwise the body is read whole (bounded by `timeout`) as
/// `read_as` says, or handed over unread to a streaming type, and becomes `R`.
pub(crate) async fn response<R: FromResponse>(
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    response: Response<Body>,
    head: bool,
    timeout: Option<Duration>,
    read_as: ReadAs,
) -> Result<HttpResponse<R>, Error> {
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
            let response_type = match read_as {
                ReadAs::Type(response_type) => response_type,
                ReadAs::Definition => http
                    .and_then(|h| h.response_type_override())
                    .unwrap_or(api.options().response_type),
            };
            match response_type {
                ResponseType::Json if bytes.is_empty() => ResponseBody::Empty,
                ResponseType::Json => ResponseBody::Json(bytes),
                ResponseType::Text => ResponseBody::Text(
                    String::from_utf8(bytes.to_vec())
                        .map_err(|e| Error::decode(parts.status, e))?,
                ),
                ResponseType::Bytes => ResponseBody::Bytes(bytes),
                ResponseType::Form => ResponseBody::Form(
                    crate::form::read(api, &parts.headers, bytes)
                        .await
                        .map_err(|e| Error::decode(parts.status, e))?,
                ),
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

/// A typed view's variables, encoded for `endpoint`; one that does not serialise is a
/// configuration error naming the endpoint.
pub(crate) fn variables<V: IntoVariables>(
    endpoint: &ResolvedEndpoint,
    variables: V,
) -> Result<Variables, Error> {
    variables
        .into_variables()
        .map_err(|e| Error::variables(e).with_endpoint(endpoint.path()))
}

/// The variables of a stream or channel: JSON, as its handler takes them in process and as
/// every reconnection sends them again.
pub(crate) fn json_variables(variables: Variables) -> Result<Value, Error> {
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

/// `work`, unless the call's signal or the source's is cancelled first (an already-cancelled
/// signal wins before `work` is polled). `work` is pinned where the caller made it and borrowed
/// here: moved in, or into `select!`, it would be copied and its room kept twice.
pub(crate) async fn unless_cancelled<T>(
    call: Option<&CancellationToken>,
    source: Option<&CancellationToken>,
    mut work: Pin<&mut impl Future<Output = Result<T, Error>>>,
) -> Result<T, Error> {
    if call.is_none() && source.is_none() {
        return work.await;
    }
    tokio::select! {
        biased;
        () = cancelled(call, source) => Err(Error::cancelled()),
        result = &mut work => result,
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
