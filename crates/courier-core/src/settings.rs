//! [`LayerSettings`]: the settings courier's layers read about a call, at every level, declared
//! once (this module's `layer_settings!` list) and merged once ([`LayerSettings::over`]).
//!
//! A key belongs here when the nearest level that sets it wins. Three kinds of option that
//! several levels hold do not, and each has one place of its own instead:
//!
//! - **Lists a level adds to**: `allowed_headers` and an endpoint's `.headers()`, the source's
//!   `headers`, its `middleware` and an endpoint's `.layer()`. An inner level adds to the outer
//!   one rather than replacing it, so they are joined once, where the endpoint is resolved
//!   (`tree/resolve.rs`).
//! - **The transport** (`fetch`, `dispatcher`): [`TransportOptions`](crate::transport::TransportOptions)
//!   with its own `over`, since a config file's transport names files read relative to the file.
//! - **The session and forwarding**: the source's `session` and `forward` define the session
//!   and what is forwarded; an endpoint's `.session(mode)` and `.forward(bool)` say whether it
//!   takes part. One level each, read by the endpoint's meta.

use crate::error::{ConfigurationError, ErrorCode};
use crate::options::RetryPolicy;
use std::time::Duration;

/// The list of settings, each once: its docs, its name and its getter's, its type, its key in
/// a config file with the type the file writes it as, and the levels that set it: `every` (the
/// source, groups, endpoints and calls) or `tree` (the source, groups and endpoints: a fact of
/// the endpoint, not a call's to change). `$then!` is called with `($args)` and the list.
macro_rules! layer_settings {
    ($then:ident $(($($args:tt)*))?) => {
        $crate::settings::$then! {
            ($($($args)*)?)
            /// The deadline of the whole call: every attempt, the waits between them, and the
            /// reading of a buffered response body. Past it the call fails with a timeout that
            /// says how many attempts were made. `TimeoutLayer` reads it.
            timeout, get_timeout: ::std::time::Duration [timeout_ms: $crate::settings::Millis]
                in every,
            /// A bound on each attempt, inside the call's deadline: an attempt past it is cut
            /// short and counts as a network failure, which the retry policy may send again.
            /// None by default. `TimeoutLayer::per_attempt` reads it.
            attempt_timeout, get_attempt_timeout: ::std::time::Duration
                [attempt_timeout_ms: $crate::settings::Millis] in every,
            /// Whether identical reads in flight share one upstream call; writes never do. On
            /// by default. `CoalesceLayer` reads it.
            coalesce, get_coalesce: bool [coalesce: bool] in every,
            /// How failed attempts are sent again: a [`RetryPolicy`](crate::RetryPolicy), or
            /// `false` for never; unset, the client's default policy. `RetryLayer` reads it.
            retry, get_retry: $crate::RetrySetting [retry: $crate::config::raw::RawRetry] in every,
            /// How long a read's successful answers are kept
            /// ([`CacheOptions`](crate::options::CacheOptions)); a cached read without sensitive
            /// variables may go as GET through the proxy. Unset, nothing is kept. Writes,
            /// streams and channels are never cached (a stream or channel that sets its own is
            /// refused). `CacheLayer` reads it.
            cache, get_cache: $crate::options::CacheOptions
                [cache: $crate::options::CacheOptions] in every,
            /// Whether a browser may call the endpoint through the proxy. Off by default: an
            /// endpoint is reached from a page only when it, a group around it or its source
            /// says `expose(true)`, and `expose(false)` nearer hides it again. The proxy and the
            /// routes record read it.
            expose, get_expose: bool [expose: bool] in tree,
            /// Whether a write sends an `Idempotency-Key` header (the IETF httpapi draft;
            /// Stripe's practice): a key made once per call and kept across its attempts, so
            /// that an upstream that deduplicates by it applies the write once however often it
            /// arrives. Such a write is then retried as a read is on a connection failure, and
            /// on 429 and 503 (honouring `Retry-After`), by the retry policy. Through the proxy
            /// the browser package makes the key per call and the proxy passes it on, for these
            /// endpoints only. Off by default. `RetryLayer` reads it.
            idempotency_key, get_idempotency_key: bool [idempotency_key: bool] in tree,
            /// The most bytes a buffered answer's body may hold (an error's too): a longer one
            /// fails the call with a protocol error as soon as the limit is passed, its
            /// connection closed, rather than being read whole into memory. None by default;
            /// streamed bodies (`stream_response`, streams, channels) are not buffered and not
            /// bound by it.
            response_limit, get_response_limit: u64 [response_limit: u64] in every,
        }
    };
}
pub(crate) use layer_settings;

/// Milliseconds, as a config file writes a duration (`timeout_ms = 5000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Millis(pub(crate) u64);

impl From<Millis> for Duration {
    fn from(millis: Millis) -> Self {
        Duration::from_millis(millis.0)
    }
}

/// Writes [`LayerSettings`] from the list.
macro_rules! settings_struct {
    (() $( $(#[$doc:meta])* $name:ident, $get:ident: $ty:ty [$key:ident: $raw:ty] in $scope:ident, )*) => {
        /// The settings courier's layers and proxy read about a call, which every level can set
        /// — source, group, endpoint, call — and a config file at each of its levels, as one
        /// value of optional fields with one merge. A few are facts of the endpoint, not a
        /// call's to change (`expose`): they have no setter on `CallOptions`.
        ///
        /// Each setting is declared once, in the list of `courier-core`'s `layer_settings!`;
        /// from that list come the fields, the getters, the merge, every level's setter of the
        /// plain name (`ApiBuilder::timeout`, `GroupDef::timeout`, `HttpEndpoint::timeout`, the
        /// typed heads', `CallOptions::timeout`, `EndpointMeta::timeout`) and the config file's
        /// key at each level (`timeout_ms`). Adding a setting is a line in that list, its check
        /// in `LayerSettings::check` when it has one, the layer that reads it, its docs line and
        /// a test.
        ///
        /// # Which level wins
        ///
        /// The nearest level that sets a setting: the call's (`.with()`), else the endpoint's,
        /// else the innermost group's that sets it, outer groups in turn, else the source's,
        /// else the layer's own default. [`LayerSettings::over`] is that one merge.
        ///
        /// ```
        /// use courier::options::LayerSettings;
        /// use courier::{ApiDef, CallOptions, GroupDef, HttpEndpoint};
        /// use std::time::Duration;
        ///
        /// let api = ApiDef::builder()
        ///     .base_url("https://api.example.com")
        ///     .timeout(Duration::from_secs(10))
        ///     .group(
        ///         "reports",
        ///         GroupDef::new()
        ///             .timeout(Duration::from_secs(60))
        ///             .attempt_timeout(Duration::from_secs(20))
        ///             .endpoint("daily", HttpEndpoint::get("/daily"))
        ///             .endpoint("quick", HttpEndpoint::get("/q").timeout(Duration::from_secs(2))),
        ///     )
        ///     .build()?;
        /// let daily = api.endpoint("reports.daily").unwrap().meta();
        /// assert_eq!(daily.get_timeout(), Some(Duration::from_secs(60)));
        /// assert_eq!(daily.get_settings().get_attempt_timeout(), Some(Duration::from_secs(20)));
        /// let quick = api.endpoint("reports.quick").unwrap().meta();
        /// assert_eq!(quick.get_timeout(), Some(Duration::from_secs(2)));
        ///
        /// // A call's own wins over all of them.
        /// let call = CallOptions::new().timeout(Duration::from_millis(500));
        /// let quick = quick.with_call(Some(&call));
        /// assert_eq!(quick.get_timeout(), Some(Duration::from_millis(500)));
        /// # Ok::<(), courier::ConfigurationError>(())
        /// ```
        ///
        /// Set them with the builder method of each setting's name, at any level; read them
        /// with the `get_*` method beside it.
        #[derive(Clone, Debug, Default, PartialEq)]
        #[must_use]
        pub struct LayerSettings {
            $( pub(crate) $name: Option<$ty>, )*
        }

        impl LayerSettings {
            /// Nothing set.
            pub fn new() -> Self {
                Self::default()
            }

            /// The config file's key of the setting named `name` (`timeout_ms` for
            /// `timeout`), when `name` is a setting's.
            pub(crate) fn config_key(name: &str) -> Option<&'static str> {
                match name {
                    $( stringify!($name) => Some(stringify!($key)), )*
                    _ => None,
                }
            }

            /// Whether nothing is set.
            pub fn is_empty(&self) -> bool {
                $( self.$name.is_none() )&&*
            }

            /// Each setting of `self` where it is set, else `outer`'s: `self` is the nearer
            /// level (a call over its endpoint, an endpoint over its group, a group over the
            /// source).
            pub fn over(&self, outer: &LayerSettings) -> LayerSettings {
                LayerSettings {
                    $( $name: self.$name.clone().or_else(|| outer.$name.clone()), )*
                }
            }

            $(
                $(#[$doc])*
                pub fn $name(mut self, value: impl Into<$ty>) -> Self {
                    self.$name = Some(value.into());
                    self
                }

                #[doc = concat!("The `", stringify!($name), "` setting, when set.")]
                pub fn $get(&self) -> Option<$ty> {
                    self.$name.clone()
                }
            )*
        }
    };
}

pub(crate) use settings_struct;
layer_settings!(settings_struct);

/// Writes each setting's builder method on a level whose [`LayerSettings`] is the place `$place`
/// (an expression of `$this`, the level; `[$g, …]` its type parameters, for the typed heads),
/// and `settings(..)`, which sets several at once (the given ones over what is there).
macro_rules! level_setters {
    (([$($g:ident),*] $ty:ty; $this:ident => $place:expr; $level:ident) $( $(#[$doc:meta])* $name:ident, $get:ident: $vty:ty [$key:ident: $raw:ty] in $scope:ident, )*) => {
        impl<$($g),*> $ty {
            $(
                $crate::settings::level_setter! {
                    $level $scope ($this => $place) $(#[$doc])* $name: $vty
                }
            )*

            /// Sets every setting `settings` sets, over this level's own.
            #[must_use = "the settings are on the value returned"]
            pub fn settings(mut self, settings: $crate::LayerSettings) -> Self {
                let $this = &mut self;
                $place = settings.over(&$place);
                self
            }
        }
    };
}
pub(crate) use level_setters;

/// One setting's builder method on a level of kind `call` or `tree`, or none: a `tree` setting
/// has none on a call.
macro_rules! level_setter {
    (call tree $($rest:tt)*) => {};
    ($level:ident $scope:ident ($this:ident => $place:expr) $(#[$doc:meta])* $name:ident: $vty:ty) => {
        $(#[$doc])*
        #[must_use = "the setting is on the value returned"]
        pub fn $name(mut self, value: impl Into<$vty>) -> Self {
            let $this = &mut self;
            let settings = ::std::mem::take(&mut $place);
            $place = settings.$name(value);
            self
        }
    };
}
pub(crate) use level_setter;

/// Writes a config file's table struct with, besides its own fields, every setting's key, and
/// `layer_settings()`, which reads them.
macro_rules! raw_with_settings {
    (($(#[$meta:meta])* $vis:vis struct $raw_ty:ident { $($body:tt)* }) $( $(#[$doc:meta])* $name:ident, $get:ident: $vty:ty [$key:ident: $raw:ty] in $scope:ident, )*) => {
        $(#[$meta])*
        $vis struct $raw_ty {
            $($body)*
            $( pub(super) $key: Option<$raw>, )*
        }

        impl $raw_ty {
            /// The settings this table sets.
            pub(super) fn layer_settings(&mut self) -> $crate::LayerSettings {
                let mut settings = $crate::LayerSettings::new();
                $(
                    if let Some(value) = self.$key.take() {
                        settings = settings.$name(<$vty>::from(value));
                    }
                )*
                settings
            }
        }
    };
}
pub(crate) use raw_with_settings;

impl LayerSettings {
    /// Checks the settings that have rules: durations above zero, a retry policy that can run.
    ///
    /// # Errors
    ///
    /// `INVALID_OPTION` at `at.` + the setting's name.
    pub(crate) fn check(&self, at: &str) -> Result<(), ConfigurationError> {
        let key = |name: &str| {
            if at.is_empty() {
                name.to_owned()
            } else {
                format!("{at}.{name}")
            }
        };
        for (name, duration) in [
            ("timeout", self.timeout),
            ("attempt_timeout", self.attempt_timeout),
        ] {
            if duration.is_some_and(|d| d.is_zero()) {
                return Err(ConfigurationError::new(
                    ErrorCode::InvalidOption,
                    format!("a `{name}` of zero never succeeds"),
                )
                .at(key(name)));
            }
        }
        if let Some(RetrySetting::Policy(policy)) = &self.retry {
            let why = if policy.max_attempts == 0 {
                Some("retry.max_attempts counts the first attempt and must be at least 1")
            } else if !(policy.backoff.factor.is_finite() && policy.backoff.factor >= 1.0) {
                Some("retry.backoff.factor must be a finite number of at least 1")
            } else if policy.backoff.initial_ms > policy.backoff.max_ms {
                Some("retry.backoff.initial_ms may not exceed max_ms")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(ConfigurationError::new(ErrorCode::InvalidOption, why).at(key("retry")));
            }
        }
        Ok(())
    }
}

/// An endpoint's retry setting: the stack's default, none, or a policy of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RetrySetting {
    /// Whatever the stack's default is.
    #[default]
    Inherit,
    /// Never retried.
    Off,
    /// Retried by this policy (shared: a call's settings copy it without copying the policy).
    Policy(std::sync::Arc<RetryPolicy>),
}

impl From<RetryPolicy> for RetrySetting {
    fn from(policy: RetryPolicy) -> Self {
        Self::Policy(std::sync::Arc::new(policy))
    }
}

impl From<bool> for RetrySetting {
    fn from(on: bool) -> Self {
        if on {
            RetryPolicy::default().into()
        } else {
            Self::Off
        }
    }
}
