//! [`Error`] as an axum response (the `axum` feature): see the `IntoResponse` impl.

use crate::error::Error;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::header::CONTENT_TYPE;
use http::StatusCode;
use serde_json::Value;

/// [`Error`] as an axum response (the `axum` feature): a handler that calls an upstream can
/// `?` the call, and the browser gets what the proxy route would have answered.
///
/// | the call failed because | the response |
/// |---|---|
/// | the upstream answered 400 or above ([`Error::is_http`]) | its status, its body as it came (JSON when it was JSON, else its text) with its `content-type`; no other upstream header |
/// | a layer refused it (cancelled by a newer call, the session's checks) | 499 or 403, `{"error": {"code", "message"}}` with the layer's code |
/// | no response came ([`Error::is_network`]) | 502 `UPSTREAM_UNREACHABLE` |
/// | a timeout elapsed | 504 `UPSTREAM_TIMEOUT` |
/// | the answer did not fit the call's type, or broke a stream's or channel's protocol | 502 `UPSTREAM_INVALID_RESPONSE` |
/// | a channel was closed by its server | 502 `CHANNEL_CLOSED` |
/// | the call's `signal` was cancelled | 499 `CANCELLED` |
/// | the request could not be built (the handler's variables, the definition) | 500 with the configuration code (`INVALID_VARIABLES` when it has none) |
///
/// Every answer but an upstream's own is `{"error": {"code", "message"}}`, as the proxy route's
/// refusals are; the message names the endpoint and the cause, never the upstream's address.
///
/// Each 5xx made here (502, 504, 500) is logged through `tracing`, at `error`, with the whole
/// error — the method and address tried, the root cause — as the proxy route logs its own: the
/// browser's answer leaves the address out, the log says it.
///
/// ```
/// use axum::extract::{Path, State};
/// use axum::Json;
/// use courier::Client;
/// use serde_json::Value;
///
/// async fn show_todo(
///     State(client): State<Client>,
///     Path(id): Path<u64>,
/// ) -> Result<Json<Value>, courier::Error> {
///     // An upstream's 404 reaches the browser as its 404; an upstream that is down, as a 502.
///     let todo = client.call("todos.get", serde_json::json!({ "id": id })).await?;
///     Ok(Json(todo.data))
/// }
/// # let _ = axum::Router::<Client>::new().route("/todos/{id}", axum::routing::get(show_todo));
/// ```
impl IntoResponse for Error {
    fn into_response(self) -> Response {
        if let Some(http) = self.http_error() {
            let kind = http.headers.get(CONTENT_TYPE).cloned();
            let mut response = match (&http.data, &kind) {
                (Value::Null, _) => http.status.into_response(),
                // A text body (the error keeps text as a JSON string) goes back as text.
                (Value::String(text), Some(kind)) if !is_json(kind) => {
                    (http.status, text.clone()).into_response()
                }
                (data, _) => (http.status, Json(data.clone())).into_response(),
            };
            if let Some(kind) = kind.filter(|_| !http.data.is_null()) {
                response.headers_mut().insert(CONTENT_TYPE, kind);
            }
            return response;
        }
        let (status, code) = if self.is_timeout() {
            (StatusCode::GATEWAY_TIMEOUT, "UPSTREAM_TIMEOUT")
        } else if self.is_cancelled() {
            (
                StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
                "CANCELLED",
            )
        } else if self.is_configuration() {
            let code = self
                .configuration()
                .map_or("INVALID_VARIABLES", |e| e.code().as_str());
            (StatusCode::INTERNAL_SERVER_ERROR, code)
        } else if self.is_decode() || self.is_protocol() {
            (StatusCode::BAD_GATEWAY, "UPSTREAM_INVALID_RESPONSE")
        } else if self.is_closed() {
            (StatusCode::BAD_GATEWAY, "CHANNEL_CLOSED")
        } else {
            (StatusCode::BAD_GATEWAY, "UPSTREAM_UNREACHABLE")
        };
        if status.is_server_error() {
            tracing::error!(
                endpoint = self.endpoint().unwrap_or_default(),
                status = status.as_u16(),
                error = %self,
                "a handler answered a failed call"
            );
        }
        let message = self.without_url().to_string();
        (status, Json(courier_core::wire::error_body(code, &message))).into_response()
    }
}

fn is_json(kind: &http::HeaderValue) -> bool {
    kind.to_str()
        .is_ok_and(courier_core::wire::is_json_media_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::HttpError;
    use http::HeaderMap;

    async fn answer(error: Error) -> (StatusCode, Option<String>, String) {
        let response = error.into_response();
        let status = response.status();
        let kind = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, kind, String::from_utf8(body.to_vec()).unwrap())
    }

    fn http(status: u16, kind: Option<&str>, body: &str) -> Error {
        let mut headers = HeaderMap::new();
        if let Some(kind) = kind {
            headers.insert(CONTENT_TYPE, kind.parse().unwrap());
        }
        headers.insert("set-cookie", "upstream=1".parse().unwrap());
        let status = StatusCode::from_u16(status).unwrap();
        Error::from_http(HttpError::from_parts(status, headers, body.as_bytes()))
    }

    #[tokio::test]
    async fn an_upstream_error_goes_back_as_it_came() {
        let (status, kind, body) = answer(http(
            404,
            Some("application/problem+json"),
            r#"{"title":"no such todo"}"#,
        ))
        .await;
        assert_eq!(status, 404);
        assert_eq!(kind.as_deref(), Some("application/problem+json"));
        assert_eq!(body, r#"{"title":"no such todo"}"#);

        let (status, kind, body) = answer(http(
            500,
            Some("text/plain; charset=utf-8"),
            "internal trouble",
        ))
        .await;
        assert_eq!((status.as_u16(), body.as_str()), (500, "internal trouble"));
        assert_eq!(kind.as_deref(), Some("text/plain; charset=utf-8"));

        let (status, _, body) = answer(http(503, None, "")).await;
        assert_eq!((status.as_u16(), body.as_str()), (503, ""));
    }

    #[tokio::test]
    async fn no_upstream_header_but_its_content_type_crosses() {
        let response = http(409, Some("application/json"), "{}").into_response();
        assert!(response.headers().get("set-cookie").is_none());
    }

    #[tokio::test]
    async fn failures_without_a_response_are_the_proxys_codes() {
        let (status, _, body) = answer(Error::timeout().with_endpoint("todos.get")).await;
        assert_eq!(status, 504);
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "UPSTREAM_TIMEOUT");
        assert_eq!(body["error"]["message"], "`todos.get`: timed out");

        let (status, _, body) = answer(Error::cancelled()).await;
        assert_eq!(status.as_u16(), 499);
        assert!(body.contains("\"CANCELLED\""), "{body}");

        let network = Error::from_network("connection refused".into())
            .with_endpoint("todos.get")
            .with_request(
                http::Method::GET,
                "http://10.0.0.7:8080/todos/1".parse().unwrap(),
            );
        let (status, _, body) = answer(network).await;
        assert_eq!(status, 502);
        assert!(body.contains("UPSTREAM_UNREACHABLE"), "{body}");
        assert!(
            !body.contains("10.0.0.7"),
            "the upstream's address stays here: {body}"
        );
    }

    #[test]
    fn a_failure_answered_5xx_is_logged_with_its_address() {
        let logs = courier_test_support::Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let down = Error::from_network("connection refused".into())
                .with_endpoint("todos.create")
                .with_request(
                    http::Method::POST,
                    "http://10.0.0.7:8080/todos".parse().unwrap(),
                );
            assert_eq!(down.into_response().status(), 502);
            // Not a failure of the app: the caller went away.
            assert_eq!(Error::cancelled().into_response().status().as_u16(), 499);
        });
        let logged = logs.text();
        assert_eq!(logged.lines().count(), 1, "{logged}");
        assert!(logged.contains("ERROR"), "{logged}");
        assert!(
            logged
                .contains("a handler answered a failed call endpoint=\"todos.create\" status=502"),
            "{logged}"
        );
        assert!(
            logged.contains("POST http://10.0.0.7:8080/todos")
                && logged.contains("connection refused"),
            "{logged}"
        );
    }
}
