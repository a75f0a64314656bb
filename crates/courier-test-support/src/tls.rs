//! Local servers for transport tests: TLS and plain HTTP servers that count their connections, a
//! `CONNECT` proxy, and a small PKI made with rcgen. Everything listens on 127.0.0.1; a setup
//! step that fails panics, since a test cannot go on without its server.
#![allow(clippy::missing_panics_doc, clippy::new_without_default)]

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa, KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// A certificate authority, a server certificate for 127.0.0.1 it signed, and a client
/// certificate it signed.
pub struct Pki {
    /// The authority's certificate.
    pub ca_pem: String,
    /// The server's certificate, for `127.0.0.1` and `localhost`.
    pub server_cert_pem: String,
    /// The server's private key.
    pub server_key_pem: String,
    /// The client's certificate, for `client.test`.
    pub client_cert_pem: String,
    /// The client's private key.
    pub client_key_pem: String,
}

impl Pki {
    /// A new authority and the two certificates it signed.
    pub fn new() -> Self {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "courier test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

        let mut server_params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().unwrap();
        let server_cert = server_params.signed_by(&server_key, &ca).unwrap();

        let mut client_params = CertificateParams::new(vec!["client.test".to_string()]).unwrap();
        client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_key = KeyPair::generate().unwrap();
        let client_cert = client_params.signed_by(&client_key, &ca).unwrap();

        Self {
            ca_pem: ca.pem(),
            server_cert_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
        }
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// How a test TLS server is set up.
pub struct TlsOptions {
    /// ALPN protocols offered, in preference order.
    pub alpn: Vec<Vec<u8>>,
    /// Require a client certificate signed by the test CA.
    pub require_client_cert: bool,
}

impl TlsOptions {
    /// Offers HTTP/2, then HTTP/1.1; no client certificate.
    pub fn h2_and_http11() -> Self {
        Self {
            alpn: vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            require_client_cert: false,
        }
    }

    /// Offers HTTP/1.1 only; no client certificate.
    pub fn http11_only() -> Self {
        Self {
            alpn: vec![b"http/1.1".to_vec()],
            require_client_cert: false,
        }
    }
}

/// A running test server: its address, the connections it accepted and those that ended.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    closed: Arc<AtomicUsize>,
}

impl Server {
    /// How many connections it accepted.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// How many of them have ended (the client closed it, or it failed).
    pub fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }

    /// `scheme://addr/path`.
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{path}", self.addr)
    }
}

/// Answers every request with 200 and the HTTP version it was received over.
async fn hello(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let text = format!("hello over {:?}", request.version());
    Ok(Response::new(Full::new(Bytes::from(text))))
}

async fn serve<S>(io: S)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let _ = auto::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(io), hyper::service::service_fn(hello))
        .await;
}

/// A TLS server configuration with `pki`'s server certificate, as `options` say.
pub fn server_config(pki: &Pki, options: TlsOptions) -> ServerConfig {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pki.server_cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(pki.server_key_pem.as_bytes()).unwrap();
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if options.require_client_cert {
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots(pki)), provider())
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder.with_single_cert(chain, key).unwrap();
    config.alpn_protocols = options.alpn;
    config
}

/// A TLS client configuration (ring) that trusts `pki`'s CA alone and offers `alpn`.
pub fn client_config(pki: &Pki, alpn: Vec<Vec<u8>>) -> ClientConfig {
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots(pki))
        .with_no_client_auth();
    config.alpn_protocols = alpn;
    config
}

/// `pki`'s CA as the one root.
fn roots(pki: &Pki) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    roots
}

/// Accepts TLS connections with [`server_config`].
pub fn tls_acceptor(pki: &Pki, options: TlsOptions) -> TlsAcceptor {
    TlsAcceptor::from(Arc::new(server_config(pki, options)))
}

/// Reads one request head from `socket`, a byte at a time so that nothing after it is taken:
/// `None` when the connection ends first.
pub async fn read_head(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match socket.read(&mut byte).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => head.push(byte[0]),
        }
    }
    Some(head)
}

/// An HTTPS server signed by `pki`'s CA.
pub async fn start_tls(pki: &Pki, options: TlsOptions) -> Server {
    let acceptor = tls_acceptor(pki, options);
    start_counting(move |stream| {
        let acceptor = acceptor.clone();
        async move {
            if let Ok(tls) = acceptor.accept(stream).await {
                serve(tls).await;
            }
        }
    })
    .await
}

/// A plain HTTP server (HTTP/1.1, or HTTP/2 with prior knowledge).
pub async fn start_http() -> Server {
    start_counting(serve).await
}

/// Listens on 127.0.0.1, counting the connections it accepts and handing each to `connection`
/// in a task of its own, counting those that end.
pub async fn start_counting<F, Fut>(connection: F) -> Server
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(AtomicUsize::new(0));
    let (count, ended) = (accepted.clone(), closed.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let served = connection(stream);
            let ended = ended.clone();
            tokio::spawn(async move {
                served.await;
                ended.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    Server {
        addr,
        accepted,
        closed,
    }
}

/// A CONNECT proxy that records each request line and tunnels only to 127.0.0.1; anything else
/// gets 403 and no connection is made.
pub struct Proxy {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The request line of each connection it was asked to open.
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// `http://addr`.
    pub fn uri(&self) -> http::Uri {
        format!("http://{}", self.addr).parse().unwrap()
    }

    /// The request lines so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Starts a [`Proxy`].
pub async fn start_proxy() -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(tunnel(client, record.clone()));
        }
    });
    Proxy { addr, seen }
}

async fn tunnel(mut client: TcpStream, seen: Arc<Mutex<Vec<String>>>) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
        if head.len() > 16 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let line = head.lines().next().unwrap_or_default().to_string();
    seen.lock().unwrap().push(line.clone());
    let mut parts = line.split(' ');
    let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
        let _ = client
            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            .await;
        return;
    };
    if !target.starts_with("127.0.0.1:") {
        let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
        return;
    }
    let Ok(mut upstream) = TcpStream::connect(target).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr
}
