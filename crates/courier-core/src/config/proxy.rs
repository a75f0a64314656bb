//! The file's `[proxy]` table: where `courier serve` mounts the proxy route ([`ProxyPaths`]) and
//! the limits it holds browsers to ([`ProxyLimits`]).

use super::key_path::KeyPath;
use super::raw::RawProxy;
use crate::error::{ConfigurationError, ErrorCode};
use std::num::NonZeroUsize;
use std::time::Duration;

/// The paths of the proxy route (the browser package's `proxyPath`): HTTP calls, SSE streams and
/// WebSocket channels. Read from the config file's `[proxy]` table.
///
/// ```
/// use courier::config::ProxyPaths;
///
/// let paths = ProxyPaths::default();
/// assert_eq!(paths.http, "/api/request");
/// assert_eq!(paths.sse, "/api/sse");
/// assert_eq!(paths.ws, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyPaths {
    /// The path of proxied HTTP calls. Default `/api/request`.
    pub http: String,
    /// The path of proxied server-sent event streams. Default `/api/sse`.
    pub sse: String,
    /// The path of proxied WebSocket channels. No default: without it, channels cannot be called
    /// through the proxy (`WS_PATH_NOT_CONFIGURED`).
    pub ws: Option<String>,
}

impl Default for ProxyPaths {
    fn default() -> Self {
        Self {
            http: "/api/request".to_owned(),
            sse: "/api/sse".to_owned(),
            ws: None,
        }
    }
}

impl ProxyPaths {
    /// The `[proxy]` table's paths with defaults filled in; each path must be absolute.
    pub(super) fn from_raw(raw: &RawProxy) -> Result<Self, ConfigurationError> {
        let defaults = Self::default();
        let at = KeyPath::root().key("proxy");
        let http = checked(raw.http.clone().unwrap_or(defaults.http), &at.key("http"))?;
        let sse = checked(raw.sse.clone().unwrap_or(defaults.sse), &at.key("sse"))?;
        let ws = raw
            .ws
            .clone()
            .map(|ws| checked(ws, &at.key("ws")))
            .transpose()?;
        Ok(Self { http, sse, ws })
    }
}

/// The limits the proxy holds browsers to, where the `[proxy]` table sets them: `body_limit` and
/// `multipart_limit` (bytes), `header_read_timeout_ms` and `body_read_timeout_ms`,
/// `max_connections` and `max_connections_per_client`. `None` leaves the proxy's own default
/// (1 MiB, 32 MiB, 30 s, 60 s, a bound derived from the file-descriptor limit, no bound per
/// address); `courier serve`'s flags win over the file.
///
/// ```
/// use courier::config::Config;
/// use std::time::Duration;
///
/// let config: Config = "[proxy]\nbody_limit = 65536\nheader_read_timeout_ms = 5000".parse()?;
/// assert_eq!(config.proxy_limits().body_limit, Some(65536));
/// assert_eq!(config.proxy_limits().header_read_timeout, Some(Duration::from_secs(5)));
/// assert_eq!(config.proxy_limits().body_read_timeout, None);
/// # Ok::<(), courier::ConfigurationError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyLimits {
    /// The largest JSON request body a call may carry, in bytes (`body_limit`).
    pub body_limit: Option<u64>,
    /// The largest multipart (upload) request body a call may carry, in bytes
    /// (`multipart_limit`).
    pub multipart_limit: Option<u64>,
    /// How long a request's head may take to arrive (`header_read_timeout_ms`).
    pub header_read_timeout: Option<Duration>,
    /// How long a call's body may take to arrive, whole (`body_read_timeout_ms`).
    pub body_read_timeout: Option<Duration>,
    /// At most this many connections open at once (`max_connections`).
    pub max_connections: Option<NonZeroUsize>,
    /// At most this many connections open at once from one client address
    /// (`max_connections_per_client`).
    pub max_connections_per_client: Option<NonZeroUsize>,
}

impl ProxyLimits {
    /// The `[proxy]` table's limits; a timeout of zero is refused (it could never be met).
    pub(super) fn from_raw(raw: &RawProxy) -> Result<Self, ConfigurationError> {
        let at = KeyPath::root().key("proxy");
        let timeout = |ms: Option<u64>, key: &str| match ms {
            Some(0) => Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "a timeout of zero could never be met; leave the key out for the default",
            )
            .at(at.key(key).as_str())),
            ms => Ok(ms.map(Duration::from_millis)),
        };
        Ok(Self {
            body_limit: raw.body_limit,
            multipart_limit: raw.multipart_limit,
            header_read_timeout: timeout(raw.header_read_timeout_ms, "header_read_timeout_ms")?,
            body_read_timeout: timeout(raw.body_read_timeout_ms, "body_read_timeout_ms")?,
            max_connections: raw.max_connections,
            max_connections_per_client: raw.max_connections_per_client,
        })
    }
}

fn checked(path: String, at: &KeyPath) -> Result<String, ConfigurationError> {
    if path.starts_with('/') && !path.contains(['?', '#']) {
        Ok(path)
    } else {
        Err(ConfigurationError::new(
            ErrorCode::ConfigInvalid,
            format!("the proxy path `{path}` must start with `/` and hold no query or fragment"),
        )
        .at(at.as_str()))
    }
}
