//! What this measures: one typed read, `GET /users/:id` answered with a small JSON user, sent
//! through three HTTP/1.1 clients against the same local axum backend, one call at a time and 64
//! calls in flight. The 64 calls in flight read 64 different users, so no client can answer two
//! of them with one request; `caller-same` then shows courier's `Caller` with all 64 reading the
//! same user, which its coalescing layer sends upstream once; `caller-cached` shows a read whose
//! endpoint declares `.cache()`, answered from the client's memory after its first call (a
//! cache's figure, not a comparison with the other clients):
//!
//! - `caller`: courier's [`Caller`], `client.users().get(UserId(id)).await` — building the request
//!   from the definition, the default transport (hyper's `client::conn` in courier's own
//!   connection pool, plain `http://` here), and decoding the body into `User`;
//! - `caller-service`: the same call through the endpoint's `tower::Service`,
//!   `get.clone().oneshot(UserId(id)).await` with `get = caller.users().services().get()?` — the
//!   view's call behind a service's readiness, one `Arc` clone and a boxed future of its own;
//! - `hyper-util`: a bare `hyper_util::client::legacy::Client` over `HttpConnector`, the request
//!   built by hand and the body collected and decoded with `serde_json::from_slice`: the floor
//!   courier's transport is built on;
//! - `reqwest`: `client.get(url).send().await?.error_for_status()?.json::<User>()`.
//!
//! The same three clients are measured again over HTTPS (`get_user_https`): the backend also
//! serves the app over TLS (rustls with ring, a certificate of a CA made for the run, HTTP/1.1
//! only by ALPN), and each client trusts that CA alone — courier's transport with
//! `Transport::root_cert`, hyper-util with hyper-rustls's `HttpsConnector`, reqwest with the
//! same rustls configuration (`tls_backend_preconfigured`, which the HTTP rows' reqwest client
//! carries too, as reqwest with its default TLS does).
//!
//! Every call formats its URL (or, for `caller`, encodes its variables) and decodes the body, so
//! the three do the same work. Throughput is in calls (`Throughput::Elements`): one iteration is
//! one call at concurrency 1, and 64 calls joined with `join_all` at concurrency 64.
//!
//! Runtimes: the backend runs on its own multi-thread tokio runtime with one worker
//! (`BACKEND_WORKERS`); the clients run on a current-thread runtime driven by the benchmark's
//! thread, so a client's whole cost (its calls and hyper's connection tasks) lands on one thread,
//! the same for all three. On the 2-vCPU machine this is written for, that is one busy thread per
//! core; two backend workers made three busy threads on two cores, and measured lower and noisier
//! throughput at 64 in flight. On Linux each of the two threads is pinned to a core of its own
//! (the clients' to the first, the backend's to the second), so neither migrates or takes the
//! other's core in the middle of a measurement; elsewhere, and on a single core, they are left to
//! the scheduler.
//!
//! Pools, the same for all three clients: HTTP/1.1 only, keep-alive with no limit on idle
//! connections per host (`pool_max_idle_per_host(usize::MAX)`), idle connections closed after
//! 90 s, `TCP_NODELAY` on, no proxy. Before each measurement every client makes
//! `WARM_ROUNDS` rounds of 64 concurrent calls, so its pool holds at least 64 open connections.
//!
//! Only 127.0.0.1 is ever contacted; the benchmark stops the backend when it is done.
//!
//! Run: `cargo bench --bench client`
//!
//! Instructions per call: `COURIER_BENCH_CALLS="caller 1 2000"` (a client — `caller`,
//! `caller-bounded` (`caller` with the source's `max_in_flight` set far above what is sent, for
//! the bound's cost on a call it lets through), `caller-service`, `caller-cached`, `hyper-util`
//! or `reqwest`, or `caller-https`, `hyper-util-https` or `reqwest-https` — a concurrency and a
//! number of iterations) makes the bench binary warm that client up, run that many iterations
//! untimed, and exit, for `valgrind --tool=callgrind --separate-threads=yes`: the client's thread
//! is the main one, and the difference between two runs of different lengths, divided by the
//! calls between them, is the cost of one call with set-up and warm-up cancelled out
//! (BENCHMARKS.md).

use axum::extract::Path;
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use courier::transport::Transport;
use courier::typed::{endpoint, EndpointService, Group, Http};
use courier::{ApiDef, Caller, Client};
use courier_test_support::tls::{client_config, start_counting, tls_acceptor, Pki, TlsOptions};
use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use futures_util::future::join_all;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use tower::ServiceExt;

/// Calls in flight per iteration.
const CONCURRENCY: [usize; 2] = [1, 64];
/// The backend runtime's worker threads.
const BACKEND_WORKERS: usize = 1;
/// Rounds of 64 concurrent calls each client makes before it is measured.
const WARM_ROUNDS: usize = 20;
/// Idle pooled connections are closed after this long (hyper-util's and reqwest's default).
const POOL_IDLE: Duration = Duration::from_secs(90);

// ---- the API -------------------------------------------------------------------------------------

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
    email: String,
}

/// Fills `/users/:id` on its own.
#[derive(Serialize)]
struct UserId(u64);

#[derive(courier::Group)]
struct Users {
    get: Http<User, UserId>,
    /// The same read with `.cache()`: after its first call, answered from memory.
    cached: Http<User, UserId>,
}

#[derive(courier::Api)]
struct Bench {
    users: Group<Users>,
}

fn caller(base_url: &str) -> Caller<Bench> {
    caller_with(base_url, Transport::new(), None)
}

/// `caller` with a bound on the source's calls in flight (`max_in_flight`) far above what the
/// benchmark sends, for the bound's cost on a call it lets through.
fn caller_bounded(base_url: &str) -> Caller<Bench> {
    caller_with(base_url, Transport::new(), Some(1024))
}

/// `caller` whose transport trusts `pki`'s CA too, for the HTTPS rows.
fn caller_https(backend: &Backend) -> Caller<Bench> {
    let transport = Transport::new().root_cert(backend.pki.ca_pem.clone());
    caller_with(&backend.https_base(), transport, None)
}

fn caller_with(
    base_url: &str,
    transport: Transport,
    max_in_flight: Option<usize>,
) -> Caller<Bench> {
    let users = Group::new(Users {
        get: endpoint().get("/:id"),
        cached: Http::from_def(
            courier::HttpEndpoint::get("/:id")
                .cache(courier::options::CacheOptions::new().revalidate(3600)),
        ),
    })
    .prefix("/users");
    let mut api = ApiDef::builder().base_url(base_url);
    if let Some(calls) = max_in_flight {
        api = api.max_in_flight(calls);
    }
    let api = api
        .build_typed(Bench { users })
        .expect("a valid definition");
    // `Transport::new()`'s defaults already match the pools above: no idle limit per host,
    // 90 s idle timeout, TCP_NODELAY, HTTP/1.1 for `http://` (and, by ALPN, from this backend
    // over `https://`).
    Caller::with_transport(api, transport).expect("the transport builds")
}

/// `users.get` as a `tower::Service<UserId, Response = User>`.
fn get_service(caller: &Caller<Bench>) -> EndpointService<Client, Http<User, UserId>> {
    caller
        .users()
        .services()
        .get()
        .expect("users.get is in the tree")
}

/// One typed call.
async fn caller_get(caller: &Caller<Bench>, id: u64) -> User {
    caller.users().get(UserId(id)).await.expect("caller call")
}

/// One call through the service: a clone of it, readied and called.
async fn service_get(get: &EndpointService<Client, Http<User, UserId>>, id: u64) -> User {
    get.clone().oneshot(UserId(id)).await.expect("service call")
}

// ---- the backend ---------------------------------------------------------------------------------

/// The backend's runtime, its address, and the switch that stops its server.
struct Backend {
    runtime: Runtime,
    addr: SocketAddr,
    /// Where the same app is served over TLS.
    tls_addr: SocketAddr,
    /// The CA that signed the TLS listener's certificate.
    pki: Pki,
    stop: oneshot::Sender<()>,
}

/// Pins the calling thread to `cpu` (Linux, with more than one core); a no-op elsewhere.
fn pin_to(cpu: usize) {
    #[cfg(target_os = "linux")]
    {
        if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
            return;
        }
        // SAFETY: `set` is a zeroed `cpu_set_t` that CPU_SET fills in; sched_setaffinity reads
        // `size_of` bytes of it for the calling thread (pid 0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

fn backend() -> Backend {
    async fn user(Path(id): Path<u64>) -> Json<User> {
        Json(User {
            id,
            name: format!("user {id}"),
            email: format!("user{id}@example.com"),
        })
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(BACKEND_WORKERS)
        .thread_name("backend")
        .on_thread_start(|| pin_to(1))
        .enable_all()
        .build()
        .expect("the backend runtime");
    let (stop, stopped) = oneshot::channel::<()>();
    let pki = Pki::new();
    let acceptor = tls_acceptor(&pki, TlsOptions::http11_only());
    let app = Router::new().route("/users/{id}", get(user));
    let (addr, tls_addr) = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("a local address");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let plain = axum::serve(listener, app.clone()).with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        tokio::spawn(async move { plain.await });
        // courier-test-support's counting listener (the counts unread); ends with the runtime.
        let tls = start_counting(move |tcp| {
            let _ = tcp.set_nodelay(true);
            let (acceptor, app) = (acceptor.clone(), app.clone());
            async move {
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request| app.clone().oneshot(request));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        })
        .await;
        (addr, tls.addr)
    });
    Backend {
        runtime,
        addr,
        tls_addr,
        pki,
        stop,
    }
}

impl Backend {
    /// `http://` and the plain listener's address.
    fn http_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `https://` and the TLS listener's address.
    fn https_base(&self) -> String {
        format!("https://{}", self.tls_addr)
    }

    /// A rustls client configuration that trusts the backend's CA, its ALPN left to the client
    /// (hyper-rustls refuses one set before it).
    fn tls(&self) -> rustls::ClientConfig {
        client_config(&self.pki, Vec::new())
    }

    /// Stops the server and its runtime; connections still open are dropped after a second.
    fn shut_down(self) {
        let _ = self.stop.send(());
        self.runtime.shutdown_timeout(Duration::from_secs(1));
    }
}

// ---- the other two clients -----------------------------------------------------------------------

type HyperClient<C> = hyper_util::client::legacy::Client<C, Empty<Bytes>>;

fn http_connector() -> HttpConnector {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http
}

fn hyper_client<C: Connect + Clone>(connector: C) -> HyperClient<C> {
    hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(POOL_IDLE)
        .pool_max_idle_per_host(usize::MAX)
        .build(connector)
}

/// hyper-util over hyper-rustls, trusting the backend's CA.
fn hyper_https_client(backend: &Backend) -> HyperClient<HttpsConnector<HttpConnector>> {
    let mut http = http_connector();
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(backend.tls())
        .https_only()
        .enable_http1()
        .wrap_connector(http);
    hyper_client(https)
}

async fn hyper_get<C>(client: &HyperClient<C>, base: &str, id: u64) -> User
where
    C: Connect + Clone + Send + Sync + 'static,
{
    let uri: http::Uri = format!("{base}/users/{id}").parse().expect("a valid URI");
    let request = http::Request::get(uri)
        .body(Empty::new())
        .expect("a valid request");
    let response = client.request(request).await.expect("hyper-util call");
    assert!(response.status().is_success(), "{}", response.status());
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes();
    serde_json::from_slice(&bytes).expect("a user")
}

/// reqwest with rustls trusting the backend's CA, for `http://` and `https://` alike.
fn reqwest_client(backend: &Backend) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .tcp_nodelay(true)
        .pool_idle_timeout(POOL_IDLE)
        .pool_max_idle_per_host(usize::MAX)
        .tls_backend_preconfigured(backend.tls())
        .build()
        .expect("the reqwest client")
}

async fn reqwest_get(client: &reqwest::Client, base: &str, id: u64) -> User {
    client
        .get(format!("{base}/users/{id}"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("reqwest call")
        .json()
        .await
        .expect("a user")
}

// ---- measuring -----------------------------------------------------------------------------------

/// Checks `call`'s answer and warms its pool.
fn warm<F, Fut>(clients: &Runtime, name: &str, call: F)
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = User>,
{
    clients.block_on(async {
        let expected = User {
            id: 7,
            name: "user 7".into(),
            email: "user7@example.com".into(),
        };
        assert_eq!(call(7).await, expected, "{name} decodes the user");
        for _ in 0..WARM_ROUNDS {
            join_all((1..=64).map(&call)).await;
        }
    });
}

/// `iters` iterations of `call` at `concurrency`: one call, or that many joined.
async fn iterate<F, Fut>(call: F, concurrency: usize, iters: u64)
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = User>,
{
    for _ in 0..iters {
        if concurrency == 1 {
            black_box(call(7).await);
        } else {
            black_box(join_all((1..=concurrency as u64).map(&call)).await);
        }
    }
}

/// Checks `call`'s answer and warms its pool, then measures it in `group` at `concurrency`.
fn measure<F, Fut>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    clients: &Runtime,
    name: &str,
    concurrency: usize,
    call: F,
) where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = User>,
{
    warm(clients, name, &call);
    group.bench_function(BenchmarkId::from_parameter(name), |b| {
        b.iter_custom(|iters| {
            clients.block_on(async {
                let start = Instant::now();
                iterate(&call, concurrency, iters).await;
                start.elapsed()
            })
        });
    });
}

/// `COURIER_BENCH_CALLS`'s run: `spec` is "CLIENT CONCURRENCY ITERATIONS".
fn count(spec: &str) {
    let parts: Vec<&str> = spec.split_whitespace().collect();
    let [name, concurrency, iters] = parts[..] else {
        panic!("COURIER_BENCH_CALLS is \"CLIENT CONCURRENCY ITERATIONS\", not {spec:?}");
    };
    let concurrency: usize = concurrency.parse().expect("a concurrency");
    let iters: u64 = iters.parse().expect("a number of iterations");
    pin_to(0);
    let backend = backend();
    let (http, https) = (backend.http_base(), backend.https_base());
    let clients = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the clients' runtime");
    match name {
        "caller" | "caller-bounded" | "caller-https" => {
            let caller = match name {
                "caller" => caller(&http),
                "caller-bounded" => caller_bounded(&http),
                _ => caller_https(&backend),
            };
            let call = |id| caller_get(&caller, id);
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        "caller-service" => {
            let get = get_service(&caller(&http));
            let call = |id| service_get(&get, id);
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        "caller-cached" => {
            let caller = caller(&http);
            let call = |id| {
                let caller = &caller;
                async move {
                    caller
                        .users()
                        .cached(UserId(id))
                        .await
                        .expect("caller call")
                }
            };
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        "hyper-util" => {
            let hyper = hyper_client(http_connector());
            let call = |id| hyper_get(&hyper, &http, id);
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        "hyper-util-https" => {
            let hyper = hyper_https_client(&backend);
            let call = |id| hyper_get(&hyper, &https, id);
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        "reqwest" | "reqwest-https" => {
            let reqwest = reqwest_client(&backend);
            let base = if name == "reqwest" { &http } else { &https };
            let call = |id| reqwest_get(&reqwest, base, id);
            warm(&clients, name, call);
            clients.block_on(iterate(call, concurrency, iters));
        }
        other => panic!(
            "no client {other:?}: caller, caller-bounded, caller-service, caller-cached, \
             hyper-util, reqwest, caller-https, hyper-util-https or reqwest-https"
        ),
    }
    drop(clients);
    backend.shut_down();
}

fn bench(c: &mut Criterion) {
    pin_to(0);
    let backend = backend();
    let (http, https) = (backend.http_base(), backend.https_base());
    let clients = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the clients' runtime");
    let caller = caller(&http);
    let get = get_service(&caller);
    let hyper = hyper_client(http_connector());
    let reqwest = reqwest_client(&backend);

    let caller_ref = &caller;
    for concurrency in CONCURRENCY {
        let mut group = c.benchmark_group(format!("get_user/c{concurrency}"));
        group.throughput(Throughput::Elements(concurrency as u64));
        measure(&mut group, &clients, "caller", concurrency, |id| {
            caller_get(&caller, id)
        });
        measure(&mut group, &clients, "caller-service", concurrency, |id| {
            service_get(&get, id)
        });
        measure(&mut group, &clients, "hyper-util", concurrency, |id| {
            hyper_get(&hyper, &http, id)
        });
        measure(&mut group, &clients, "reqwest", concurrency, |id| {
            reqwest_get(&reqwest, &http, id)
        });
        measure(
            &mut group,
            &clients,
            "caller-cached",
            concurrency,
            |id| async move {
                caller_ref
                    .users()
                    .cached(UserId(id))
                    .await
                    .expect("caller call")
            },
        );
        if concurrency > 1 {
            measure(&mut group, &clients, "caller-same", concurrency, |_| {
                caller_get(&caller, 7)
            });
        }
        group.finish();
    }

    // The same read over HTTPS.
    let caller_https = caller_https(&backend);
    let hyper_https = hyper_https_client(&backend);
    for concurrency in CONCURRENCY {
        let mut group = c.benchmark_group(format!("get_user_https/c{concurrency}"));
        group.throughput(Throughput::Elements(concurrency as u64));
        measure(&mut group, &clients, "caller", concurrency, |id| {
            caller_get(&caller_https, id)
        });
        measure(&mut group, &clients, "hyper-util", concurrency, |id| {
            hyper_get(&hyper_https, &https, id)
        });
        measure(&mut group, &clients, "reqwest", concurrency, |id| {
            reqwest_get(&reqwest, &https, id)
        });
        group.finish();
    }

    // Close the clients' pools, then stop the backend.
    drop((caller, get, hyper, reqwest, caller_https, hyper_https));
    drop(clients);
    backend.shut_down();
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(spec) = std::env::var("COURIER_BENCH_CALLS") {
        count(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
