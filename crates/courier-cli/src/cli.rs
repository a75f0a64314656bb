//! The command line, as clap reads it: one variant per subcommand, whose arguments live beside
//! the subcommand's code.

use crate::commands::call::CallArgs;
use crate::commands::check::CheckArgs;
use crate::commands::routes::RoutesArgs;
use crate::commands::serve::ServeArgs;
use clap::{Parser, Subcommand};

/// Declare remote HTTP APIs in courier.toml, and check, call and serve them.
#[derive(Debug, Parser)]
#[command(
    name = "courier",
    version,
    about,
    propagate_version = true,
    after_help = "Outputs and exit codes: docs/CLI.md."
)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Call one endpoint of a source (HTTP, stream or channel) and print the result as JSON.
    ///
    /// Prints the response body as one line of JSON on stdout and exits 0; an HTTP error, or a
    /// call with no response (status 0), as JSON on stderr and exits 1; a configuration error
    /// as JSON on stderr and exits 2.
    #[command(after_help = CALL_EXAMPLES, allow_negative_numbers = true)]
    Call(CallArgs),
    /// Validate a config file: print `ok: …` and exit 0, or print the error as JSON on stderr
    /// and exit 2.
    Check(CheckArgs),
    /// Write the routes record of a source's exposed endpoints (JSON, or TypeScript with
    /// `--ts`); `--check` fails when `--out` is stale.
    Routes(RoutesArgs),
    /// Serve the proxy route for every source in the file, at its `[proxy]` paths, until
    /// Ctrl-C or SIGTERM; prints `listening on http://ADDR` once bound.
    Serve(ServeArgs),
}

const CALL_EXAMPLES: &str = "\
Examples:
  courier call -c courier.toml demo users.get '{\"id\": 7, \"fields\": \"name\"}'
  echo '{\"name\": \"Ada\"}' | courier call -c courier.toml demo users.create -
  courier call -c courier.toml demo users.get 7 --raw

--raw prints {\"status\", \"headers\", \"data\"}; a header's value is a string, or an array of
strings when the header repeats. On a stream, each event's data is a line; on a channel, each
message is a line and each line of stdin is sent.
See docs/CLI.md.";

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
