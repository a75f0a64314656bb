//! The proxy's own refusals: one enum, each variant its status and stable code, answered as
//! `{"error": {"code", "message"}}` (docs/PROTOCOL.md lists them) — as axum's rejections are.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// Why the proxy answers a request itself, with what to tell the browser.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// 400 `BAD_REQUEST`: the wire parameters or the body cannot name a call.
    BadRequest(String),
    /// 403, the session's code (`CSRF_CHECK_FAILED`, `ORIGIN_NOT_TRUSTED`): a check the
    /// session made before anything was sent.
    Session {
        /// The session's code for the check that failed.
        code: &'static str,
        /// What failed.
        message: String,
    },
    /// A layer of the call's stack refused it before anything was sent: 499
    /// `CANCELLED_BY_NEWER_CALL`, 403 with the session's code, or 503 `UPSTREAM_OVERLOADED`
    /// with `Retry-After` (the source's `max_in_flight`).
    Layer(courier_client::Refused),
    /// 404 `ENDPOINT_NOT_IN_ROUTES`: no such source or endpoint, or not exposed, or not of
    /// the kind its path serves.
    NotInRoutes(String),
    /// 405 `METHOD_NOT_ALLOWED`.
    MethodNotAllowed(String),
    /// 408 `REQUEST_TIMEOUT`: the body did not arrive in time.
    RequestTimeout(String),
    /// 413 `PAYLOAD_TOO_LARGE`.
    PayloadTooLarge(String),
    /// 415 `UNSUPPORTED_MEDIA_TYPE`.
    UnsupportedMediaType(String),
    /// 429 `RATE_LIMITED` with `Retry-After`: the session's or the client address's requests
    /// are over the proxy's rate limit ([`crate::rate`]).
    RateLimited {
        /// The wait for the next request the limit lets through, in whole seconds (at least 1).
        retry_after_secs: u64,
        /// The limit.
        limit: crate::RateLimit,
        /// Whether the count was the session's (else the client address's).
        session: bool,
    },
    /// 502 `UPSTREAM_UNREACHABLE`: no response from the upstream.
    UpstreamUnreachable(String),
    /// 504 `UPSTREAM_TIMEOUT`: the endpoint's or the source's timeout elapsed.
    UpstreamTimeout(String),
}

impl Refusal {
    /// The status it is answered with.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Session { .. } => StatusCode::FORBIDDEN,
            Self::Layer(refused) => refused.status(),
            Self::NotInRoutes(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::UpstreamUnreachable(_) => StatusCode::BAD_GATEWAY,
            Self::UpstreamTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// Its stable code, the body's `error.code`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "BAD_REQUEST",
            Self::Session { code, .. } => code,
            Self::Layer(refused) => refused.code(),
            Self::NotInRoutes(_) => "ENDPOINT_NOT_IN_ROUTES",
            Self::MethodNotAllowed(_) => "METHOD_NOT_ALLOWED",
            Self::RequestTimeout(_) => "REQUEST_TIMEOUT",
            Self::PayloadTooLarge(_) => "PAYLOAD_TOO_LARGE",
            Self::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            Self::RateLimited { .. } => "RATE_LIMITED",
            Self::UpstreamUnreachable(_) => "UPSTREAM_UNREACHABLE",
            Self::UpstreamTimeout(_) => "UPSTREAM_TIMEOUT",
        }
    }

    /// What it says, the body's `error.message`.
    pub(crate) fn message(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Layer(refused) => refused.message().into(),
            Self::RateLimited {
                retry_after_secs,
                limit,
                session,
            } => format!(
                "this {} is over the proxy's rate limit of {} requests a second (in bursts of \
                 {}): retry in {retry_after_secs} s",
                if *session {
                    "session"
                } else {
                    "client address"
                },
                limit.get_per_second(),
                limit.get_burst(),
            )
            .into(),
            Self::Session { message, .. }
            | Self::BadRequest(message)
            | Self::NotInRoutes(message)
            | Self::MethodNotAllowed(message)
            | Self::RequestTimeout(message)
            | Self::PayloadTooLarge(message)
            | Self::UnsupportedMediaType(message)
            | Self::UpstreamUnreachable(message)
            | Self::UpstreamTimeout(message) => message.as_str().into(),
        }
    }

    /// The `Retry-After` it is answered with, in seconds, when it says when to come back.
    fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Self::Layer(refused) => refused.retry_after_secs(),
            Self::RateLimited {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        crate::gauges::refused(self.code());
        let body = courier_core::wire::error_body(self.code(), &self.message());
        let mut response = (self.status(), Json(body)).into_response();
        if let Some(secs) = self.retry_after_secs() {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_is_its_status_and_code_in_json() {
        let response = Refusal::PayloadTooLarge("over 10 bytes".into()).into_response();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(
            body,
            r#"{"error":{"code":"PAYLOAD_TOO_LARGE","message":"over 10 bytes"}}"#
        );
        let session = Refusal::Session {
            code: "CSRF_CHECK_FAILED",
            message: "no token".into(),
        };
        assert_eq!(
            (session.status(), session.code()),
            (StatusCode::FORBIDDEN, "CSRF_CHECK_FAILED")
        );
    }

    #[tokio::test]
    async fn a_rate_limit_is_429_with_retry_after() {
        let response = Refusal::RateLimited {
            retry_after_secs: 2,
            limit: crate::RateLimit::per_second(5).burst(10),
            session: false,
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["retry-after"], "2");
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        assert_eq!(
            body,
            r#"{"error":{"code":"RATE_LIMITED","message":"this client address is over the proxy's rate limit of 5 requests a second (in bursts of 10): retry in 2 s"}}"#
        );
    }
}
