//! HTTPS against real local rustls servers: trust, ALPN, mutual TLS, and TLS inside a proxy
//! tunnel.

mod transport_support;

use courier_client::{classify, NetworkErrorKind, Transport, TransportError};
use courier_core::ClientIdentity;
use http::Version;
use transport_support::{
    client_identity, eventually, get, get_text, start_proxy, start_tls, Pki, TlsOptions,
};

#[tokio::test]
async fn https_get_succeeds_with_the_root_trusted() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .build()
        .unwrap();

    let (response, body) = get_text(&transport, &server.url("https", "/hi"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(body.starts_with("hello over"), "{body}");
}

#[tokio::test]
async fn https_is_refused_without_the_root() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new().build().unwrap();

    let err = get(&transport, &server.url("https", "/"))
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Tls, "{err:?}");
}

#[tokio::test]
async fn alpn_picks_http2_when_the_server_offers_it() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .build()
        .unwrap();

    let (response, body) = get_text(&transport, &server.url("https", "/"))
        .await
        .unwrap();
    assert_eq!(response.version(), Version::HTTP_2);
    assert_eq!(body, "hello over HTTP/2.0");
}

#[tokio::test]
async fn alpn_falls_back_to_http11() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::http11_only()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .build()
        .unwrap();

    let (response, body) = get_text(&transport, &server.url("https", "/"))
        .await
        .unwrap();
    assert_eq!(response.version(), Version::HTTP_11);
    assert_eq!(body, "hello over HTTP/1.1");
}

#[tokio::test]
async fn http2_only_refuses_a_server_without_h2() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::http11_only()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .http2_only(true)
        .build()
        .unwrap();

    let err = get(&transport, &server.url("https", "/"))
        .await
        .unwrap_err();
    assert_eq!(classify(&err), NetworkErrorKind::Tls, "{err:?}");

    let h2_server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let (response, _) = get_text(&transport, &h2_server.url("https", "/"))
        .await
        .unwrap();
    assert_eq!(response.version(), Version::HTTP_2);
}

/// Over TLS 1.3 the server refuses a missing client certificate after the client's side of the
/// handshake is done, with an alert the client reads with the response: typed over HTTP/1.1,
/// flattened to text by the h2 crate over HTTP/2. Both must read as `Tls`.
#[tokio::test]
async fn mutual_tls_needs_the_identity() {
    let pki = Pki::new();
    for alpn in [TlsOptions::h2_and_http11(), TlsOptions::http11_only()] {
        let options = TlsOptions {
            require_client_cert: true,
            ..alpn
        };
        let server = start_tls(&pki, options).await;
        let url = server.url("https", "/");

        let anonymous = Transport::new()
            .root_cert(pki.ca_pem.clone())
            .build()
            .unwrap();
        let err = get(&anonymous, &url).await.unwrap_err();
        assert_eq!(classify(&err), NetworkErrorKind::Tls, "{err:?}");

        let identified = Transport::new()
            .root_cert(pki.ca_pem.clone())
            .identity(client_identity(&pki))
            .build()
            .unwrap();
        let (response, _) = get_text(&identified, &url).await.unwrap();
        assert_eq!(response.status(), 200);
    }
}

#[tokio::test]
async fn https_through_a_connect_proxy() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let proxy = start_proxy().await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .proxy(proxy.uri())
        .build()
        .unwrap();

    let (response, _) = get_text(&transport, &server.url("https", "/"))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // TLS (and its ALPN) runs end to end inside the tunnel.
    assert_eq!(response.version(), Version::HTTP_2);
    assert_eq!(
        proxy.seen(),
        vec![format!("CONNECT {} HTTP/1.1", server.addr)]
    );
}

#[test]
fn bad_pem_is_a_typed_error() {
    let err = Transport::new()
        .root_cert("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
        .build()
        .unwrap_err();
    assert!(
        matches!(err, TransportError::RootCert { index: 0, .. }),
        "{err:?}"
    );

    let pki = Pki::new();
    let err = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .root_cert("no pem here")
        .build()
        .unwrap_err();
    assert!(
        matches!(err, TransportError::RootCert { index: 1, .. }),
        "{err:?}"
    );
    assert!(std::error::Error::source(&err).is_some());

    let err = Transport::new()
        .identity(ClientIdentity {
            cert_pem: b"nothing".to_vec(),
            key_pem: client_identity(&pki).key_pem,
        })
        .build()
        .unwrap_err();
    assert!(
        matches!(err, TransportError::IdentityCert { .. }),
        "{err:?}"
    );

    let err = Transport::new()
        .identity(ClientIdentity {
            cert_pem: client_identity(&pki).cert_pem,
            key_pem: b"nothing".to_vec(),
        })
        .build()
        .unwrap_err();
    assert!(matches!(err, TransportError::IdentityKey { .. }), "{err:?}");
}

#[test]
fn a_key_that_does_not_match_is_refused() {
    let pki = Pki::new();
    let err = Transport::new()
        .identity(ClientIdentity {
            cert_pem: client_identity(&pki).cert_pem,
            key_pem: pki.server_key_pem.clone().into_bytes(),
        })
        .build()
        .unwrap_err();
    assert!(
        matches!(err, TransportError::IdentityMismatch { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the client identity's private key does not match its certificate"
    );
}

#[test]
fn native_roots_build_or_say_why() {
    // Depends on the machine's store; either way the outcome is typed, never a panic.
    match Transport::new().native_roots().build() {
        Ok(_) => {}
        Err(TransportError::NativeRoots { .. }) => {}
        Err(other) => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_an_http2_origin_share_one_connection() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .build()
        .unwrap();
    let url = server.url("https", "/");
    let (first, _) = get_text(&transport, &url).await.unwrap();
    assert_eq!(first.version(), Version::HTTP_2);
    // Twenty at once, while the first call's connection is open: all on it.
    let answers = futures_util::future::join_all((0..20).map(|_| get_text(&transport, &url))).await;
    for answer in answers {
        let (response, body) = answer.unwrap();
        assert_eq!(response.version(), Version::HTTP_2);
        assert_eq!(body, "hello over HTTP/2.0");
    }
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn an_http2_connection_unused_for_the_idle_timeout_is_closed() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .pool_idle_timeout(std::time::Duration::from_millis(100))
        .build()
        .unwrap();
    let url = server.url("https", "/");
    get_text(&transport, &url).await.unwrap();
    assert!(
        eventually(|| server.closed() == 1).await,
        "the unused HTTP/2 connection is closed"
    );
    let (response, _) = get_text(&transport, &url).await.unwrap();
    assert_eq!(response.version(), Version::HTTP_2);
    assert_eq!(server.accepted(), 2);
}

#[tokio::test]
async fn without_pooling_each_http2_call_connects() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let transport = Transport::new()
        .root_cert(pki.ca_pem.clone())
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    for _ in 0..3 {
        let (response, _) = get_text(&transport, &server.url("https", "/"))
            .await
            .unwrap();
        assert_eq!(response.version(), Version::HTTP_2);
    }
    assert_eq!(server.accepted(), 3);
}
