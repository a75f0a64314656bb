//! A `[sources.NAME]` table to an [`ApiDef`], through [`ApiDef::builder`] and [`GroupDef`], so
//! a file is validated by exactly the rules a tree built in Rust is.

use super::endpoint::endpoint;
use super::json;
use super::key_path::KeyPath;
use super::raw::{BodySerializerName, RawGroup, RawSource};
use super::transport::dispatcher;
use crate::encode::UrlEncodedBody;
use crate::error::{ConfigurationError, ErrorCode};
use crate::settings::LayerSettings;
use crate::tree::api::ApiDef;
use crate::tree::group::GroupDef;
use crate::tree::path_options::PathOptions;
use crate::validate::{self, NameOf};
use serde_json::Value;
use std::path::Path;

/// Builds the source `name`; file names in it resolve against `base`.
///
/// Names are checked here first, by the builder's own rule, so that their errors carry the file's
/// key path (`sources.demo.groups.users.endpoints."by.id"`). Any other error from the builder
/// keeps its code; its path, which the builder gives relative to the source as a dotted endpoint
/// path (`users.get.path`), becomes the key path of the table it names in the file
/// (`sources.demo.groups.users.endpoints.get.get`: an endpoint's `path` is its verb's key, its
/// `timeout` is `timeout_ms`), else is prefixed with the source's key path (`sources.demo.`).
pub(super) fn source(
    name: &str,
    mut raw: RawSource,
    base: &Path,
) -> Result<ApiDef, ConfigurationError> {
    let at = KeyPath::root().key("sources").key(name);
    check_source_name(name, &at)?;

    let mut api = ApiDef::builder().settings(raw.layer_settings());
    if let Some(url) = raw.base_url {
        api = api.base_url(url);
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
    api = api
        .cancel_previous(raw.cancel_previous)
        .deduplicate(raw.deduplicate.unwrap_or(false))
        .allowed_headers(raw.allowed_headers);
    if let Some(calls) = raw.max_in_flight {
        api = api.max_in_flight(calls.get());
    }
    if let Some(values) = raw.path_options {
        api = api.path_options(path_options(values, &at.key("path_options"))?);
    }
    if let Some(session) = raw.session {
        api = api.session(session);
    }
    if let Some(forward) = raw.forward {
        api = api.forward(forward);
    }
    if let Some(transport) = raw.transport {
        api = api.dispatcher(dispatcher(transport, &at.key("transport"), base)?);
    }
    let groups_at = at.key("groups");
    let mut places = Places::default();
    for (name, raw) in raw.groups {
        let group_at = groups_at.key(&name);
        validate::check_name(NameOf::Group, &name, group_at.as_str())?;
        let built = group(raw, &group_at, base, &name, &mut places)?;
        api = api.group(name, built);
    }

    api.build().map_err(|err| {
        let dotted = err.path().unwrap_or("");
        let path = places
            .key_path(dotted)
            .unwrap_or_else(|| at.join_dotted(file_key(dotted, None)));
        err.at(path)
    })
}

/// Where each group and endpoint of a source is in the file: its dotted path in the API
/// (`users.get`), its table's key path, and an endpoint's verb key.
#[derive(Default)]
struct Places(Vec<(String, KeyPath, Option<&'static str>)>);

impl Places {
    /// The file's key path of the builder's dotted `path`: the table of the longest group or
    /// endpoint path it starts with, then the rest, an endpoint's `path` and `timeout` named as
    /// the file names them.
    fn key_path(&self, path: &str) -> Option<String> {
        let (dotted, at, verb) = self
            .0
            .iter()
            .filter(|(dotted, _, _)| {
                path == dotted
                    || path
                        .strip_prefix(dotted.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            .max_by_key(|(dotted, _, _)| dotted.len())?;
        let rest = path[dotted.len()..].trim_start_matches('.');
        Some(at.join_dotted(file_key(rest, *verb)))
    }
}

/// The file's name of the builder's field `rest` of a table: an endpoint's `path` is its verb's
/// key, a setting its key in the file (`timeout` is `timeout_ms`).
fn file_key<'a>(rest: &'a str, verb: Option<&'static str>) -> &'a str {
    match (rest, verb) {
        ("path", Some(verb)) => verb,
        (rest, _) => LayerSettings::config_key(rest).unwrap_or(rest),
    }
}

/// A group table at `at` (the group `dotted` in the API), with its endpoints and nested groups,
/// each noted in `places`.
fn group(
    mut raw: RawGroup,
    at: &KeyPath,
    base: &Path,
    dotted: &str,
    places: &mut Places,
) -> Result<GroupDef, ConfigurationError> {
    places.0.push((dotted.to_owned(), at.clone(), None));
    let mut def = GroupDef::new().settings(raw.layer_settings());
    if let Some(prefix) = raw.prefix {
        def = def.prefix(prefix);
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
        let (built, verb) = endpoint(raw, &endpoint_at)?;
        places
            .0
            .push((format!("{dotted}.{name}"), endpoint_at, Some(verb)));
        def = def.endpoint(name, built);
    }
    let groups_at = at.key("groups");
    for (name, raw) in raw.groups {
        let group_at = groups_at.key(&name);
        validate::check_name(NameOf::Group, &name, group_at.as_str())?;
        let built = group(raw, &group_at, base, &format!("{dotted}.{name}"), places)?;
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
