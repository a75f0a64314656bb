//! [`TransportError`]: why a transport could not be built.

use courier_core::BoxError;
use http::Uri;
use std::error::Error as StdError;
use std::fmt;

/// Why [`Transport::build`](crate::Transport::build) (or a [`TransportCache`](crate::TransportCache)
/// building a dispatcher's transport) failed: a setting that cannot be turned into a connector.
///
/// Each variant names the setting at fault; the underlying error (a PEM or rustls error) is kept
/// as the [`source`](std::error::Error::source), never flattened into the message.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// An extra root certificate is not PEM holding at least one certificate rustls accepts.
    RootCert {
        /// Which one, counted from 0 in the order given (`root_cert` calls, then a
        /// dispatcher's `root_certs`).
        index: usize,
        /// What was wrong with it.
        source: BoxError,
    },
    /// The client identity's certificate chain is not PEM holding at least one certificate.
    IdentityCert {
        /// What was wrong with it.
        source: BoxError,
    },
    /// The client identity's private key is not a PEM private key (PKCS#8, PKCS#1 or SEC1) of a
    /// kind rustls can sign with.
    IdentityKey {
        /// What was wrong with it.
        source: BoxError,
    },
    /// The client identity's private key does not belong to its certificate.
    IdentityMismatch {
        /// rustls's finding.
        source: BoxError,
    },
    /// The proxy URI is not `http://host:port`.
    Proxy {
        /// The URI as given.
        uri: Uri,
        /// Which part is wrong.
        reason: &'static str,
    },
    /// `native_roots()` was chosen but the platform's certificate store gave no usable root.
    NativeRoots {
        /// The first error met while loading the store, or a note that it was empty.
        source: BoxError,
    },
    /// rustls refused the TLS settings.
    Tls {
        /// rustls's error.
        source: BoxError,
    },
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RootCert { index, .. } => {
                write!(
                    f,
                    "root certificate #{index} is not a usable PEM certificate"
                )
            }
            Self::IdentityCert { .. } => {
                f.write_str("the client identity's certificate is not a usable PEM certificate")
            }
            Self::IdentityKey { .. } => {
                f.write_str("the client identity's private key is not a usable PEM private key")
            }
            Self::IdentityMismatch { .. } => {
                f.write_str("the client identity's private key does not match its certificate")
            }
            Self::Proxy { uri, reason } => {
                write!(f, "proxy URI `{uri}` is not http://host:port: {reason}")
            }
            Self::NativeRoots { .. } => {
                f.write_str("no usable root certificate in the platform's certificate store")
            }
            Self::Tls { .. } => f.write_str("rustls refused the TLS settings"),
        }
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Self::RootCert { source, .. }
            | Self::IdentityCert { source }
            | Self::IdentityKey { source }
            | Self::IdentityMismatch { source }
            | Self::NativeRoots { source }
            | Self::Tls { source } => Some(&**source),
            Self::Proxy { .. } => None,
        }
    }
}

/// A plain fact as an error, for causes that have no error value of their own (a PEM file with no
/// certificate in it).
#[derive(Debug)]
pub(crate) struct Missing(pub(crate) &'static str);

impl Missing {
    /// A call polled outside a tokio runtime, where no connection can be opened.
    pub(crate) const RUNTIME: Self = Self("the transport needs a tokio runtime");
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl StdError for Missing {}
