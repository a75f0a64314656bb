//! The floor of the stack courier's proxy is built on: a bare reverse proxy on hyper-util's
//! server and pooled client, with nothing of courier's — no routing, no wire parameters, no
//! layers, no header allow-lists, no session or forwarding. It sends each request on to the
//! upstream as it came (path, query, headers; `Host` set to the upstream's) and streams the
//! answer back, with the same allocator (mimalloc) as `courier serve` and, like
//! `courier serve --threads 1` and nginx with one worker process, on one thread: a
//! single-threaded tokio runtime. `benches/proxy_hop.sh` runs it beside `courier serve` and nginx, so the
//! figures say what courier costs over hyper as well as over nginx.
//!
//! ```sh
//! cargo bench --bench bare_hop -- 127.0.0.1:8081 http://127.0.0.1:8080
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
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!(
            "usage: cargo bench --bench bare_hop -- LISTEN UPSTREAM_URL (see benches/proxy_hop.sh)"
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
    runtime.block_on(serve(listen, authority));
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
        Err(_) => {
            let mut response = Response::new(Either::Right(Empty::new()));
            *response.status_mut() = http::StatusCode::BAD_GATEWAY;
            Ok(response)
        }
    }
}
