//! The default HTTP transport.
//!
#![doc = include_str!("GUIDE.md")]

mod builder;
mod cache;
mod classify;
mod connect;
mod error;
mod pool;
mod pooled;
mod tls;

pub use builder::Transport;
pub use cache::TransportCache;
pub use classify::{classify, NetworkErrorKind};
pub use error::TransportError;
pub(crate) use pooled::TransportService;
