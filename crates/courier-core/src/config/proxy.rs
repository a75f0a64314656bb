//! The file's `[proxy]` table: where `courier serve` mounts the proxy route ([`ProxyPaths`]) and
//! the limits it holds browsers to ([`ProxyLimits`]).

use super::key_path::KeyPath;
use super::raw::RawProxy;
use crate::error::{ConfigurationError, ErrorCode};
use std::num::{NonZeroU32, NonZeroUsize};
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
/// `max_connections` and `max_connections_per_client`, `rate_limit` and `rate_burst` (requests).
/// `None` leaves the proxy's own default (1 MiB, 32 MiB, 30 s, 60 s, a bound derived from the
/// file-descriptor limit, no bound per address, no rate limit); `courier serve`'s flags win over
/// the file.
///
/// ```
/// use courier::config::Config;
/// use std::time::Duration;
///
/// let config: Config = "[proxy]\nbody_limit = 65536\nheader_read_timeout_ms = 5000".parse()?;
/// assert_eq!(config.proxy_limits().body_limit, Some(65536));
/// assert_eq!(config.proxy_limits().header_read_timeout, Some(Duration::from_secs(5)));
/// assert_eq!(config.proxy_limits().body_read_timeout, None);
/// assert_eq!(config.proxy_limits().rate_limit, None);
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
    /// Requests a second per session or client address: calls, stream openings and channel
    /// handshakes (`rate_limit`; `courier_server::RateLimit`).
    pub rate_limit: Option<NonZeroU32>,
    /// Requests at once after a quiet spell (`rate_burst`); with `rate_limit` only. `None` with a
    /// rate limit: as many as its rate.
    pub rate_burst: Option<NonZeroU32>,
}

impl ProxyLimits {
    /// The `[proxy]` table's limits; a timeout of zero is refused (it could never be met), and so
    /// is a rate of zero (it would refuse every request) and a burst without a rate.
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
        let requests = |n: Option<u32>, key: &str| match n {
            Some(0) => Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "a rate limit of zero would refuse every request; leave the key out for none",
            )
            .at(at.key(key).as_str())),
            n => Ok(n.and_then(NonZeroU32::new)),
        };
        let rate_limit = requests(raw.rate_limit, "rate_limit")?;
        let rate_burst = requests(raw.rate_burst, "rate_burst")?;
        if rate_burst.is_some() && rate_limit.is_none() {
            return Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "a burst is of a rate limit: set `rate_limit` too",
            )
            .at(at.key("rate_burst").as_str()));
        }
        Ok(Self {
            body_limit: raw.body_limit,
            multipart_limit: raw.multipart_limit,
            header_read_timeout: timeout(raw.header_read_timeout_ms, "header_read_timeout_ms")?,
            body_read_timeout: timeout(raw.body_read_timeout_ms, "body_read_timeout_ms")?,
            max_connections: raw.max_connections,
            max_connections_per_client: raw.max_connections_per_client,
            rate_limit,
            rate_burst,
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
