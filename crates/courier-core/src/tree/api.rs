//! [`ApiDef`]: a source — base URL, options, groups — built and validated by [`ApiBuilder`].

use super::endpoint::EndpointDef;
use super::group::GroupDef;
use super::meta::Kind;
use super::path_options::PathOptions;
use super::resolve::{ResolvedEndpoint, ResolvedGroup};
use super::source::{check_transport, ResponseParser, SourceOptions};
use crate::encode::{BodySerializer, SearchParamsSerializer};
use crate::error::{ConfigurationError, ErrorCode};
use crate::options::{ForwardOptions, ResponseType, SessionOptions};
use crate::transport::{Dispatcher, Fetch, Middleware};
use crate::validate;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Builds an [`ApiDef`]. Setters take and return `self`; [`build`] validates the whole tree and
/// returns the first error met.
///
/// [`build`]: ApiBuilder::build
#[derive(Debug, Default)]
#[must_use]
pub struct ApiBuilder {
    options: SourceOptions,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    allowed_headers: Vec<String>,
    groups: BTreeMap<String, GroupDef>,
    /// Built for its routes only ([`ApiBuilder::for_routes`]): no base URL needed.
    for_routes: bool,
}

// The layer settings: the source's, under every group's,
// endpoint's and call's own.
crate::settings::layer_settings!(level_setters([] ApiBuilder; this => this.options.settings; tree));

impl ApiBuilder {
    /// Builds the definition for its routes only, which need the API's shape and not its
    /// address: the app's routes binary ([`courier::routes::Command`]) builds it so, and needs
    /// no `base_url`. A client of it — and so a proxy serving it — still refuses an endpoint it
    /// has no address for ([`ApiDef::check_addressed`]).
    ///
    /// ```
    /// use courier::{ApiDef, GroupDef, HttpEndpoint};
    ///
    /// let users = GroupDef::new().expose(true).endpoint("get", HttpEndpoint::get("/:id"));
    /// let api = ApiDef::builder().for_routes().group("users", users).build()?;
    /// assert_eq!(courier::routes::Routes::from_api("demo", &api).endpoints.len(), 1);
    /// assert!(courier::Client::new(api).is_err()); // no base_url to call it at
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    ///
    /// [`courier::routes::Command`]: https://docs.rs/courier/latest/courier/routes/struct.Command.html
    pub fn for_routes(mut self) -> Self {
        self.for_routes = true;
        self
    }

    /// The prefix of every request: an absolute `http` or `https` URL. Its path is kept
    /// literally (no `:name` parameters in it).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// How response bodies are parsed.
    pub fn response_type(mut self, response_type: ResponseType) -> Self {
        self.options.response_type = response_type;
        self
    }

    /// A custom response parser, over the response type.
    pub fn response_parser(mut self, parser: ResponseParser) -> Self {
        self.options.response_parser = Some(parser);
        self
    }

    /// Merged into every POST, PUT and PATCH body; a JSON value that is not an object adds
    /// nothing.
    pub fn default_body(mut self, body: Value) -> Self {
        if let Value::Object(map) = body {
            self.options.default_body.extend(map);
        }
        self
    }

    /// Merged into the search parameters of every request; a JSON value that is not an object
    /// adds nothing.
    pub fn default_query_params(mut self, params: Value) -> Self {
        if let Value::Object(map) = params {
            self.options.default_query_params.extend(map);
        }
        self
    }

    /// Extra header names the proxy carries for every endpoint, both ways.
    pub fn allowed_headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_headers
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// A custom body encoder, e.g. [`UrlEncodedBody`](crate::encode::UrlEncodedBody).
    pub fn body_serializer(mut self, serializer: impl BodySerializer + 'static) -> Self {
        self.options.body_serializer = Some(Arc::new(serializer));
        self
    }

    /// A custom search-parameter encoder and decoder.
    pub fn search_params_serializer(
        mut self,
        serializer: impl SearchParamsSerializer + 'static,
    ) -> Self {
        self.options.search_params_serializer = Arc::new(serializer);
        self
    }

    /// Dotted paths of reads a newer call cancels while in flight. Each must name a read of
    /// this API, else `build` fails with `CANCEL_PREVIOUS_INVALID`.
    pub fn cancel_previous<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options
            .cancel_previous
            .extend(paths.into_iter().map(Into::into));
        self
    }

    /// Every read is cancelled by a newer call of the same endpoint still in flight, as if each
    /// were listed in [`cancel_previous`](Self::cancel_previous) (the browser package's
    /// `deduplicate`). A proxy caller made from this source takes it as its default. Default
    /// false.
    pub fn deduplicate(mut self, deduplicate: bool) -> Self {
        self.options.deduplicate = deduplicate;
        self
    }

    /// At most `calls` in flight to the source at once (at least one): a call beyond it is
    /// refused at once, 503 `UPSTREAM_OVERLOADED` with `Retry-After`, rather than queued behind
    /// the others, so that a slow upstream does not gather calls without end. Reads that share
    /// a call in flight count once; a call counts until its answer's head comes, retries
    /// included. Default: no bound.
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.options.max_in_flight = Some(calls);
        self
    }

    /// Applies a tower layer to every request, outermost first.
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.options.middleware.push(middleware);
        self
    }

    /// Values for path parameters, resolved before every group's.
    pub fn path_options(mut self, options: PathOptions) -> Self {
        self.options.path_options = Some(options);
        self
    }

    /// A header always sent; checked by `build`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Keeps the user's session on calls made while serving a request.
    pub fn session(mut self, session: SessionOptions) -> Self {
        self.options.session = Some(session);
        self
    }

    /// Carries headers from a served request.
    pub fn forward(mut self, forward: ForwardOptions) -> Self {
        self.options.forward = Some(forward);
        self
    }

    /// A replacement transport.
    pub fn fetch(mut self, fetch: Fetch) -> Self {
        self.options.transport.fetch = Some(fetch);
        self
    }

    /// How connections are made.
    pub fn dispatcher(mut self, dispatcher: Dispatcher) -> Self {
        self.options.transport.dispatcher = Some(dispatcher);
        self
    }

    /// Aborts every call of the source when `signal` is cancelled.
    pub fn signal(mut self, signal: CancellationToken) -> Self {
        self.options.signal = Some(signal);
        self
    }

    /// Adds a group.
    pub fn group(mut self, name: impl Into<String>, group: GroupDef) -> Self {
        self.groups.insert(name.into(), group);
        self
    }

    /// Validates the tree and builds it.
    ///
    /// # Errors
    ///
    /// The first [`ConfigurationError`] met: names (`EMPTY_NAME`, `DOTTED_NAME`,
    /// `RESERVED_ENDPOINT_NAME`), addresses (`INVALID_BASE_URL`, `INVALID_PATH`), headers
    /// (`INVALID_HEADER`, `HEADER_NEVER_CROSSES`, `SESSION_HEADER_CONFLICT`), `CANCEL_PREVIOUS_INVALID`,
    /// `SOURCE_TRANSPORT_INVALID` and `INVALID_OPTION`.
    pub fn build(self) -> Result<ApiDef, ConfigurationError> {
        let ApiBuilder {
            mut options,
            base_url,
            headers,
            allowed_headers,
            groups,
            for_routes,
        } = self;

        if let Some(url) = base_url {
            options.base_url = Some(validate::base_url(&url)?);
        }
        for (name, value) in &headers {
            let path = format!("headers.{name}");
            let header = validate::header_name(name, &path)?;
            let value = validate::header_value(name, value, &path)?;
            options.headers.append(header, value);
        }
        for name in &allowed_headers {
            let header = validate::crossing_header_name(name, "allowed_headers")?;
            options.allowed_headers.push(header);
        }
        check_source(&options)?;

        let mut index = HashMap::new();
        let root = super::resolve::resolve_root(&options, &groups, &mut index)?;

        check_session_conflict(&options, &index)?;
        check_cancel_previous(&options, &index)?;
        check_topics(&index)?;
        let api = ApiDef {
            inner: Arc::new(ApiInner {
                options,
                groups,
                root,
                index,
            }),
        };
        if !for_routes {
            api.check_addressed()?;
        }
        Ok(api)
    }
}

fn check_source(options: &SourceOptions) -> Result<(), ConfigurationError> {
    options.settings.check("")?;
    if let Some(session) = &options.session {
        for cookie in &session.cookies {
            let name = cookie.strip_suffix('*').unwrap_or(cookie);
            if name.is_empty() && cookie != "*" || name.contains(['=', ';', ' ', ',']) {
                return Err(ConfigurationError::new(
                    ErrorCode::InvalidOption,
                    format!("`{cookie}` is not a cookie name or a prefix ending in `*`"),
                )
                .at("session.cookies"));
            }
        }
        if let Some(csrf) = &session.csrf {
            validate::header_name(&csrf.header, "session.csrf.header")?;
            if csrf
                .key
                .as_ref()
                .is_some_and(|key| key.as_bytes().len() < 32)
            {
                return Err(ConfigurationError::new(
                    ErrorCode::InvalidOption,
                    "a CSRF signing key is 32 bytes or more (random, kept secret)",
                )
                .at("session.csrf.key"));
            }
        }
        for origin in &session.trusted_origins {
            validate::origin(origin, "session.trusted_origins")?;
        }
    }
    if let Some(forward) = &options.forward {
        if let Some(name) = forward.request_id.header_or("x-request-id") {
            validate::crossing_header_name(name, "forward.request_id")?;
        }
        if let Some(name) = forward.client_address.header_or("x-forwarded-for") {
            validate::crossing_header_name(name, "forward.client_address")?;
        }
        for name in &forward.headers {
            validate::crossing_header_name(name, "forward.headers")?;
        }
    }
    check_transport(&options.transport, "transport")
}

fn check_session_conflict(
    options: &SourceOptions,
    index: &HashMap<String, Arc<ResolvedEndpoint>>,
) -> Result<(), ConfigurationError> {
    if options.session.is_none() {
        return Ok(());
    }
    let conflict = |name: &str, path: String| {
        ConfigurationError::new(
            ErrorCode::SessionHeaderConflict,
            format!(
                "an API with `session` manages cookies itself and may not list `{name}` in its allowed or forwarded headers"
            ),
        )
        .at(path)
    };
    if let Some(name) = options
        .allowed_headers
        .iter()
        .find(|h| validate::is_cookie_header(h.as_str()))
    {
        return Err(conflict(name.as_str(), "allowed_headers".into()));
    }
    if let Some(name) = options
        .forward
        .iter()
        .flat_map(|f| &f.headers)
        .find(|h| validate::is_cookie_header(h))
    {
        return Err(conflict(name, "forward.headers".into()));
    }
    let mut paths: Vec<_> = index.keys().collect();
    paths.sort();
    for path in paths {
        let endpoint = &index[path];
        if let Some(name) = endpoint
            .definition()
            .options()
            .headers
            .iter()
            .find(|h| validate::is_cookie_header(h))
        {
            return Err(conflict(name, format!("{path}.headers")));
        }
    }
    Ok(())
}

/// A source without a base URL: every endpoint another process serves must have a replaced
/// transport (a `fetch` of its group's or the source's) to reach it, or every call would fail as
/// a network error that never names the base URL.
/// The first endpoint served by another process that `api` has no address for.
fn check_addressed(api: &ApiDef) -> Result<(), ConfigurationError> {
    use super::endpoint::{ChannelSource, StreamSource};
    if api.inner.options.base_url.is_some() {
        return Ok(());
    }
    let index = &api.inner.index;
    let mut paths: Vec<_> = index.keys().collect();
    paths.sort();
    for path in paths {
        let endpoint = &index[path];
        let remote = match endpoint.definition() {
            EndpointDef::Http(_) => true,
            EndpointDef::Stream(stream) => !matches!(stream.source(), StreamSource::Implemented(_)),
            EndpointDef::Channel(channel) => {
                !matches!(channel.source(), ChannelSource::Implemented(_))
            }
        };
        if remote && endpoint.transport().fetch.is_none() {
            return Err(ConfigurationError::new(
                ErrorCode::InvalidBaseUrl,
                format!(
                    "the source has no `base_url`, and `{path}` is served by another process: set `base_url` \
                     to its absolute http:// or https:// address (or give the source or the group a \
                     `fetch` transport that reaches it)"
                ),
            )
            .at("base_url"));
        }
    }
    Ok(())
}

/// A topic is how this process's hub groups the subscribers of a channel it implements: on a
/// channel another process serves (`.connect()`, `.via()`) that process decides, and a topic
/// here would do nothing, so it is refused.
fn check_topics(index: &HashMap<String, Arc<ResolvedEndpoint>>) -> Result<(), ConfigurationError> {
    let mut paths: Vec<_> = index.keys().collect();
    paths.sort();
    for path in paths {
        let EndpointDef::Channel(channel) = index[path].definition() else {
            continue;
        };
        let implemented = matches!(
            channel.source(),
            super::endpoint::ChannelSource::Implemented(_)
        );
        if !implemented && !matches!(channel.topic_spec(), super::endpoint::Topic::AllVariables) {
            return Err(ConfigurationError::new(
                ErrorCode::InvalidOption,
                format!(
                    "`{path}` has a topic, but another process serves it (`.connect()` or `.via()`): \
                     topics group the subscribers of a channel this process implements; that \
                     process decides who shares its messages"
                ),
            )
            .at(format!("{path}.topic")));
        }
    }
    Ok(())
}

fn check_cancel_previous(
    options: &SourceOptions,
    index: &HashMap<String, Arc<ResolvedEndpoint>>,
) -> Result<(), ConfigurationError> {
    for path in &options.cancel_previous {
        let invalid = |why: &str| {
            ConfigurationError::new(
                ErrorCode::CancelPreviousInvalid,
                format!("cancel_previous lists `{path}`, {why}"),
            )
            .at("cancel_previous")
        };
        match index.get(path.as_str()).map(|e| e.definition()) {
            None => return Err(invalid("which this API does not define")),
            Some(EndpointDef::Http(http)) if http.kind() == Kind::Query => {}
            Some(EndpointDef::Http(_)) => {
                return Err(invalid("which writes; only reads can be cancelled"))
            }
            Some(_) => {
                return Err(invalid(
                    "which is a stream or channel; only HTTP reads can be cancelled",
                ))
            }
        }
    }
    Ok(())
}

#[derive(Debug)]
struct ApiInner {
    options: SourceOptions,
    groups: BTreeMap<String, GroupDef>,
    root: ResolvedGroup,
    index: HashMap<String, Arc<ResolvedEndpoint>>,
}

/// A built, validated source: its options, its groups, and each endpoint resolved (full
/// address template, path options chain, exposure, transport). Cheap to clone.
///
/// ```
/// use courier::{ApiDef, GroupDef, HttpEndpoint};
///
/// let api = ApiDef::builder()
///     .base_url("http://127.0.0.1:9000/v1")
///     .group(
///         "users",
///         GroupDef::new()
///             .prefix("/users")
///             .endpoint("get", HttpEndpoint::get("/:id"))
///             .group("posts", GroupDef::new().prefix("/:id/posts").endpoint("list", HttpEndpoint::get(""))),
///     )
///     .build()?;
///
/// let list = api.endpoint("users.posts.list").unwrap();
/// assert_eq!(list.template().unwrap().as_str(), "/users/:id/posts");
/// assert_eq!(list.group_path(), "users.posts");
/// # Ok::<(), courier::ConfigurationError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ApiDef {
    inner: Arc<ApiInner>,
}

impl ApiDef {
    /// Starts a source.
    pub fn builder() -> ApiBuilder {
        ApiBuilder::default()
    }

    /// Whether every endpoint served by another process has an address: the source's
    /// `base_url`, or a `fetch` transport of its own. [`ApiBuilder::build`] checks it, unless
    /// the definition is [built for its routes](ApiBuilder::for_routes); a client checks it
    /// again before it calls.
    ///
    /// # Errors
    ///
    /// `INVALID_BASE_URL` at `base_url`, naming the first such endpoint.
    pub fn check_addressed(&self) -> Result<(), ConfigurationError> {
        check_addressed(self)
    }

    /// The source's options.
    pub fn options(&self) -> &SourceOptions {
        &self.inner.options
    }

    /// The groups as defined.
    pub fn groups(&self) -> &BTreeMap<String, GroupDef> {
        &self.inner.groups
    }

    /// The resolved tree, from the root (which holds groups only).
    pub fn root(&self) -> &ResolvedGroup {
        &self.inner.root
    }

    /// A resolved endpoint by its dotted path (`users.posts.list`).
    pub fn endpoint(&self, path: &str) -> Option<&Arc<ResolvedEndpoint>> {
        self.inner.index.get(path)
    }

    /// A resolved endpoint by group path and name, as the proxy's `_g` and `_m` give them.
    pub fn endpoint_in(&self, group: &str, name: &str) -> Option<&Arc<ResolvedEndpoint>> {
        self.root().find_group(group)?.endpoint(name)
    }

    /// Every endpoint, sorted by dotted path.
    pub fn endpoints(&self) -> Vec<&Arc<ResolvedEndpoint>> {
        let mut all: Vec<_> = self.inner.index.values().collect();
        all.sort_by(|a, b| a.path().cmp(b.path()));
        all
    }
}
