//! What every subcommand prints and exits with, so the contract is written once.
//!
//! - Success: exit 0 ([`OK`]); output on stdout.
//! - A [`ConfigurationError`]: exactly one line of JSON on stderr,
//!   `{"error":"configuration","code":"DOTTED_NAME","message":"…"}`, where `message` is the
//!   error's `Display` (code, key path, explanation); exit 2 ([`CONFIGURATION`]).
//! - A usage error: clap's message and exit 2.
//!
//! Output goes through `writeln!` rather than `println!`, so a closed pipe is ignored instead
//! of panicking.

use courier_core::ConfigurationError;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// The command did what it was asked.
pub(crate) const OK: ExitCode = ExitCode::SUCCESS;

/// The config file, or a definition, is not usable.
pub(crate) const CONFIGURATION: u8 = 2;

/// The stderr body of a configuration error; the field order is the documented one.
#[derive(Serialize)]
struct ConfigurationReport<'a> {
    error: &'static str,
    code: &'static str,
    message: &'a str,
}

/// Prints `err` as one line of JSON on stderr; returns exit code 2.
pub(crate) fn configuration_error(err: &ConfigurationError) -> ExitCode {
    let message = err.to_string();
    let report = ConfigurationReport {
        error: "configuration",
        code: err.code().as_str(),
        message: &message,
    };
    // Serialising three strings cannot fail; the fallback keeps the promise of one JSON line.
    let line = serde_json::to_string(&report).unwrap_or_else(|_| {
        format!(
            r#"{{"error":"configuration","code":"{}","message":""}}"#,
            err.code()
        )
    });
    let _ = writeln!(std::io::stderr().lock(), "{line}");
    ExitCode::from(CONFIGURATION)
}

/// Prints one line on stdout.
pub(crate) fn stdout_line(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}
