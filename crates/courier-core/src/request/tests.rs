use super::*;
use crate::encode::{FilePart, Form, UrlEncodedBody};
use crate::{ChannelEndpoint, GroupDef, HttpEndpoint, StreamEndpoint, StreamHandler, WireCall};
use http_body_util::BodyExt;
use serde_json::json;

fn body_bytes(req: Request<Body>) -> bytes::Bytes {
    let fut = req.into_body().collect();
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Ok(c)) => c.to_bytes(),
        _ => panic!("a buffered body is ready at once"),
    }
}

use std::future::Future;

fn api(builder: crate::ApiBuilder) -> ApiDef {
    builder
        .group(
            "users",
            GroupDef::new()
                .prefix("/users")
                .endpoint("get", HttpEndpoint::get("/:id"))
                .endpoint("create", HttpEndpoint::post(""))
                .endpoint("remove", HttpEndpoint::del("/:id"))
                .endpoint(
                    "lookup",
                    HttpEndpoint::via(|vars| {
                        Ok(match vars.get("email") {
                            Some(email) => WireCall::get("/by-email")
                                .variables(json!({ "email": email }))
                                .header(
                                    http::HeaderName::from_static("x-lookup"),
                                    http::HeaderValue::from_static("email"),
                                ),
                            None => WireCall::get("/:id").variables(vars),
                        })
                    })
                    .reads(),
                )
                .endpoint("events", StreamEndpoint::get("/:id/events"))
                .endpoint("room", ChannelEndpoint::connect("/rooms/:room"))
                .endpoint(
                    "served",
                    StreamEndpoint::implement(StreamHandler::new(|_| {
                        futures_util::stream::empty()
                    })),
                )
                .group(
                    "posts",
                    GroupDef::new()
                        .prefix("/:id/posts")
                        .endpoint("list", HttpEndpoint::get("")),
                ),
        )
        .build()
        .unwrap()
}

fn build(api: &ApiDef, path: &str, vars: Value) -> Result<Request<Body>, RequestError> {
    build_request(
        api,
        api.endpoint(path).unwrap(),
        vars.into(),
        &Map::new(),
        None,
        None,
    )
}

#[test]
fn a_read_puts_the_rest_in_the_query() {
    let api = api(ApiDef::builder()
        .base_url("http://127.0.0.1:9000/v1/")
        .default_query_params(json!({ "lang": "en" })));
    let req = build(
        &api,
        "users.get",
        json!({ "id": "a/b", "fields": ["x", "y"] }),
    )
    .unwrap();
    assert_eq!(req.method(), Method::GET);
    assert_eq!(
        req.uri(),
        "http://127.0.0.1:9000/v1/users/a%2Fb?fields=x&fields=y&lang=en"
    );
    assert!(req.headers().get(CONTENT_TYPE).is_none());
    assert!(body_bytes(req).is_empty());
}

#[test]
fn a_write_puts_the_rest_in_a_json_body() {
    let api = api(ApiDef::builder()
        .base_url("https://api.example.com")
        .header("x-api-key", "secret")
        .default_body(json!({ "client": "web" })));
    let req = build(&api, "users.create", json!({ "name": "Ada" })).unwrap();
    assert_eq!(req.method(), Method::POST);
    assert_eq!(req.uri(), "https://api.example.com/users");
    assert_eq!(req.headers()[CONTENT_TYPE], "application/json");
    assert_eq!(req.headers()["x-api-key"], "secret");
    let body: Value = serde_json::from_slice(&body_bytes(req)).unwrap();
    assert_eq!(body, json!({ "client": "web", "name": "Ada" }));
}

#[test]
fn delete_uses_search_parameters() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let req = build(&api, "users.remove", json!({ "id": 3, "hard": true })).unwrap();
    assert_eq!(req.method(), Method::DELETE);
    assert_eq!(req.uri(), "http://h/users/3?hard=true");
}

#[test]
fn scalar_variables_fill_the_only_parameter() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let req = build(&api, "users.get", json!(7)).unwrap();
    assert_eq!(req.uri(), "http://h/users/7");
    let req = build(&api, "users.posts.list", json!({ "id": 7, "page": 2 })).unwrap();
    assert_eq!(req.uri(), "http://h/users/7/posts?page=2");
}

#[test]
fn path_values_win_and_shadowing_variables_are_dropped() {
    let api = ApiDef::builder()
        .base_url("http://h")
        .group(
            "t",
            GroupDef::new()
                .prefix("/:tenant")
                .endpoint("list", HttpEndpoint::get("/items"))
                .endpoint("add", HttpEndpoint::post("/items")),
        )
        .build()
        .unwrap();
    let values = json!({ "tenant": "acme" }).as_object().unwrap().clone();
    let vars = json!({ "tenant": "evil", "q": "x" });
    let req = build_request(
        &api,
        api.endpoint("t.list").unwrap(),
        vars.clone().into(),
        &values,
        None,
        None,
    )
    .unwrap();
    assert_eq!(req.uri(), "http://h/acme/items?q=x");
    let req = build_request(
        &api,
        api.endpoint("t.add").unwrap(),
        vars.into(),
        &values,
        None,
        None,
    )
    .unwrap();
    assert_eq!(req.uri(), "http://h/acme/items");
    let body: Value = serde_json::from_slice(&body_bytes(req)).unwrap();
    assert_eq!(body, json!({ "q": "x" }));
}

#[test]
fn call_headers_win_over_source_headers_and_content_type_follows_the_body() {
    let api = api(ApiDef::builder()
        .base_url("http://h")
        .header("x-api-key", "source")
        .header("content-type", "text/plain"));
    let mut call = HeaderMap::new();
    call.insert("x-api-key", "call".parse().unwrap());
    let req = build_request(
        &api,
        api.endpoint("users.create").unwrap(),
        json!({ "a": 1 }).into(),
        &Map::new(),
        Some(&call),
        None,
    )
    .unwrap();
    assert_eq!(req.headers().get_all("x-api-key").iter().count(), 1);
    assert_eq!(req.headers()["x-api-key"], "call");
    assert_eq!(req.headers()[CONTENT_TYPE], "application/json");
}

#[test]
fn via_computes_the_address_at_request_time() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let req = build(&api, "users.lookup", json!({ "email": "a@b.c" })).unwrap();
    assert_eq!(req.uri(), "http://h/users/by-email?email=a%40b.c");
    assert_eq!(req.headers()["x-lookup"], "email");
    let req = build(&api, "users.lookup", json!({ "id": 9 })).unwrap();
    assert_eq!(req.uri(), "http://h/users/9");
}

#[test]
fn via_errors_are_typed() {
    let api = ApiDef::builder()
        .base_url("http://h")
        .group(
            "g",
            GroupDef::new()
                .endpoint("fails", HttpEndpoint::via(|_| Err("no route".into())))
                .endpoint("bad", HttpEndpoint::via(|_| Ok(WireCall::get("/a?b")))),
        )
        .build()
        .unwrap();
    assert!(matches!(
        build(&api, "g.fails", json!({})),
        Err(RequestError::Via(_))
    ));
    assert!(matches!(
        build(&api, "g.bad", json!({})),
        Err(RequestError::ViaPath(_))
    ));
    let form = Variables::Form(Form::new().text("a", "b"));
    let err = build_request(
        &api,
        api.endpoint("g.fails").unwrap(),
        form,
        &Map::new(),
        None,
        None,
    )
    .unwrap_err();
    assert!(matches!(err, RequestError::ViaForm { .. }), "{err}");
}

#[test]
fn streams_and_channels_build_their_handshake_get() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let req = build(&api, "users.events", json!({ "id": 1, "since": 5 })).unwrap();
    assert_eq!(
        (req.method(), req.uri().to_string()),
        (&Method::GET, "http://h/users/1/events?since=5".into())
    );
    let req = build(&api, "users.room", json!("lobby")).unwrap();
    assert_eq!(req.uri(), "http://h/users/rooms/lobby");
    let err = build(&api, "users.served", json!({})).unwrap_err();
    assert!(err.to_string().contains("users.served"), "{err}");
}

#[test]
fn encoding_errors_are_typed_and_name_the_variable() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let err = build(&api, "users.get", json!({})).unwrap_err();
    assert!(matches!(err, RequestError::Encode(_)));
    assert!(err.to_string().contains("`id`"), "{err}");
    let err = build(&api, "users.get", json!({ "id": ".." })).unwrap_err();
    assert!(err.to_string().contains("`id`"), "{err}");
}

#[test]
fn forms_and_custom_serializers_set_their_content_type() {
    let api = api(ApiDef::builder()
        .base_url("http://h")
        .body_serializer(UrlEncodedBody));
    let req = build(&api, "users.create", json!({ "name": "A B" })).unwrap();
    assert_eq!(
        req.headers()[CONTENT_TYPE],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(body_bytes(req), "name=A%20B");

    let form = Form::new().text("name", "Ada").file(
        "avatar",
        FilePart::new(b"PNG".to_vec())
            .filename("a.png")
            .content_type("image/png"),
    );
    let req = build_request(
        &api,
        api.endpoint("users.create").unwrap(),
        form.into(),
        &Map::new(),
        None,
        None,
    )
    .unwrap();
    let ct = req.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
    assert!(ct.starts_with("multipart/form-data; boundary="), "{ct}");
    let body = String::from_utf8(body_bytes(req).to_vec()).unwrap();
    assert!(body.contains("filename=\"a.png\""), "{body}");
}

#[test]
fn without_a_base_url_the_uri_is_the_path() {
    // Only a source whose transport is replaced may go without a base URL: the path is what
    // its `fetch` gets.
    let fetch = crate::Fetch::new(tower::service_fn(|_: Request<Body>| async {
        Ok::<_, crate::BoxError>(http::Response::new(Body::empty()))
    }));
    let api = api(ApiDef::builder().fetch(fetch));
    let req = build(&api, "users.get", json!(1)).unwrap();
    assert_eq!(req.uri(), "/users/1");
}

#[test]
fn the_path_joins_under_the_base_path_like_join_path() {
    let bases = [
        "http://h",
        "http://h/",
        "http://h/v1",
        "http://h/v1/",
        "http://h/v1//",
        "http://h/a/b",
    ];
    let paths = ["", "/", "/users", "/users/", "users/7", "//users"];
    let mut query = Map::new();
    query.insert("q".into(), json!(1));
    for base in bases {
        let uri: Uri = base.parse().unwrap();
        for path in paths {
            for default_query in [None, Some(&query)] {
                let template = PathTemplate::parse(path).unwrap();
                let encoded = encode::encode_under(
                    EncodeInput {
                        method: &Method::GET,
                        path: &template,
                        path_options: &Map::new(),
                        variables: Variables::None,
                        default_query,
                        default_body: None,
                        body_serializer: None,
                        search_params: &encode::DefaultSearchParams,
                    },
                    Some(uri.path()),
                )
                .unwrap();
                let joined = join_path(&[uri.path(), path]);
                let joined = if joined.is_empty() {
                    "/".to_owned()
                } else {
                    joined
                };
                let expected = match default_query {
                    Some(_) => format!("{joined}?q=1"),
                    None => joined,
                };
                assert_eq!(encoded.path_and_query, expected, "{base} + {path}");
                let got = absolute(&uri, encoded.path_and_query).unwrap();
                assert_eq!(got.path_and_query().unwrap().as_str(), expected);
                assert_eq!(got.authority(), uri.authority());
                assert_eq!(got.scheme(), uri.scheme());
            }
        }
    }
}

#[test]
fn a_scalar_fills_the_lone_parameter_unless_a_path_option_does() {
    let api = api(ApiDef::builder().base_url("http://h"));
    let endpoint = api.endpoint("users.get").unwrap();
    let req = build_request(&api, endpoint, json!(7).into(), &Map::new(), None, None).unwrap();
    assert_eq!(req.uri(), "http://h/users/7");

    let mut fixed = Map::new();
    fixed.insert("id".into(), json!("me"));
    let req = build_request(&api, endpoint, json!(7).into(), &fixed, None, None).unwrap();
    assert_eq!(req.uri(), "http://h/users/me");
}
