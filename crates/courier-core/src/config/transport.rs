//! `transport` tables: an HTTP proxy, a client certificate and extra root certificates, read
//! into a [`Dispatcher`] when the file is loaded.
//!
//! Certificate files are read here, relative to the config file's directory, and checked to
//! hold PEM of the right kind; whether the proxy URL's scheme and host are usable is the
//! builder's check (`check_transport`), shared with code that builds a `Dispatcher` by hand.

use super::key_path::KeyPath;
use super::raw::RawTransport;
use crate::error::{ConfigurationError, ErrorCode};
use crate::transport::{ClientIdentity, Dispatcher};
use http::Uri;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;

/// The dispatcher a `transport` table at `at` describes; file names resolve against `base`.
pub(super) fn dispatcher(
    raw: RawTransport,
    at: &KeyPath,
    base: &Path,
) -> Result<Dispatcher, ConfigurationError> {
    let mut dispatcher = Dispatcher::new();
    if let Some(proxy) = raw.proxy {
        let uri: Uri = proxy.parse().map_err(|e| {
            invalid(
                at.key("proxy"),
                format!("the proxy `{proxy}` is not a URL: {e}"),
            )
        })?;
        dispatcher = dispatcher.proxy(uri);
    }
    match (raw.client_cert, raw.client_key) {
        (Some(cert), Some(key)) => {
            let cert_at = at.key("client_cert");
            let cert_pem = read(&cert, base, &cert_at)?;
            check_certificates(&cert_pem, &cert, &cert_at)?;
            let key_at = at.key("client_key");
            let key_pem = read(&key, base, &key_at)?;
            if PrivateKeyDer::from_pem_slice(&key_pem).is_err() {
                return Err(invalid(key_at, format!("`{key}` holds no PEM private key")));
            }
            dispatcher = dispatcher.identity(ClientIdentity { cert_pem, key_pem });
        }
        (Some(_), None) => {
            return Err(invalid(
                at.key("client_cert"),
                "client_cert needs client_key beside it (both or neither)".into(),
            ))
        }
        (None, Some(_)) => {
            return Err(invalid(
                at.key("client_key"),
                "client_key needs client_cert beside it (both or neither)".into(),
            ))
        }
        (None, None) => {}
    }
    for (i, file) in raw.root_certs.iter().enumerate() {
        let root_at = at.key("root_certs").index(i);
        let pem = read(file, base, &root_at)?;
        check_certificates(&pem, file, &root_at)?;
        dispatcher = dispatcher.root_cert(pem);
    }
    Ok(dispatcher)
}

fn read(file: &str, base: &Path, at: &KeyPath) -> Result<Vec<u8>, ConfigurationError> {
    let resolved = base.join(file);
    std::fs::read(&resolved).map_err(|e| {
        invalid(
            at.clone(),
            format!("cannot read `{}`: {e}", resolved.display()),
        )
    })
}

/// At least one certificate, and every PEM certificate block well-formed.
fn check_certificates(pem: &[u8], file: &str, at: &KeyPath) -> Result<(), ConfigurationError> {
    let mut count = 0usize;
    for cert in CertificateDer::pem_slice_iter(pem) {
        cert.map_err(|e| {
            invalid(
                at.clone(),
                format!("`{file}` holds a malformed PEM certificate: {e}"),
            )
        })?;
        count += 1;
    }
    if count == 0 {
        return Err(invalid(
            at.clone(),
            format!("`{file}` holds no PEM certificate (-----BEGIN CERTIFICATE-----)"),
        ));
    }
    Ok(())
}

fn invalid(at: KeyPath, message: String) -> ConfigurationError {
    ConfigurationError::new(ErrorCode::SourceTransportInvalid, message).at(at.as_str())
}
