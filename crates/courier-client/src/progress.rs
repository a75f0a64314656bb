//! Upload progress: a body wrapper that reports how much of the body the connection has read.

use bytes::Bytes;
use courier_core::{Body, BoxError, CallOptions, Progress, UploadProgress};
use http_body::{Body as _, Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Frames are handed to the connection in slices of this size, so a buffered body reports
/// progress more than once.
const SLICE: usize = 64 * 1024;

pin_project_lite::pin_project! {
    /// Wraps a request body; reports [`Progress`] each time the connection takes a slice, and
    /// `1.0` when the body ends.
    pub(crate) struct ProgressBody {
        #[pin]
        inner: Body,
        pending: Option<Bytes>,
        loaded: u64,
        total: Option<u64>,
        report: UploadProgress,
        done: Arc<AtomicBool>,
    }
}

/// Wraps `request`'s body to report its upload when the call's options ask for it.
pub(crate) fn watch_upload(request: &mut http::Request<Body>, options: Option<&CallOptions>) {
    if let Some(progress) = options.and_then(CallOptions::upload_progress) {
        let body = std::mem::take(request.body_mut());
        let done = Arc::new(AtomicBool::new(false));
        *request.body_mut() = Body::new(ProgressBody::new(body, progress.clone(), done));
    }
}

impl ProgressBody {
    /// Wraps `inner`; `done` turns true once `1.0` was reported.
    pub(crate) fn new(inner: Body, report: UploadProgress, done: Arc<AtomicBool>) -> Self {
        let total = inner.size_hint().exact();
        report.report(Progress {
            loaded: 0,
            total,
            percent: 0.0,
        });
        Self {
            inner,
            pending: None,
            loaded: 0,
            total,
            report,
            done,
        }
    }
}

fn finish(loaded: u64, total: Option<u64>, report: &UploadProgress, done: &AtomicBool) {
    if !done.swap(true, Ordering::AcqRel) {
        report.report(Progress {
            loaded,
            total,
            percent: 1.0,
        });
    }
}

impl http_body::Body for ProgressBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        let chunk = match this.pending.take() {
            Some(chunk) => chunk,
            None => match this.inner.poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    finish(*this.loaded, *this.total, this.report, this.done);
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
            },
        };
        let mut chunk = chunk;
        if chunk.len() > SLICE {
            *this.pending = Some(chunk.split_off(SLICE));
        }
        *this.loaded += chunk.len() as u64;
        let percent = match *this.total {
            Some(0) | None => 0.0,
            Some(total) => (*this.loaded as f64 / total as f64).min(1.0),
        };
        if percent >= 1.0 {
            finish(*this.loaded, *this.total, this.report, this.done);
        } else {
            this.report.report(Progress {
                loaded: *this.loaded,
                total: *this.total,
                percent,
            });
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.total {
            Some(total) => SizeHint::with_exact(total.saturating_sub(self.loaded)),
            None => self.inner.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::Mutex;

    #[tokio::test]
    async fn reports_each_slice_and_ends_at_one() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let report = UploadProgress::new(move |p| sink.lock().unwrap().push(p.percent));
        let done = Arc::new(AtomicBool::new(false));
        let body = ProgressBody::new(Body::from(vec![0u8; 200 * 1024]), report, done.clone());
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(bytes.len(), 200 * 1024);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.first(), Some(&0.0));
        assert_eq!(seen.last(), Some(&1.0));
        assert_eq!(seen.iter().filter(|p| **p == 1.0).count(), 1, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert_eq!(
            seen.len(),
            5,
            "0, three 64 KiB slices, then the last: {seen:?}"
        );
        assert!(done.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn an_empty_body_reports_zero_then_one() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let report = UploadProgress::new(move |p| sink.lock().unwrap().push(p.percent));
        let body = ProgressBody::new(Body::empty(), report, Arc::new(AtomicBool::new(false)));
        body.collect().await.unwrap();
        assert_eq!(*seen.lock().unwrap(), [0.0, 1.0]);
    }
}
