//! A browser's upload, handed on as it arrives.
//!
//! The proxy reads a `multipart/form-data` call's text fields up to its first file, since the
//! address may need them (path parameters) and they are small; from the first file on, the
//! form's parts are [arriving](Form::arriving): each is read from the browser as the upstream
//! reads the call's body, so an upload never sits whole in the proxy's memory.
//!
//! The bounds of a whole body still hold, counted as the bytes arrive: [`Proxy::multipart_limit`]
//! on the form, [`Proxy::body_read_timeout`] on its arrival, and [`Proxy::body_limit`] on the
//! text fields together (they are held in memory). A failure past the first file has the
//! upstream call under way: its body ends with an error there, the upstream sees a request
//! that broke off, and the browser gets the proxy's refusal (413, 408 or 400), which the call's
//! [`Failure`] keeps for it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::body::Body as AxumBody;
use bytes::Bytes;
use courier_core::encode::{FilePart, Form, Part};
use courier_core::{Body, BoxError};
use futures_util::{Stream, StreamExt, TryStreamExt};
use http::header::CONTENT_TYPE;
use http_body_util::{BodyDataStream, LengthLimitError, Limited};
use tokio::time::{Instant, Sleep};

use crate::refusal::Refusal;
use crate::Proxy;

/// Why an upload failed once its call was under way, kept for the answer to the browser: the
/// upstream call then fails too, with a cause that says less.
#[derive(Clone, Default)]
pub(crate) struct Failure(Arc<Mutex<Option<Refusal>>>);

impl Failure {
    /// Keeps `refusal`, unless one was kept already (the first cause is the one to tell).
    fn keep(&self, refusal: Refusal) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get_or_insert(refusal);
    }

    /// The refusal kept, if any.
    pub(crate) fn take(&self) -> Option<Refusal> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// `error` as the browser's refusal: the one kept (what the browser's body did), else a
    /// form that does not parse.
    fn refusal(&self, error: &multer::Error) -> Refusal {
        self.take()
            .unwrap_or_else(|| Refusal::BadRequest(format!("the form does not parse: {error}")))
    }
}

/// The form a multipart call carries: its text fields up to the first file read, the rest
/// arriving; and the cell its later failure is kept in.
pub(crate) async fn form(
    proxy: &Proxy,
    parts: &http::request::Parts,
    body: AxumBody,
) -> Result<(Form, Failure), Refusal> {
    let boundary = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| Refusal::BadRequest("the form has no content type".to_owned()))
        .and_then(|kind| {
            multer::parse_boundary(kind)
                .map_err(|e| Refusal::BadRequest(format!("the form does not parse: {e}")))
        })?;
    let limit = proxy.multipart_limit;
    // hyper read a declared `content-length` into the body's size hint: refused from the head.
    if http_body::Body::size_hint(&body).lower() > limit as u64 {
        return Err(too_large(limit));
    }
    let failure = Failure::default();
    let arrival = Arrival {
        body: BodyDataStream::new(Limited::new(body, limit)),
        burst: 0,
        deadline: Box::pin(tokio::time::sleep_until(
            Instant::now() + proxy.body_read_timeout,
        )),
        timeout_ms: proxy.body_read_timeout.as_millis(),
        limit,
        failure: failure.clone(),
    };
    let mut reading = Reading {
        multipart: multer::Multipart::new(arrival, boundary),
        texts: TextBudget {
            left: proxy.body_limit,
            limit: proxy.body_limit,
        },
        failure: failure.clone(),
    };

    let mut form = Form::new();
    loop {
        let field = reading
            .multipart
            .next_field()
            .await
            .map_err(|e| failure.refusal(&e))?;
        let Some(field) = field else {
            return Ok((form, failure));
        };
        if is_file(&field) {
            let first = Some(field);
            let arriving = futures_util::stream::try_unfold(
                (reading, first),
                |(mut reading, first)| async move {
                    let field = match first {
                        Some(field) => Some(field),
                        None => reading.next().await?,
                    };
                    let Some(field) = field else {
                        return Ok(None);
                    };
                    let part = reading.part(field).await?;
                    Ok::<_, BoxError>(Some((part, (reading, None))))
                },
            );
            return Ok((form.arriving(arriving), failure));
        }
        let name = field.name().unwrap_or_default().to_owned();
        let text = reading.texts.read(field, &failure).await?;
        form = form.text(name, text);
    }
}

/// The form's parser, with what reading its parts needs.
struct Reading {
    multipart: multer::Multipart<'static>,
    texts: TextBudget,
    failure: Failure,
}

impl Reading {
    /// The next part's head; a failure is kept for the browser.
    async fn next(&mut self) -> Result<Option<multer::Field<'static>>, BoxError> {
        self.multipart.next_field().await.map_err(|e| {
            let refusal = self.failure.refusal(&e);
            let message = refusal.message().into_owned();
            self.failure.keep(refusal);
            message.into()
        })
    }

    /// `field` as a part of the form: a file streamed as the upstream reads it, or a text.
    async fn part(&mut self, field: multer::Field<'static>) -> Result<(String, Part), BoxError> {
        let name = field.name().unwrap_or_default().to_owned();
        if !is_file(&field) {
            let text = self
                .texts
                .read(field, &self.failure)
                .await
                .map_err(|refusal| {
                    let message = refusal.message().into_owned();
                    self.failure.keep(refusal);
                    BoxError::from(message)
                })?;
            return Ok((name, Part::Text(text)));
        }
        let filename = field.file_name().map(str::to_owned);
        let kind = field
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let failure = self.failure.clone();
        let contents = field.map_err(move |e| {
            let refusal = failure.refusal(&e);
            let message = refusal.message().into_owned();
            failure.keep(refusal);
            BoxError::from(message)
        });
        let mut file = FilePart::streamed(Body::from_stream(contents));
        if let Some(filename) = filename {
            file = file.filename(filename);
        }
        if let Some(kind) = kind {
            file = file.content_type(kind);
        }
        Ok((name, Part::File(file)))
    }
}

/// A part with a file name or a content type is a file; one with neither, a text field.
fn is_file(field: &multer::Field<'_>) -> bool {
    field.file_name().is_some() || field.headers().contains_key(CONTENT_TYPE)
}

/// How many bytes of text fields the form may still hold in memory, of how many.
struct TextBudget {
    left: usize,
    limit: usize,
}

impl TextBudget {
    /// A text field, read whole within the budget.
    async fn read(
        &mut self,
        mut field: multer::Field<'static>,
        failure: &Failure,
    ) -> Result<String, Refusal> {
        let name = field.name().unwrap_or_default().to_owned();
        let mut text = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(|e| failure.refusal(&e))? {
            if chunk.len() > self.left - text.len() {
                return Err(Refusal::PayloadTooLarge(format!(
                    "the form's text fields are over the limit of {} bytes (the body limit); \
                     send large values as files",
                    self.limit
                )));
            }
            text.extend_from_slice(&chunk);
        }
        self.left -= text.len();
        String::from_utf8(text).map_err(|_| {
            Refusal::BadRequest(format!("the form's text field `{name}` is not UTF-8"))
        })
    }
}

fn too_large(limit: usize) -> Refusal {
    Refusal::PayloadTooLarge(format!(
        "the request body is over the limit of {limit} bytes"
    ))
}

/// How many bytes the parser may take from the browser at one go. multer reads all that is
/// ready before it hands a file's bytes on: with a browser faster than the upstream, that is as
/// much as keeps arriving. Past this many, [`Arrival`] makes it wait a turn (and wakes it at
/// once), so it hands on what it holds first. Over 1 GiB uploads this took the proxy's peak
/// resident memory from 74 MiB to 10 MiB, and its rate from 1.4 to 2.1 GiB/s (BENCHMARKS.md,
/// "Uploads through the proxy").
const BURST: usize = 256 * 1024;

/// The browser's body as it arrives, within the upload's bounds: past the limit or the
/// deadline, or broken off, it ends with an error, and the refusal is kept for the browser.
struct Arrival {
    body: BodyDataStream<Limited<AxumBody>>,
    /// Bytes taken since the parser last waited (see [`BURST`]).
    burst: usize,
    deadline: Pin<Box<Sleep>>,
    timeout_ms: u128,
    limit: usize,
    failure: Failure,
}

impl Stream for Arrival {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.deadline.as_mut().poll(cx).is_ready() {
            let refusal = Refusal::RequestTimeout(format!(
                "the request body did not arrive within {} ms",
                this.timeout_ms
            ));
            return Poll::Ready(Some(Err(this.fail(refusal))));
        }
        if this.burst >= BURST {
            this.burst = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let Poll::Ready(chunk) = this.body.poll_next_unpin(cx) else {
            this.burst = 0;
            return Poll::Pending;
        };
        if let Some(Ok(bytes)) = &chunk {
            this.burst += bytes.len();
        }
        Poll::Ready(chunk.map(|chunk| {
            chunk.map_err(|e| {
                let refusal = if e.downcast_ref::<LengthLimitError>().is_some() {
                    too_large(this.limit)
                } else {
                    Refusal::BadRequest(format!("the request body could not be read: {e}"))
                };
                this.fail(refusal)
            })
        }))
    }
}

impl Arrival {
    /// Keeps `refusal` for the browser; its message ends the body.
    fn fail(&self, refusal: Refusal) -> BoxError {
        let message = refusal.message().into_owned();
        self.failure.keep(refusal);
        message.into()
    }
}
