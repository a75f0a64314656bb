//! The direct client over HTTPS: a server on 127.0.0.1 with a certificate from a test CA
//! (rcgen), trusted through the default transport or through a group's `Dispatcher`.

mod transport_support;

use courier_client::{Client, NetworkErrorKind, Transport};
use courier_core::{ApiDef, Dispatcher, GroupDef, HttpEndpoint, ResponseType};
use serde_json::json;
use transport_support::{client_identity, start_tls, Pki, TlsOptions};

fn api(base: &str, group: GroupDef) -> ApiDef {
    ApiDef::builder()
        .base_url(base)
        .response_type(ResponseType::Text)
        .group("g", group.endpoint("hello", HttpEndpoint::get("/hello")))
        .build()
        .unwrap()
}

#[tokio::test]
async fn https_with_the_test_ca_trusted_by_the_default_transport() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let api = api(&server.url("https", ""), GroupDef::new());
    let client = Client::builder(api)
        .transport(Transport::new().root_cert(pki.ca_pem.clone()))
        .build()
        .unwrap();
    let res = client.call("g.hello", json!({})).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.data, json!("hello over HTTP/2.0"), "h2 chosen by ALPN");
}

#[tokio::test]
async fn https_trusted_through_a_groups_dispatcher() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::http11_only()).await;
    let group = GroupDef::new().dispatcher(Dispatcher::new().root_cert(pki.ca_pem.clone()));
    let client = Client::new(api(&server.url("https", ""), group)).unwrap();
    let res = client.call("g.hello", json!({})).await.unwrap();
    assert_eq!(res.data, json!("hello over HTTP/1.1"));
}

#[tokio::test]
async fn an_untrusted_certificate_is_a_tls_failure_with_status_zero() {
    let pki = Pki::new();
    let server = start_tls(&pki, TlsOptions::h2_and_http11()).await;
    let client = Client::new(api(&server.url("https", ""), GroupDef::new())).unwrap();
    let err = client.call("g.hello", json!({})).await.unwrap_err();
    assert!(err.is_network() && err.is_connect(), "{err:?}");
    assert_eq!(err.network(), Some(NetworkErrorKind::Tls));
    assert_eq!(err.status_code(), 0);
}

#[tokio::test]
async fn mutual_tls_through_a_dispatchers_identity() {
    let pki = Pki::new();
    let options = TlsOptions {
        require_client_cert: true,
        ..TlsOptions::http11_only()
    };
    let server = start_tls(&pki, options).await;
    let trusted = Dispatcher::new().root_cert(pki.ca_pem.clone());
    let without = Client::new(api(
        &server.url("https", ""),
        GroupDef::new().dispatcher(trusted.clone()),
    ))
    .unwrap();
    let err = without.call("g.hello", json!({})).await.unwrap_err();
    assert!(err.is_network(), "{err:?}");

    let with = GroupDef::new().dispatcher(trusted.identity(client_identity(&pki)));
    let client = Client::new(api(&server.url("https", ""), with)).unwrap();
    let res = client.call("g.hello", json!({})).await.unwrap();
    assert_eq!(res.data, json!("hello over HTTP/1.1"));
}
