//! Checks run when a tree is built. Each returns the first [`ConfigurationError`] it meets,
//! naming the offender by its dotted path.

use crate::error::{ConfigurationError, ErrorCode};
use http::{HeaderName, HeaderValue, Uri};

/// What a name belongs to, for the reserved-name rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameOf {
    Group,
    Endpoint,
}

/// Names a group may not take: they are the typed view's own methods.
pub const RESERVED_GROUP_NAMES: &[&str] = &["raw", "with"];
/// Names an endpoint may not take.
pub const RESERVED_ENDPOINT_NAMES: &[&str] = &["options", "raw", "with"];

/// Joins a parent's dotted path and a name.
pub(crate) fn dotted(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

pub(crate) fn check_name(of: NameOf, name: &str, path: &str) -> Result<(), ConfigurationError> {
    let (what, a_what) = match of {
        NameOf::Group => ("group", "a group"),
        NameOf::Endpoint => ("endpoint", "an endpoint"),
    };
    if name.is_empty() {
        return Err(ConfigurationError::new(
            ErrorCode::EmptyName,
            format!("{a_what} name is empty"),
        )
        .at(path));
    }
    if name.contains('.') {
        return Err(ConfigurationError::new(
            ErrorCode::DottedName,
            format!(
                "the {what} name `{name}` contains a dot; dots join names into paths, so a name may not hold one"
            ),
        )
        .at(path));
    }
    let reserved = match of {
        NameOf::Group => RESERVED_GROUP_NAMES,
        NameOf::Endpoint => RESERVED_ENDPOINT_NAMES,
    };
    if reserved.contains(&name) {
        return Err(ConfigurationError::new(
            ErrorCode::ReservedEndpointName,
            format!(
                "{a_what} may not be named `{name}` (reserved: {}); give it another name, its path can stay",
                reserved.join(", ")
            ),
        )
        .at(path));
    }
    Ok(())
}

pub(crate) fn header_name(name: &str, path: &str) -> Result<HeaderName, ConfigurationError> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        ConfigurationError::new(
            ErrorCode::InvalidHeader,
            format!("`{name}` is not a valid header name"),
        )
        .at(path)
    })
}

/// A header name an allow-list or `forward.headers` may hold: valid, and neither `host` nor a
/// hop-by-hop header.
pub(crate) fn crossing_header_name(
    name: &str,
    path: &str,
) -> Result<HeaderName, ConfigurationError> {
    let header = header_name(name, path)?;
    match crate::headers::why_never_crosses(name) {
        Some(why) => Err(ConfigurationError::new(
            ErrorCode::HeaderNeverCrosses,
            format!("`{name}` {why}; it never crosses the proxy, so remove it from the list"),
        )
        .at(path)),
        None => Ok(header),
    }
}

pub(crate) fn header_value(
    name: &str,
    value: &str,
    path: &str,
) -> Result<HeaderValue, ConfigurationError> {
    HeaderValue::from_str(value).map_err(|_| {
        ConfigurationError::new(
            ErrorCode::InvalidHeader,
            format!("the value of header `{name}` is not a valid header value"),
        )
        .at(path)
    })
}

/// A base URL: absolute `http`/`https` with a host, no query or fragment.
pub(crate) fn base_url(url: &str) -> Result<Uri, ConfigurationError> {
    let bad = |why: &str| {
        ConfigurationError::new(ErrorCode::InvalidBaseUrl, format!("base URL `{url}` {why}"))
            .at("base_url")
    };
    if url.contains('#') {
        return Err(bad("may not have a fragment"));
    }
    let uri: Uri = url.parse().map_err(|_| bad("is not a valid URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(_) => return Err(bad("must use http or https")),
        None => return Err(bad("must be absolute (http://host or https://host)")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("has no host"));
    }
    if uri.query().is_some() {
        return Err(bad(
            "may not have a query; use default_query_params for search parameters",
        ));
    }
    Ok(uri)
}

/// An origin: `scheme://host[:port]`, nothing else.
pub(crate) fn origin(origin: &str, path: &str) -> Result<(), ConfigurationError> {
    let bad = || {
        ConfigurationError::new(
            ErrorCode::InvalidOption,
            format!("`{origin}` is not an origin (scheme://host[:port])"),
        )
        .at(path)
    };
    let uri: Uri = origin.parse().map_err(|_| bad())?;
    let has_path = uri.path_and_query().is_some_and(|p| p.as_str() != "/") || origin.ends_with('/');
    if uri.scheme().is_none() || uri.host().is_none() || has_path {
        return Err(bad());
    }
    Ok(())
}

pub(crate) fn is_cookie_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("cookie") || name.eq_ignore_ascii_case("set-cookie")
}
