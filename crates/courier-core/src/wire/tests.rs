use super::*;
use serde_json::json;

#[test]
fn pairs_are_read_as_form_urlencoded_reads_them() {
    for query in [
        "",
        "&",
        "&&_s=demo&",
        "_s=demo&_g=users&_m=get&_v=7",
        "_v=%7B%22id%22%3A7%7D&_s=a+b",
        "_v={\"id\":7}",
        "name",
        "=value",
        "_s==x=y",
        "a%3Db=c%26d",
        "bad=%FF%FE&also=%zz&plus=+%2B+",
        "x=caf%C3%A9&y=café",
    ] {
        let expected: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        let read: Vec<(String, String)> = pairs(query)
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        assert_eq!(read, expected, "{query:?}");
    }
}

proptest::proptest! {
    #[test]
    fn any_query_is_read_as_form_urlencoded_reads_it(query in "[a-z_=&%+0-9A-Fé ]{0,40}") {
        let expected: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        let read: Vec<(String, String)> = pairs(&query)
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        proptest::prop_assert_eq!(read, expected);
    }

    #[test]
    fn what_the_caller_writes_the_proxy_reads(
        group in "[a-z.]{0,12}",
        name in "[a-zA-Z_]{1,8}",
        variables in "[ -~é&=+%]{0,24}",
    ) {
        let mut query = form_urlencoded::Serializer::new(String::new());
        CallAddress { source: "demo", group: &group, name: &name }
            .append_to(|n, v| { query.append_pair(n, v); });
        let json = variables_json(&Value::from(variables.clone()));
        query.append_pair(VARIABLES, &json);
        let query = query.finish();
        let read = WireQuery::parse(&query).unwrap();
        proptest::prop_assert_eq!(read.source(), "demo");
        proptest::prop_assert_eq!(read.group.as_deref(), Some(group.as_str()));
        proptest::prop_assert_eq!(read.name.as_deref(), Some(name.as_str()));
        proptest::prop_assert_eq!(read.variables.as_deref(), Some(json.as_str()));
    }
}

fn variables(body: &str) -> Result<Value, String> {
    match read_call_body(body.as_bytes()) {
        Ok(Variables::Json(value)) => Ok(value),
        Ok(Variables::None) => Ok(Value::Null),
        Ok(Variables::Form(_)) => unreachable!("JSON bodies hold no form"),
        Err(refusal) => Err(refusal.message().to_owned()),
    }
}

#[test]
fn a_body_is_variables_and_nothing_else() {
    assert_eq!(
        variables(r#"{"variables":{"q":"ada"}}"#),
        Ok(json!({"q": "ada"}))
    );
    assert_eq!(variables(r#"{"variables":null}"#), Ok(Value::Null));
    assert_eq!(variables(""), Ok(Value::Null));
    assert_eq!(variables(" \r\n"), Ok(Value::Null));
    let refused = |body: &str, says: &str| {
        let message = variables(body).expect_err(body);
        assert!(message.contains(says), "{body}: {message}");
        assert!(message.contains(r#"{"variables": …}"#), "{message}");
    };
    refused(r#"{"q":"ada"}"#, "no `variables` key");
    refused("{}", "no `variables` key");
    refused(r#"{"variables":{},"extra":1}"#, "the key `extra` beside");
    refused("[1,2]", "not a JSON object");
    refused("null", "not a JSON object");
    refused("{\"variables\":", "not JSON");
    refused(&"[".repeat(10_000), "not JSON");
}

#[test]
fn the_body_written_is_the_body_read() {
    for value in [json!({"q": "ada"}), json!(7), json!([1, "two"])] {
        assert_eq!(variables(&call_body(Some(&value))), Ok(value));
    }
    assert_eq!(call_body(None), r#"{"variables":null}"#);
    assert_eq!(variables(&call_body(None)), Ok(Value::Null));
}

#[test]
fn a_wire_parameter_may_not_repeat() {
    // A parameter of the page's own may repeat; it is not the proxy's to read.
    let query = WireQuery::parse("_s=demo&_g=users&_m=get&x=1&x=2").unwrap();
    assert_eq!(query.source(), "demo");
    assert_eq!(
        (query.group.as_deref(), query.name.as_deref()),
        (Some("users"), Some("get"))
    );
    for twice in [
        "_s=demo&_s=admin",
        "_v=1&_g=a&_v=2",
        "_t=5&_t=6",
        "_x=1&_x=2",
    ] {
        let name = &twice[..2];
        let refused = WireQuery::parse(twice).unwrap_err();
        assert!(
            refused
                .message()
                .contains(&format!("`{name}` parameter appears more than once")),
            "{twice}: {refused}"
        );
    }
    let decoded = WireQuery::parse("_v=%7B%22a%22%3A%22b+c%22%7D&_g=a%2Eb").unwrap();
    assert_eq!(decoded.variables.as_deref(), Some(r#"{"a":"b c"}"#));
    assert_eq!(decoded.group.as_deref(), Some("a.b"));
    // Bytes that are not UTF-8 once decoded are replaced, never a panic.
    let lossy = WireQuery::parse("_m=%FF%FE").unwrap();
    assert_eq!(lossy.name.as_deref(), Some("\u{FFFD}\u{FFFD}"));
}

#[test]
fn a_timeout_is_whole_milliseconds_rounded_up() {
    use std::time::Duration;
    assert_eq!(timeout_millis(Duration::from_millis(1500)), "1500");
    assert_eq!(timeout_millis(Duration::from_micros(1_500_001)), "1501");
    assert_eq!(timeout_millis(Duration::from_nanos(1)), "1");
}

#[test]
fn a_hello_is_written_in_order_and_read_back() {
    let auth = json!({"token": "t"}).as_object().unwrap().clone();
    let headers = json!({"x-tenant": "acme"}).as_object().unwrap().clone();
    assert_eq!(hello_frame(None, None, &Map::new()), None);
    let frame = hello_frame(None, Some(&auth), &headers).unwrap();
    assert_eq!(
        frame,
        r#"{"type":"courier.hello","auth":{"token":"t"},"headers":{"x-tenant":"acme"}}"#
    );
    let read = first_frame(&frame).unwrap();
    assert_eq!((read.auth, read.headers), (Some(auth), Some(headers)));
    assert_eq!(
        hello_frame(None, None, &json!({"a": "1"}).as_object().unwrap().clone()).unwrap(),
        r#"{"type":"courier.hello","headers":{"a":"1"}}"#
    );
}

#[test]
fn a_hello_says_whether_and_from_where_the_client_keeps_positions() {
    let fresh = hello_frame(Some(None), None, &Map::new()).unwrap();
    assert_eq!(fresh, r#"{"type":"courier.hello","since":null}"#);
    assert_eq!(first_frame(&fresh).unwrap().since, Some(None));
    let back = hello_frame(Some(Some("e1:7")), None, &Map::new()).unwrap();
    assert_eq!(back, r#"{"type":"courier.hello","since":"e1:7"}"#);
    assert_eq!(
        first_frame(&back).unwrap().since,
        Some(Some("e1:7".to_owned()))
    );
    // Anything but null or a string is kept as its text, which is then no position.
    let odd = first_frame(r#"{"type":"courier.hello","since":{"a":1}}"#).unwrap();
    assert_eq!(odd.since, Some(Some(r#"{"a":1}"#.to_owned())));
    assert_eq!(
        first_frame(r#"{"type":"courier.hello"}"#).unwrap().since,
        None
    );
}

#[test]
fn positioned_frames_are_read_back_and_anything_else_is_a_message() {
    assert_eq!(at_frame("e1:0"), r#"{"type":"courier.at","at":"e1:0"}"#);
    let frame = positioned_frame("e1:3", &json!({"text": "hi"}));
    assert_eq!(
        frame,
        r#"{"type":"courier.message","at":"e1:3","data":{"text":"hi"}}"#
    );
    // The message as JSON, and its position.
    let read = |text: &str| match server_frame(text) {
        ServerFrame::Message(data, at) => (
            Some(serde_json::from_str::<serde_json::Value>(data).unwrap()),
            at.map(str::to_owned),
        ),
        ServerFrame::At(at) => (None, Some(at.to_owned())),
    };
    assert_eq!(
        read(&frame),
        (Some(json!({"text": "hi"})), Some("e1:3".into()))
    );
    assert_eq!(read(&at_frame("e1:0")), (None, Some("e1:0".into())));
    for plain in [
        r#"{"type":"courier.message","at":3,"data":1}"#,
        r#"{"type":"courier.message","at":"e1:3"}"#,
        r#"{"type":"courier.at"}"#,
        r#"{"text":"hi"}"#,
        r#"[1,2]"#,
    ] {
        let value: serde_json::Value = serde_json::from_str(plain).unwrap();
        assert_eq!(read(plain), (Some(value), None), "{plain}");
    }
}

#[test]
fn a_hello_gives_its_objects_and_a_message_is_kept() {
    let hello = first_frame(r#"{"type":"courier.hello","auth":{"t":1},"headers":"no"}"#);
    assert_eq!(
        hello,
        Ok(FirstFrame {
            auth: Some(json!({"t": 1}).as_object().unwrap().clone()),
            headers: None,
            since: None,
            pending: None,
        })
    );
    let message = first_frame(r#"{"text":"hi"}"#).unwrap();
    assert_eq!(message.pending, Some(json!({"text": "hi"})));
    assert_eq!(first_frame(PING), Ok(FirstFrame::default()));
    assert_eq!(first_frame("not json"), Err(NotJson));
    assert!(is_hello(&json!({"type": "courier.hello"})));
    assert!(!is_hello(&json!(["courier.hello"])));
    assert!(is_ping(&serde_json::from_str(PING).unwrap()));
    assert!(!is_ping(&json!({"type": "courier.hello"})));
    assert!(!is_ping(&json!("courier.ping")));
}

#[test]
fn a_message_is_utf8_json() {
    assert_eq!(message(b"[1]"), Ok(json!([1])));
    assert_eq!(message(b"\xff\xfe"), Err(NotJson));
    assert_eq!(message(b"{"), Err(NotJson));
    assert_eq!(message("[".repeat(100_000).as_bytes()), Err(NotJson));
}

#[test]
fn a_refusal_close_is_4000_and_the_status_its_reason_cut_on_a_character() {
    let (code, reason) = refusal_close(404, "ENDPOINT_NOT_IN_ROUTES", "not exposed");
    assert_eq!(
        (code, reason.as_str()),
        (4404, "ENDPOINT_NOT_IN_ROUTES: not exposed")
    );
    let (_, long) = refusal_close(403, "X", &"é".repeat(100));
    assert!(long.len() <= MAX_CLOSE_REASON, "{}", long.len());
    assert_eq!(
        long.len(),
        123,
        "3 bytes of `X: ` and 60 two-byte characters"
    );
}

#[test]
fn an_error_body_is_written_and_read() {
    let body = error_body("CSRF_CHECK_FAILED", "no token");
    assert_eq!(
        body.to_string(),
        r#"{"error":{"code":"CSRF_CHECK_FAILED","message":"no token"}}"#
    );
    assert_eq!(
        read_error_body(&body),
        Some(("CSRF_CHECK_FAILED", Some("no token")))
    );
    assert_eq!(
        read_error_body(&json!({"error": {"code": "X"}})),
        Some(("X", None))
    );
    assert_eq!(read_error_body(&json!({"error": "no such todo"})), None);
    assert_eq!(read_error_body(&json!("text")), None);
}

#[test]
fn json_media_types() {
    for yes in [
        "application/json",
        "APPLICATION/JSON; charset=utf-8",
        " application/problem+json ",
        "application/vnd.x+JSON",
        "+json",
    ] {
        assert!(is_json_media_type(yes), "{yes}");
    }
    for no in [
        "",
        "text/json",
        "application/jsonx",
        "json",
        "application/x-json5",
        "é+jso",
    ] {
        assert!(!is_json_media_type(no), "{no}");
    }
}

/// `js/test/wire-vectors.json`, which the browser package's unit tests read, is what this
/// module writes: `COURIER_WRITE_VECTORS=1 cargo test -p courier-core wire` writes it again.
#[test]
fn the_browser_packages_vectors_are_current() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../js/test/wire-vectors.json");
    let written = vectors::json();
    if std::env::var_os("COURIER_WRITE_VECTORS").is_some() {
        std::fs::write(&path, &written).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == written,
        "{} is not what the wire writes: run `COURIER_WRITE_VECTORS=1 cargo test -p courier-core wire` and commit it",
        path.display()
    );
}

#[test]
fn an_address_is_checked_for_its_shape() {
    let (address, variables) =
        WireQuery::parse("_s=demo&_g=admin.users&_m=get&_v=%7B%22id%22%3A7%7D")
            .unwrap()
            .address()
            .map(|(a, v)| {
                (
                    (a.source.to_owned(), a.group.to_owned(), a.name.to_owned()),
                    v,
                )
            })
            .unwrap();
    assert_eq!(address, ("demo".into(), "admin.users".into(), "get".into()));
    assert_eq!(variables, json!({"id": 7}));
    let no_variables = WireQuery::parse("_s=demo&_g=users&_m=list").unwrap();
    assert_eq!(no_variables.address().unwrap().1, Value::Null);
    for (query, says) in [
        ("_g=users&_m=get", "the `_s` parameter is missing"),
        ("_s=demo&_m=get", "the `_g` parameter is missing"),
        ("_s=demo&_g=users", "the `_m` parameter is missing"),
        ("_s=&_g=users&_m=get", "`_s` is empty"),
        ("_s=demo&_g=users..x&_m=get", "`_g` is a group path"),
        (
            "_s=demo&_g=users&_m=a.b",
            "`_m` is an endpoint's name (no dots)",
        ),
        ("_s=demo&_g=users&_m=", "`_m` is an endpoint's name"),
        ("_s=demo&_g=users&_m=get&_v=%7B", "`_v` is not JSON"),
    ] {
        let refused = WireQuery::parse(query).unwrap().address().unwrap_err();
        assert!(refused.message().contains(says), "{query}: {refused}");
    }
}
