//! The floor of the stack courier's proxy is built on: a bare reverse proxy on hyper-util's
//! server and pooled client, with nothing of courier's — no routing, no wire parameters, no
//! layers, no header allow-lists, no session or forwarding. It sends each request on to the
//! upstream as it came (path, query, headers; `Host` set to the upstream's) and streams the
//! answer back, with the same allocator (mimalloc) as `courier serve` and, like
//! `courier serve --threads 1` and nginx with one worker process, on one thread: a
//! single-threaded tokio runtime. `benches/proxy_hop.sh` runs it beside `courier serve` and nginx, so the
//! figures say what courier costs over hyper as well as over nginx.
//!
//! With `--inline` it is hyper's floor rather than hyper-util's: hyper's HTTP/1.1 server
//! (`hyper::server::conn::http1`, no version sniffing) and, for each browser connection, one
//! upstream connection of `hyper::client::conn::http1` of its own, polled in the browser
//! connection's task beside the server — no pool, no task per upstream connection, no wake
//! across tasks, nothing checked: about the least a proxy on hyper's HTTP/1.1 server and
//! client can do for a request.
//!
//! ```sh
//! cargo bench --bench bare_hop -- 127.0.0.1:8081 http://127.0.0.1:8080
//! cargo bench --bench bare_hop -- 127.0.0.1:8081 http://127.0.0.1:8080 --inline
//! ```
//!
//! Without arguments (as when `cargo bench` runs every benchmark) it says how to run it and
//! exits.

use bytes::Bytes;
use http::uri::{Authority, Scheme};
use http::{header, Request, Response, Uri};
use http_body_util::{Either, Empty};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use std::convert::Infallible;
use tokio::net::TcpListener;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Upstream = Client<HttpConnector, Incoming>;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let in_one_task = args.iter().any(|a| a == "--inline");
    let mut args = args.into_iter().filter(|a| a != "--inline");
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!(
            "usage: cargo bench --bench bare_hop -- LISTEN UPSTREAM_URL [--inline] (see benches/proxy_hop.sh)"
        );
        return;
    };
    let upstream: Uri = upstream.parse().expect("UPSTREAM_URL is a URL");
    let authority = upstream
        .authority()
        .expect("UPSTREAM_URL has a host")
        .clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if in_one_task {
        tokio::task::LocalSet::new().block_on(&runtime, inline::serve(listen, authority));
    } else {
        runtime.block_on(serve(listen, authority));
    }
}

async fn serve(listen: String, authority: Authority) {
    let listener = TcpListener::bind(&listen)
        .await
        .expect("LISTEN can be bound");
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Upstream = Client::builder(TokioExecutor::new()).build(connector);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let client = client.clone();
        let authority = authority.clone();
        tokio::spawn(async move {
            let service =
                service_fn(move |request| relay(client.clone(), authority.clone(), request));
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn relay(
    client: Upstream,
    authority: Authority,
    request: Request<Incoming>,
) -> Result<Response<Either<Incoming, Empty<Bytes>>>, Infallible> {
    let (mut head, body) = request.into_parts();
    let mut uri = std::mem::take(&mut head.uri).into_parts();
    uri.scheme = Some(Scheme::HTTP);
    uri.authority = Some(authority.clone());
    head.uri = Uri::from_parts(uri).expect("a path with the upstream's scheme and host");
    head.headers.insert(
        header::HOST,
        header::HeaderValue::from_str(authority.as_str()).expect("a host is a header value"),
    );
    match client.request(Request::from_parts(head, body)).await {
        Ok(response) => Ok(response.map(Either::Left)),
        Err(_) => Ok(bad_gateway()),
    }
}

fn bad_gateway() -> Response<Either<Incoming, Empty<Bytes>>> {
    let mut response = Response::new(Either::Right(Empty::new()));
    *response.status_mut() = http::StatusCode::BAD_GATEWAY;
    response
}

/// hyper's floor: each browser connection and an upstream connection of its own, driven in one
/// task.
mod inline {
    use super::*;
    use hyper::client::conn::http1 as client;
    use hyper::server::conn::http1 as server;
    use std::cell::RefCell;
    use std::future::{poll_fn, Future};
    use std::pin::Pin;
    use std::rc::Rc;
    use std::task::{Context, Poll};
    use tokio::net::TcpStream;

    type Connection = client::Connection<TokioIo<TcpStream>, Incoming>;

    /// A browser connection's upstream: the sender its requests go on (taken while a request is
    /// on it) and the connection under it, which [`Together`] drives.
    #[derive(Default)]
    struct Upstream {
        sender: Option<client::SendRequest<Incoming>>,
        connection: Option<Pin<Box<Connection>>>,
    }

    pub(super) async fn serve(listen: String, authority: Authority) {
        let listener = TcpListener::bind(&listen)
            .await
            .expect("LISTEN can be bound");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let authority = authority.clone();
            tokio::task::spawn_local(async move {
                let upstream = Rc::new(RefCell::new(Upstream::default()));
                let service = {
                    let upstream = upstream.clone();
                    service_fn(move |request| relay(upstream.clone(), authority.clone(), request))
                };
                let server = server::Builder::new().serve_connection(TokioIo::new(stream), service);
                Together {
                    server: Box::pin(server),
                    upstream,
                }
                .await
            });
        }
    }

    /// The browser's connection and its upstream connection, polled in one task: every wake of
    /// either is this task's.
    struct Together<S> {
        server: Pin<Box<S>>,
        upstream: Rc<RefCell<Upstream>>,
    }

    impl<S: Future> Future for Together<S> {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.server.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            let mut upstream = self.upstream.borrow_mut();
            if let Some(connection) = upstream.connection.as_mut() {
                if connection.as_mut().poll(cx).is_ready() {
                    *upstream = Upstream::default();
                }
            }
            Poll::Pending
        }
    }

    async fn relay(
        upstream: Rc<RefCell<Upstream>>,
        authority: Authority,
        request: Request<Incoming>,
    ) -> Result<Response<Either<Incoming, Empty<Bytes>>>, Infallible> {
        let open = upstream
            .borrow_mut()
            .sender
            .take()
            .filter(|sender| !sender.is_closed());
        let mut sender = match open {
            Some(sender) => sender,
            None => match connect(&upstream, &authority).await {
                Ok(sender) => sender,
                Err(_) => return Ok(bad_gateway()),
            },
        };
        if poll_fn(|cx| sender.poll_ready(cx)).await.is_err() {
            return Ok(bad_gateway());
        }
        let (mut head, body) = request.into_parts();
        head.headers.insert(
            header::HOST,
            header::HeaderValue::from_str(authority.as_str()).expect("a host is a header value"),
        );
        let answer = sender.send_request(Request::from_parts(head, body));
        upstream.borrow_mut().sender = Some(sender);
        match answer.await {
            Ok(response) => Ok(response.map(Either::Left)),
            Err(_) => Ok(bad_gateway()),
        }
    }

    async fn connect(
        upstream: &RefCell<Upstream>,
        authority: &Authority,
    ) -> Result<client::SendRequest<Incoming>, Box<dyn std::error::Error>> {
        let stream = TcpStream::connect(authority.as_str()).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = client::handshake(TokioIo::new(stream)).await?;
        upstream.borrow_mut().connection = Some(Box::pin(connection));
        Ok(sender)
    }
}
