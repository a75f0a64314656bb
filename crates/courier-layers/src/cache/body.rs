//! [`CacheBody`]: a cached answer's body, or the upstream's, kept as it streams past.

use super::store::{Answer, Store};
use super::CacheRule;
use crate::key::Key;
use bytes::{Bytes, BytesMut};
use http::{HeaderMap, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

pin_project! {
    /// The body of a response from [`Cache`](super::Cache): the upstream's, as it arrives (and,
    /// for an answer that may be kept, copied as it streams past and kept once it ends), or a
    /// kept answer's bytes.
    pub struct CacheBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        Inner {
            #[pin]
            body: B,
            // `None` once the answer turned out too big to keep, or was not to be kept.
            tee: Option<Tee>,
        },
        Kept {
            data: Option<Bytes>,
        },
    }
}

/// What an answer being kept needs once its body has ended.
pub(super) struct Tee {
    pub(super) store: Arc<Store>,
    pub(super) key: Arc<Key>,
    pub(super) status: StatusCode,
    pub(super) version: Version,
    pub(super) headers: HeaderMap,
    pub(super) fresh: Duration,
    pub(super) stale: Duration,
    pub(super) endpoint: Option<Arc<str>>,
    pub(super) copied: BytesMut,
}

impl Tee {
    /// Keeps the answer whose body was `copied`.
    fn finish(self) {
        let answer = Answer {
            status: self.status,
            version: self.version,
            headers: self.headers,
            body: self.copied.freeze(),
            stored: Instant::now(),
        };
        let bytes = answer.body.len();
        match self.store.insert(self.key, answer, self.fresh, self.stale) {
            Some(evicted) => {
                tracing::debug!(
                    endpoint = self.endpoint.as_deref(),
                    bytes,
                    fresh_s = self.fresh.as_secs(),
                    "cache: answer kept"
                );
                if evicted > 0 {
                    tracing::debug!(evicted, "cache: least recently used answers evicted");
                }
            }
            None => tracing::debug!(
                endpoint = self.endpoint.as_deref(),
                bytes,
                "cache: answer too big to keep"
            ),
        }
    }
}

impl<B> CacheBody<B> {
    /// The upstream's body, passed through untouched.
    pub(super) fn inner(body: B) -> Self {
        Self {
            kind: Kind::Inner { body, tee: None },
        }
    }

    /// The upstream's body, copied as it streams past and kept by `tee` once it ends.
    pub(super) fn teeing(body: B, tee: Tee) -> Self {
        Self {
            kind: Kind::Inner {
                body,
                tee: Some(tee),
            },
        }
    }

    /// A kept answer's bytes.
    pub(super) fn kept(data: Bytes) -> Self {
        Self {
            kind: Kind::Kept {
                data: (!data.is_empty()).then_some(data),
            },
        }
    }
}

impl<B> Body for CacheBody<B>
where
    B: Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Kept { data } => Poll::Ready(data.take().map(|data| Ok(Frame::data(data)))),
            KindProj::Inner { mut body, tee } => {
                let frame = ready!(body.as_mut().poll_frame(cx));
                match &frame {
                    Some(Ok(frame)) => match (frame.data_ref(), tee.as_mut()) {
                        (Some(data), Some(kept)) => {
                            if kept.copied.len() + data.len() > kept.store.max_entry_bytes() {
                                *tee = None;
                            } else {
                                kept.copied.extend_from_slice(data);
                                // A body that says it has ended after its last bytes (one of a
                                // known length) is not always polled again: a server writing a
                                // `content-length` body stops once it has them. Keep it now.
                                if body.is_end_stream() {
                                    if let Some(kept) = tee.take() {
                                        kept.finish();
                                    }
                                }
                            }
                        }
                        // Trailers are not kept: an answer with them is not.
                        (None, Some(_)) => *tee = None,
                        (_, None) => {}
                    },
                    // A failed body is not an answer.
                    Some(Err(_)) => *tee = None,
                    None => {
                        if let Some(kept) = tee.take() {
                            kept.finish();
                        }
                    }
                }
                Poll::Ready(frame)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            // An inner body that says it has ended is still polled once, so that a kept answer
            // is finished: a tee that is waiting says "not yet".
            Kind::Inner { body, tee } => tee.is_none() && body.is_end_stream(),
            Kind::Kept { data } => data.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body, .. } => body.size_hint(),
            Kind::Kept { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
        }
    }
}

impl<B> std::fmt::Debug for CacheBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Inner { tee: Some(_), .. } => "upstream, being kept",
            Kind::Inner { tee: None, .. } => "upstream",
            Kind::Kept { .. } => "kept",
        };
        f.debug_tuple("CacheBody").field(&kind).finish()
    }
}

/// The rule and key of an answer that may be kept, until its head arrives.
pub(super) struct Pending {
    pub(super) store: Arc<Store>,
    pub(super) key: Arc<Key>,
    pub(super) rule: CacheRule,
    /// Whether the request carried credentials (`authorization`, `cookie`).
    pub(super) credentials: bool,
    pub(super) endpoint: Option<Arc<str>>,
}

impl Pending {
    /// What keeps the answer whose head is `parts` as its body streams past; `None` when the
    /// answer may not be kept ([`keep_for`](super::control::keep_for)).
    pub(super) fn tee(self, parts: &http::response::Parts) -> Option<Tee> {
        let (fresh, stale) =
            super::control::keep_for(&self.rule, parts.status, &parts.headers, self.credentials)?;
        Some(Tee {
            store: self.store,
            key: self.key,
            status: parts.status,
            version: parts.version,
            headers: parts.headers.clone(),
            fresh,
            stale,
            endpoint: self.endpoint,
            copied: BytesMut::new(),
        })
    }
}

/// Back to courier's own body, boxed only while an answer is being kept: the inner body as it
/// was, or a kept answer's bytes.
impl<B> From<CacheBody<B>> for courier_core::Body
where
    B: Body<Data = Bytes> + Into<courier_core::Body> + Send + Sync + 'static,
    B::Error: Into<courier_core::BoxError>,
{
    fn from(body: CacheBody<B>) -> Self {
        match body.kind {
            Kind::Inner { body, tee: None } => body.into(),
            Kind::Kept { data } => {
                data.map_or_else(courier_core::Body::empty, courier_core::Body::from)
            }
            kind @ Kind::Inner { .. } => courier_core::Body::new(CacheBody { kind }),
        }
    }
}
