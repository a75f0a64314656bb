//! [`Caller`], the typed views over a client — the direct [`Client`] (the calls themselves) or
//! the proxy caller's [`ProxyClient`](crate::proxy::ProxyClient).

mod client;
mod service;

pub use self::client::{Call, Client, ClientBuilder};

use crate::error::Error;
use crate::transport::Transport;
use courier_core::typed::ApiSpec;
use courier_core::Api;
use courier_core::{BodyService, Dispatch, HttpService};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

/// A typed client for an API of shape `A` over the client `C`: derefs to the typed views the
/// derive wrote (`caller.users().get(UserId(7)).await`).
///
/// `C` is the direct [`Client`] by default (built with [`Caller::new`] or [`Caller::builder`]);
/// a [`ProxyCaller`](crate::ProxyCaller) is a `Caller` over a
/// [`ProxyClient`](crate::proxy::ProxyClient), built with `ProxyCaller::routes`, `::source` or
/// `::boundary`. The views, their values and their errors are the same over either.
///
/// ```no_run
/// use courier::Caller;
/// # fn demo<A: courier::typed::ApiSpec>(api: courier::Api<A>) -> Result<(), courier::Error> {
/// let caller = Caller::new(api)?;
/// // let user = caller.users().get(UserId(7)).await?;
/// # Ok(()) }
/// ```
pub struct Caller<A: ApiSpec, C: Dispatch = Client> {
    client: A::Client<C>,
}

impl<A: ApiSpec, C: Dispatch> Caller<A, C> {
    /// The typed views over `client`.
    pub(crate) fn over(client: C) -> Self {
        Self {
            client: A::Client::from(client),
        }
    }
}

impl<A: ApiSpec> Caller<A> {
    /// A caller for `api` over the default transport.
    ///
    /// # Errors
    ///
    /// When a transport named by the API cannot be built.
    pub fn new(api: Api<A>) -> Result<Self, Error> {
        Self::with_transport(api, Transport::new())
    }

    /// A caller for `api` whose default transport is `transport`.
    ///
    /// # Errors
    ///
    /// When a transport cannot be built.
    pub fn with_transport(api: Api<A>, transport: Transport) -> Result<Self, Error> {
        Self::builder(api).transport(transport).build()
    }

    /// A caller with settings: the default transport, the default retry policy, layers of
    /// one's own.
    ///
    /// ```no_run
    /// use courier::layers::{auth::AuthLayer, trace::log_middleware};
    /// use courier::options::RetryPolicy;
    /// use courier::Caller;
    /// # fn demo<A: courier::typed::ApiSpec>(api: courier::Api<A>) -> Result<(), courier::Error> {
    /// let caller = Caller::builder(api)
    ///     .retry(RetryPolicy::new().max_attempts(2))
    ///     .layer(AuthLayer::new(|| async { Ok::<_, std::io::Error>("secret-token") }))
    ///     .middleware(log_middleware())
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    pub fn builder(api: Api<A>) -> CallerBuilder<A> {
        CallerBuilder {
            client: Client::builder(api.into_def()),
            shape: PhantomData,
        }
    }
}

/// Builds a [`Caller`]; see [`ClientBuilder`] for each setting.
#[must_use]
pub struct CallerBuilder<A: ApiSpec> {
    client: ClientBuilder,
    shape: PhantomData<fn() -> A>,
}

impl<A: ApiSpec> CallerBuilder<A> {
    /// The default transport; see [`ClientBuilder::transport`].
    pub fn transport(self, transport: Transport) -> Self {
        self.map(|c| c.transport(transport))
    }

    /// The retry policy of endpoints that set none; see [`ClientBuilder::retry`].
    pub fn retry(self, retry: impl Into<courier_core::RetrySetting>) -> Self {
        self.map(|c| c.retry(retry))
    }

    /// Adds a tower layer to every call; see [`ClientBuilder::layer`].
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: tower::Layer<HttpService, Service: BodyService> + Send + Sync + 'static,
    {
        self.map(|c| c.layer(layer))
    }

    /// Adds a [`Middleware`](courier_core::Middleware) to every call.
    pub fn middleware(self, middleware: courier_core::Middleware) -> Self {
        self.map(|c| c.middleware(middleware))
    }

    /// Records each call's duration through the `metrics` facade; see
    /// [`ClientBuilder::metrics`].
    pub fn metrics(self, on: bool) -> Self {
        self.map(|c| c.metrics(on))
    }

    /// The settings of the sockets the caller's channels open; see [`ClientBuilder::ws`].
    pub fn ws(self, ws: courier_core::WsOptions) -> Self {
        self.map(|c| c.ws(ws))
    }

    /// The hub of the channels the caller joins in process; see [`ClientBuilder::hub`].
    pub fn hub(self, hub: courier_live::Hub) -> Self {
        self.map(|c| c.hub(hub))
    }

    /// Answers every call with `mock` instead of a transport; see [`ClientBuilder::mock`].
    #[cfg(feature = "mock")]
    pub fn mock(self, mock: &crate::mock::Mock<A>) -> Self {
        self.map(|c| c.mock(mock))
    }

    /// Builds the caller.
    ///
    /// # Errors
    ///
    /// When a transport cannot be built.
    pub fn build(self) -> Result<Caller<A>, Error> {
        Ok(Caller::over(self.client.build()?))
    }

    fn map(self, f: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Self {
        Self {
            client: f(self.client),
            shape: PhantomData,
        }
    }
}

impl<A: ApiSpec> fmt::Debug for CallerBuilder<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerBuilder").finish_non_exhaustive()
    }
}

impl<A: ApiSpec, C: Dispatch> Deref for Caller<A, C> {
    type Target = A::Client<C>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl<A: ApiSpec, C: Dispatch> Clone for Caller<A, C>
where
    A::Client<C>: Clone,
{
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
        }
    }
}

impl<A: ApiSpec, C: Dispatch> fmt::Debug for Caller<A, C>
where
    A::Client<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Caller").field(&self.client).finish()
    }
}
