//! The proxy caller: the same typed views as [`Caller`](crate::Caller), over the proxy route of
//! an app server (`courier_server::Proxy`) instead of the upstream itself — what a browser does,
//! from Rust (a desktop or command-line front end, a test of the proxy, a service that may only
//! reach the app). Its forms, its wire and its rules are on [`ProxyCaller`].

mod caller;
mod client;
mod cookies;
mod hooks;
mod route;

pub use self::caller::{Credentials, ProxyCaller, ProxyCallerBuilder};
pub use self::client::ProxyClient;
pub use self::hooks::Success;
use self::route::not_serializable;
/// The proxy route's paths (the browser package's `proxyPath`): each a path on the caller's
/// base URL, or an absolute URL of its own.
#[doc(no_inline)]
pub use courier_core::config::ProxyPaths;

/// The longest address a read is sent as GET with, 2 KB as in the browser package; a longer one
/// goes as POST.
pub const MAX_GET_ADDRESS: usize = 2048;
