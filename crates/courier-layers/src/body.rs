//! [`BufferedBody`]: request bodies a layer can read without consuming, and copy.

use bytes::Bytes;
use http_body::Body as _;
use http_body_util::{Empty, Full};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A request body whose bytes a layer can see before it is sent, and copy for another attempt.
///
/// [`CoalesceLayer`](crate::coalesce::CoalesceLayer) and
/// [`CacheLayer`](crate::cache::CacheLayer) put a read's body into its key, and
/// [`RetryLayer`](crate::retry::RetryLayer) sends a copy on each attempt. A buffered body can do
/// both; a streamed one answers `None` and is sent once, unshared.
///
/// courier's [`Body`](courier_core::Body) and the bodies a hyper client is usually built with
/// implement it: [`Full<Bytes>`], [`Empty<Bytes>`], [`Bytes`] and [`String`]. For a body type of
/// your own, implement it (seeing the bytes is borrowing them where the body holds them; a copy
/// is a clone):
///
/// ```
/// use courier::layers::BufferedBody;
///
/// // A body that is either bytes in memory or a stream.
/// enum MyBody {
///     Bytes(bytes::Bytes),
///     Streamed(/* … */),
/// }
///
/// impl BufferedBody for MyBody {
///     fn buffered(&self) -> Option<impl AsRef<[u8]>> {
///         match self {
///             MyBody::Bytes(bytes) => Some(bytes),
///             MyBody::Streamed() => None,
///         }
///     }
///
///     fn try_clone_body(&self) -> Option<Self> {
///         match self {
///             MyBody::Bytes(bytes) => Some(MyBody::Bytes(bytes.clone())),
///             MyBody::Streamed() => None,
///         }
///     }
/// }
///
/// let body = courier::transport::Body::from("{\"q\":1}");
/// assert_eq!(body.buffered().unwrap().as_ref(), b"{\"q\":1}");
/// assert!(body.try_clone_body().is_some());
/// ```
pub trait BufferedBody: Sized {
    /// The bytes, when the body is buffered and unread: borrowed where the body holds them.
    fn buffered(&self) -> Option<impl AsRef<[u8]>>;

    /// A copy, when the body is buffered and unread.
    fn try_clone_body(&self) -> Option<Self>;
}

impl BufferedBody for courier_core::Body {
    fn buffered(&self) -> Option<impl AsRef<[u8]>> {
        self.as_bytes()
    }

    fn try_clone_body(&self) -> Option<Self> {
        self.try_clone()
    }
}

impl BufferedBody for Full<Bytes> {
    fn buffered(&self) -> Option<impl AsRef<[u8]>> {
        // `Full` hands its bytes out only as a frame: a copy of it (a `Bytes` clone, which shares
        // the buffer) gives its one frame at the first poll, with no waker needed.
        let mut copy = self.clone();
        match Pin::new(&mut copy).poll_frame(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Some(Ok(frame))) => frame.into_data().ok(),
            // Polled already: nothing left to send.
            Poll::Ready(None) => Some(Bytes::new()),
            Poll::Ready(Some(Err(never))) => match never {},
            Poll::Pending => None,
        }
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl BufferedBody for Bytes {
    fn buffered(&self) -> Option<impl AsRef<[u8]>> {
        Some(self)
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl BufferedBody for String {
    fn buffered(&self) -> Option<impl AsRef<[u8]>> {
        Some(self.as_bytes())
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl BufferedBody for Empty<Bytes> {
    fn buffered(&self) -> Option<impl AsRef<[u8]>> {
        Some(&[][..])
    }

    fn try_clone_body(&self) -> Option<Self> {
        Some(Empty::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(body: &impl BufferedBody) -> Option<Vec<u8>> {
        body.buffered().map(|bytes| bytes.as_ref().to_vec())
    }

    #[test]
    fn every_buffered_body_shows_its_bytes_and_copies() {
        assert_eq!(
            bytes_of(&Full::new(Bytes::from("abc"))),
            Some(b"abc".to_vec())
        );
        assert_eq!(bytes_of(&Bytes::from("abc")), Some(b"abc".to_vec()));
        assert_eq!(bytes_of(&String::from("abc")), Some(b"abc".to_vec()));
        assert_eq!(bytes_of(&Empty::<Bytes>::new()), Some(Vec::new()));
        assert_eq!(
            bytes_of(&courier_core::Body::from("abc")),
            Some(b"abc".to_vec())
        );

        let full = Full::new(Bytes::from("abc"));
        let copy = full.try_clone_body().unwrap();
        // Seeing the bytes does not use them up.
        assert_eq!(bytes_of(&full), bytes_of(&copy));
        assert_eq!(bytes_of(&full), Some(b"abc".to_vec()));
    }

    #[test]
    fn a_streamed_body_is_not_buffered() {
        let streamed =
            courier_core::Body::from_stream(futures_util::stream::iter([Ok::<_, std::io::Error>(
                Bytes::from("abc"),
            )]));
        assert!(bytes_of(&streamed).is_none());
        assert!(streamed.try_clone_body().is_none());
    }
}
