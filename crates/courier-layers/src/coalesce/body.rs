//! [`CoalesceBody`]: the response body of [`Coalesce`](super::Coalesce).

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Frame, SizeHint};
use pin_project_lite::pin_project;
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project! {
    /// The response body of [`Coalesce`](super::Coalesce): the inner service's own body,
    /// streamed through, for a request that was not shared or a read nobody joined; or a copy
    /// of the shared response's buffered bytes (and trailers, if it had any) for the callers of
    /// a call others joined.
    ///
    /// Its error type is the inner body's: a copy cannot fail.
    #[derive(Debug)]
    pub struct CoalesceBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind<B> {
        Inner {
            #[pin]
            body: B,
        },
        Shared {
            // `None` once yielded, and from the start for an empty body.
            data: Option<Bytes>,
            trailers: Option<HeaderMap>,
        },
    }
}

impl<B> CoalesceBody<B> {
    pub(super) fn inner(body: B) -> Self {
        Self {
            kind: Kind::Inner { body },
        }
    }

    pub(super) fn shared(data: Bytes, trailers: Option<HeaderMap>) -> Self {
        Self {
            kind: Kind::Shared {
                data: (!data.is_empty()).then_some(data),
                trailers,
            },
        }
    }
}

impl<B> http_body::Body for CoalesceBody<B>
where
    B: http_body::Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProj::Inner { body } => body.poll_frame(cx),
            KindProj::Shared { data, trailers } => {
                let frame = match data.take() {
                    Some(data) => Some(Frame::data(data)),
                    None => trailers.take().map(Frame::trailers),
                };
                Poll::Ready(frame.map(Ok))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Shared { data, trailers } => data.is_none() && trailers.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Shared { data, .. } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |data| data.len() as u64))
            }
        }
    }
}

/// Back to courier's own body without boxing: the inner body as it was, or the shared bytes
/// (boxed only when the shared response had trailers).
impl From<CoalesceBody<courier_core::Body>> for courier_core::Body {
    fn from(body: CoalesceBody<courier_core::Body>) -> Self {
        match body.kind {
            Kind::Inner { body } => body,
            Kind::Shared {
                data,
                trailers: None,
            } => data.map_or_else(courier_core::Body::empty, courier_core::Body::from),
            kind @ Kind::Shared { .. } => courier_core::Body::new(CoalesceBody { kind }),
        }
    }
}
