//! Tests of the config file: every key (`keys`), every error (`errors`), transport files
//! (`transport`).

mod errors;
mod keys;
mod transport;

use super::Config;
use crate::error::{ConfigurationError, ErrorCode};

/// `examples/courier.toml`: DESIGN.md's example, completed.
const EXAMPLE: &str = include_str!("../../../../../examples/courier.toml");

/// A minimal source around one endpoint table's body.
fn with_endpoint(body: &str) -> String {
    format!(
        "[sources.demo]\nbase_url = \"http://127.0.0.1:9000\"\n\n\
         [sources.demo.groups.users]\nprefix = \"/users\"\n\n\
         [sources.demo.groups.users.endpoints.get]\n{body}\n"
    )
}

#[track_caller]
fn load(text: &str) -> Config {
    match Config::from_toml_str(text) {
        Ok(config) => config,
        Err(err) => panic!("expected the config to load, got {err}"),
    }
}

#[track_caller]
fn fails(text: &str, code: ErrorCode, path: &str) -> ConfigurationError {
    match Config::from_toml_str(text) {
        Ok(_) => panic!("expected {code} at {path}, the config loaded"),
        Err(err) => {
            assert_eq!(err.code(), code, "{err}");
            assert_eq!(err.path(), Some(path), "{err}");
            assert!(err.to_string().contains(path), "{err}");
            err
        }
    }
}
