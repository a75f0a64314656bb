//! How a request names an endpoint: the source, the group path, the name and the variables of
//! the wire (`_s`, `_g`, `_m`, `_v`), checked against what the proxy exposes.

use crate::refusal::Refusal;
use crate::wire::Wire;
use crate::Proxy;
use axum::extract::FromRequestParts;
use courier_core::wire::{CallAddress, WireQuery};
use courier_core::ResolvedEndpoint;
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

/// What a browser's request addresses — the first step of docs/PROTOCOL.md, in one place for
/// calls, streams and channels: the source's client (its definition is `client.api()`), the
/// exposed endpoint, resolved once, and the variables of the query, read off the wire's query
/// (`_s`, `_g`, `_m`, `_v`) and checked against what the proxy exposes. The query stays for what
/// it says besides (`_t`, `_h`).
pub(crate) struct Addressed<'a> {
    pub(crate) client: courier_client::Client,
    pub(crate) endpoint: Arc<ResolvedEndpoint>,
    pub(crate) variables: Value,
    pub(crate) query: WireQuery<'a>,
}

impl<'a> Addressed<'a> {
    /// The exposed endpoint `query` addresses, with its source's client.
    pub(crate) fn of(proxy: &Proxy, query: WireQuery<'a>) -> Result<Self, Refusal> {
        let (address, variables) = query.address()?;
        let CallAddress {
            source,
            group,
            name,
        } = address;
        let client = proxy
            .clients
            .get(source)
            .ok_or_else(|| Refusal::NotInRoutes(format!("there is no source `{source}`")))?;
        let endpoint = client
            .api()
            .endpoint_in(group, name)
            .filter(|e| e.is_exposed())
            .ok_or_else(|| {
                Refusal::NotInRoutes(format!(
                    "`{group}.{name}` is not exposed by `{source}`: a browser reaches only what \
                     the definition marks `.expose(true)` (or a group's `.expose(true)`; `expose \
                     = true` in a config file)"
                ))
            })?;
        Ok(Self {
            client: client.clone(),
            endpoint: Arc::clone(endpoint),
            variables,
            query,
        })
    }
}

impl<'a> Addressed<'a> {
    /// The exposed endpoint the query of `parts` addresses, with its source's client; the query
    /// borrowed.
    pub(crate) fn read(proxy: &Proxy, parts: &'a http::request::Parts) -> Result<Self, Refusal> {
        Self::of(proxy, Wire::read(parts)?)
    }
}

impl FromRequestParts<Arc<Proxy>> for Addressed<'static> {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        proxy: &Arc<Proxy>,
    ) -> Result<Self, Self::Rejection> {
        let Wire(query) = Wire::from_request_parts(parts, proxy).await?;
        Self::of(proxy, query)
    }
}
