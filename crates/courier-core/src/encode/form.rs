//! A multipart form given as a call's variables.
//!
//! A form is what a file upload is declared with: its text parts and file parts become a
//! `multipart/form-data` body (see [`encode`](super::encode)). Parts keep the order they were
//! added in, and a name may repeat, as in a browser's `FormData`.

use std::fmt;

use bytes::Bytes;

/// An ordered list of named parts, sent as a `multipart/form-data` body.
///
/// Built with [`Form::text`] and [`Form::file`], e.g.
/// `Form::new().text("title", "Holiday").file("photo", FilePart::new(png).filename("beach.png"))`.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct Form {
    parts: Vec<(String, Part)>,
}

/// One part of a [`Form`].
#[derive(Clone, Debug)]
pub enum Part {
    /// A text field.
    Text(String),
    /// A file.
    File(FilePart),
}

/// A file in a [`Form`]: its bytes, and optionally a file name and a content type.
///
/// The content type is checked when the form is encoded, so a builder chain stays a plain chain;
/// a malformed one makes [`encode`](super::encode) fail with
/// [`EncodeError::InvalidContentType`](super::EncodeError::InvalidContentType) rather than put
/// an unchecked header line on the wire.
#[derive(Clone)]
#[must_use]
pub struct FilePart {
    pub(super) filename: Option<String>,
    pub(super) content_type: Option<String>,
    pub(super) bytes: Bytes,
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

    /// The parts, in the order they were added.
    pub fn parts(&self) -> &[(String, Part)] {
        &self.parts
    }

    /// Whether any part is a file.
    pub fn has_file(&self) -> bool {
        self.parts
            .iter()
            .any(|(_, part)| matches!(part, Part::File(_)))
    }

    /// The form as a `multipart/form-data` body: its text parts, then its files.
    ///
    /// # Errors
    ///
    /// [`EncodeError::InvalidContentType`](super::EncodeError::InvalidContentType) for a file
    /// whose content type is not a valid header value.
    pub fn to_multipart(&self) -> Result<super::EncodedBody, super::EncodeError> {
        super::multipart::encode_form(self, None)
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

    /// Keeps only the parts for which `keep` is true.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&str, &Part) -> bool) {
        self.parts.retain(|(name, part)| keep(name, part));
    }
}

impl FilePart {
    /// A file with the given contents, no file name and no content type
    /// (`application/octet-stream` is sent).
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        FilePart {
            filename: None,
            content_type: None,
            bytes: bytes.into(),
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

    /// The file's contents.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
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
        f.debug_struct("FilePart")
            .field("filename", &self.filename)
            .field("content_type", &self.content_type)
            .field("len", &self.bytes.len())
            .finish()
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
