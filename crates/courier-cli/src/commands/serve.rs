//! `courier serve --config FILE --listen ADDR [--body-limit BYTES] [--header-read-timeout-ms MS]
//! [--body-read-timeout-ms MS] [--rate-limit N [--rate-burst N]] [--static DIR] [--package PATH]
//! [--grace-ms MS] [--threads N]`:
//! the proxy route for every source in the file, at the paths of its `[proxy]` table, until
//! Ctrl-C or SIGTERM; with `--static` or the file's `[static] dir`, the app's static front end
//! at every other path, so the page and the proxy share one origin; and with `--package` or the
//! file's `[static] package`, the browser package's modules, from the binary, under that path
//! ([`Proxy::browser_package`]), so a page needs no npm step.
//!
//! The limits come from the flags, else from the `[proxy]` table (`body_limit`,
//! `multipart_limit`, `header_read_timeout_ms`, `body_read_timeout_ms`, `rate_limit`,
//! `rate_burst`), else the proxy's defaults: JSON bodies up to 1 MiB and uploads up to 32 MiB,
//! arriving within 60 s, request heads within 30 s (a connection slower than that, or idle that
//! long between requests, is closed), and no rate limit ([`Proxy::rate_limit`]).
//!
//! With a `[bus]` table, the rooms it serves share their topics with every instance connected to
//! that Redis (`courier_redis::RedisBus`): it connects before it binds, and a Redis it cannot
//! reach is a configuration error (exit 2, `CONFIG_IO` at `bus.redis`); later outages are
//! weathered (see the bus's docs). With `history`, each room's topic keeps that many messages
//! (none older than `history_age_ms`), from which a member that comes back with its position
//! recovers what it missed: in Redis with `redis`, else in this process
//! ([`courier_live::LocalBus::with_history`]).
//!
//! Connections are served on `--threads` threads (one per CPU by default), each a
//! single-threaded runtime that serves the connections it is handed to their end, as nginx's
//! worker processes do ([`Proxy::worker_threads`]).
//!
//! Once the socket is bound it prints `listening on http://ADDR` (the bound address, so
//! `--listen 127.0.0.1:0` tells the port it got) on stdout. On Ctrl-C or SIGTERM it stops
//! accepting, cuts the open streams short and closes the open sockets with 1001 (their clients
//! reconnect, elsewhere: see [`courier_server::Shutdown`]), lets the calls in flight finish for
//! up to `--grace-ms` (10 s by default; what is still running then is cut off), and exits 0. A
//! file that does not load, a source whose client cannot be built, and an address that cannot
//! be bound are configuration errors (exit 2).
//!
//! It logs to stderr (`tracing`'s text format) at the level `COURIER_LOG` names (`error`,
//! `warn`, `info`, `debug`, `trace`; `warn` by default): at `warn` and above, each answer the
//! proxy gave without the upstream's response (502, 504: the endpoint, the upstream's address
//! and the cause) and each server error an upstream answered.

use crate::report;
use clap::Args;
use courier_core::config::Config;
use courier_core::{ConfigurationError, ErrorCode};
use courier_live::{History, Hub, LocalBus};
use courier_redis::RedisBus;
use courier_server::{Proxy, RateLimit};
use std::net::SocketAddr;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `courier serve`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub(crate) config: PathBuf,

    /// The address to listen on, e.g. `127.0.0.1:8080` (port 0: any free port).
    #[arg(
        long,
        short = 'l',
        value_name = "ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub(crate) listen: SocketAddr,

    /// The largest JSON request body a call may carry, in bytes; a larger one is refused with
    /// 413. Default: the file's `body_limit`, else 1 MiB.
    #[arg(long, value_name = "BYTES")]
    pub(crate) body_limit: Option<u64>,

    /// The largest multipart (upload) request body a call may carry, in bytes; a larger one is
    /// refused with 413. Default: the file's `multipart_limit`, else 32 MiB.
    #[arg(long, value_name = "BYTES")]
    pub(crate) multipart_limit: Option<u64>,

    /// How long a connection may take to send a request's head, in milliseconds; a slower or
    /// idle connection is closed. Default: the file's `header_read_timeout_ms`, else 30 000.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) header_read_timeout_ms: Option<u64>,

    /// How long a call's body may take to arrive, whole, in milliseconds; a slower one is
    /// refused with 408. Default: the file's `body_read_timeout_ms`, else 60 000.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) body_read_timeout_ms: Option<u64>,

    /// At most this many connections open at once; at the bound a new connection takes the
    /// place of the oldest idle one. Default: the file's `max_connections`, else half of what
    /// the process's file-descriptor limit leaves after 64.
    #[arg(long, value_name = "N")]
    pub(crate) max_connections: Option<NonZeroUsize>,

    /// At most this many connections open at once from one client address. Default: the
    /// file's `max_connections_per_client`, else no bound per address.
    #[arg(long, value_name = "N")]
    pub(crate) max_connections_per_client: Option<NonZeroUsize>,
    /// At most this many requests a second — calls, stream openings and channel handshakes —
    /// per session (one the app signed) or client address; one over it is refused with 429.
    /// Default: the file's `rate_limit`, else no limit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) rate_limit: Option<u32>,

    /// How many requests a session or client address may make at once after a quiet spell,
    /// under the rate limit. Default: the file's `rate_burst`, else the rate.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) rate_burst: Option<u32>,

    /// Serve metrics in Prometheus's text format at `http://ADDR/metrics`: each request's
    /// duration at the proxy's call path by method, route, status, error and endpoint
    /// (`http.server.request.duration`), each upstream call's by endpoint, method, status and
    /// error (`http.client.request.duration`), the proxy's refusals by code, its open streams
    /// and channels. Default: the file's `[metrics] listen`, else none.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<SocketAddr>,

    /// Serve the app's static front end from this folder, beside the proxy on one origin.
    /// Default: the file's `[static] dir`, else none.
    #[arg(long = "static", value_name = "DIR")]
    pub(crate) static_dir: Option<PathBuf>,

    /// Serve the browser package's ES modules (embedded in this binary) under this path, e.g.
    /// `/courier`: a page's import map names `/courier/index.js`. Default: the file's
    /// `[static] package`, else none.
    #[arg(long, value_name = "PATH")]
    pub(crate) package: Option<String>,

    /// After Ctrl-C or SIGTERM, how long the calls in flight may take to finish, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub(crate) grace_ms: u64,

    /// How many threads serve connections, each a single-threaded runtime serving the
    /// connections it is handed to their end. Default: one per CPU.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<NonZeroUsize>,
}

/// Serves until a shutdown signal.
pub(crate) fn run(args: &ServeArgs) -> ExitCode {
    log_to_stderr();
    let config = match Config::from_path(&args.config) {
        Ok(config) => config,
        Err(err) => return report::configuration_error(&err),
    };
    let paths = config.proxy().clone();
    let config_bus = config.bus().cloned();
    let metrics = args.metrics.or(config.metrics_listen());
    let limits = config.proxy_limits().clone();
    let mut proxy = Proxy::new().http_path(paths.http).sse_path(paths.sse);
    if let Some(ws) = paths.ws {
        proxy = proxy.ws_path(ws);
    }
    if let Some(bytes) = args.body_limit.or(limits.body_limit) {
        proxy = proxy.body_limit(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    if let Some(bytes) = args.multipart_limit.or(limits.multipart_limit) {
        proxy = proxy.multipart_limit(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    let millis = |flag: Option<u64>| flag.map(Duration::from_millis);
    if let Some(timeout) = millis(args.header_read_timeout_ms).or(limits.header_read_timeout) {
        proxy = proxy.header_read_timeout(timeout);
    }
    if let Some(timeout) = millis(args.body_read_timeout_ms).or(limits.body_read_timeout) {
        proxy = proxy.body_read_timeout(timeout);
    }
    if let Some(connections) = args.max_connections.or(limits.max_connections) {
        proxy = proxy.max_connections(connections.get());
    }
    if let Some(connections) = args
        .max_connections_per_client
        .or(limits.max_connections_per_client)
    {
        proxy = proxy.max_connections_per_client(connections.get());
    }
    let burst = args.rate_burst.or(limits.rate_burst.map(NonZeroU32::get));
    match (
        args.rate_limit.or(limits.rate_limit.map(NonZeroU32::get)),
        burst,
    ) {
        (Some(rate), burst) => {
            proxy = proxy.rate_limit(RateLimit::per_second(rate).burst(burst.unwrap_or(rate)));
        }
        (None, Some(_)) => {
            return report::configuration_error(&ConfigurationError::new(
                ErrorCode::ConfigInvalid,
                "`--rate-burst` is the burst of a rate limit: give `--rate-limit` or the file's \
                 `[proxy] rate_limit` too",
            ));
        }
        (None, None) => {}
    }
    if let Some(dir) = args.static_dir.as_deref().or(config.static_dir()) {
        if !dir.is_dir() {
            return report::configuration_error(
                &ConfigurationError::new(
                    ErrorCode::ConfigInvalid,
                    format!(
                        "the static front end's folder `{}` is not a directory",
                        dir.display()
                    ),
                )
                .at("static.dir"),
            );
        }
        proxy = proxy.static_dir(dir);
    }
    if let Some(path) = args.package.as_deref().or(config.browser_package()) {
        proxy = proxy.browser_package(path);
        // No source is added yet, so a router that cannot be built is the package's path (the
        // flag's: the file's was checked when it loaded), refused by the proxy's own rule.
        if let Err(e) = proxy.clone().into_router() {
            return report::configuration_error(
                &ConfigurationError::new(ErrorCode::ConfigInvalid, e.to_string())
                    .at("static.package"),
            );
        }
    }
    for (name, api) in config.into_sources() {
        proxy = proxy.source(name, api);
    }
    let stop = proxy.shutdown_handle();
    // A source whose client cannot be built is a configuration error, found before binding.
    if let Err(e) = proxy.clone().into_router() {
        return report::configuration_error(&ConfigurationError::new(
            ErrorCode::SourceTransportInvalid,
            e.to_string(),
        ));
    }
    let threads = args
        .threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    proxy = proxy.worker_threads(threads);
    // This runtime accepts, and runs the bus and the signals; the connections are served on the
    // proxy's worker threads.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return report::configuration_error(&ConfigurationError::new(
                ErrorCode::ConfigIo,
                format!("cannot start the async runtime: {e}"),
            ))
        }
    };
    let bus = config_bus;
    runtime.block_on(async move {
        // The channels and streams served here share their topics with every instance on the
        // file's bus.
        if let Some(bus) = &bus {
            match hub_of(bus).await {
                Ok(hub) => proxy = proxy.hub(hub),
                Err(e) => {
                    return report::configuration_error(
                        &ConfigurationError::new(ErrorCode::ConfigIo, e.to_string())
                            .at("bus.redis"),
                    )
                }
            }
        }
        let mut metrics_at = None;
        if let Some(addr) = metrics {
            match serve_metrics(addr).await {
                Ok(bound) => {
                    proxy = proxy.metrics(true);
                    metrics_at = Some(bound);
                }
                Err(e) => {
                    return report::configuration_error(
                        &ConfigurationError::new(
                            ErrorCode::ConfigIo,
                            format!("cannot serve the metrics on {addr}: {e}"),
                        )
                        .at("metrics.listen"),
                    )
                }
            }
        }
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(listener) => listener,
            Err(e) => {
                return report::configuration_error(&ConfigurationError::new(
                    ErrorCode::ConfigIo,
                    format!("cannot listen on {}: {e}", args.listen),
                ))
            }
        };
        let bound = listener.local_addr().unwrap_or(args.listen);
        report::stdout_line(&format!("listening on http://{bound}"));
        if let Some(at) = metrics_at {
            report::stdout_line(&format!("metrics on http://{at}/metrics"));
        }
        let served = proxy.serve(listener);
        tokio::pin!(served);
        let served = tokio::select! {
            served = &mut served => served,
            () = shutdown() => {
                stop.begin();
                let grace = Duration::from_millis(args.grace_ms);
                let drained = async {
                    let served = (&mut served).await;
                    stop.closed().await;
                    served
                };
                // Past the grace period, what is still running is cut off.
                tokio::time::timeout(grace, drained).await.unwrap_or(Ok(()))
            }
        };
        match served {
            Ok(()) => report::OK,
            Err(e) => report::no_response("other", &format!("the server stopped: {e}")),
        }
    })
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Logs to stderr at the level `COURIER_LOG` names, `warn` when unset or not a level.
fn log_to_stderr() {
    let level = std::env::var("COURIER_LOG")
        .ok()
        .and_then(|level| level.trim().parse().ok())
        .unwrap_or(tracing::Level::WARN);
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The hub the file's `[bus]` asks for: on its Redis when it names one, else this process's own,
/// keeping the history the table sets (it names `redis`, `history` or both).
async fn hub_of(bus: &courier_core::config::Bus) -> Result<Hub, courier_redis::RedisBusError> {
    let history = bus.history.map(|(count, age)| History::new(count, age));
    let Some(redis) = &bus.redis else {
        return Ok(Hub::new(
            history.map_or_else(LocalBus::new, LocalBus::with_history),
        ));
    };
    let mut builder = RedisBus::builder(redis.clone());
    if let Some(prefix) = &bus.prefix {
        builder = builder.prefix(prefix.clone());
    }
    if let Some(queue) = bus.queue {
        builder = builder.queue(queue);
    }
    if let Some(history) = history {
        builder = builder.history(history);
    }
    Ok(Hub::new(builder.connect().await?))
}

/// The buckets of the call durations, in seconds: OpenTelemetry's advice for
/// `http.client.request.duration` and `http.server.request.duration` alike.
const DURATION_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// Installs a Prometheus recorder as the process's and serves its text at `GET /metrics` on
/// `addr`, on this runtime; the address bound.
async fn serve_metrics(addr: SocketAddr) -> Result<SocketAddr, String> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    let client = Matcher::Full(courier_layers::metrics::CLIENT_REQUEST_DURATION.to_owned());
    let server = Matcher::Full(courier_server::SERVER_REQUEST_DURATION.to_owned());
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(client, &DURATION_BUCKETS)
        .and_then(|builder| builder.set_buckets_for_metric(server, &DURATION_BUCKETS))
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| e.to_string())?;
    let bound = listener.local_addr().unwrap_or(addr);
    let text = move || {
        let handle = handle.clone();
        async move {
            let kind = "text/plain; version=0.0.4; charset=utf-8";
            ([(http::header::CONTENT_TYPE, kind)], handle.render())
        }
    };
    let app = axum::Router::new().route("/metrics", axum::routing::get(text));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the metrics' address stopped serving");
        }
    });
    Ok(bound)
}
