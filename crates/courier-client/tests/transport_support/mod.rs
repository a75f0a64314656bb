//! The transport tests' helpers: the shared servers and PKI of `courier_test_support::tls`, and
//! what only courier's client needs (a client identity, GETs through an `HttpService`).

#![allow(dead_code, unreachable_pub)]

pub use courier_test_support::tls::*;

use courier_core::{Body, BoxError, ClientIdentity, HttpService};
use http::{Request, Response};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// The PKI's client certificate as courier's `ClientIdentity`.
pub fn client_identity(pki: &Pki) -> ClientIdentity {
    ClientIdentity {
        cert_pem: pki.client_cert_pem.clone().into_bytes(),
        key_pem: pki.client_key_pem.clone().into_bytes(),
    }
}

/// GETs `url` through `service`.
pub async fn get(service: &HttpService, url: &str) -> Result<Response<Body>, BoxError> {
    let request = Request::get(url).body(Body::empty()).unwrap();
    service.clone().oneshot(request).await
}

/// GETs `url` and reads the whole body.
pub async fn get_text(
    service: &HttpService,
    url: &str,
) -> Result<(Response<()>, String), BoxError> {
    let response = get(service, url).await?;
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await?.to_bytes();
    Ok((
        Response::from_parts(parts, ()),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// Polls `done` until it holds, for up to five seconds.
pub async fn eventually(done: impl Fn() -> bool) -> bool {
    for _ in 0..250 {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    done()
}
