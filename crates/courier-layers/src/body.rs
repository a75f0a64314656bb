//! [`BufferedBody`]: request bodies a layer can read without consuming, and copy.

use bytes::Bytes;
use http_body_util::Empty;

/// A request body whose bytes a layer can see before it is sent, and copy for another attempt.
///
/// [`CoalesceLayer`](crate::coalesce::CoalesceLayer) puts a read's body into its key and
/// [`RetryLayer`](crate::retry::RetryLayer) sends a copy on each attempt. A buffered body can do
/// both; a streamed one answers `None` and is sent once, unshared.
///
/// ```
/// use courier::layers::BufferedBody;
///
/// let body = courier::Body::from("{\"q\":1}");
/// assert_eq!(body.buffered(), Some(&b"{\"q\":1}"[..]));
/// assert!(body.try_clone_body().is_some());
/// ```
pub trait BufferedBody: Sized {
    /// The bytes, when the body is buffered and unread.
    fn buffered(&self) -> Option<&[u8]>;

    /// A copy, when the body is buffered and unread.
    fn try_clone_body(&self) -> Option<Self>;
}

impl BufferedBody for courier_core::Body {
    fn buffered(&self) -> Option<&[u8]> {
        self.as_bytes()
    }

    fn try_clone_body(&self) -> Option<Self> {
        self.try_clone()
    }
}

impl BufferedBody for String {
    fn buffered(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl BufferedBody for Empty<Bytes> {
    fn buffered(&self) -> Option<&[u8]> {
        Some(&[])
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(Empty::new())
    }
}
