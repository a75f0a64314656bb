//! `CoalesceLayer` over a real hyper-util client, against a real axum server on 127.0.0.1.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use courier_core::{Body, BoxError};
use courier_layers::coalesce::Coalesce;
use futures_util::stream;
use http::Request;
use http_body::Body as _;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tower::{Service, ServiceExt};

/// A body large enough to arrive in several chunks.
fn payload() -> String {
    "0123456789abcdef".repeat(4096)
}

/// A server that counts the requests it receives and holds every answer until its gate opens,
/// so that the calls under test are all in flight together.
#[derive(Clone)]
struct Upstream {
    hits: Arc<AtomicUsize>,
    /// Told each time a request arrives.
    arrived: Arc<Notify>,
    open: Arc<watch::Sender<bool>>,
    addr: SocketAddr,
}

impl Upstream {
    async fn start() -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(watch::channel(false).0);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let upstream = Self {
            hits,
            arrived: Arc::new(Notify::new()),
            open,
            addr,
        };
        let app = Router::new()
            .route("/users/me", get(me))
            .route("/feed", get(feed))
            .with_state(upstream.clone());
        tokio::spawn(axum::serve(listener, app).into_future());
        upstream
    }

    fn url(&self) -> String {
        format!("http://{}/users/me", self.addr)
    }

    fn feed_url(&self) -> String {
        format!("http://{}/feed", self.addr)
    }

    fn open(&self) {
        self.open.send_replace(true);
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Answers with the user the request named (its `authorization`, else its `cookie`) and the
/// payload.
async fn me(State(upstream): State<Upstream>, headers: HeaderMap) -> String {
    upstream.hits.fetch_add(1, Ordering::SeqCst);
    upstream.arrived.notify_one();
    let _ = upstream.open.subscribe().wait_for(|open| *open).await;
    let user = headers
        .get("authorization")
        .or_else(|| headers.get("cookie"))
        .and_then(|value| value.to_str().ok())
        .unwrap_or("anonymous");
    format!("{user}\n{}", payload())
}

/// Answers at once with a first chunk, and sends the second once the gate opens.
async fn feed(State(upstream): State<Upstream>) -> axum::body::Body {
    upstream.hits.fetch_add(1, Ordering::SeqCst);
    let chunks = stream::unfold(0, move |sent| {
        let upstream = upstream.clone();
        async move {
            let chunk = match sent {
                0 => "first,",
                1 => {
                    let _ = upstream.open.subscribe().wait_for(|open| *open).await;
                    "second"
                }
                _ => return None,
            };
            Some((Ok::<_, Infallible>(chunk), sent + 1))
        }
    });
    axum::body::Body::from_stream(chunks)
}

type Coalesced = Coalesce<Client<HttpConnector, Body>>;

fn client() -> Coalesced {
    Coalesce::new(Client::builder(TokioExecutor::new()).build_http())
}

fn read(url: &str, header: Option<(&str, &str)>) -> Request<Body> {
    let mut request = Request::get(url);
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    request.body(Body::empty()).unwrap()
}

async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("finished in time")
}

async fn send(service: &mut Coalesced, request: Request<Body>) -> impl Future<Output = Bytes> {
    let future = service.ready().await.unwrap().call(request);
    async move {
        let response = future.await.unwrap();
        assert_eq!(response.status(), 200);
        response.into_body().collect().await.unwrap().to_bytes()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_identical_concurrent_reads_make_one_upstream_request() -> Result<(), BoxError> {
    const CALLERS: usize = 1000;
    let upstream = Upstream::start().await;
    let service = client();
    let joined = Arc::new(AtomicUsize::new(0));

    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let mut service = service.clone();
            let upstream = upstream.clone();
            let joined = Arc::clone(&joined);
            tokio::spawn(async move {
                let response = service
                    .ready()
                    .await?
                    .call(read(&upstream.url(), Some(("authorization", "Bearer ada"))));
                // The server answers once every caller has its request in flight.
                if joined.fetch_add(1, Ordering::SeqCst) + 1 == CALLERS {
                    upstream.open();
                }
                let response = response.await?;
                assert_eq!(response.status(), 200);
                Ok::<_, BoxError>(response.into_body().collect().await?.to_bytes())
            })
        })
        .collect();

    let expected = format!("Bearer ada\n{}", payload());
    for caller in callers {
        let body = within(caller).await??;
        assert_eq!(body, expected);
    }
    assert_eq!(upstream.hits(), 1);
    assert_eq!(service.in_flight(), 0);
    Ok(())
}

#[tokio::test]
async fn two_users_identical_reads_are_not_shared() {
    let upstream = Upstream::start().await;
    let mut service = client();
    let url = upstream.url();

    let ada = send(
        &mut service,
        read(&url, Some(("authorization", "Bearer ada"))),
    )
    .await;
    let grace = send(
        &mut service,
        read(&url, Some(("authorization", "Bearer grace"))),
    )
    .await;
    let ada_cookie = send(&mut service, read(&url, Some(("cookie", "sid=ada")))).await;
    let grace_cookie = send(&mut service, read(&url, Some(("cookie", "sid=grace")))).await;
    assert_eq!(service.in_flight(), 4);
    upstream.open();

    let answers = within(async { tokio::join!(ada, grace, ada_cookie, grace_cookie) }).await;
    assert!(answers.0.starts_with(b"Bearer ada\n"));
    assert!(answers.1.starts_with(b"Bearer grace\n"));
    assert!(answers.2.starts_with(b"sid=ada\n"));
    assert!(answers.3.starts_with(b"sid=grace\n"));
    assert_eq!(upstream.hits(), 4);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test]
async fn reads_that_differ_only_in_request_ids_share_one_request() {
    let upstream = Upstream::start().await;
    let mut service = client();
    let url = upstream.url();

    let first = send(&mut service, read(&url, Some(("x-request-id", "1")))).await;
    let second = send(&mut service, read(&url, Some(("x-request-id", "2")))).await;
    upstream.open();

    let (first, second) = within(async { tokio::join!(first, second) }).await;
    assert_eq!(first, second);
    assert_eq!(upstream.hits(), 1);

    // Once answered, the call is forgotten: the same read is sent again.
    let third = send(&mut service, read(&url, None)).await;
    assert_eq!(within(third).await, first);
    assert_eq!(upstream.hits(), 2);
}

#[tokio::test]
async fn a_lone_read_streams_its_body_as_it_arrives() -> Result<(), BoxError> {
    let upstream = Upstream::start().await;
    let mut service = client();

    // The server holds its second chunk back until the gate opens: a body read to its end
    // before the response is handed over would never arrive.
    let response = within(
        service
            .ready()
            .await?
            .call(read(&upstream.feed_url(), None)),
    )
    .await?;
    assert_eq!(service.in_flight(), 0);
    let mut body = response.into_body();
    let first = within(body.frame()).await.expect("a frame")?;
    assert_eq!(first.into_data().expect("data"), "first,");
    assert!(!body.is_end_stream());

    upstream.open();
    let rest = within(body.collect()).await?.to_bytes();
    assert_eq!(rest, "second");
    assert_eq!(upstream.hits(), 1);
    Ok(())
}

#[tokio::test]
async fn a_leader_dropped_mid_call_hands_it_to_its_waiter() -> Result<(), BoxError> {
    let upstream = Upstream::start().await;
    let mut service = client();
    let url = upstream.url();

    let leader = service.ready().await?.call(read(&url, None));
    let waiter = service.ready().await?.call(read(&url, None));
    let arrived = upstream.arrived.notified();
    let leader = tokio::spawn(leader);
    // Once the server has the request, the leader leaves it.
    within(arrived).await;
    leader.abort();
    assert!(leader.await.unwrap_err().is_cancelled());
    upstream.open();

    let response = within(waiter).await?;
    assert_eq!(response.status(), 200);
    let body = within(response.into_body().collect()).await?.to_bytes();
    assert_eq!(body, format!("anonymous\n{}", payload()));
    assert_eq!(upstream.hits(), 1);
    assert_eq!(service.in_flight(), 0);
    Ok(())
}
