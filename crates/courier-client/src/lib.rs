//! courier's direct client: the default HTTP transport, and the caller that runs a source's
//! endpoints over it.
//!
//! - [`Caller<A>`](Caller): the typed views of an API of shape `A` over a [`Client`].
//! - [`Client`]: calls by dotted path with JSON variables, the [`Dispatch`] typed views run on,
//!   and a `tower::Service<Call>`.
//! - [`Transport`]: the default HTTP transport (hyper-util with rustls), and
//!   [`TransportCache`], which picks each call's transport.
//! - [`Error`]: one error type for every way a call can fail.
//!
//! [`Dispatch`]: courier_core::Dispatch

mod caller;
mod error;
mod progress;
mod transport;

pub use caller::{Call, Caller, Client, ClientBuilder};
pub use error::{Error, HttpError};
pub use transport::{classify, NetworkErrorKind, Transport, TransportCache, TransportError};
