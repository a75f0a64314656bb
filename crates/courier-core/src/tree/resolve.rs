//! Resolution of a tree into addressable endpoints, computed once when the tree is built:
//!
//! - **Address**: base URL, then each enclosing group's prefix outer to inner, then the endpoint
//!   path, joined with one `/` at each joint ([`join_path`]).
//! - **Names**: a group is named by its dotted path; names may not hold dots or be reserved.
//! - **Path options**: the chain is the source's, then each group's outer to inner.
//! - **Layer settings** (exposure among them): the endpoint's own, else the nearest group's that
//!   sets it, else the source's ([`LayerSettings::over`]).
//! - **Transport**: each setting from the nearest group that sets it, over the source's.

use super::endpoint::{EndpointDef, HttpAddress};
use super::group::GroupDef;
use super::meta::EndpointMeta;
use super::meta::Kind;
use super::path_options::PathOptions;
use super::source::{check_transport, SourceOptions};
use crate::encode::{join_path, PathTemplate};
use crate::error::{ConfigurationError, ErrorCode};
use crate::settings::LayerSettings;
use crate::transport::TransportOptions;
use crate::validate::{self, dotted, NameOf};
use http::HeaderName;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A group of the built tree: its dotted path, nested groups and resolved endpoints.
#[derive(Clone, Debug, Default)]
pub struct ResolvedGroup {
    path: String,
    groups: BTreeMap<String, ResolvedGroup>,
    endpoints: BTreeMap<String, Arc<ResolvedEndpoint>>,
}

impl ResolvedGroup {
    /// The dotted path (`""` for the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A nested group by name.
    pub fn group(&self, name: &str) -> Option<&ResolvedGroup> {
        self.groups.get(name)
    }

    /// A nested group by dotted path relative to this one (`""` is this group).
    pub fn find_group(&self, path: &str) -> Option<&ResolvedGroup> {
        if path.is_empty() {
            return Some(self);
        }
        path.split('.')
            .try_fold(self, |group, name| group.group(name))
    }

    /// An endpoint of this group by name.
    pub fn endpoint(&self, name: &str) -> Option<&Arc<ResolvedEndpoint>> {
        self.endpoints.get(name)
    }

    /// The nested groups.
    pub fn groups(&self) -> &BTreeMap<String, ResolvedGroup> {
        &self.groups
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &BTreeMap<String, Arc<ResolvedEndpoint>> {
        &self.endpoints
    }
}

/// An endpoint with everything its place in the tree decides.
#[derive(Clone, Debug)]
pub struct ResolvedEndpoint {
    path: String,
    group_path: String,
    name: String,
    def: EndpointDef,
    prefix: String,
    template: Option<PathTemplate>,
    path_options: Vec<PathOptions>,
    transport: TransportOptions,
    allowed_headers: Vec<HeaderName>,
    meta: EndpointMeta,
    /// Its place among its API's endpoints: see [`position`](Self::position).
    position: usize,
}

impl ResolvedEndpoint {
    /// The endpoint's place among its API's endpoints, from 0 to one less than their number, in
    /// the order they were resolved: a table with one entry per endpoint (a client's stacks) is
    /// a `Vec` indexed by it rather than a map searched by dotted path. An endpoint of another
    /// [`ApiDef`](crate::ApiDef) may have the same place; a table checks it holds this one.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The dotted path: group path and name (`users.posts.list`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The dotted path of its group (the proxy's `_g`).
    pub fn group_path(&self) -> &str {
        &self.group_path
    }

    /// Its name (the proxy's `_m`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The descriptor.
    pub fn definition(&self) -> &EndpointDef {
        &self.def
    }

    /// The joined prefixes of its groups; a `.via()` path is relative to it.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The full path template (prefixes and the endpoint's path), for endpoints addressed by a
    /// path; the base URL's own path goes before it, literally.
    pub fn template(&self) -> Option<&PathTemplate> {
        self.template.as_ref()
    }

    /// The path options chain, source first.
    pub fn path_options(&self) -> &[PathOptions] {
        &self.path_options
    }

    /// Whether a browser may call it through the proxy.
    pub fn is_exposed(&self) -> bool {
        self.meta.get_settings().get_expose() == Some(true)
    }

    /// The transport settings that apply.
    pub fn transport(&self) -> &TransportOptions {
        &self.transport
    }

    /// The source's allowed headers plus the endpoint's own `.headers()`.
    pub fn allowed_headers(&self) -> &[HeaderName] {
        &self.allowed_headers
    }

    /// The facts layers read about its calls, before a call's options apply
    /// ([`EndpointMeta::with_call`]).
    pub fn meta(&self) -> &EndpointMeta {
        &self.meta
    }

    /// Read or write, for HTTP endpoints.
    pub fn kind(&self) -> Option<Kind> {
        self.def.as_http().map(|h| h.kind())
    }
}

/// Where a walk is: what enclosing levels have decided so far.
struct Scope<'a> {
    source: &'a SourceOptions,
    path: String,
    prefix: String,
    chain: Vec<PathOptions>,
    transport: TransportOptions,
    /// The layer settings decided so far: the source's, under each enclosing group's.
    settings: LayerSettings,
}

pub(crate) fn resolve_root(
    source: &SourceOptions,
    groups: &BTreeMap<String, GroupDef>,
    index: &mut HashMap<String, Arc<ResolvedEndpoint>>,
) -> Result<ResolvedGroup, ConfigurationError> {
    let scope = Scope {
        source,
        path: String::new(),
        prefix: String::new(),
        chain: source.path_options.iter().cloned().collect(),
        transport: source.transport.clone(),
        settings: source.settings.clone(),
    };
    let mut root = ResolvedGroup::default();
    for (name, group) in groups {
        let resolved = resolve_group(&scope, name, group, index)?;
        root.groups.insert(name.clone(), resolved);
    }
    Ok(root)
}

fn template(pieces: &[&str], path: &str) -> Result<(String, PathTemplate), ConfigurationError> {
    let joined = join_path(pieces);
    let parsed = PathTemplate::parse(&joined).map_err(|e| {
        ConfigurationError::new(ErrorCode::InvalidPath, format!("`{joined}`: {e}")).at(path)
    })?;
    Ok((joined, parsed))
}

fn resolve_group(
    outer: &Scope<'_>,
    name: &str,
    group: &GroupDef,
    index: &mut HashMap<String, Arc<ResolvedEndpoint>>,
) -> Result<ResolvedGroup, ConfigurationError> {
    let path = dotted(&outer.path, name);
    validate::check_name(NameOf::Group, name, &path)?;
    let (prefix, _) = template(&[&outer.prefix, &group.prefix], &format!("{path}.prefix"))?;
    let transport = group.transport.over(&outer.transport);
    check_transport(&group.transport, &format!("{path}.transport"))?;
    let mut chain = outer.chain.clone();
    chain.extend(group.path_options.iter().cloned());
    group.settings.check(&path)?;
    let scope = Scope {
        source: outer.source,
        path: path.clone(),
        prefix,
        chain,
        transport,
        settings: group.settings.over(&outer.settings),
    };

    let mut resolved = ResolvedGroup {
        path: path.clone(),
        ..ResolvedGroup::default()
    };
    for (name, endpoint) in &group.endpoints {
        let endpoint = resolve_endpoint(&scope, name, endpoint, index.len())?;
        index.insert(endpoint.path.clone(), Arc::clone(&endpoint));
        resolved.endpoints.insert(name.clone(), endpoint);
    }
    for (name, inner) in &group.groups {
        let inner = resolve_group(&scope, name, inner, index)?;
        resolved.groups.insert(name.clone(), inner);
    }
    Ok(resolved)
}

fn resolve_endpoint(
    scope: &Scope<'_>,
    name: &str,
    def: &EndpointDef,
    position: usize,
) -> Result<Arc<ResolvedEndpoint>, ConfigurationError> {
    let path = dotted(&scope.path, name);
    validate::check_name(NameOf::Endpoint, name, &path)?;

    let template = match def.path() {
        Some(own) => Some(template(&[&scope.prefix, own], &format!("{path}.path"))?.1),
        None => None,
    };
    if let EndpointDef::Http(http) = def {
        if let HttpAddress::Path { method, .. } = http.address() {
            if http.is_stream_response() && method == http::Method::HEAD {
                return Err(ConfigurationError::new(
                    ErrorCode::InvalidOption,
                    "a HEAD response has no body to stream",
                )
                .at(&path));
            }
        }
    }

    let options = def.options();
    options.settings.check(&path)?;
    if def.as_http().is_none() && options.settings.cache.is_some() {
        return Err(ConfigurationError::new(
            ErrorCode::InvalidOption,
            "`cache` keeps a read's answers; a stream's events and a channel's messages are \
             not kept",
        )
        .at(format!("{path}.cache")));
    }
    if def.as_http().is_none() && options.settings.idempotency_key == Some(true) {
        return Err(ConfigurationError::new(
            ErrorCode::InvalidOption,
            "`idempotency_key` makes a write safe to send again; a stream or a channel is not \
             one",
        )
        .at(format!("{path}.idempotency_key")));
    }
    let settings = options.settings.over(&scope.settings);
    let mut allowed_headers = scope.source.allowed_headers.clone();
    // A write with a key: the key a browser made crosses the proxy, for this endpoint only.
    let write = def.as_http().is_some_and(|h| h.kind() != Kind::Query);
    if settings.get_idempotency_key() == Some(true) && write {
        allowed_headers.push(crate::IDEMPOTENCY_KEY);
    }
    for header in &options.headers {
        let header = validate::crossing_header_name(header, &format!("{path}.headers"))?;
        if !allowed_headers.contains(&header) {
            allowed_headers.push(header);
        }
    }

    let source = scope.source;
    let meta = EndpointMeta::new(
        path.as_str(),
        def.as_http().map_or(Kind::Query, |h| h.kind()),
    )
    .sensitive(def.as_http().is_some_and(|h| h.is_sensitive()))
    .settings(settings)
    .cancel_previous(
        source.cancel_previous.contains(&path)
            || (source.deduplicate && def.as_http().is_some_and(|h| h.kind() == Kind::Query)),
    )
    .session(options.session)
    .forward(options.forward)
    .allowed_headers(allowed_headers.iter().cloned())
    .meta(options.meta.clone());

    Ok(Arc::new(ResolvedEndpoint {
        meta,
        group_path: scope.path.clone(),
        name: name.to_owned(),
        def: def.clone(),
        prefix: scope.prefix.clone(),
        template,
        path_options: scope.chain.clone(),
        transport: scope.transport.clone(),
        allowed_headers,
        path,
        position,
    }))
}
