//! [`GroupDef`]: a URL prefix, options and a record of endpoints and nested groups.

use super::endpoint::EndpointDef;
use super::path_options::PathOptions;
use crate::settings::LayerSettings;
use crate::transport::{Dispatcher, Fetch, TransportOptions};
use std::collections::BTreeMap;

/// A group of endpoints and nested groups, to any depth.
///
/// A group may hold endpoints, groups, or both; a group made only of groups needs no endpoints.
/// A member named the same as a contained group is both callable as the endpoint and readable as
/// the group. Adding a second endpoint (or group) under a name replaces the first.
///
/// ```
/// use courier::tree::PathOptions;
/// use courier::{GroupDef, HttpEndpoint};
/// use serde_json::json;
///
/// let posts = GroupDef::new()
///     .prefix("/:id/posts")
///     .endpoint("list", HttpEndpoint::get(""));
/// let users = GroupDef::new()
///     .prefix("/users")
///     .path_options(PathOptions::fixed(json!({ "tenant": "acme" })))
///     .expose(true)
///     .endpoint("get", HttpEndpoint::get("/:id"))
///     .group("posts", posts);
/// assert_eq!(users.groups().len(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct GroupDef {
    pub(crate) prefix: String,
    pub(crate) path_options: Option<PathOptions>,
    pub(crate) transport: TransportOptions,
    pub(crate) settings: LayerSettings,
    pub(crate) endpoints: BTreeMap<String, EndpointDef>,
    pub(crate) groups: BTreeMap<String, GroupDef>,
}

// The layer settings: the group's, under its nested groups' and
// endpoints' own.
crate::settings::layer_settings!(level_setters([] GroupDef; this => this.settings; tree));

impl GroupDef {
    /// An empty group with no prefix.
    pub fn new() -> Self {
        Self::default()
    }

    /// The path prepended to every endpoint of the group; it may hold `:name` parameters.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Values for path parameters, resolved after the source's and outer groups'.
    #[must_use]
    pub fn path_options(mut self, options: PathOptions) -> Self {
        self.path_options = Some(options);
        self
    }

    /// A replacement transport for the group's calls.
    #[must_use]
    pub fn fetch(mut self, fetch: Fetch) -> Self {
        self.transport.fetch = Some(fetch);
        self
    }

    /// How the group's connections are made.
    #[must_use]
    pub fn dispatcher(mut self, dispatcher: Dispatcher) -> Self {
        self.transport.dispatcher = Some(dispatcher);
        self
    }

    /// Adds an endpoint of any head.
    #[must_use]
    pub fn endpoint(mut self, name: impl Into<String>, endpoint: impl Into<EndpointDef>) -> Self {
        self.endpoints.insert(name.into(), endpoint.into());
        self
    }

    /// Adds a nested group.
    #[must_use]
    pub fn group(mut self, name: impl Into<String>, group: GroupDef) -> Self {
        self.groups.insert(name.into(), group);
        self
    }

    /// The prefix.
    pub fn prefix_path(&self) -> &str {
        &self.prefix
    }

    /// The group's own path options.
    pub fn path_options_ref(&self) -> Option<&PathOptions> {
        self.path_options.as_ref()
    }

    /// The group's own exposure setting.
    pub fn exposure(&self) -> Option<bool> {
        self.settings.expose
    }

    /// The group's own transport settings.
    pub fn transport(&self) -> &TransportOptions {
        &self.transport
    }

    /// The group's own [`LayerSettings`], under its
    /// nested groups' and endpoints' and over the source's.
    pub fn get_settings(&self) -> &LayerSettings {
        &self.settings
    }

    /// The endpoints, by name.
    pub fn endpoints(&self) -> &BTreeMap<String, EndpointDef> {
        &self.endpoints
    }

    /// The nested groups, by name.
    pub fn groups(&self) -> &BTreeMap<String, GroupDef> {
        &self.groups
    }
}
