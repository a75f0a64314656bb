//! Endpoint descriptors: the three heads [`HttpEndpoint`], [`StreamEndpoint`] and
//! [`ChannelEndpoint`], and the options they share.
//!
//! A descriptor is inert data: it says where an endpoint is and how it is called; a caller puts
//! it to work.

mod channel;
mod handler;
mod http;
mod stream;
mod via;

pub use self::channel::{ChannelEndpoint, ChannelSource, Topic};
pub use self::handler::{
    ChannelHandler, ChannelHandlers, ChannelRequest, Event, EventStream, MessageStream,
    MissedEvents, Peer, PeerHandler, StreamHandler, StreamRequest,
};
pub use self::http::{HttpAddress, HttpEndpoint};
pub use self::stream::{StreamEndpoint, StreamSource};
pub use self::via::{Via, WireCall};

use crate::options::SessionMode;
use crate::settings::LayerSettings;
use crate::transport::Middleware;
use serde_json::{Map, Value};

/// Options every head shares: `.headers()`, the [`LayerSettings`] (`.expose(true)`, `.timeout()`,
/// `.coalesce()`, `.cache()`, …), `.meta()`, `.layer()`, `session` and `forward`.
#[derive(Clone, Debug)]
pub struct EndpointOptions {
    /// Header names added to the source's allowed headers for this endpoint.
    pub headers: Vec<String>,
    /// The settings the layers read ([`LayerSettings`]): over its groups' and the source's,
    /// under a call's own.
    pub settings: LayerSettings,
    /// Free-form metadata, readable by layers.
    pub meta: Map<String, Value>,
    /// Layers applied to this endpoint's calls only, outermost first.
    pub layers: Vec<Middleware>,
    /// How the endpoint takes part in the session.
    pub session: SessionMode,
    /// Whether forwarded headers go with its calls.
    pub forward: bool,
}

impl Default for EndpointOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            settings: LayerSettings::new(),
            meta: Map::new(),
            layers: Vec::new(),
            session: SessionMode::On,
            forward: true,
        }
    }
}

/// Builder methods every head shares, written once for the runtime heads and the typed ones:
/// `$place` is where the head keeps its [`EndpointOptions`] (an expression of `$this`, the
/// head), `[$g, …]` the typed head's type parameters.
macro_rules! common_builders {
    ([$($g:ident),*] $ty:ty; $this:ident => $place:expr) => {
        // The layer settings: the endpoint's, over its groups'
        // and the source's, under a call's own.
        $crate::settings::layer_settings!(level_setters([$($g),*] $ty; $this => $place.settings; tree));

        impl<$($g),*> $ty {
            /// Adds header names to the source's allowed headers for this endpoint, in both
            /// directions through the proxy (adds, does not replace).
            #[must_use]
            pub fn headers<I, Name>(mut self, names: I) -> Self
            where
                I: IntoIterator<Item = Name>,
                Name: Into<String>,
            {
                let $this = &mut self;
                $place.headers.extend(names.into_iter().map(Into::into));
                self
            }

            /// Adds a metadata entry, readable by layers.
            #[must_use]
            pub fn meta(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
                let $this = &mut self;
                $place.meta.insert(key.into(), value);
                self
            }

            /// Applies a tower layer to this endpoint's calls.
            #[must_use]
            pub fn layer<L>(mut self, layer: L) -> Self
            where
                L: tower::Layer<$crate::HttpService> + Send + Sync + 'static,
                L::Service: tower::Service<
                        ::http::Request<$crate::Body>,
                        Response = ::http::Response<$crate::Body>,
                    > + Clone
                    + Send
                    + Sync
                    + 'static,
                <L::Service as tower::Service<::http::Request<$crate::Body>>>::Error:
                    Into<$crate::BoxError>,
                <L::Service as tower::Service<::http::Request<$crate::Body>>>::Future:
                    Send + 'static,
            {
                let $this = &mut self;
                $place
                    .layers
                    .push($crate::Middleware::new(std::any::type_name::<L>(), layer));
                self
            }

            /// Applies an already type-erased [`Middleware`](crate::Middleware).
            #[must_use]
            pub fn middleware(mut self, middleware: $crate::Middleware) -> Self {
                let $this = &mut self;
                $place.layers.push(middleware);
                self
            }

            /// Sets how the endpoint takes part in the session: `false` sends none,
            /// [`SessionMode::Unguarded`](crate::SessionMode::Unguarded) skips the write checks.
            #[must_use]
            pub fn session(mut self, mode: impl Into<$crate::SessionMode>) -> Self {
                let $this = &mut self;
                $place.session = mode.into();
                self
            }

            /// `false` keeps forwarded headers off this endpoint's calls.
            #[must_use]
            pub fn forward(mut self, forward: bool) -> Self {
                let $this = &mut self;
                $place.forward = forward;
                self
            }

            /// The shared options.
            pub fn options(&self) -> &$crate::EndpointOptions {
                let $this = self;
                &$place
            }
        }
    };
}
pub(crate) use common_builders;

/// An endpoint of any head.
#[derive(Clone, Debug)]
pub enum EndpointDef {
    /// An HTTP read or write.
    Http(HttpEndpoint),
    /// A server-sent event stream.
    Stream(StreamEndpoint),
    /// A WebSocket channel.
    Channel(ChannelEndpoint),
}

impl EndpointDef {
    /// The shared options.
    pub fn options(&self) -> &EndpointOptions {
        match self {
            Self::Http(e) => e.options(),
            Self::Stream(e) => e.options(),
            Self::Channel(e) => e.options(),
        }
    }

    /// The HTTP endpoint, if it is one.
    pub fn as_http(&self) -> Option<&HttpEndpoint> {
        match self {
            Self::Http(e) => Some(e),
            _ => None,
        }
    }

    /// The stream, if it is one.
    pub fn as_stream(&self) -> Option<&StreamEndpoint> {
        match self {
            Self::Stream(e) => Some(e),
            _ => None,
        }
    }

    /// The channel, if it is one.
    pub fn as_channel(&self) -> Option<&ChannelEndpoint> {
        match self {
            Self::Channel(e) => Some(e),
            _ => None,
        }
    }

    /// The path template this endpoint is addressed at, when it has one (not `.via()` or
    /// `.implement()`).
    pub fn path(&self) -> Option<&str> {
        match self {
            Self::Http(e) => match e.address() {
                HttpAddress::Path { path, .. } => Some(path),
                HttpAddress::Via(_) => None,
            },
            Self::Stream(e) => match e.source() {
                StreamSource::Path(path) => Some(path),
                _ => None,
            },
            Self::Channel(e) => match e.source() {
                ChannelSource::Path(path) => Some(path),
                _ => None,
            },
        }
    }
}

impl From<HttpEndpoint> for EndpointDef {
    fn from(e: HttpEndpoint) -> Self {
        Self::Http(e)
    }
}

impl From<StreamEndpoint> for EndpointDef {
    fn from(e: StreamEndpoint) -> Self {
        Self::Stream(e)
    }
}

impl From<ChannelEndpoint> for EndpointDef {
    fn from(e: ChannelEndpoint) -> Self {
        Self::Channel(e)
    }
}
