//! A source's own options ([`SourceOptions`]), its response parser, and the check of a
//! transport's settings that sources and groups share.

use super::path_options::PathOptions;
use crate::body::BoxError;
use crate::encode::{BodySerializer, DefaultSearchParams, SearchParamsSerializer};
use crate::error::{ConfigurationError, ErrorCode};
use crate::options::{ForwardOptions, ResponseType, SessionOptions};
use crate::settings::LayerSettings;
use crate::transport::{Middleware, TransportOptions};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, Uri};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

type ParseFn = dyn Fn(&http::response::Parts, Bytes) -> Result<Value, BoxError> + Send + Sync;

/// A custom response parser; overrides the response type.
#[derive(Clone)]
pub struct ResponseParser(Arc<ParseFn>);

impl ResponseParser {
    /// Wraps a parser of a buffered response.
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&http::response::Parts, Bytes) -> Result<Value, BoxError> + Send + Sync + 'static,
    {
        Self(Arc::new(f))
    }

    /// Parses one response.
    pub fn parse(&self, parts: &http::response::Parts, body: Bytes) -> Result<Value, BoxError> {
        (self.0)(parts, body)
    }
}

impl fmt::Debug for ResponseParser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseParser(..)")
    }
}

/// A source's options, all of them; read them on a built [`ApiDef`](crate::ApiDef) with
/// [`ApiDef::options`](crate::ApiDef::options).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SourceOptions {
    /// The prefix of every request of the source.
    pub base_url: Option<Uri>,
    /// How response bodies are parsed. Default JSON.
    pub response_type: ResponseType,
    /// A custom parser, over `response_type`.
    pub response_parser: Option<ResponseParser>,
    /// Merged into every POST, PUT and PATCH body.
    pub default_body: Map<String, Value>,
    /// Merged into the search parameters of every request.
    pub default_query_params: Map<String, Value>,
    /// Extra header names the proxy carries for every endpoint, both ways.
    pub allowed_headers: Vec<HeaderName>,
    /// A custom body encoder.
    pub body_serializer: Option<Arc<dyn BodySerializer>>,
    /// The search-parameter encoder and decoder.
    pub search_params_serializer: Arc<dyn SearchParamsSerializer>,
    /// Dotted paths of reads that a newer call cancels while in flight.
    pub cancel_previous: Vec<String>,
    /// Every read is cancelled by a newer call of the same endpoint, as if all were listed in
    /// `cancel_previous`. Default false.
    pub deduplicate: bool,
    /// At most this many calls in flight to the source at once (at least one): a call beyond it
    /// is refused at once, 503 with `Retry-After`, rather than queued. Reads that share a call
    /// in flight count once; a call counts until its answer's head comes. `None`, the default:
    /// no bound.
    pub max_in_flight: Option<usize>,
    /// Layers applied to every request, outermost first.
    pub middleware: Vec<Middleware>,
    /// Values for path parameters, resolved before every group's.
    pub path_options: Option<PathOptions>,
    /// The settings the layers read ([`LayerSettings`]), under
    /// every group's, endpoint's and call's own.
    pub settings: LayerSettings,
    /// Headers always sent.
    pub headers: HeaderMap,
    /// How the user's session is kept.
    pub session: Option<SessionOptions>,
    /// What a call made while serving a request carries from it.
    pub forward: Option<ForwardOptions>,
    /// The source's transport settings.
    pub transport: TransportOptions,
    /// Aborts every call of the source when cancelled; a call's own signal aborts that call
    /// alone.
    pub signal: Option<CancellationToken>,
}

impl SourceOptions {
    /// Whether the source's reads share identical calls in flight, unless a group, an endpoint
    /// or a call says otherwise: its `coalesce` setting, on by default.
    pub fn coalesces(&self) -> bool {
        self.settings.coalesce.unwrap_or(true)
    }
}

impl Default for SourceOptions {
    fn default() -> Self {
        Self {
            base_url: None,
            response_type: ResponseType::Json,
            response_parser: None,
            default_body: Map::new(),
            default_query_params: Map::new(),
            allowed_headers: Vec::new(),
            body_serializer: None,
            search_params_serializer: Arc::new(DefaultSearchParams),
            cancel_previous: Vec::new(),
            deduplicate: false,
            max_in_flight: None,
            middleware: Vec::new(),
            path_options: None,
            settings: LayerSettings::new(),
            headers: HeaderMap::new(),
            session: None,
            forward: None,
            transport: TransportOptions::default(),
            signal: None,
        }
    }
}

pub(crate) fn check_transport(
    transport: &TransportOptions,
    path: &str,
) -> Result<(), ConfigurationError> {
    if let Some(proxy) = transport.dispatcher.as_ref().and_then(|d| d.proxy.as_ref()) {
        if !matches!(proxy.scheme_str(), Some("http" | "https")) || proxy.host().is_none() {
            return Err(ConfigurationError::new(
                ErrorCode::SourceTransportInvalid,
                format!("the proxy `{proxy}` must be an http:// or https:// URL with a host"),
            )
            .at(format!("{path}.proxy")));
        }
    }
    Ok(())
}
