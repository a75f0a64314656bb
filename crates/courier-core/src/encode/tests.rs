//! Tests of [`encode`]: where each variable goes.
//!
//! Object literals list keys in sorted order, so expected query strings hold with or without
//! serde_json's `preserve_order`.

use super::*;
use http::Method;
use serde_json::json;

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("test input must be an object"),
    }
}

/// A call with everything optional left out.
struct Call {
    method: Method,
    template: &'static str,
    path_options: Map<String, Value>,
    default_query: Option<Map<String, Value>>,
    default_body: Option<Map<String, Value>>,
    serializer: Option<UrlEncodedBody>,
}

fn call(method: Method, template: &'static str) -> Call {
    Call {
        method,
        template,
        path_options: Map::new(),
        default_query: None,
        default_body: None,
        serializer: None,
    }
}

impl Call {
    fn path_options(mut self, value: Value) -> Self {
        self.path_options = obj(value);
        self
    }
    fn default_query(mut self, value: Value) -> Self {
        self.default_query = Some(obj(value));
        self
    }
    fn default_body(mut self, value: Value) -> Self {
        self.default_body = Some(obj(value));
        self
    }
    fn url_encoded(mut self) -> Self {
        self.serializer = Some(UrlEncodedBody);
        self
    }
    fn run(&self, variables: impl Into<Variables>) -> Result<Encoded, EncodeError> {
        let template = PathTemplate::parse(self.template).expect("valid template");
        encode(EncodeInput {
            method: &self.method,
            path: &template,
            path_options: &self.path_options,
            variables: variables.into(),
            default_query: self.default_query.as_ref(),
            default_body: self.default_body.as_ref(),
            body_serializer: self.serializer.as_ref().map(|s| s as &dyn BodySerializer),
            search_params: &DefaultSearchParams,
        })
    }
}

fn json_body(encoded: &Encoded) -> Value {
    match &encoded.body {
        EncodedBody::Json(bytes) => serde_json::from_slice(bytes).expect("JSON body"),
        other => panic!("not a JSON body: {other:?}"),
    }
}

#[test]
fn methods_with_and_without_body() {
    for method in [Method::POST, Method::PUT, Method::PATCH] {
        assert!(method_has_body(&method), "{method}");
    }
    assert!(method_has_body(&Method::from_bytes(b"QUERY").unwrap()));
    for method in [
        Method::GET,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
        Method::TRACE,
        Method::CONNECT,
        Method::from_bytes(b"PROPFIND").unwrap(),
    ] {
        assert!(!method_has_body(&method), "{method}");
    }
}

#[test]
fn get_sends_the_rest_as_search_params() {
    let out = call(Method::GET, "/users/:id/posts")
        .run(json!({"id": 7, "page": 2, "tags": ["a", "b"]}))
        .unwrap();
    assert_eq!(out.path_and_query, "/users/7/posts?page=2&tags=a&tags=b");
    assert!(out.body.is_empty(), "{:?}", out.body);
}

#[test]
fn no_query_means_no_question_mark() {
    let out = call(Method::GET, "/users/:id")
        .run(json!({"id": "a b"}))
        .unwrap();
    assert_eq!(out.path_and_query, "/users/a%20b");
    let out = call(Method::DELETE, "/x").run(Variables::None).unwrap();
    assert_eq!(out.path_and_query, "/x");
    let out = call(Method::GET, "/x").run(json!({"n": null})).unwrap();
    assert_eq!(out.path_and_query, "/x");
}

#[test]
fn variables_replace_default_query_params() {
    let out = call(Method::GET, "/s")
        .default_query(json!({"lang": "en", "v": 1}))
        .run(json!({"v": 2, "z": "x"}))
        .unwrap();
    assert_eq!(out.path_and_query, "/s?lang=en&v=2&z=x");
}

#[test]
fn body_methods_send_the_rest_as_json_over_default_body() {
    let out = call(Method::POST, "/users/:id")
        .default_query(json!({"api": "v2"}))
        .default_body(json!({"client": "courier", "name": "default"}))
        .run(json!({"id": 7, "name": "Ada", "tags": [1]}))
        .unwrap();
    assert_eq!(out.path_and_query, "/users/7?api=v2");
    assert_eq!(
        json_body(&out),
        json!({"client": "courier", "name": "Ada", "tags": [1]})
    );
    assert_eq!(out.body.content_type().unwrap(), "application/json");
}

#[test]
fn body_method_with_nothing_left_has_no_body() {
    let out = call(Method::POST, "/users/:id")
        .run(json!({"id": 7}))
        .unwrap();
    assert!(out.body.is_empty(), "{:?}", out.body);
    assert!(out.body.is_empty());
    let out = call(Method::PUT, "/x").run(Variables::None).unwrap();
    assert!(out.body.is_empty(), "{:?}", out.body);
    let out = call(Method::PATCH, "/x")
        .default_body(json!({}))
        .run(json!({}))
        .unwrap();
    assert!(out.body.is_empty(), "{:?}", out.body);
}

#[test]
fn default_body_alone_is_sent() {
    let out = call(Method::POST, "/x")
        .default_body(json!({"key": "k"}))
        .run(Variables::None)
        .unwrap();
    assert_eq!(json_body(&out), json!({"key": "k"}));
}

#[test]
fn default_body_is_not_used_without_a_body() {
    let out = call(Method::GET, "/x")
        .default_body(json!({"key": "k"}))
        .run(json!({"a": 1}))
        .unwrap();
    assert_eq!(out.path_and_query, "/x?a=1");
    assert!(out.body.is_empty(), "{:?}", out.body);
}

#[test]
fn query_method_carries_a_body() {
    let method = Method::from_bytes(b"QUERY").unwrap();
    let out = call(method, "/search").run(json!({"q": "x"})).unwrap();
    assert_eq!(out.path_and_query, "/search");
    assert_eq!(json_body(&out), json!({"q": "x"}));
}

#[test]
fn custom_body_serializer() {
    let out = call(Method::POST, "/login")
        .url_encoded()
        .default_body(json!({"grant": "password"}))
        .run(json!({"user": "a b"}))
        .unwrap();
    let EncodedBody::Custom(custom) = &out.body else {
        panic!("{:?}", out.body)
    };
    assert_eq!(
        custom,
        &SerializedBody {
            content_type: Some(http::HeaderValue::from_static(
                "application/x-www-form-urlencoded"
            )),
            bytes: bytes::Bytes::from_static(b"grant=password&user=a%20b"),
        }
    );
    assert_eq!(
        out.body.content_type().unwrap(),
        "application/x-www-form-urlencoded"
    );
}

#[test]
fn custom_body_serializer_errors_pass_through() {
    #[derive(Debug)]
    struct Failing;
    impl BodySerializer for Failing {
        fn serialize(&self, _: &Map<String, Value>) -> Result<SerializedBody, EncodeError> {
            Err(EncodeError::body("no can do"))
        }
    }
    let template = PathTemplate::parse("/x").unwrap();
    let err = encode(EncodeInput {
        method: &Method::POST,
        path: &template,
        path_options: &Map::new(),
        variables: json!({"a": 1}).into(),
        default_query: None,
        default_body: None,
        body_serializer: Some(&Failing),
        search_params: &DefaultSearchParams,
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "body serializer failed: no can do");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn path_options_fill_params_first() {
    let out = call(Method::GET, "/t/:tenant/users/:id")
        .path_options(json!({"tenant": "acme"}))
        .run(json!({"id": 1}))
        .unwrap();
    assert_eq!(out.path_and_query, "/t/acme/users/1");
}

#[test]
fn variables_named_like_path_options_are_dropped_entirely() {
    // Neither the path, nor the query, nor the body sees the caller's `tenant`.
    let call_get =
        call(Method::GET, "/t/:tenant/x").path_options(json!({"tenant": "acme", "region": "eu"}));
    let out = call_get
        .run(json!({"q": 1, "region": "us", "tenant": "evil"}))
        .unwrap();
    assert_eq!(out.path_and_query, "/t/acme/x?q=1");

    let out = call(Method::POST, "/x")
        .path_options(json!({"tenant": "acme"}))
        .run(json!({"a": 1, "tenant": "evil"}))
        .unwrap();
    assert_eq!(json_body(&out), json!({"a": 1}));
}

#[test]
fn path_options_not_used_by_the_path_are_not_sent() {
    let out = call(Method::GET, "/x")
        .path_options(json!({"secret": "s"}))
        .run(json!({"a": 1}))
        .unwrap();
    assert_eq!(out.path_and_query, "/x?a=1");
}

#[test]
fn path_option_values_are_checked_too() {
    let err = call(Method::GET, "/t/:tenant")
        .path_options(json!({"tenant": ".."}))
        .run(Variables::None)
        .unwrap_err();
    assert!(matches!(err, EncodeError::DotSegmentPathParam { ref name, .. } if name == "tenant"));
}

#[test]
fn missing_path_param_is_named() {
    let err = call(Method::GET, "/users/:id")
        .run(json!({"ID": 1}))
        .unwrap_err();
    assert!(matches!(&err, EncodeError::MissingPathParam { name } if name == "id"));
}

#[test]
fn scalar_fills_the_only_param() {
    for (value, path) in [
        (json!(7), "/users/7"),
        (json!("a/b"), "/users/a%2Fb"),
        (json!(true), "/users/true"),
    ] {
        let out = call(Method::GET, "/users/:id").run(value).unwrap();
        assert_eq!(out.path_and_query, path);
        assert!(out.body.is_empty(), "{:?}", out.body);
    }
    // Repeated use of one name is still one distinct parameter.
    let out = call(Method::POST, "/:id/x/:id").run(json!(3)).unwrap();
    assert_eq!(out.path_and_query, "/3/x/3");
    assert!(out.body.is_empty(), "{:?}", out.body);
}

#[test]
fn scalar_is_dropped_when_path_options_hold_the_param() {
    let out = call(Method::GET, "/t/:tenant")
        .path_options(json!({"tenant": "acme"}))
        .run(json!("evil"))
        .unwrap();
    assert_eq!(out.path_and_query, "/t/acme");
}

#[test]
fn scalar_or_array_otherwise_is_not_an_object() {
    for (template, value, found) in [
        ("/x", json!(7), "a number"),
        ("/:a/:b", json!("s"), "a string"),
        ("/:a", json!([1]), "an array"),
        ("/x", json!([]), "an array"),
    ] {
        let err = call(Method::GET, template).run(value).unwrap_err();
        assert!(
            matches!(err, EncodeError::VariablesNotObject { found: f, .. } if f == found),
            "{template}: {err:?}"
        );
        assert!(err.to_string().contains("must be an object"), "{err}");
    }
}

#[test]
fn null_is_no_variables() {
    let out = call(Method::POST, "/x").run(Value::Null).unwrap();
    assert!(out.body.is_empty(), "{:?}", out.body);
    let err = call(Method::GET, "/:id").run(Value::Null).unwrap_err();
    assert!(matches!(err, EncodeError::MissingPathParam { .. }));
}

#[test]
fn form_gives_multipart_and_feeds_path_params() {
    let form = Form::new()
        .text("id", "7")
        .text("title", "Hi")
        .text("id", "8")
        .file(
            "f",
            FilePart::new("data")
                .filename("a.txt")
                .content_type("text/plain"),
        );
    let out = call(Method::POST, "/docs/:id")
        .default_query(json!({"v": 1}))
        .default_body(json!({"by": "courier"}))
        .run(form)
        .unwrap();
    assert_eq!(out.path_and_query, "/docs/7?v=1");
    let EncodedBody::Multipart { boundary, bytes } = &out.body else {
        panic!("{:?}", out.body)
    };
    assert_eq!(
        out.body.content_type().unwrap(),
        format!("multipart/form-data; boundary={boundary}").as_str()
    );
    let body = std::str::from_utf8(bytes).unwrap();
    assert!(!body.contains("name=\"id\""), "{body}");
    assert!(body.contains("name=\"title\"\r\n\r\nHi\r\n"), "{body}");
    assert!(body.contains("name=\"by\"\r\n\r\ncourier\r\n"), "{body}");
    assert!(body.contains("filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\ndata\r\n"));
}

#[test]
fn form_parts_named_like_path_options_are_dropped() {
    let form = Form::new()
        .text("tenant", "evil")
        .file("tenant", FilePart::new("x"))
        .text("a", "1");
    let out = call(Method::POST, "/t/:tenant")
        .path_options(json!({"tenant": "acme"}))
        .run(form)
        .unwrap();
    assert_eq!(out.path_and_query, "/t/acme");
    let body = String::from_utf8(out.body.as_bytes().unwrap().to_vec()).unwrap();
    assert!(!body.contains("tenant"), "{body}");
    assert!(body.contains("name=\"a\""), "{body}");
}

#[test]
fn form_file_cannot_fill_a_path_param() {
    let form = Form::new().file("id", FilePart::new("x"));
    let err = call(Method::POST, "/:id").run(form).unwrap_err();
    assert!(
        matches!(&err, EncodeError::PathParamNotScalar { name, found: "a file" } if name == "id"),
        "{err:?}"
    );
}

#[test]
fn form_without_a_body_is_refused() {
    for method in [Method::GET, Method::DELETE, Method::HEAD] {
        let err = call(method.clone(), "/x")
            .run(Form::new().text("a", "1"))
            .unwrap_err();
        assert!(matches!(&err, EncodeError::FormWithoutBody { method: m } if *m == method));
        assert!(err.to_string().contains(method.as_str()), "{err}");
    }
}

#[test]
fn custom_search_params_serializer_is_used() {
    #[derive(Debug)]
    struct JsonInV;
    impl SearchParamsSerializer for JsonInV {
        fn stringify(&self, params: &Map<String, Value>) -> String {
            format!(
                "_v={}",
                text::encode_component(&Value::Object(params.clone()).to_string())
            )
        }
        fn parse(&self, _: &str) -> Result<Map<String, Value>, SearchParamsError> {
            Err(SearchParamsError::new("write-only"))
        }
    }
    let template = PathTemplate::parse("/x").unwrap();
    let out = encode(EncodeInput {
        method: &Method::GET,
        path: &template,
        path_options: &Map::new(),
        variables: json!({"a": 1}).into(),
        default_query: None,
        default_body: None,
        body_serializer: None,
        search_params: &JsonInV,
    })
    .unwrap();
    assert_eq!(out.path_and_query, "/x?_v=%7B%22a%22%3A1%7D");
    // Not asked to write an empty query.
    let out = encode(EncodeInput {
        method: &Method::GET,
        path: &template,
        path_options: &Map::new(),
        variables: Variables::None,
        default_query: None,
        default_body: None,
        body_serializer: None,
        search_params: &JsonInV,
    })
    .unwrap();
    assert_eq!(out.path_and_query, "/x");
}

#[test]
fn encoded_path_and_query_is_a_valid_uri_part() {
    let out = call(Method::GET, "/a/:x")
        .run(json!({"q": "?#&= [x]", "x": "?#/ é"}))
        .unwrap();
    let pq: http::uri::PathAndQuery = out.path_and_query.parse().unwrap();
    assert_eq!(pq.path(), "/a/%3F%23%2F%20%C3%A9");
    assert_eq!(pq.query(), Some("q=%3F%23%26%3D%20%5Bx%5D"));
}

#[test]
fn consuming_a_path_param_keeps_the_other_keys_in_order() {
    // With `preserve_order`, a swap-remove of `a` would send `c` before `b`.
    let out = call(Method::GET, "/x/:a")
        .run(json!({"a": 7, "b": 1, "c": 2}))
        .unwrap();
    assert_eq!(out.path_and_query, "/x/7?b=1&c=2");
}

#[tokio::test]
async fn arriving_parts_named_like_path_options_or_spent_parameters_are_left_out() {
    use futures_util::stream;
    use http_body_util::BodyExt;
    let arriving = stream::iter([
        Ok::<_, std::io::Error>(("tenant".to_owned(), Part::Text("evil".to_owned()))),
        Ok(("tenant".to_owned(), Part::File(FilePart::new("evil file")))),
        Ok(("id".to_owned(), Part::Text("8".to_owned()))),
        Ok(("id".to_owned(), Part::File(FilePart::new("an id file")))),
        Ok(("kept".to_owned(), Part::Text("yes".to_owned()))),
    ]);
    let form = Form::new().text("id", "7").arriving(arriving);
    let out = call(Method::POST, "/t/:tenant/docs/:id")
        .path_options(json!({"tenant": "acme"}))
        .run(form)
        .unwrap();
    assert_eq!(out.path_and_query, "/t/acme/docs/7");
    let bytes = out.body.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(!body.contains("tenant") && !body.contains("evil"), "{body}");
    // The text that filled `:id` is spent; a file of that name is still the form's.
    assert!(!body.contains("\r\n\r\n8\r\n"), "{body}");
    assert!(body.contains("an id file"), "{body}");
    assert!(body.contains("name=\"kept\"\r\n\r\nyes\r\n"), "{body}");
}
