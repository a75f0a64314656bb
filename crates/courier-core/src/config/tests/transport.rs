//! `transport` tables: the proxy URL, client identity and root certificate files.

use crate::config::Config;
use crate::error::{ConfigurationError, ErrorCode};
use std::path::Path;

/// Syntactically valid PEM: what the load-time check needs (the TLS stack checks the DER).
const CERT_PEM: &str =
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";
const KEY_PEM: &str =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";

/// A directory holding `courier.toml` with `text`, and the PEM fixtures under `certs/`.
fn project(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    std::fs::write(certs.join("client.pem"), CERT_PEM).unwrap();
    std::fs::write(certs.join("client.key"), KEY_PEM).unwrap();
    std::fs::write(certs.join("ca.pem"), format!("{CERT_PEM}{CERT_PEM}")).unwrap();
    std::fs::write(certs.join("garbage.pem"), "not pem at all\n").unwrap();
    std::fs::write(
        certs.join("broken.pem"),
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("courier.toml"), text).unwrap();
    dir
}

fn load_in(dir: &Path) -> Result<Config, ConfigurationError> {
    Config::from_path(dir.join("courier.toml"))
}

#[track_caller]
fn fails_in(text: &str, path: &str) -> ConfigurationError {
    let dir = project(text);
    let err = load_in(dir.path()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::SourceTransportInvalid, "{err}");
    assert_eq!(err.path(), Some(path), "{err}");
    err
}

#[test]
fn a_full_transport_is_read_relative_to_the_file() {
    let text = r#"
        [sources.demo]
        base_url = "https://api.example.com"
        [sources.demo.transport]
        proxy = "http://127.0.0.1:3128"
        client_cert = "certs/client.pem"
        client_key = "certs/client.key"
        root_certs = ["certs/ca.pem", "certs/client.pem"]

        [sources.demo.groups.direct]
        transport = {}
        [sources.demo.groups.direct.endpoints.a]
        get = "/a"

        [sources.demo.groups.inherits.endpoints.b]
        get = "/b"
    "#;
    let dir = project(text);
    let config = load_in(dir.path()).unwrap();
    let demo = config.source("demo").unwrap();

    let dispatcher = demo.options().transport.dispatcher.as_ref().unwrap();
    assert_eq!(
        dispatcher.proxy.as_ref().unwrap().to_string(),
        "http://127.0.0.1:3128/"
    );
    let identity = dispatcher.identity.as_ref().unwrap();
    assert_eq!(identity.cert_pem, CERT_PEM.as_bytes());
    assert_eq!(identity.key_pem, KEY_PEM.as_bytes());
    assert_eq!(dispatcher.root_certs.len(), 2);
    assert_eq!(dispatcher.root_certs[1], CERT_PEM.as_bytes());

    let inherits = demo.endpoint("inherits.b").unwrap().transport();
    assert!(inherits.dispatcher.as_ref().unwrap().proxy.is_some());
    // An empty table on a group is a dispatcher of its own: direct, no identity, no extra roots.
    let direct = demo.endpoint("direct.a").unwrap().transport();
    let direct = direct.dispatcher.as_ref().unwrap();
    assert!(direct.proxy.is_none() && direct.identity.is_none() && direct.root_certs.is_empty());
}

#[test]
fn group_transports_are_read_too() {
    let text = r#"
        [sources.demo]
        base_url = "https://api.example.com"
        [sources.demo.groups.secure]
        transport = { root_certs = ["certs/ca.pem"], proxy = "https://proxy.internal:8443" }
        [sources.demo.groups.secure.endpoints.a]
        get = "/a"
    "#;
    let dir = project(text);
    let config = load_in(dir.path()).unwrap();
    let a = config.source("demo").unwrap().endpoint("secure.a").unwrap();
    let dispatcher = a.transport().dispatcher.as_ref().unwrap();
    assert_eq!(dispatcher.root_certs.len(), 1);
    assert_eq!(
        dispatcher.proxy.as_ref().unwrap().host(),
        Some("proxy.internal")
    );
}

#[test]
fn a_bad_proxy_url_is_refused() {
    let err = fails_in(
        "[sources.demo.transport]\nproxy = \"http://bad host\"\n",
        "sources.demo.transport.proxy",
    );
    assert!(err.message().contains("not a URL"), "{err}");
    // Parses, but is no proxy: the builder's own check.
    fails_in(
        "[sources.demo.transport]\nproxy = \"socks5://127.0.0.1:1080\"\n",
        "sources.demo.transport.proxy",
    );
    fails_in(
        "[sources.demo.transport]\nproxy = \"/relative\"\n",
        "sources.demo.transport.proxy",
    );
    fails_in(
        "[sources.demo.groups.g.transport]\nproxy = \"ftp://x\"\n",
        "sources.demo.groups.g.transport.proxy",
    );
}

#[test]
fn a_client_cert_needs_its_key_and_the_other_way_round() {
    let err = fails_in(
        "[sources.demo.transport]\nclient_cert = \"certs/client.pem\"\n",
        "sources.demo.transport.client_cert",
    );
    assert!(err.message().contains("both or neither"), "{err}");
    fails_in(
        "[sources.demo.groups.g.transport]\nclient_key = \"certs/client.key\"\n",
        "sources.demo.groups.g.transport.client_key",
    );
}

#[test]
fn unreadable_or_non_pem_files_are_refused_with_their_key() {
    let err = fails_in(
        "[sources.demo.transport]\nroot_certs = [\"certs/ca.pem\", \"certs/missing.pem\"]\n",
        "sources.demo.transport.root_certs[1]",
    );
    assert!(err.message().contains("cannot read"), "{err}");
    let err = fails_in(
        "[sources.demo.transport]\nroot_certs = [\"certs/garbage.pem\"]\n",
        "sources.demo.transport.root_certs[0]",
    );
    assert!(err.message().contains("no PEM certificate"), "{err}");
    fails_in(
        "[sources.demo.transport]\nroot_certs = [\"certs/broken.pem\"]\n",
        "sources.demo.transport.root_certs[0]",
    );
    fails_in(
        "[sources.demo.transport]\nroot_certs = [\"certs\"]\n",
        "sources.demo.transport.root_certs[0]",
    );
    // A key where the certificate belongs, and a certificate where the key belongs.
    fails_in(
        "[sources.demo.transport]\nclient_cert = \"certs/client.key\"\nclient_key = \"certs/client.key\"\n",
        "sources.demo.transport.client_cert",
    );
    let err = fails_in(
        "[sources.demo.transport]\nclient_cert = \"certs/client.pem\"\nclient_key = \"certs/client.pem\"\n",
        "sources.demo.transport.client_key",
    );
    assert!(err.message().contains("no PEM private key"), "{err}");
}

#[test]
fn from_toml_str_resolves_files_against_the_current_directory() {
    let err = Config::from_toml_str(
        "[sources.demo.transport]\nroot_certs = [\"surely/not/here/ca.pem\"]\n",
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::SourceTransportInvalid);
    assert!(err.message().contains("`surely/not/here/ca.pem`"), "{err}");
}
