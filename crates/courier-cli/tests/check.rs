//! `courier check` against fixture files: the success line and exit 0, and for each failure
//! code one line of JSON on stderr and exit 2.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn check(config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_courier"))
        .arg("check")
        .arg("--config")
        .arg(config)
        .output()
        .expect("the courier binary runs")
}

/// Runs `courier check` on a failing fixture; returns the stderr JSON after checking its shape.
#[track_caller]
fn fails(config: &Path, code: &str) -> Value {
    let out = check(config);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
    assert_eq!(stderr.lines().count(), 1, "exactly one line: {stderr}");
    let report: Value = serde_json::from_str(stderr.trim_end()).expect("stderr is JSON");
    let fields: Vec<&str> = report
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields.len(), 3, "{report}");
    assert_eq!(report["error"], "configuration", "{report}");
    assert_eq!(report["code"], code, "{report}");
    let message = report["message"].as_str().expect("a message");
    assert!(
        message.starts_with(code),
        "the message is the error's Display: {message}"
    );
    report
}

fn message(report: &Value) -> &str {
    report["message"].as_str().unwrap_or_default()
}

#[test]
fn the_example_config_is_valid() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/courier.toml");
    let out = check(&example);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok: 1 source (demo), 6 endpoints\n"
    );
}

#[test]
fn transport_files_resolve_beside_the_config() {
    let out = check(&fixture("tls_ok.toml"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok: 1 source (tls), 1 endpoint\n"
    );
}

#[test]
fn dotted_name() {
    let report = fails(&fixture("dotted_name.toml"), "DOTTED_NAME");
    assert!(
        message(&report).contains(r#"`sources.demo.groups.users.endpoints."a.b"`"#),
        "{report}"
    );
}

#[test]
fn reserved_endpoint_name() {
    let report = fails(
        &fixture("reserved_endpoint_name.toml"),
        "RESERVED_ENDPOINT_NAME",
    );
    assert!(
        message(&report).contains("`sources.demo.groups.users.endpoints.raw`"),
        "{report}"
    );
}

#[test]
fn cancel_previous_of_an_unknown_path() {
    let report = fails(
        &fixture("cancel_previous_unknown.toml"),
        "CANCEL_PREVIOUS_INVALID",
    );
    assert!(message(&report).contains("does not define"), "{report}");
}

#[test]
fn cancel_previous_of_a_write() {
    let report = fails(
        &fixture("cancel_previous_write.toml"),
        "CANCEL_PREVIOUS_INVALID",
    );
    assert!(message(&report).contains("writes"), "{report}");
}

#[test]
fn session_header_conflict() {
    let report = fails(
        &fixture("session_header_conflict.toml"),
        "SESSION_HEADER_CONFLICT",
    );
    assert!(
        message(&report).contains("`sources.demo.allowed_headers`"),
        "{report}"
    );
}

#[test]
fn header_never_crosses() {
    let report = fails(
        &fixture("header_never_crosses.toml"),
        "HEADER_NEVER_CROSSES",
    );
    let message = message(&report);
    assert!(
        message.contains("at `sources.demo.groups.users.endpoints.get.headers`"),
        "{report}"
    );
    assert!(
        message.contains("`transfer-encoding` is a hop-by-hop header"),
        "{report}"
    );
}

#[test]
fn source_transport_invalid() {
    let report = fails(
        &fixture("source_transport_invalid.toml"),
        "SOURCE_TRANSPORT_INVALID",
    );
    assert!(
        message(&report).contains("`sources.demo.transport.root_certs[0]`"),
        "{report}"
    );
    assert!(
        message(&report).contains("no PEM certificate"),
        "read beside the config: {report}"
    );
    let report = fails(
        &fixture("source_transport_cert_without_key.toml"),
        "SOURCE_TRANSPORT_INVALID",
    );
    assert!(message(&report).contains("both or neither"), "{report}");
}

#[test]
fn config_unknown_key() {
    let report = fails(&fixture("config_unknown_key.toml"), "CONFIG_UNKNOWN_KEY");
    let message = message(&report);
    assert!(
        message.contains("`sources.demo.groups.users.endpoints.get.cach`"),
        "{report}"
    );
    assert!(
        message.contains("`cache`"),
        "the expected keys are listed: {report}"
    );
}

#[test]
fn config_syntax() {
    let report = fails(&fixture("config_syntax.toml"), "CONFIG_SYNTAX");
    assert!(message(&report).contains("line 5, column"), "{report}");
}

#[test]
fn config_invalid() {
    let report = fails(&fixture("config_invalid.toml"), "CONFIG_INVALID");
    assert!(
        message(&report).contains("`sources.demo.groups.users.endpoints.get`"),
        "{report}"
    );
}

#[test]
fn config_io_for_a_missing_file() {
    let report = fails(&fixture("no-such-file.toml"), "CONFIG_IO");
    assert!(message(&report).contains("no-such-file.toml"), "{report}");
}

#[test]
fn usage_errors_are_claps() {
    let out = Command::new(env!("CARGO_BIN_EXE_courier"))
        .arg("check")
        .output()
        .expect("the courier binary runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--config"));

    let out = Command::new(env!("CARGO_BIN_EXE_courier"))
        .arg("--help")
        .output()
        .expect("the courier binary runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check"));
}

#[test]
fn a_source_without_base_url_is_refused_naming_the_key() {
    let report = fails(&fixture("missing_base_url.toml"), "INVALID_BASE_URL");
    assert!(
        message(&report).contains("sources.todos.base_url"),
        "the key path: {report}"
    );
    assert!(
        message(&report).contains("`todos.list`"),
        "the endpoint that needs it: {report}"
    );
}
