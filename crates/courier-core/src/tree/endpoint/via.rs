use crate::body::BoxError;
use http::{HeaderMap, Method};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

type ViaFn = dyn Fn(Value) -> Result<WireCall, BoxError> + Send + Sync;

/// A `.via()` closure: computes a call's address from its variables at request time.
#[derive(Clone)]
pub struct Via(Arc<ViaFn>);

impl Via {
    /// Wraps a closure.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(Value) -> Result<WireCall, BoxError> + Send + Sync + 'static,
    {
        Self(Arc::new(f))
    }

    /// Runs the closure for one call's variables (`Value::Null` when there are none).
    pub fn call(&self, variables: Value) -> Result<WireCall, BoxError> {
        (self.0)(variables)
    }
}

impl fmt::Debug for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Via(..)")
    }
}

/// What a `.via()` closure asks for: a verb, a path template relative to the group prefix, the
/// variables still to encode, and extra headers.
///
/// One constructor per verb: `get`, `post`, `put`, `patch`, `delete` (and its alias `del`),
/// `head`, `options`, `query`; [`WireCall::new`] takes any verb.
#[derive(Clone, Debug)]
pub struct WireCall {
    /// The verb.
    pub method: Method,
    /// The path template, relative to the group prefix.
    pub path: String,
    /// Variables for the path parameters, then the search parameters or the body.
    pub variables: Value,
    /// Headers added to the call.
    pub headers: HeaderMap,
}

macro_rules! verbs {
    ($($(#[$doc:meta])* $name:ident => $method:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(path: impl Into<String>) -> Self {
                Self::new($method, path)
            }
        )*
    };
}

impl WireCall {
    /// A call with any verb.
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            variables: Value::Null,
            headers: HeaderMap::new(),
        }
    }

    verbs! {
        /// A GET.
        get => Method::GET;
        /// A POST.
        post => Method::POST;
        /// A PUT.
        put => Method::PUT;
        /// A PATCH.
        patch => Method::PATCH;
        /// A DELETE.
        delete => Method::DELETE;
        /// A DELETE: [`WireCall::delete`] under the name JavaScript code gives it, `delete`
        /// being a JavaScript keyword; kept as an alias.
        del => Method::DELETE;
        /// A HEAD.
        head => Method::HEAD;
        /// An OPTIONS.
        options => Method::OPTIONS;
        /// A QUERY (a safe read that carries a body).
        query => Method::from_bytes(b"QUERY").unwrap_or(Method::POST);
    }

    /// Sets the variables to encode.
    #[must_use]
    pub fn variables(mut self, variables: Value) -> Self {
        self.variables = variables;
        self
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }
}
