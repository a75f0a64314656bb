//! [`ProxyPaths`]: where `courier serve` mounts the proxy route, the file's `[proxy]` table.

use super::key_path::KeyPath;
use super::raw::RawProxy;
use crate::error::{ConfigurationError, ErrorCode};

/// The paths of the proxy route (the spec's `proxyPath`): HTTP calls, SSE streams and WebSocket
/// channels. Read from the config file's `[proxy]` table.
///
/// ```
/// use courier_core::config::ProxyPaths;
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
    /// The `[proxy]` table with defaults filled in; each path must be absolute.
    pub(super) fn from_raw(raw: RawProxy) -> Result<Self, ConfigurationError> {
        let defaults = Self::default();
        let at = KeyPath::root().key("proxy");
        let http = checked(raw.http.unwrap_or(defaults.http), &at.key("http"))?;
        let sse = checked(raw.sse.unwrap_or(defaults.sse), &at.key("sse"))?;
        let ws = raw.ws.map(|ws| checked(ws, &at.key("ws"))).transpose()?;
        Ok(Self { http, sse, ws })
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
