//! The command line, as clap reads it: one variant per subcommand, whose arguments live beside
//! the subcommand's code.

use crate::commands::check::CheckArgs;
use clap::{Parser, Subcommand};

/// Declare remote HTTP APIs in courier.toml, and check, call and serve them.
#[derive(Debug, Parser)]
#[command(name = "courier", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Validate a config file: print `ok: …` and exit 0, or print the error as JSON on stderr
    /// and exit 2.
    Check(CheckArgs),
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
