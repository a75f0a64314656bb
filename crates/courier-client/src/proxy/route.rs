//! The proxy caller's wire encoder: where each call goes, how it is written on the wire, and how
//! its answer is read.

use super::hooks::{Hooks, Success};
use super::MAX_GET_ADDRESS;
use crate::error::Error;
use crate::read::ReadAs;
use courier_core::encode::Variables;
use courier_core::routes::{RouteShape, Routes};
use courier_core::wire;
use courier_core::{
    Body, CallOptions, ConfigurationError, EndpointDef, EndpointMeta, ErrorCode, Kind,
    ResolvedEndpoint, ResponseType, RetrySetting,
};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Method, Request};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use url::Url;

/// A proxy caller's wire settings, shared by every call.
pub(crate) struct Route {
    http: Url,
    sse: Url,
    ws: Option<Url>,
    source: String,
    /// The reachable endpoints and their shapes.
    routes: Routes,
    /// Reads that may go as GET.
    get: HashSet<String>,
    /// The source form: responses are read as the definition says; else by their content type.
    by_definition: bool,
    pub(crate) headers: HeaderMap,
    metas: HashMap<String, EndpointMeta>,
    hooks: Hooks,
}

/// The settings a [`Route`] is built from.
pub(crate) struct RouteSettings {
    pub(crate) http: Url,
    pub(crate) sse: Url,
    pub(crate) ws: Option<Url>,
    pub(crate) source: String,
    pub(crate) routes: Routes,
    pub(crate) by_definition: bool,
    pub(crate) headers: HeaderMap,
    pub(crate) timeout: Option<Duration>,
    pub(crate) coalesce: bool,
    pub(crate) cancel_previous: HashSet<String>,
    pub(crate) deduplicate: bool,
    pub(crate) hooks: Hooks,
}

impl Route {
    /// The route for `api`'s endpoints: each endpoint's facts as the caller's layers read them.
    pub(crate) fn new(settings: RouteSettings, api: &courier_core::ApiDef) -> Self {
        let mut get = HashSet::new();
        let mut metas = HashMap::new();
        for endpoint in api.endpoints() {
            let path = endpoint.path();
            let Some(shape) = settings.routes.endpoints.get(path) else {
                continue;
            };
            let (kind, http) = match endpoint.definition() {
                EndpointDef::Http(http) => (http.kind(), true),
                _ => (Kind::Query, false),
            };
            let sensitive = endpoint.meta().is_sensitive();
            let may_get = if settings.by_definition {
                kind == Kind::Query && !sensitive && http
            } else {
                // A record's `sensitive` list wins over its `get: true`, as in the browser
                // package: a read whose variables are sensitive never goes in an address.
                matches!(shape, RouteShape::Query { get: true })
                    && !settings.routes.sensitive.iter().any(|s| s == path)
            };
            if may_get {
                get.insert(path.to_owned());
            }
            let cancels = kind == Kind::Query
                && http
                && (settings.deduplicate || settings.cancel_previous.contains(path));
            let mut meta = EndpointMeta::new(path, kind)
                .sensitive(sensitive)
                .retry(RetrySetting::Off)
                .cancel_previous(cancels)
                // Handshakes of streams and channels are never shared.
                .coalesce(http && settings.coalesce);
            if let (Some(timeout), true) = (settings.timeout, http) {
                meta = meta.timeout(timeout);
            }
            metas.insert(path.to_owned(), meta);
        }
        Self {
            http: settings.http,
            sse: settings.sse,
            ws: settings.ws,
            source: settings.source,
            routes: settings.routes,
            get,
            by_definition: settings.by_definition,
            headers: settings.headers,
            metas,
            hooks: settings.hooks,
        }
    }

    /// The facts of a call of `endpoint`, with the call's options applied.
    pub(crate) fn meta(
        &self,
        endpoint: &ResolvedEndpoint,
        options: Option<&CallOptions>,
    ) -> EndpointMeta {
        self.metas
            .get(endpoint.path())
            .unwrap_or_else(|| endpoint.meta())
            .with_call(options)
    }

    /// `endpoint`'s request to the proxy: its path, parameters, verb, body and headers.
    pub(crate) fn request(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: Variables,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        let path = endpoint.path();
        if !self.routes.endpoints.contains_key(path) {
            return Err(ConfigurationError::new(
                ErrorCode::EndpointNotInRoutes,
                format!(
                    "`{path}` is not in the routes of source `{}`: mark it `.expose(true)` \
                     (`expose = true` in a config file) and write the routes again \
                     (`courier routes`, or the app's routes binary)",
                    self.source
                ),
            )
            .at(path)
            .into());
        }
        let (mut url, is_http) = match endpoint.definition() {
            EndpointDef::Http(_) => (self.http.clone(), true),
            EndpointDef::Stream(_) => (self.sse.clone(), false),
            EndpointDef::Channel(_) => match &self.ws {
                Some(ws) => (ws.clone(), false),
                None => {
                    return Err(ConfigurationError::new(
                        ErrorCode::WsPathNotConfigured,
                        format!("`{path}` is a channel and the proxy caller has no `ws` path"),
                    )
                    .at(path)
                    .into())
                }
            },
        };
        if !is_http && matches!(variables, Variables::Form(_)) {
            return Err(not_serializable(
                path,
                "a form goes with an HTTP call only; a stream's or channel's variables are JSON",
            ));
        }
        {
            let mut query = url.query_pairs_mut();
            wire::CallAddress {
                source: &self.source,
                group: endpoint.group_path(),
                name: endpoint.name(),
            }
            .append_to(|name, value| {
                query.append_pair(name, value);
            });
            let timeout = options.and_then(|o| o.get_settings().get_timeout());
            if let (true, Some(timeout)) = (is_http, timeout) {
                query.append_pair(wire::TIMEOUT, &wire::timeout_millis(timeout));
            }
        }
        let method = if is_http {
            self.verb(endpoint, &variables, options)?
        } else {
            Method::GET
        };
        let (url, body, content_type) = if method == Method::GET {
            let mut get = url.clone();
            if let Some(json) = json_of(&variables) {
                get.query_pairs_mut()
                    .append_pair(wire::VARIABLES, &wire::variables_json(json));
            }
            let forced = options.and_then(CallOptions::get_method).is_some();
            if !is_http || forced || get.as_str().len() <= MAX_GET_ADDRESS {
                (get, Body::empty(), None)
            } else {
                let (body, kind) = post_body(path, variables)?;
                return self.finish(url, Method::POST, body, Some(kind), options);
            }
        } else {
            let (body, kind) = post_body(path, variables)?;
            (url, body, Some(kind))
        };
        self.finish(url, method, body, content_type, options)
    }

    fn finish(
        &self,
        url: Url,
        method: Method,
        body: Body,
        content_type: Option<HeaderValue>,
        options: Option<&CallOptions>,
    ) -> Result<Request<Body>, Error> {
        let uri = http::Uri::try_from(url.as_str()).map_err(|e| {
            Error::from(ConfigurationError::new(
                ErrorCode::InvalidOption,
                format!("the proxy address `{url}` is not a valid URI: {e}"),
            ))
        })?;
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .body(body)
            .map_err(|e| {
                Error::from(ConfigurationError::new(
                    ErrorCode::InvalidOption,
                    format!("the proxy request cannot be built: {e}"),
                ))
            })?;
        let headers = request.headers_mut();
        for (name, value) in &self.headers {
            headers.append(name, value.clone());
        }
        if let Some(own) = options.map(CallOptions::headers) {
            for name in own.keys() {
                headers.remove(name);
            }
            for (name, value) in own {
                headers.append(name, value.clone());
            }
        }
        if let Some(kind) = content_type {
            headers.insert(CONTENT_TYPE, kind);
        }
        if let Some(served) = options.and_then(CallOptions::get_context) {
            request.extensions_mut().insert(served.clone());
        }
        Ok(request)
    }

    /// GET or POST for an HTTP call (before the address length is known).
    fn verb(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: &Variables,
        options: Option<&CallOptions>,
    ) -> Result<Method, Error> {
        if let Some(method) = options.and_then(CallOptions::get_method) {
            if method == Method::GET {
                // A GET carries its variables in `_v`, as JSON: a form's fields and files, or an
                // upload to watch, would be left behind. Refused, as the browser package does.
                let why = if matches!(variables, Variables::Form(_)) {
                    Some("whose variables are a form")
                } else if options.and_then(CallOptions::upload_progress).is_some() {
                    Some("watching its upload")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(ConfigurationError::new(
                        ErrorCode::InvalidOption,
                        format!("`{}`: a call {why} goes as POST, not GET", endpoint.path()),
                    )
                    .at(endpoint.path())
                    .into());
                }
            }
            if method == Method::GET || method == Method::POST {
                return Ok(method.clone());
            }
            return Err(ConfigurationError::new(
                ErrorCode::InvalidOption,
                format!("a proxy call goes as GET or POST, not {method}"),
            )
            .at(endpoint.path())
            .into());
        }
        let get = self.get.contains(endpoint.path())
            && !matches!(variables, Variables::Form(_))
            && options.and_then(CallOptions::upload_progress).is_none();
        Ok(if get { Method::GET } else { Method::POST })
    }

    /// Whether a call of any endpoint cancels the previous one still in flight.
    pub(crate) fn cancels_previous(&self) -> bool {
        self.metas.values().any(EndpointMeta::cancels_previous)
    }

    /// How a response is read: as the definition says in the source form, by its content type
    /// in the routes form (where the definition is not known).
    pub(crate) fn read_as(&self, headers: &HeaderMap) -> ReadAs {
        if self.by_definition {
            return ReadAs::Definition;
        }
        let kind = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default();
        ReadAs::Type(if kind.is_empty() || wire::is_json_media_type(&kind) {
            ResponseType::Json
        } else if kind.starts_with("text/") {
            ResponseType::Text
        } else if kind == "application/x-www-form-urlencoded" {
            ResponseType::Form
        } else {
            ResponseType::Bytes
        })
    }

    /// Tells `on_error` of a stream's or a channel's opening refused with an HTTP status.
    pub(crate) fn refused(&self, error: &Error) {
        if let Some(on_error) = &self.hooks.on_error {
            on_error(error);
        }
    }

    /// Tells the hooks how a call ended.
    pub(crate) fn report<R: std::any::Any + Send>(
        &self,
        endpoint: &str,
        result: &Result<courier_core::HttpResponse<R>, Error>,
    ) {
        match result {
            Ok(response) => {
                if let Some(on_success) = &self.hooks.on_success {
                    on_success(&Success {
                        endpoint,
                        status: response.status,
                        headers: &response.headers,
                        data: &response.data,
                    });
                }
            }
            // What counts as an HTTPError, as the browser package's `onError` hears it: an
            // answer of 400 and above (the proxy's refusals, the upstream's, a read cancelled by
            // a newer one: 499), and status 0 for no answer at all (a network failure, a
            // timeout).
            Err(error) if error.is_http() || error.is_network() || error.is_timeout() => {
                if let Some(on_error) = &self.hooks.on_error {
                    on_error(error);
                }
            }
            Err(_) => {}
        }
    }
}

/// The variables as the wire's JSON; `None` when there are none.
fn json_of(variables: &Variables) -> Option<&Value> {
    match variables {
        Variables::Json(value) if !value.is_null() => Some(value),
        _ => None,
    }
}

/// A POST's body and content type: `{"variables": …}`, or the form as multipart.
fn post_body(path: &str, variables: Variables) -> Result<(Body, HeaderValue), Error> {
    match variables {
        Variables::Form(form) => {
            let encoded = form.into_multipart().map_err(|e| {
                Error::from(
                    ConfigurationError::new(ErrorCode::InvalidOption, e.to_string()).at(path),
                )
            })?;
            let kind = encoded
                .content_type()
                .unwrap_or(HeaderValue::from_static("multipart/form-data"));
            Ok((encoded.into_body(), kind))
        }
        Variables::Json(value) => Ok((
            Body::from(wire::call_body(Some(&value))),
            HeaderValue::from_static("application/json"),
        )),
        Variables::None => Ok((
            Body::from(wire::call_body(None)),
            HeaderValue::from_static("application/json"),
        )),
    }
}

/// `PROXY_VARIABLE_NOT_SERIALIZABLE` for `endpoint`.
pub(crate) fn not_serializable(endpoint: &str, message: impl Into<String>) -> Error {
    ConfigurationError::new(ErrorCode::ProxyVariableNotSerializable, message)
        .at(endpoint)
        .into()
}
