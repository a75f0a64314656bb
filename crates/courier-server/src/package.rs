//! The browser package (`courier-browser`, built in `js/dist/`) inside the binary, served where
//! [`Proxy::browser_package`](crate::Proxy::browser_package) mounts it, so that a page needs no
//! npm step: an import map names `/courier/index.js` and the modules it imports come from the
//! same folder.
//!
//! tower-http's `ServeDir` reads files from a folder and these are bytes in the binary, so
//! [`BrowserPackage`] answers itself, with `ServeDir`'s conventions (as `Proxy::static_dir`
//! serves): `GET` and `HEAD` only, anything else 405 with `allow: GET,HEAD`; an empty 404 for a
//! name the package does not hold; `x-content-type-options: nosniff`, set by the proxy's layer.
//! Unlike `ServeDir`, there is no modification time to go by: each file has a strong `etag`, the
//! first 128 bits of its SHA-256, and `If-None-Match` is answered 304.
//!
//! `cache-control: no-cache`: the files change only with the binary, but their addresses do not
//! (`/courier/index.js` names every version), so a browser revalidates — a 304 of no body, the
//! etag already computed — rather than keep a module a newer binary replaced. A page holding an
//! old `index.js` beside a new `caller.js` would fail to link its modules.

use axum::body::Body;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::LazyLock;
use std::task::{Context, Poll};

/// One file of `js/dist/`, as the binary holds it.
struct Embedded {
    name: &'static str,
    bytes: &'static [u8],
}

/// The package's modules by their name in `js/dist/` (`caller` for `caller.js`): each module
/// and its source map (which holds its TypeScript source) are embedded.
macro_rules! embedded {
    ($($module:literal),+ $(,)?) => {
        &[$(
            Embedded {
                name: concat!($module, ".js"),
                bytes: include_bytes!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/../../js/dist/", $module, ".js"
                )),
            },
            Embedded {
                name: concat!($module, ".js.map"),
                bytes: include_bytes!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/../../js/dist/", $module, ".js.map"
                )),
            },
        )+]
    };
}

/// Every module of the package. A test fails when `js/dist/` holds a module this list lacks.
const FILES: &[Embedded] = embedded![
    "caller",
    "close",
    "context",
    "csrf",
    "errors",
    "http",
    "index",
    "options",
    "routes",
    "sse-parser",
    "sse",
    "types",
    "wire",
    "ws",
    "xhr",
];

/// A file ready to answer with: its headers are worked out once per process.
struct Served {
    name: &'static str,
    bytes: &'static [u8],
    content_type: HeaderValue,
    etag: HeaderValue,
}

static SERVED: LazyLock<Vec<Served>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|file| {
            let digest = ring::digest::digest(&ring::digest::SHA256, file.bytes);
            let hex: String = digest.as_ref()[..16]
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            let content_type = if file.name.ends_with(".map") {
                "application/json"
            } else {
                "text/javascript; charset=utf-8"
            };
            Served {
                name: file.name,
                bytes: file.bytes,
                content_type: HeaderValue::from_static(content_type),
                etag: HeaderValue::try_from(format!("\"{hex}\""))
                    .expect("hex digits are a header value"),
            }
        })
        .collect()
});

/// The service answering for the package's files, the path it is mounted at stripped (as
/// axum's `nest_service` does): `/index.js`, `/caller.js`, ….
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BrowserPackage;

impl<B> tower::Service<Request<B>> for BrowserPackage {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Ready<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        ready(Ok(answer(
            request.method(),
            request.uri().path(),
            request.headers(),
        )))
    }
}

fn answer(method: &Method, path: &str, headers: &HeaderMap) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
        return response;
    }
    let Some(file) = path
        .strip_prefix('/')
        .and_then(|name| SERVED.iter().find(|file| file.name == name))
    else {
        return empty(StatusCode::NOT_FOUND);
    };
    let mut response = if matches(headers, &file.etag) {
        empty(StatusCode::NOT_MODIFIED)
    } else {
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(Bytes::from_static(file.bytes))
        };
        let mut response = Response::new(body);
        let served = response.headers_mut();
        served.insert(header::CONTENT_TYPE, file.content_type.clone());
        served.insert(header::CONTENT_LENGTH, HeaderValue::from(file.bytes.len()));
        response
    };
    let served = response.headers_mut();
    served.insert(header::ETAG, file.etag.clone());
    served.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Whether `If-None-Match` names `etag` (or is `*`), by the weak comparison RFC 9110 asks of it.
fn matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let etag = etag.as_bytes();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .flat_map(|value| value.as_bytes().split(|byte| *byte == b','))
        .map(<[u8]>::trim_ascii)
        .any(|tag| tag == b"*" || tag.strip_prefix(b"W/").unwrap_or(tag) == etag)
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `js/dist/`'s modules and source maps: what the list must embed.
    fn on_disk() -> Vec<String> {
        let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../js/dist");
        let mut names: Vec<String> = std::fs::read_dir(&dist)
            .unwrap_or_else(|e| panic!("{}: {e}", dist.display()))
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".js") || name.ends_with(".js.map"))
            .collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn every_module_of_js_dist_is_embedded() {
        let mut embedded: Vec<&str> = FILES.iter().map(|file| file.name).collect();
        embedded.sort_unstable();
        assert_eq!(
            embedded,
            on_disk(),
            "js/dist/ and the modules `embedded!` lists in courier-server's package.rs differ: \
             list every module there"
        );
    }

    #[test]
    fn every_relative_import_names_an_embedded_module() {
        for file in FILES.iter().filter(|file| file.name.ends_with(".js")) {
            let text = std::str::from_utf8(file.bytes).unwrap();
            for (at, from) in text.match_indices("from \"./") {
                let rest = &text[at + from.len()..];
                let specifier = &rest[..rest.find('"').unwrap()];
                assert!(
                    FILES.iter().any(|file| file.name == specifier),
                    "{} imports ./{specifier}, which is not embedded",
                    file.name
                );
            }
        }
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_a_star() {
        let etag = HeaderValue::from_static("\"abc\"");
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static(value));
            headers
        };
        assert!(matches(&with("\"abc\""), &etag));
        assert!(matches(&with("W/\"abc\""), &etag));
        assert!(matches(&with("\"x\", \"abc\""), &etag));
        assert!(matches(&with("*"), &etag));
        assert!(!matches(&with("\"abcd\""), &etag));
        assert!(!matches(&with("abc"), &etag));
        assert!(!matches(&HeaderMap::new(), &etag));
    }

    #[test]
    fn other_methods_are_refused_405_with_allow() {
        let answer = answer(&Method::POST, "/index.js", &HeaderMap::new());
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(answer.headers()[header::ALLOW], "GET,HEAD");
    }

    #[test]
    fn a_source_map_is_json_and_a_folder_or_an_escape_is_not_found() {
        let map = answer(&Method::GET, "/index.js.map", &HeaderMap::new());
        assert_eq!(map.status(), StatusCode::OK);
        assert_eq!(map.headers()[header::CONTENT_TYPE], "application/json");
        for path in [
            "/",
            "",
            "/index.d.ts",
            "/../index.js",
            "//index.js",
            "/./index.js",
        ] {
            let answer = answer(&Method::GET, path, &HeaderMap::new());
            assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
        }
    }
}
