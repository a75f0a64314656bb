//! The routes record and the browser's routes module, for an API declared in Rust.
//!
//! `courier routes` writes them from a `courier.toml`; an API declared in Rust (a builder or
//! `#[derive(courier::Api)]`) is written by the app itself, with [`Command`]: a small binary of
//! the app's own takes the same flags as `courier routes` (`--ts`, `--boundary`, `--out PATH`,
//! `--check`), so CI can check that the committed module still matches the API:
//!
//! ```no_run
//! // src/bin/routes.rs
//! use courier::routes::{types::Types, Command};
//! # use courier::{ApiDef, GroupDef, HttpEndpoint};
//! # fn api() -> ApiDef { ApiDef::builder().group("users", GroupDef::new().expose(true).endpoint("get", HttpEndpoint::get("/:id"))).build().unwrap() }
//!
//! fn main() -> std::process::ExitCode {
//!     // With `#[derive(courier::TypeScript)]` on a typed API: `.types(Types::of::<Example>())`.
//!     Command::new("demo", &api()).types(Types::new()).run()
//! }
//! // cargo run --bin routes -- --ts --out web/src/routes.ts            writes it
//! // cargo run --bin routes -- --ts --out web/src/routes.ts --check    fails (exit 1) when stale
//! ```
//!
//! With courier's `typescript` feature and `#[derive(courier::TypeScript)]`, the module carries
//! every exposed endpoint's variables and response types, generated from the Rust types
//! ([`types`]), so `tsc` checks a page's calls against the Rust API.

pub use courier_core::routes::*;

use courier_core::ApiDef;
use std::path::PathBuf;
use std::process::ExitCode;

/// Writes, prints or checks an API's routes record or module, from command-line flags: the
/// `courier routes` command for an API declared in Rust. See the [module docs](self).
#[derive(Debug)]
pub struct Command {
    source: String,
    api: ApiDef,
    types: types::Types,
}

/// The flags [`Command`] takes.
#[derive(Debug, Default, PartialEq, Eq)]
struct Flags {
    ts: bool,
    boundary: bool,
    out: Option<PathBuf>,
    check: bool,
}

const USAGE: &str = "usage: [--ts] [--boundary] [--out PATH [--check]]
  --ts          a TypeScript module instead of JSON
  --boundary    the boundary record (reads as GET unless sensitive, those listed as `sensitive`)
  --out PATH    write to PATH instead of stdout
  --check       do not write: exit 1 when PATH is missing or not what would be written";

impl Command {
    /// The command for `api`, registered with the proxy as source `source` (the wire's `_s`).
    pub fn new(source: &str, api: &ApiDef) -> Self {
        Self {
            source: source.to_owned(),
            api: api.clone(),
            types: types::Types::new(),
        }
    }

    /// The endpoints' TypeScript types, for `--ts` (by default every one `unknown`).
    #[must_use]
    pub fn types(mut self, types: types::Types) -> Self {
        self.types = types;
        self
    }

    /// Runs with the process's arguments; the exit code is `courier routes`'s: 0 done, 1 stale
    /// (`--check`), 2 a usage or configuration error. Reports go to stdout and stderr as one
    /// line of JSON each, as `courier routes` writes them.
    pub fn run(self) -> ExitCode {
        self.run_with(std::env::args().skip(1))
    }

    /// Runs with `args` (the flags, without the program's name).
    pub fn run_with<I, S>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let flags = match parse(args.into_iter().map(Into::into)) {
            Ok(flags) => flags,
            Err(message) => {
                eprintln!(
                    "{}",
                    serde_json::json!({ "error": "usage", "message": message })
                );
                return ExitCode::from(2);
            }
        };
        let routes = if flags.boundary {
            Routes::boundary(&self.source, &self.api)
        } else {
            Routes::from_api(&self.source, &self.api)
        };
        let text = if flags.ts {
            match routes.to_typescript_with(&self.types) {
                Ok(text) => text,
                Err(err) => return configuration_error(&err),
            }
        } else {
            routes.to_json_file()
        };
        let Some(out) = &flags.out else {
            print!("{text}");
            return ExitCode::SUCCESS;
        };
        let path = out.display().to_string();
        match write_module(out, &text, flags.check) {
            Ok(written) => {
                println!(
                    "{}",
                    serde_json::json!({
                        "path": path,
                        "endpoints": routes.endpoints.len(),
                        "written": written == Written::Written,
                    })
                );
                ExitCode::SUCCESS
            }
            Err(ModuleError::Stale(message)) => {
                eprintln!(
                    "{}",
                    serde_json::json!({ "error": "stale", "path": path, "message": message })
                );
                ExitCode::from(1)
            }
            Err(ModuleError::Io(err)) => configuration_error(&err),
        }
    }
}

/// Reports `err` on stderr as `courier routes` does, and exits 2.
fn configuration_error(err: &courier_core::ConfigurationError) -> ExitCode {
    eprintln!(
        "{}",
        serde_json::json!({ "error": err.code().as_str(), "message": err.to_string() })
    );
    ExitCode::from(2)
}

fn parse(args: impl Iterator<Item = String>) -> Result<Flags, String> {
    let mut flags = Flags::default();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ts" => flags.ts = true,
            "--boundary" => flags.boundary = true,
            "--check" => flags.check = true,
            "--out" => match args.next() {
                Some(path) => flags.out = Some(PathBuf::from(path)),
                None => return Err(format!("--out needs a path\n{USAGE}")),
            },
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if flags.check && flags.out.is_none() {
        return Err(format!("--check needs --out\n{USAGE}"));
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Flags, String> {
        parse(args.iter().map(|a| (*a).to_owned()))
    }

    #[test]
    fn reads_the_flags_of_courier_routes() {
        assert_eq!(
            parsed(&["--ts", "--out", "r.ts", "--check"]),
            Ok(Flags {
                ts: true,
                boundary: false,
                out: Some("r.ts".into()),
                check: true
            })
        );
        assert!(parsed(&["--check"])
            .unwrap_err()
            .contains("--check needs --out"));
        assert!(parsed(&["--out"]).unwrap_err().contains("needs a path"));
        assert!(parsed(&["--tss"])
            .unwrap_err()
            .contains("unknown argument `--tss`"));
    }
}
