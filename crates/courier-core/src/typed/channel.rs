use super::view::{ChannelCall, Endpoint, Mode, Scope};
use crate::body::BoxError;
use crate::tree::endpoint::{ChannelEndpoint, ChannelHandler, WireCall};
use crate::{Dispatch, GroupDef};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::marker::PhantomData;

/// The send marker of a push-only channel: `Channel<R, V>` (the default) cannot be sent on.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSend;

/// A typed WebSocket channel: pushes `R`, subscribed with `V`, and takes `S` from the caller
/// once declared with [`Channel::send`].
pub struct Channel<R, V = (), S = NoSend> {
    def: ChannelEndpoint,
    _types: PhantomData<fn(V, S) -> R>,
}

impl<R, V, S> Channel<R, V, S> {
    /// Wraps a runtime descriptor.
    pub fn from_def(def: ChannelEndpoint) -> Self {
        Self {
            def,
            _types: PhantomData,
        }
    }

    /// The runtime descriptor.
    pub fn def(&self) -> &ChannelEndpoint {
        &self.def
    }

    /// The runtime descriptor, owned.
    pub fn into_def(self) -> ChannelEndpoint {
        self.def
    }

    /// Declares the variables' type.
    pub fn variables<T>(self) -> Channel<R, T, S> {
        Channel::from_def(self.def)
    }

    /// Declares the message type.
    pub fn response<T>(self) -> Channel<T, V, S> {
        Channel::from_def(self.def)
    }

    /// Subscribers share a topic by a key computed from their variables. Variables that do not
    /// parse as `V` share a topic by their JSON text. For a channel this process implements: on
    /// one another process serves, the API refuses to build (`INVALID_OPTION`).
    #[must_use]
    pub fn topic<F>(self, key: F) -> Self
    where
        V: DeserializeOwned,
        F: Fn(&V) -> String + Send + Sync + 'static,
    {
        Self::from_def(self.def.topic(move |value| {
            match serde_json::from_value::<V>(value.clone()) {
                Ok(vars) => key(&vars),
                Err(_) => value.to_string(),
            }
        }))
    }
}

impl<R, V> Channel<R, V, NoSend> {
    /// Declares what the caller may send.
    pub fn send<S>(self) -> Channel<R, V, S> {
        Channel::from_def(self.def.send())
    }
}

crate::tree::endpoint::common_builders!([R, V, S] Channel<R, V, S>; this => this.def.options);

impl<R, V, S> Clone for Channel<R, V, S> {
    fn clone(&self) -> Self {
        Self::from_def(self.def.clone())
    }
}

impl<R, V, S> fmt::Debug for Channel<R, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Channel").field(&self.def).finish()
    }
}

impl<R, V, S> super::group::Member for Channel<R, V, S> {
    fn add_to(self, name: &str, group: GroupDef) -> GroupDef {
        group.endpoint(name, self.def)
    }
}

impl<R, V, S> Endpoint for Channel<R, V, S> {
    type Vars = V;
    type Response = R;
    type Call<'a, C: Dispatch + 'a, M: Mode> = ChannelCall<'a, C, R, V, S>;

    fn call<'a, C: Dispatch + 'a, M: Mode>(
        scope: &Scope<'a, C, M>,
        name: &'static str,
        vars: V,
    ) -> ChannelCall<'a, C, R, V, S> {
        ChannelCall::new(scope.erase(), name, vars)
    }
}

/// The head of channels.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelHead;

/// The head of channels; types come from the field.
///
/// ```
/// use courier::typed::{channel, Channel};
/// # #[derive(serde::Deserialize)] struct ChatOut;
/// # #[derive(serde::Serialize, serde::Deserialize)] struct RoomId(String);
/// # #[derive(serde::Serialize)] struct ChatIn;
/// let room: Channel<ChatOut, RoomId, ChatIn> = channel().connect("/rooms/:id").send();
/// # let _ = room;
/// ```
pub fn channel() -> ChannelHead {
    ChannelHead
}

impl ChannelHead {
    /// A channel another process serves at `path`.
    pub fn connect<R, V>(self, path: impl Into<String>) -> Channel<R, V, NoSend> {
        Channel::from_def(ChannelEndpoint::connect(path))
    }

    /// A channel whose address is computed from the typed variables.
    pub fn via<R, V, F>(self, f: F) -> Channel<R, V, NoSend>
    where
        V: DeserializeOwned,
        F: Fn(V) -> Result<WireCall, BoxError> + Send + Sync + 'static,
    {
        Channel::from_def(ChannelEndpoint::via(move |value| {
            f(serde_json::from_value(value)?)
        }))
    }

    /// A push-only channel served here: the handler turns a subscriber's variables into a stream
    /// of messages. Two-way channels are served with
    /// [`ChannelHandlers`](crate::ChannelHandlers) through
    /// [`ChannelEndpoint::implement`].
    pub fn implement<R, V, F, St>(self, handler: F) -> Channel<R, V, NoSend>
    where
        R: Serialize + 'static,
        V: DeserializeOwned + 'static,
        F: Fn(V) -> St + Send + Sync + 'static,
        St: futures_core::Stream<Item = R> + Send + 'static,
    {
        let handler =
            ChannelHandler::push(
                move |req| match serde_json::from_value::<V>(req.variables) {
                    Ok(vars) => handler(vars)
                        .map(|msg| serde_json::to_value(msg).map_err(BoxError::from))
                        .left_stream(),
                    Err(e) => futures_util::stream::once(std::future::ready(Err::<
                        serde_json::Value,
                        BoxError,
                    >(
                        e.into()
                    )))
                    .right_stream(),
                },
            );
        Channel::from_def(ChannelEndpoint::implement(handler).check_variables(parses_as::<V>))
    }
}

/// The typed heads' variables check: the variables parse as `V`.
fn parses_as<V: DeserializeOwned>(variables: &serde_json::Value) -> Result<(), BoxError> {
    V::deserialize(variables)
        .map(drop)
        .map_err(|e| format!("the variables do not fit the channel: {e}").into())
}

/// One subscriber of a two-way channel served here, typed: its variables `V`, and messages `R`
/// sent to it alone or to its whole topic.
pub struct ChannelPeer<R, V> {
    peer: std::sync::Arc<dyn crate::Peer>,
    variables: V,
    _message: PhantomData<fn(R)>,
}

impl<R: Serialize, V> ChannelPeer<R, V> {
    /// The subscriber's variables.
    pub fn variables(&self) -> &V {
        &self.variables
    }

    /// The subscriber's topic key.
    pub fn topic(&self) -> &str {
        self.peer.topic()
    }

    /// The authentication parameters the subscriber's socket sent in its first frame
    /// (`WsOptions::auth`), if any: what `on_join` checks to admit or refuse it.
    pub fn auth(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.peer.auth()
    }

    /// Sends `message` to this subscriber alone.
    ///
    /// # Errors
    ///
    /// When the message does not serialize, the subscriber has left, or its buffer is full.
    pub fn send(&self, message: &R) -> Result<(), BoxError> {
        self.peer.send(serde_json::to_value(message)?)
    }

    /// Sends `message` to every subscriber of the topic, this one included.
    ///
    /// # Errors
    ///
    /// When the message does not serialize.
    pub fn publish(&self, message: &R) -> Result<(), BoxError> {
        self.peer.publish(serde_json::to_value(message)?)
    }
}

impl<R, V: fmt::Debug> fmt::Debug for ChannelPeer<R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChannelPeer")
            .field("variables", &self.variables)
            .field("topic", &self.peer.topic())
            .finish()
    }
}

fn typed_peer<R, V: DeserializeOwned>(
    peer: std::sync::Arc<dyn crate::Peer>,
) -> Result<ChannelPeer<R, V>, BoxError> {
    let variables = serde_json::from_value(peer.variables().clone())?;
    Ok(ChannelPeer {
        peer,
        variables,
        _message: PhantomData,
    })
}

/// The typed handlers of a two-way channel served here: `on_message` for each message `S` a
/// subscriber sends, and optionally `on_join` (an error refuses the subscriber) and
/// `on_leave`. Variables that do not parse as `V` refuse the subscriber.
pub struct ChannelHandlers<R, V, S> {
    inner: crate::ChannelHandlers,
    _types: PhantomData<fn(V, S) -> R>,
}

impl<R, V, S> ChannelHandlers<R, V, S>
where
    R: Serialize + 'static,
    V: DeserializeOwned + Send + 'static,
    S: DeserializeOwned + 'static,
{
    /// Handlers with `on_message`.
    pub fn on_message<F, Fut>(f: F) -> Self
    where
        F: Fn(ChannelPeer<R, V>, S) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        let f = std::sync::Arc::new(f);
        let inner = crate::ChannelHandlers::on_message(move |peer, message| {
            let f = f.clone();
            async move {
                let peer = typed_peer::<R, V>(peer)?;
                let message: S = serde_json::from_value(message)?;
                f(peer, message).await
            }
        });
        Self {
            inner,
            _types: PhantomData,
        }
    }

    /// Runs `f` when a subscriber joins; an error refuses it.
    #[must_use]
    pub fn on_join<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ChannelPeer<R, V>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.inner = self.inner.on_join(peer_handler(f));
        self
    }

    /// Runs `f` once when a subscriber leaves.
    #[must_use]
    pub fn on_leave<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ChannelPeer<R, V>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.inner = self.inner.on_leave(peer_handler(f));
        self
    }
}

fn peer_handler<R, V, F, Fut>(f: F) -> crate::PeerHandler
where
    R: 'static,
    V: DeserializeOwned + Send + 'static,
    F: Fn(ChannelPeer<R, V>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
{
    let f = std::sync::Arc::new(f);
    crate::PeerHandler::new(move |peer| {
        let f = f.clone();
        async move { f(typed_peer::<R, V>(peer)?).await }
    })
}

impl<R, V, S> fmt::Debug for ChannelHandlers<R, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ChannelHandlers").field(&self.inner).finish()
    }
}

impl ChannelHead {
    /// A two-way channel served here, with typed handlers.
    ///
    /// ```
    /// use courier::typed::{channel, Channel, ChannelHandlers, ChannelPeer};
    /// # #[derive(serde::Serialize, serde::Deserialize)] struct Said { text: String }
    /// # #[derive(serde::Serialize, serde::Deserialize)] struct Say { text: String }
    /// let room: Channel<Said, String, Say> = channel().implement_handlers(
    ///     ChannelHandlers::on_message(|peer: ChannelPeer<Said, String>, say: Say| async move {
    ///         peer.publish(&Said { text: say.text })
    ///     })
    ///     .on_join(|peer: ChannelPeer<Said, String>| async move { peer.send(&Said { text: format!("welcome to {}", peer.variables()) }) }),
    /// );
    /// # let _ = room;
    /// ```
    pub fn implement_handlers<R, V, S>(self, handlers: ChannelHandlers<R, V, S>) -> Channel<R, V, S>
    where
        V: DeserializeOwned + 'static,
    {
        Channel::from_def(
            ChannelEndpoint::implement(ChannelHandler::Duplex(handlers.inner))
                .check_variables(parses_as::<V>),
        )
    }
}
