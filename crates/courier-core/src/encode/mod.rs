//! Variable encoding: from an endpoint's address template and a call's variables to a
//! path-and-query string and a request body.
//!
//! Pure functions, no I/O. [`encode`] is the entry point; [`PathTemplate::parse`] checks a
//! template when an endpoint is defined, and [`join_path`] composes an address from its pieces.
//! Unlike a plain `serde_urlencoded` call, encoding here decides *where* each variable goes
//! (path, query or body) by the rules below, which are the contract other parts of courier
//! rely on.
//!
//! # Addresses
//!
//! [`join_path`] joins the base path, the group prefixes (outer to inner) and the endpoint path
//! with exactly one `/` at each joint; empty pieces add nothing, the result starts with `/` unless
//! empty, and the last piece's trailing `/` is kept.
//!
//! # Path templates
//!
//! A parameter is a `:` at the start of a segment followed by an identifier
//! `[A-Za-z_][A-Za-z0-9_]*`; the rest of the segment is literal, so `/files/:name.json` has the
//! parameter `name`. A `:` anywhere else is literal. [`PathTemplate::parse`] refuses `?`, `#`,
//! spaces, control characters, anything else RFC 3986 leaves out of a path, a bad `%` escape, and
//! a segment-initial `:` with no name after it.
//!
//! Each value is percent-encoded as **one** segment: everything but the unreserved characters
//! (`A-Z a-z 0-9 - . _ ~`) is escaped, so `/`, `?`, `#`, `%`, `\` and non-ASCII never pass raw.
//! Strings are used as-is, numbers by their JSON text, booleans as `true`/`false`. Refused, with
//! an error naming the parameter: a missing value; `null`, arrays and objects; the empty string
//! (an empty segment); `.` and `..` (URL parsers treat even `%2E%2E` as a dot-segment). So no value
//! can change the path's structure: the rendered path has the template's segments, literal ones
//! unchanged, and each substituted segment decodes back to its value.
//!
//! # Where variables go
//!
//! 1. **Path first.** A parameter's value comes from `pathOptions` if it has the key, else from
//!    the variables. A variable whose key `pathOptions` holds is dropped entirely: it fills no
//!    parameter and is sent neither in the query nor the body, so a browser cannot override a
//!    server-set value such as a tenant. Variables used by the path are consumed.
//! 2. **Scalars.** Variables that are a single string, number or boolean are accepted when the
//!    template has exactly one distinct parameter, which they fill (a newtype `UserId(7)` for
//!    `/users/:id`); otherwise they, and arrays, are [`EncodeError::VariablesNotObject`].
//!    If `pathOptions` holds that parameter, the scalar is dropped like any such variable.
//!    `null` counts as no variables.
//! 3. **Without a body** ([`method_has_body`] false: GET, DELETE, HEAD, OPTIONS, ...): the
//!    remaining variables become search parameters, merged over `defaultQueryParams` (a variable
//!    replaces a default of the same key). A [`Form`] is an error.
//! 4. **With a body** (POST, PUT, PATCH, QUERY): `defaultQueryParams` still become search
//!    parameters. The remaining variables, merged over `defaultBody` (variables win), become a
//!    JSON object, or the [`BodySerializer`]'s output when the source has one. When that merged
//!    object is empty there is no body at all ([`EncodedBody::Empty`]).
//! 5. **Forms.** A [`Form`] on a body method becomes `multipart/form-data`: its text parts, then
//!    `defaultBody` entries whose name the form lacks (strings raw, numbers and booleans by their
//!    JSON text, arrays and objects as JSON text, nulls left out), then its files, each with a
//!    `filename` (`blob` when none was given, as browsers do) and a `Content-Type`
//!    (`application/octet-stream` by default). The boundary occurs in no part. A path parameter
//!    may take its value from the form's first text part of that name; all text parts of that
//!    name are then consumed, and a parameter named only by a file part is an error. A form
//!    with a [streamed file](FilePart::streamed) or parts still [arriving](Form::arriving)
//!    becomes a body written as it is read ([`EncodedBody::MultipartStream`]): the same bytes,
//!    with the arriving parts last, in the order they come, and the same parts left out.
//!
//! # How variables become search parameters
//!
//! [`DefaultSearchParams`] writes the map's keys in the map's own order (sorted, unless
//! serde_json's `preserve_order` feature is on). Keys and values are percent-encoded with
//! everything but the unreserved characters escaped: a space is `%20` (never `+`), and the
//! brackets of nested keys are written `%5B`/`%5D`, since RFC 3986 does not allow them raw in a
//! query.
//!
//! | Variables | Query string (brackets shown unescaped for reading) |
//! |---|---|
//! | `{"all": true, "page": 2, "q": "a b"}` | `all=true&page=2&q=a%20b` |
//! | `{"gone": null}` | *(nothing)* |
//! | `{"tags": ["a", "b"]}` | `tags=a&tags=b` |
//! | `{"tags": []}` | *(nothing)* |
//! | `{"filter": {"name": "x", "tags": ["a", "b"]}}` | `filter[name]=x&filter[tags]=a&filter[tags]=b` |
//! | `{"a": {"b": {"c": 1}}}` | `a[b][c]=1` |
//! | `{"m": [[1, 2], {"k": 1}]}` | `m=[1,2]&m={"k":1}` (JSON text, percent-encoded) |
//!
//! So: strings as-is, numbers by their JSON text, booleans `true`/`false`; `null` is skipped
//! (also inside arrays and objects); arrays repeat the key; objects nest with brackets to any
//! depth; an array or object inside an array becomes its JSON text.
//!
//! [`DefaultSearchParams::parse`](SearchParamsSerializer::parse) reads a query back: it splits
//! on `&`, decodes keys and values (`+` and `%20` as a space, `%5B` and `[` alike, invalid UTF-8
//! as U+FFFD), rebuilds brackets into nested objects and repeated keys into arrays, and also reads
//! a trailing `[]` (`ids[]=1`) as an array. Malformed brackets, and a name used both for a value
//! and for fields (`a=1&a[b]=2`), are errors.
//!
//! **The one ambiguity:** every value comes back as a string, and a one-element array comes back
//! as a single string: `{"n": 7, "tags": ["x"]}` gives `n=7&tags=x`, read back as
//! `{"n": "7", "tags": "x"}`. Types that accept "one or many" should deserialize either form.
//! Apart from that, for keys that are non-empty and bracket-free at every level,
//! `parse(stringify(m)) == m` and `stringify(parse(stringify(m))) == stringify(m)`. Other keys
//! have no query form of their own, since `%5B` reads as `[`: `{"a": {"b]": 1}}` gives
//! `a%5Bb%5D%5D=1`, which `parse` refuses, and `{"a": {"": 1}}` gives `a%5B%5D=1`, read back as
//! `{"a": ["1"]}`.
//!
//! [`UrlEncodedBody`] writes bodies by the same rules as `application/x-www-form-urlencoded`.

mod body;
mod error;
mod form;
mod join;
mod multipart;
mod path;
mod probe;
mod resolve;
mod search;
mod text;
mod variables;

use serde_json::{Map, Value};

pub use body::{BodySerializer, EncodedBody, SerializedBody, UrlEncodedBody};
pub use error::{EncodeError, PathTemplateError, SearchParamsError};
pub use form::{FilePart, Form, Part};
pub use join::join_path;
pub use path::PathTemplate;
pub use probe::raw_bytes_at;
pub use search::{DefaultSearchParams, SearchParamsSerializer};
pub use variables::Variables;

use resolve::Rest;

/// Everything [`encode`] needs about one call.
#[derive(Debug)]
pub struct EncodeInput<'a> {
    /// The request method; it decides between search parameters and a body.
    pub method: &'a http::Method,
    /// The composed template: group prefixes and endpoint path, e.g. `/users/:id/posts`.
    pub path: &'a PathTemplate,
    /// The resolved `pathOptions` (source, then groups outer to inner).
    pub path_options: &'a Map<String, Value>,
    /// The call's variables.
    pub variables: Variables,
    /// The source's `defaultQueryParams`.
    pub default_query: Option<&'a Map<String, Value>>,
    /// The source's `defaultBody`.
    pub default_body: Option<&'a Map<String, Value>>,
    /// The source's `bodySerializer`; JSON when `None`.
    pub body_serializer: Option<&'a dyn BodySerializer>,
    /// The source's `searchParamsSerializer`, usually [`DefaultSearchParams`].
    pub search_params: &'a dyn SearchParamsSerializer,
}

/// The result of [`encode`].
#[derive(Debug)]
pub struct Encoded {
    /// The rendered path, followed by `?` and the query string when there are search parameters.
    /// It is relative to the base URL.
    pub path_and_query: String,
    /// The body.
    pub body: EncodedBody,
}

/// Encodes one call by the rules in the [module docs](self).
pub fn encode(input: EncodeInput<'_>) -> Result<Encoded, EncodeError> {
    encode_under(input, None)
}

/// [`encode`], with the path joined under `base_path` (a base URL's path) as
/// [`join_path`] joins them: written into the one string the request's URI keeps.
pub(crate) fn encode_under(
    input: EncodeInput<'_>,
    base_path: Option<&str>,
) -> Result<Encoded, EncodeError> {
    let has_body = method_has_body(input.method);
    if !has_body && matches!(input.variables, Variables::Form(_)) {
        return Err(EncodeError::FormWithoutBody {
            method: input.method.clone(),
        });
    }
    let base = base_path.unwrap_or_default();
    // Room for the base, the template, and parameter values a little longer than their names.
    let mut path_and_query = String::with_capacity(base.len() + input.path.as_str().len() + 16);
    let (joint, start) = match base_path {
        Some(base) => {
            path_and_query.push_str(base.trim_end_matches('/'));
            let joint = path_and_query.len();
            path_and_query.push('/');
            (joint, path_and_query.len())
        }
        None => (0, 0),
    };
    let rest = resolve::render_path(
        &mut path_and_query,
        input.path,
        input.path_options,
        input.variables,
    )?;
    if let Some(base) = base_path {
        join_under(&mut path_and_query, base, joint, start);
    }

    let (query, body) = match rest {
        Rest::Map(vars) if !has_body => (merge(input.default_query, vars), EncodedBody::Empty),
        Rest::Map(vars) => {
            let body = merge(input.default_body, vars);
            let body = if body.is_empty() {
                EncodedBody::Empty
            } else if let Some(serializer) = input.body_serializer {
                EncodedBody::Custom(serializer.serialize(&body)?)
            } else {
                EncodedBody::Json(serde_json::to_vec(&body).map_err(EncodeError::body)?.into())
            };
            (input.default_query.cloned().unwrap_or_default(), body)
        }
        Rest::Form(form) => (
            input.default_query.cloned().unwrap_or_default(),
            multipart::encode_form(form, input.default_body)?,
        ),
    };

    if !query.is_empty() {
        let query = input.search_params.stringify(&query);
        if !query.is_empty() {
            path_and_query.push('?');
            path_and_query.push_str(&query);
        }
    }
    Ok(Encoded {
        path_and_query,
        body,
    })
}

/// Joins a path rendered at `out[start..]` under the base path written before it, as
/// [`join_path`] does: the base's trailing slashes (cut at `joint`) and the path's leading ones
/// become one slash, and an empty path leaves the base's path whole.
fn join_under(out: &mut String, base: &str, joint: usize, start: usize) {
    if out.len() == start {
        out.truncate(joint);
        out.push_str(&base[joint..]);
        return;
    }
    let leading = out[start..].bytes().take_while(|&b| b == b'/').count();
    out.drain(start..start + leading);
}

/// Whether `method` carries its variables in a body: POST, PUT, PATCH and QUERY do; GET,
/// DELETE, HEAD, OPTIONS and every other method use search parameters.
pub fn method_has_body(method: &http::Method) -> bool {
    matches!(
        *method,
        http::Method::POST | http::Method::PUT | http::Method::PATCH
    ) || method.as_str() == "QUERY"
}

/// `vars` over `defaults`: a variable replaces a default of the same key.
fn merge(defaults: Option<&Map<String, Value>>, vars: Map<String, Value>) -> Map<String, Value> {
    let Some(defaults) = defaults.filter(|defaults| !defaults.is_empty()) else {
        return vars;
    };
    let mut merged = defaults.clone();
    merged.extend(vars);
    merged
}

#[cfg(test)]
mod tests;
