//! [`Transport`]: the builder of the default HTTP transport.

use super::connect::{check_proxy, with_default_port, Connector, Resolver};
use super::error::TransportError;
use super::pool::Settings;
use super::pooled::Pooled;
use super::tls::{client_config, Roots, TlsSettings};
use courier_core::{ClientIdentity, Dispatcher, HttpService};
use http::Uri;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::HttpConnector;
use std::fmt;
use std::time::Duration;
use tower::ServiceExt;

/// hyper-util's and reqwest's default: idle pooled connections are closed after 90 seconds.
const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The builder of courier's default HTTP transport: hyper's `client::conn` in a connection pool
/// of courier's, over rustls.
///
#[doc = include_str!("GUIDE.md")]
#[derive(Clone)]
#[must_use]
pub struct Transport {
    roots: Roots,
    root_certs: Vec<Vec<u8>>,
    identity: Option<ClientIdentity>,
    proxy: Option<Uri>,
    pool_idle_timeout: Option<Duration>,
    pool_max_idle_per_host: usize,
    http2_only: bool,
    connect_timeout: Option<Duration>,
}

impl Default for Transport {
    fn default() -> Self {
        Self {
            roots: Roots::Webpki,
            root_certs: Vec::new(),
            identity: None,
            proxy: None,
            pool_idle_timeout: Some(DEFAULT_POOL_IDLE_TIMEOUT),
            pool_max_idle_per_host: usize::MAX,
            http2_only: false,
            connect_timeout: None,
        }
    }
}

impl Transport {
    /// The defaults: Mozilla's roots (`webpki-roots`), no client certificate, no proxy, idle
    /// connections kept 90 seconds with no per-host limit, HTTP/1.1 or HTTP/2 as ALPN decides,
    /// and no connect timeout of our own (the operating system's applies).
    pub fn new() -> Self {
        Self::default()
    }

    /// The defaults with a [`Dispatcher`]'s settings applied: its proxy, its client identity, and
    /// its root certificates added to the trusted ones.
    pub fn from_dispatcher(dispatcher: &Dispatcher) -> Self {
        Self::new().dispatcher(dispatcher)
    }

    /// Applies a dispatcher over these settings: its proxy and identity replace ours when set, its
    /// roots are added to ours.
    pub(crate) fn dispatcher(mut self, dispatcher: &Dispatcher) -> Self {
        if let Some(proxy) = &dispatcher.proxy {
            self.proxy = Some(proxy.clone());
        }
        if let Some(identity) = &dispatcher.identity {
            self.identity = Some(identity.clone());
        }
        self.root_certs
            .extend(dispatcher.root_certs.iter().cloned());
        self
    }

    /// Trusts Mozilla's root certificates, compiled in (the `webpki-roots` crate): the same on
    /// every machine. The default.
    pub fn webpki_roots(mut self) -> Self {
        self.roots = Roots::Webpki;
        self
    }

    /// Trusts the platform's root certificates (the `rustls-native-certs` crate), read when the
    /// transport is built; [`build`](Self::build) fails if none can be read.
    pub fn native_roots(mut self) -> Self {
        self.roots = Roots::Native;
        self
    }

    /// Also trusts the certificates of this PEM file (one or more `CERTIFICATE` blocks), on top of
    /// the webpki or native roots. May be called more than once.
    pub fn root_cert(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certs.push(pem.into());
        self
    }

    /// Presents this certificate and key to servers that ask for one (mutual TLS).
    pub fn identity(mut self, identity: ClientIdentity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// Makes every connection through this HTTP proxy (`http://host:port`), with `CONNECT`: the
    /// proxy sees the destination's host and port, and for `https://` only encrypted bytes.
    pub fn proxy(mut self, proxy: Uri) -> Self {
        self.proxy = Some(proxy);
        self
    }

    /// How long an idle pooled connection is kept; `None` keeps it until the server closes it.
    /// Default 90 seconds.
    pub fn pool_idle_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.pool_idle_timeout = timeout.into();
        self
    }

    /// At most this many idle connections are kept per host, in each of the transport's pools
    /// (one for multi-threaded runtimes, one per thread of a single-threaded runtime). Default:
    /// no limit; `0` turns pooling off.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.pool_max_idle_per_host = max;
        self
    }

    /// Speaks only HTTP/2: TLS offers only `h2` in ALPN, and `http://` uses HTTP/2 with prior
    /// knowledge. Default `false`: the server's ALPN choice decides, HTTP/1.1 for `http://`.
    pub fn http2_only(mut self, enabled: bool) -> Self {
        self.http2_only = enabled;
        self
    }

    /// How long a new connection may take: the TCP connect, the proxy's `CONNECT` and the TLS
    /// handshake together. Past it the call fails with a cause that [`classify`](crate::classify)
    /// reports as [`Timeout`](crate::NetworkErrorKind::Timeout). Default: no limit of our own.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Builds the transport: a cheap-to-clone `tower::Service` whose clones share one connection
    /// pool. Fails on the first setting that cannot be used: a proxy URI that is not
    /// `http://host:port`, a PEM that holds no usable certificate or key, a key that does not
    /// match its certificate, a platform store with no usable root.
    ///
    /// Response bodies stream: hyper's body is wrapped, not buffered.
    pub fn build(self) -> Result<HttpService, TransportError> {
        self.build_pooled().map(HttpService::new)
    }

    /// [`build`](Self::build), as the concrete service the client's layers call directly.
    pub(crate) fn build_pooled(self) -> Result<Pooled, TransportError> {
        if let Some(proxy) = &self.proxy {
            check_proxy(proxy)?;
        }
        let tls = client_config(&TlsSettings {
            roots: self.roots,
            extra_roots: &self.root_certs,
            identity: self.identity.as_ref(),
            http2_only: self.http2_only,
        })?;

        let mut http = HttpConnector::new_with_resolver(Resolver::new());
        // The TLS connector hands `https://` URIs to this one too.
        http.enforce_http(false);
        http.set_nodelay(true);

        let connector = match self.proxy {
            None => Connector::new(HttpsConnector::from((http, tls)), self.connect_timeout),
            Some(proxy) => {
                // TLS runs inside the tunnel: the connector under `HttpsConnector` hands back the
                // proxy connection once `CONNECT` succeeded.
                let tunnel =
                    Tunnel::new(proxy, http).map_request(with_default_port as fn(Uri) -> Uri);
                Connector::new(HttpsConnector::from((tunnel, tls)), self.connect_timeout)
            }
        };
        Ok(Pooled::new(
            connector,
            Settings {
                idle_timeout: self.pool_idle_timeout,
                max_idle_per_host: self.pool_max_idle_per_host,
                http2_only: self.http2_only,
            },
        ))
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("roots", &self.roots)
            .field("root_certs", &self.root_certs.len())
            .field("identity", &self.identity)
            .field("proxy", &self.proxy)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("pool_max_idle_per_host", &self.pool_max_idle_per_host)
            .field("http2_only", &self.http2_only)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}
