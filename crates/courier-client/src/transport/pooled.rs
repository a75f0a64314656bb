//! [`Pooled`]: the default transport as a concrete service, so the layers above it poll its
//! future in place rather than through a box of their own.

use super::connect::Connector;
use super::error::Missing;
use courier_core::{Body, BoxError, HttpService};
use http::header::{Entry, HOST};
use http::uri::Scheme;
use http::{HeaderValue, Request, Response};
use hyper_util::client::legacy::{Builder, Client, ResponseFuture};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::thread::ThreadId;
use tokio::runtime::{Handle, RuntimeFlavor};

/// A transport as the client's layers call it: the default one ([`Pooled`]) concretely, or any
/// other ([`Fetch`](courier_core::Fetch)) type-erased.
pub(crate) type TransportService = tower::util::Either<Pooled, HttpService>;

/// The same transport behind courier's type-erased [`HttpService`], as the public API hands it
/// out.
pub(crate) fn erase(transport: TransportService) -> HttpService {
    match transport {
        tower::util::Either::Left(pooled) => HttpService::new(pooled),
        tower::util::Either::Right(service) => service,
    }
}

/// hyper-util's pooled client over courier's [`Connector`], as a `tower::Service`: hyper's
/// `Incoming` body wrapped (still streaming) in [`Body`], hyper-util's error boxed whole so its
/// chain of causes stays intact. A clone is a reference count: the pools sit behind an `Arc`.
#[derive(Clone)]
pub(crate) struct Pooled {
    pools: Arc<Pools>,
    /// Whether `http://` requests go over HTTP/1.1 (no HTTP/2 prior knowledge): then
    /// [`set_host`] names the host.
    plain_http1: bool,
}

impl Pooled {
    /// Clients `builder` builds over `connector`, which speak HTTP/2 with prior knowledge when
    /// `http2_only`.
    pub(crate) fn new(builder: Builder, connector: Connector, http2_only: bool) -> Self {
        Self {
            pools: Arc::new(Pools {
                shared: builder.build(connector.clone()),
                builder,
                connector,
                local: Mutex::new(Vec::new()),
            }),
            plain_http1: !http2_only,
        }
    }
}

/// hyper-util's client over courier's connector: one connection pool.
type HyperClient = Client<Connector, Body>;

/// The per-thread pools of one transport, with the thread each belongs to.
type ThreadPools = Vec<(ThreadId, Arc<HyperClient>)>;

/// The connection pools of one transport: one for the calls made on multi-threaded runtimes,
/// and one for each thread running a single-threaded runtime that made calls.
///
/// The one optimisation of the pools, and the reason there is more than one: hyper-util's
/// client runs each connection in a task of the runtime that opened it, and a call on another
/// thread then wakes that task across threads (a system call) to send, and is woken back across
/// threads for the answer. A single-threaded runtime's calls use connections its own thread
/// opened, so those wake-ups stay on the thread — what `courier serve`'s worker threads need
/// (BENCHMARKS.md, "One thread per connection's work"). A multi-threaded runtime moves tasks
/// between its threads anyway, so its calls share one pool.
struct Pools {
    shared: HyperClient,
    builder: Builder,
    connector: Connector,
    /// The per-thread pools, owned here (a thread only refers to its own), each removed when
    /// its thread ends.
    local: Mutex<ThreadPools>,
}

/// A thread's reference to its pool of one transport.
struct LocalPool {
    pools: Weak<Pools>,
    client: Weak<HyperClient>,
}

/// This thread's pools, of each transport a single-threaded runtime here called through. When
/// the thread ends, each is removed from its transport.
struct LocalPools(Vec<LocalPool>);

impl Drop for LocalPools {
    fn drop(&mut self) {
        let thread = std::thread::current().id();
        for local in &self.0 {
            if let Some(pools) = local.pools.upgrade() {
                pools.lock_local().retain(|(owner, _)| *owner != thread);
            }
        }
    }
}

thread_local! {
    static LOCAL_POOLS: RefCell<LocalPools> = const { RefCell::new(LocalPools(Vec::new())) };
}

impl Pools {
    fn lock_local(&self) -> std::sync::MutexGuard<'_, ThreadPools> {
        // The list stays whole whatever panicked while it was held: each change is one call.
        self.local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `request` through the pool of the calling thread's kind of runtime.
    fn request(self: &Arc<Self>, runtime: &Handle, request: Request<Body>) -> ResponseFuture {
        if runtime.runtime_flavor() != RuntimeFlavor::CurrentThread {
            return self.shared.request(request);
        }
        let client = LOCAL_POOLS
            .try_with(|locals| {
                let mut locals = locals.borrow_mut();
                let found = locals
                    .0
                    .iter()
                    .find(|local| std::ptr::eq(local.pools.as_ptr(), Arc::as_ptr(self)))
                    .and_then(|local| local.client.upgrade());
                found.unwrap_or_else(|| {
                    let client = Arc::new(self.builder.build(self.connector.clone()));
                    self.lock_local()
                        .push((std::thread::current().id(), Arc::clone(&client)));
                    // Entries of transports since dropped go as a new one comes.
                    locals.0.retain(|local| local.client.strong_count() > 0);
                    locals.0.push(LocalPool {
                        pools: Arc::downgrade(self),
                        client: Arc::downgrade(&client),
                    });
                    client
                })
            })
            .ok();
        match client {
            Some(client) => client.request(request),
            // The thread is ending: the shared pool serves.
            None => self.shared.request(request),
        }
    }
}

impl fmt::Debug for Pooled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").finish_non_exhaustive()
    }
}

impl tower::Service<Request<Body>> for Pooled {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = PooledFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // hyper-util's client is always ready: its pool waits inside the response future.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Body>) -> PooledFuture {
        // hyper-util spawns onto the current tokio runtime when the future is polled, and would
        // panic without one: fail the call instead.
        let Ok(runtime) = Handle::try_current() else {
            return PooledFuture { response: None };
        };
        if self.plain_http1 && request.uri().scheme() == Some(&Scheme::HTTP) {
            set_host(&mut request);
        }
        PooledFuture {
            response: Some(self.pools.request(&runtime, request)),
        }
    }
}

/// The response future of [`Pooled`].
pub(crate) struct PooledFuture {
    /// `None` when the call was made outside a tokio runtime.
    response: Option<ResponseFuture>,
}

impl Future for PooledFuture {
    type Output = Result<Response<Body>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(response) = &mut self.response else {
            return Poll::Ready(Err(Box::new(Missing(
                "the transport needs a tokio runtime",
            ))));
        };
        Pin::new(response).poll(cx).map(|result| match result {
            Ok(response) => Ok(response.map(Body::new)),
            Err(error) => Err(Box::new(error) as BoxError),
        })
    }
}

/// Names the host of an `http://` request sent over HTTP/1.1, unless it already has a `Host`
/// header: the URI's authority as it is, when it holds no user information and no port 80.
///
/// hyper-util adds the same header on an HTTP/1 connection (its `set_host`), from the host and
/// the port it parses out of the URI and formats again; the authority already is that text, so
/// this copies it. The one optimisation of the transport: leaving the header to hyper-util cost
/// 4.1 % of a call's instructions at concurrency 1 and at 64 (callgrind, `benches/client.rs`:
/// 38,870 → 40,470 and 42,930 → 44,700). Any other request (an authority
/// with `user@` or port 80, `https://`, whose connection may speak HTTP/2 by ALPN, or HTTP/2 with
/// prior knowledge, where `:authority` names the host) is left to hyper-util as before.
fn set_host(request: &mut Request<Body>) {
    let Some(authority) = request.uri().authority() else {
        return;
    };
    let text = authority.as_str();
    let bytes = text.as_bytes();
    // The port follows the last ':', unless a ']' closing an IPv6 address comes after it.
    let port = match bytes.iter().rposition(|&b| b == b':') {
        Some(colon) if !bytes[colon..].contains(&b']') => Some(&bytes[colon + 1..]),
        _ => None,
    };
    // An empty port, or 80 however written: hyper-util leaves either out of the header.
    let left_out = |port: &[u8]| {
        let digits = port
            .iter()
            .position(|&b| b != b'0')
            .map_or(&[][..], |i| &port[i..]);
        port.is_empty() || digits == b"80"
    };
    if bytes.contains(&b'@') || port.is_some_and(left_out) {
        return;
    }
    let Ok(value) = HeaderValue::from_str(text) else {
        return;
    };
    if let Entry::Vacant(entry) = request.headers_mut().entry(HOST) {
        entry.insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_set_for(uri: &str, host: Option<&str>) -> Option<String> {
        let mut request = Request::get(uri).body(Body::empty()).unwrap();
        if let Some(host) = host {
            request
                .headers_mut()
                .insert(HOST, HeaderValue::from_str(host).unwrap());
        }
        set_host(&mut request);
        request
            .headers()
            .get(HOST)
            .map(|value| value.to_str().unwrap().to_owned())
    }

    #[test]
    fn the_authority_names_the_host() {
        let cases = [
            ("http://127.0.0.1:8080/users/7", Some("127.0.0.1:8080")),
            ("http://example.com/", Some("example.com")),
            ("http://Example.COM:8000/a?b=c", Some("Example.COM:8000")),
            ("http://[::1]:9000/", Some("[::1]:9000")),
            ("http://[::1]/", Some("[::1]")),
        ];
        for (uri, host) in cases {
            assert_eq!(host_set_for(uri, None).as_deref(), host, "{uri}");
        }
    }

    #[test]
    fn what_hyper_util_would_write_otherwise_is_left_to_it() {
        for uri in [
            "http://example.com:80/",
            "http://example.com:0080/",
            "http://user:secret@example.com:8080/",
            "/relative",
        ] {
            assert_eq!(host_set_for(uri, None), None, "{uri}");
        }
    }

    #[test]
    fn a_host_the_caller_set_is_kept() {
        assert_eq!(
            host_set_for("http://127.0.0.1:8080/", Some("api.example.com")).as_deref(),
            Some("api.example.com")
        );
    }
}
