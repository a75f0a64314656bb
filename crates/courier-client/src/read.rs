//! What the direct client and the proxy caller do alike once a response has come: judge its
//! status, read its body as the call asks, and hand it to the call's type. Also the variables'
//! encoding and the cancellation both clients race a call against.

use crate::error::{Error, HttpError};
use bytes::Bytes;
use courier_core::encode::Variables;
use courier_core::{
    ApiDef, Attempts, Body, BoxError, CancellationToken, EndpointMeta, FromResponse, HttpResponse,
    IntoVariables, ResolvedEndpoint, ResponseBody, ResponseType,
};
use courier_layers::timeout::{self, error::Elapsed};
use futures_util::future::Either;
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How a buffered body is read when the source has no `response_parser`.
pub(crate) enum ReadAs {
    /// As the definition says: the endpoint's response type, else the source's.
    Definition,
    /// As this type (the proxy caller's routes form reads by the answer's content type).
    Type(ResponseType),
}

/// What reading a call's answer obeys, taken from the call's settings before its
/// [`EndpointMeta`] goes down the stack: its deadline ([`Reading::bound`]). A setting that
/// bears on reading the answer is read here, once, for both clients.
pub(crate) struct Reading {
    deadline: Option<Deadline>,
    /// The call's `response_limit`.
    limit: Option<u64>,
}

impl Reading {
    /// What reading the answer to the call `meta` describes obeys; `meta` counts its attempts
    /// when the call has a deadline.
    pub(crate) fn of(meta: &mut EndpointMeta) -> Self {
        Self {
            limit: meta.get_settings().get_response_limit(),
            deadline: Deadline::of(meta),
        }
    }

    /// `call` within the call's deadline, when it has one (see [`Deadline::bound`]).
    ///
    /// Not an `async fn`: one would move `call` into a future of its own, around it, on every
    /// call; this hands back `call` itself when there is no deadline (the `Either`'s left).
    /// With the limited reading boxed ([`collect`]), 1.7 % fewer instructions a direct call
    /// (callgrind, `benches/client.rs`, c1, 33,878 → 33,318).
    pub(crate) fn bound<'a, T: 'a>(
        &'a self,
        call: impl Future<Output = Result<T, Error>> + 'a,
    ) -> impl Future<Output = Result<T, Error>> + 'a {
        match &self.deadline {
            None => Either::Left(call),
            Some(deadline) => Either::Right(Box::pin(deadline.bound(call))),
        }
    }

    /// Notes that the response head came: a deadline that runs out from now on says the body
    /// was still arriving.
    pub(crate) fn head_came(&self) {
        Deadline::head_came(self.deadline.as_ref());
    }
}

/// `response` to a call of `endpoint`, judged and read: a status of 400 or more is an
/// [`HttpError`] with the body read; otherwise the body is read whole as `read_as` says, or
/// handed over unread to a streaming type, and becomes `R`. (The call's deadline bounds the
/// reading, around this: [`Reading::bound`].)
pub(crate) async fn response<R: FromResponse>(
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    response: Response<Body>,
    head: bool,
    read_as: ReadAs,
    reading: &Reading,
) -> Result<HttpResponse<R>, Error> {
    let (parts, body) = response.into_parts();
    if parts.status.as_u16() >= 400 {
        let bytes = collect(body, parts.status, reading.limit).await?;
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
        let bytes = collect(body, parts.status, reading.limit).await?;
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
                // Boxed: a form answer is rare, and its reading's future, in place, made every
                // call's larger: this reading's future 1,896 → 520 bytes, a typed call's `send`
                // 2,848 → 2,056 (memory held per call in flight; instructions unchanged).
                ResponseType::Form => ResponseBody::Form(
                    Box::pin(crate::form::read(api, &parts.headers, bytes))
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

/// A call's deadline, its `timeout`: the whole call — down its stack, and the reading of a
/// buffered answer's body — raced against it ([`Deadline::bound`]), with the attempts counted in
/// its meta, which the deadline's error tells.
///
/// Applied around the stack rather than as a `TimeoutLayer` in it: the layer at the top of
/// every endpoint's stack cost each call 1.1 % of its instructions whether it had a timeout or
/// not (callgrind, `benches/client.rs`, c1, 33,131 → 33,487), copying the stack's future into its
/// own; here a call without a timeout pays an `Option` check. The race is the layer's own
/// ([`timeout::within`]).
pub(crate) struct Deadline {
    after: Duration,
    attempts: Attempts,
    /// Set once the response head came: what is left of the deadline is the body's.
    head: AtomicBool,
}

impl Deadline {
    /// The deadline of the call `meta` describes, when it has a `timeout`; `meta` then counts
    /// its attempts.
    pub(crate) fn of(meta: &mut EndpointMeta) -> Option<Self> {
        let after = meta.get_timeout()?;
        let attempts = Attempts::new();
        meta.counting_attempts(attempts.clone());
        Some(Self {
            after,
            attempts,
            head: AtomicBool::new(false),
        })
    }

    /// Notes that the response head came: a deadline that runs out from now on says the body
    /// was still arriving.
    pub(crate) fn head_came(deadline: Option<&Self>) {
        if let Some(deadline) = deadline {
            deadline.head.store(true, Ordering::Relaxed);
        }
    }

    /// `call` within the deadline. A call without one is awaited as it is, not through this, and
    /// a call with one awaits this boxed (`Box::pin(deadline.bound(call)).await`): awaited in
    /// place, it made every call's future hold room for both, 1.4 % more instructions a call
    /// with no deadline (callgrind, `benches/client.rs`, c1, 33,271 → 33,728).
    pub(crate) async fn bound<T>(
        &self,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let attempts = Some(self.attempts.clone());
        match timeout::within(call, self.after, attempts).await {
            Ok(result) => result,
            Err(elapsed) if self.head.load(Ordering::Relaxed) => {
                let attempts = elapsed.attempts().unwrap_or_default();
                Err(Error::elapsed(
                    Elapsed::reading_body(self.after).with_attempts(attempts),
                ))
            }
            Err(elapsed) => Err(Error::elapsed(elapsed)),
        }
    }
}

/// Reads a buffered body whole, or fails at the first byte past `limit` (a protocol error: the
/// answer is not one the call can use).
async fn collect(body: Body, status: StatusCode, limit: Option<u64>) -> Result<Bytes, Error> {
    match limit {
        None => {
            let collected = body.collect().await.map_err(Error::from_network)?;
            Ok(collected.to_bytes())
        }
        // Boxed, so that a call without a limit does not carry room for this reading's
        // future in its own.
        Some(limit) => Box::pin(collect_within(body, status, limit)).await,
    }
}

/// Reads a buffered body whole, or fails at the first byte past `limit`.
async fn collect_within(body: Body, status: StatusCode, limit: u64) -> Result<Bytes, Error> {
    let limited = http_body_util::Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX));
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(Error::protocol(
            status,
            format!("the answer's body is longer than the call's response_limit of {limit} bytes"),
        )),
        Err(e) => Err(Error::from_network(e)),
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
