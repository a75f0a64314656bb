//! The file's `[static]` table: what `courier serve` serves beside the proxy route, on its
//! origin — the app's front end from a folder (`dir`) and the browser package at a path
//! (`package`).

use super::key_path::KeyPath;
use super::raw::RawStatic;
use super::ProxyPaths;
use crate::error::{ConfigurationError, ErrorCode};
use std::path::{Path, PathBuf};

/// `[static]` as read: the folder resolved against the file's directory, the package's path
/// checked.
#[derive(Clone, Debug, Default)]
pub(super) struct StaticFiles {
    pub(super) dir: Option<PathBuf>,
    pub(super) package: Option<String>,
}

impl StaticFiles {
    /// The table (absent: nothing served), `dir` resolved against `base`; `package` must be
    /// a path (`/courier`) none of the proxy's own.
    pub(super) fn from_raw(
        raw: Option<RawStatic>,
        base: &Path,
        proxy: &ProxyPaths,
    ) -> Result<Self, ConfigurationError> {
        let Some(raw) = raw else {
            return Ok(Self::default());
        };
        let at = KeyPath::root().key("static");
        let invalid = |message: String, key: &str| {
            ConfigurationError::new(ErrorCode::ConfigInvalid, message).at(at.key(key).as_str())
        };
        if raw.dir.is_none() && raw.package.is_none() {
            return Err(ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "`[static]` serves a folder (`dir`), the browser package (`package`), or both; \
                 it names neither",
            )
            .at(at.as_str()));
        }
        let dir = match raw.dir {
            Some(dir) if dir.trim().is_empty() => {
                return Err(invalid(
                    "`dir` names the folder of the static front end; it is empty".to_owned(),
                    "dir",
                ))
            }
            dir => dir.map(|dir| base.join(dir)),
        };
        let package = match raw.package {
            Some(path) => {
                let trimmed = path.trim_end_matches('/');
                if !path.starts_with('/')
                    || trimmed.is_empty()
                    || trimmed.contains(['?', '#', '{', '}'])
                {
                    return Err(invalid(
                        format!(
                            "`package` is the path the browser package is served under, `/` and \
                             a name such as `/courier`, with no `?`, `#`, `{{` or `}}`; not `{path}`"
                        ),
                        "package",
                    ));
                }
                let own = [Some(&proxy.http), Some(&proxy.sse), proxy.ws.as_ref()];
                if own.into_iter().flatten().any(|own| own == trimmed) {
                    return Err(invalid(
                        format!("`{path}` is already one of the proxy's paths (`[proxy]`)"),
                        "package",
                    ));
                }
                Some(trimmed.to_owned())
            }
            None => None,
        };
        Ok(Self { dir, package })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::error::ErrorCode;
    use std::path::Path;

    #[test]
    fn dir_and_package_are_read_either_or_both() {
        let config: Config = "[static]\ndir = \"web\"\npackage = \"/courier/\""
            .parse()
            .unwrap();
        assert_eq!(config.static_dir(), Some(Path::new("web")));
        assert_eq!(config.browser_package(), Some("/courier"));

        let config: Config = "[static]\npackage = \"/assets/courier\"".parse().unwrap();
        assert_eq!(config.static_dir(), None);
        assert_eq!(config.browser_package(), Some("/assets/courier"));

        let config: Config = "".parse().unwrap();
        assert_eq!(
            (config.static_dir(), config.browser_package()),
            (None, None)
        );
    }

    #[test]
    fn a_package_path_must_be_absolute_and_not_the_proxys() {
        for (text, path) in [
            ("[static]\npackage = \"courier\"", "static.package"),
            ("[static]\npackage = \"/\"", "static.package"),
            ("[static]\npackage = \"\"", "static.package"),
            ("[static]\npackage = \"/c?x\"", "static.package"),
            ("[static]\npackage = \"/{file}\"", "static.package"),
            ("[static]\npackage = 1", "static.package"),
            (
                "[proxy]\nws = \"/ws\"\n[static]\npackage = \"/ws\"",
                "static.package",
            ),
            ("[static]\npackage = \"/api/request\"", "static.package"),
            ("[static]\ndir = \" \"", "static.dir"),
            ("[static]\n", "static"),
        ] {
            let err = text.parse::<Config>().unwrap_err();
            assert_eq!(err.code(), ErrorCode::ConfigInvalid, "{text}: {err}");
            assert_eq!(err.path(), Some(path), "{text}: {err}");
        }
        let err = "[static]\npackages = \"/c\"".parse::<Config>().unwrap_err();
        assert_eq!(err.code(), ErrorCode::ConfigUnknownKey, "{err}");
    }
}
