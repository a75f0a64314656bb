//! What the proxy records of itself, against a real proxy on 127.0.0.1 under a capturing
//! recorder: the gauges of open streams and channels, up while one is open and down once it is
//! closed; and, with `Proxy::metrics(true)`, one `http.server.request.duration` per request at
//! the call route, both ways it is served (`Proxy::serve`, and the router's route), labelled
//! from a fixed set of values however many names, and whatever method, a client makes up.

use courier_core::{
    ApiDef, ChannelEndpoint, ChannelHandler, ChannelHandlers, GroupDef, HttpEndpoint, Peer,
    StreamEndpoint, StreamHandler,
};
use courier_server::{Proxy, SERVER_REQUEST_DURATION};
use courier_test_support::metrics::{label, Capture};
use futures_util::SinkExt;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::Message;

mod support;
use support::{read_answer, status_of};

const OPEN_STREAMS: &str = "courier.proxy.open_streams";
const OPEN_CHANNELS: &str = "courier.proxy.open_channels";

/// How many made-up endpoint names the hostile client sends.
const HOSTILE: usize = 20;

/// How the proxy is served: its call route ahead of the router, or through it.
#[derive(Clone, Copy, Debug)]
enum Way {
    /// [`Proxy::serve`]: the call route served ahead of the router.
    Serve,
    /// [`Proxy::serve_with`]: every path through the router.
    Router,
}

/// Serves `proxy` on 127.0.0.1 `way`, in a task of this runtime; where.
async fn served(proxy: Proxy, way: Way) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    match way {
        Way::Serve => tokio::spawn(proxy.serve(listener)),
        Way::Router => tokio::spawn(proxy.serve_with(listener, |router| router)),
    };
    addr
}

/// A request `method target` on a connection of its own; the status answered.
async fn status(addr: SocketAddr, method: &str, target: &str) -> u16 {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("{method} {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    status_of(&read_answer(&mut tcp).await.0)
}

/// `len` random letters and digits, others at each call.
fn random_name(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let state = RandomState::new();
    (0..len)
        .map(|i| {
            let pick = state.hash_one(i) % ALPHABET.len() as u64;
            char::from(ALPHABET[usize::try_from(pick).unwrap()])
        })
        .collect()
}

/// The source `demo` of `backend` (a `users_backend`): `users.get`, exposed.
fn users(backend: SocketAddr) -> ApiDef {
    ApiDef::builder()
        .base_url(format!("http://{backend}"))
        .group(
            "users",
            GroupDef::new()
                .expose(true)
                .endpoint("get", HttpEndpoint::get("/users/:id")),
        )
        .build()
        .unwrap()
}

/// A label set, as a map.
fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn each_call_route_request_is_one_duration_and_made_up_names_add_no_label_values() {
    for way in [Way::Serve, Way::Router] {
        let capture = Capture::default();
        capture.run(async {
            let backend = courier_test_support::users_backend().await;
            let proxy = Proxy::new().source("demo", users(backend)).metrics(true);
            let addr = served(proxy, way).await;
            for id in [1, 2] {
                let target = format!("/api/request?_s=demo&_g=users&_m=get&_v={id}");
                assert_eq!(status(addr, "GET", &target).await, 200, "{way:?}");
            }
            let unknown = "/api/request?_s=demo&_g=users&_m=nope";
            assert_eq!(status(addr, "GET", unknown).await, 404, "{way:?}");
            for _ in 0..HOSTILE {
                let target = format!("/api/request?_s=demo&_g=users&_m={}", random_name(1024));
                assert_eq!(status(addr, "GET", &target).await, 404, "{way:?}");
            }
            // A method of its own making, on a good read's address.
            let method = random_name(16).to_uppercase();
            let target = "/api/request?_s=demo&_g=users&_m=get&_v=1";
            assert_eq!(status(addr, &method, target).await, 405, "{way:?}");
        });
        let durations: Vec<_> = capture
            .recorded()
            .into_iter()
            .filter(|r| r.name == SERVER_REQUEST_DURATION)
            .collect();
        assert!(
            durations.iter().all(|r| (0.0..10.0).contains(&r.value)),
            "{way:?}: {durations:?}"
        );
        let mut counts = BTreeMap::new();
        for recorded in &durations {
            let set: BTreeMap<_, _> = recorded.labels.iter().cloned().collect();
            *counts.entry(set).or_insert(0) += 1;
        }
        let route = ("http.route", "/api/request");
        let expected = BTreeMap::from([
            (
                labels(&[
                    ("http.request.method", "GET"),
                    route,
                    ("http.response.status_code", "200"),
                    ("courier.endpoint", "users.get"),
                ]),
                2,
            ),
            (
                labels(&[
                    ("http.request.method", "GET"),
                    route,
                    ("http.response.status_code", "404"),
                    ("error.type", "ENDPOINT_NOT_IN_ROUTES"),
                    ("courier.endpoint", "_OTHER"),
                ]),
                1 + HOSTILE,
            ),
            (
                labels(&[
                    ("http.request.method", "_OTHER"),
                    route,
                    ("http.response.status_code", "405"),
                    ("error.type", "METHOD_NOT_ALLOWED"),
                    ("courier.endpoint", "_OTHER"),
                ]),
                1,
            ),
        ]);
        assert_eq!(counts, expected, "{way:?}");
        let endpoints: BTreeSet<_> = durations
            .iter()
            .filter_map(|r| label(&r.labels, "courier.endpoint"))
            .collect();
        assert_eq!(
            endpoints,
            BTreeSet::from(["users.get", "_OTHER"]),
            "{way:?}"
        );
    }
}

#[test]
fn without_metrics_the_call_route_times_nothing_and_refusals_are_still_counted() {
    let capture = Capture::default();
    capture.run(async {
        let backend = courier_test_support::users_backend().await;
        let addr = served(Proxy::new().source("demo", users(backend)), Way::Serve).await;
        let read = "/api/request?_s=demo&_g=users&_m=get&_v=1";
        assert_eq!(status(addr, "GET", read).await, 200);
        let unknown = "/api/request?_s=demo&_g=users&_m=nope";
        assert_eq!(status(addr, "GET", unknown).await, 404);
    });
    let recorded = capture.recorded();
    assert!(
        recorded.iter().all(|r| r.name != SERVER_REQUEST_DURATION),
        "{recorded:?}"
    );
    let refused: Vec<_> = recorded
        .iter()
        .filter(|r| r.name == "courier.proxy.refusals")
        .collect();
    assert_eq!(refused.len(), 1, "{recorded:?}");
    assert_eq!(
        label(&refused[0].labels, "code"),
        Some("ENDPOINT_NOT_IN_ROUTES")
    );
}

/// Waits, at most 10 s, for the gauge `name` to read `value`.
async fn gauge_reaches(capture: &Capture, name: &str, value: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = capture.gauge(name);
        if seen == Some(value) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} read {seen:?} for 10 s, not {value}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn the_open_streams_and_channels_gauges_count_what_is_open() {
    let capture = Capture::default();
    capture.run(async {
        let quiet = StreamHandler::new(|_| futures_util::stream::pending());
        let echo = ChannelHandlers::on_message(|peer: Arc<dyn Peer>, message: Value| async move {
            peer.send(message)
        });
        let nowhere = courier_test_support::tls::closed_port().await;
        let api = ApiDef::builder()
            .base_url(format!("http://{nowhere}"))
            .group(
                "live",
                GroupDef::new()
                    .expose(true)
                    .endpoint("quiet", StreamEndpoint::implement(quiet))
                    .endpoint(
                        "echo",
                        ChannelEndpoint::implement(ChannelHandler::Duplex(echo)),
                    ),
            )
            .build()
            .unwrap();
        // A keep-alive comment every 50 ms: a write that finds the stream's reader gone.
        let proxy = Proxy::new()
            .source("demo", api)
            .ws_path("/api/ws")
            .keep_alive(Duration::from_millis(50));
        let addr = served(proxy, Way::Serve).await;
        assert_eq!(capture.gauge(OPEN_STREAMS), None);
        assert_eq!(capture.gauge(OPEN_CHANNELS), None);

        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = "GET /api/sse?_s=demo&_g=live&_m=quiet HTTP/1.1\r\nhost: x\r\n\r\n";
        stream.write_all(request.as_bytes()).await.unwrap();
        gauge_reaches(&capture, OPEN_STREAMS, 1.0).await;

        let url = format!("ws://{addr}/api/ws?_s=demo&_g=live&_m=echo");
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut socket = tokio_tungstenite::client_async(url, tcp).await.unwrap().0;
        gauge_reaches(&capture, OPEN_CHANNELS, 1.0).await;
        socket.send(Message::text("\"hi\"")).await.unwrap();
        assert_eq!(support::next_json(&mut socket).await, "hi");
        assert_eq!(capture.gauge(OPEN_STREAMS), Some(1.0));

        drop(stream);
        gauge_reaches(&capture, OPEN_STREAMS, 0.0).await;
        socket.close(None).await.unwrap();
        gauge_reaches(&capture, OPEN_CHANNELS, 0.0).await;
    });
}
