//! `courier routes`, the real binary: the record of the exposed endpoints as JSON and as a
//! TypeScript module, written to a file, and `--check` for CI.

use serde_json::{json, Value};
use std::process::Command;

const FILE: &str = r#"
[sources.demo]
base_url = "http://127.0.0.1:9"
cancel_previous = ["users.search", "admin.list"]

[sources.demo.groups.users]
prefix = "/users"
expose = true

[sources.demo.groups.users.endpoints.get]
get = "/:id"
cache = { revalidate = 60 }

[sources.demo.groups.users.endpoints.search]
get = "/search"

[sources.demo.groups.users.endpoints.login]
post = "/login"
reads = true
sensitive_variables = true

[sources.demo.groups.users.endpoints.create]
post = ""

[sources.demo.groups.users.endpoints.events]
stream = "/events"

[sources.demo.groups.users.endpoints.room]
channel = "/rooms/:id"
send = true

[sources.demo.groups.admin.endpoints.list]
get = "/admin"
"#;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn courier(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_courier"))
        .args(args)
        .output()
        .expect("the courier binary runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn setup() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("courier.toml");
    std::fs::write(&config, FILE).unwrap();
    let config = config.to_str().unwrap().to_owned();
    (dir, config)
}

#[test]
fn the_record_names_exposed_endpoints_with_their_shapes() {
    let (_dir, config) = setup();
    let run = courier(&["routes", "--config", &config, "--source", "demo"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let record: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        record,
        json!({
            "source": "demo",
            "endpoints": {
                "users.create": { "type": "mutation" },
                "users.events": { "transport": "sse" },
                "users.get": { "type": "query", "get": true },
                "users.login": { "type": "query" },
                "users.room": { "transport": "ws", "bidirectional": true },
                "users.search": { "type": "query" },
            },
            "cancelPrevious": ["users.search"],
            "coalesce": true,
        })
    );
    let ts = courier(&["routes", "-c", &config, "-s", "demo", "--ts"]);
    assert_eq!(ts.code, Some(0), "{}", ts.stderr);
    assert!(ts.stdout.contains("const record = {"), "{}", ts.stdout);
    // A config file declares no Rust types: every endpoint is `unknown`.
    assert!(
        ts.stdout
            .contains(r#""users.create": { variables: unknown; response: unknown };"#),
        "{}",
        ts.stdout
    );
    assert!(
        ts.stdout.contains(
            "export const routes: typeof record & { readonly types?: Endpoints } = record;"
        ),
        "{}",
        ts.stdout
    );
    assert!(ts.stdout.contains("} as const;"), "{}", ts.stdout);
    assert!(ts
        .stdout
        .contains("export type EndpointPath = keyof Routes[\"endpoints\"];"));
}

#[test]
fn boundary_names_only_exposed_endpoints_and_sends_reads_as_get() {
    let (_dir, config) = setup();
    let run = courier(&["routes", "-c", &config, "-s", "demo", "--boundary"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let record: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        record,
        json!({
            "source": "demo",
            "endpoints": {
                "users.create": { "type": "mutation" },
                "users.events": { "transport": "sse" },
                "users.get": { "type": "query", "get": true },
                "users.login": { "type": "query" },
                "users.room": { "transport": "ws", "bidirectional": true },
                "users.search": { "type": "query", "get": true },
            },
            "cancelPrevious": ["users.search"],
            "coalesce": true,
            "sensitive": ["users.login"],
        })
    );
    assert!(
        !run.stdout.contains("admin"),
        "an endpoint the proxy does not expose is not named: {}",
        run.stdout
    );
}

#[test]
fn out_writes_and_check_fails_on_a_stale_file() {
    let (dir, config) = setup();
    let out = dir.path().join("routes.ts");
    let out = out.to_str().unwrap();
    let args = ["routes", "-c", &config, "-s", "demo", "--ts", "--out", out];
    let missing = courier(&[&args[..], &["--check"]].concat());
    assert_eq!(missing.code, Some(1));
    let report: Value = serde_json::from_str(missing.stderr.trim()).unwrap();
    assert_eq!(report["error"], "stale");

    let written = courier(&args);
    assert_eq!(written.code, Some(0), "{}", written.stderr);
    let summary: Value = serde_json::from_str(written.stdout.trim()).unwrap();
    assert_eq!(
        summary,
        json!({ "path": out, "endpoints": 6, "written": true })
    );

    let fresh = courier(&[&args[..], &["--check"]].concat());
    assert_eq!(fresh.code, Some(0), "{}", fresh.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(fresh.stdout.trim()).unwrap()["written"],
        false
    );

    std::fs::write(out, "// edited by hand\n").unwrap();
    let stale = courier(&[&args[..], &["--check"]].concat());
    assert_eq!(stale.code, Some(1));
    assert!(stale.stderr.contains("out of date"), "{}", stale.stderr);
}

#[test]
fn an_unknown_source_is_a_configuration_error() {
    let (_dir, config) = setup();
    let run = courier(&["routes", "-c", &config, "-s", "nope"]);
    assert_eq!(run.code, Some(2));
    let report: Value = serde_json::from_str(run.stderr.trim()).unwrap();
    assert_eq!(report["code"], "UNKNOWN_SOURCE");
}
