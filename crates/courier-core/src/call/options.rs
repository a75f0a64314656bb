//! [`CallOptions`]: what one call carries besides its variables, set with `.with(...)`.

use crate::context::ServedRequest;
use crate::settings::LayerSettings;
use crate::transport::{Dispatcher, Fetch, TransportOptions};
use crate::tree::meta::EndpointMeta;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Options for one call, set with `.with(...)` on a typed view (the browser package's
/// `CallOptions`).
///
/// Each set option wins over the endpoint's and the source's; `.with()` twice merges, the later
/// call's options winning. Each option is set by the builder method of its plain name and read
/// by the `get_*` method beside it (`.method(m)`, `.get_method()`); the
/// [`LayerSettings`] (`.timeout(d)`, `.coalesce(b)`, `.cache(c)`, …) are read
/// with [`get_settings`](Self::get_settings).
///
/// ```
/// use courier::CallOptions;
/// use std::time::Duration;
///
/// let opts = CallOptions::new().timeout(Duration::from_millis(200)).coalesce(false);
/// assert_eq!(opts.get_settings().get_timeout(), Some(Duration::from_millis(200)));
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct CallOptions {
    settings: LayerSettings,
    method: Option<Method>,
    headers: HeaderMap,
    signal: Option<CancellationToken>,
    pub(super) transport: TransportOptions,
    upload_progress: Option<UploadProgress>,
    context: Option<ServedRequest>,
}

type ProgressFn = dyn Fn(Progress) + Send + Sync;

/// How far an upload has got: bytes handed to the connection so far, the total when the body's
/// size is known, and the fraction `0.0..=1.0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Bytes of the body read by the connection so far.
    pub loaded: u64,
    /// The body's size, when known.
    pub total: Option<u64>,
    /// `loaded / total`, or `0.0` until the end when the size is unknown; `1.0` at the end.
    pub percent: f64,
}

/// A callback told of an upload's progress (the browser package's `onUploadProgress`).
#[derive(Clone)]
pub struct UploadProgress(Arc<ProgressFn>);

impl UploadProgress {
    /// Wraps a callback.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Reports progress.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl std::fmt::Debug for UploadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UploadProgress(..)")
    }
}

// The layer settings: this call's, over its endpoint's.
crate::settings::layer_settings!(level_setters([] CallOptions; this => this.settings; call));

impl CallOptions {
    /// No options set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forces the call's verb, GET or POST: the proxy caller's on the wire, the direct
    /// caller's to the upstream, the variables encoded as that verb's (a GET's in the query, a
    /// POST's in the body). A write is never taken as GET, nor a read with sensitive variables:
    /// the direct caller fails such a call with `INVALID_OPTION` before anything is sent, and the
    /// proxy refuses it with 405.
    pub fn method(mut self, method: Method) -> Self {
        self.method = Some(method);
        self
    }

    /// Adds a header to this call.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Adds every header of `headers`, as [`header`](Self::header) adds one. Taken by value:
    /// the call's first headers are moved in, not copied (the proxy hands a browser's allowed
    /// headers on so).
    ///
    /// ```
    /// use courier::CallOptions;
    /// use http::header::ACCEPT_LANGUAGE;
    /// use http::{HeaderMap, HeaderValue};
    ///
    /// let mut browser = HeaderMap::new();
    /// browser.append(ACCEPT_LANGUAGE, HeaderValue::from_static("fr"));
    /// browser.append("x-tag", HeaderValue::from_static("a"));
    /// browser.append("x-tag", HeaderValue::from_static("b"));
    /// let options = CallOptions::new()
    ///     .header(ACCEPT_LANGUAGE, HeaderValue::from_static("en"))
    ///     .headers_from(browser);
    /// let languages: Vec<_> = options.headers().get_all(ACCEPT_LANGUAGE).iter().collect();
    /// assert_eq!(languages, ["en", "fr"]);
    /// assert_eq!(options.headers().get_all("x-tag").iter().count(), 2);
    /// ```
    pub fn headers_from(mut self, headers: HeaderMap) -> Self {
        if self.headers.is_empty() {
            self.headers = headers;
        } else {
            // A name comes once, before its first value; `None` is "the same name again".
            let mut current = None;
            for (name, value) in headers {
                current = name.or(current);
                if let Some(name) = &current {
                    self.headers.append(name.clone(), value);
                }
            }
        }
        self
    }

    /// Aborts this call when `signal` is cancelled (the browser package's `signal` call option).
    pub fn signal(mut self, signal: CancellationToken) -> Self {
        self.signal = Some(signal);
        self
    }

    /// A replacement transport for this call, over the endpoint's groups and source.
    pub fn fetch(mut self, fetch: Fetch) -> Self {
        self.transport.fetch = Some(fetch);
        self
    }

    /// How this call's connection is made, over the endpoint's groups and source.
    pub fn dispatcher(mut self, dispatcher: Dispatcher) -> Self {
        self.transport.dispatcher = Some(dispatcher);
        self
    }

    /// Reports the upload's progress as the connection reads the body, ending at `1.0` before
    /// the call resolves (the browser package's `onUploadProgress`).
    pub fn on_upload_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.upload_progress = Some(UploadProgress::new(f));
        self
    }

    /// The served request this call is made for, when it is made outside the server's own scope:
    /// its session and forwarded headers go with the call as if the server were serving it here.
    /// Within a handler wrapped in the server's context layer there is no need: the served
    /// request is found on its own.
    pub fn context(mut self, served: ServedRequest) -> Self {
        self.context = Some(served);
        self
    }

    /// The explicit served-request context, if set.
    pub fn get_context(&self) -> Option<&ServedRequest> {
        self.context.as_ref()
    }

    /// The upload progress callback, if set.
    pub fn upload_progress(&self) -> Option<&UploadProgress> {
        self.upload_progress.as_ref()
    }

    /// The call's own [`LayerSettings`], over the
    /// endpoint's.
    pub fn get_settings(&self) -> &LayerSettings {
        &self.settings
    }

    /// The forced verb, if set.
    pub fn get_method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// The call's own headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The call's cancellation signal, if set.
    pub fn get_signal(&self) -> Option<&CancellationToken> {
        self.signal.as_ref()
    }

    /// The call's own transport settings.
    pub fn transport(&self) -> &TransportOptions {
        &self.transport
    }

    /// `self` with every option `later` sets replaced by `later`'s; headers of `later` replace
    /// those of the same name.
    pub fn merged(&self, later: &CallOptions) -> CallOptions {
        let mut headers = self.headers.clone();
        for name in later.headers.keys() {
            headers.remove(name);
        }
        for (name, value) in &later.headers {
            headers.append(name.clone(), value.clone());
        }
        CallOptions {
            settings: later.settings.over(&self.settings),
            method: later.method.clone().or_else(|| self.method.clone()),
            headers,
            signal: later.signal.clone().or_else(|| self.signal.clone()),
            transport: later.transport.over(&self.transport),
            upload_progress: later
                .upload_progress
                .clone()
                .or_else(|| self.upload_progress.clone()),
            context: later.context.clone().or_else(|| self.context.clone()),
        }
    }
}

impl EndpointMeta {
    /// This endpoint's facts with a call's options applied: the call's settings win over the
    /// endpoint's, its groups' and the source's.
    #[must_use]
    pub fn with_call(&self, options: Option<&CallOptions>) -> Self {
        let mut meta = self.clone();
        if let Some(own) = options.map(CallOptions::get_settings) {
            if !own.is_empty() {
                meta.settings = own.over(&meta.settings);
            }
        }
        meta
    }
}
