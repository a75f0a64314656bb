//! The direct client: [`Caller`] (typed views) over [`Client`] (the calls themselves).

mod client;

pub use self::client::{Call, Client, ClientBuilder};

use crate::error::Error;
use crate::transport::Transport;
use courier_core::typed::{Api, ApiSpec};
use std::fmt;
use std::ops::Deref;

/// A typed client for an API of shape `A`: derefs to the typed views the derive wrote
/// (`caller.users().get(UserId(7)).await`).
///
/// ```no_run
/// # use courier_core as courier;
/// use courier_client::Caller;
/// # fn demo<A: courier::typed::ApiSpec>(api: courier::typed::Api<A>) -> Result<(), courier_client::Error> {
/// let caller = Caller::new(api)?;
/// // let user = caller.users().get(UserId(7)).await?;
/// # Ok(()) }
/// ```
pub struct Caller<A: ApiSpec> {
    client: A::Client<Client>,
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
        let client = Client::builder(api.into_def())
            .transport(transport)
            .build()?;
        Ok(Self {
            client: A::Client::from(client),
        })
    }
}

impl<A: ApiSpec> Deref for Caller<A> {
    type Target = A::Client<Client>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl<A: ApiSpec> Clone for Caller<A>
where
    A::Client<Client>: Clone,
{
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
        }
    }
}

impl<A: ApiSpec> fmt::Debug for Caller<A>
where
    A::Client<Client>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Caller").field(&self.client).finish()
    }
}
