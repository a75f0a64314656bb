//! The file's shape as serde reads it: one struct per table, every one `deny_unknown_fields`, so
//! a misspelt key is an error with its key path rather than a silently ignored setting.
//!
//! These structs hold what the file says and nothing more; `build` turns them into builder
//! calls, where every rule about the tree is checked.

use crate::options::{ForwardOptions, ResponseType, RetryPolicy, SessionMode, SessionOptions};
use crate::settings::RetrySetting;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::fmt;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) proxy: RawProxy,
    #[serde(default, rename = "static")]
    pub(super) static_files: Option<RawStatic>,
    pub(super) bus: Option<RawBus>,
    pub(super) metrics: Option<RawMetrics>,
    #[serde(default)]
    pub(super) sources: BTreeMap<String, RawSource>,
}

/// `[metrics]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMetrics {
    pub(super) listen: String,
}

/// `[bus]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBus {
    pub(super) redis: Option<String>,
    pub(super) prefix: Option<String>,
    pub(super) queue: Option<usize>,
    pub(super) history: Option<usize>,
    pub(super) history_age_ms: Option<u64>,
}

/// `[static]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStatic {
    pub(super) dir: Option<String>,
    pub(super) package: Option<String>,
}

/// `[proxy]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProxy {
    pub(super) http: Option<String>,
    pub(super) sse: Option<String>,
    pub(super) ws: Option<String>,
    pub(super) body_limit: Option<u64>,
    pub(super) multipart_limit: Option<u64>,
    pub(super) header_read_timeout_ms: Option<u64>,
    pub(super) body_read_timeout_ms: Option<u64>,
    pub(super) max_connections: Option<std::num::NonZeroUsize>,
    pub(super) max_connections_per_client: Option<std::num::NonZeroUsize>,
    pub(super) rate_limit: Option<u32>,
    pub(super) rate_burst: Option<u32>,
}

crate::settings::layer_settings!(raw_with_settings(
/// `[sources.NAME]`, with the keys of the layer settings (`timeout_ms`, …).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSource {
    pub(super) base_url: Option<String>,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    pub(super) default_query_params: Option<toml::Table>,
    pub(super) default_body: Option<toml::Table>,
    pub(super) response_type: Option<ResponseType>,
    pub(super) body_serializer: Option<BodySerializerName>,
    #[serde(default)]
    pub(super) cancel_previous: Vec<String>,
    pub(super) deduplicate: Option<bool>,
    pub(super) max_in_flight: Option<std::num::NonZeroUsize>,
    #[serde(default)]
    pub(super) allowed_headers: Vec<String>,
    pub(super) path_options: Option<toml::Table>,
    pub(super) session: Option<SessionOptions>,
    pub(super) forward: Option<ForwardOptions>,
    pub(super) transport: Option<RawTransport>,
    #[serde(default)]
    pub(super) groups: BTreeMap<String, RawGroup>,
}
));

/// `body_serializer`: the built-in body encoders a file can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum BodySerializerName {
    Json,
    Urlencoded,
}

/// `transport`, on a source or a group.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTransport {
    pub(super) proxy: Option<String>,
    pub(super) client_cert: Option<String>,
    pub(super) client_key: Option<String>,
    #[serde(default)]
    pub(super) root_certs: Vec<String>,
}

crate::settings::layer_settings!(raw_with_settings(
/// `[...groups.NAME]`, with the keys of the layer settings (`timeout_ms`, …).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroup {
    pub(super) prefix: Option<String>,
    pub(super) path_options: Option<toml::Table>,
    pub(super) transport: Option<RawTransport>,
    #[serde(default)]
    pub(super) endpoints: BTreeMap<String, RawEndpoint>,
    #[serde(default)]
    pub(super) groups: BTreeMap<String, RawGroup>,
}
));

crate::settings::layer_settings!(raw_with_settings(
/// `[...endpoints.NAME]`: the keys of all three heads in one table, since the head is known
/// only from which verb key is present; `endpoint` checks that the rest fit that head. With the
/// keys of the layer settings (`timeout_ms`, …).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEndpoint {
    pub(super) get: Option<String>,
    pub(super) post: Option<String>,
    pub(super) put: Option<String>,
    pub(super) patch: Option<String>,
    pub(super) del: Option<String>,
    pub(super) delete: Option<String>,
    pub(super) stream: Option<String>,
    pub(super) channel: Option<String>,
    pub(super) room: Option<bool>,

    // HTTP endpoints only.
    pub(super) reads: Option<bool>,
    pub(super) response_type: Option<ResponseType>,
    pub(super) stream_response: Option<bool>,
    pub(super) sensitive_variables: Option<bool>,

    // Channels only.
    pub(super) send: Option<bool>,
    pub(super) topic: Option<Vec<String>>,

    // Every head.
    pub(super) headers: Option<Vec<String>>,
    pub(super) meta: Option<toml::Table>,
    pub(super) session: Option<SessionMode>,
    pub(super) forward: Option<bool>,
}
));

/// `retry`: `false` (never), `true` (the default policy) or a [`RetryPolicy`] table.
///
/// Written by hand rather than as an untagged enum so that a misspelt key inside the table is
/// still reported as an unknown key with its path.
#[derive(Debug, PartialEq)]
pub(crate) enum RawRetry {
    Toggle(bool),
    Policy(RetryPolicy),
}

impl From<RawRetry> for RetrySetting {
    fn from(raw: RawRetry) -> Self {
        match raw {
            RawRetry::Toggle(on) => on.into(),
            RawRetry::Policy(policy) => policy.into(),
        }
    }
}

impl<'de> Deserialize<'de> for RawRetry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RetryVisitor;

        impl<'de> Visitor<'de> for RetryVisitor {
            type Value = RawRetry;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`false`, `true` or a retry table")
            }

            fn visit_bool<E: de::Error>(self, on: bool) -> Result<RawRetry, E> {
                Ok(RawRetry::Toggle(on))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawRetry, A::Error> {
                RetryPolicy::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawRetry::Policy)
            }
        }

        deserializer.deserialize_any(RetryVisitor)
    }
}
