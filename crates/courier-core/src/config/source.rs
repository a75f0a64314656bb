//! A `[sources.NAME]` table to an [`ApiDef`], through [`ApiDef::builder`] and [`GroupDef`], so
//! a file is validated by exactly the rules a tree built in Rust is.

use super::endpoint::endpoint;
use super::json;
use super::key_path::KeyPath;
use super::raw::{BodySerializerName, RawGroup, RawSource};
use super::transport::dispatcher;
use crate::encode::UrlEncodedBody;
use crate::error::{ConfigurationError, ErrorCode};
use crate::tree::api::ApiDef;
use crate::tree::group::GroupDef;
use crate::tree::path_options::PathOptions;
use crate::validate::{self, NameOf};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Builds the source `name`; file names in it resolve against `base`.
///
/// Names are checked here first, by the builder's own rule, so that their errors carry the file's
/// key path (`sources.demo.groups.users.endpoints."by.id"`). Any other error from the builder
/// keeps its code; its path, which the builder gives relative to the source as a dotted endpoint
/// path (`users.get.timeout`), is prefixed with the source's key path (`sources.demo.`).
pub(super) fn source(
    name: &str,
    raw: RawSource,
    base: &Path,
) -> Result<ApiDef, ConfigurationError> {
    let at = KeyPath::root().key("sources").key(name);
    check_source_name(name, &at)?;

    let mut api = ApiDef::builder();
    if let Some(url) = raw.base_url {
        api = api.base_url(url);
    }
    if let Some(ms) = raw.timeout_ms {
        api = api.timeout(Duration::from_millis(ms));
    }
    for (header, value) in raw.headers {
        api = api.header(header, value);
    }
    if let Some(params) = raw.default_query_params {
        let params = json::table(params, &at.key("default_query_params"))?;
        api = api.default_query_params(Value::Object(params));
    }
    if let Some(body) = raw.default_body {
        let body = json::table(body, &at.key("default_body"))?;
        api = api.default_body(Value::Object(body));
    }
    if let Some(response_type) = raw.response_type {
        api = api.response_type(response_type);
    }
    match raw.body_serializer {
        // JSON is the builder's default encoder: nothing to set.
        Some(BodySerializerName::Json) | None => {}
        Some(BodySerializerName::Urlencoded) => {
            api = api.body_serializer(UrlEncodedBody);
        }
    }
    if let Some(coalesce) = raw.coalesce {
        api = api.coalesce(coalesce);
    }
    api = api
        .cancel_previous(raw.cancel_previous)
        .deduplicate(raw.deduplicate.unwrap_or(false))
        .allowed_headers(raw.allowed_headers);
    if let Some(values) = raw.path_options {
        api = api.path_options(path_options(values, &at.key("path_options"))?);
    }
    if let Some(session) = raw.session {
        api = api.session(session);
    }
    if let Some(forward) = raw.forward {
        api = api.forward(forward);
    }
    if let Some(expose) = raw.expose {
        api = api.expose(expose);
    }
    if let Some(transport) = raw.transport {
        api = api.dispatcher(dispatcher(transport, &at.key("transport"), base)?);
    }
    let groups_at = at.key("groups");
    for (name, raw) in raw.groups {
        let group_at = groups_at.key(&name);
        validate::check_name(NameOf::Group, &name, group_at.as_str())?;
        let built = group(raw, &group_at, base)?;
        api = api.group(name, built);
    }

    api.build().map_err(|err| {
        let path = at.join_dotted(err.path().unwrap_or(""));
        err.at(path)
    })
}

/// A group table at `at`, with its endpoints and nested groups.
fn group(raw: RawGroup, at: &KeyPath, base: &Path) -> Result<GroupDef, ConfigurationError> {
    let mut def = GroupDef::new();
    if let Some(prefix) = raw.prefix {
        def = def.prefix(prefix);
    }
    if let Some(expose) = raw.expose {
        def = def.expose(expose);
    }
    if let Some(values) = raw.path_options {
        def = def.path_options(path_options(values, &at.key("path_options"))?);
    }
    if let Some(transport) = raw.transport {
        def = def.dispatcher(dispatcher(transport, &at.key("transport"), base)?);
    }
    let endpoints_at = at.key("endpoints");
    for (name, raw) in raw.endpoints {
        let endpoint_at = endpoints_at.key(&name);
        validate::check_name(NameOf::Endpoint, &name, endpoint_at.as_str())?;
        let built = endpoint(raw, &endpoint_at)?;
        def = def.endpoint(name, built);
    }
    let groups_at = at.key("groups");
    for (name, raw) in raw.groups {
        let group_at = groups_at.key(&name);
        validate::check_name(NameOf::Group, &name, group_at.as_str())?;
        let built = group(raw, &group_at, base)?;
        def = def.group(name, built);
    }
    Ok(def)
}

/// A file's `path_options` is always fixed values.
fn path_options(values: toml::Table, at: &KeyPath) -> Result<PathOptions, ConfigurationError> {
    Ok(PathOptions::fixed(Value::Object(json::table(values, at)?)))
}

/// A source name is the proxy's `_s` and the first key of every error path: it may be neither
/// empty nor dotted, by the same rules as group and endpoint names.
fn check_source_name(name: &str, at: &KeyPath) -> Result<(), ConfigurationError> {
    if name.is_empty() {
        return Err(
            ConfigurationError::new(ErrorCode::EmptyName, "a source name is empty").at(at.as_str()),
        );
    }
    if name.contains('.') {
        return Err(ConfigurationError::new(
            ErrorCode::DottedName,
            format!("the source name `{name}` contains a dot; a name may not hold one"),
        )
        .at(at.as_str()));
    }
    Ok(())
}
