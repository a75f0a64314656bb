//! [`Body`]: the request and response body every courier service speaks.

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::{combinators::BoxBody, BodyExt};
use std::pin::Pin;
use std::task::{Context, Poll};

/// An error of any kind, boxed: the error type of courier's services and bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An HTTP body of [`Bytes`] frames: what courier sends and receives.
///
/// Any [`http_body::Body`] with `Bytes` data and an error convertible to [`BoxError`] becomes one
/// with [`Body::new`]; a buffered body comes from `Bytes`, `Vec<u8>`, `String` or `&'static str`,
/// is held without boxing, and can be copied for another attempt with [`Body::try_clone`].
#[derive(Debug)]
pub struct Body(Inner);

#[derive(Debug)]
enum Inner {
    /// Buffered bytes; empty once yielded.
    Full(Bytes),
    Boxed(BoxBody<Bytes, BoxError>),
}

// Two words fewer than a body holding an `Option<Bytes>`: requests move through every layer's
// `call` and into hyper's connection task by value.
const _: () = assert!(std::mem::size_of::<Body>() == 32);

impl Body {
    /// Wraps any body.
    pub fn new<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + Sync + 'static,
        B::Error: Into<BoxError>,
    {
        Self(Inner::Boxed(body.map_err(Into::into).boxed()))
    }

    /// A body read from a stream of byte chunks, as it is sent: a file from disk, or bytes still
    /// arriving from elsewhere. It is sent once ([`Body::try_clone`] gives `None`); an error from
    /// the stream ends the body, and fails the call that sends it.
    ///
    /// ```
    /// use courier::transport::Body;
    /// use futures_util::stream;
    ///
    /// let chunks = stream::iter(["Hello, ", "world"].map(Ok::<_, std::io::Error>));
    /// let body = Body::from_stream(chunks);
    /// assert!(body.try_clone().is_none());
    /// ```
    pub fn from_stream<S, C, E>(stream: S) -> Self
    where
        S: futures_core::Stream<Item = Result<C, E>> + Send + 'static,
        C: Into<Bytes> + 'static,
        E: Into<BoxError> + 'static,
    {
        Self::new(Chunks(std::sync::Mutex::new(Box::pin(stream))))
    }

    /// A body with no bytes.
    pub fn empty() -> Self {
        Self(Inner::Full(Bytes::new()))
    }

    /// A copy of a buffered body that has not been read yet, for sending again (a retry); `None`
    /// for a streamed body, which can be sent once only.
    ///
    /// ```
    /// use courier::transport::Body;
    ///
    /// assert!(Body::from("{}").try_clone().is_some());
    /// let streamed = Body::new(http_body_util::Full::new(bytes::Bytes::from("{}")));
    /// assert!(streamed.try_clone().is_none());
    /// ```
    pub fn try_clone(&self) -> Option<Self> {
        match &self.0 {
            Inner::Full(bytes) => Some(Self(Inner::Full(bytes.clone()))),
            Inner::Boxed(_) => None,
        }
    }

    /// The bytes of a buffered body that has not been read yet, taken out; any other body is
    /// handed back as it is.
    ///
    /// ```
    /// use courier::transport::Body;
    ///
    /// assert_eq!(Body::from("{}").into_bytes().ok().as_deref(), Some(&b"{}"[..]));
    /// let streamed = Body::new(http_body_util::Full::new(bytes::Bytes::from("{}")));
    /// assert!(streamed.into_bytes().is_err());
    /// ```
    pub fn into_bytes(self) -> Result<Bytes, Self> {
        match self.0 {
            Inner::Full(bytes) => Ok(bytes),
            other => Err(Self(other)),
        }
    }

    /// The bytes of a buffered body that has not been read yet.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.0 {
            Inner::Full(bytes) => Some(bytes),
            Inner::Boxed(_) => None,
        }
    }
}

/// A stream of chunks as a body. The stream need not be `Sync` (a boxed body must be): it sits
/// in a mutex that is only ever reached through `&mut` ([`std::sync::Mutex::get_mut`]), which
/// takes no lock.
struct Chunks<S>(std::sync::Mutex<Pin<Box<S>>>);

impl<S, C, E> http_body::Body for Chunks<S>
where
    S: futures_core::Stream<Item = Result<C, E>>,
    C: Into<Bytes>,
{
    type Data = Bytes;
    type Error = E;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, E>>> {
        let stream = self
            .get_mut()
            .0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        stream
            .as_mut()
            .poll_next(cx)
            .map(|chunk| chunk.map(|chunk| chunk.map(|chunk| Frame::data(chunk.into()))))
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self(Inner::Full(bytes))
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Bytes::from(bytes).into()
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Bytes::from(text).into()
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Bytes::from_static(text.as_bytes()).into()
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.0 {
            Inner::Full(bytes) if bytes.is_empty() => Poll::Ready(None),
            Inner::Full(bytes) => Poll::Ready(Some(Ok(Frame::data(std::mem::take(bytes))))),
            Inner::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Inner::Full(bytes) => bytes.is_empty(),
            Inner::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Inner::Full(bytes) => SizeHint::with_exact(bytes.len() as u64),
            Inner::Boxed(body) => body.size_hint(),
        }
    }
}
