//! The config file, `courier.toml`: sources, groups and endpoints as TOML, loaded into the
//! runtime tree.
//!
//! A file is read in two steps. serde reads it into plain structs that refuse unknown keys
//! (`CONFIG_SYNTAX`, `CONFIG_UNKNOWN_KEY`, `CONFIG_INVALID`, each with its key path); then every
//! source is built with [`ApiDef::builder`], [`GroupDef`](crate::GroupDef) and the endpoint
//! heads' builders, so the tree's own rules (`DOTTED_NAME`, `INVALID_PATH`,
//! `CANCEL_PREVIOUS_INVALID`, …) are checked exactly as for a tree written in Rust, their paths
//! prefixed with `sources.NAME.`. The format, every key and every error code are described in
//! `docs/CONFIG.md`.
//!
//! ```
//! use courier::config::Config;
//!
//! let config = Config::from_toml_str(r#"
//!     [sources.demo]
//!     base_url = "http://127.0.0.1:9000"
//!
//!     [sources.demo.groups.users]
//!     prefix = "/users"
//!     expose = true
//!
//!     [sources.demo.groups.users.endpoints.get]
//!     get = "/:id"
//! "#)?;
//! let demo = config.source("demo").unwrap();
//! let get = demo.endpoint("users.get").unwrap();
//! assert_eq!(get.template().unwrap().as_str(), "/users/:id");
//! assert!(get.is_exposed());
//! assert_eq!(config.proxy().http, "/api/request");
//! # Ok::<(), courier::ConfigurationError>(())
//! ```

mod endpoint;
mod errors;
mod json;
mod key_path;
mod proxy;
mod raw;
mod source;
mod static_files;
mod transport;

#[cfg(test)]
mod tests;

pub use self::proxy::{ProxyLimits, ProxyPaths};

use self::key_path::KeyPath;
use self::static_files::StaticFiles;
use crate::error::{ConfigurationError, ErrorCode};
use crate::tree::api::ApiDef;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// A loaded, validated config file: the proxy's paths and every source, built.
///
/// Cheap to clone (each [`ApiDef`] is shared).
#[derive(Clone, Debug)]
pub struct Config {
    proxy: ProxyPaths,
    limits: ProxyLimits,
    static_files: StaticFiles,
    bus: Option<Bus>,
    metrics: Option<std::net::SocketAddr>,
    sources: BTreeMap<String, ApiDef>,
}

/// The topic bus the channels and streams served here share with other instances (`[bus]`):
/// what `courier serve` connects its hub to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bus {
    /// The Redis URL (`redis`), `redis://[:password@]host:port[/db]`; `None` for a bus of this
    /// process alone (a table that only sets a history).
    pub redis: Option<String>,
    /// The prefix of the bus's Redis channels (`prefix`); the bus's own default when `None`.
    pub prefix: Option<String>,
    /// How many messages may wait for Redis each way (`queue`); the bus's default when `None`.
    pub queue: Option<usize>,
    /// The history kept of each topic (`history`, messages, and `history_age_ms`, by default
    /// [`Bus::DEFAULT_HISTORY_AGE`]), from which a member that comes back with its position
    /// recovers what it missed; `None` keeps none.
    pub history: Option<(usize, Duration)>,
}

impl Bus {
    /// How old a kept message may be when `history_age_ms` is not set: 60 s.
    pub const DEFAULT_HISTORY_AGE: Duration = Duration::from_secs(60);
}

impl Config {
    /// Loads a config from TOML text. File names in it (certificates) resolve against the
    /// current directory; use [`Config::from_path`] to resolve them against the file's own.
    ///
    /// # Errors
    ///
    /// `CONFIG_SYNTAX`, `CONFIG_UNKNOWN_KEY`, `CONFIG_INVALID`, `SOURCE_TRANSPORT_INVALID`, or
    /// any code of [`ApiBuilder::build`](crate::ApiBuilder::build); the first met.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigurationError> {
        load(text, Path::new(""))
    }

    /// Reads and loads a config file. File names in it resolve against the file's directory.
    ///
    /// # Errors
    ///
    /// `CONFIG_IO` when the file cannot be read, `CONFIG_SYNTAX` when it is not UTF-8, then as
    /// [`Config::from_toml_str`].
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigurationError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| {
            ConfigurationError::new(
                ErrorCode::ConfigIo,
                format!("cannot read config file `{}`: {e}", path.display()),
            )
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|e| errors::not_utf8(&bytes, &e))?;
        load(text, path.parent().unwrap_or(Path::new("")))
    }

    /// Where the proxy route is mounted (`[proxy]`).
    pub fn proxy(&self) -> &ProxyPaths {
        &self.proxy
    }

    /// The limits the proxy holds browsers to (`[proxy]`'s `body_limit`, `multipart_limit`,
    /// `header_read_timeout_ms`, `body_read_timeout_ms`, `rate_limit`, `rate_burst`).
    pub fn proxy_limits(&self) -> &ProxyLimits {
        &self.limits
    }

    /// The folder of the app's static front end (`[static] dir`), resolved against the file's
    /// directory: `courier serve` serves it beside the proxy, on the same origin.
    ///
    /// ```
    /// use courier::config::Config;
    ///
    /// let config: Config = "[static]\ndir = \"web/dist\"".parse()?;
    /// assert_eq!(config.static_dir(), Some(std::path::Path::new("web/dist")));
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    pub fn static_dir(&self) -> Option<&Path> {
        self.static_files.dir.as_deref()
    }

    /// The path the browser package is served under (`[static] package`, without a trailing
    /// `/`): `courier serve` serves its ES modules there, embedded in the binary, so a page
    /// imports `/courier/index.js` with no npm step.
    ///
    /// ```
    /// use courier::config::Config;
    ///
    /// let config: Config = "[static]\npackage = \"/courier\"".parse()?;
    /// assert_eq!(config.browser_package(), Some("/courier"));
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    pub fn browser_package(&self) -> Option<&str> {
        self.static_files.package.as_deref()
    }

    /// The topic bus (`[bus]`), when the file names one: with `redis`, the channels and streams
    /// served here share their topics with every instance connected to it; with `history`,
    /// their topics keep one.
    ///
    /// ```
    /// use courier::config::Config;
    ///
    /// let config: Config = "[bus]\nredis = \"redis://127.0.0.1:6379\"".parse()?;
    /// assert_eq!(config.bus().unwrap().redis.as_deref(), Some("redis://127.0.0.1:6379"));
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    pub fn bus(&self) -> Option<&Bus> {
        self.bus.as_ref()
    }

    /// Where the metrics are served in Prometheus's text format (`[metrics] listen`), when the
    /// file says.
    ///
    /// ```
    /// use courier::config::Config;
    ///
    /// let config: Config = "[metrics]\nlisten = \"127.0.0.1:9464\"".parse()?;
    /// assert_eq!(config.metrics_listen(), Some("127.0.0.1:9464".parse().unwrap()));
    /// # Ok::<(), courier::ConfigurationError>(())
    /// ```
    pub fn metrics_listen(&self) -> Option<std::net::SocketAddr> {
        self.metrics
    }

    /// Every source, by name (`[sources.NAME]`); the name is the proxy's `_s`.
    pub fn sources(&self) -> &BTreeMap<String, ApiDef> {
        &self.sources
    }

    /// One source by name.
    pub fn source(&self, name: &str) -> Option<&ApiDef> {
        self.sources.get(name)
    }

    /// The sources, taken out of the config.
    pub fn into_sources(self) -> BTreeMap<String, ApiDef> {
        self.sources
    }
}

impl FromStr for Config {
    type Err = ConfigurationError;

    /// As [`Config::from_toml_str`].
    fn from_str(text: &str) -> Result<Self, ConfigurationError> {
        Self::from_toml_str(text)
    }
}

/// Reads `text` (file names resolve against `base`) into a built config.
/// The deepest a file's tables and arrays may nest: room for groups some thirty deep, more than
/// any API nests. Deeper, reading the file into its tables would recurse as deep, and a deep
/// enough file would overflow the reading thread's stack (a debug build's 2 MiB held about 150
/// levels): it is refused first, by a walk that does not recurse.
const MAX_DEPTH: usize = 72;

/// `CONFIG_INVALID` at the first table or array nested deeper than [`MAX_DEPTH`].
fn check_depth(root: &toml::de::DeTable<'_>) -> Result<(), ConfigurationError> {
    use toml::de::DeValue;
    let mut pending: Vec<(KeyPath, usize, &DeValue<'_>)> = root
        .iter()
        .map(|(key, value)| (KeyPath::root().key(key.get_ref()), 1, value.get_ref()))
        .collect();
    while let Some((at, depth, value)) = pending.pop() {
        let inner: Vec<(KeyPath, &DeValue<'_>)> = match value {
            DeValue::Table(table) => table
                .iter()
                .map(|(key, value)| (at.key(key.get_ref()), value.get_ref()))
                .collect(),
            DeValue::Array(array) => array
                .iter()
                .enumerate()
                .map(|(index, value)| (at.index(index), value.get_ref()))
                .collect(),
            _ => continue,
        };
        if depth >= MAX_DEPTH && !inner.is_empty() {
            return Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                format!(
                    "tables nest more than {MAX_DEPTH} deep here; courier reads at most that \
                     (groups some thirty deep)"
                ),
            )
            .at(at.as_str()));
        }
        pending.extend(inner.into_iter().map(|(at, value)| (at, depth + 1, value)));
    }
    Ok(())
}

fn load(text: &str, base: &Path) -> Result<Config, ConfigurationError> {
    let root = toml::de::DeTable::parse(text).map_err(|e| errors::syntax(text, &e))?;
    check_depth(root.get_ref())?;
    let document = toml::Deserializer::from(root);
    let raw: raw::RawConfig =
        serde_path_to_error::deserialize(document).map_err(|e| errors::shape(text, &e))?;
    let proxy = ProxyPaths::from_raw(&raw.proxy)?;
    let limits = ProxyLimits::from_raw(&raw.proxy)?;
    let static_files = StaticFiles::from_raw(raw.static_files, base, &proxy)?;
    let bus = raw.bus.map(bus).transpose()?;
    let metrics = match raw.metrics {
        Some(metrics) => Some(metrics.listen.parse().map_err(|_| {
            ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                format!(
                    "`listen` is the address the metrics are served on, `IP:PORT`, not `{}`",
                    metrics.listen
                ),
            )
            .at("metrics.listen")
        })?),
        None => None,
    };
    let sources = raw
        .sources
        .into_iter()
        .map(|(name, raw)| {
            let api = source::source(&name, raw, base)?;
            Ok((name, api))
        })
        .collect::<Result<_, ConfigurationError>>()?;
    Ok(Config {
        proxy,
        limits,
        static_files,
        bus,
        metrics,
        sources,
    })
}

/// `[bus]`, checked: a Redis URL, counts and ages of at least 1, and a table that names a bus or
/// a history.
fn bus(bus: raw::RawBus) -> Result<Bus, ConfigurationError> {
    let invalid =
        |at: &str, why: String| Err(ConfigurationError::new(ErrorCode::ConfigInvalid, why).at(at));
    if let Some(redis) = &bus.redis {
        if !redis.starts_with("redis://") && !redis.starts_with("rediss://") {
            return invalid(
                "bus.redis",
                format!("`redis` is a Redis URL, `redis://host:port` (or `rediss://` for TLS), not `{redis}`"),
            );
        }
    }
    if bus.queue == Some(0) {
        return invalid(
            "bus.queue",
            "`queue` is how many messages may wait for Redis: at least 1".to_owned(),
        );
    }
    if bus.history == Some(0) {
        return invalid(
            "bus.history",
            "`history` is how many messages a topic keeps: at least 1 (leave it out to keep none)"
                .to_owned(),
        );
    }
    match (bus.history, bus.history_age_ms) {
        (_, Some(0)) => {
            return invalid(
                "bus.history_age_ms",
                "`history_age_ms` is how old a kept message may be: at least 1".to_owned(),
            )
        }
        (None, Some(_)) => {
            return invalid(
                "bus.history_age_ms",
                "`history_age_ms` bounds a history: set `history` too".to_owned(),
            )
        }
        _ => {}
    }
    if bus.redis.is_none() && bus.history.is_none() {
        return invalid(
            "bus",
            "the table names `redis` (a bus shared with other instances), `history`, or both"
                .to_owned(),
        );
    }
    for (key, set) in [
        ("prefix", bus.prefix.is_some()),
        ("queue", bus.queue.is_some()),
    ] {
        if set && bus.redis.is_none() {
            return invalid(
                &format!("bus.{key}"),
                format!("`{key}` is Redis's: set `redis` too"),
            );
        }
    }
    let age = bus
        .history_age_ms
        .map_or(Bus::DEFAULT_HISTORY_AGE, Duration::from_millis);
    Ok(Bus {
        redis: bus.redis,
        prefix: bus.prefix,
        queue: bus.queue,
        history: bus.history.map(|count| (count, age)),
    })
}
