//! One module per subcommand; each has its arguments (`…Args`) and a `run` that returns the
//! process's exit code.

pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod routes;
pub(crate) mod serve;

use crate::cli::Command;
use std::process::ExitCode;

/// Runs a subcommand.
pub(crate) fn run(command: Command) -> ExitCode {
    match command {
        Command::Call(args) => call::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Routes(args) => routes::run(&args),
        Command::Serve(args) => serve::run(&args),
    }
}
