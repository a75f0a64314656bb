//! [`Body`]: the request and response body every courier service speaks.

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use std::pin::Pin;
use std::task::{Context, Poll};

/// An error of any kind, boxed: the error type of courier's services and bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A boxed HTTP body of [`Bytes`] frames: what courier sends and receives.
///
/// Any [`http_body::Body`] with `Bytes` data and an error convertible to [`BoxError`] becomes one
/// with [`Body::new`]; a buffered body comes from `Bytes`, `Vec<u8>`, `String` or `&'static str`.
#[derive(Debug)]
pub struct Body(BoxBody<Bytes, BoxError>);

impl Body {
    /// Wraps any body.
    pub fn new<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + Sync + 'static,
        B::Error: Into<BoxError>,
    {
        Self(body.map_err(Into::into).boxed())
    }

    /// A body with no bytes.
    pub fn empty() -> Self {
        Self(Empty::new().map_err(|never| match never {}).boxed())
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self(Full::new(bytes).map_err(|never| match never {}).boxed())
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
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}
