//! Every key of the file reaches the tree.

use super::{fails, load, with_endpoint, EXAMPLE};
use crate::error::ErrorCode;
use crate::options::{CacheOptions, HeaderToggle, ResponseType, RetryPolicy, SessionMode};
use crate::settings::RetrySetting;
use crate::tree::endpoint::Topic;
use crate::tree::path_options::PathOptions;
use crate::{EndpointDef, Kind};
use serde_json::{json, Value};
use std::time::Duration;

fn fixed(options: &PathOptions) -> Value {
    match options {
        PathOptions::Fixed(map) => Value::Object(map.as_ref().clone()),
        PathOptions::Computed(_) => Value::Null,
    }
}

#[test]
fn the_example_loads_with_every_source_key() {
    let config = load(EXAMPLE);
    assert_eq!(config.proxy().http, "/api/request");
    assert_eq!(config.proxy().sse, "/api/sse");
    assert_eq!(config.proxy().ws.as_deref(), Some("/api/ws"));
    assert_eq!(config.sources().keys().collect::<Vec<_>>(), ["demo"]);

    let demo = config.source("demo").unwrap().options();
    assert_eq!(
        demo.base_url.as_ref().unwrap().to_string(),
        "http://127.0.0.1:9000/"
    );
    assert_eq!(
        demo.settings.get_timeout(),
        Some(Duration::from_millis(5000))
    );
    assert_eq!(demo.headers["x-api-key"], "secret");
    assert_eq!(
        Value::Object(demo.default_query_params.clone()),
        json!({ "lang": "en" })
    );
    assert_eq!(
        Value::Object(demo.default_body.clone()),
        json!({ "client": "web" })
    );
    assert_eq!(demo.response_type, ResponseType::Json);
    assert!(demo.coalesces());
    assert_eq!(demo.cancel_previous, ["users.search"]);
    assert_eq!(demo.allowed_headers, ["x-tenant"]);
    assert_eq!(
        fixed(demo.path_options.as_ref().unwrap()),
        json!({ "tenant": "acme" })
    );
    assert_eq!(demo.settings.get_expose(), None);
    assert!(demo.transport.dispatcher.is_none());

    let session = demo.session.as_ref().unwrap();
    assert_eq!(session.cookies, ["sid", "sess_*"]);
    assert_eq!(session.bearer.as_deref(), Some("access_token"));
    let csrf = session.csrf.as_ref().unwrap();
    assert_eq!(
        (csrf.cookie.as_str(), csrf.header.as_str()),
        ("csrf_token", "x-csrf-token")
    );
    assert!(session.pass_set_cookie);
    assert_eq!(session.trusted_origins, ["https://app.example.com"]);

    let forward = demo.forward.as_ref().unwrap();
    assert_eq!(forward.request_id, HeaderToggle::Enabled(true));
    assert!(forward.trace && forward.user_agent && forward.locale);
    assert_eq!(forward.client_address, HeaderToggle::Enabled(true));
    assert_eq!(forward.headers, ["x-tenant"]);
}

#[test]
fn the_example_resolves_templates_exposure_and_path_options() {
    let config = load(EXAMPLE);
    let demo = config.source("demo").unwrap();
    let paths: Vec<_> = demo
        .endpoints()
        .iter()
        .map(|e| e.path().to_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "users.create",
            "users.events",
            "users.get",
            "users.posts.list",
            "users.room",
            "users.search"
        ]
    );

    let list = demo.endpoint("users.posts.list").unwrap();
    assert_eq!(list.template().unwrap().as_str(), "/users/:id/posts");
    assert!(
        list.is_exposed(),
        "the group's expose reaches nested groups"
    );
    assert_eq!(list.path_options().len(), 1);
    assert_eq!(fixed(&list.path_options()[0]), json!({ "tenant": "acme" }));

    let get = demo.endpoint("users.get").unwrap();
    assert_eq!(get.template().unwrap().as_str(), "/users/:id");
    let http = get.definition().as_http().unwrap();
    assert_eq!(http.kind(), Kind::Query);
    assert_eq!(
        http.cache_options(),
        Some(&CacheOptions::new().revalidate(60))
    );
    assert_eq!(http.options().headers, ["x-extra"]);
    assert_eq!(
        http.options().settings.get_timeout(),
        Some(Duration::from_secs(1))
    );
    let allowed: Vec<_> = get.allowed_headers().iter().map(|h| h.as_str()).collect();
    assert_eq!(allowed, ["x-tenant", "x-extra"]);

    let search = demo
        .endpoint("users.search")
        .unwrap()
        .definition()
        .options();
    assert_eq!(
        search.settings.get_retry(),
        Some(RetryPolicy::new().max_attempts(2).into())
    );

    let create = demo.endpoint("users.create").unwrap();
    let http = create.definition().as_http().unwrap();
    assert_eq!(http.kind(), Kind::Mutation);
    assert!(!http.is_sensitive());
    assert_eq!(http.options().settings.get_expose(), Some(true));
    assert_eq!(http.options().session, SessionMode::Unguarded);
    assert!(!http.options().forward);

    let events = demo.endpoint("users.events").unwrap();
    assert!(events.definition().as_stream().is_some());
    assert_eq!(events.template().unwrap().as_str(), "/users/events");

    let room = demo.endpoint("users.room").unwrap();
    let channel = room.definition().as_channel().unwrap();
    assert!(channel.is_bidirectional());
    assert!(matches!(channel.topic_spec(), Topic::AllVariables));
    assert_eq!(room.template().unwrap().as_str(), "/users/rooms/:id");
}

#[test]
fn every_verb_makes_its_head() {
    for (verb, method, kind) in [
        ("get", "GET", Kind::Query),
        ("post", "POST", Kind::Mutation),
        ("put", "PUT", Kind::Mutation),
        ("patch", "PATCH", Kind::Mutation),
        ("del", "DELETE", Kind::Mutation),
        ("delete", "DELETE", Kind::Mutation),
    ] {
        let config = load(&with_endpoint(&format!("{verb} = \"/x\"")));
        let endpoint = config
            .source("demo")
            .unwrap()
            .endpoint("users.get")
            .unwrap();
        let http = endpoint.definition().as_http().unwrap();
        assert_eq!(http.fixed_method().unwrap().as_str(), method);
        assert_eq!(http.kind(), kind);
        assert_eq!(endpoint.template().unwrap().as_str(), "/users/x");
    }
    let config = load(&with_endpoint("stream = \"/s\""));
    let def = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap()
        .definition()
        .clone();
    assert!(matches!(def, EndpointDef::Stream(_)));
    let config = load(&with_endpoint("channel = \"/c\""));
    let def = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap()
        .definition()
        .clone();
    let channel = def.as_channel().unwrap();
    assert!(!channel.is_bidirectional());
    assert!(matches!(channel.topic_spec(), Topic::AllVariables));
}

#[test]
fn http_only_keys_reach_the_endpoint() {
    let config = load(&with_endpoint(
        "post = \"/search\"\nreads = true\nresponse_type = \"text\"\nstream_response = true\n\
         sensitive_variables = true\ncache = {}\n",
    ));
    let endpoint = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap();
    let http = endpoint.definition().as_http().unwrap();
    assert!(http.is_read());
    assert_eq!(http.response_type_override(), Some(ResponseType::Text));
    assert!(http.is_stream_response());
    assert!(http.is_sensitive());
    assert_eq!(http.cache_options(), Some(&CacheOptions::new()));

    let config = load(&with_endpoint(
        "post = \"\"\nreads = false\nstream_response = false\nsensitive_variables = false",
    ));
    let http = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap()
        .definition()
        .clone();
    let http = http.as_http().unwrap();
    assert!(!http.is_read() && !http.is_stream_response() && !http.is_sensitive());
}

#[test]
fn shared_keys_reach_every_head() {
    for verb in ["get", "stream", "channel"] {
        let config = load(&with_endpoint(&format!(
            "{verb} = \"/x\"\nexpose = false\nheaders = [\"x-a\", \"x-b\"]\ntimeout_ms = 250\n\
             retry = false\nsession = false\nforward = false\n\
             meta = {{ owner = \"team-a\", weight = 2, tags = [\"a\"] }}"
        )));
        let endpoint = config
            .source("demo")
            .unwrap()
            .endpoint("users.get")
            .unwrap();
        let options = endpoint.definition().options();
        assert_eq!(options.settings.get_expose(), Some(false), "{verb}");
        assert!(!endpoint.is_exposed());
        assert_eq!(options.headers, ["x-a", "x-b"]);
        assert_eq!(
            options.settings.get_timeout(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(options.settings.get_retry(), Some(RetrySetting::Off));
        assert_eq!(options.session, SessionMode::Off);
        assert!(!options.forward);
        assert_eq!(
            Value::Object(options.meta.clone()),
            json!({ "owner": "team-a", "weight": 2, "tags": ["a"] })
        );
    }
}

#[test]
fn retry_takes_true_false_or_a_policy_table() {
    let retry = |value: &str| {
        let config = load(&with_endpoint(&format!("get = \"\"\nretry = {value}")));
        let endpoint = config
            .source("demo")
            .unwrap()
            .endpoint("users.get")
            .unwrap();
        endpoint.meta().get_retry().clone()
    };
    assert_eq!(retry("true"), RetryPolicy::default().into());
    assert_eq!(retry("false"), RetrySetting::Off);
    let table = "{ max_attempts = 5, statuses = [503], writes = true, honor_retry_after = false, \
                 backoff = { initial_ms = 10, max_ms = 20, factor = 1.5, jitter = false } }";
    let RetrySetting::Policy(policy) = retry(table) else {
        panic!("a table is a policy");
    };
    assert_eq!(policy.max_attempts, 5);
    assert_eq!(policy.statuses, [503]);
    assert!(policy.writes && !policy.honor_retry_after);
    assert_eq!((policy.backoff.initial_ms, policy.backoff.max_ms), (10, 20));
    assert!((policy.backoff.factor - 1.5).abs() < f64::EPSILON && !policy.backoff.jitter);

    let config = load(&with_endpoint("get = \"\""));
    let endpoint = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap();
    assert_eq!(endpoint.meta().get_retry(), &RetrySetting::Inherit);
}

#[test]
fn session_modes_and_exposure_resolve_nearest_first() {
    let text = r#"
        [sources.demo]
        base_url = "http://127.0.0.1:9000"
        expose = true

        [sources.demo.groups.open.endpoints.a]
        get = "/a"
        session = true

        [sources.demo.groups.open.endpoints.hidden]
        get = "/h"
        expose = false

        [sources.demo.groups.closed]
        expose = false

        [sources.demo.groups.closed.endpoints.b]
        get = "/b"

        [sources.demo.groups.closed.endpoints.shown]
        get = "/s"
        expose = true

        [sources.demo.groups.closed.groups.inner]
        expose = true

        [sources.demo.groups.closed.groups.inner.endpoints.c]
        get = "/c"
    "#;
    let config = load(text);
    let demo = config.source("demo").unwrap();
    let exposed = |path: &str| demo.endpoint(path).unwrap().is_exposed();
    assert_eq!(demo.options().settings.get_expose(), Some(true));
    assert!(exposed("open.a"));
    assert!(!exposed("open.hidden"));
    assert!(!exposed("closed.b"));
    assert!(exposed("closed.shown"));
    assert!(exposed("closed.inner.c"));
    let a = demo.endpoint("open.a").unwrap().definition().options();
    assert_eq!(a.session, SessionMode::On);
}

#[test]
fn group_path_options_chain_after_the_source() {
    let text = r#"
        [sources.demo]
        base_url = "http://127.0.0.1:9000/v1"
        path_options = { tenant = "acme", region = "eu" }

        [sources.demo.groups.orgs]
        prefix = "/orgs/:tenant"
        path_options = { tenant = "beta", when = 1979-05-27 }

        [sources.demo.groups.orgs.endpoints.list]
        get = ""
    "#;
    let config = load(text);
    let list = config
        .source("demo")
        .unwrap()
        .endpoint("orgs.list")
        .unwrap();
    assert_eq!(list.template().unwrap().as_str(), "/orgs/:tenant");
    let chain: Vec<_> = list.path_options().iter().map(fixed).collect();
    assert_eq!(
        chain,
        [
            json!({ "tenant": "acme", "region": "eu" }),
            json!({ "tenant": "beta", "when": "1979-05-27" })
        ]
    );
}

#[test]
fn defaults_apply_when_keys_are_absent() {
    let config = load("");
    assert_eq!(config.proxy(), &super::super::ProxyPaths::default());
    assert!(config.sources().is_empty());

    let config = load("[proxy]\nws = \"/ws\"\n[sources.bare]\n");
    assert_eq!(config.proxy().http, "/api/request");
    assert_eq!(config.proxy().ws.as_deref(), Some("/ws"));
    let bare = config.source("bare").unwrap();
    assert!(bare.endpoints().is_empty());
    let options = bare.options();
    assert!(options.base_url.is_none() && options.session.is_none() && options.forward.is_none());
    assert!(options.coalesces() && options.settings.get_expose().is_none());
    assert_eq!(options.response_type, ResponseType::Json);
    assert!(options.body_serializer.is_none());
}

#[test]
fn response_types_take_the_specifications_names_too() {
    for (name, expected) in [
        ("json", ResponseType::Json),
        ("text", ResponseType::Text),
        ("bytes", ResponseType::Bytes),
        ("blob", ResponseType::Bytes),
        ("arrayBuffer", ResponseType::Bytes),
        ("form", ResponseType::Form),
        ("formData", ResponseType::Form),
    ] {
        let text = format!(
            "[sources.s]\nbase_url = \"https://api.example.com\"\nresponse_type = \"{name}\"\n\
             [sources.s.groups.g.endpoints.e]\nget = \"\"\nresponse_type = \"{name}\"\n"
        );
        let config: super::super::Config = text.parse().unwrap();
        let source = config.source("s").unwrap();
        assert_eq!(source.options().response_type, expected, "{name}");
        let endpoint = source.endpoint("g.e").unwrap();
        assert_eq!(
            endpoint
                .definition()
                .as_http()
                .unwrap()
                .response_type_override(),
            Some(expected),
            "{name}"
        );
    }
    let refused = "[sources.s]\nbase_url = \"https://api.example.com\"\nresponse_type = \"xml\"\n"
        .parse::<super::super::Config>()
        .unwrap_err();
    assert!(refused.to_string().contains("response_type"), "{refused}");
}

#[test]
fn source_scalars_other_than_the_example() {
    let text = r#"
        [sources.other]
        base_url = "https://api.example.com"
        response_type = "form"
        coalesce = false
        body_serializer = "json"
        expose = true

        [sources.other.forward]
        request_id = "x-correlation-id"
        client_address = "x-real-ip"
    "#;
    let config: super::super::Config = text.parse().unwrap();
    let other = config.source("other").unwrap().options();
    assert_eq!(other.response_type, ResponseType::Form);
    assert!(!other.coalesces() && other.settings.get_expose() == Some(true));
    assert!(
        other.body_serializer.is_none(),
        "json is the default encoder"
    );
    let forward = other.forward.as_ref().unwrap();
    assert_eq!(
        forward.request_id,
        HeaderToggle::Header("x-correlation-id".into())
    );
    assert_eq!(forward.client_address.header_or("x"), Some("x-real-ip"));
    assert!(!forward.trace);
}

#[test]
fn urlencoded_bodies_use_the_urlencoded_serializer() {
    let config = load("[sources.form]\nbody_serializer = \"urlencoded\"\n");
    let serializer = config
        .source("form")
        .unwrap()
        .options()
        .body_serializer
        .clone()
        .unwrap();
    let body = json!({ "a": "b c", "n": 1 });
    let encoded = serializer.serialize(body.as_object().unwrap()).unwrap();
    assert_eq!(
        encoded.content_type.unwrap(),
        "application/x-www-form-urlencoded"
    );
    assert!(!encoded.bytes.is_empty());
}

#[test]
fn into_sources_hands_over_the_built_trees() {
    let sources = load(EXAMPLE).into_sources();
    assert_eq!(sources["demo"].endpoints().len(), 6);
}

#[test]
fn deduplicate_and_the_cache_times_reach_the_tree() {
    let text =
        with_endpoint("get = \"/:id\"\ncache = { revalidate = 60, stale_while_revalidate = 30 }\n")
            .replace("[sources.demo]\n", "[sources.demo]\ndeduplicate = true\n");
    let config = load(&text);
    let demo = config.source("demo").unwrap();
    assert!(demo.options().deduplicate);
    let endpoint = demo.endpoint("users.get").unwrap();
    assert_eq!(
        endpoint.definition().as_http().unwrap().cache_options(),
        Some(
            &CacheOptions::new()
                .revalidate(60)
                .stale_while_revalidate(30)
        )
    );
    // A deduplicating source's reads are cancelled by newer calls, and carry their cache.
    assert!(endpoint.meta().cancels_previous());
    assert_eq!(
        endpoint.meta().get_cache().and_then(|c| c.revalidate),
        Some(60)
    );
}

#[test]
fn max_in_flight_reaches_the_source_and_zero_is_refused() {
    let text = with_endpoint("get = \"/:id\"\n")
        .replace("[sources.demo]\n", "[sources.demo]\nmax_in_flight = 64\n");
    assert_eq!(
        load(&text).source("demo").unwrap().options().max_in_flight,
        Some(64)
    );
    assert_eq!(
        load(&with_endpoint("get = \"/:id\"\n"))
            .source("demo")
            .unwrap()
            .options()
            .max_in_flight,
        None
    );
    let refused = with_endpoint("get = \"/:id\"\n")
        .replace("[sources.demo]\n", "[sources.demo]\nmax_in_flight = 0\n")
        .parse::<super::super::Config>()
        .unwrap_err();
    assert!(refused.to_string().contains("max_in_flight"), "{refused}");
}

#[test]
fn the_rate_limit_and_its_burst_are_read_and_zero_or_a_lone_burst_refused() {
    let limits = |text: &str| load(text).proxy_limits().clone();
    let both = limits("[proxy]\nrate_limit = 20\nrate_burst = 50\n");
    assert_eq!(both.rate_limit.map(|n| n.get()), Some(20));
    assert_eq!(both.rate_burst.map(|n| n.get()), Some(50));
    let rate_only = limits("[proxy]\nrate_limit = 5\n");
    assert_eq!(rate_only.rate_limit.map(|n| n.get()), Some(5));
    assert_eq!(rate_only.rate_burst, None);
    assert_eq!(limits("").rate_limit, None, "off by default");

    fails(
        "[proxy]\nrate_limit = 0\n",
        ErrorCode::ConfigInvalid,
        "proxy.rate_limit",
    );
    fails(
        "[proxy]\nrate_limit = 5\nrate_burst = 0\n",
        ErrorCode::ConfigInvalid,
        "proxy.rate_burst",
    );
    let lone = fails(
        "[proxy]\nrate_burst = 10\n",
        ErrorCode::ConfigInvalid,
        "proxy.rate_burst",
    );
    assert!(lone.to_string().contains("rate_limit"), "{lone}");
    "[proxy]\nrate_limit = -1\n"
        .parse::<super::super::Config>()
        .expect_err("a negative rate");
}

#[test]
fn a_cache_at_the_source_or_a_group_reaches_their_reads() {
    let text = with_endpoint("get = \"/:id\"\n")
        .replace(
            "[sources.demo]\n",
            "[sources.demo]\ncache = { revalidate = 300 }\n",
        )
        .replace(
            "prefix = \"/users\"\n",
            "prefix = \"/users\"\ncache = { revalidate = 30 }\n",
        );
    let config = load(&text);
    let endpoint = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap();
    assert_eq!(
        endpoint.meta().get_cache().and_then(|c| c.revalidate),
        Some(30)
    );
    let text = with_endpoint("stream = \"/events\"\ncache = { revalidate = 30 }\n");
    fails(
        &text,
        ErrorCode::ConfigInvalid,
        "sources.demo.groups.users.endpoints.get.cache",
    );
}

#[test]
fn a_room_is_a_two_way_channel_served_here_and_the_bus_is_read() {
    let config = load(&format!(
        "[bus]\nredis = \"redis://:pw@127.0.0.1:6379/1\"\nprefix = \"app:\"\nqueue = 64\n\n{}",
        with_endpoint("room = true\ntopic = [\"id\"]")
    ));
    let bus = config.bus().unwrap();
    assert_eq!(
        (
            bus.redis.as_deref(),
            bus.prefix.as_deref(),
            bus.queue,
            bus.history
        ),
        (
            Some("redis://:pw@127.0.0.1:6379/1"),
            Some("app:"),
            Some(64),
            None
        )
    );
    let room = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap();
    let channel = room.definition().as_channel().unwrap();
    assert!(matches!(
        channel.source(),
        crate::tree::endpoint::ChannelSource::Implemented(_)
    ));
    assert_eq!(
        channel
            .topic_spec()
            .key(&serde_json::json!({ "id": "lobby", "user": "ada" })),
        r#"{"id":"lobby"}"#
    );
    assert!(load(&with_endpoint("get = \"/x\"")).bus().is_none());
}

#[test]
fn layer_settings_are_read_at_every_level_the_nearest_winning() {
    let text = r#"
        [sources.demo]
        base_url = "http://api.example"
        timeout_ms = 5000
        attempt_timeout_ms = 2000
        coalesce = false
        retry = false

        [sources.demo.groups.users]
        timeout_ms = 3000
        retry = { max_attempts = 2 }
        coalesce = true

        [sources.demo.groups.users.endpoints.get]
        get = "/:id"
        attempt_timeout_ms = 500

        [sources.demo.groups.other.endpoints.list]
        get = "/other"
    "#;
    let config = load(text);
    let demo = config.source("demo").unwrap();
    let get = demo.endpoint("users.get").unwrap().meta();
    assert_eq!(
        get.get_timeout(),
        Some(Duration::from_millis(3000)),
        "the group's"
    );
    assert_eq!(
        get.get_settings().get_attempt_timeout(),
        Some(Duration::from_millis(500)),
        "the endpoint's"
    );
    assert_eq!(get.get_retry(), &RetryPolicy::new().max_attempts(2).into());
    assert!(get.get_coalesce());
    let list = demo.endpoint("other.list").unwrap().meta();
    assert_eq!(
        list.get_timeout(),
        Some(Duration::from_millis(5000)),
        "the source's"
    );
    assert_eq!(
        list.get_settings().get_attempt_timeout(),
        Some(Duration::from_millis(2000))
    );
    assert_eq!(list.get_retry(), &RetrySetting::Off);
    assert!(!list.get_coalesce());
}

#[test]
fn paths_may_name_parameters_as_axum_does_and_delete_is_a_verb() {
    let config = load(
        "[sources.demo]\nbase_url = \"http://x\"\n\
         [sources.demo.groups.todos]\nprefix = \"/t/{tenant}\"\n\
         [sources.demo.groups.todos.endpoints.remove]\ndelete = \"/{id}\"\n",
    );
    let remove = config
        .source("demo")
        .unwrap()
        .endpoint("todos.remove")
        .unwrap();
    assert_eq!(remove.template().unwrap().as_str(), "/t/:tenant/:id");
    let http = remove.definition().as_http().unwrap();
    assert_eq!(http.fixed_method().unwrap(), http::Method::DELETE);
    // Both spellings of the verb in one table are two verbs.
    let err = super::super::Config::from_toml_str(&with_endpoint("del = \"/x\"\ndelete = \"/x\""))
        .unwrap_err();
    assert!(err.message().contains("both `delete` and `del`"), "{err}");
}

#[test]
fn the_bounds_on_connections_reach_the_proxy_limits_and_zero_is_refused() {
    let config: super::super::Config =
        "[proxy]\nmax_connections = 4096\nmax_connections_per_client = 64\n"
            .parse()
            .unwrap();
    let limits = config.proxy_limits();
    assert_eq!(limits.max_connections.map(|n| n.get()), Some(4096));
    assert_eq!(limits.max_connections_per_client.map(|n| n.get()), Some(64));
    let unset: super::super::Config = "".parse().unwrap();
    assert_eq!(unset.proxy_limits().max_connections, None);
    for key in ["max_connections", "max_connections_per_client"] {
        let refused = format!("[proxy]\n{key} = 0\n")
            .parse::<super::super::Config>()
            .unwrap_err();
        assert!(refused.to_string().contains(key), "{refused}");
        assert_eq!(
            refused.code(),
            crate::error::ErrorCode::ConfigInvalid,
            "{refused}"
        );
    }
}

#[test]
fn a_bus_keeps_a_history_with_or_without_redis() {
    let local = load("[bus]\nhistory = 500\n");
    let bus = local.bus().unwrap();
    assert_eq!(bus.redis, None);
    assert_eq!(
        bus.history,
        Some((500, crate::config::Bus::DEFAULT_HISTORY_AGE))
    );
    let shared =
        load("[bus]\nredis = \"redis://127.0.0.1\"\nhistory = 10\nhistory_age_ms = 2500\n");
    assert_eq!(
        shared.bus().unwrap().history,
        Some((10, std::time::Duration::from_millis(2500)))
    );
}

#[test]
fn a_write_sends_an_idempotency_key_from_any_level_and_crosses_the_proxy_with_it() {
    let config = load(&with_endpoint("post = \"/\"\nidempotency_key = true"));
    let create = config
        .source("demo")
        .unwrap()
        .endpoint("users.get")
        .unwrap();
    assert_eq!(
        create.meta().get_settings().get_idempotency_key(),
        Some(true)
    );
    assert!(create.allowed_headers().contains(&crate::IDEMPOTENCY_KEY));
    // From the source, to a write; a read does not take the key across.
    let text = "[sources.demo]\nbase_url = \"http://127.0.0.1:9000\"\nidempotency_key = true\n\n\
                [sources.demo.groups.users.endpoints.create]\npost = \"/\"\n\n\
                [sources.demo.groups.users.endpoints.get]\nget = \"/\"\n";
    let config = load(text);
    let source = config.source("demo").unwrap();
    let create = source.endpoint("users.create").unwrap();
    assert!(create.allowed_headers().contains(&crate::IDEMPOTENCY_KEY));
    let get = source.endpoint("users.get").unwrap();
    assert_eq!(get.meta().get_settings().get_idempotency_key(), Some(true));
    assert!(!get.allowed_headers().contains(&crate::IDEMPOTENCY_KEY));
    // A stream is not a write.
    fails(
        &with_endpoint("stream = \"/events\"\nidempotency_key = true\n"),
        ErrorCode::InvalidOption,
        "sources.demo.groups.users.endpoints.get.idempotency_key",
    );
}
