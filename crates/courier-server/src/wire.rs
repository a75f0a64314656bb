//! What the proxy reads off a browser's request before anything else: the wire protocol's query
//! parameters and a POST's JSON body. Both come from a hostile party, so each is read strictly
//! and refused with a 400 that names the expected shape, never guessed at.

use crate::refusal::Refusal;
use axum::extract::FromRequestParts;
use courier_core::encode::Variables;
use serde_json::Value;
use std::borrow::Cow;

/// The wire protocol's parameters of the request's query: `_s` (source), `_g` (group path),
/// `_m` (endpoint name), `_v` (variables, JSON), `_t` (timeout) and `_h` (a hello frame comes).
/// None may repeat, nor may any other parameter starting with `_`: two `_s` or two `_v` would be
/// read one way here and perhaps another way by whatever logged or cached the request, so the
/// request is refused. The page's own parameters (no `_`) are left alone.
///
/// Named fields rather than a map: reading them is on every proxied call's path, and a map of
/// owned names hashed its keys and allocated for each (6,400 instructions of a proxied call's
/// 87,000 under `valgrind --tool=callgrind`, BENCHMARKS.md, "The proxy hop").
#[derive(Debug, Default)]
pub(crate) struct WireQuery {
    pub(crate) source: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) variables: Option<String>,
    pub(crate) timeout: Option<String>,
    pub(crate) hello: Option<String>,
}

impl WireQuery {
    /// Parses a query string (`application/x-www-form-urlencoded`, as browsers write it).
    pub(crate) fn parse(query: &str) -> Result<Self, Refusal> {
        let mut wire = Self::default();
        // Other `_` names the protocol does not use: refused when repeated, as its own are.
        let mut others: Vec<String> = Vec::new();
        for (name, value) in pairs(query) {
            let slot = match name.as_ref() {
                "_s" => &mut wire.source,
                "_g" => &mut wire.group,
                "_m" => &mut wire.name,
                "_v" => &mut wire.variables,
                "_t" => &mut wire.timeout,
                "_h" => &mut wire.hello,
                other if other.starts_with('_') => {
                    if others.iter().any(|seen| seen == other) {
                        return Err(repeated(other));
                    }
                    others.push(other.to_owned());
                    continue;
                }
                _ => continue,
            };
            if slot.is_some() {
                return Err(repeated(&name));
            }
            *slot = Some(value.into_owned());
        }
        Ok(wire)
    }

    /// The source named (`address` has checked there is one).
    pub(crate) fn source(&self) -> &str {
        self.source.as_deref().unwrap_or_default()
    }
}

/// The query's name-value pairs, as `form_urlencoded::parse` reads them: split at `&`, empty
/// pairs skipped, the name up to the first `=`, `+` a space and `%XX` a byte, then UTF-8 with
/// any invalid sequence replaced.
///
/// The one optimisation of the wire reading: a pair with neither `%` nor `+` decodes to itself,
/// so it is borrowed as it is, and only other pairs go through `form_urlencoded`. The
/// protocol's own parameters seldom need decoding; decoding every pair cost about 2,000 of a
/// proxied read's instructions (callgrind, BENCHMARKS.md, "One thread per connection's work").
fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            // Bytes, not chars: `%`, `+` and `=` are ASCII, so each is a char boundary too.
            let bytes = pair.as_bytes();
            if bytes.iter().any(|&b| b == b'%' || b == b'+') {
                // One pair, not empty: `parse` yields exactly one.
                return form_urlencoded::parse(bytes).next().unwrap_or_default();
            }
            match bytes.iter().position(|&b| b == b'=') {
                Some(at) => (Cow::Borrowed(&pair[..at]), Cow::Borrowed(&pair[at + 1..])),
                None => (Cow::Borrowed(pair), Cow::Borrowed("")),
            }
        })
}

fn repeated(name: &str) -> Refusal {
    Refusal::BadRequest(format!("the `{name}` parameter appears more than once"))
}

impl<S: Send + Sync> FromRequestParts<S> for WireQuery {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Self::parse(parts.uri.query().unwrap_or_default())
    }
}

/// The expected shape of a POST's JSON body, for refusals.
const SHAPE: &str = "a POST's JSON body is `{\"variables\": …}` (`{\"variables\": null}`, or no \
                     body at all, for a call without variables)";

/// The variables of a POST's JSON body: `{"variables": …}` and nothing else. An empty body is
/// a call without variables. A body without `variables` (a REST-shaped body, say) or with other
/// keys beside it is refused: taken as "no variables", a filtered read would come back
/// unfiltered and a write would reach the upstream empty.
pub(crate) fn call_body(bytes: &[u8]) -> Result<Variables, Refusal> {
    if bytes.trim_ascii().is_empty() {
        return Ok(Variables::None);
    }
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|e| Refusal::BadRequest(format!("the body is not JSON ({e}); {SHAPE}")))?;
    let Value::Object(mut body) = body else {
        return Err(Refusal::BadRequest(format!(
            "the body is not a JSON object; {SHAPE}"
        )));
    };
    let Some(variables) = body.remove("variables") else {
        return Err(Refusal::BadRequest(format!(
            "the body has no `variables` key; {SHAPE}"
        )));
    };
    if let Some(key) = body.keys().next() {
        return Err(Refusal::BadRequest(format!(
            "the body has the key `{key}` beside `variables`; {SHAPE}"
        )));
    }
    Ok(variables.into())
}

#[cfg(test)]
mod tests {
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
    }

    fn variables(body: &str) -> Result<Value, String> {
        match call_body(body.as_bytes()) {
            Ok(Variables::Json(value)) => Ok(value),
            Ok(Variables::None) => Ok(Value::Null),
            Ok(Variables::Form(_)) => unreachable!("JSON bodies hold no form"),
            Err(refusal) => Err(refusal.message().into_owned()),
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
                "{twice}: {}",
                refused.message()
            );
        }
        let decoded = WireQuery::parse("_v=%7B%22a%22%3A%22b+c%22%7D&_g=a%2Eb").unwrap();
        assert_eq!(decoded.variables.as_deref(), Some(r#"{"a":"b c"}"#));
        assert_eq!(decoded.group.as_deref(), Some("a.b"));
        // Bytes that are not UTF-8 once decoded are replaced, never a panic.
        let lossy = WireQuery::parse("_m=%FF%FE").unwrap();
        assert_eq!(lossy.name.as_deref(), Some("\u{FFFD}\u{FFFD}"));
    }
}
