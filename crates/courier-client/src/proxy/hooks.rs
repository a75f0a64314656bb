//! The proxy caller's `on_error` and `on_success`, and what a success shows them.

use crate::error::Error;
use http::{HeaderMap, StatusCode};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A successful call, as [`ProxyCallerBuilder::on_success`](super::ProxyCallerBuilder::on_success) sees it.
#[non_exhaustive]
pub struct Success<'a> {
    /// The endpoint's dotted path.
    pub endpoint: &'a str,
    /// The response's status.
    pub status: StatusCode,
    /// The response's headers.
    pub headers: &'a HeaderMap,
    /// The value the call resolves to (the typed view's response type; `serde_json::Value` for
    /// [`Client::call`](crate::Client::call)): `downcast_ref` it.
    pub data: &'a (dyn Any + Send),
}

impl fmt::Debug for Success<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Success")
            .field("endpoint", &self.endpoint)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

type OnError = Arc<dyn Fn(&Error) + Send + Sync>;
type OnSuccess = Arc<dyn Fn(&Success<'_>) + Send + Sync>;

/// The caller's `on_error` and `on_success`.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) on_error: Option<OnError>,
    pub(crate) on_success: Option<OnSuccess>,
}
