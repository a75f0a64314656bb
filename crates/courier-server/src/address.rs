//! How a request names an endpoint: the source, the group path, the name and the variables of
//! the wire (`_s`, `_g`, `_m`, `_v`), checked against what the proxy exposes.

use crate::refusal::Refusal;
use crate::wire::WireQuery;
use crate::Proxy;
use courier_core::{ApiDef, ResolvedEndpoint};
use serde_json::Value;
use std::sync::Arc;

/// Streams and channels open with a GET; anything else is refused as the `http` path refuses a
/// verb it does not take (405, in JSON).
pub(crate) fn only_get<B>(request: &axum::http::Request<B>, what: &str) -> Result<(), Refusal> {
    if request.method() == axum::http::Method::GET {
        return Ok(());
    }
    Err(Refusal::MethodNotAllowed(format!(
        "{what} opens with GET, not {}",
        request.method()
    )))
}

/// The source a query names (`address` has checked there is one).
pub(crate) fn source_of(query: &WireQuery) -> &str {
    query.source()
}

/// A wire parameter that must be there.
fn required<'a>(value: &'a Option<String>, name: &str) -> Result<&'a str, Refusal> {
    value
        .as_deref()
        .ok_or_else(|| Refusal::BadRequest(format!("the `{name}` parameter is missing")))
}

/// The exposed endpoint and the variables a query addresses.
pub(crate) fn address(
    live: &Proxy,
    query: &WireQuery,
) -> Result<(ApiDef, Arc<ResolvedEndpoint>, Value), Refusal> {
    let source = required(&query.source, "_s")?;
    let group = required(&query.group, "_g")?;
    let name = required(&query.name, "_m")?;
    if source.is_empty() {
        return Err(Refusal::BadRequest("`_s` is empty".to_owned()));
    }
    // A group path is names joined with dots, and an endpoint's name holds no dot: anything
    // else could never name an endpoint, and is the caller's mistake rather than a route.
    if group.split('.').any(str::is_empty) {
        return Err(Refusal::BadRequest(format!(
            "`_g` is a group path (names joined with dots), not `{group}`"
        )));
    }
    if name.is_empty() || name.contains('.') {
        return Err(Refusal::BadRequest(format!(
            "`_m` is an endpoint's name (no dots), not `{name}`"
        )));
    }
    let variables = match &query.variables {
        None => Value::Null,
        Some(text) => serde_json::from_str(text)
            .map_err(|e| Refusal::BadRequest(format!("`_v` is not JSON: {e}")))?,
    };
    let api = live
        .sources
        .get(source)
        .ok_or_else(|| Refusal::NotInRoutes(format!("there is no source `{source}`")))?;
    let endpoint = api
        .endpoint_in(group, name)
        .filter(|e| e.is_exposed())
        .ok_or_else(|| {
            Refusal::NotInRoutes(format!(
                "`{group}.{name}` is not exposed by `{source}`: a browser reaches only what the \
                 definition marks `.expose()` (or a group's `.expose(true)`; `expose = true` in a \
                 config file)"
            ))
        })?;
    Ok((api.clone(), Arc::clone(endpoint), variables))
}
