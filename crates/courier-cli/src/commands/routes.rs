//! `courier routes --config FILE --source NAME [--boundary] [--ts] [--out PATH] [--check]`: the
//! routes record of a source's exposed endpoints ([`courier_core::routes::Routes`]), as JSON or
//! as a TypeScript module.
//!
//! - With `--boundary`, the boundary record instead ([`Routes::boundary`]): the exposed
//!   endpoints, a read marked `get` unless its variables are sensitive, and those reads listed
//!   under `sensitive` — what a proxy caller's boundary form takes. Nothing the proxy does not
//!   expose is named in it.
//! - Without `--out`, the record goes to stdout.
//! - With `--out PATH`, it is written there, and stdout gets one line of JSON:
//!   `{"path", "endpoints", "written": true}`.
//! - With `--check` (which needs `--out`), nothing is written: the file is compared with what
//!   would be written. Up to date: `{"path", "endpoints", "written": false}` on stdout, exit 0.
//!   Missing or different: `{"error":"stale","path","message"}` on stderr, exit 1 — for CI.
//!
//! The file's problems, an unknown source, and `--check` without `--out` are configuration
//! errors (exit 2), as everywhere else.

use crate::report;
use clap::Args;
use courier_core::config::Config;
use courier_core::routes::{self, ModuleError, Routes};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// `courier routes`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct RoutesArgs {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub(crate) config: PathBuf,

    /// The source, by its name in the file (`[sources.NAME]`); it is the record's `source`.
    #[arg(long, short = 's', value_name = "NAME")]
    pub(crate) source: String,

    /// Write the boundary record (the exposed endpoints; reads as GET unless sensitive, those
    /// listed under `sensitive`) instead.
    #[arg(long)]
    pub(crate) boundary: bool,

    /// Write a TypeScript module instead of JSON.
    #[arg(long)]
    pub(crate) ts: bool,

    /// Write the record to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub(crate) out: Option<PathBuf>,

    /// Do not write: fail (exit 1) when `--out` is missing or not what would be written.
    #[arg(long, requires = "out")]
    pub(crate) check: bool,
}

#[derive(Serialize)]
struct Written<'a> {
    path: &'a str,
    endpoints: usize,
    written: bool,
}

#[derive(Serialize)]
struct Stale<'a> {
    error: &'static str,
    path: &'a str,
    message: String,
}

/// Writes, prints or checks the record.
pub(crate) fn run(args: &RoutesArgs) -> ExitCode {
    let config = match Config::from_path(&args.config) {
        Ok(config) => config,
        Err(err) => return report::configuration_error(&err),
    };
    let api = match super::call::source(config, &args.source, &args.config) {
        Ok(api) => api,
        Err(err) => return report::configuration_error(&err),
    };
    let routes = if args.boundary {
        Routes::boundary(&args.source, &api)
    } else {
        Routes::from_api(&args.source, &api)
    };
    let text = if args.ts {
        routes.to_typescript()
    } else {
        routes.to_json_file()
    };
    let Some(out) = &args.out else {
        print!("{text}");
        return report::OK;
    };
    let path = out.display().to_string();
    let endpoints = routes.endpoints.len();
    match routes::write_module(out, &text, args.check) {
        Ok(written) => {
            report::stdout_json(&Written {
                path: &path,
                endpoints,
                written: written == routes::Written::Written,
            });
            report::OK
        }
        Err(ModuleError::Stale(message)) => stale(&path, message),
        Err(ModuleError::Io(err)) => report::configuration_error(&err),
    }
}

fn stale(path: &str, message: String) -> ExitCode {
    let report = Stale {
        error: "stale",
        path,
        message,
    };
    eprintln!(
        "{}",
        serde_json::to_string(&report).unwrap_or_else(|_| unreachable!("plain data serialises"))
    );
    ExitCode::from(1)
}
