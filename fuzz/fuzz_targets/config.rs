//! The config file (`courier.toml`): `Config::from_toml_str` on any text. It never panics, and
//! a file that loads gives, for each source, a routes record that loads back.
//!
//! A config names certificate files, which loading reads. So that the fuzzer can't make it
//! read a device (`/dev/zero` never ends) or another system file, an input whose `transport`
//! tables name a file outside the working directory is skipped; names inside it are still read
//! (and found missing, or not PEM).

#![no_main]

use courier_core::config::Config;
use courier_core::encode::PathTemplate;
use courier_core::routes::Routes;
use libfuzzer_sys::fuzz_target;

/// The keys whose values are file names (`docs/CONFIG.md`, `transport`).
const FILE_KEYS: [&str; 3] = ["client_cert", "client_key", "root_certs"];

/// Whether `value`, anywhere under a file key, names a file outside the working directory.
fn names_outside(value: &toml::Value, under_file_key: bool) -> bool {
    match value {
        toml::Value::String(name) => {
            under_file_key && (name.starts_with('/') || name.contains("..") || name.contains('\\'))
        }
        toml::Value::Array(items) => items.iter().any(|v| names_outside(v, under_file_key)),
        toml::Value::Table(table) => table
            .iter()
            .any(|(key, v)| names_outside(v, under_file_key || FILE_KEYS.contains(&key.as_str()))),
        _ => false,
    }
}

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    if let Ok(table) = text.parse::<toml::Table>() {
        if names_outside(&toml::Value::Table(table), false) {
            return;
        }
    }
    let Ok(config) = Config::from_toml_str(&text) else {
        return;
    };
    for (name, api) in config.sources() {
        for endpoint in api.endpoints() {
            if let Some(template) = endpoint.template() {
                assert_eq!(
                    PathTemplate::parse(template.as_str()).as_ref(),
                    Ok(template)
                );
            }
        }
        // What `courier routes` writes for a source that loaded, a proxy caller can load.
        let routes = Routes::boundary(name.clone(), api);
        let json = routes.to_json();
        let read: Routes = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("the routes record does not read back: {e}\n{json}"));
        assert_eq!(read, routes);
        read.to_api()
            .unwrap_or_else(|e| panic!("the routes record does not load: {e}\n{json}"));
        let _ = routes.to_typescript();
    }
});
