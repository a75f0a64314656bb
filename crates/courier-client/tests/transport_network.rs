//! The transport over plain sockets on 127.0.0.1: the CONNECT proxy, error classification, the
//! connection pool and the transport cache.

mod transport_support;

use courier_client::{classify, NetworkErrorKind, Transport, TransportCache, TransportError};
use courier_core::{Body, Dispatcher, Fetch, TransportOptions};
use http::Response;
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use transport_support::{
    client_identity, closed_port, eventually, get, get_text, read_head, start_http, start_proxy,
    start_tls, Pki, TlsOptions,
};

#[tokio::test]
async fn http_through_a_connect_proxy() {
    let backend = start_http().await;
    let proxy = start_proxy().await;
    let transport = Transport::new().proxy(proxy.uri()).build().unwrap();

    let (response, body) = get_text(&transport, &backend.url("http", "/"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(body, "hello over HTTP/1.1");
    assert_eq!(
        proxy.seen(),
        vec![format!("CONNECT {} HTTP/1.1", backend.addr)]
    );
    assert_eq!(backend.accepted(), 1);
}

#[tokio::test]
async fn http2_only_uses_prior_knowledge_over_http() {
    let server = start_http().await;
    let transport = Transport::new().http2_only(true).build().unwrap();
    for _ in 0..3 {
        let (response, body) = get_text(&transport, &server.url("http", "/"))
            .await
            .unwrap();
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(body, "hello over HTTP/2.0");
    }
    assert_eq!(server.accepted(), 1, "the calls share one connection");
}

#[test]
fn a_call_outside_a_runtime_is_an_error() {
    let transport = Transport::new().build().unwrap();
    let request = http::Request::get("http://127.0.0.1:1/")
        .body(Body::empty())
        .unwrap();
    let call = tower::ServiceExt::oneshot(transport, request);
    let err = block_on_without_runtime(call).unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Other);
    assert!(err.to_string().contains("tokio runtime"), "{err}");
}

/// Polls a future to completion on this thread, with no runtime around it.
fn block_on_without_runtime<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[tokio::test]
async fn a_proxy_that_refuses_the_tunnel_is_a_connect_error() {
    let proxy = start_proxy().await;
    let transport = Transport::new().proxy(proxy.uri()).build().unwrap();
    // The test proxy tunnels only to 127.0.0.1 and answers 403 to anything else, without
    // connecting; no traffic leaves the machine.
    let err = get(&transport, "http://127.0.0.2:9/").await.unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Connect, "{err:?}");
    assert_eq!(
        proxy.seen(),
        vec!["CONNECT 127.0.0.2:9 HTTP/1.1".to_string()]
    );
}

#[test]
fn a_proxy_uri_must_be_http_host_port() {
    for bad in [
        "https://127.0.0.1:3128",
        "http://127.0.0.1",
        "http://u:p@127.0.0.1:3128",
    ] {
        let err = Transport::new()
            .proxy(bad.parse().unwrap())
            .build()
            .unwrap_err();
        assert!(
            matches!(err, TransportError::Proxy { .. }),
            "{bad}: {err:?}"
        );
        assert!(err.to_string().contains("is not http://host:port"), "{err}");
    }
}

#[tokio::test]
async fn connection_refused_is_connect() {
    let addr = closed_port().await;
    let transport = Transport::new().build().unwrap();
    let err = get(&transport, &format!("http://{addr}/"))
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Connect, "{err:?}");
}

#[tokio::test]
async fn an_unknown_host_is_dns() {
    // `.invalid` never resolves (RFC 6761) and the resolver answers it without a query.
    let transport = Transport::new().build().unwrap();
    let err = get(&transport, "http://nonexistent.invalid/")
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Dns, "{err:?}");
}

/// A server that accepts each connection and drops it at once, with a reset if `reset`.
async fn start_dropping(reset: bool) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            if reset {
                stream.set_zero_linger().unwrap();
            }
            drop(stream);
        }
    });
    addr
}

/// A plain drop sends FIN and hyper reports an incomplete message; a zero-linger drop sends RST
/// and the read fails with `ConnectionReset`. Both are `Reset`: the peer hung up mid-exchange.
#[tokio::test]
async fn a_dropped_connection_is_reset() {
    let transport = Transport::new().build().unwrap();
    for reset in [false, true] {
        let addr = start_dropping(reset).await;
        let err = get(&transport, &format!("http://{addr}/"))
            .await
            .unwrap_err();
        assert_eq!(
            classify(&err),
            NetworkErrorKind::Reset,
            "reset={reset}: {err:?}"
        );
    }
}

/// Runs a call that should end by itself, failing the test instead of hanging if it does not.
async fn bounded<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call neither finished nor timed out within 10 s")
}

#[tokio::test]
async fn a_stalled_tls_handshake_hits_the_connect_timeout() {
    // Accepts and never answers: the TCP connect succeeds, the TLS handshake hangs.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let transport = Transport::new()
        .connect_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let err = bounded(get(&transport, &format!("https://{addr}/")))
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Timeout, "{err:?}");
}

#[tokio::test]
async fn a_full_backlog_hits_the_connect_timeout() {
    // Linux drops a SYN when the listener's accept queue is full, so the TCP connect itself hangs.
    // The queue is filled by connecting until a connect no longer completes.
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut fillers = Vec::new();
    let mut full = false;
    for _ in 0..32 {
        match tokio::time::timeout(Duration::from_millis(300), TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => fillers.push(stream),
            Ok(Err(e)) => panic!("filler connect failed: {e}"),
            Err(_) => {
                full = true;
                break;
            }
        }
    }
    assert!(
        full,
        "the accept queue never filled after {} connects",
        fillers.len()
    );

    let transport = Transport::new()
        .connect_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let err = bounded(get(&transport, &format!("http://{addr}/")))
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Timeout, "{err:?}");
    drop(listener);
}

#[tokio::test]
async fn the_pool_reuses_one_connection() {
    let server = start_http().await;
    let transport = Transport::new().build().unwrap();
    for _ in 0..5 {
        let (response, _) = get_text(&transport, &server.url("http", "/"))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        // The connection goes back to the pool from a task of hyper's once the body is read; give
        // it the moment it needs so the next call finds it idle.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 1);
}

/// Makes `calls` GETs of `url`, one after another, on a thread of its own running a
/// single-threaded runtime; then holds the thread (and so its pool) until `release` is
/// dropped.
fn calls_on_a_thread(
    transport: courier_core::HttpService,
    url: String,
    calls: usize,
    release: std::sync::mpsc::Receiver<()>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            for _ in 0..calls {
                let (response, _) = get_text(&transport, &url).await.unwrap();
                assert_eq!(response.status(), 200);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let _ = release.recv();
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_single_threaded_runtime_keeps_a_pool_of_its_own_until_its_thread_ends() {
    let server = start_http().await;
    let url = server.url("http", "/");
    let transport = Transport::new().build().unwrap();
    // Two threads, each a single-threaded runtime making three calls in turn.
    let (release, threads): (Vec<_>, Vec<_>) = (0..2)
        .map(|_| {
            let (release, held) = std::sync::mpsc::channel();
            (
                release,
                calls_on_a_thread(transport.clone(), url.clone(), 3, held),
            )
        })
        .unzip();
    // Each thread's calls reuse the one connection its thread opened.
    assert!(eventually(|| server.accepted() == 2).await);
    // This multi-threaded runtime's calls share a pool of their own: one more connection. (A
    // connection of the threads' would never answer: its task is on a runtime no longer run.)
    for _ in 0..3 {
        bounded(get_text(&transport, &url)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 3);
    assert_eq!(server.closed(), 0);
    // Once a thread ends, its pool goes, and with it its idle connection.
    drop(release);
    for thread in threads {
        tokio::task::spawn_blocking(move || thread.join().unwrap())
            .await
            .unwrap();
    }
    assert!(
        eventually(|| server.closed() == 2).await,
        "the ended threads' connections are closed: {} of 2",
        server.closed()
    );
    // The shared pool's connection is still there and still used.
    bounded(get_text(&transport, &url)).await.unwrap();
    assert_eq!(server.accepted(), 3);
}

#[tokio::test]
async fn clones_share_the_pool_and_https_reuses_too() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::http11_only()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .build()
        .unwrap();
    for _ in 0..3 {
        get_text(&transport.clone(), &server.url("https", "/"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn without_pooling_each_call_connects() {
    let server = start_http().await;
    let transport = Transport::new().pool_max_idle_per_host(0).build().unwrap();
    for _ in 0..3 {
        get_text(&transport, &server.url("http", "/"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 3);
}

#[tokio::test]
async fn the_cache_builds_once_per_dispatcher() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::http11_only()).await;
    let url = server.url("https", "/");
    let cache = TransportCache::new(Transport::new()).unwrap();

    // Resolving options clones the dispatcher each time: equal values must still share a client.
    let dispatcher = Dispatcher::new().root_cert(pki.ca_pem.clone());
    let options = || TransportOptions {
        dispatcher: Some(dispatcher.clone()),
        ..TransportOptions::default()
    };
    let first = cache.service(&options()).unwrap();
    let again = cache.service(&options()).unwrap();
    assert_eq!(cache.len(), 1);
    get_text(&first, &url).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    get_text(&again, &url).await.unwrap();
    assert_eq!(server.accepted(), 1, "the same dispatcher shares one pool");

    // A different dispatcher gets a transport (and a pool) of its own.
    let other = Dispatcher::new()
        .root_cert(pki.ca_pem.clone())
        .identity(client_identity(&pki));
    let second = cache
        .service(&TransportOptions {
            dispatcher: Some(other),
            ..TransportOptions::default()
        })
        .unwrap();
    assert_eq!(cache.len(), 2);
    tokio::time::sleep(Duration::from_millis(20)).await;
    get_text(&second, &url).await.unwrap();
    assert_eq!(server.accepted(), 2);

    // No dispatcher: the default transport, which does not trust the test CA.
    let default = cache.service(&TransportOptions::default()).unwrap();
    let err = get(&default, &url).await.unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Tls);
    assert_eq!(cache.len(), 2);
}

#[tokio::test]
async fn the_cache_prefers_fetch() {
    let fetch = Fetch::new(tower::service_fn(|_request: http::Request<Body>| async {
        Ok::<_, std::convert::Infallible>(
            Response::builder().status(299).body(Body::empty()).unwrap(),
        )
    }));
    let cache = TransportCache::new(Transport::new()).unwrap();
    let options = TransportOptions {
        fetch: Some(fetch),
        dispatcher: Some(Dispatcher::new().root_cert("not even a pem")),
    };
    let service = cache.service(&options).unwrap();
    let response = get(&service, "http://127.0.0.1:1/").await.unwrap();
    assert_eq!(response.status(), 299);
    assert!(
        cache.is_empty(),
        "the dispatcher is not built when fetch is set"
    );
}

/// Answers one request on a raw socket with the request's head as the body.
async fn start_head_echo() -> std::net::SocketAddr {
    use tokio::io::AsyncWriteExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let head = read_head(&mut socket)
            .await
            .expect("the request head, whole");
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            head.len()
        );
        socket.write_all(answer.as_bytes()).await.unwrap();
        socket.write_all(&head).await.unwrap();
    });
    addr
}

#[tokio::test]
async fn an_http1_request_names_its_host_once() {
    let addr = start_head_echo().await;
    let transport = Transport::new().build().unwrap();
    let (_, head) = get_text(&transport, &format!("http://{addr}/users/7"))
        .await
        .unwrap();
    assert_eq!(
        head,
        format!("GET /users/7 HTTP/1.1\r\nhost: {addr}\r\n\r\n"),
        "{head}"
    );

    let addr = start_head_echo().await;
    let request = http::Request::get(format!("http://{addr}/"))
        .header(http::header::HOST, "api.example.com")
        .body(Body::empty())
        .unwrap();
    let response = tower::ServiceExt::oneshot(transport, request)
        .await
        .unwrap();
    let head = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(
        &head[..],
        b"GET / HTTP/1.1\r\nhost: api.example.com\r\n\r\n"
    );
}
