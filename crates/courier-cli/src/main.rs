//! `courier`: check a `courier.toml`, call its endpoints from the shell, serve the proxy route
//! and write the routes record from it.
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

/// mimalloc rather than the system's allocator: a request through `courier serve` allocates and
/// frees often and from two threads, which glibc's malloc served in a fifth of a proxied read's
/// instructions (docs/benchmarks-history.md, "The proxy hop as a process"). A binary's choice:
/// the library leaves its users' own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    commands::run(cli.command)
}
