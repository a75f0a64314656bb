//! The rustls client configuration: trusted roots, extra roots, the client identity, ALPN.

use super::error::{Missing, TransportError};
use courier_core::{BoxError, ClientIdentity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};
use std::sync::Arc;

/// Which root store server certificates are checked against (before any extra roots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Roots {
    /// Mozilla's roots compiled in (the `webpki-roots` crate): the same everywhere.
    #[default]
    Webpki,
    /// The platform's store, read when the transport is built (`rustls-native-certs`).
    Native,
}

/// Everything the TLS side of a transport needs.
pub(crate) struct TlsSettings<'a> {
    pub(crate) roots: Roots,
    pub(crate) extra_roots: &'a [Vec<u8>],
    pub(crate) identity: Option<&'a ClientIdentity>,
    pub(crate) http2_only: bool,
}

/// The rustls client configuration for these settings, with the ring provider set explicitly:
/// nothing depends on a process-wide default provider being installed.
pub(crate) fn client_config(settings: &TlsSettings<'_>) -> Result<ClientConfig, TransportError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut store = RootCertStore::empty();
    match settings.roots {
        Roots::Webpki => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Roots::Native => add_native_roots(&mut store)?,
    }
    for (index, pem) in settings.extra_roots.iter().enumerate() {
        add_pem_roots(&mut store, pem)
            .map_err(|source| TransportError::RootCert { index, source })?;
    }
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Tls { source: e.into() })?
        .with_root_certificates(store);
    let mut config = match settings.identity {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let (chain, key) = parse_identity(identity)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(identity_error)?
        }
    };
    // The order is our preference; the server picks. `http2_only` offers h2 alone so a server
    // without HTTP/2 fails the handshake instead of silently talking HTTP/1.1 to a client that
    // will only speak HTTP/2.
    config.alpn_protocols = if settings.http2_only {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(config)
}

fn add_native_roots(store: &mut RootCertStore) -> Result<(), TransportError> {
    let result = rustls_native_certs::load_native_certs();
    let (added, _ignored) = store.add_parsable_certificates(result.certs);
    if added > 0 {
        return Ok(());
    }
    let source: BoxError = match result.errors.into_iter().next() {
        Some(error) => Box::new(error),
        None => Box::new(Missing("the platform's certificate store is empty")),
    };
    Err(TransportError::NativeRoots { source })
}

/// Adds every certificate of a PEM file; a file with none is an error, not a silent no-op.
fn add_pem_roots(store: &mut RootCertStore, pem: &[u8]) -> Result<(), BoxError> {
    let mut count = 0usize;
    for cert in CertificateDer::pem_slice_iter(pem) {
        store.add(cert?)?;
        count += 1;
    }
    if count == 0 {
        return Err(Box::new(Missing("no CERTIFICATE block in the PEM")));
    }
    Ok(())
}

fn parse_identity(
    identity: &ClientIdentity,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TransportError> {
    let chain = CertificateDer::pem_slice_iter(&identity.cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TransportError::IdentityCert { source: e.into() })?;
    if chain.is_empty() {
        return Err(TransportError::IdentityCert {
            source: Box::new(Missing("no CERTIFICATE block in the PEM")),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
        .map_err(|e| TransportError::IdentityKey { source: e.into() })?;
    Ok((chain, key))
}

/// Sorts rustls's refusal of a certificate and key pair by which half is at fault.
fn identity_error(error: rustls::Error) -> TransportError {
    match error {
        rustls::Error::InconsistentKeys(_) => TransportError::IdentityMismatch {
            source: error.into(),
        },
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => {
            TransportError::IdentityCert {
                source: error.into(),
            }
        }
        _ => TransportError::IdentityKey {
            source: error.into(),
        },
    }
}
