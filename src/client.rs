//! Building the callers, and the clients under them.
//!
//! A first program needs none of these names: [`Caller::new`](crate::Caller::new) and
//! [`Client::new`](crate::Client::new) build with the defaults, and
//! [`ProxyCaller::routes`](crate::ProxyCaller), `::source` and `::boundary` start a
//! [`ProxyCallerBuilder`]. They are here for what comes next:
//!
//! - [`ClientBuilder`] and [`CallerBuilder`] (`Client::builder`, `Caller::builder`): the default
//!   transport's settings, the default retry policy, layers of your own, the channels' sockets,
//!   the hub that runs channels served in process.
//! - [`Call`]: one untyped call, the request of the [`Client`](crate::Client) as a
//!   `tower::Service`, to stack tower's layers on the whole client.
//! - [`ProxyClient`]: what a [`ProxyCaller`](crate::ProxyCaller) runs on, as the `Client` is what
//!   a `Caller` runs on; [`ProxyCallerBuilder`] builds it, [`Credentials`] says whether it keeps
//!   the proxy's cookies, and [`Success`] is what its `on_success` hook is told.
//!
//! ```
//! use courier::client::ClientBuilder;
//! use courier::options::RetrySetting;
//! use courier::{ApiDef, Client, GroupDef, HttpEndpoint};
//!
//! let api = ApiDef::builder()
//!     .base_url("http://127.0.0.1:9000")
//!     .group("users", GroupDef::new().endpoint("get", HttpEndpoint::get("/users/:id")))
//!     .build()?;
//! // No retries for this client's calls: the caller retries whole operations itself.
//! let builder: ClientBuilder = Client::builder(api).retry(RetrySetting::Off);
//! let client = builder.build()?;
//! # drop(client);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use courier_client::proxy::{
    Credentials, ProxyCallerBuilder, ProxyClient, Success, MAX_GET_ADDRESS,
};
pub use courier_client::{Call, CallerBuilder, ClientBuilder};
