use super::{common_builders, EndpointOptions, Via, WireCall};
use crate::body::BoxError;
use crate::options::{CacheOptions, ResponseType};
use crate::tree::meta::Kind;
use http::Method;

/// Where an HTTP endpoint is: a verb and a path template, or a `.via()` closure.
#[derive(Clone, Debug)]
pub enum HttpAddress {
    /// A verb and a path relative to the group prefix (`""` is the prefix itself; `:name`
    /// segments are path parameters).
    Path {
        /// The verb.
        method: Method,
        /// The path template.
        path: String,
    },
    /// An address computed from the variables.
    Via(Via),
}

/// An HTTP endpoint descriptor: a read (`query`) or a write (`mutation`).
///
/// Built with a verb (`get`, `post`, `put`, `patch`, `del`, or any [`Method`] with
/// [`HttpEndpoint::method`]) or with [`HttpEndpoint::via`], then refined:
///
/// ```
/// use courier::options::CacheOptions;
/// use courier::HttpEndpoint;
/// use std::time::Duration;
///
/// let get = HttpEndpoint::get("/:id")
///     .cache(CacheOptions::new().revalidate(60))
///     .timeout(Duration::from_secs(1))
///     .expose(true);
/// assert!(get.is_read());
///
/// let search = HttpEndpoint::post("/search").reads().sensitive_variables();
/// assert!(search.is_read() && search.is_sensitive());
/// ```
#[derive(Clone, Debug)]
pub struct HttpEndpoint {
    address: HttpAddress,
    kind: Kind,
    sensitive: bool,
    stream: bool,
    response_type: Option<ResponseType>,
    pub(crate) options: EndpointOptions,
}

impl HttpEndpoint {
    /// An endpoint at `path` with any verb; its kind follows the verb (GET, HEAD, OPTIONS and
    /// QUERY read, the rest write).
    pub fn method(method: Method, path: impl Into<String>) -> Self {
        let kind = Kind::of_method(&method);
        Self::at(
            HttpAddress::Path {
                method,
                path: path.into(),
            },
            kind,
        )
    }

    /// A GET read.
    pub fn get(path: impl Into<String>) -> Self {
        Self::method(Method::GET, path)
    }

    /// A POST write (a read with [`HttpEndpoint::reads`]).
    pub fn post(path: impl Into<String>) -> Self {
        Self::method(Method::POST, path)
    }

    /// A PUT write.
    pub fn put(path: impl Into<String>) -> Self {
        Self::method(Method::PUT, path)
    }

    /// A PATCH write.
    pub fn patch(path: impl Into<String>) -> Self {
        Self::method(Method::PATCH, path)
    }

    /// A DELETE write. Its variables still travel as search parameters.
    pub fn delete(path: impl Into<String>) -> Self {
        Self::method(Method::DELETE, path)
    }

    /// [`HttpEndpoint::delete`] under the name JavaScript code gives it, `delete` being a
    /// JavaScript keyword; kept as an alias.
    pub fn del(path: impl Into<String>) -> Self {
        Self::delete(path)
    }

    /// An endpoint whose address the closure computes from the variables at request time.
    ///
    /// The closure returns a [`WireCall`]: the verb, a path relative to the group prefix, and
    /// the variables still to encode. Rust cannot run the closure at definition time without
    /// variables, so the verb is not known then, and courier asks for the kind instead: a
    /// `.via()` endpoint is a write unless declared [`HttpEndpoint::reads`] (the typed face's
    /// `Http<_, _, Query>` declares it).
    ///
    /// ```
    /// use courier::tree::WireCall;
    /// use courier::HttpEndpoint;
    /// use serde_json::json;
    ///
    /// let lookup = HttpEndpoint::via(|vars| {
    ///     Ok(match vars.get("email") {
    ///         Some(email) => WireCall::get("/by-email").variables(json!({ "email": email })),
    ///         None => WireCall::get("/:id").variables(vars),
    ///     })
    /// })
    /// .reads();
    /// assert!(lookup.is_read());
    /// ```
    pub fn via<F>(f: F) -> Self
    where
        F: Fn(serde_json::Value) -> Result<WireCall, BoxError> + Send + Sync + 'static,
    {
        Self::at(HttpAddress::Via(Via::new(f)), Kind::Mutation)
    }

    fn at(address: HttpAddress, kind: Kind) -> Self {
        Self {
            address,
            kind,
            sensitive: false,
            stream: false,
            response_type: None,
            options: EndpointOptions::default(),
        }
    }

    /// Declares the endpoint a read whatever its verb.
    #[must_use]
    pub fn reads(mut self) -> Self {
        self.kind = Kind::Query;
        self
    }

    /// Marks a read whose variables must not appear in an address: through the proxy it always
    /// goes as POST, and the proxy refuses it over GET.
    #[must_use]
    pub fn sensitive_variables(mut self) -> Self {
        self.sensitive = true;
        self
    }

    /// Gives the response body as a stream instead of parsing it.
    #[must_use]
    pub fn stream_response(mut self) -> Self {
        self.stream = true;
        self
    }

    /// Parses this endpoint's responses as `response_type`, over the source's setting.
    #[must_use]
    pub fn response_type(mut self, response_type: ResponseType) -> Self {
        self.response_type = Some(response_type);
        self
    }

    /// Where the endpoint is.
    pub fn address(&self) -> &HttpAddress {
        &self.address
    }

    /// Read or write.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Whether it reads.
    pub fn is_read(&self) -> bool {
        self.kind == Kind::Query
    }

    /// Whether its variables are sensitive.
    pub fn is_sensitive(&self) -> bool {
        self.sensitive
    }

    /// Whether the response body is given as a stream.
    pub fn is_stream_response(&self) -> bool {
        self.stream
    }

    /// The endpoint's own caching (`.cache()`); its groups' or source's may apply too (a
    /// resolved endpoint's [`meta`](crate::ResolvedEndpoint::meta) says which does).
    pub fn cache_options(&self) -> Option<&CacheOptions> {
        self.options.settings.cache.as_ref()
    }

    /// The endpoint's own response type, if set.
    pub fn response_type_override(&self) -> Option<ResponseType> {
        self.response_type
    }

    /// The verb, when the address has a fixed one.
    pub fn fixed_method(&self) -> Option<&Method> {
        match &self.address {
            HttpAddress::Path { method, .. } => Some(method),
            HttpAddress::Via(_) => None,
        }
    }
}

common_builders!([] HttpEndpoint; this => this.options);
