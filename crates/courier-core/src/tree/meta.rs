//! [`EndpointMeta`]: what a layer needs to know about the call a request belongs to.
//!
//! Every request a [`Client`](https://docs.rs/courier-client) sends carries an `EndpointMeta` in
//! its extensions. Layers read it with `request.extensions().get::<EndpointMeta>()`; a layer that
//! finds none (a request built by hand, a stack on a bare hyper client) falls back to what the
//! request's method says and to its own configuration, so every layer works alone too.

use crate::options::{CacheOptions, RetryPolicy, SessionMode};
use crate::settings::LayerSettings;
use crate::settings::RetrySetting;
use http::HeaderName;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The facts about one call that layers read: the endpoint's dotted path, read or write, the
/// timeout and retry settings that apply, coalescing, cancel-previous, session and forward modes.
///
/// A resolved endpoint holds its own ([`ResolvedEndpoint::meta`]); a call's is that one with the
/// call's options applied ([`EndpointMeta::with_call`]). Cloning is cheap: the endpoint's facts
/// sit behind an `Arc`.
///
/// Each setting has a builder method of its plain name (`.timeout(d)`) and a getter beside it
/// named `get_*` (`.get_timeout()`), as `std::process::Command` names them; yes-or-no facts
/// read as predicates (`is_sensitive`, `cancels_previous`, `forwards`).
///
/// [`ResolvedEndpoint::meta`]: crate::ResolvedEndpoint::meta
///
/// A request built by hand can carry one too, which is how a layer's tests and a stack built
/// with `ServiceBuilder` describe their calls:
///
/// ```
/// use courier::tree::{EndpointMeta, Kind};
/// use std::time::Duration;
///
/// let meta = EndpointMeta::new("users.get", Kind::Query).timeout(Duration::from_secs(2));
/// let request = http::Request::get("http://127.0.0.1:9000/users/7")
///     .extension(meta)
///     .body(())
///     .unwrap();
/// let meta = request.extensions().get::<EndpointMeta>().unwrap();
/// assert_eq!(meta.path(), "users.get");
/// assert!(meta.is_read());
/// assert_eq!(meta.get_timeout(), Some(Duration::from_secs(2)));
/// ```
#[derive(Clone, Debug)]
pub struct EndpointMeta {
    facts: Arc<Facts>,
    /// Resolved: the call's over the endpoint's over its groups' over the source's.
    pub(crate) settings: LayerSettings,
    /// The attempts of this call so far, when something counts them (see
    /// [`EndpointMeta::counting_attempts`]); shared by the copies each attempt carries.
    attempts: Option<Attempts>,
}

/// A call's attempts so far, counted by whoever makes them and read by whoever ends the call:
/// a shared counter (clones count into the same one). See
/// [`EndpointMeta::counting_attempts`].
#[derive(Clone, Debug, Default)]
pub struct Attempts(Arc<AtomicU32>);

impl Attempts {
    /// A counter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one more attempt.
    pub fn count(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// The attempts counted so far.
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Clone, Debug)]
struct Facts {
    path: Arc<str>,
    kind: Kind,
    sensitive: bool,
    cancel_previous: bool,
    session: SessionMode,
    forward: bool,
    allowed_headers: Vec<HeaderName>,
    meta: Map<String, Value>,
}

// The layer settings, as a request built by hand declares them.
crate::settings::layer_settings!(level_setters([] EndpointMeta; this => this.settings; call));

impl EndpointMeta {
    /// The facts of a call to the endpoint at `path` that reads or writes as `kind`: no timeout,
    /// the stack's retry policy, coalescing on (for reads), not cancelled by newer calls, session
    /// and forwarding on.
    pub fn new(path: impl Into<Arc<str>>, kind: Kind) -> Self {
        Self {
            facts: Arc::new(Facts {
                path: path.into(),
                kind,
                sensitive: false,
                cancel_previous: false,
                session: SessionMode::On,
                forward: true,
                allowed_headers: Vec::new(),
                meta: Map::new(),
            }),
            settings: LayerSettings::new(),
            attempts: None,
        }
    }

    fn facts(&mut self) -> &mut Facts {
        Arc::make_mut(&mut self.facts)
    }

    /// Marks the variables sensitive (`.sensitive_variables()`).
    #[must_use]
    pub fn sensitive(mut self, sensitive: bool) -> Self {
        self.facts().sensitive = sensitive;
        self
    }

    /// Marks the endpoint as listed in the source's `cancel_previous`.
    #[must_use]
    pub fn cancel_previous(mut self, on: bool) -> Self {
        self.facts().cancel_previous = on;
        self
    }

    /// Sets how the call takes part in the session.
    #[must_use]
    pub fn session(mut self, mode: SessionMode) -> Self {
        self.facts().session = mode;
        self
    }

    /// Sets whether forwarded headers go with the call.
    #[must_use]
    pub fn forward(mut self, on: bool) -> Self {
        self.facts().forward = on;
        self
    }

    /// Sets the header names allowed through the proxy for this endpoint.
    #[must_use]
    pub fn allowed_headers(mut self, names: impl IntoIterator<Item = HeaderName>) -> Self {
        self.facts().allowed_headers = names.into_iter().collect();
        self
    }

    /// Sets the endpoint's free-form metadata (`.meta()`).
    #[must_use]
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.facts().meta = meta;
        self
    }

    /// Counts this call's attempts from now on, in `attempts`, which the copies of this meta
    /// share: the layer that makes each attempt counts it ([`count_attempt`](Self::count_attempt),
    /// a `RetryLayer`), and the call's deadline, when it ends the call, says how many there
    /// were.
    pub fn counting_attempts(&mut self, attempts: Attempts) {
        self.attempts = Some(attempts);
    }

    /// Counts one more attempt of the call, when its attempts are counted.
    pub fn count_attempt(&self) {
        if let Some(attempts) = &self.attempts {
            attempts.count();
        }
    }

    /// The counter of the call's attempts, when they are counted.
    pub fn attempts(&self) -> Option<&Attempts> {
        self.attempts.as_ref()
    }

    /// The settings the layers read, resolved: the call's, else the endpoint's, else its
    /// groups', else the source's.
    pub fn get_settings(&self) -> &LayerSettings {
        &self.settings
    }

    /// The endpoint's dotted path (`users.posts.list`).
    pub fn path(&self) -> &str {
        &self.facts.path
    }

    /// The dotted path as a shared string, for keys that outlive the request.
    pub fn path_arc(&self) -> &Arc<str> {
        &self.facts.path
    }

    /// Read or write. Streams and channels are reads.
    pub fn kind(&self) -> Kind {
        self.facts.kind
    }

    /// Whether the call reads.
    pub fn is_read(&self) -> bool {
        self.facts.kind == Kind::Query
    }

    /// Whether the endpoint's variables are sensitive.
    pub fn is_sensitive(&self) -> bool {
        self.facts.sensitive
    }

    /// The deadline of the whole call: the call's, else the endpoint's, its groups', the
    /// source's.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    /// The retry setting: [`RetrySetting::Inherit`] unless a level sets one.
    pub fn get_retry(&self) -> &RetrySetting {
        self.settings
            .retry
            .as_ref()
            .unwrap_or(&RetrySetting::Inherit)
    }

    /// The retry policy of its own, shared (an `Arc` clone, no copy), when the setting is
    /// [`RetrySetting::Policy`].
    pub fn get_retry_policy(&self) -> Option<&Arc<RetryPolicy>> {
        match self.get_retry() {
            RetrySetting::Policy(policy) => Some(policy),
            RetrySetting::Inherit | RetrySetting::Off => None,
        }
    }

    /// Whether the call may share an identical in-flight read's response: the call's setting,
    /// else the endpoint's, its groups', the source's; on when none says. Writes are never
    /// shared, whatever this says.
    pub fn get_coalesce(&self) -> bool {
        self.settings.coalesce.unwrap_or(true)
    }

    /// Whether a newer call of this endpoint cancels this one while it is in flight.
    pub fn cancels_previous(&self) -> bool {
        self.facts.cancel_previous
    }

    /// How the call takes part in the session.
    pub fn get_session(&self) -> SessionMode {
        self.facts.session
    }

    /// Whether forwarded headers go with the call.
    pub fn forwards(&self) -> bool {
        self.facts.forward
    }

    /// The header names allowed through the proxy for this endpoint: the source's and its own.
    pub fn get_allowed_headers(&self) -> &[HeaderName] {
        &self.facts.allowed_headers
    }

    /// The endpoint's free-form metadata.
    pub fn get_meta(&self) -> &Map<String, Value> {
        &self.facts.meta
    }

    /// The caching that applies (`.cache()`: the call's, else the endpoint's, its groups', the
    /// source's), when one does.
    pub fn get_cache(&self) -> Option<&CacheOptions> {
        self.settings.cache.as_ref()
    }
}

/// Whether an HTTP endpoint reads or writes: `"query"` or `"mutation"` in the routes record (the
/// `type` of the browser package's `RouteShape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A read: may be coalesced, cancelled by a newer call, retried and cached.
    Query,
    /// A write: never shared, never cancelled.
    Mutation,
}

impl Kind {
    /// `"query"` or `"mutation"`, as the routes record writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Mutation => "mutation",
        }
    }

    /// The kind of a request: its [`EndpointMeta`]'s when it carries one,
    /// else the kind its verb implies. Layers decide "is this a read" with it.
    pub fn of_request<B>(request: &::http::Request<B>) -> Self {
        match request.extensions().get::<EndpointMeta>() {
            Some(meta) => meta.kind(),
            None => Self::of_method(request.method()),
        }
    }

    /// The kind a verb implies: GET, HEAD, OPTIONS and QUERY read; everything else writes.
    pub fn of_method(method: &::http::Method) -> Self {
        match method.as_str() {
            "GET" | "HEAD" | "OPTIONS" | "QUERY" => Self::Query,
            _ => Self::Mutation,
        }
    }
}
