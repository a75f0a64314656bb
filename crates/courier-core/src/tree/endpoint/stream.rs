use super::{common_builders, EndpointOptions, StreamHandler, Via};
use crate::body::BoxError;
use serde_json::Value;

/// Where a stream's events come from.
#[derive(Clone, Debug)]
pub enum StreamSource {
    /// Served by another process at this path template (`.get(path)`).
    Path(String),
    /// Served by another process at an address computed from the variables (`.via()`).
    Via(Via),
    /// Served by this process (`.implement()`).
    Implemented(StreamHandler),
}

/// A server-sent event stream descriptor.
///
/// ```
/// use courier::live::{Event, StreamHandler};
/// use courier::StreamEndpoint;
///
/// let remote = StreamEndpoint::get("/events");
/// let served = StreamEndpoint::implement(StreamHandler::new(|_req| {
///     futures_util_stream()
/// }));
/// # fn futures_util_stream() -> impl futures_core::Stream<Item = Result<Event<serde_json::Value>, courier::BoxError>> + Send {
/// #     struct Done; impl futures_core::Stream for Done { type Item = Result<Event<serde_json::Value>, courier::BoxError>;
/// #     fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Option<Self::Item>> { std::task::Poll::Ready(None) } } Done }
/// # let _ = (remote, served);
/// ```
#[derive(Clone, Debug)]
pub struct StreamEndpoint {
    source: StreamSource,
    pub(crate) options: EndpointOptions,
}

impl StreamEndpoint {
    /// A stream another process serves at `path` (relative to the group prefix).
    pub fn get(path: impl Into<String>) -> Self {
        Self::from_source(StreamSource::Path(path.into()))
    }

    /// A stream whose address the closure computes from the variables; the verb of the
    /// returned [`WireCall`](super::WireCall) must be GET.
    pub fn via<F>(f: F) -> Self
    where
        F: Fn(Value) -> Result<super::WireCall, BoxError> + Send + Sync + 'static,
    {
        Self::from_source(StreamSource::Via(Via::new(f)))
    }

    /// A stream this process serves.
    pub fn implement(handler: StreamHandler) -> Self {
        Self::from_source(StreamSource::Implemented(handler))
    }

    fn from_source(source: StreamSource) -> Self {
        Self {
            source,
            options: EndpointOptions::default(),
        }
    }

    /// Where its events come from.
    pub fn source(&self) -> &StreamSource {
        &self.source
    }
}

common_builders!([] StreamEndpoint; this => this.options);
