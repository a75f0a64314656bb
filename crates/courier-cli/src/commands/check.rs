//! `courier check --config FILE`: loads the file the way every other subcommand will, and
//! says whether it is usable.
//!
//! On success it prints one line to stdout and exits 0:
//! `ok: 1 source (demo), 6 endpoints` — the sources by name, in name order, and the number of
//! endpoints of all of them. On a configuration error it prints the error as one line of JSON
//! on stderr and exits 2 (see [`crate::report`]).

use crate::report;
use clap::Args;
use courier_core::config::Config;
use std::path::PathBuf;
use std::process::ExitCode;

/// `courier check`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The config file to check.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub(crate) config: PathBuf,
}

/// Checks the file.
pub(crate) fn run(args: &CheckArgs) -> ExitCode {
    match Config::from_path(&args.config) {
        Ok(config) => {
            report::stdout_line(&summary(&config));
            report::OK
        }
        Err(err) => report::configuration_error(&err),
    }
}

/// The success line: `ok: N source(s) (a, b), M endpoint(s)`.
fn summary(config: &Config) -> String {
    let sources = config.sources();
    let endpoints: usize = sources.values().map(|api| api.endpoints().len()).sum();
    let names = if sources.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = sources.keys().map(String::as_str).collect();
        format!(" ({})", names.join(", "))
    };
    format!(
        "ok: {} {}{names}, {endpoints} {}",
        sources.len(),
        plural(sources.len(), "source"),
        plural(endpoints, "endpoint"),
    )
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::summary;
    use courier_core::config::Config;

    #[test]
    fn the_summary_counts_sources_and_endpoints() {
        let empty = Config::from_toml_str("").unwrap();
        assert_eq!(summary(&empty), "ok: 0 sources, 0 endpoints");
        let one = Config::from_toml_str(
            "[sources.a]\nbase_url = \"http://api.example\"\n[sources.a.groups.g.endpoints.e]\nget = \"\"\n",
        )
        .unwrap();
        assert_eq!(summary(&one), "ok: 1 source (a), 1 endpoint");
        let two = Config::from_toml_str("[sources.b]\n[sources.a]\n").unwrap();
        assert_eq!(summary(&two), "ok: 2 sources (a, b), 0 endpoints");
    }
}
