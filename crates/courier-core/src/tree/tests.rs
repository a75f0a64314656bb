//! Tests of building, validating and resolving trees.

use crate::{
    ApiDef, ChannelEndpoint, ConfigurationError, Dispatcher, ErrorCode, Fetch, ForwardOptions,
    GroupDef, HttpEndpoint, Kind, PathOptions, RetryPolicy, SessionOptions, StreamEndpoint,
    WireCall,
};
use serde_json::json;
use std::time::Duration;

fn base() -> crate::ApiBuilder {
    ApiDef::builder().base_url("http://127.0.0.1:9000")
}

fn err(result: Result<ApiDef, ConfigurationError>) -> ConfigurationError {
    match result {
        Ok(_) => panic!("expected the tree to be refused"),
        Err(e) => e,
    }
}

#[test]
fn addresses_compose_base_prefixes_and_path() {
    let api = base()
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("list", HttpEndpoint::get(""))
                .group(
                    "posts",
                    GroupDef::new()
                        .prefix("/:id/posts")
                        .endpoint("list", HttpEndpoint::get(""))
                        .group(
                            "comments",
                            GroupDef::new()
                                .prefix("/:post/comments")
                                .endpoint("get", HttpEndpoint::get("/:comment")),
                        ),
                ),
        )
        .build()
        .unwrap();
    let template = |path: &str| {
        api.endpoint(path)
            .unwrap()
            .template()
            .unwrap()
            .as_str()
            .to_owned()
    };
    assert_eq!(template("users.get"), "/users/:id");
    assert_eq!(template("users.list"), "/users");
    assert_eq!(template("users.posts.list"), "/users/:id/posts");
    assert_eq!(
        template("users.posts.comments.get"),
        "/users/:id/posts/:post/comments/:comment"
    );
    let deep = api.endpoint("users.posts.comments.get").unwrap();
    assert_eq!(deep.group_path(), "users.posts.comments");
    assert_eq!(deep.name(), "get");
    assert_eq!(
        api.endpoint_in("users.posts.comments", "get")
            .unwrap()
            .path(),
        "users.posts.comments.get"
    );
    assert!(api.endpoint_in("users.nope", "get").is_none());
    let paths: Vec<_> = api
        .endpoints()
        .iter()
        .map(|e| e.path().to_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "users.get",
            "users.list",
            "users.posts.comments.get",
            "users.posts.list"
        ]
    );
}

#[test]
fn a_member_may_be_both_endpoint_and_group() {
    let api = base()
        .group(
            "users",
            GroupDef::new()
                .endpoint("posts", HttpEndpoint::get("/posts"))
                .group(
                    "posts",
                    GroupDef::new().endpoint("get", HttpEndpoint::get("/posts/:id")),
                ),
        )
        .build()
        .unwrap();
    assert!(api.endpoint("users.posts").is_some());
    assert!(api.endpoint("users.posts.get").is_some());
}

#[test]
fn names_with_dots_are_refused_where_they_stand() {
    let e = err(base().group("a.b", GroupDef::new()).build());
    assert_eq!((e.code(), e.path()), (ErrorCode::DottedName, Some("a.b")));

    let e = err(base()
        .group(
            "users",
            GroupDef::new().group(
                "inner",
                GroupDef::new().endpoint("by.id", HttpEndpoint::get("")),
            ),
        )
        .build());
    assert_eq!(e.code(), ErrorCode::DottedName);
    assert_eq!(e.path(), Some("users.inner.by.id"));
    assert!(e.to_string().contains("`by.id` contains a dot"), "{e}");
}

#[test]
fn reserved_names_are_refused() {
    for name in ["raw", "with"] {
        let e = err(base().group(name, GroupDef::new()).build());
        assert_eq!(e.code(), ErrorCode::ReservedEndpointName, "group {name}");
    }
    for name in ["options", "raw", "with"] {
        let e = err(base()
            .group("g", GroupDef::new().endpoint(name, HttpEndpoint::get("")))
            .build());
        assert_eq!(e.code(), ErrorCode::ReservedEndpointName, "endpoint {name}");
        assert_eq!(e.path(), Some(format!("g.{name}").as_str()));
    }
    // A group may be named `options`, and a path called `raw` is fine under another name.
    base()
        .group(
            "options",
            GroupDef::new().endpoint("raw_data", HttpEndpoint::get("/raw")),
        )
        .build()
        .unwrap();
}

#[test]
fn empty_names_are_refused() {
    let e = err(base().group("", GroupDef::new()).build());
    assert_eq!(e.code(), ErrorCode::EmptyName);
}

#[test]
fn bad_paths_are_refused() {
    for path in ["/a?b=1", "/a#frag", "/a b", "/:"] {
        let e = err(base()
            .group("g", GroupDef::new().endpoint("e", HttpEndpoint::get(path)))
            .build());
        assert_eq!(e.code(), ErrorCode::InvalidPath, "{path}");
        assert_eq!(e.path(), Some("g.e.path"));
    }
    let e = err(base().group("g", GroupDef::new().prefix("/x?y")).build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::InvalidPath, Some("g.prefix"))
    );
}

#[test]
fn base_urls_are_checked() {
    for url in [
        "127.0.0.1:9000",
        "ftp://example.com",
        "http://example.com/?a=1",
        "http://example.com/#x",
        "not a url",
        "/relative",
    ] {
        let e = err(ApiDef::builder().base_url(url).build());
        assert_eq!(e.code(), ErrorCode::InvalidBaseUrl, "{url}");
    }
    let api = ApiDef::builder()
        .base_url("https://api.example.com/v1")
        .build()
        .unwrap();
    assert_eq!(api.options().base_url.as_ref().unwrap().path(), "/v1");
    // No base URL, and nothing to reach: nothing to refuse.
    ApiDef::builder().build().unwrap();
}

#[test]
fn a_source_without_a_base_url_is_refused_when_something_is_served_elsewhere() {
    let remote: [(&str, crate::EndpointDef); 3] = [
        ("get", HttpEndpoint::get("/users").into()),
        ("events", crate::StreamEndpoint::get("/events").into()),
        ("room", crate::ChannelEndpoint::connect("/rooms/:id").into()),
    ];
    for (name, endpoint) in remote {
        let e = err(ApiDef::builder()
            .group("g", GroupDef::new().endpoint(name, endpoint))
            .build());
        assert_eq!(
            (e.code(), e.path()),
            (ErrorCode::InvalidBaseUrl, Some("base_url")),
            "{e}"
        );
        let message = e.to_string();
        assert!(
            message.contains("no `base_url`") && message.contains(&format!("`g.{name}`")),
            "{message}"
        );
    }
    // What this process serves needs no address.
    let served = crate::StreamEndpoint::implement(crate::StreamHandler::new(|_| {
        futures_util::stream::empty()
    }));
    ApiDef::builder()
        .group("g", GroupDef::new().endpoint("ticks", served))
        .build()
        .unwrap();
    // A replaced transport may route by path alone, on the source or on the group.
    let fetch = || {
        crate::Fetch::new(tower::service_fn(|_: http::Request<crate::Body>| async {
            Ok::<_, crate::BoxError>(http::Response::new(crate::Body::empty()))
        }))
    };
    ApiDef::builder()
        .fetch(fetch())
        .group("g", GroupDef::new().endpoint("get", HttpEndpoint::get("")))
        .build()
        .unwrap();
    ApiDef::builder()
        .group(
            "g",
            GroupDef::new()
                .fetch(fetch())
                .endpoint("get", HttpEndpoint::get("")),
        )
        .build()
        .unwrap();
    // Not on a sibling group.
    let e = err(ApiDef::builder()
        .group(
            "a",
            GroupDef::new()
                .fetch(fetch())
                .endpoint("get", HttpEndpoint::get("")),
        )
        .group("b", GroupDef::new().endpoint("get", HttpEndpoint::get("")))
        .build());
    assert!(e.to_string().contains("`b.get`"), "{e}");
}

#[test]
fn headers_are_checked() {
    let e = err(base().header("bad header", "x").build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::InvalidHeader, Some("headers.bad header"))
    );
    let e = err(base().header("x-ok", "line\nbreak").build());
    assert_eq!(e.code(), ErrorCode::InvalidHeader);
    let e = err(base().allowed_headers(["x y"]).build());
    assert_eq!(e.code(), ErrorCode::InvalidHeader);
    let e = err(base()
        .group(
            "g",
            GroupDef::new().endpoint("e", HttpEndpoint::get("").headers(["(bad)"])),
        )
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::InvalidHeader, Some("g.e.headers"))
    );
    let api = base().header("x-api-key", "secret").build().unwrap();
    assert_eq!(api.options().headers["x-api-key"], "secret");
}

#[test]
fn host_and_hop_by_hop_headers_are_refused_in_every_list() {
    for name in [
        "host",
        "Connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "transfer-encoding",
        "proxy-authorization",
    ] {
        let e = err(base().allowed_headers([name]).build());
        assert_eq!(
            (e.code(), e.path()),
            (ErrorCode::HeaderNeverCrosses, Some("allowed_headers")),
            "{name}"
        );
        assert!(
            e.message().contains(&format!("`{name}`")),
            "{}",
            e.message()
        );
        let e = err(base()
            .group(
                "g",
                GroupDef::new().endpoint("e", HttpEndpoint::get("").headers([name])),
            )
            .build());
        assert_eq!(
            (e.code(), e.path()),
            (ErrorCode::HeaderNeverCrosses, Some("g.e.headers")),
            "{name}"
        );
        let e = err(base()
            .forward(ForwardOptions::new().headers([name]))
            .build());
        assert_eq!(
            (e.code(), e.path()),
            (ErrorCode::HeaderNeverCrosses, Some("forward.headers")),
            "{name}"
        );
    }
    let e = err(base()
        .forward(ForwardOptions::new().client_address("host"))
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (
            ErrorCode::HeaderNeverCrosses,
            Some("forward.client_address")
        )
    );
    let e = err(base().allowed_headers(["upgrade"]).build());
    assert!(e.message().contains("hop-by-hop"), "{}", e.message());
    let e = err(base().allowed_headers(["host"]).build());
    assert!(e.message().contains("base URL"), "{}", e.message());
}

#[test]
fn session_refuses_cookie_headers_anywhere() {
    let session = || SessionOptions::new().cookies(["sid"]);
    for name in ["cookie", "Set-Cookie"] {
        let e = err(base().session(session()).allowed_headers([name]).build());
        assert_eq!(
            (e.code(), e.path()),
            (ErrorCode::SessionHeaderConflict, Some("allowed_headers"))
        );
    }
    let e = err(base()
        .session(session())
        .group(
            "g",
            GroupDef::new().endpoint("e", HttpEndpoint::get("").headers(["cookie"])),
        )
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::SessionHeaderConflict, Some("g.e.headers"))
    );
    let e = err(base()
        .session(session())
        .forward(ForwardOptions::new().headers(["cookie"]))
        .build());
    assert_eq!(e.code(), ErrorCode::SessionHeaderConflict);
    // Without a session, naming cookies is how they cross.
    base()
        .allowed_headers(["cookie", "set-cookie"])
        .build()
        .unwrap();
}

#[test]
fn session_options_are_checked() {
    let e = err(base()
        .session(SessionOptions::new().trusted_origins(["https://app.example.com/path"]))
        .build());
    assert_eq!(e.code(), ErrorCode::InvalidOption);
    let e = err(base()
        .session(SessionOptions::new().cookies(["a=b"]))
        .build());
    assert_eq!(e.code(), ErrorCode::InvalidOption);
    let e = err(base()
        .session(SessionOptions::new().csrf("csrf", "bad header"))
        .build());
    assert_eq!(e.code(), ErrorCode::InvalidHeader);
    base()
        .session(
            SessionOptions::new()
                .cookies(["sid", "sess_*"])
                .bearer("access_token")
                .csrf("csrf_token", "x-csrf-token")
                .trusted_origins(["https://app.example.com", "http://localhost:3000"]),
        )
        .build()
        .unwrap();
}

#[test]
fn cancel_previous_must_name_a_read() {
    let groups = || {
        GroupDef::new()
            .endpoint("search", HttpEndpoint::get("/search"))
            .endpoint("find", HttpEndpoint::post("/find").reads())
            .endpoint("create", HttpEndpoint::post(""))
            .endpoint("events", StreamEndpoint::get("/events"))
    };
    base()
        .cancel_previous(["users.search", "users.find"])
        .group("users", groups())
        .build()
        .unwrap();
    for (path, why) in [
        ("users.nope", "does not define"),
        ("users.create", "writes"),
        ("users.events", "stream or channel"),
        ("users", "does not define"),
    ] {
        let e = err(base()
            .cancel_previous([path])
            .group("users", groups())
            .build());
        assert_eq!(e.code(), ErrorCode::CancelPreviousInvalid, "{path}");
        assert!(e.message().contains(why), "{path}: {e}");
    }
}

#[test]
fn kinds_follow_the_verb_unless_declared() {
    let api = base()
        .group(
            "g",
            GroupDef::new()
                .endpoint("get", HttpEndpoint::get(""))
                .endpoint("head", HttpEndpoint::method(http::Method::HEAD, ""))
                .endpoint("post", HttpEndpoint::post(""))
                .endpoint("put", HttpEndpoint::put(""))
                .endpoint("patch", HttpEndpoint::patch(""))
                .endpoint("del", HttpEndpoint::del(""))
                .endpoint("search", HttpEndpoint::post("/s").reads())
                .endpoint("via_write", HttpEndpoint::via(|_| Ok(WireCall::get("/x"))))
                .endpoint(
                    "via_read",
                    HttpEndpoint::via(|_| Ok(WireCall::get("/x"))).reads(),
                ),
        )
        .build()
        .unwrap();
    let kind = |name: &str| api.endpoint(&format!("g.{name}")).unwrap().kind().unwrap();
    for name in ["get", "head", "search", "via_read"] {
        assert_eq!(kind(name), Kind::Query, "{name}");
    }
    for name in ["post", "put", "patch", "del", "via_write"] {
        assert_eq!(kind(name), Kind::Mutation, "{name}");
    }
    assert!(api.endpoint("g.via_read").unwrap().template().is_none());
    assert_eq!(api.endpoint("g.via_read").unwrap().prefix(), "");
}

#[test]
fn exposure_is_decided_by_the_nearest_level() {
    let api = base()
        .expose(false)
        .group(
            "open",
            GroupDef::new()
                .expose(true)
                .endpoint("inherits", HttpEndpoint::get(""))
                .endpoint("hidden", HttpEndpoint::get("").expose(false))
                .group(
                    "closed",
                    GroupDef::new()
                        .expose(false)
                        .endpoint("inherits", HttpEndpoint::get(""))
                        .endpoint("own", HttpEndpoint::get("").expose(true)),
                )
                .group(
                    "silent",
                    GroupDef::new().endpoint("inherits", HttpEndpoint::get("")),
                ),
        )
        .group(
            "plain",
            GroupDef::new().endpoint("inherits", HttpEndpoint::get("")),
        )
        .build()
        .unwrap();
    let exposed = |p: &str| api.endpoint(p).unwrap().is_exposed();
    assert!(exposed("open.inherits"));
    assert!(!exposed("open.hidden"));
    assert!(!exposed("open.closed.inherits"));
    assert!(exposed("open.closed.own"));
    assert!(exposed("open.silent.inherits"));
    assert!(!exposed("plain.inherits"));

    let api = base()
        .expose(true)
        .group(
            "plain",
            GroupDef::new().endpoint("e", HttpEndpoint::get("")),
        )
        .build()
        .unwrap();
    assert!(api.endpoint("plain.e").unwrap().is_exposed());
}

#[test]
fn transport_comes_from_the_nearest_group_that_sets_it() {
    let fetch = |tag: &'static str| {
        Fetch::new(tower::service_fn(
            move |_req: http::Request<crate::Body>| async move {
                Ok::<_, std::convert::Infallible>(http::Response::new(crate::Body::from(tag)))
            },
        ))
    };
    let proxy = |uri: &str| Dispatcher::new().proxy(uri.parse().unwrap());
    let api = base()
        .fetch(fetch("source"))
        .dispatcher(proxy("http://source-proxy:3128"))
        .group(
            "outer",
            GroupDef::new()
                .dispatcher(proxy("http://outer-proxy:3128"))
                .endpoint("e", HttpEndpoint::get(""))
                .group(
                    "inner",
                    GroupDef::new()
                        .fetch(fetch("inner"))
                        .endpoint("e", HttpEndpoint::get("")),
                ),
        )
        .group(
            "plain",
            GroupDef::new().endpoint("e", HttpEndpoint::get("")),
        )
        .build()
        .unwrap();
    let proxy_of = |p: &str| {
        api.endpoint(p)
            .unwrap()
            .transport()
            .dispatcher
            .as_ref()
            .unwrap()
            .proxy
            .clone()
            .unwrap()
    };
    assert_eq!(proxy_of("outer.e"), "http://outer-proxy:3128/");
    assert_eq!(proxy_of("outer.inner.e"), "http://outer-proxy:3128/");
    assert_eq!(proxy_of("plain.e"), "http://source-proxy:3128/");
    assert!(api
        .endpoint("outer.inner.e")
        .unwrap()
        .transport()
        .fetch
        .is_some());

    let e = err(base()
        .group("g", GroupDef::new().dispatcher(proxy("socks5://p:1080")))
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::SourceTransportInvalid, Some("g.transport.proxy"))
    );
}

#[test]
fn path_options_chain_runs_source_first() {
    let api = base()
        .path_options(PathOptions::fixed(json!({ "tenant": "source" })))
        .group(
            "outer",
            GroupDef::new()
                .path_options(PathOptions::fixed(
                    json!({ "tenant": "outer", "region": "eu" }),
                ))
                .group(
                    "inner",
                    GroupDef::new()
                        .path_options(PathOptions::from_fn(|_| json!({ "tenant": "inner" })))
                        .endpoint("e", HttpEndpoint::get("/:tenant/:region")),
                ),
        )
        .build()
        .unwrap();
    let chain = api.endpoint("outer.inner.e").unwrap().path_options();
    assert_eq!(chain.len(), 3);
    assert!(matches!(chain[0], PathOptions::Fixed(ref m) if m["tenant"] == "source"));
    assert!(matches!(chain[2], PathOptions::Computed(_)));
}

#[test]
fn options_out_of_range_are_refused() {
    let e = err(base().timeout(Duration::ZERO).build());
    assert_eq!(e.code(), ErrorCode::InvalidOption);
    let e = err(base()
        .group(
            "g",
            GroupDef::new().endpoint("e", HttpEndpoint::get("").timeout(Duration::ZERO)),
        )
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::InvalidOption, Some("g.e.timeout"))
    );
    let e = err(base()
        .group(
            "g",
            GroupDef::new().endpoint(
                "e",
                HttpEndpoint::get("").retry(RetryPolicy::new().max_attempts(0)),
            ),
        )
        .build());
    assert_eq!(
        (e.code(), e.path()),
        (ErrorCode::InvalidOption, Some("g.e.retry"))
    );
    let e = err(base()
        .group(
            "g",
            GroupDef::new().endpoint(
                "e",
                HttpEndpoint::method(http::Method::HEAD, "").stream_response(),
            ),
        )
        .build());
    assert_eq!(e.code(), ErrorCode::InvalidOption);
}

#[test]
fn allowed_headers_add_the_endpoints_own() {
    let api = base()
        .allowed_headers(["x-tenant"])
        .group(
            "g",
            GroupDef::new()
                .endpoint("e", HttpEndpoint::get("").headers(["x-extra", "X-Tenant"]))
                .endpoint("plain", HttpEndpoint::get("")),
        )
        .build()
        .unwrap();
    let names = |p: &str| -> Vec<String> {
        api.endpoint(p)
            .unwrap()
            .allowed_headers()
            .iter()
            .map(|h| h.to_string())
            .collect()
    };
    assert_eq!(names("g.e"), ["x-tenant", "x-extra"]);
    assert_eq!(names("g.plain"), ["x-tenant"]);
}

#[test]
fn channels_and_streams_resolve_their_paths() {
    let api = base()
        .group(
            "rooms",
            GroupDef::new()
                .prefix("/rooms")
                .endpoint("events", StreamEndpoint::get("/events"))
                .endpoint("room", ChannelEndpoint::connect("/:id").send()),
        )
        .build()
        .unwrap();
    assert_eq!(
        api.endpoint("rooms.events")
            .unwrap()
            .template()
            .unwrap()
            .as_str(),
        "/rooms/events"
    );
    let room = api.endpoint("rooms.room").unwrap();
    assert_eq!(room.template().unwrap().as_str(), "/rooms/:id");
    let channel = room.definition().as_channel().unwrap();
    assert!(channel.is_bidirectional());
    assert_eq!(room.kind(), None);
    let by_id = ChannelEndpoint::connect("/:id").topic_variables(["id"]);
    assert_eq!(
        by_id.topic_spec().key(&json!({ "id": "a", "x": 1 })),
        r#"{"id":"a"}"#
    );
}

#[test]
fn a_topic_on_a_channel_served_elsewhere_is_refused() {
    let handler = crate::ChannelHandler::push(|_| futures_util::stream::empty());
    for channel in [
        crate::ChannelEndpoint::connect("/rooms/:id").topic_variables(["id"]),
        crate::ChannelEndpoint::connect("/rooms/:id").topic(|v| v["id"].to_string()),
        crate::ChannelEndpoint::via(|_| Ok(crate::WireCall::get("/rooms"))).topic_variables(["id"]),
    ] {
        let err = ApiDef::builder()
            .group("chat", GroupDef::new().endpoint("room", channel))
            .build()
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidOption, "{err}");
        assert_eq!(err.path(), Some("chat.room.topic"), "{err}");
        assert!(
            err.to_string().contains("another process serves it"),
            "{err}"
        );
    }
    // On a channel this process implements, a topic is what groups its subscribers.
    let implemented = crate::ChannelEndpoint::implement(handler).topic_variables(["id"]);
    assert!(ApiDef::builder()
        .group("chat", GroupDef::new().endpoint("room", implemented))
        .build()
        .is_ok());
}

#[test]
fn a_groups_cache_applies_to_its_reads_under_an_endpoints_own() {
    use crate::options::CacheOptions;
    use crate::routes::{RouteShape, Routes};

    let api = base()
        .cache(CacheOptions::new().revalidate(300))
        .group(
            "users",
            GroupDef::new()
                .expose(true)
                .cache(CacheOptions::new().revalidate(30))
                .endpoint("get", HttpEndpoint::get("/users/:id"))
                .endpoint(
                    "fresh",
                    HttpEndpoint::get("/users/fresh").cache(CacheOptions::new().revalidate(5)),
                )
                .endpoint("secret", HttpEndpoint::get("/s").sensitive_variables())
                .endpoint("events", StreamEndpoint::get("/users/events")),
        )
        .group(
            "plain",
            GroupDef::new().endpoint("list", HttpEndpoint::get("/p")),
        )
        .build()
        .unwrap();
    let revalidate = |path: &str| {
        let endpoint = api.endpoint(path).unwrap();
        endpoint.meta().get_cache().and_then(|c| c.revalidate)
    };
    assert_eq!(revalidate("users.get"), Some(30));
    assert_eq!(revalidate("users.fresh"), Some(5));
    assert_eq!(revalidate("plain.list"), Some(300));
    // A call's own wins over the endpoint's.
    let call = crate::CallOptions::new().cache(CacheOptions::new().revalidate(1));
    let meta = api
        .endpoint("users.get")
        .unwrap()
        .meta()
        .with_call(Some(&call));
    assert_eq!(meta.get_cache().and_then(|c| c.revalidate), Some(1));

    // The routes record reads the same value: a read cached by its group goes as GET, one with
    // sensitive variables does not, a stream is a stream.
    let routes = Routes::from_api("demo", &api);
    assert_eq!(
        routes.endpoints["users.get"],
        RouteShape::Query { get: true }
    );
    assert_eq!(
        routes.endpoints["users.secret"],
        RouteShape::Query { get: false }
    );
    assert_eq!(routes.endpoints["users.events"], RouteShape::Sse);
}

#[test]
fn a_stream_or_channel_with_a_cache_of_its_own_is_refused() {
    use crate::options::CacheOptions;

    let endpoints: [crate::EndpointDef; 2] = [
        StreamEndpoint::get("/events")
            .cache(CacheOptions::new())
            .into(),
        ChannelEndpoint::connect("/chat")
            .cache(CacheOptions::new())
            .into(),
    ];
    for endpoint in endpoints {
        let e = err(base()
            .group("live", GroupDef::new().endpoint("it", endpoint))
            .build());
        assert_eq!(e.code(), ErrorCode::InvalidOption);
        assert_eq!(e.path(), Some("live.it.cache"));
        assert!(e.to_string().contains("a stream's events"), "{e}");
    }
}
