//! The transport's own pool of HTTP/1.1 connections (`http://` origins) against real servers on
//! 127.0.0.1: keep-alive only after a whole body, a connection the server closed left out, the
//! idle timeout and the idle limit, many calls in flight each getting its own answer, and an
//! answer an upstream sent unasked never taken for the next call's.

mod transport_support;

use bytes::Bytes;
use courier_client::Transport;
use courier_core::{Body, HttpService};
use futures_util::future::join_all;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;
use transport_support::{eventually, read_head, start_counting, Server};

const CHUNK: usize = 16 * 1024;
const CHUNKS: usize = 64;

type Answer = Response<http_body_util::Either<http_body_util::Full<Bytes>, BigBody>>;
type BigBody =
    StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, Infallible>>>>;

async fn answer(request: Request<Incoming>) -> Result<Answer, Infallible> {
    use http_body_util::Either::{Left, Right};
    let path = request.uri().path().to_owned();
    if path == "/big" {
        let chunk = Bytes::from(vec![b'x'; CHUNK]);
        let frames = (0..CHUNKS)
            .map(|_| Ok(Frame::data(chunk.clone())))
            .collect::<Vec<_>>();
        return Ok(Response::new(Right(StreamBody::new(
            futures_util::stream::iter(frames),
        ))));
    }
    if path == "/slow" {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let text = path.strip_prefix("/echo/").unwrap_or("ok").to_owned();
    Ok(Response::new(Left(http_body_util::Full::new(Bytes::from(
        text,
    )))))
}

/// A counting server: `/big` streams 64 chunks of 16 KiB, `/slow` answers after 200 ms,
/// `/echo/N` answers `N`.
async fn start() -> Server {
    start_counting(|stream| async move {
        let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), service_fn(answer))
            .await;
    })
    .await
}

async fn get(transport: &HttpService, url: &str) -> Response<Body> {
    let request = Request::get(url).body(Body::empty()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), transport.clone().oneshot(request))
        .await
        .expect("the call finishes")
        .expect("the call succeeds")
}

async fn get_text(transport: &HttpService, url: &str) -> String {
    let body = get(transport, url)
        .await
        .into_body()
        .collect()
        .await
        .unwrap();
    String::from_utf8(body.to_bytes().to_vec()).unwrap()
}

#[tokio::test]
async fn a_body_read_to_its_end_gives_its_connection_back() {
    let server = start().await;
    let transport = Transport::new().build().unwrap();
    for _ in 0..3 {
        let body = get(&transport, &server.url("http", "/big"))
            .await
            .into_body();
        assert_eq!(
            body.collect().await.unwrap().to_bytes().len(),
            CHUNK * CHUNKS
        );
        assert_eq!(
            get_text(&transport, &server.url("http", "/echo/7")).await,
            "7"
        );
    }
    assert_eq!(server.accepted(), 1, "every call on one connection");
}

#[tokio::test]
async fn a_body_dropped_before_its_end_takes_its_connection_with_it() {
    let server = start().await;
    let transport = Transport::new().build().unwrap();
    let mut body = get(&transport, &server.url("http", "/big"))
        .await
        .into_body();
    let first = body.frame().await.unwrap().unwrap();
    assert!(first.is_data());
    drop(body);
    // The next call gets its own answer, on another connection, not the rest of `/big`.
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/8")).await,
        "8"
    );
    assert_eq!(server.accepted(), 2);
    assert!(
        eventually(|| server.closed() == 1).await,
        "the cut connection is closed"
    );
}

#[tokio::test]
async fn a_connection_whose_body_is_still_being_read_is_not_lent_out() {
    let server = start().await;
    let transport = Transport::new().build().unwrap();
    let mut body = get(&transport, &server.url("http", "/big"))
        .await
        .into_body();
    let first = body
        .frame()
        .await
        .unwrap()
        .unwrap()
        .into_data()
        .unwrap()
        .len();
    // `/big` is not read to its end yet: the next call does not wait for it.
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/9")).await,
        "9"
    );
    assert_eq!(server.accepted(), 2);
    let rest = body.collect().await.unwrap().to_bytes().len();
    assert_eq!(first + rest, CHUNK * CHUNKS);
}

/// Answers each request on its connection, then closes it without saying so
/// (`Connection: close` left out).
async fn start_closing() -> Server {
    start_counting(|mut socket| async move {
        if read_head(&mut socket).await.is_none() {
            return;
        }
        let _ = socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .await;
    })
    .await
}

#[tokio::test]
async fn a_connection_the_server_closed_is_not_used_again() {
    let server = start_closing().await;
    let transport = Transport::new().build().unwrap();
    for round in 1..=3 {
        assert_eq!(get_text(&transport, &server.url("http", "/")).await, "ok");
        // Time for the client to see the close.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(server.accepted(), round);
    }
}

#[tokio::test]
async fn idle_connections_close_after_the_idle_timeout() {
    let server = start().await;
    let transport = Transport::new()
        .pool_idle_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/1")).await,
        "1"
    );
    assert!(
        eventually(|| server.closed() == 1).await,
        "the idle connection is closed"
    );
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/2")).await,
        "2"
    );
    assert_eq!(server.accepted(), 2, "the expired connection is not reused");
}

#[tokio::test]
async fn without_an_idle_timeout_idle_connections_stay() {
    let server = start().await;
    let transport = Transport::new().pool_idle_timeout(None).build().unwrap();
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/1")).await,
        "1"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/2")).await,
        "2"
    );
    assert_eq!((server.accepted(), server.closed()), (1, 0));
}

#[tokio::test]
async fn at_most_max_idle_per_host_connections_are_kept() {
    let server = start().await;
    let transport = Transport::new().pool_max_idle_per_host(1).build().unwrap();
    // Three calls at once: three connections.
    let url = server.url("http", "/slow");
    let answers = join_all((0..3).map(|_| get_text(&transport, &url))).await;
    assert_eq!(answers, ["ok", "ok", "ok"]);
    assert_eq!(server.accepted(), 3);
    assert!(
        eventually(|| server.closed() == 2).await,
        "two of the three closed: {}",
        server.closed()
    );
    // The one kept serves the next call.
    assert_eq!(
        get_text(&transport, &server.url("http", "/echo/4")).await,
        "4"
    );
    assert_eq!(server.accepted(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_in_flight_each_get_their_own_answer() {
    let server = start().await;
    let transport = Transport::new().build().unwrap();
    for _ in 0..4 {
        let answers = join_all((0..48).map(|n| {
            let transport = transport.clone();
            let url = server.url("http", &format!("/echo/{n}"));
            async move { (n, get_text(&transport, &url).await) }
        }))
        .await;
        for (n, answer) in answers {
            assert_eq!(answer, n.to_string());
        }
    }
    assert!(server.accepted() <= 48, "{} connections", server.accepted());
}

#[tokio::test]
async fn a_status_without_a_body_gives_its_connection_back_at_once() {
    let server = start_counting(|stream| async move {
        let service = service_fn(|_request: Request<Incoming>| async {
            let mut response = Response::new(http_body_util::Empty::<Bytes>::new());
            *response.status_mut() = StatusCode::NO_CONTENT;
            Ok::<_, Infallible>(response)
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .await;
    })
    .await;
    let transport = Transport::new().build().unwrap();
    for _ in 0..3 {
        // The body is never read: an answer without one is whole at its head.
        let response = get(&transport, &server.url("http", "/")).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
    }
    assert_eq!(server.accepted(), 1);
}

/// A server whose connections answer their first request with `ok` and then, unasked, with a
/// second answer, `smuggled` — at once in the same write, or after `pause` — and any later
/// request on the connection with `later`.
async fn start_smuggling(pause: Option<Duration>) -> Server {
    start_counting(move |mut socket| async move {
        if read_head(&mut socket).await.is_none() {
            return;
        }
        let first = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let smuggled = b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nsmuggled";
        match pause {
            None => {
                let _ = socket
                    .write_all(&[&first[..], &smuggled[..]].concat())
                    .await;
            }
            Some(pause) => {
                let _ = socket.write_all(first).await;
                tokio::time::sleep(pause).await;
                let _ = socket.write_all(smuggled).await;
            }
        }
        while read_head(&mut socket).await.is_some() {
            let later = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nlater";
            if socket.write_all(later).await.is_err() {
                return;
            }
        }
    })
    .await
}

#[tokio::test]
async fn an_answer_sent_unasked_with_the_last_is_never_the_next_calls() {
    let server = start_smuggling(None).await;
    let transport = Transport::new().build().unwrap();
    let url = server.url("http", "/");
    for round in 1..=3 {
        // At once, while the extra answer waits in the connection's read buffer.
        assert_eq!(get_text(&transport, &url).await, "ok", "round {round}");
    }
    // Each call on a connection of its own: one with bytes nobody asked for is never reused.
    assert_eq!(server.accepted(), 3);
}

#[tokio::test]
async fn an_answer_sent_unasked_to_an_idle_connection_closes_it() {
    let server = start_smuggling(Some(Duration::from_millis(20))).await;
    let transport = Transport::new().build().unwrap();
    let url = server.url("http", "/");
    for round in 1..=3 {
        assert_eq!(get_text(&transport, &url).await, "ok", "round {round}");
        // The extra answer arrives while the connection is idle in the pool.
        assert!(
            eventually(|| server.closed() == round).await,
            "round {round}: the connection is closed"
        );
    }
    assert_eq!(server.accepted(), 3);
}

#[tokio::test]
async fn a_connection_whose_answer_said_close_is_not_used_again() {
    // The server says `Connection: close` and leaves the socket open: the client closes it.
    let server = start_counting(|mut socket| async move {
        if read_head(&mut socket).await.is_some() {
            let close = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok";
            let _ = socket.write_all(close).await;
        }
        while read_head(&mut socket).await.is_some() {
            let later = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nlater";
            if socket.write_all(later).await.is_err() {
                return;
            }
        }
    })
    .await;
    let transport = Transport::new().build().unwrap();
    let url = server.url("http", "/");
    for round in 1..=3 {
        assert_eq!(get_text(&transport, &url).await, "ok", "round {round}");
    }
    assert_eq!(server.accepted(), 3);
    assert!(
        eventually(|| server.closed() == 3).await,
        "{}",
        server.closed()
    );
}
