use super::view::{Endpoint, Mode, Scope, StreamCall};
use crate::body::BoxError;
use crate::tree::endpoint::{Event, StreamEndpoint, StreamHandler, WireCall};
use crate::{Dispatch, GroupDef};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::marker::PhantomData;

/// A typed server-sent event stream: each event carries `R`; subscribers give variables `V`.
pub struct Stream<R, V = ()> {
    def: StreamEndpoint,
    _types: PhantomData<fn(V) -> R>,
}

impl<R, V> Stream<R, V> {
    /// Wraps a runtime descriptor.
    pub fn from_def(def: StreamEndpoint) -> Self {
        Self {
            def,
            _types: PhantomData,
        }
    }

    /// The runtime descriptor.
    pub fn def(&self) -> &StreamEndpoint {
        &self.def
    }

    /// The runtime descriptor, owned.
    pub fn into_def(self) -> StreamEndpoint {
        self.def
    }

    /// Declares the variables' type.
    pub fn variables<T>(self) -> Stream<R, T> {
        Stream::from_def(self.def)
    }

    /// Declares the event type.
    pub fn response<T>(self) -> Stream<T, V> {
        Stream::from_def(self.def)
    }
}

crate::tree::endpoint::common_builders!([R, V] Stream<R, V>; this => this.def.options);

impl<R, V> Clone for Stream<R, V> {
    fn clone(&self) -> Self {
        Self::from_def(self.def.clone())
    }
}

impl<R, V> fmt::Debug for Stream<R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Stream").field(&self.def).finish()
    }
}

impl<R, V> super::group::Member for Stream<R, V> {
    fn add_to(self, name: &str, group: GroupDef) -> GroupDef {
        group.endpoint(name, self.def)
    }
}

impl<R, V> Endpoint for Stream<R, V> {
    type Vars = V;
    type Response = R;
    type Call<'a, C: Dispatch + 'a, M: Mode> = StreamCall<'a, C, R, V>;

    fn call<'a, C: Dispatch + 'a, M: Mode>(
        scope: &Scope<'a, C, M>,
        name: &'static str,
        vars: V,
    ) -> StreamCall<'a, C, R, V> {
        StreamCall::new(scope.erase(), name, vars)
    }
}

/// The head of streams.
#[derive(Clone, Copy, Debug, Default)]
pub struct StreamHead;

/// The head of streams; types come from the field.
///
/// ```
/// use courier::typed::{stream, Stream};
/// use courier::live::Event;
/// # #[derive(serde::Serialize, serde::Deserialize)] struct Tick(u64);
/// let remote: Stream<Tick> = stream().get("/ticks");
/// let served: Stream<Tick, u64> = stream().implement(|every: u64| {
///     futures_util::stream::iter((0..3).map(move |n| Event::new(Tick(n * every))))
/// });
/// # let _ = (remote, served);
/// ```
pub fn stream() -> StreamHead {
    StreamHead
}

impl StreamHead {
    /// A stream another process serves at `path`.
    pub fn get<R, V>(self, path: impl Into<String>) -> Stream<R, V> {
        Stream::from_def(StreamEndpoint::get(path))
    }

    /// A stream whose address is computed from the typed variables.
    pub fn via<R, V, F>(self, f: F) -> Stream<R, V>
    where
        V: DeserializeOwned,
        F: Fn(V) -> Result<WireCall, BoxError> + Send + Sync + 'static,
    {
        Stream::from_def(StreamEndpoint::via(move |value| {
            f(serde_json::from_value(value)?)
        }))
    }

    /// A stream served here: the handler turns a subscriber's variables into a stream of events.
    /// Variables that do not parse as `V` end the subscription with an error.
    pub fn implement<R, V, F, S>(self, handler: F) -> Stream<R, V>
    where
        R: Serialize + 'static,
        V: DeserializeOwned + 'static,
        F: Fn(V) -> S + Send + Sync + 'static,
        S: futures_core::Stream<Item = Event<R>> + Send + 'static,
    {
        let handler =
            StreamHandler::new(
                move |req| match serde_json::from_value::<V>(req.variables) {
                    Ok(vars) => handler(vars)
                        .map(|event| {
                            let data = serde_json::to_value(event.data)?;
                            Ok(Event {
                                data,
                                id: event.id,
                                event: event.event,
                                retry: event.retry,
                            })
                        })
                        .left_stream(),
                    Err(e) => futures_util::stream::once(std::future::ready(Err::<
                        Event<serde_json::Value>,
                        BoxError,
                    >(
                        e.into()
                    )))
                    .right_stream(),
                },
            );
        Stream::from_def(StreamEndpoint::implement(handler))
    }
}
