//! Where a served request came from: the origin check on writes and socket handshakes, and
//! Fetch Metadata as a resource-isolation policy. See the [module docs](super).

use super::error::RefusalReason;
use courier_core::context::ServedRequest;
use http::header::{HOST, ORIGIN};
use http::uri::{Authority, Uri};
use http::{HeaderMap, HeaderName, HeaderValue, Method};

pub(super) const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// The origin check; see the module docs.
pub(super) fn check_origin(
    trusted: &[Origin],
    from: &HeaderMap,
    uri: &Uri,
) -> Result<(), RefusalReason> {
    if let Some(origin) = from.get(ORIGIN) {
        let origin = Origin::parse(origin.as_bytes()).ok_or(RefusalReason::UntrustedOrigin)?;
        if origin.is_own(from, uri) || trusted.contains(&origin) {
            return Ok(());
        }
        return Err(RefusalReason::UntrustedOrigin);
    }
    match from.get(SEC_FETCH_SITE).map(HeaderValue::as_bytes) {
        None | Some(b"same-origin" | b"none") => Ok(()),
        Some(_) => Err(RefusalReason::CrossSite),
    }
}

/// A web origin: scheme, host (lowercase) and port (the scheme's default when not written).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Origin {
    scheme: Box<str>,
    host: Box<str>,
    port: Option<u16>,
}

impl Origin {
    /// Parses `scheme://host[:port]`, allowing a trailing `/`. `null` and anything with a
    /// path, query or user info is not an origin.
    pub(super) fn parse(text: &[u8]) -> Option<Self> {
        let text = text.strip_suffix(b"/").unwrap_or(text);
        let uri = Uri::try_from(text).ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        if authority.as_str().contains('@') || uri.path_and_query().is_some_and(|p| p != "/") {
            return None;
        }
        let port = authority.port_u16().or_else(|| default_port(&scheme));
        Some(Self {
            host: authority.host().to_ascii_lowercase().into(),
            scheme: scheme.into(),
            port,
        })
    }

    /// Whether this is the served request's own origin, by host and port.
    pub(super) fn is_own(&self, from: &HeaderMap, uri: &Uri) -> bool {
        let own = match from.get(HOST) {
            Some(host) => Authority::try_from(host.as_bytes()).ok(),
            None => uri.authority().cloned(),
        };
        own.is_some_and(|own| {
            own.host().eq_ignore_ascii_case(&self.host)
                && own.port_u16().or_else(|| default_port(&self.scheme)) == self.port
        })
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

const SEC_FETCH_MODE: HeaderName = HeaderName::from_static("sec-fetch-mode");
const SEC_FETCH_DEST: HeaderName = HeaderName::from_static("sec-fetch-dest");

/// Fetch Metadata as a resource-isolation policy: a request another site made the browser send
/// (`Sec-Fetch-Site` other than `same-origin` or `none`) is refused, unless its `Origin` is
/// trusted or it is a plain top-level navigation (a `GET` with `Sec-Fetch-Mode: navigate`, not
/// into an `<object>` or `<embed>`: the user following a link, whose answer the other site
/// cannot read). A request without `Sec-Fetch-Site` does not come from a current browser and
/// passes, as it does the origin check.
pub(super) fn check_fetch_metadata(
    trusted: &[Origin],
    served: &ServedRequest,
) -> Result<(), RefusalReason> {
    let from = served.headers();
    match from.get(SEC_FETCH_SITE).map(HeaderValue::as_bytes) {
        None | Some(b"same-origin" | b"none") => return Ok(()),
        Some(_) => {}
    }
    let trusted_origin = from
        .get(ORIGIN)
        .and_then(|origin| Origin::parse(origin.as_bytes()))
        .is_some_and(|origin| trusted.contains(&origin));
    let navigation = served.method() == Method::GET
        && from
            .get(SEC_FETCH_MODE)
            .is_some_and(|mode| mode == "navigate")
        && !matches!(
            from.get(SEC_FETCH_DEST).map(HeaderValue::as_bytes),
            Some(b"object" | b"embed")
        );
    if trusted_origin || navigation {
        Ok(())
    } else {
        Err(RefusalReason::CrossSite)
    }
}
