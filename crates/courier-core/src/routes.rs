//! The routes record (the browser package's `RoutesRecord`): which endpoints a page may call
//! through the proxy and how each is reached, written from the endpoints marked `.expose(true)`.
//!
//! ```
//! use courier::routes::{RouteShape, Routes};
//! use courier::options::CacheOptions;
//! use courier::{ApiDef, ChannelEndpoint, GroupDef, HttpEndpoint, StreamEndpoint};
//!
//! let api = ApiDef::builder()
//!     .base_url("https://api.example.com")
//!     .cancel_previous(["users.search"])
//!     .group(
//!         "users",
//!         GroupDef::new()
//!             .expose(true)
//!             .endpoint("get", HttpEndpoint::get("/:id").cache(CacheOptions::new().revalidate(60)))
//!             .endpoint("search", HttpEndpoint::get("/search"))
//!             .endpoint("create", HttpEndpoint::post(""))
//!             .endpoint("events", StreamEndpoint::get("/events"))
//!             .endpoint("room", ChannelEndpoint::connect("/rooms/:id").send()),
//!     )
//!     .group("admin", GroupDef::new().endpoint("purge", HttpEndpoint::post("/purge")))
//!     .build()?;
//! let routes = Routes::from_api("demo", &api);
//! assert_eq!(routes.endpoints["users.get"], RouteShape::Query { get: true });
//! assert_eq!(routes.endpoints["users.search"], RouteShape::Query { get: false });
//! assert!(!routes.endpoints.contains_key("admin.purge"), "not exposed");
//! assert_eq!(
//!     routes.to_json(),
//!     r#"{"source":"demo","endpoints":{"users.create":{"type":"mutation"},"users.events":{"transport":"sse"},"users.get":{"type":"query","get":true},"users.room":{"transport":"ws","bidirectional":true},"users.search":{"type":"query"}},"cancelPrevious":["users.search"],"coalesce":true}"#
//! );
//! # Ok::<(), courier::ConfigurationError>(())
//! ```

pub mod types;

use self::types::Types;
use crate::error::{ConfigurationError, ErrorCode};
use crate::options::CacheOptions;
use crate::tree::api::ApiDef;
use crate::tree::endpoint::{ChannelEndpoint, EndpointDef, HttpEndpoint, StreamEndpoint};
use crate::tree::group::GroupDef;
use crate::tree::meta::Kind;
use crate::tree::resolve::ResolvedEndpoint;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How one exposed endpoint is reached through the proxy (the browser package's `RouteShape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteShape {
    /// A read; `get` when it may be cached (`.cache()`, no sensitive variables) and is sent as
    /// GET.
    Query {
        /// Sent as GET.
        get: bool,
    },
    /// A write; `idempotency_key` when the caller sends each call an `Idempotency-Key`
    /// (`idempotency_key`), which the proxy passes on.
    Mutation {
        /// The caller makes a key per call.
        idempotency_key: bool,
    },
    /// A server-sent event stream.
    Sse,
    /// A WebSocket channel; `bidirectional` when the caller also sends on it.
    Ws {
        /// The caller sends on it (`.send()`).
        bidirectional: bool,
    },
}

impl Serialize for RouteShape {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::Query { get } => {
                map.serialize_entry("type", "query")?;
                if *get {
                    map.serialize_entry("get", &true)?;
                }
            }
            Self::Mutation { idempotency_key } => {
                map.serialize_entry("type", "mutation")?;
                if *idempotency_key {
                    map.serialize_entry("idempotencyKey", &true)?;
                }
            }
            Self::Sse => map.serialize_entry("transport", "sse")?,
            Self::Ws { bidirectional } => {
                map.serialize_entry("transport", "ws")?;
                if *bidirectional {
                    map.serialize_entry("bidirectional", &true)?;
                }
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RouteShape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(rename = "type")]
            kind: Option<String>,
            transport: Option<String>,
            #[serde(default)]
            get: bool,
            #[serde(default)]
            bidirectional: bool,
            #[serde(default, rename = "idempotencyKey")]
            idempotency_key: bool,
        }
        let raw = Raw::deserialize(deserializer)?;
        match (raw.kind.as_deref(), raw.transport.as_deref()) {
            (Some("query"), None) => Ok(Self::Query { get: raw.get }),
            (Some("mutation"), None) => Ok(Self::Mutation {
                idempotency_key: raw.idempotency_key,
            }),
            (None, Some("sse")) => Ok(Self::Sse),
            (None, Some("ws")) => Ok(Self::Ws {
                bidirectional: raw.bidirectional,
            }),
            _ => Err(serde::de::Error::custom(
                "a route is {\"type\": \"query\" | \"mutation\"} or {\"transport\": \"sse\" | \"ws\"}",
            )),
        }
    }
}

impl RouteShape {
    /// The shape of `endpoint`: a read is `get` when caching applies to it (its own, its
    /// groups' or its source's) and its variables are not sensitive.
    pub fn of(endpoint: &ResolvedEndpoint) -> Self {
        match endpoint.definition() {
            EndpointDef::Http(http) => match http.kind() {
                Kind::Query => Self::Query {
                    get: endpoint.meta().get_cache().is_some() && !http.is_sensitive(),
                },
                Kind::Mutation => Self::Mutation {
                    idempotency_key: endpoint.meta().get_settings().get_idempotency_key()
                        == Some(true),
                },
            },
            EndpointDef::Stream(_) => Self::Sse,
            EndpointDef::Channel(channel) => Self::Ws {
                bidirectional: channel.is_bidirectional(),
            },
        }
    }
}

/// The routes record: the source's name, its exposed endpoints by dotted path, and the source's
/// own `cancelPrevious` and `coalesce`. Serialises to the JSON the browser package's
/// `RoutesRecord` reads (camelCase keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Routes {
    /// The name the server registered the source under (the wire's `_s`).
    pub source: String,
    /// Each exposed endpoint, keyed by dotted path, sorted.
    pub endpoints: BTreeMap<String, RouteShape>,
    /// The source's `cancel_previous`, those of them that are exposed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancel_previous: Vec<String>,
    /// The source's `coalesce`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesce: Option<bool>,
    /// The reads whose variables are sensitive (a boundary record's `sensitive` list): a
    /// caller sends them as POST whatever else it is told. Written by [`Routes::boundary`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive: Vec<String>,
    /// The session's double-submit CSRF token (its `csrf` option), when it has one: a browser
    /// caller reads the cookie and repeats it in the header on every write, by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csrf: Option<CsrfNames>,
}

/// Where a page finds the session's CSRF token and where it repeats it: the names of
/// [`SessionOptions::csrf`](crate::SessionOptions), never its key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsrfNames {
    /// The cookie holding the token (readable by the page: not `HttpOnly`).
    pub cookie: String,
    /// The header a write repeats it in.
    pub header: String,
}

impl Routes {
    /// The routes of `api`'s exposed endpoints, as source `source`.
    pub fn from_api(source: impl Into<String>, api: &ApiDef) -> Self {
        let endpoints: BTreeMap<String, RouteShape> = api
            .endpoints()
            .into_iter()
            .filter(|e| e.is_exposed())
            .map(|e| (e.path().to_owned(), RouteShape::of(e)))
            .collect();
        let cancel_previous = api
            .options()
            .cancel_previous
            .iter()
            .filter(|path| endpoints.contains_key(path.as_str()))
            .cloned()
            .collect();
        let csrf = api
            .options()
            .session
            .as_ref()
            .and_then(|session| session.csrf.as_ref())
            .map(|csrf| CsrfNames {
                cookie: csrf.cookie.clone(),
                header: csrf.header.clone(),
            });
        Self {
            source: source.into(),
            endpoints,
            cancel_previous,
            coalesce: Some(api.options().coalesces()),
            sensitive: Vec::new(),
            csrf,
        }
    }

    /// The boundary of `api` as source `source`: what a
    /// proxy caller needs to know of the API without its definition, in the routes' shape. It
    /// names what a browser may call and nothing else — the exposed endpoints, as
    /// [`Routes::from_api`] does, so no internal endpoint's name ships to whoever loads it — and
    /// lists the reads with sensitive variables under `sensitive`. A read is sent as GET
    /// (`get: true`) whether or not it is cached, unless its variables are sensitive: the
    /// source form's rule.
    ///
    /// ```
    /// use courier::routes::{RouteShape, Routes};
    /// use courier::{ApiDef, GroupDef, HttpEndpoint};
    ///
    /// let api = ApiDef::builder()
    ///     .base_url("https://api.example.com")
    ///     .group(
    ///         "users",
    ///         GroupDef::new()
    ///             .expose(true)
    ///             .endpoint("search", HttpEndpoint::get("/search"))
    ///             .endpoint("login", HttpEndpoint::post("/login").reads().sensitive_variables()),
    ///     )
    ///     .group("admin", GroupDef::new().endpoint("purge", HttpEndpoint::post("/purge")))
    ///     .build()?;
    /// let boundary = Routes::boundary("demo", &api);
    /// assert_eq!(boundary.endpoints["users.search"], RouteShape::Query { get: true });
    /// assert_eq!(boundary.endpoints["users.login"], RouteShape::Query { get: false });
    /// assert_eq!(boundary.sensitive, ["users.login"]);
    /// assert!(!boundary.endpoints.contains_key("admin.purge"), "not exposed, not named");
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    pub fn boundary(source: impl Into<String>, api: &ApiDef) -> Self {
        let mut routes = Self::from_api(source, api);
        for endpoint in api.endpoints() {
            let (Some(RouteShape::Query { get }), Some(http)) = (
                routes.endpoints.get_mut(endpoint.path()),
                endpoint.definition().as_http(),
            ) else {
                continue;
            };
            *get = !http.is_sensitive();
            if http.is_sensitive() {
                routes.sensitive.push(endpoint.path().to_owned());
            }
        }
        routes
    }

    /// The tree a proxy caller built from these routes alone walks: one group per group path,
    /// one endpoint per route, every one exposed, each of the shape its route gives (a read
    /// with `get: true` is a cached read, a socket with `bidirectional` takes messages). The
    /// endpoints have no addresses: the proxy knows those.
    ///
    /// # Errors
    ///
    /// A route whose path has no group (`DOTTED_NAME` for a bare name), a name that is not
    /// valid, or a `cancelPrevious` entry that is not a routed read (`CANCEL_PREVIOUS_INVALID`).
    pub fn to_api(&self) -> Result<ApiDef, ConfigurationError> {
        #[derive(Default)]
        struct Node {
            endpoints: Vec<(String, EndpointDef)>,
            groups: BTreeMap<String, Node>,
        }
        fn into_group(node: Node) -> GroupDef {
            let mut group = GroupDef::new().expose(true);
            for (name, endpoint) in node.endpoints {
                group = group.endpoint(name, endpoint);
            }
            for (name, child) in node.groups {
                group = group.group(name, into_group(child));
            }
            group
        }
        let mut root = Node::default();
        for (path, shape) in &self.endpoints {
            let Some((group_path, name)) = path.rsplit_once('.') else {
                return Err(ConfigurationError::new(
                    ErrorCode::DottedName,
                    format!(
                        "route `{path}` names no group: an endpoint's path is `group.endpoint`"
                    ),
                )
                .at(path.as_str()));
            };
            let mut node = &mut root;
            for segment in group_path.split('.') {
                node = node.groups.entry(segment.to_owned()).or_default();
            }
            let endpoint: EndpointDef = match shape {
                RouteShape::Query { get: true } => {
                    HttpEndpoint::get("").cache(CacheOptions::new()).into()
                }
                RouteShape::Query { get: false } if self.sensitive.contains(path) => {
                    HttpEndpoint::get("").sensitive_variables().into()
                }
                RouteShape::Query { get: false } => HttpEndpoint::get("").into(),
                RouteShape::Mutation { idempotency_key } => HttpEndpoint::post("")
                    .idempotency_key(*idempotency_key)
                    .into(),
                RouteShape::Sse => StreamEndpoint::get("").into(),
                RouteShape::Ws { bidirectional } => {
                    let channel = ChannelEndpoint::connect("");
                    if *bidirectional {
                        channel.send()
                    } else {
                        channel
                    }
                    .into()
                }
            };
            node.endpoints.push((name.to_owned(), endpoint));
        }
        let mut api = ApiDef::builder()
            .for_routes()
            .expose(true)
            .cancel_previous(self.cancel_previous.iter().cloned());
        if let Some(coalesce) = self.coalesce {
            api = api.coalesce(coalesce);
        }
        for (name, node) in root.groups {
            api = api.group(name, into_group(node));
        }
        api.build()
    }

    /// The record as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("plain data serialises"))
    }

    /// The record as a file holds it: pretty JSON, keys sorted, ending in a newline (what
    /// `courier routes` writes without `--ts`).
    pub fn to_json_file(&self) -> String {
        let mut json = serde_json::to_string_pretty(self)
            .unwrap_or_else(|_| unreachable!("plain data serialises"));
        json.push('\n');
        json
    }

    /// The record as a TypeScript module, every endpoint's types `unknown`: what
    /// [`Routes::to_typescript_with`] writes with no [`Types`].
    pub fn to_typescript(&self) -> String {
        self.to_typescript_with(&Types::new())
            .unwrap_or_else(|_| unreachable!("no types, no declarations to clash"))
    }

    /// The record as a TypeScript module for the browser caller (`js/`): the declarations of
    /// the types the routed endpoints use (as serde writes them; the forms a page sends, where
    /// they differ, in the `Sent` namespace: see [`types`]), the record (`as const`, so its type
    /// carries each endpoint's shape), the `Endpoints` interface of each endpoint's variables and
    /// response (and a two-way channel's `send`) — `unknown` where `types` has none — and
    /// `routes`, the record typed with them, which `createProxyCaller(routes)` takes.
    ///
    /// ```
    /// use courier::routes::{types::Types, Routes};
    /// use courier::{ApiDef, GroupDef, HttpEndpoint};
    ///
    /// let api = ApiDef::builder()
    ///     .base_url("https://api.example.com")
    ///     .group("users", GroupDef::new().expose(true).endpoint("get", HttpEndpoint::get("/:id")))
    ///     .build()?;
    /// let mut types = Types::new();
    /// types.set("users.get", "number", "{ id: number; name: string }", None);
    /// let module = Routes::from_api("demo", &api).to_typescript_with(&types)?;
    /// assert!(module.contains(r#""users.get": { variables: number; response: { id: number; name: string } };"#));
    /// assert!(module.contains("export const routes: typeof record & { readonly types?: Endpoints } = record;"));
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Two different types of one name among the routed endpoints' (`INVALID_OPTION`).
    pub fn to_typescript_with(&self, types: &Types) -> Result<String, ConfigurationError> {
        let used: Vec<_> = self
            .endpoints
            .keys()
            .filter_map(|path| Some((path.as_str(), types.get(path)?)))
            .collect();
        let declarations = types::declarations(used.iter().copied())?;
        let sent = types::sent(used.iter().map(|(_, types)| *types), &declarations);
        let mut out = String::from(
            "// Written by courier's routes writer (`courier routes`, or `courier::routes::Command`\n\
             // in the app). Do not edit: regenerate it.\n\n",
        );
        out.push_str(
            "export type RouteShape =\n  | { type: \"query\"; get?: true }\n  | { type: \"mutation\" }\n  | { transport: \"sse\" }\n  | { transport: \"ws\"; bidirectional?: true };\n\n",
        );
        for declaration in declarations.values() {
            let _ = writeln!(out, "{declaration}");
        }
        if !declarations.is_empty() {
            out.push('\n');
        }
        sent.write(&mut out);
        let pretty = serde_json::to_string_pretty(self)
            .unwrap_or_else(|_| unreachable!("plain data serialises"));
        let _ = writeln!(out, "const record = {pretty} as const;\n");
        out.push_str("export interface Endpoints {\n");
        for (path, shape) in &self.endpoints {
            let key =
                serde_json::to_string(path).unwrap_or_else(|_| unreachable!("a string serialises"));
            match types.get(path) {
                Some(t) => {
                    let _ = write!(
                        out,
                        "  {key}: {{ variables: {}; response: {}",
                        sent.qualify(&t.variables),
                        t.response
                    );
                    if let Some(send) = &t.send {
                        let _ = write!(out, "; send: {}", sent.qualify(send));
                    }
                }
                None => {
                    let _ = write!(out, "  {key}: {{ variables: unknown; response: unknown");
                    if matches!(
                        shape,
                        RouteShape::Ws {
                            bidirectional: true
                        }
                    ) {
                        out.push_str("; send: unknown");
                    }
                }
            }
            out.push_str(" };\n");
        }
        out.push_str("}\n\n");
        out.push_str(
            "export const routes: typeof record & { readonly types?: Endpoints } = record;\n",
        );
        out.push_str("export type Routes = typeof routes;\n");
        out.push_str("export type EndpointPath = keyof Routes[\"endpoints\"];\n");
        Ok(out)
    }
}

/// What [`write_module`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The file was written.
    Written,
    /// `check` was asked and the file is up to date: nothing was written.
    UpToDate,
}

/// Why [`write_module`] failed.
#[derive(Debug)]
pub enum ModuleError {
    /// `check` was asked and the file is missing or differs: the message says which.
    Stale(String),
    /// The file could not be written (`CONFIG_IO`).
    Io(ConfigurationError),
}

/// Writes `text` (a routes record or module) to `out`, or with `check` only compares it with
/// what is there — for CI, so a committed routes module cannot drift from the API. What the
/// `courier routes` command and the facade's `courier::routes::Command` do with `--out` and
/// `--check`.
///
/// # Errors
///
/// [`ModuleError::Stale`] when checking a file that is missing or different;
/// [`ModuleError::Io`] when writing fails.
pub fn write_module(
    out: &std::path::Path,
    text: &str,
    check: bool,
) -> Result<Written, ModuleError> {
    let path = out.display();
    if check {
        return match std::fs::read_to_string(out) {
            Ok(current) if current == text => Ok(Written::UpToDate),
            Ok(_) => Err(ModuleError::Stale(format!(
                "`{path}` is out of date: write it again without --check"
            ))),
            Err(e) => Err(ModuleError::Stale(format!("cannot read `{path}`: {e}"))),
        };
    }
    std::fs::write(out, text).map_err(|e| {
        ModuleError::Io(ConfigurationError::new(
            ErrorCode::ConfigIo,
            format!("cannot write `{path}`: {e}"),
        ))
    })?;
    Ok(Written::Written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CacheOptions, GroupDef, HttpEndpoint};

    #[test]
    fn sensitive_cached_reads_are_not_get_and_json_round_trips() {
        let api = ApiDef::builder()
            .base_url("http://api.example")
            .coalesce(false)
            .group(
                "g",
                GroupDef::new()
                    .endpoint(
                        "secret",
                        HttpEndpoint::get("/s")
                            .cache(CacheOptions::new())
                            .sensitive_variables()
                            .expose(true),
                    )
                    .endpoint("put", HttpEndpoint::put("/p").expose(true))
                    .endpoint("hidden", HttpEndpoint::get("/h")),
            )
            .build()
            .unwrap();
        let routes = Routes::from_api("s", &api);
        assert_eq!(
            routes.endpoints["g.secret"],
            RouteShape::Query { get: false }
        );
        assert_eq!(
            routes.endpoints["g.put"],
            RouteShape::Mutation {
                idempotency_key: false
            }
        );
        assert_eq!(routes.endpoints.len(), 2);
        assert_eq!(routes.coalesce, Some(false));
        let back: Routes = serde_json::from_str(&routes.to_json()).unwrap();
        assert_eq!(back, routes);
        let ts = routes.to_typescript();
        assert!(ts.contains("const record = {"), "{ts}");
        assert!(
            ts.contains("\"g.put\": { variables: unknown; response: unknown };"),
            "{ts}"
        );
        assert!(
            ts.contains("\"g.put\": {\n      \"type\": \"mutation\"\n    }"),
            "{ts}"
        );
        assert!(ts.contains("} as const;"), "{ts}");
    }
}
