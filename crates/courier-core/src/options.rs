//! Option records shared by sources, groups and endpoints: plain data, (de)serialisable, so a
//! config file and the builder fill the same types.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// How a response body is parsed. Default [`ResponseType::Json`].
///
/// `blob` and `arrayBuffer` (as JavaScript's `Response` names those reads of a body) are both
/// [`ResponseType::Bytes`] in Rust; `formData` is [`ResponseType::Form`]. A config file takes
/// either name: `bytes`, `blob` or `arrayBuffer`; `form` or `formData`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseType {
    /// Parse the body as JSON (the default).
    #[default]
    Json,
    /// The body as UTF-8 text.
    Text,
    /// The body as raw bytes (also named `blob` or `arrayBuffer`).
    #[serde(alias = "blob", alias = "arrayBuffer")]
    Bytes,
    /// A form read into a map of its fields (also named `formData`): `multipart/form-data`, or
    /// else URL-encoded, read by the source's search-parameter rules.
    #[serde(alias = "formData")]
    Form,
}

/// The double-submit CSRF token a write repeats: the cookie it is read from and the header it
/// is sent in, and, for the signed form, the server's key the token is signed with.
///
/// In a config file: `csrf = { cookie = "csrf_token", header = "x-csrf-token" }`, with
/// `key_env = "NAME"` for the signed form: the key is read from that environment variable when
/// the file is loaded, so it never sits in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawCsrf")]
pub struct Csrf {
    /// The cookie holding the token.
    pub cookie: String,
    /// The header a write must repeat the token in.
    pub header: String,
    /// With a key, the token must also be signed for the user's session (OWASP's signed
    /// double-submit cookie): see [`CsrfKey`].
    #[serde(skip_serializing)]
    pub key: Option<CsrfKey>,
}

/// `csrf` as a config file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCsrf {
    cookie: String,
    header: String,
    key_env: Option<String>,
}

impl TryFrom<RawCsrf> for Csrf {
    type Error = String;

    fn try_from(raw: RawCsrf) -> Result<Self, String> {
        let key = match raw.key_env {
            None => None,
            Some(name) => match std::env::var_os(&name) {
                Some(value) if !value.is_empty() => {
                    Some(CsrfKey::new(value.into_encoded_bytes()))
                }
                _ => {
                    return Err(format!(
                        "`key_env` names the environment variable `{name}`, which is not set or empty: \
                         set it to the CSRF signing key (32 bytes or more)"
                    ))
                }
            },
        };
        Ok(Self {
            cookie: raw.cookie,
            header: raw.header,
            key,
        })
    }
}

/// The server's secret key for signed CSRF tokens: a token is `NONCE.SIGNATURE`, the signature
/// an HMAC-SHA256 with this key over the user's session and the nonce, so a token minted for
/// one session (or by someone without the key, such as a sibling subdomain that can plant
/// cookies) is refused for another. At least 32 bytes, checked when the source is built.
///
/// Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct CsrfKey(std::sync::Arc<[u8]>);

impl CsrfKey {
    /// A key of these bytes (random, 32 bytes or more: a source with a shorter one fails to
    /// build with `INVALID_OPTION`).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self(bytes.into().into())
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for CsrfKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CsrfKey(<{} bytes, redacted>)", self.0.len())
    }
}

/// How a source keeps the user's session.
///
/// Besides `cookies`, `bearer` and `csrf`, the session governs whether the backend's session
/// cookies reach the browser (`pass_set_cookie`) and which other origins may write with it
/// (`trusted_origins`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionOptions {
    /// Session cookie names: exact, or a prefix ending in `*` (`"sess_*"`).
    pub cookies: Vec<String>,
    /// A cookie whose value is sent as `Authorization: Bearer <value>`.
    pub bearer: Option<String>,
    /// Double-submit token checked on writes.
    pub csrf: Option<Csrf>,
    /// Whether the upstream's `set-cookie` for session cookies passes back to the served response.
    pub pass_set_cookie: bool,
    /// Origins (`scheme://host[:port]`) other than the served request's own that may make writes.
    pub trusted_origins: Vec<String>,
    /// Fetch Metadata as a resource-isolation policy: a call that carries the session (a read
    /// as well as a write, a stream's or a socket's opening too) is refused when the served
    /// request's `Sec-Fetch-Site` says another site sent it, unless its `Origin` is trusted or
    /// it is a plain top-level navigation. Default off.
    pub fetch_metadata: bool,
}

impl SessionOptions {
    /// An empty session: set the fields you need.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds session cookie names (exact, or a prefix ending in `*`).
    #[must_use]
    pub fn cookies<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.cookies.extend(names.into_iter().map(Into::into));
        self
    }

    /// Names the cookie holding a bearer token.
    #[must_use]
    pub fn bearer(mut self, cookie: impl Into<String>) -> Self {
        self.bearer = Some(cookie.into());
        self
    }

    /// Sets the double-submit CSRF cookie and header.
    #[must_use]
    pub fn csrf(mut self, cookie: impl Into<String>, header: impl Into<String>) -> Self {
        self.csrf = Some(Csrf {
            cookie: cookie.into(),
            header: header.into(),
            key: None,
        });
        self
    }

    /// Sets the signed double-submit CSRF cookie and header: besides header and cookie being
    /// equal, the token must be signed with `key` for the user's session ([`CsrfKey`]).
    #[must_use]
    pub fn csrf_signed(
        mut self,
        cookie: impl Into<String>,
        header: impl Into<String>,
        key: CsrfKey,
    ) -> Self {
        self.csrf = Some(Csrf {
            cookie: cookie.into(),
            header: header.into(),
            key: Some(key),
        });
        self
    }

    /// Turns on Fetch Metadata as a resource-isolation policy (the `fetch_metadata` field).
    #[must_use]
    pub fn fetch_metadata(mut self, on: bool) -> Self {
        self.fetch_metadata = on;
        self
    }

    /// Passes the upstream's session cookies back to the served response.
    #[must_use]
    pub fn pass_set_cookie(mut self, on: bool) -> Self {
        self.pass_set_cookie = on;
        self
    }

    /// Adds origins trusted to make writes.
    #[must_use]
    pub fn trusted_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.trusted_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }
}

/// A forwarded item that is either on, off, or on under a header name of its own.
///
/// In a config file: `true`, `false`, or the header name as a string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeaderToggle {
    /// On or off, under the item's default header.
    Enabled(bool),
    /// On, under this header name.
    Header(String),
}

impl HeaderToggle {
    /// Whether the item is forwarded.
    pub fn is_enabled(&self) -> bool {
        !matches!(self, Self::Enabled(false))
    }

    /// The header name to use: the toggle's own, or `default` when it names none.
    pub fn header_or<'a>(&'a self, default: &'a str) -> Option<&'a str> {
        match self {
            Self::Enabled(false) => None,
            Self::Enabled(true) => Some(default),
            Self::Header(name) => Some(name),
        }
    }
}

impl Default for HeaderToggle {
    fn default() -> Self {
        Self::Enabled(false)
    }
}

impl From<bool> for HeaderToggle {
    fn from(on: bool) -> Self {
        Self::Enabled(on)
    }
}

impl From<&str> for HeaderToggle {
    fn from(name: &str) -> Self {
        Self::Header(name.to_owned())
    }
}

/// Which headers a call made while serving a request carries from that request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForwardOptions {
    /// The request id, under `x-request-id` or the named header.
    pub request_id: HeaderToggle,
    /// Trace context: `traceparent` and `tracestate`.
    pub trace: bool,
    /// The client's address: `x-forwarded-for` with the peer appended, or the named header.
    pub client_address: HeaderToggle,
    /// `user-agent`.
    pub user_agent: bool,
    /// `accept-language`.
    pub locale: bool,
    /// Further headers, by name. `cookie` here forwards the served request's cookies.
    pub headers: Vec<String>,
}

impl ForwardOptions {
    /// Forwards nothing: set the items you need.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forwards the request id, under `x-request-id` (`true`) or a header name.
    #[must_use]
    pub fn request_id(mut self, item: impl Into<HeaderToggle>) -> Self {
        self.request_id = item.into();
        self
    }

    /// Forwards `traceparent` and `tracestate`.
    #[must_use]
    pub fn trace(mut self, on: bool) -> Self {
        self.trace = on;
        self
    }

    /// Forwards the client address, as `x-forwarded-for` (`true`) or under a header name.
    #[must_use]
    pub fn client_address(mut self, item: impl Into<HeaderToggle>) -> Self {
        self.client_address = item.into();
        self
    }

    /// Forwards `user-agent`.
    #[must_use]
    pub fn user_agent(mut self, on: bool) -> Self {
        self.user_agent = on;
        self
    }

    /// Forwards `accept-language`.
    #[must_use]
    pub fn locale(mut self, on: bool) -> Self {
        self.locale = on;
        self
    }

    /// Forwards further headers by name.
    #[must_use]
    pub fn headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.headers.extend(names.into_iter().map(Into::into));
        self
    }
}

/// How an endpoint takes part in the user's session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SessionMode {
    /// The source's session applies, with its write checks (the default; `true` in a config file).
    #[default]
    On,
    /// No session is sent: the endpoint answers every user alike (`false`).
    Off,
    /// The session is sent but writes skip the CSRF and origin checks (`"unguarded"`), for a
    /// write that is harmless when another site triggers it, such as signing out.
    Unguarded,
}

impl Serialize for SessionMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::On => s.serialize_bool(true),
            Self::Off => s.serialize_bool(false),
            Self::Unguarded => s.serialize_str("unguarded"),
        }
    }
}

impl<'de> Deserialize<'de> for SessionMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(true) => Ok(Self::On),
            Raw::Bool(false) => Ok(Self::Off),
            Raw::Text(t) if t == "unguarded" => Ok(Self::Unguarded),
            Raw::Text(t) => Err(serde::de::Error::custom(format!(
                "session must be true, false or \"unguarded\", not {t:?}"
            ))),
        }
    }
}

impl From<bool> for SessionMode {
    fn from(on: bool) -> Self {
        if on {
            Self::On
        } else {
            Self::Off
        }
    }
}

/// Caching declared on a read. A read that declares it, and has no sensitive variables, may be
/// sent as GET through the proxy; a caller's `CacheLayer` keeps its successful answers for
/// `revalidate` seconds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheOptions {
    /// Seconds a cached response stays fresh.
    pub revalidate: Option<u64>,
    /// Seconds after that during which the stale response is still answered while a fresh one
    /// is fetched in the background.
    pub stale_while_revalidate: Option<u64>,
}

impl CacheOptions {
    /// Caching with no revalidation time.
    pub fn new() -> Self {
        Self::default()
    }

    /// Seconds a cached response stays fresh.
    #[must_use]
    pub fn revalidate(mut self, seconds: u64) -> Self {
        self.revalidate = Some(seconds);
        self
    }

    /// Seconds after `revalidate` during which the stale response is still answered while a
    /// fresh one is fetched in the background.
    #[must_use]
    pub fn stale_while_revalidate(mut self, seconds: u64) -> Self {
        self.stale_while_revalidate = Some(seconds);
        self
    }
}

/// Exponential backoff: the waits between a call's retries (`RetryPolicy::backoff`), a channel's
/// reconnections (`WsOptions::backoff`) and a stream's (from the server's `retry`). One rule for
/// all three: [`Backoff::delay`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Backoff {
    /// The first delay, in milliseconds. Default 100.
    pub initial_ms: u64,
    /// The longest delay, in milliseconds. Default 5,000.
    pub max_ms: u64,
    /// The factor each delay grows by. Default 2.
    pub factor: f64,
    /// Whether each delay is drawn at random between zero and its value ("full jitter"). Default on.
    pub jitter: bool,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial_ms: 100,
            max_ms: 5_000,
            factor: 2.0,
            jitter: true,
        }
    }
}

impl Backoff {
    /// The wait before attempt `attempt` (the first retry or reconnection is 1):
    /// `initial_ms × factor^(attempt-1)`, at most `max_ms`; with `jitter`, that times `unit`
    /// (uniform in `[0, 1)`; clamped), so anywhere between zero and it ("full jitter"). A factor
    /// below 1 is taken as 1 — a backoff never shrinks — and a factor that is not a number, or
    /// a product that overflows, waits the longest.
    ///
    /// ```
    /// use courier::options::Backoff;
    /// use std::time::Duration;
    ///
    /// let backoff = Backoff { initial_ms: 100, max_ms: 1_000, factor: 2.0, jitter: false };
    /// let waits: Vec<Duration> = (1..=5).map(|n| backoff.delay(n, 0.0)).collect();
    /// assert_eq!(waits, [100, 200, 400, 800, 1_000].map(Duration::from_millis));
    /// let jittered = Backoff { jitter: true, ..backoff };
    /// assert_eq!(jittered.delay(3, 0.5), Duration::from_millis(200));
    /// ```
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let cap = self.max_ms as f64;
        let factor = if self.factor.is_nan() {
            f64::INFINITY
        } else {
            self.factor.max(1.0)
        };
        let ms = (self.initial_ms as f64 * factor.powi(exponent)).min(cap);
        // `initial_ms` zero times an infinite factor is NaN: wait the longest.
        let ms = if ms.is_nan() { cap } else { ms.max(0.0) };
        let ms = if self.jitter {
            ms * unit.clamp(0.0, 1.0)
        } else {
            ms
        };
        Duration::from_secs_f64(ms / 1000.0)
    }
}

/// When and how a call is retried (an endpoint's `.retry(...)`).
///
/// The defaults retry reads and idempotent methods on status 0 (network failure), 429, 502, 503
/// and 504, honouring `Retry-After`, up to 3 attempts in all. A non-idempotent write is retried
/// only when its endpoint sets [`RetryPolicy::writes`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    /// Attempts in all, the first included. `1` never retries.
    pub max_attempts: u32,
    /// Statuses that are retried; `0` stands for a network failure.
    pub statuses: Vec<u16>,
    /// Whether non-idempotent writes (POST, PATCH) are retried too.
    pub writes: bool,
    /// Delays between attempts.
    pub backoff: Backoff,
    /// Whether a `Retry-After` header sets the next delay (capped by `backoff.max_ms`).
    pub honor_retry_after: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            statuses: vec![0, 429, 502, 503, 504],
            writes: false,
            backoff: Backoff::default(),
            honor_retry_after: true,
        }
    }
}

impl RetryPolicy {
    /// The default policy.
    pub fn new() -> Self {
        Self::default()
    }

    /// A policy that never retries.
    pub fn never() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Attempts in all, the first included.
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// Replaces the retried statuses (`0` is a network failure).
    #[must_use]
    pub fn statuses(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        self.statuses = statuses.into_iter().collect();
        self
    }

    /// Retries non-idempotent writes too.
    #[must_use]
    pub fn writes(mut self, on: bool) -> Self {
        self.writes = on;
        self
    }

    /// Sets the backoff between attempts.
    #[must_use]
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The first delay.
    pub fn initial_delay(&self) -> Duration {
        Duration::from_millis(self.backoff.initial_ms)
    }
}

/// The settings of the sockets a caller opens for its channels (the browser package's
/// `CallerWSOptions`).
///
/// Every duration is in milliseconds, every size in bytes. The defaults:
///
/// | field | default | meaning |
/// |---|---|---|
/// | `backoff` | 500 ms first, ×2, at most 30 s, full jitter | delays between reconnection attempts |
/// | `heartbeat` | a ping every 30 s, 10 s to answer | how a silent, dead connection is noticed |
/// | `message_queue` | 1,000 messages, 1 MiB | what is kept while disconnected |
/// | `protocols` | none | the `Sec-WebSocket-Protocol` offered |
/// | `max_message_size` | 1 MiB | the largest message sent or taken, either way |
/// | `auth` | none | parameters sent in the socket's first frame |
///
/// ```
/// use courier::options::{Heartbeat, WsOptions};
///
/// let ws = WsOptions::new()
///     .heartbeat(Heartbeat { interval_ms: 5_000, timeout_ms: 2_000 })
///     .max_message_size(64 * 1024);
/// assert_eq!(ws.message_queue.max_count, 1_000);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WsOptions {
    /// Delays between reconnection attempts.
    pub backoff: Backoff,
    /// Pings, and how long an answer may take.
    pub heartbeat: Heartbeat,
    /// Bounds on the messages kept while disconnected.
    pub message_queue: MessageQueue,
    /// The subprotocols offered in the handshake.
    pub protocols: Vec<String>,
    /// The largest message, in bytes, sent or received.
    pub max_message_size: usize,
    /// Authentication parameters sent in the socket's first frame.
    pub auth: Option<WsAuth>,
}

impl Default for WsOptions {
    fn default() -> Self {
        Self {
            backoff: Backoff {
                initial_ms: 500,
                max_ms: 30_000,
                factor: 2.0,
                jitter: true,
            },
            heartbeat: Heartbeat::default(),
            message_queue: MessageQueue::default(),
            protocols: Vec::new(),
            max_message_size: 1024 * 1024,
            auth: None,
        }
    }
}

impl WsOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the reconnection backoff.
    #[must_use]
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the heartbeat.
    #[must_use]
    pub fn heartbeat(mut self, heartbeat: Heartbeat) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// Sets the bounds of the queue of messages sent while disconnected.
    #[must_use]
    pub fn message_queue(mut self, queue: MessageQueue) -> Self {
        self.message_queue = queue;
        self
    }

    /// Offers these subprotocols.
    #[must_use]
    pub fn protocols<I, S>(mut self, protocols: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.protocols = protocols.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the largest message, in bytes, either way.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Sets the authentication parameters.
    #[must_use]
    pub fn auth(mut self, auth: WsAuth) -> Self {
        self.auth = Some(auth);
        self
    }
}

/// A socket's heartbeat: a ping every `interval_ms`; a connection that sends nothing for
/// `timeout_ms` after a ping is taken as dead and reconnected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Heartbeat {
    /// Milliseconds between pings. Default 30,000.
    pub interval_ms: u64,
    /// Milliseconds an answer may take. Default 10,000.
    pub timeout_ms: u64,
}

impl Default for Heartbeat {
    fn default() -> Self {
        Self {
            interval_ms: 30_000,
            timeout_ms: 10_000,
        }
    }
}

/// Bounds on the messages a channel keeps while disconnected; a message over either bound is
/// refused to its sender, never dropped silently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MessageQueue {
    /// Messages kept at most. Default 1,000.
    pub max_count: usize,
    /// Bytes kept at most (the messages' encoded size). Default 1 MiB.
    pub max_bytes: usize,
}

impl Default for MessageQueue {
    fn default() -> Self {
        Self {
            max_count: 1_000,
            max_bytes: 1024 * 1024,
        }
    }
}

type AuthFn = dyn Fn() -> futures_core::future::BoxFuture<
        'static,
        Result<Option<serde_json::Map<String, serde_json::Value>>, crate::body::BoxError>,
    > + Send
    + Sync;

/// A socket's authentication parameters (the browser package's `WSAuthParams`): fixed, or
/// computed before each connection.
#[derive(Clone)]
pub enum WsAuth {
    /// The same parameters every time.
    Params(serde_json::Map<String, serde_json::Value>),
    /// Parameters computed before each connection; `None` sends none.
    Dynamic(std::sync::Arc<AuthFn>),
}

impl WsAuth {
    /// Parameters computed by `f` before each connection.
    pub fn dynamic<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<
                Output = Result<
                    Option<serde_json::Map<String, serde_json::Value>>,
                    crate::body::BoxError,
                >,
            > + Send
            + 'static,
    {
        Self::Dynamic(std::sync::Arc::new(move || Box::pin(f())))
    }

    /// The parameters for the next connection.
    ///
    /// # Errors
    ///
    /// When the function computing them fails.
    pub async fn params(
        &self,
    ) -> Result<Option<serde_json::Map<String, serde_json::Value>>, crate::body::BoxError> {
        match self {
            Self::Params(params) => Ok(Some(params.clone())),
            Self::Dynamic(f) => f().await,
        }
    }
}

impl fmt::Debug for WsAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Params(params) => f.debug_tuple("Params").field(&params.len()).finish(),
            Self::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}
