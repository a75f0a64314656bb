//! How a request names an endpoint: the source, the group path, the name and the variables of
//! the wire (`_s`, `_g`, `_m`, `_v`), checked against what the proxy exposes.

use crate::refusal::Refusal;
use crate::Proxy;
use courier_core::wire::{CallAddress, WireQuery};
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

/// The exposed endpoint and the variables a query addresses.
pub(crate) fn address(
    live: &Proxy,
    query: &WireQuery,
) -> Result<(ApiDef, Arc<ResolvedEndpoint>, Value), Refusal> {
    let (address, variables) = query.address()?;
    let CallAddress {
        source,
        group,
        name,
    } = address;
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
                 definition marks `.expose(true)` (or a group's `.expose(true)`; `expose = true` in a \
                 config file)"
            ))
        })?;
    Ok((api.clone(), Arc::clone(endpoint), variables))
}
