//! The routes record and the browser's routes module, for an API declared in Rust.
//!
//! `courier routes` writes them from a `courier.toml`; an API declared in Rust (a builder or
//! `#[derive(courier::Api)]`) is written by the app itself, with [`Command`]: a small binary of
//! the app's own takes the same flags as `courier routes` (`--ts`, `--boundary`, `--out PATH`,
//! `--check`), so CI can check that the committed module still matches the API.
//!
//! For a typed API, [`Command::new`] takes the `Api<T>` and writes every exposed endpoint's
//! variables and response types into the module, generated from the Rust types ([`types`]), so
//! `tsc` checks a page's calls against the Rust API. It needs courier's `typescript` feature,
//! `#[derive(courier::TypeScript)]` on the API and its groups, and `#[derive(ts_rs::TS)]` on the
//! endpoints' types; an API without them does not compile there. The binary builds the API
//! [for its routes](crate::ApiBuilder::for_routes): the routes are its shape, not its address,
//! so it needs no base URL.
//!
//! ```
//! // src/bin/routes.rs
//! use courier::typed::{endpoint, Group, Http};
//! use courier::{Api, ApiBuilder, ApiDef, ConfigurationError};
//!
//! #[derive(serde::Deserialize, ts_rs::TS)]
//! pub struct User { pub id: u32, pub name: String }
//!
//! #[derive(courier::Group, courier::TypeScript)]
//! pub struct Users { pub get: Http<User, u32> }
//!
//! #[derive(courier::Api, courier::TypeScript)]
//! pub struct Example { pub users: Group<Users> }
//!
//! /// The API, as the server builds it too (with its `base_url`).
//! pub fn api(builder: ApiBuilder) -> Result<Api<Example>, ConfigurationError> {
//!     let users = Group::new(Users { get: endpoint().get("/:id").expose(true) }).prefix("/users");
//!     builder.build_typed(Example { users })
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let api = api(ApiDef::builder().for_routes()).expect("the API builds");
//!     courier::routes::Command::new("demo", &api).run()
//! }
//! // cargo run --bin routes -- --ts --out web/src/routes.ts            writes it
//! // cargo run --bin routes -- --ts --out web/src/routes.ts --check    fails (exit 1) when stale
//! ```
//!
//! An API with no Rust types — a builder's [`ApiDef`], a config file's — goes
//! through [`Command::untyped`]. Its module's types are `unknown`, so `tsc` checks nothing of a
//! page's calls: `--ts` says so on stderr each time it writes one, naming the endpoints.

pub use courier_core::routes::*;

use courier_core::routes::types::TypeScript;
use courier_core::Api;
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
    help: bool,
}

const USAGE: &str = "usage: [--ts] [--boundary] [--out PATH [--check]] | --help
  --ts          a TypeScript module instead of JSON
  --boundary    the boundary record (reads as GET unless sensitive, those listed as `sensitive`)
  --out PATH    write to PATH instead of stdout
  --check       do not write: exit 1 when PATH is missing or not what would be written
  --help, -h    this text";

impl Command {
    /// The command for the typed `api`, registered with the proxy as source `source` (the
    /// wire's `_s`); `--ts` writes its endpoints' types, [`Types::of::<A>()`](types::Types::of).
    pub fn new<A: TypeScript>(source: &str, api: &Api<A>) -> Self {
        Self {
            source: source.to_owned(),
            api: api.def().clone(),
            types: types::Types::of::<A>(),
        }
    }

    /// The command for `api`, which has no Rust types: `--ts` writes every endpoint's types
    /// `unknown` (unless given with [`Command::types`]), and says so on stderr.
    pub fn untyped(source: &str, api: &ApiDef) -> Self {
        Self {
            source: source.to_owned(),
            api: api.clone(),
            types: types::Types::new(),
        }
    }

    /// The endpoints' TypeScript types for `--ts`, in place of those the command has: for an
    /// API whose types are written by hand ([`Types::set`](types::Types::set)).
    #[must_use]
    pub fn types(mut self, types: types::Types) -> Self {
        self.types = types;
        self
    }

    /// Runs with the process's arguments; the exit code is `courier routes`'s: 0 done, 1 stale
    /// (`--check`), 2 a usage or configuration error. Reports go to stdout and stderr as one
    /// line of JSON each, as `courier routes` writes them; `--help` prints the usage.
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
        if flags.help {
            println!("Writes, prints or checks the routes record of this API, or its TypeScript module.\n\n{USAGE}");
            return ExitCode::SUCCESS;
        }
        let routes = if flags.boundary {
            Routes::boundary(&self.source, &self.api)
        } else {
            Routes::from_api(&self.source, &self.api)
        };
        let text = if flags.ts {
            match routes.to_typescript_with(&self.types) {
                Ok(text) => {
                    if let Some(warning) = untyped_warning(&routes, &self.types) {
                        eprintln!("{warning}");
                    }
                    text
                }
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

/// The warning `--ts` prints on stderr when the module types routed endpoints `unknown`: which
/// ones, and how to give their types.
fn untyped_warning(routes: &Routes, types: &types::Types) -> Option<serde_json::Value> {
    let untyped: Vec<&str> = routes
        .endpoints
        .keys()
        .map(String::as_str)
        .filter(|path| !types.covers(path))
        .collect();
    if untyped.is_empty() {
        return None;
    }
    let message = if untyped.len() == routes.endpoints.len() {
        "every endpoint's variables and response are `unknown`, so `tsc` checks none of the \
         page's calls: give a typed API with `Command::new(source, &api)` (`#[derive(courier::TypeScript)]` \
         on the API and its groups, courier's `typescript` feature), or the types with `.types(...)`"
            .to_owned()
    } else {
        format!(
            "{} of {} endpoints have `unknown` types, so `tsc` does not check the page's calls \
             of them: give their types with `.types(...)`",
            untyped.len(),
            routes.endpoints.len()
        )
    };
    Some(serde_json::json!({ "warning": "untyped", "endpoints": untyped, "message": message }))
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
            "--help" | "-h" => flags.help = true,
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
    use courier_core::{GroupDef, HttpEndpoint};

    fn routes() -> Routes {
        let users = GroupDef::new()
            .expose(true)
            .endpoint("get", HttpEndpoint::get("/:id"))
            .endpoint("list", HttpEndpoint::get(""));
        let api = ApiDef::builder()
            .for_routes()
            .group("users", users)
            .build()
            .unwrap();
        Routes::from_api("demo", &api)
    }

    #[test]
    fn an_untyped_module_is_named_on_stderr() {
        let routes = routes();
        let warning = untyped_warning(&routes, &types::Types::new()).unwrap();
        assert_eq!(warning["warning"], "untyped");
        assert_eq!(
            warning["endpoints"],
            serde_json::json!(["users.get", "users.list"])
        );
        let message = warning["message"].as_str().unwrap();
        assert!(
            message.contains("`tsc` checks none of the page's calls"),
            "{message}"
        );
        assert!(message.contains("Command::new(source, &api)"), "{message}");

        let mut some = types::Types::new();
        some.set("users.get", "number", "string", None);
        let warning = untyped_warning(&routes, &some).unwrap();
        assert_eq!(warning["endpoints"], serde_json::json!(["users.list"]));
        assert!(warning["message"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 endpoints have `unknown` types"));

        some.set("users.list", "null", "string[]", None);
        assert_eq!(untyped_warning(&routes, &some), None);
    }

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
                check: true,
                help: false,
            })
        );
        assert!(parsed(&["--help"]).unwrap().help);
        assert!(parsed(&["-h"]).unwrap().help);
        assert!(parsed(&["--check"])
            .unwrap_err()
            .contains("--check needs --out"));
        assert!(parsed(&["--out"]).unwrap_err().contains("needs a path"));
        assert!(parsed(&["--tss"])
            .unwrap_err()
            .contains("unknown argument `--tss`"));
    }
}
