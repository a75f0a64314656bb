//! Headers that never cross a proxy, whatever its allow-lists say.
//!
//! A proxy is two connections, not one: the browser's to the proxy and the proxy's to the
//! upstream. A header that describes one connection (RFC 9110 §7.6.1: `connection` and the
//! headers it names, `keep-alive`, `proxy-connection`, `te`, `trailer`, `transfer-encoding`,
//! `upgrade`, and the proxy's own credentials `proxy-authenticate` and `proxy-authorization`)
//! means nothing on the other, and passed on it lets a browser change how the upstream
//! connection is framed or kept. `host` names the server a request is for: the upstream's is
//! its base URL's authority, and a browser's copy would send the call to another virtual host.
//!
//! courier drops these on every crossing (the proxy's allow-lists, forwarded headers, a proxied
//! channel's hello headers), and a definition that names one in `allowed_headers`, an
//! endpoint's `headers` or `forward.headers` is refused when it is built
//! ([`ErrorCode::HeaderNeverCrosses`](crate::ErrorCode::HeaderNeverCrosses)).
//!
//! ```
//! use courier_core::headers::{never_crosses, why_never_crosses};
//! use http::HeaderName;
//!
//! assert!(never_crosses(&HeaderName::from_static("transfer-encoding")));
//! assert!(never_crosses(&HeaderName::from_static("host")));
//! assert!(!never_crosses(&HeaderName::from_static("x-tenant")));
//! assert!(why_never_crosses("Keep-Alive").is_some());
//! ```

use http::header::{
    CONNECTION, HOST, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION, TE, TRAILER, TRANSFER_ENCODING,
    UPGRADE,
};
use http::{HeaderMap, HeaderName};

/// The hop-by-hop headers: they describe one connection.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "proxy-authenticate",
    "proxy-authorization",
];

/// Whether `name` is a hop-by-hop header or `host`: it never crosses the proxy.
pub fn never_crosses(name: &HeaderName) -> bool {
    name == HOST || is_hop_by_hop(name)
}

/// Whether `name` is a hop-by-hop header (not counting those a `connection` header names:
/// see [`named_by_connection`]).
pub fn is_hop_by_hop(name: &HeaderName) -> bool {
    name == CONNECTION
        || name == TE
        || name == TRAILER
        || name == TRANSFER_ENCODING
        || name == UPGRADE
        || name == PROXY_AUTHENTICATE
        || name == PROXY_AUTHORIZATION
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// Whether `name`, in any case, is a hop-by-hop header's.
fn names_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|hop| name.eq_ignore_ascii_case(hop))
}

/// Why a header named `name` (in any case) never crosses, or `None` when it may.
pub fn why_never_crosses(name: &str) -> Option<&'static str> {
    if name.eq_ignore_ascii_case("host") {
        return Some(
            "names the server a request is for: the upstream's Host comes from the source's \
             base URL, never from the browser",
        );
    }
    names_hop_by_hop(name).then_some(
        "is a hop-by-hop header: it describes one connection, and the proxy's two \
             connections each have their own",
    )
}

/// The headers that `headers`' `connection` header names: RFC 9110 §7.6.1 makes them hop-by-hop
/// as well, meant for this connection only. Names that are hop-by-hop by themselves
/// ([`is_hop_by_hop`]: `keep-alive`, say) are left out, as whoever removes these removes those
/// anyway: the usual `Connection: keep-alive` gives an empty list, and nothing is allocated, as
/// without a `connection` header.
pub fn named_by_connection(headers: &HeaderMap) -> Vec<HeaderName> {
    let mut named = Vec::new();
    for value in headers.get_all(CONNECTION) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for token in value.split(',').map(str::trim) {
            if names_hop_by_hop(token) {
                continue;
            }
            if let Ok(name) = HeaderName::from_bytes(token.as_bytes()) {
                named.push(name);
            }
        }
    }
    named
}

/// RFC 9110's `tchar`: a byte of a token, such as a cookie's name.
pub fn is_token(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// RFC 6265's `cookie-octet`: a byte a cookie's value may hold.
pub fn is_cookie_octet(byte: u8) -> bool {
    matches!(byte, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn every_listed_name_is_hop_by_hop_and_named_alike() {
        for name in HOP_BY_HOP {
            let header = HeaderName::from_static(name);
            assert!(is_hop_by_hop(&header), "{name}");
            assert!(never_crosses(&header), "{name}");
            assert!(why_never_crosses(&name.to_ascii_uppercase()).is_some());
        }
        assert!(never_crosses(&HOST) && !is_hop_by_hop(&HOST));
        for name in ["x-tenant", "cookie", "content-type", "authorization"] {
            assert!(!never_crosses(&HeaderName::from_static(name)), "{name}");
            assert_eq!(why_never_crosses(name), None, "{name}");
        }
    }

    #[test]
    fn the_headers_a_connection_header_names_are_hop_by_hop_too() {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONNECTION,
            HeaderValue::from_static("close, X-Tenant ,bad name"),
        );
        headers.append(
            CONNECTION,
            HeaderValue::from_static("Keep-Alive, upgrade, Foo"),
        );
        headers.insert("x-tenant", HeaderValue::from_static("acme"));
        let named = named_by_connection(&headers);
        let named: Vec<&str> = named.iter().map(HeaderName::as_str).collect();
        // The hop-by-hop ones, removed anyway, are not listed.
        assert_eq!(named, ["close", "x-tenant", "foo"]);
        assert!(named_by_connection(&HeaderMap::new()).is_empty());
    }
}
