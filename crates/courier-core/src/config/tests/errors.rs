//! Every error a file can cause, with its code and key path.

use super::{fails, load, with_endpoint};
use crate::config::Config;
use crate::error::ErrorCode;

const ENDPOINT: &str = "sources.demo.groups.users.endpoints.get";

#[test]
fn syntax_errors_give_line_and_column() {
    let err = Config::from_toml_str("[sources.demo]\nbase_url = \n").unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigSyntax);
    assert!(err.message().starts_with("line 2, column "), "{err}");
    assert!(!err.message().contains('\n'), "{err}");

    let err = Config::from_toml_str("a = 1\na = 2\n").unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigSyntax);
    assert!(err.message().starts_with("line 2"), "{err}");
}

#[test]
fn an_unknown_key_close_to_an_expected_one_is_named() {
    let err = fails(
        &with_endpoint("delet = \"/:id\""),
        ErrorCode::ConfigUnknownKey,
        &format!("{ENDPOINT}.delet"),
    );
    assert!(err.message().ends_with("; did you mean `delete`?"), "{err}");
    let err = fails(
        "[sources.demo]\nbase_url = \"http://x\"\n[sources.demo.groups.users]\nexpos = true\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.groups.users.expos",
    );
    assert!(err.message().ends_with("; did you mean `expose`?"), "{err}");
    // Nothing close: no guess.
    let err = fails("[zzzzzz]\n", ErrorCode::ConfigUnknownKey, "zzzzzz");
    assert!(!err.message().contains("did you mean"), "{err}");
}

#[test]
fn endpoints_straight_under_a_source_are_told_they_live_in_a_group() {
    let err = fails(
        "[sources.demo]\nbase_url = \"http://x\"\n[sources.demo.endpoints.get]\nget = \"/x\"\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.endpoints",
    );
    assert!(
        err.message()
            .ends_with("; endpoints live in a group: `[sources.demo.groups.NAME.endpoints.…]`"),
        "{err}"
    );
}

#[test]
fn unknown_keys_name_their_full_path_and_the_keys_expected() {
    let err = fails(
        &with_endpoint("get = \"\"\ncach = { revalidate = 1 }"),
        ErrorCode::ConfigUnknownKey,
        &format!("{ENDPOINT}.cach"),
    );
    assert!(err.message().contains("unknown key `cach`"), "{err}");
    assert!(err.message().contains("`cache`"), "{err}");
    assert!(err.message().contains("(line 9, column 1)"), "{err}");

    fails("[proxi]\n", ErrorCode::ConfigUnknownKey, "proxi");
    fails(
        "[proxy]\nhtp = \"/x\"\n",
        ErrorCode::ConfigUnknownKey,
        "proxy.htp",
    );
    fails(
        "[sources.demo]\nbase_uri = \"http://x\"\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.base_uri",
    );
    fails(
        "[sources.demo.session]\ncookie = [\"sid\"]\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.session.cookie",
    );
    fails(
        "[sources.demo.session]\ncsrf = { cookie = \"a\", header = \"b\", extra = 1 }\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.session.csrf.extra",
    );
    fails(
        "[sources.demo.forward]\nrequest = true\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.forward.request",
    );
    fails(
        "[sources.demo.transport]\nproxi = \"http://p\"\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.transport.proxi",
    );
    fails(
        "[sources.demo.groups.users]\nprefx = \"/u\"\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.groups.users.prefx",
    );
    fails(
        &with_endpoint("get = \"\"\nretry = { max_attempt = 2 }"),
        ErrorCode::ConfigUnknownKey,
        &format!("{ENDPOINT}.retry.max_attempt"),
    );
    fails(
        &with_endpoint("get = \"\"\nretry = { backoff = { jiter = true } }"),
        ErrorCode::ConfigUnknownKey,
        &format!("{ENDPOINT}.retry.backoff.jiter"),
    );
    fails(
        &with_endpoint("get = \"\"\ncache = { ttl = 1 }"),
        ErrorCode::ConfigUnknownKey,
        &format!("{ENDPOINT}.cache.ttl"),
    );
    fails(
        "[sources.demo.groups.a.groups.\"b.c\".endpoints.x]\nget = \"\"\nnope = 1\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.groups.a.groups.\"b.c\".endpoints.x.nope",
    );
}

#[test]
fn wrong_types_name_their_key_path() {
    let err = fails(
        "[sources.demo]\ntimeout_ms = \"fast\"\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.timeout_ms",
    );
    assert!(err.message().contains("invalid type"), "{err}");
    fails(
        "[sources.demo]\ntimeout_ms = -1\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.timeout_ms",
    );
    fails(
        "[sources.demo]\nresponse_type = \"xml\"\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.response_type",
    );
    fails(
        "[sources.demo]\nbody_serializer = \"cbor\"\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.body_serializer",
    );
    fails(
        "[sources.demo]\nheaders = { a = 1 }\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.headers.a",
    );
    fails(
        "[sources.demo]\ncancel_previous = \"a.b\"\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.cancel_previous",
    );
    fails(
        "[sources.demo]\nallowed_headers = [1]\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.allowed_headers[0]",
    );
    fails(
        "[sources.demo]\ndefault_body = 3\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.default_body",
    );
    fails(
        "[sources.demo]\npath_options = [1]\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.path_options",
    );
    fails(
        "[sources.demo]\nmeta = {}\n",
        ErrorCode::ConfigUnknownKey,
        "sources.demo.meta",
    );
    fails("sources = 1\n", ErrorCode::ConfigInvalid, "sources");
    fails(
        "[sources.demo.groups]\nusers = \"x\"\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.groups.users",
    );
    fails(
        &with_endpoint("get = 1"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.get"),
    );
    fails(
        &with_endpoint("get = \"\"\nexpose = \"yes\""),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.expose"),
    );
    fails(
        &with_endpoint("get = \"\"\nretry = 3"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.retry"),
    );
    fails(
        &with_endpoint("get = \"\"\nheaders = \"x-a\""),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.headers"),
    );
    fails(
        &with_endpoint("get = \"\"\nmeta = 1"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.meta"),
    );
    fails(
        &with_endpoint("get = \"\"\nmeta = { x = nan }"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.meta.x"),
    );
    let err = fails(
        &with_endpoint("get = \"\"\nsession = \"maybe\""),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.session"),
    );
    assert!(err.message().contains("unguarded"), "{err}");
    let err = fails(
        &with_endpoint("get = \"\"\nsession = 1"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.session"),
    );
    assert!(!err.message().contains("untagged"), "{err}");
    fails(
        "[sources.demo.forward]\nrequest_id = 1\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.forward.request_id",
    );
    let err = fails(
        "[sources.demo.session]\ncsrf = { cookie = \"a\" }\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.session.csrf",
    );
    assert!(err.message().contains("missing key `header`"), "{err}");
}

#[test]
fn an_endpoint_needs_exactly_one_verb() {
    let err = fails(
        &with_endpoint("get = \"/a\"\npost = \"/b\""),
        ErrorCode::ConfigInvalid,
        ENDPOINT,
    );
    assert!(err.message().contains("both `get` and `post`"), "{err}");
    let err = fails(
        &with_endpoint("stream = \"/a\"\nchannel = \"/b\""),
        ErrorCode::ConfigInvalid,
        ENDPOINT,
    );
    assert!(err.message().contains("`stream` and `channel`"), "{err}");
    let err = fails(
        &with_endpoint("timeout_ms = 5"),
        ErrorCode::ConfigInvalid,
        ENDPOINT,
    );
    assert!(err.message().contains("has none"), "{err}");
    fails(
        "[sources.demo.groups.users.endpoints.empty]\n",
        ErrorCode::ConfigInvalid,
        "sources.demo.groups.users.endpoints.empty",
    );
}

#[test]
fn a_topic_is_refused_since_a_config_files_channels_are_served_elsewhere() {
    for verb in ["channel", "get", "stream"] {
        fails(
            &with_endpoint(&format!("{verb} = \"/x\"\ntopic = [\"id\"]")),
            ErrorCode::ConfigInvalid,
            &format!("{ENDPOINT}.topic"),
        );
    }
}

#[test]
fn keys_of_another_head_are_refused() {
    for key in ["send = true", "send = false"] {
        for verb in ["get", "post", "stream"] {
            let name = key.split(' ').next().unwrap_or_default();
            fails(
                &with_endpoint(&format!("{verb} = \"/x\"\n{key}")),
                ErrorCode::ConfigInvalid,
                &format!("{ENDPOINT}.{name}"),
            );
        }
    }
    for key in [
        "cache = {}",
        "reads = true",
        "sensitive_variables = false",
        "stream_response = true",
        "response_type = \"text\"",
    ] {
        for verb in ["stream", "channel"] {
            let name = key.split(' ').next().unwrap_or_default();
            let err = fails(
                &with_endpoint(&format!("{verb} = \"/x\"\n{key}")),
                ErrorCode::ConfigInvalid,
                &format!("{ENDPOINT}.{name}"),
            );
            assert!(err.message().contains("HTTP endpoints only"), "{err}");
        }
    }
}

#[test]
fn names_are_refused_at_their_key_path_and_other_builder_errors_under_the_source() {
    let err = fails(
        "[sources.demo.groups.users.endpoints.\"a.b\"]\nget = \"/x\"\n",
        ErrorCode::DottedName,
        "sources.demo.groups.users.endpoints.\"a.b\"",
    );
    assert!(err.message().contains("`a.b`"), "{err}");
    fails(
        "[sources.demo.groups.\"x.y\"]\nprefix = \"/x\"\n",
        ErrorCode::DottedName,
        "sources.demo.groups.\"x.y\"",
    );
    fails(
        "[sources.demo.groups.users.endpoints.raw]\nget = \"/raw\"\n",
        ErrorCode::ReservedEndpointName,
        "sources.demo.groups.users.endpoints.raw",
    );
    fails(
        "[sources.demo.groups.with]\n",
        ErrorCode::ReservedEndpointName,
        "sources.demo.groups.with",
    );
    fails(
        "[sources.demo.groups.users.endpoints.\"\"]\nget = \"/x\"\n",
        ErrorCode::EmptyName,
        "sources.demo.groups.users.endpoints.\"\"",
    );
    fails(
        "[sources.demo]\ncancel_previous = [\"users.nope\"]\n[sources.demo.groups.users.endpoints.get]\nget = \"\"\n",
        ErrorCode::CancelPreviousInvalid,
        "sources.demo.cancel_previous",
    );
    fails(
        "[sources.demo]\ncancel_previous = [\"users.create\"]\n[sources.demo.groups.users.endpoints.create]\npost = \"\"\n",
        ErrorCode::CancelPreviousInvalid,
        "sources.demo.cancel_previous",
    );
    fails(
        "[sources.demo]\nallowed_headers = [\"cookie\"]\n[sources.demo.session]\ncookies = [\"sid\"]\n",
        ErrorCode::SessionHeaderConflict,
        "sources.demo.allowed_headers",
    );
    fails(
        &format!(
            "{}[sources.demo.session]\n",
            with_endpoint("get = \"\"\nheaders = [\"set-cookie\"]")
        ),
        ErrorCode::SessionHeaderConflict,
        "sources.demo.groups.users.endpoints.get.headers",
    );
    fails(
        "[sources.demo]\nbase_url = \"ftp://x\"\n",
        ErrorCode::InvalidBaseUrl,
        "sources.demo.base_url",
    );
    fails(
        "[sources.demo]\nbase_url = \"http://x\"\n[sources.demo.groups.users]\nattempt_timeout_ms = 0\n\
         [sources.demo.groups.users.endpoints.get]\nget = \"\"\n",
        ErrorCode::InvalidOption,
        "sources.demo.groups.users.attempt_timeout_ms",
    );
    fails(
        &with_endpoint("get = \"\"\nattempt_timeout_ms = 0"),
        ErrorCode::InvalidOption,
        "sources.demo.groups.users.endpoints.get.attempt_timeout_ms",
    );
    fails(
        "[sources.demo]\nbase_url = \"/api\"\n",
        ErrorCode::InvalidBaseUrl,
        "sources.demo.base_url",
    );
    // No `base_url` at all, with an endpoint another process serves.
    fails(
        "[sources.demo.groups.users.endpoints.get]\nget = \"/:id\"\n",
        ErrorCode::InvalidBaseUrl,
        "sources.demo.base_url",
    );
    fails(
        &with_endpoint("get = \"/a?b\""),
        ErrorCode::InvalidPath,
        "sources.demo.groups.users.endpoints.get.get",
    );
    fails(
        "[sources.demo.groups.users]\nprefix = \"/a?b\"\n[sources.demo.groups.users.groups.admin.endpoints.purge]\npost = \"/{id}\"\n",
        ErrorCode::InvalidPath,
        "sources.demo.groups.users.prefix",
    );
    let err = fails(
        "[sources.demo.groups.users.groups.admin.endpoints.purge]\npost = \"/{*rest}\"\n",
        ErrorCode::InvalidPath,
        "sources.demo.groups.users.groups.admin.endpoints.purge.post",
    );
    assert!(err.message().contains("catch-all"), "{err}");
    fails(
        "[sources.demo]\nheaders = { \"bad header\" = \"x\" }\n",
        ErrorCode::InvalidHeader,
        "sources.demo.headers.bad header",
    );
    fails(
        &with_endpoint("get = \"\"\ntimeout_ms = 0"),
        ErrorCode::InvalidOption,
        "sources.demo.groups.users.endpoints.get.timeout_ms",
    );
    fails(
        "[sources.demo]\ntimeout_ms = 0\n",
        ErrorCode::InvalidOption,
        "sources.demo.timeout_ms",
    );
    fails(
        &with_endpoint("get = \"\"\nretry = { max_attempts = 0 }"),
        ErrorCode::InvalidOption,
        "sources.demo.groups.users.endpoints.get.retry",
    );
    fails(
        "[sources.demo.session]\ntrusted_origins = [\"not an origin\"]\n",
        ErrorCode::InvalidOption,
        "sources.demo.session.trusted_origins",
    );
}

#[test]
fn the_first_source_in_name_order_reports_first() {
    let text = "[sources.b.groups.raw]\n[sources.a.groups.\"x.y\"]\n";
    fails(text, ErrorCode::DottedName, "sources.a.groups.\"x.y\"");
}

#[test]
fn source_names_may_be_neither_empty_nor_dotted() {
    fails("[sources.\"\"]\n", ErrorCode::EmptyName, "sources.\"\"");
    fails(
        "[sources.\"a.b\"]\n",
        ErrorCode::DottedName,
        "sources.\"a.b\"",
    );
}

#[test]
fn proxy_paths_must_be_absolute() {
    fails(
        "[proxy]\nhttp = \"api\"\n",
        ErrorCode::ConfigInvalid,
        "proxy.http",
    );
    fails(
        "[proxy]\nsse = \"/a?b\"\n",
        ErrorCode::ConfigInvalid,
        "proxy.sse",
    );
    fails("[proxy]\nws = \"\"\n", ErrorCode::ConfigInvalid, "proxy.ws");
    fails("[proxy]\nws = 1\n", ErrorCode::ConfigInvalid, "proxy.ws");
}

#[test]
fn files_that_cannot_be_read_are_config_io() {
    let dir = tempfile::tempdir().unwrap();
    let err = Config::from_path(dir.path().join("missing.toml")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigIo);
    assert!(err.message().contains("missing.toml"), "{err}");
    let err = Config::from_path(dir.path()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigIo);

    let file = dir.path().join("latin1.toml");
    std::fs::write(&file, b"a = 1\nb = \"caf\xe9\"\n").unwrap();
    let err = Config::from_path(&file).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigSyntax);
    assert!(err.message().starts_with("line 2"), "{err}");
}

#[test]
fn from_path_loads_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("courier.toml");
    std::fs::write(&file, super::EXAMPLE).unwrap();
    let config = Config::from_path(&file).unwrap();
    assert_eq!(config.sources().len(), 1);
    let _ = load(super::EXAMPLE);
}

#[test]
fn deep_nesting_is_an_error_or_a_tree_never_a_crash() {
    // TOML's parser caps a key path at 80 keys: past that, a syntax error.
    let too_deep: String = (0..60).map(|i| format!(".groups.g{i}")).collect();
    let err = Config::from_toml_str(&format!(
        "[sources.demo{too_deep}.endpoints.e]\nget = \"\"\n"
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigSyntax);

    // The deepest TOML lets a file nest — a header at the cap, a dotted key at the cap inside
    // it — is refused before it is read, at the first table too deep.
    let header: String = (0..38).map(|i| format!(".groups.g{i}")).collect();
    let dotted: String = (0..38).map(|i| format!("groups.h{i}.")).collect();
    let text = format!(
        "[sources.demo]\nbase_url = \"http://api.example\"\n\
         [sources.demo{header}]\n{dotted}endpoints.e = {{ get = \"\" }}\n"
    );
    let err = Config::from_toml_str(&text).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConfigInvalid, "{err}");
    assert!(err.to_string().contains("more than 72 deep"), "{err}");
    let at = err.path().unwrap();
    assert!(at.starts_with("sources.demo.groups.g0.groups.g1."), "{at}");
    assert_eq!(at.matches('.').count(), 71, "{at}");
    // So are inline tables and arrays nested as deep.
    let inline = format!("x = {}1{}\n", "[".repeat(100), "]".repeat(100));
    let err = Config::from_toml_str(&inline).unwrap_err();
    assert!(
        matches!(
            err.code(),
            ErrorCode::ConfigInvalid | ErrorCode::ConfigSyntax
        ),
        "{err}"
    );

    // Groups thirty deep, what the cap leaves room for, load.
    let header: String = (0..15).map(|i| format!(".groups.g{i}")).collect();
    let dotted: String = (0..15).map(|i| format!("groups.h{i}.")).collect();
    let text = format!(
        "[sources.demo]\nbase_url = \"http://api.example\"\n\
         [sources.demo{header}]\n{dotted}endpoints.e = {{ get = \"\" }}\n"
    );
    let config = load(&text);
    assert_eq!(config.source("demo").unwrap().endpoints().len(), 1);
}

proptest::proptest! {
    #[test]
    fn any_text_loads_or_fails_without_panicking(text in "\\PC{0,200}") {
        let _ = Config::from_toml_str(&text);
    }

    #[test]
    fn toml_like_text_loads_or_fails_without_panicking(
        lines in proptest::collection::vec(
            "(\\[sources\\.[a-z.\"]{0,6}(\\.groups\\.[a-z]{1,3})?(\\.endpoints\\.[a-z.]{1,3})?\\]|(get|post|stream|channel|send|topic|cache|retry|timeout_ms|expose|session|proxy|prefix) = (\"[/:a-z?]{0,6}\"|[0-9]{1,3}|true|false|\\[\\]|\\{\\}))",
            0..12,
        )
    ) {
        let _ = Config::from_toml_str(&lines.join("\n"));
    }
}

#[test]
fn a_room_is_true_and_takes_no_keys_of_another_head() {
    fails(
        &with_endpoint("room = false"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.room"),
    );
    fails(
        &with_endpoint("room = true\nget = \"/x\""),
        ErrorCode::ConfigInvalid,
        ENDPOINT,
    );
    fails(
        &with_endpoint("room = true\nsend = true"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.send"),
    );
    fails(
        &with_endpoint("room = true\ncache = {}"),
        ErrorCode::ConfigInvalid,
        &format!("{ENDPOINT}.cache"),
    );
}

#[test]
fn a_bus_is_a_redis_url_with_a_queue_of_at_least_one() {
    fails(
        "[bus]\nredis = \"127.0.0.1:6379\"\n",
        ErrorCode::ConfigInvalid,
        "bus.redis",
    );
    fails(
        "[bus]\nredis = \"redis://127.0.0.1\"\nqueue = 0\n",
        ErrorCode::ConfigInvalid,
        "bus.queue",
    );
    fails("[bus]\nprefix = \"a:\"\n", ErrorCode::ConfigInvalid, "bus");
    fails(
        "[bus]\nhistory = 0\n",
        ErrorCode::ConfigInvalid,
        "bus.history",
    );
    fails(
        "[bus]\nhistory = 5\nhistory_age_ms = 0\n",
        ErrorCode::ConfigInvalid,
        "bus.history_age_ms",
    );
    fails(
        "[bus]\nredis = \"redis://x\"\nhistory_age_ms = 500\n",
        ErrorCode::ConfigInvalid,
        "bus.history_age_ms",
    );
    fails(
        "[bus]\nhistory = 5\nqueue = 3\n",
        ErrorCode::ConfigInvalid,
        "bus.queue",
    );
    fails(
        "[bus]\nhistory = -1\n",
        ErrorCode::ConfigInvalid,
        "bus.history",
    );
    fails(
        "[bus]\nredis = \"redis://x\"\nnats = \"nats://x\"\n",
        ErrorCode::ConfigUnknownKey,
        "bus.nats",
    );
}
