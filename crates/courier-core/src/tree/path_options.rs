//! [`PathOptions`]: values for path parameters, fixed or computed per request.

use crate::body::BoxError;
use serde_json::{Map, Value};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// A boxed, sendable future: what a computed [`PathOptions`] returns (`futures`' own alias).
pub use futures_core::future::BoxFuture;

type Compute = dyn Fn(Option<&http::request::Parts>) -> BoxFuture<'static, Result<Map<String, Value>, BoxError>>
    + Send
    + Sync;

/// Values for path parameter substitution, set on a source or a group.
///
/// Either a fixed map, or a function of the request being served (`None` outside a server), which
/// may be async. Levels resolve source first, then groups outer to inner, a lower level replacing
/// a higher one's value for the same key; a caller's variables never replace a key that path
/// options hold: such a variable is dropped from the call altogether, so a browser cannot
/// override, say, a tenant the server sets.
///
/// ```
/// use courier::tree::PathOptions;
/// use serde_json::json;
///
/// let fixed = PathOptions::fixed(json!({ "tenant": "acme" }));
/// let per_request = PathOptions::from_fn(|req| {
///     let host = req.and_then(|r| r.headers.get("host")).and_then(|h| h.to_str().ok());
///     json!({ "tenant": host.unwrap_or("public") })
/// });
/// # let _ = (fixed, per_request);
/// ```
#[derive(Clone)]
pub enum PathOptions {
    /// The same values for every call.
    Fixed(Arc<Map<String, Value>>),
    /// Values computed for each call from the served request.
    Computed(Arc<Compute>),
}

impl PathOptions {
    /// Fixed values. A value that is not a JSON object gives no values.
    pub fn fixed(values: Value) -> Self {
        match values {
            Value::Object(map) => Self::Fixed(Arc::new(map)),
            _ => Self::Fixed(Arc::new(Map::new())),
        }
    }

    /// Values computed synchronously from the served request. A result that is not a JSON object
    /// gives no values.
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn(Option<&http::request::Parts>) -> Value + Send + Sync + 'static,
    {
        Self::Computed(Arc::new(move |req| {
            let values = match f(req) {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            Box::pin(std::future::ready(Ok(values)))
        }))
    }

    /// Values computed asynchronously from the served request; an error fails the call.
    pub fn from_async_fn<F, Fut>(f: F) -> Self
    where
        F: Fn(Option<&http::request::Parts>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Map<String, Value>, BoxError>> + Send + 'static,
    {
        Self::Computed(Arc::new(move |req| Box::pin(f(req))))
    }

    /// The values for one call.
    pub fn values(
        &self,
        served: Option<&http::request::Parts>,
    ) -> BoxFuture<'static, Result<Map<String, Value>, BoxError>> {
        match self {
            Self::Fixed(map) => {
                let map = Map::clone(map);
                Box::pin(std::future::ready(Ok(map)))
            }
            Self::Computed(f) => f(served),
        }
    }
}

impl fmt::Debug for PathOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(map) => f.debug_tuple("Fixed").field(map).finish(),
            Self::Computed(_) => f.write_str("Computed(..)"),
        }
    }
}

/// What a call's resolved path options hold, told apart: path parameter values, headers, and
/// cookies ([`ResolvedPathOptions::split`]).
#[derive(Clone, Debug, Default)]
pub struct ResolvedPathOptions {
    /// Values for path parameters (and, as any path option, never replaced by a caller's
    /// variable of the same name).
    pub values: Map<String, Value>,
    /// Headers for the call: they replace the source's, a `.via()` closure's and the call's own
    /// of the same name.
    pub headers: http::HeaderMap,
    /// Cookies for the call, `name=value`, in the order given.
    pub cookies: Vec<(String, String)>,
}

impl ResolvedPathOptions {
    /// Tells the resolved map apart: the object under `headers` holds headers, the object under
    /// `cookies` holds cookies, and every other key is a path parameter's value (so is a
    /// `headers` or `cookies` key whose value is not an object). A header or cookie value is a
    /// string, a number or a boolean; `null` leaves it out.
    ///
    /// ```
    /// use courier::tree::ResolvedPathOptions;
    /// use serde_json::json;
    ///
    /// let resolved = ResolvedPathOptions::split(
    ///     json!({
    ///         "tenant": "acme",
    ///         "headers": { "x-tenant": "acme", "x-shard": 3 },
    ///         "cookies": { "region": "eu" },
    ///     })
    ///     .as_object()
    ///     .unwrap()
    ///     .clone(),
    /// )?;
    /// assert_eq!(resolved.values["tenant"], "acme");
    /// assert_eq!(resolved.headers["x-shard"], "3");
    /// assert_eq!(resolved.cookies, [("region".to_owned(), "eu".to_owned())]);
    /// # Ok::<(), courier::BoxError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A header name or value that is not valid, a cookie name that is not a token or a value
    /// with a character a cookie may not hold (`;`, `,`, a space, a quote, a control character),
    /// or a value that is an array or an object: the call fails rather than send it.
    pub fn split(mut values: Map<String, Value>) -> Result<Self, BoxError> {
        let mut resolved = Self::default();
        if let Some(Value::Object(headers)) = values.get("headers") {
            for (name, value) in headers {
                let Some(value) = scalar(value, "header", name)? else {
                    continue;
                };
                let name = http::HeaderName::try_from(name.as_str())
                    .map_err(|e| format!("path options: `{name}` is not a header name: {e}"))?;
                let value = http::HeaderValue::try_from(value).map_err(|e| {
                    format!("path options: the value of `{name}` is not valid: {e}")
                })?;
                resolved.headers.append(name, value);
            }
            values.remove("headers");
        }
        if let Some(Value::Object(cookies)) = values.get("cookies") {
            for (name, value) in cookies {
                let Some(value) = scalar(value, "cookie", name)? else {
                    continue;
                };
                if name.is_empty() || !name.bytes().all(crate::headers::is_token) {
                    return Err(format!("path options: `{name}` is not a cookie name").into());
                }
                if !value.bytes().all(crate::headers::is_cookie_octet) {
                    return Err(format!(
                        "path options: the value of cookie `{name}` holds a character a cookie \
                         may not"
                    )
                    .into());
                }
                resolved.cookies.push((name.clone(), value));
            }
            values.remove("cookies");
        }
        resolved.values = values;
        Ok(resolved)
    }
}

/// A header's or cookie's value as text; `None` for `null`.
fn scalar(value: &Value, what: &str, name: &str) -> Result<Option<String>, BoxError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        Value::Number(_) | Value::Bool(_) => Ok(Some(value.to_string())),
        Value::Array(_) | Value::Object(_) => Err(format!(
            "path options: the {what} `{name}` is given a list or an object, not a value"
        )
        .into()),
    }
}

/// Marks a request whose `cookie` header was written from path options alone: a session layer
/// adds the session's cookies to it, rather than leaving it as it leaves a cookie header the
/// call chose itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathOptionCookies;

/// Resolves a chain of path options, outermost (the source) first: each level replaces the
/// values of the levels before it for the same key. The objects under `headers` and `cookies`
/// merge name by name, so a group's `x-tenant` header replaces the source's `x-tenant` and
/// leaves its other headers.
pub async fn resolve_path_options(
    chain: &[PathOptions],
    served: Option<&http::request::Parts>,
) -> Result<Map<String, Value>, BoxError> {
    let mut out = Map::new();
    for level in chain {
        for (key, value) in level.values(served).await? {
            match (key.as_str(), out.get_mut(&key), value) {
                ("headers" | "cookies", Some(Value::Object(earlier)), Value::Object(names)) => {
                    earlier.extend(names);
                }
                (_, _, value) => {
                    out.insert(key, value);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block_on<F: Future>(f: F) -> F::Output {
        // The futures here never pend: poll once with a no-op waker.
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("pending"),
        }
    }

    #[test]
    fn lower_levels_replace_higher_ones() {
        let chain = [
            PathOptions::fixed(json!({ "tenant": "source", "region": "eu" })),
            PathOptions::fixed(json!({ "tenant": "outer" })),
            PathOptions::from_fn(|_| json!({ "tenant": "inner" })),
        ];
        let values = block_on(resolve_path_options(&chain, None)).unwrap();
        assert_eq!(
            Value::Object(values),
            json!({ "tenant": "inner", "region": "eu" })
        );
    }

    #[test]
    fn headers_and_cookies_merge_name_by_name() {
        let chain = [
            PathOptions::fixed(json!({
                "headers": { "x-src": "1", "x-tenant": "source" },
                "cookies": { "region": "eu" },
            })),
            PathOptions::from_fn(
                |_| json!({ "headers": { "x-tenant": "group" }, "cookies": { "uid": "7" } }),
            ),
        ];
        let values = block_on(resolve_path_options(&chain, None)).unwrap();
        assert_eq!(
            Value::Object(values),
            json!({
                "headers": { "x-src": "1", "x-tenant": "group" },
                "cookies": { "region": "eu", "uid": "7" },
            })
        );
    }

    #[test]
    fn computed_options_see_the_served_request() {
        let opts = PathOptions::from_fn(
            |req| json!({ "host": req.and_then(|r| r.headers.get("host")).and_then(|h| h.to_str().ok()) }),
        );
        let (parts, ()) = http::Request::builder()
            .header("host", "a.example")
            .body(())
            .unwrap()
            .into_parts();
        let values = block_on(opts.values(Some(&parts))).unwrap();
        assert_eq!(values["host"], json!("a.example"));
        let values = block_on(opts.values(None)).unwrap();
        assert_eq!(values["host"], Value::Null);
    }

    #[test]
    fn async_errors_fail_resolution() {
        let chain = [PathOptions::from_async_fn(|_| async {
            Err::<Map<String, Value>, BoxError>("no tenant".into())
        })];
        let err = block_on(resolve_path_options(&chain, None)).unwrap_err();
        assert_eq!(err.to_string(), "no tenant");
    }
}
