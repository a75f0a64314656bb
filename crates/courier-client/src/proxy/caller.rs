//! [`ProxyCaller`] and its builder.

use super::client::ProxyClient;
use super::cookies::Jar;
use super::hooks::{Hooks, Success};
use super::route::{Route, RouteSettings};
use crate::caller::Caller;
use crate::error::Error;
use crate::transport::{Transport, TransportCache};
use courier_core::config::ProxyPaths;
use courier_core::routes::{CsrfNames, RouteShape, Routes};
use courier_core::typed::ApiSpec;
use courier_core::Api;
use courier_core::{ApiDef, BodyService, ConfigurationError, ErrorCode, HttpService, WsOptions};
use http::{HeaderMap, HeaderName, HeaderValue};
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Whether the caller keeps and sends the cookies the proxy route sets (the browser package's
/// `credentials`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credentials {
    /// A cookie jar: cookies set by the proxy's responses go with every later call, stream and
    /// channel handshake they match (the default, as `"include"`).
    #[default]
    Include,
    /// No cookies are kept or sent.
    Omit,
}

/// A typed client for an API of shape `A` that calls through an app server's proxy route: the
/// same views as [`Caller`](crate::Caller) (`caller.users().get(UserId(7)).await`), the same
/// values, the same [`Error`].
///
/// ```no_run
/// use courier::ProxyCaller;
/// use courier::routes::Routes;
/// # fn demo<A: courier::typed::ApiSpec>(routes_json: &str) -> Result<(), Box<dyn std::error::Error>> {
/// // The routes record `courier routes` wrote for the app.
/// let routes: Routes = serde_json::from_str(routes_json)?;
/// let caller = ProxyCaller::<A>::routes("http://127.0.0.1:8080", routes).build()?;
/// // let user = caller.users().get(UserId(7)).await?;
/// # Ok(()) }
/// ```
///
/// It is a [`Caller`] over a [`ProxyClient`]: the typed wrapper is one, the client under it
/// differs.
///
/// It comes in three forms:
///
/// - **Routes** ([`ProxyCaller::routes`]): built from the routes record
///   ([`Routes`](courier_core::routes::Routes), written by `courier routes` or [`Routes::from_api`](courier_core::routes::Routes::from_api)). Only the routed
///   endpoints can be called: the typed view is the API's whole shape (a Rust type cannot drop
///   fields by a value read at run time), and calling an endpoint the routes do not name fails
///   with `ENDPOINT_NOT_IN_ROUTES` before anything is sent. A read goes as GET when its route
///   says `get: true` (a `.cache()`d read without sensitive variables).
/// - **Source** ([`ProxyCaller::source`]): built from the definition itself and the name the
///   server registered it under. Every read goes as GET unless it has sensitive variables;
///   exposure, `cancel_previous` and `coalesce` come from the definition; the response is read
///   as the definition says (its response type or parser).
/// - **Boundary** ([`ProxyCaller::boundary`]): the source form's rules from a record written
///   without the definition ([`Routes::boundary`](courier_core::routes::Routes::boundary), which lists the sensitive reads as POST
///   reads), for a program that must not carry the definition.
///
/// A typed caller finds its endpoints by name at run time, so there is no form with neither
/// routes, a source nor a boundary (the browser package has one, its name-only form, which sends
/// every call as POST). And a source's options hold no proxy paths — where the proxy is served
/// is the app's choice, not the API's — so the paths are the caller's own
/// ([`ProxyCallerBuilder::proxy_path`]), over the defaults.
///
/// # The wire
///
/// Calls go to the `http` path ([`ProxyPaths`], default `/api/request`) with `_s` (the source),
/// `_g` (the group path) and `_m` (the endpoint's name):
///
/// - **GET**, the variables as JSON in `_v`: a read allowed GET (above), unless its variables are
///   a [`Form`](courier_core::encode::Form), it watches its upload, or the address would be
///   longer than 2 KB ([`MAX_GET_ADDRESS`](super::MAX_GET_ADDRESS)).
/// - **POST** otherwise: `{"variables": …}` as JSON, or the form as `multipart/form-data`.
/// - [`CallOptions::method`](courier_core::CallOptions::method) forces GET or POST (the proxy
///   refuses a write or a sensitive read over GET with 405).
/// - A per-call [`CallOptions::timeout`](courier_core::CallOptions::timeout) is sent as `_t`
///   (milliseconds); the proxy lets it shorten the upstream call's bound, never lengthen it. The
///   caller's own [`ProxyCallerBuilder::timeout`] is not sent: it bounds how long the caller
///   waits for the proxy.
///
/// Streams go to the `sse` path (default `/api/sse`) and channels to the `ws` path (no default)
/// with the same parameters; a channel's first frame carries the caller's default headers and
/// [`WsOptions::auth`](courier_core::WsOptions)'s parameters (see `docs/PROTOCOL.md`).
///
/// # Before anything is sent
///
/// - An endpoint the routes do not name (or, in the source form, one not exposed):
///   `ENDPOINT_NOT_IN_ROUTES`.
/// - A channel with no `ws` path: `WS_PATH_NOT_CONFIGURED`.
/// - Variables holding raw bytes (a `serialize_bytes` value such as `bytes::Bytes`):
///   `PROXY_VARIABLE_NOT_SERIALIZABLE`, naming where they are. Files go in a `Form`.
/// - A stream (which JSON cannot carry either) cannot be variables at all: an endpoint's
///   variables are `Serialize` or a [`Form`](courier_core::encode::Form), so an endpoint
///   declared with a stream, or called with one, does not compile — earlier still than
///   `PROXY_VARIABLE_NOT_SERIALIZABLE`. A `Form`, for its part, goes with an HTTP call only:
///   given to a stream or a channel, it is `PROXY_VARIABLE_NOT_SERIALIZABLE`.
///
/// # What runs where
///
/// A [`ProxyCaller`] is a [`Caller`](crate::Caller) over a [`ProxyClient`], which writes each
/// call as the wire above and sends it through a stack of its own: the cookie jar, then
/// cancel-previous (the routes' or the source's `cancel_previous`, or every read with
/// [`ProxyCallerBuilder::deduplicate`]), then the caller's own layers, then coalescing
/// (identical reads in flight reach the proxy once), then the caller's timeout, then the
/// transport. The jar is outermost: it adds its cookies to a request before the other layers
/// see it (so coalescing tells two users' reads apart) and keeps what the response sets once
/// they answer. No retry: the proxy's own client retries the upstream call. Session, forwarded
/// headers, path options, the source's middleware and the endpoints' layers are the server's
/// and run there. A proxied call resolves to the same value as the direct call: the proxy
/// passes the upstream's status, allowed headers and body through.
pub type ProxyCaller<A> = Caller<A, ProxyClient>;

impl<A: ApiSpec> Caller<A, ProxyClient> {
    /// The routes form: the app's proxy at `base_url` (its origin, as a page's), the endpoints
    /// `routes` names. Coalescing and `cancel_previous` default to the routes' own.
    pub fn routes(base_url: impl Into<String>, routes: Routes) -> ProxyCallerBuilder<A> {
        ProxyCallerBuilder::new(base_url.into(), Form::Routes(routes))
    }

    /// The source form: `api` itself, registered on the server as `source`. Every exposed
    /// endpoint is reachable; reads go as GET unless their variables are sensitive; responses
    /// are read as the definition says.
    pub fn source(
        base_url: impl Into<String>,
        source: impl Into<String>,
        api: Api<A>,
    ) -> ProxyCallerBuilder<A> {
        ProxyCallerBuilder::new(
            base_url.into(),
            Form::Source {
                name: source.into(),
                api: api.into_def(),
            },
        )
    }
}

impl<A: ApiSpec> Caller<A, ProxyClient> {
    /// The boundary form: a record of the API's endpoints written without its definition
    /// ([`Routes::boundary`]): every read goes as GET unless it has sensitive variables; the
    /// proxy refuses what it does not expose.
    pub fn boundary(base_url: impl Into<String>, boundary: Routes) -> ProxyCallerBuilder<A> {
        ProxyCallerBuilder::new(base_url.into(), Form::Routes(boundary))
    }
}

enum Form {
    Routes(Routes),
    Source { name: String, api: ApiDef },
}

/// Builds a [`ProxyCaller`]: its options, the browser package's `ProxyCallerOptions`.
#[must_use]
pub struct ProxyCallerBuilder<A: ApiSpec> {
    base_url: String,
    form: Form,
    paths: ProxyPaths,
    timeout: Option<Duration>,
    coalesce: Option<bool>,
    cancel_previous: Option<Vec<String>>,
    deduplicate: Option<bool>,
    credentials: Credentials,
    csrf: Option<CsrfNames>,
    headers: Vec<(String, String)>,
    hooks: Hooks,
    ws: WsOptions,
    transport: Transport,
    layers: Vec<courier_core::Middleware>,
    /// The service that answers every call instead of the proxy: a mock's.
    answering: Option<HttpService>,
    shape: PhantomData<fn() -> A>,
}

impl<A: ApiSpec> ProxyCallerBuilder<A> {
    fn new(base_url: String, form: Form) -> Self {
        Self {
            base_url,
            form,
            paths: ProxyPaths::default(),
            timeout: None,
            coalesce: None,
            cancel_previous: None,
            deduplicate: None,
            credentials: Credentials::Include,
            csrf: None,
            headers: Vec::new(),
            hooks: Hooks::default(),
            ws: WsOptions::default(),
            transport: Transport::new(),
            layers: Vec::new(),
            answering: None,
            shape: PhantomData,
        }
    }

    /// Where the proxy serves calls, streams and channels. Default `/api/request`,
    /// `/api/sse`, and no `ws` (a channel call is `WS_PATH_NOT_CONFIGURED`).
    pub fn proxy_path(mut self, paths: ProxyPaths) -> Self {
        self.paths = paths;
        self
    }

    /// How long a call waits for the proxy (each call; not sent to it). None by default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether identical reads in flight reach the proxy once. Default: the routes' or the
    /// source's own (on unless they say otherwise).
    pub fn coalesce(mut self, coalesce: bool) -> Self {
        self.coalesce = Some(coalesce);
        self
    }

    /// The reads a newer call cancels while in flight (dotted paths). Default: the routes' or
    /// the source's own.
    pub fn cancel_previous<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.cancel_previous = Some(paths.into_iter().map(Into::into).collect());
        self
    }

    /// Every read cancels the call of the same endpoint still in flight (the older one fails
    /// with status 499). Default: the source's own `deduplicate` in the source form; off in the
    /// routes and boundary forms, where only the `cancel_previous` reads do.
    pub fn deduplicate(mut self, deduplicate: bool) -> Self {
        self.deduplicate = Some(deduplicate);
        self
    }

    /// Whether cookies the proxy sets are kept and sent back. Default
    /// [`Credentials::Include`].
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// The session's double-submit CSRF token: every `POST` repeats the value of cookie `cookie`
    /// (one the proxy set, kept in the caller's jar) in header `header`, as a browser page does.
    /// Default: the routes record's `csrf` (written from the source's `session.csrf`), or the
    /// source's own in the source form; without either, no header is sent and the proxy refuses
    /// writes to a source that checks CSRF. Needs [`Credentials::Include`]: without the jar
    /// there is no cookie to read.
    pub fn csrf(mut self, cookie: impl Into<String>, header: impl Into<String>) -> Self {
        self.csrf = Some(CsrfNames {
            cookie: cookie.into(),
            header: header.into(),
        });
        self
    }

    /// A default header for every call and stream, and in the first frame of every channel.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Called with every HTTP error before the call returns it: an answer of 400 and above (the
    /// proxy's refusals, the upstream's answers, a read cancelled by a newer one with 499), and,
    /// with status 0, a call that got no answer (a network failure, a timeout). Not for an error
    /// raised before anything was sent (a configuration error) nor for a call stopped by its own
    /// cancellation signal. A stream's or a channel's opening refused with an HTTP status (its
    /// first connection or a reconnection: the proxy's 404 for an endpoint it does not expose,
    /// the upstream's 401) is reported too, as the browser package reports a refused stream; a
    /// channel the proxy closes as refused for good (4400–4499) ends with that close instead.
    pub fn on_error(mut self, f: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.hooks.on_error = Some(Arc::new(f));
        self
    }

    /// Called with every successful call's outcome, before the call returns it.
    pub fn on_success(mut self, f: impl Fn(&Success<'_>) + Send + Sync + 'static) -> Self {
        self.hooks.on_success = Some(Arc::new(f));
        self
    }

    /// The settings of the sockets the caller's channels open; `auth`'s parameters go in each
    /// socket's first frame.
    pub fn ws(mut self, ws: WsOptions) -> Self {
        self.ws = ws;
        self
    }

    /// The HTTP transport to the proxy. Default [`Transport::new`].
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Answers every call with `mock` instead of the proxy route: the calls go down the caller's
    /// own layers (cookies, cancel-previous, coalescing, the timeout) and the mock answers them
    /// as the proxy passes an upstream's answers on. It stands in for the app server: to test
    /// the proxy route itself, give the mock to the app's `Proxy` instead
    /// (`Proxy::source_client(name, mock.client())`). See [`crate::mock`].
    #[cfg(feature = "mock")]
    pub fn mock(mut self, mock: &crate::mock::Mock<A>) -> Self {
        self.answering = Some(mock.service());
        self
    }

    /// Adds a tower layer to every call, outside coalescing and the timeout; see
    /// [`ClientBuilder::layer`](crate::ClientBuilder::layer).
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<HttpService, Service: BodyService> + Send + Sync + 'static,
    {
        self.layers.push(courier_core::Middleware::new(
            std::any::type_name::<L>(),
            layer,
        ));
        self
    }

    /// Builds the caller.
    ///
    /// # Errors
    ///
    /// A base URL or proxy path that does not parse, a default header that is not valid, routes
    /// that do not make a tree ([`Routes::to_api`]), or a transport that cannot be built.
    pub fn build(self) -> Result<ProxyCaller<A>, Error> {
        let invalid = |message: String| {
            Error::from(ConfigurationError::new(ErrorCode::InvalidOption, message))
        };
        let base = Url::parse(&self.base_url).map_err(|e| {
            invalid(format!(
                "the proxy caller's base URL `{}` does not parse: {e}",
                self.base_url
            ))
        })?;
        let join = |path: &str| {
            base.join(path)
                .map_err(|e| invalid(format!("the proxy path `{path}` does not parse: {e}")))
        };
        let http = join(&self.paths.http)?;
        let sse = join(&self.paths.sse)?;
        let ws = self.paths.ws.as_deref().map(join).transpose()?;
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| invalid(format!("`{name}` is not a header name: {e}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|e| invalid(format!("the value of `{name}` is not valid: {e}")))?;
            headers.append(name, value);
        }
        let (api, source, routes, by_definition) = match self.form {
            Form::Routes(routes) => {
                let api = routes.to_api()?;
                (api, routes.source.clone(), routes, false)
            }
            Form::Source { name, api } => {
                let routes = Routes::from_api(name.clone(), &api);
                (api, name, routes, true)
            }
        };
        let csrf = self.csrf.or_else(|| routes.csrf.clone());
        let cancel_previous: HashSet<String> = match self.cancel_previous {
            Some(paths) => {
                check_cancel_previous(&paths, &routes)?;
                paths.into_iter().collect()
            }
            None => routes.cancel_previous.iter().cloned().collect(),
        };
        let coalesce = self
            .coalesce
            .or(routes.coalesce)
            .unwrap_or_else(|| api.options().coalesces());
        let route = Route::new(
            RouteSettings {
                http,
                sse,
                ws,
                source,
                routes,
                by_definition,
                headers,
                timeout: self.timeout,
                coalesce,
                cancel_previous,
                deduplicate: self.deduplicate.unwrap_or(api.options().deduplicate),
                hooks: self.hooks,
            },
            &api,
        );
        let jar = match (self.credentials, csrf) {
            (Credentials::Omit, _) => None,
            (Credentials::Include, None) => Some(Jar::default()),
            (Credentials::Include, Some(csrf)) => {
                let header = HeaderName::try_from(csrf.header.as_str()).map_err(|e| {
                    invalid(format!(
                        "the CSRF header `{}` is not a header name: {e}",
                        csrf.header
                    ))
                })?;
                Some(Jar::with_csrf(csrf.cookie, header))
            }
        };
        let transports = TransportCache::answered_by(self.transport, self.answering)
            .map_err(Error::transport)?;
        let client = ProxyClient::new(api, route, transports, self.layers, jar, self.ws)?;
        Ok(Caller::over(client))
    }
}

/// The builder's `cancel_previous`, as a definition's is checked: every path a read the routes
/// name (`CANCEL_PREVIOUS_INVALID` otherwise, naming the path and why).
fn check_cancel_previous(paths: &[String], routes: &Routes) -> Result<(), Error> {
    for path in paths {
        let why = match routes.endpoints.get(path) {
            Some(RouteShape::Query { .. }) => continue,
            None => "which the routes do not name",
            Some(RouteShape::Mutation { .. }) => "which writes; only reads can be cancelled",
            Some(RouteShape::Sse | RouteShape::Ws { .. }) => {
                "which is a stream or channel; only HTTP reads can be cancelled"
            }
        };
        return Err(ConfigurationError::new(
            ErrorCode::CancelPreviousInvalid,
            format!("the proxy caller's cancel_previous lists `{path}`, {why}"),
        )
        .at("cancel_previous")
        .into());
    }
    Ok(())
}

impl<A: ApiSpec> fmt::Debug for ProxyCallerBuilder<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyCallerBuilder")
            .field("base_url", &self.base_url)
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}
