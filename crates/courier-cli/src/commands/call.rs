//! `courier call --config FILE SOURCE ENDPOINT [VARIABLES_JSON] [--raw] [--max-events N]`: one
//! call through the full client ([`courier_client::Client`]), from the shell: an HTTP call, a
//! stream subscription or a channel connection.
//!
//! The steps, each failing with its own report (see [`crate::report`] and `docs/CLI.md`):
//!
//! 1. Load the file as `courier check` does; pick the source (`CONFIG_INVALID` naming the known
//!    sources when there is none of that name).
//! 2. Find the endpoint by its dotted path (`ENDPOINT_NOT_IN_ROUTES`, naming the source's
//!    endpoints).
//! 3. Read the variables: the argument, or stdin for `-`; one JSON value, `CONFIG_INVALID` when
//!    it is not. None given is no variables (`null`).
//! 4. Call on a current-thread tokio runtime and print the body (or, with `--raw`, the status,
//!    headers and body) as one line of JSON on stdout; or print the failure on stderr. On a
//!    stream, print each event's data as one JSON line until the stream ends; on a channel,
//!    print each message as one JSON line and send each line of stdin as a message, until the
//!    server closes it for good; `--max-events N` stops either after `N`. An error that ends a
//!    stream or channel is reported as a failed call is.
//!
//! Nothing is sent before step 4, so a configuration error never reaches the network.

use crate::report;
use clap::Args;
use courier_client::{Client, Error, TransportError};
use courier_core::config::Config;
use courier_core::{ApiDef, ConfigurationError, EndpointDef, ErrorCode, HttpResponse};
use serde::Serialize;
use serde_json::{Map, Value};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// `courier call`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub(crate) config: PathBuf,

    /// The source to call, by its name in the file (`[sources.NAME]`).
    #[arg(value_name = "SOURCE")]
    pub(crate) source: String,

    /// The endpoint's dotted path, e.g. `users.posts.list`.
    #[arg(value_name = "ENDPOINT")]
    pub(crate) endpoint: String,

    /// The variables as one JSON value, e.g. '{"id": 7}'; `-` reads them from stdin. Omitted:
    /// no variables.
    #[arg(value_name = "VARIABLES_JSON")]
    pub(crate) variables: Option<String>,

    /// Print `{"status", "headers", "data"}` instead of the body alone.
    #[arg(long)]
    pub(crate) raw: bool,

    /// On a stream or channel, stop after N events or messages (no effect on HTTP endpoints).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_events: Option<u64>,
}

/// Makes the call and reports it.
pub(crate) fn run(args: &CallArgs) -> ExitCode {
    let (api, variables) = match prepare(args) {
        Ok(prepared) => prepared,
        Err(err) => return report::configuration_error(&err),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        // Nothing was sent and no response came: the call failed as a network failure does.
        Err(e) => {
            return report::no_response("other", &format!("cannot start the async runtime: {e}"))
        }
    };
    let kind = api
        .endpoint(&args.endpoint)
        .map(|e| match e.definition() {
            EndpointDef::Http(_) => Kind::Http,
            EndpointDef::Stream(_) => Kind::Stream,
            EndpointDef::Channel(_) => Kind::Channel,
        })
        .unwrap_or(Kind::Http);
    let max = args.max_events;
    runtime.block_on(async move {
        match kind {
            Kind::Http => call(api, &args.endpoint, variables, args.raw).await,
            Kind::Stream => stream(api, &args.endpoint, variables, max).await,
            Kind::Channel => channel(api, &args.endpoint, variables, max).await,
        }
    })
}

/// What the endpoint called is.
#[derive(Clone, Copy)]
enum Kind {
    Http,
    Stream,
    Channel,
}

/// Prints a stream's events' data, one JSON line each, until it ends or `max` came.
async fn stream(api: ApiDef, path: &str, variables: Value, max: Option<u64>) -> ExitCode {
    use futures_util::StreamExt;
    let client = match Client::new(api) {
        Ok(client) => client,
        Err(err) => return failed(&err),
    };
    let mut events = match client.stream(path, variables, None).await {
        Ok(events) => events,
        Err(err) => return failed(&err),
    };
    let mut seen = 0u64;
    while max.is_none_or(|max| seen < max) {
        match events.next().await {
            Some(Ok(event)) => {
                report::stdout_json(&event.data);
                seen += 1;
            }
            Some(Err(err)) => return failed(&err),
            None => break,
        }
    }
    report::OK
}

/// Prints a channel's messages, one JSON line each, and sends each line of stdin as a message,
/// until the server closes it for good or `max` messages came.
async fn channel(api: ApiDef, path: &str, variables: Value, max: Option<u64>) -> ExitCode {
    use futures_util::StreamExt;
    let client = match Client::new(api) {
        Ok(client) => client,
        Err(err) => return failed(&err),
    };
    let mut connection = match client.channel(path, variables, None).await {
        Ok(connection) => connection,
        Err(err) => return failed(&err),
    };
    // Lines of stdin, read on a thread of their own (stdin blocks).
    let (lines, mut input) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut reading = true;
    let mut seen = 0u64;
    while max.is_none_or(|max| seen < max) {
        tokio::select! {
            line = input.recv(), if reading => match line {
                None => reading = false,
                Some(line) if line.trim().is_empty() => {}
                Some(line) => {
                    let message = match parse_variables(&line, "a line of stdin") {
                        Ok(message) => message,
                        Err(err) => return report::configuration_error(&err),
                    };
                    if let Err(err) = connection.send(message) {
                        let err = ConfigurationError::new(
                            ErrorCode::InvalidOption,
                            format!("cannot send the message: {err}"),
                        );
                        return report::configuration_error(&err);
                    }
                }
            },
            message = connection.next() => match message {
                Some(Ok(message)) => {
                    report::stdout_json(&message);
                    seen += 1;
                }
                Some(Err(err)) => return failed(&err),
                None => break,
            },
        }
    }
    report::OK
}

/// Steps 1 to 3: the source's definition and the variables, or why there are none.
fn prepare(args: &CallArgs) -> Result<(ApiDef, Value), ConfigurationError> {
    let config = Config::from_path(&args.config)?;
    let api = source(config, &args.source, &args.config)?;
    check_endpoint(&api, &args.source, &args.endpoint)?;
    let variables = match args.variables.as_deref() {
        None => Value::Null,
        Some("-") => parse_variables(&read_stdin()?, "stdin")?,
        Some(text) => parse_variables(text, "the VARIABLES_JSON argument")?,
    };
    Ok((api, variables))
}

/// The source called `name`, taken out of the config.
pub(crate) fn source(
    config: Config,
    name: &str,
    file: &std::path::Path,
) -> Result<ApiDef, ConfigurationError> {
    let mut sources = config.into_sources();
    if let Some(api) = sources.remove(name) {
        return Ok(api);
    }
    let names: Vec<&str> = sources.keys().map(String::as_str).collect();
    let known = match courier_core::suggest::closest(name, names.iter().copied()) {
        _ if names.is_empty() => "it has no sources".to_owned(),
        Some(close) => format!("did you mean `{close}`? Its sources: {}", names.join(", ")),
        None => format!("its sources: {}", names.join(", ")),
    };
    Err(ConfigurationError::new(
        ErrorCode::UnknownSource,
        format!("`{}` has no source `{name}`; {known}", file.display()),
    ))
}

/// Refuses an unknown endpoint.
fn check_endpoint(api: &ApiDef, source: &str, path: &str) -> Result<(), ConfigurationError> {
    if api.endpoint(path).is_some() {
        return Ok(());
    }
    let paths: Vec<&str> = api.endpoints().iter().map(|e| e.path()).collect();
    let known = match courier_core::suggest::closest(path, paths.iter().copied()) {
        _ if paths.is_empty() => "it has no endpoints".to_owned(),
        Some(close) => format!(
            "did you mean `{close}`? Its endpoints: {}",
            paths.join(", ")
        ),
        None => format!("its endpoints: {}", paths.join(", ")),
    };
    Err(ConfigurationError::new(
        ErrorCode::UnknownEndpoint,
        format!("the source `{source}` has no endpoint `{path}`; {known}"),
    )
    .at(path))
}

fn read_stdin() -> Result<String, ConfigurationError> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| {
        ConfigurationError::new(
            ErrorCode::InvalidVariables,
            format!("cannot read the variables from stdin: {e}"),
        )
    })?;
    Ok(text)
}

/// One JSON value; `from` says where it came from, for the message.
fn parse_variables(text: &str, from: &str) -> Result<Value, ConfigurationError> {
    serde_json::from_str(text).map_err(|e| {
        ConfigurationError::new(
            ErrorCode::InvalidVariables,
            format!("the variables from {from} are not valid JSON: {e}"),
        )
    })
}

/// The `--raw` output; the field order is the documented one.
#[derive(Serialize)]
struct RawResponse<'a> {
    status: u16,
    headers: Map<String, Value>,
    data: &'a Value,
}

/// Step 4: the call, and what it printed.
async fn call(api: ApiDef, path: &str, variables: Value, raw: bool) -> ExitCode {
    let client = match Client::new(api) {
        Ok(client) => client,
        Err(err) => return failed(&err),
    };
    match client.call(path, variables).await {
        Ok(response) => {
            print_response(&response, raw);
            report::OK
        }
        Err(err) => failed(&err),
    }
}

fn print_response(response: &HttpResponse<Value>, raw: bool) {
    if raw {
        report::stdout_json(&RawResponse {
            status: response.status.as_u16(),
            headers: report::headers(&response.headers),
            data: &response.data,
        });
    } else {
        report::stdout_json(&response.data);
    }
}

/// Reports a failed call by what went wrong.
fn failed(err: &Error) -> ExitCode {
    if let Some(http) = err.http_error() {
        return report::http_error(http);
    }
    if err.is_decode() {
        return report::decode_error(err.status_code(), &err.to_string());
    }
    if err.is_configuration() {
        return report::configuration_error(&configuration(err));
    }
    let kind = if err.is_timeout() {
        "timeout"
    } else if err.is_cancelled() {
        "cancelled"
    } else if err.is_closed() {
        "closed"
    } else if err.is_protocol() {
        "protocol"
    } else {
        err.network().map_or("other", |kind| kind.as_str())
    };
    report::no_response(kind, &err.to_string())
}

/// The client's configuration error; when it carries none (the request or a transport could
/// not be built: a missing path parameter, a value no path can hold, a bad certificate), one
/// made from its cause, so every configuration failure has a code.
fn configuration(err: &Error) -> ConfigurationError {
    if let Some(e) = err.configuration() {
        return e.clone();
    }
    let cause = std::error::Error::source(err);
    let transport = cause.is_some_and(|c| c.downcast_ref::<TransportError>().is_some());
    let (code, what) = if transport {
        (
            ErrorCode::SourceTransportInvalid,
            "cannot build the transport",
        )
    } else {
        (ErrorCode::InvalidVariables, "cannot build the request")
    };
    let message = match cause {
        Some(cause) => format!("{what}: {cause}"),
        None => what.to_owned(),
    };
    let error = ConfigurationError::new(code, message);
    match err.endpoint() {
        Some(endpoint) => error.at(endpoint),
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use super::{check_endpoint, parse_variables};
    use courier_core::config::Config;
    use courier_core::ErrorCode;
    use serde_json::json;

    const FILE: &str = r#"
        [sources.demo]
        base_url = "http://127.0.0.1:9"
        [sources.demo.groups.users.endpoints.get]
        get = "/users/:id"
        [sources.demo.groups.users.endpoints.events]
        stream = "/events"
        [sources.demo.groups.users.endpoints.room]
        channel = "/rooms/:id"
    "#;

    #[test]
    fn unknown_endpoints_are_refused_by_name() {
        let config = Config::from_toml_str(FILE).unwrap();
        let api = config.source("demo").unwrap();
        assert!(check_endpoint(api, "demo", "users.get").is_ok());
        assert!(check_endpoint(api, "demo", "users.room").is_ok());
        let err = check_endpoint(api, "demo", "users").unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnknownEndpoint);
        // A group's path is the start of its endpoints': the nearest is suggested.
        assert!(
            err.message().ends_with(
                "did you mean `users.get`? Its endpoints: users.events, users.get, users.room"
            ),
            "{err}"
        );
        let err = check_endpoint(api, "demo", "orders.list").unwrap_err();
        assert!(
            err.message()
                .ends_with("; its endpoints: users.events, users.get, users.room"),
            "{err}"
        );
    }

    #[test]
    fn variables_are_one_json_value() {
        assert_eq!(parse_variables(" 7 ", "stdin").unwrap(), json!(7));
        let err = parse_variables("{} {}", "stdin").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidVariables);
        assert!(err.message().contains("trailing characters"), "{err}");
    }
}
