//! What a stream or a channel needs of the client that opens it, whichever client that is: the
//! direct [`Client`](crate::Client) or the proxy caller's
//! [`ProxyClient`](crate::proxy::ProxyClient). A subscription or connection keeps its opener to
//! reconnect with.

use crate::error::Error;
use courier_core::context::ServedRequest;
use courier_core::encode::Variables;
use courier_core::{ApiDef, Body, BoxFuture, CallOptions, IntoVariables, ResolvedEndpoint};
use courier_live::Hub;
use http::{HeaderMap, Request, Response};

/// Opens the connections of streams and channels for one client.
pub(crate) trait Opener: Send + Sync + 'static {
    /// The API the endpoints belong to.
    fn api(&self) -> &ApiDef;

    /// The hub that runs implemented channels in process, when implemented streams and
    /// channels are served in process; `None` for a proxy caller, which reaches even those
    /// through the proxy.
    fn hub(&self) -> Option<&Hub>;

    /// A typed view's variables, encoded for `endpoint` as this client sends them.
    fn variables<V: IntoVariables>(
        &self,
        endpoint: &ResolvedEndpoint,
        variables: V,
    ) -> Result<Variables, Error>
    where
        Self: Sized;

    /// The headers each channel's first frame carries (a proxy caller's defaults).
    fn hello_headers(&self) -> Option<&HeaderMap>;

    /// Tells the client that a stream's or a channel's opening (the first connection or a
    /// reconnection) was refused with an HTTP status, `error` naming it: a proxy caller hands it
    /// to its `on_error`, as it does a call's. Nothing by default.
    fn refused(&self, error: &Error) {
        let _ = error;
    }

    /// Sends the opening request of a stream or channel (its handshake GET, with `headers`
    /// added over the built ones and `param` added to the address) through the client's
    /// stack, and returns the response with its body unread and its extensions (a protocol
    /// upgrade) intact. The status is the caller's to judge. Reconnecting calls this again, so
    /// everything a call goes through applies to every connection.
    fn handshake<'a>(
        &'a self,
        endpoint: &'a ResolvedEndpoint,
        variables: Variables,
        options: Option<&'a CallOptions>,
        headers: HeaderMap,
        param: Option<(&'static str, &'static str)>,
    ) -> BoxFuture<'a, Result<Response<Body>, Error>>;
}

/// A stream's or a channel's options with the served request captured: the call's own context,
/// else the request being served on this task when it opens.
///
/// Reconnections happen later and elsewhere — a stream's when it is polled after its handler
/// returned, a channel's from its socket task — outside the served request's scope. Without the
/// capture they would go out without the user's session cookies, bearer and forwarded headers,
/// and with path options computed for no request (another tenant's address, say).
pub(crate) fn capture_served(options: Option<CallOptions>) -> Option<CallOptions> {
    if options
        .as_ref()
        .and_then(CallOptions::get_context)
        .is_some()
    {
        return options;
    }
    match ServedRequest::current() {
        Some(served) => Some(options.unwrap_or_default().context(served)),
        None => options,
    }
}

/// Adds a handshake's own `headers` (over the built ones) and query `param` to `request`.
pub(crate) fn handshake_request(
    request: &mut Request<Body>,
    headers: HeaderMap,
    param: Option<(&str, &str)>,
) -> Result<(), Error> {
    if let Some((name, value)) = param {
        let uri = request.uri();
        let joined = match uri.query() {
            Some(query) if !query.is_empty() => format!("{uri}&{name}={value}"),
            _ => format!("{}?{name}={value}", uri.to_string().trim_end_matches('?')),
        };
        *request.uri_mut() = joined.parse().map_err(|e| {
            Error::from(courier_core::ConfigurationError::new(
                courier_core::ErrorCode::InvalidOption,
                format!("the handshake address does not parse: {e}"),
            ))
        })?;
    }
    for (name, value) in &headers {
        request.headers_mut().insert(name, value.clone());
    }
    Ok(())
}
