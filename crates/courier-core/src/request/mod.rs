//! From a resolved endpoint and a call's variables to an `http::Request<Body>`: the address
//! (base URL, prefixes, path, `.via()`), the encoded variables, and the source's headers.
//!
//! This is the last pure step before a transport: `courier-client` sends what [`build_request`]
//! builds, and a test or a hand-built stack can too.

use crate::body::{Body, BoxError};
use crate::encode::{self, join_path, EncodeInput, PathTemplate, PathTemplateError, Variables};
use crate::tree::api::ApiDef;
use crate::tree::endpoint::{ChannelSource, EndpointDef, HttpAddress, StreamSource, Via};
use crate::tree::resolve::ResolvedEndpoint;
use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::uri::{Parts, PathAndQuery};
use http::{HeaderMap, Method, Request, Uri};
use serde_json::{Map, Value};
use std::fmt;

/// Why a request could not be built. Nothing was sent.
#[derive(Debug)]
#[non_exhaustive]
pub enum RequestError {
    /// The variables could not be encoded (a missing path parameter, a `..` value, …).
    Encode(encode::EncodeError),
    /// The endpoint's `.via()` closure failed.
    Via(BoxError),
    /// The path a `.via()` closure returned is not a valid template.
    ViaPath(PathTemplateError),
    /// The endpoint is served by this process (`.implement()`) and has no address.
    Implemented {
        /// The endpoint's dotted path.
        endpoint: String,
    },
    /// A `.via()` endpoint was given a multipart form; its closure takes JSON variables.
    ViaForm {
        /// The endpoint's dotted path.
        endpoint: String,
    },
    /// The address does not make a valid URI.
    Uri(http::Error),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Encode(e) => write!(f, "cannot encode the variables: {e}"),
            Self::Via(e) => write!(f, "the endpoint's .via() closure failed: {e}"),
            Self::ViaPath(e) => write!(f, "the path a .via() closure returned is invalid: {e}"),
            Self::Implemented { endpoint } => write!(
                f,
                "`{endpoint}` is served by this process (.implement()) and has no address to call"
            ),
            Self::ViaForm { endpoint } => write!(
                f,
                "`{endpoint}` is addressed by .via(), whose closure takes JSON variables, not a form"
            ),
            Self::Uri(e) => write!(f, "the address is not a valid URI: {e}"),
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Encode(e) => Some(e),
            Self::Via(e) => Some(&**e),
            Self::ViaPath(e) => Some(e),
            Self::Uri(e) => Some(e),
            Self::Implemented { .. } | Self::ViaForm { .. } => None,
        }
    }
}

// Hidden: `RequestError` is courier's own plumbing, not named through the facade, and this impl
// would otherwise show on `courier::encode::EncodeError`'s page.
#[doc(hidden)]
impl From<encode::EncodeError> for RequestError {
    fn from(e: encode::EncodeError) -> Self {
        Self::Encode(e)
    }
}

/// Builds the request for one call of `endpoint`.
///
/// `path_values` are the resolved path options ([`resolve_path_options`]); `headers` are the
/// call's own, which win over the source's; `method`, when given, replaces the endpoint's verb
/// (the variables are encoded as that verb's: a GET's in the query, a POST's in the body). The
/// body's `Content-Type` is set from the encoding, over any header of that name. Streams and
/// channels build their handshake GET the same way.
///
/// [`resolve_path_options`]: crate::resolve_path_options
///
/// ```
/// use courier_core::{build_request, ApiDef, GroupDef, HttpEndpoint};
/// use serde_json::{json, Map};
///
/// let api = ApiDef::builder()
///     .base_url("http://127.0.0.1:9000/v1")
///     .header("x-api-key", "secret")
///     .default_query_params(json!({ "lang": "en" }))
///     .group("users", GroupDef::new().prefix("/users").endpoint("get", HttpEndpoint::get("/:id")))
///     .build()?;
/// let endpoint = api.endpoint("users.get").unwrap();
/// let req = build_request(&api, endpoint, json!({ "id": 7, "fields": "name" }).into(), &Map::new(), None, None)?;
/// assert_eq!(req.uri(), "http://127.0.0.1:9000/v1/users/7?fields=name&lang=en");
/// assert_eq!(req.headers()["x-api-key"], "secret");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn build_request(
    api: &ApiDef,
    endpoint: &ResolvedEndpoint,
    variables: Variables,
    path_values: &Map<String, Value>,
    headers: Option<&HeaderMap>,
    method: Option<&Method>,
) -> Result<Request<Body>, RequestError> {
    let options = api.options();
    let mut target = target(endpoint, variables)?;
    if let Some(method) = method {
        target.method = method.clone();
    }
    let template = match &target.template {
        Some(owned) => owned,
        None => endpoint
            .template()
            .ok_or_else(|| RequestError::Implemented {
                endpoint: endpoint.path().to_owned(),
            })?,
    };
    let encoded = encode::encode_under(
        EncodeInput {
            method: &target.method,
            path: template,
            path_options: path_values,
            variables: target.variables,
            default_query: Some(&options.default_query_params),
            default_body: Some(&options.default_body),
            body_serializer: options.body_serializer.as_deref(),
            search_params: &*options.search_params_serializer,
        },
        options.base_url.as_ref().map(Uri::path),
    )?;

    let uri = match &options.base_url {
        Some(base) => absolute(base, encoded.path_and_query)?,
        None => {
            let path = if encoded.path_and_query.is_empty() {
                "/"
            } else {
                &encoded.path_and_query
            };
            path.parse::<Uri>()
                .map_err(|e| RequestError::Uri(e.into()))?
        }
    };

    let mut request = Request::new(Body::empty());
    *request.method_mut() = target.method;
    *request.uri_mut() = uri;
    let out = request.headers_mut();
    if !options.headers.is_empty() {
        out.clone_from(&options.headers);
    }
    overlay(out, &target.headers);
    if let Some(call) = headers {
        overlay(out, call);
    }
    if let Some(content_type) = encoded.body.content_type() {
        out.insert(CONTENT_TYPE, content_type);
    }
    *request.body_mut() = encoded.body.into_body();
    Ok(request)
}

/// Replaces `base`'s headers of each name `top` sets with `top`'s.
fn overlay(base: &mut HeaderMap, top: &HeaderMap) {
    for name in top.keys() {
        base.remove(name);
    }
    for (name, value) in top {
        base.append(name.clone(), value.clone());
    }
}

/// `base`'s scheme and authority with `path_and_query`, which already holds the base's path.
fn absolute(base: &Uri, path_and_query: String) -> Result<Uri, RequestError> {
    let path_and_query = PathAndQuery::from_maybe_shared(Bytes::from(path_and_query))
        .map_err(|e| RequestError::Uri(e.into()))?;
    let mut parts = Parts::default();
    parts.scheme = base.scheme().cloned();
    parts.authority = base.authority().cloned();
    parts.path_and_query = Some(path_and_query);
    Uri::from_parts(parts).map_err(|e| RequestError::Uri(e.into()))
}

/// Where one call goes: the verb, the template (when `.via()` computed one), what is left to
/// encode, and extra headers.
struct Target {
    method: Method,
    template: Option<PathTemplate>,
    variables: Variables,
    headers: HeaderMap,
}

fn target(endpoint: &ResolvedEndpoint, variables: Variables) -> Result<Target, RequestError> {
    let fixed = |method: Method, variables| Target {
        method,
        template: None,
        variables,
        headers: HeaderMap::new(),
    };
    let via = |via: &Via, variables: Variables| {
        let value = match variables {
            Variables::None => Value::Null,
            Variables::Json(value) => value,
            Variables::Form(_) => {
                return Err(RequestError::ViaForm {
                    endpoint: endpoint.path().to_owned(),
                })
            }
        };
        let call = via.call(value).map_err(RequestError::Via)?;
        let template = PathTemplate::parse(&join_path(&[endpoint.prefix(), &call.path]))
            .map_err(RequestError::ViaPath)?;
        Ok(Target {
            method: call.method,
            template: Some(template),
            variables: Variables::Json(call.variables),
            headers: call.headers,
        })
    };
    let implemented = || RequestError::Implemented {
        endpoint: endpoint.path().to_owned(),
    };
    match endpoint.definition() {
        EndpointDef::Http(http) => match http.address() {
            HttpAddress::Path { method, .. } => Ok(fixed(method.clone(), variables)),
            HttpAddress::Via(v) => via(v, variables),
        },
        EndpointDef::Stream(stream) => match stream.source() {
            StreamSource::Path(_) => Ok(fixed(Method::GET, variables)),
            StreamSource::Via(v) => via(v, variables),
            StreamSource::Implemented(_) => Err(implemented()),
        },
        EndpointDef::Channel(channel) => match channel.source() {
            ChannelSource::Path(_) => Ok(fixed(Method::GET, variables)),
            ChannelSource::Via(v) => via(v, variables),
            ChannelSource::Implemented(_) => Err(implemented()),
        },
    }
}

#[cfg(test)]
mod tests;
