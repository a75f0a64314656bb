use super::*;
use http::uri::PathAndQuery;
use percent_encoding::percent_decode_str;
use proptest::prelude::*;
use serde_json::{json, Map};

fn render(template: &str, values: Value) -> Result<String, EncodeError> {
    let map: Map<String, Value> = match values {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let template = PathTemplate::parse(template).expect("valid template");
    template.render(&|name| map.get(name))
}

#[test]
fn parses_params_at_segment_start() {
    let t = PathTemplate::parse("/users/:id/posts/:post_id").unwrap();
    assert_eq!(t.params().collect::<Vec<_>>(), ["id", "post_id"]);
    let t = PathTemplate::parse(":a/:b").unwrap();
    assert_eq!(t.params().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(t.as_str(), ":a/:b");
    assert_eq!(t.to_string(), ":a/:b");
}

#[test]
fn identifier_ends_at_first_other_char() {
    let t = PathTemplate::parse("/files/:name.json").unwrap();
    assert_eq!(t.params().collect::<Vec<_>>(), ["name"]);
    assert_eq!(
        render("/files/:name.json", json!({"name": "a b"})).unwrap(),
        "/files/a%20b.json"
    );
    let t = PathTemplate::parse("/:a-:b").unwrap();
    assert_eq!(t.params().collect::<Vec<_>>(), ["a"]);
}

#[test]
fn colon_elsewhere_is_literal() {
    let t = PathTemplate::parse("/a:b/x:y/v1:batchGet").unwrap();
    assert_eq!(t.params().count(), 0);
    assert_eq!(render("/a:b/x:y", json!({})).unwrap(), "/a:b/x:y");
}

#[test]
fn repeated_params_listed_twice_counted_once() {
    let t = PathTemplate::parse("/:id/x/:id").unwrap();
    assert_eq!(t.params().collect::<Vec<_>>(), ["id", "id"]);
    assert_eq!(t.distinct_params(), ["id"]);
    assert_eq!(render("/:id/x/:id", json!({"id": 3})).unwrap(), "/3/x/3");
}

#[test]
fn empty_template_is_allowed() {
    let t = PathTemplate::parse("").unwrap();
    assert_eq!(t.params().count(), 0);
    assert_eq!(render("", json!({})).unwrap(), "");
}

#[test]
fn refuses_query_fragment_space_control_and_non_uri_chars() {
    for (template, ch) in [
        ("/a?b", '?'),
        ("/a#b", '#'),
        ("/a b", ' '),
        ("/a\nb", '\n'),
        ("/a\u{7f}", '\u{7f}'),
        ("/é", 'é'),
        ("/a\"b", '"'),
        ("/a<b>", '<'),
        ("/a\\b", '\\'),
        ("/a{b}", '{'),
        ("/a|b", '|'),
        ("/a^b", '^'),
        ("/a`b", '`'),
        ("/a[b]", '['),
    ] {
        match PathTemplate::parse(template) {
            Err(PathTemplateError::ForbiddenChar { ch: found, .. }) => {
                assert_eq!(found, ch, "{template:?}")
            }
            other => panic!("{template:?}: {other:?}"),
        }
    }
}

#[test]
fn a_braced_parameter_is_another_spelling_of_a_colon_one() {
    for (braced, colon) in [
        ("/todos/{id}", "/todos/:id"),
        ("{tenant}/todos", ":tenant/todos"),
        ("/files/{name}.json", "/files/:name.json"),
        ("/{a}/{b_2}/x", "/:a/:b_2/x"),
    ] {
        let parsed = PathTemplate::parse(braced).unwrap();
        assert_eq!(parsed, PathTemplate::parse(colon).unwrap(), "{braced}");
        assert_eq!(parsed.as_str(), colon);
    }
    // Mixed in one template.
    let mixed = PathTemplate::parse("/:org/repos/{repo}").unwrap();
    assert_eq!(mixed.params().collect::<Vec<_>>(), ["org", "repo"]);
}

#[test]
fn a_brace_that_is_not_a_parameter_is_refused_saying_what_is() {
    for template in [
        "/a{id}", "/{}", "/a{", "/a}", "/{id", "/{1x}", "/{a-b}", "/{id}{x}",
    ] {
        let err = PathTemplate::parse(template).unwrap_err().to_string();
        assert!(
            err.contains(
                "a parameter is `{name}` or `:name` at the start of a segment, `name` an identifier"
            ),
            "{template:?}: {err}"
        );
    }
    let err = PathTemplate::parse("/files/{*rest}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "a catch-all `{*rest}` has no courier counterpart: a parameter is one segment, `{rest}` or `:rest`"
        ),
        "{err}"
    );
}

#[test]
fn refuses_bad_percent_encoding() {
    for template in ["/a%", "/a%2", "/a%zz", "/%g0"] {
        assert!(
            matches!(
                PathTemplate::parse(template),
                Err(PathTemplateError::BadPercentEncoding { .. })
            ),
            "{template:?}"
        );
    }
    assert!(PathTemplate::parse("/a%2Fb%e9").is_ok());
}

#[test]
fn refuses_colon_without_identifier() {
    for (template, index) in [("/:", 1), ("/a/:/b", 3), (":", 0), ("/:1", 1), ("/::a", 1)] {
        let err = PathTemplate::parse(template).unwrap_err();
        assert_eq!(
            err,
            PathTemplateError::MissingParamName {
                template: template.into(),
                index
            }
        );
        assert!(err.to_string().contains("no parameter name"), "{err}");
    }
}

#[test]
fn substitutes_scalars_by_json_text() {
    assert_eq!(render("/u/:v", json!({"v": "ab"})).unwrap(), "/u/ab");
    assert_eq!(render("/u/:v", json!({"v": 42})).unwrap(), "/u/42");
    assert_eq!(render("/u/:v", json!({"v": -1.5})).unwrap(), "/u/-1.5");
    assert_eq!(render("/u/:v", json!({"v": true})).unwrap(), "/u/true");
}

#[test]
fn encodes_everything_but_unreserved() {
    assert_eq!(
        render("/u/:v", json!({"v": "a/b?c#d%e\\f é~-._"})).unwrap(),
        "/u/a%2Fb%3Fc%23d%25e%5Cf%20%C3%A9~-._"
    );
    assert_eq!(render("/u/:v", json!({"v": "..."})).unwrap(), "/u/...");
    assert_eq!(
        render("/u/:v", json!({"v": "%2E%2E"})).unwrap(),
        "/u/%252E%252E"
    );
}

#[test]
fn refuses_empty_and_dot_segments() {
    let err = render("/u/:v", json!({"v": ""})).unwrap_err();
    assert!(matches!(&err, EncodeError::EmptyPathParam { name } if name == "v"));
    assert!(err.to_string().contains("`v`"), "{err}");
    for dots in [".", ".."] {
        let err = render("/u/:v", json!({ "v": dots })).unwrap_err();
        assert!(
            matches!(&err, EncodeError::DotSegmentPathParam { name, value } if name == "v" && value == dots)
        );
        assert!(err.to_string().contains("`v`"), "{err}");
    }
}

#[test]
fn refuses_null_arrays_and_objects_naming_the_param() {
    for (value, found) in [
        (json!(null), "null"),
        (json!([1]), "an array"),
        (json!({"a": 1}), "an object"),
    ] {
        let err = render("/u/:id", json!({ "id": value })).unwrap_err();
        assert!(
            matches!(&err, EncodeError::PathParamNotScalar { name, found: f } if name == "id" && *f == found),
            "{err:?}"
        );
        assert!(err.to_string().contains("`id`"), "{err}");
    }
}

#[test]
fn missing_param_is_named() {
    let err = render("/u/:id", json!({})).unwrap_err();
    assert!(matches!(&err, EncodeError::MissingPathParam { name } if name == "id"));
    assert_eq!(err.to_string(), "no value for path parameter `id`");
}

/// A template segment for the property test: a literal, or a parameter with a literal suffix.
#[derive(Clone, Debug)]
enum Seg {
    Literal(String),
    Param(String),
}

fn segment() -> impl Strategy<Value = Seg> {
    prop_oneof![
        // A literal must not start with `:`, or it would be a parameter.
        "([A-Za-z0-9._~@!$&'()*+,;=%-][A-Za-z0-9._~:@!$&'()*+,;=-]{0,5})?"
            .prop_map(|s| Seg::Literal(s.replace('%', "%25"))),
        // A suffix must not start with an identifier char, or it would lengthen the name.
        "([.~-][A-Za-z0-9._~:-]{0,3})?".prop_map(Seg::Param),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        "[./%?#\\\\ a-z]{0,4}",
        "(\\.|/|%|\\?|#|&|=|\\+|é|😀|\\PC){0,6}",
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn values_never_change_the_path_structure(
        segs in proptest::collection::vec((segment(), value()), 0..5),
        leading_slash in any::<bool>(),
    ) {
        // Build the template; parameter i is called `p{i}`.
        let mut pieces = Vec::new();
        let mut values = Map::new();
        for (i, (seg, value)) in segs.iter().enumerate() {
            match seg {
                Seg::Literal(text) => pieces.push(text.clone()),
                Seg::Param(suffix) => {
                    pieces.push(format!(":p{i}{suffix}"));
                    values.insert(format!("p{i}"), Value::String(value.clone()));
                }
            }
        }
        let template = format!("{}{}", if leading_slash { "/" } else { "" }, pieces.join("/"));
        let parsed = PathTemplate::parse(&template).expect("generated template is valid");
        let result = parsed.render(&|name| values.get(name));

        let refused = segs.iter().any(|(seg, v)| {
            matches!(seg, Seg::Param(_)) && matches!(v.as_str(), "" | "." | "..")
        });
        prop_assert_eq!(result.is_err(), refused, "{:?}", result);
        let Ok(rendered) = result else { return Ok(()) };

        let template_segs: Vec<&str> = template.split('/').collect();
        let rendered_segs: Vec<&str> = rendered.split('/').collect();
        prop_assert_eq!(template_segs.len(), rendered_segs.len());
        let offset = usize::from(leading_slash);
        for (i, (seg, value)) in segs.iter().enumerate() {
            let out = rendered_segs[i + offset];
            match seg {
                Seg::Literal(text) => prop_assert_eq!(out, text.as_str()),
                Seg::Param(suffix) => {
                    prop_assert!(out != "." && out != "..", "dot-segment {out:?}");
                    let encoded = out.strip_suffix(suffix.as_str());
                    prop_assert!(encoded.is_some(), "{out:?} lacks {suffix:?}");
                    let decoded = percent_decode_str(encoded.unwrap_or_default())
                        .decode_utf8()
                        .map(|text| text.into_owned());
                    prop_assert_eq!(decoded.ok(), Some(value.clone()));
                }
            }
        }

        if leading_slash {
            let pq: PathAndQuery = rendered.parse().expect("renders a valid path");
            prop_assert_eq!(pq.path(), rendered.as_str());
            prop_assert_eq!(pq.query(), None);
        }
    }

    #[test]
    fn parse_never_panics(template in any::<String>()) {
        let _ = PathTemplate::parse(&template);
    }
}

#[test]
fn numbers_are_written_as_their_json_text() {
    for number in [
        json!(0),
        json!(7),
        json!(u64::MAX),
        json!(-42),
        json!(i64::MIN),
        json!(1.5),
        json!(-0.25),
        json!(1e300),
    ] {
        let expected = percent_encoding::utf8_percent_encode(
            &number.to_string(),
            super::super::text::COMPONENT,
        )
        .to_string();
        assert_eq!(
            render("/n/:n", json!({ "n": number })).unwrap(),
            format!("/n/{expected}"),
            "{number}"
        );
    }
}

proptest! {
    #[test]
    fn integers_render_as_their_json_text(n in any::<i64>(), u in any::<u64>()) {
        prop_assert_eq!(render("/:a/:b", json!({ "a": n, "b": u })).unwrap(), format!("/{n}/{u}"));
    }
}
