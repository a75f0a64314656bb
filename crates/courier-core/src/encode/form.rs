//! A multipart form given as a call's variables.
//!
//! A form is what a file upload is declared with: its text parts and file parts become a
//! `multipart/form-data` body (see [`encode`](super::encode)). Parts keep the order they were
//! added in, and a name may repeat, as in a browser's `FormData`.
//!
//! A form need not be in memory: a file's contents may be a streamed [`Body`]
//! ([`FilePart::streamed`]), and parts may still be arriving when the call is made
//! ([`Form::arriving`]), as they do when the proxy hands on a browser's upload. Such a form is
//! sent as it is read, once: it is never buffered, and a retry does not send it again.

use std::fmt;
use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::{StreamExt, TryStreamExt};

use crate::body::{Body, BoxError};

/// An ordered list of named parts, sent as a `multipart/form-data` body.
///
/// Built with [`Form::text`] and [`Form::file`], e.g.
/// `Form::new().text("title", "Holiday").file("photo", FilePart::new(png).filename("beach.png"))`.
#[derive(Default)]
#[must_use]
pub struct Form {
    parts: Vec<(String, Part)>,
    arriving: Option<Arriving>,
}

/// Parts still arriving, read as the body is sent.
pub(super) type Arriving = Pin<Box<dyn Stream<Item = Result<(String, Part), BoxError>> + Send>>;

/// One part of a [`Form`].
#[derive(Debug)]
pub enum Part {
    /// A text field.
    Text(String),
    /// A file.
    File(FilePart),
}

/// A file in a [`Form`]: its contents, and optionally a file name and a content type.
///
/// The content type is checked when the form is encoded, so a builder chain stays a plain chain;
/// a malformed one makes [`encode`](super::encode) fail with
/// [`EncodeError::InvalidContentType`](super::EncodeError::InvalidContentType) rather than put
/// an unchecked header line on the wire.
#[must_use]
pub struct FilePart {
    pub(super) filename: Option<String>,
    pub(super) content_type: Option<String>,
    pub(super) contents: Contents,
}

/// What a [`FilePart`] holds.
pub(super) enum Contents {
    /// The whole file, in memory.
    Bytes(Bytes),
    /// A body read as the form is sent.
    Streamed(Body),
}

impl Form {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text part.
    pub fn text(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.parts.push((name.into(), Part::Text(value.into())));
        self
    }

    /// Adds a file part.
    pub fn file(mut self, name: impl Into<String>, file: FilePart) -> Self {
        self.parts.push((name.into(), Part::File(file)));
        self
    }

    /// Adds parts that are still arriving: they are read from `parts` as the body is sent, after
    /// every part added before, in the order they come. An error from `parts` ends the body
    /// there, and the call fails with it.
    ///
    /// Path parameters and the source's `defaultBody` see the parts added before, not these
    /// (which have not arrived when the address is written): an arriving part named like a path
    /// option is left out, as any part so named is, and so is an arriving text part named like a
    /// path parameter that an earlier text part filled; one named like a `defaultBody` field that
    /// the earlier parts lacked is sent after that default. Called again, the new parts arrive
    /// after the earlier ones.
    ///
    /// ```
    /// use courier::encode::{FilePart, Form, Part};
    /// use futures_util::stream;
    ///
    /// let rest = stream::iter([Ok::<_, std::io::Error>((
    ///     "photo".to_owned(),
    ///     Part::File(FilePart::new("PNG").filename("beach.png")),
    /// ))]);
    /// let form = Form::new().text("title", "Holiday").arriving(rest);
    /// assert!(form.is_streamed());
    /// ```
    pub fn arriving<S, E>(mut self, parts: S) -> Self
    where
        S: Stream<Item = Result<(String, Part), E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let parts = parts.map_err(Into::into);
        self.arriving = Some(match self.arriving.take() {
            Some(earlier) => Box::pin(earlier.chain(parts)),
            None => Box::pin(parts),
        });
        self
    }

    /// The parts added so far, in the order they were added; not those still
    /// [arriving](Form::arriving).
    pub fn parts(&self) -> &[(String, Part)] {
        &self.parts
    }

    /// Whether any part is a file, or parts are still [arriving](Form::arriving) (which may be).
    pub fn has_file(&self) -> bool {
        self.arriving.is_some()
            || self
                .parts
                .iter()
                .any(|(_, part)| matches!(part, Part::File(_)))
    }

    /// Whether the form is read as it is sent: a file of it is [streamed](FilePart::streamed),
    /// or parts are still [arriving](Form::arriving). Such a form is sent once.
    pub fn is_streamed(&self) -> bool {
        self.arriving.is_some()
            || self.parts.iter().any(|(_, part)| {
                matches!(
                    part,
                    Part::File(FilePart {
                        contents: Contents::Streamed(_),
                        ..
                    })
                )
            })
    }

    /// The value of the first text part called `name`, the one a path parameter takes.
    pub(super) fn first_text(&self, name: &str) -> Option<&str> {
        self.parts.iter().find_map(|(n, part)| match part {
            Part::Text(text) if n == name => Some(text.as_str()),
            _ => None,
        })
    }

    /// Whether any part, text or file, is called `name`.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.parts.iter().any(|(n, _)| n == name)
    }

    /// Leaves out the parts called by one of `names` (with `texts_only`, its text parts only),
    /// those still arriving included.
    pub(super) fn leave_out<'a>(
        &mut self,
        names: impl Iterator<Item = &'a str> + Clone,
        texts_only: bool,
    ) {
        if names.clone().next().is_none() {
            return;
        }
        let kind = move |part: &Part| !texts_only || matches!(part, Part::Text(_));
        self.parts
            .retain(|(name, part)| !(kind(part) && names.clone().any(|n| n == name)));
        if let Some(arriving) = self.arriving.take() {
            let names: Vec<String> = names.map(str::to_owned).collect();
            self.arriving = Some(Box::pin(arriving.try_filter(move |(name, part)| {
                std::future::ready(!(kind(part) && names.iter().any(|n| n == name)))
            })));
        }
    }

    /// The parts added so far, and those still arriving.
    pub(super) fn into_parts(self) -> (Vec<(String, Part)>, Option<Arriving>) {
        (self.parts, self.arriving)
    }
}

impl fmt::Debug for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Form")
            .field("parts", &self.parts)
            .field("arriving", &self.arriving.is_some())
            .finish()
    }
}

impl FilePart {
    /// A file with the given contents, no file name and no content type
    /// (`application/octet-stream` is sent).
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        FilePart {
            filename: None,
            content_type: None,
            contents: Contents::Bytes(bytes.into()),
        }
    }

    /// A file whose contents are read from `body` as the form is sent, never held whole: a
    /// large file from disk, or an upload handed on as it arrives. The form is then sent once
    /// (a retry does not send it again) and without a `Content-Length`.
    ///
    /// ```
    /// use courier::encode::FilePart;
    /// use courier::transport::Body;
    /// use futures_util::stream;
    ///
    /// let chunks = stream::iter(["first ", "second"].map(Ok::<_, std::io::Error>));
    /// let file = FilePart::streamed(Body::from_stream(chunks)).filename("log.txt");
    /// assert!(file.bytes().is_none());
    /// ```
    pub fn streamed(body: Body) -> Self {
        FilePart {
            filename: None,
            content_type: None,
            contents: Contents::Streamed(body),
        }
    }

    /// Sets the file name sent in the part's `Content-Disposition`.
    pub fn filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Sets the part's `Content-Type`, e.g. `image/png` or `text/plain; charset=utf-8`.
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = Some(content_type.into());
        self
    }

    /// The file's contents when they are in memory; `None` for a [streamed](FilePart::streamed)
    /// file.
    pub fn bytes(&self) -> Option<&Bytes> {
        match &self.contents {
            Contents::Bytes(bytes) => Some(bytes),
            Contents::Streamed(_) => None,
        }
    }

    /// The file name, if set.
    pub fn get_filename(&self) -> Option<&str> {
        self.filename.as_deref()
    }

    /// The content type, if set.
    pub fn get_content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }
}

// Files can be large: show their size, not their bytes.
impl fmt::Debug for FilePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("FilePart");
        debug
            .field("filename", &self.filename)
            .field("content_type", &self.content_type);
        match &self.contents {
            Contents::Bytes(bytes) => debug.field("len", &bytes.len()),
            Contents::Streamed(_) => debug.field("streamed", &true),
        };
        debug.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_repeated_names() {
        let form = Form::new()
            .text("a", "1")
            .file("f", FilePart::new("x"))
            .text("a", "2");
        let names: Vec<&str> = form.parts().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "f", "a"]);
        assert_eq!(form.first_text("a"), Some("1"));
        assert_eq!(form.first_text("f"), None);
        assert!(form.contains("f"));
        assert!(form.has_file());
        assert!(!Form::new().text("a", "1").has_file());
    }

    #[test]
    fn debug_shows_file_size_not_bytes() {
        let part = FilePart::new(vec![0u8; 4096]).filename("a.bin");
        let debug = format!("{part:?}");
        assert!(debug.contains("len: 4096"), "{debug}");
        assert!(debug.len() < 200, "{debug}");
    }
}
