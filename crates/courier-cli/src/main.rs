//! `courier`: check a `courier.toml` and call its endpoints from the shell; in time also serve
//! the proxy route and write the routes record from it.
//!
//! Each subcommand lives in its own module under `commands/`; `cli` holds the argument types,
//! `report` the output contract shared by every subcommand (exit codes, the stderr JSON of a
//! configuration error, of an HTTP error, of a call with no response). The contract is
//! documented in `docs/CLI.md`.

mod cli;
mod commands;
mod report;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    commands::run(cli.command)
}
