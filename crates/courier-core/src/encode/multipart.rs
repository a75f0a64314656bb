//! Writing a [`Form`] as a `multipart/form-data` body (RFC 7578).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::stream::{self, BoxStream};
use futures_util::StreamExt;
use http_body_util::BodyDataStream;
use serde_json::{Map, Value};

use super::form::{Arriving, Contents};
use super::text::any_text;
use super::{EncodeError, EncodedBody, FilePart, Form, Part};
use crate::body::{Body, BoxError};

/// One part, ready to write: its header lines and its content.
struct Prepared {
    head: String,
    content: Content,
}

/// What a part carries.
enum Content {
    Text(String),
    Bytes(Bytes),
    Streamed(Body),
}

impl Prepared {
    fn text(name: &str, text: String) -> Self {
        Prepared {
            head: disposition(name, None),
            content: Content::Text(text),
        }
    }

    fn file(name: &str, file: FilePart) -> Result<Self, EncodeError> {
        let content_type = file
            .content_type
            .as_deref()
            .unwrap_or("application/octet-stream");
        if !is_content_type(content_type) {
            return Err(EncodeError::InvalidContentType {
                part: name.to_owned(),
                content_type: content_type.to_owned(),
            });
        }
        // Browsers name an unnamed Blob "blob"; servers tell files from fields by the
        // presence of a filename, so one is always sent.
        let filename = file.filename.as_deref().unwrap_or("blob");
        let mut head = disposition(name, Some(filename));
        head.push_str("\r\nContent-Type: ");
        head.push_str(content_type.trim());
        let content = match file.contents {
            Contents::Bytes(bytes) => Content::Bytes(bytes),
            Contents::Streamed(body) => Content::Streamed(body),
        };
        Ok(Prepared { head, content })
    }

    fn part(name: &str, part: Part) -> Result<Self, EncodeError> {
        match part {
            Part::Text(text) => Ok(Prepared::text(name, text)),
            Part::File(file) => Prepared::file(name, file),
        }
    }

    /// The content, when it is in memory.
    fn bytes(&self) -> Option<&[u8]> {
        match &self.content {
            Content::Text(text) => Some(text.as_bytes()),
            Content::Bytes(bytes) => Some(bytes),
            Content::Streamed(_) => None,
        }
    }
}

impl Form {
    /// The form as a `multipart/form-data` body: its text parts, then its files, then the parts
    /// still arriving.
    ///
    /// # Errors
    ///
    /// [`EncodeError::InvalidContentType`](EncodeError::InvalidContentType) for a file
    /// whose content type is not a valid header value (for an arriving file, the body fails
    /// there instead).
    pub fn into_multipart(self) -> Result<EncodedBody, EncodeError> {
        encode_form(self, None)
    }
}

/// Encodes `form`, adding `defaults` (the source's `defaultBody`) as text parts for names the
/// form lacks.
///
/// Order: the form's text parts, then the defaults, then the form's files, since some servers
/// stream files and only see the fields that came before them; then the parts still arriving.
///
/// A form in memory becomes one buffer, under a boundary found in none of its parts. A streamed
/// form becomes a body written as it is read; its boundary is checked against the parts in
/// memory only, and is unguessable for the rest (see [`candidate`]).
pub(super) fn encode_form(
    form: Form,
    defaults: Option<&Map<String, Value>>,
) -> Result<EncodedBody, EncodeError> {
    let default_texts: Vec<(&str, String)> = defaults
        .into_iter()
        .flatten()
        .filter(|(name, _)| !form.contains(name))
        .filter_map(|(name, value)| Some((name.as_str(), any_text(value)?.into_owned())))
        .collect();

    let (mut form_parts, arriving) = form.into_parts();
    // Texts first, each kind in its own order: a stable sort, in place for a form of a few parts.
    form_parts.sort_by_key(|(_, part)| matches!(part, Part::File(_)));
    let texts = form_parts
        .iter()
        .take_while(|(_, part)| matches!(part, Part::Text(_)))
        .count();
    let mut parts = Vec::with_capacity(form_parts.len() + default_texts.len());
    let mut form_parts = form_parts.into_iter();
    for (name, part) in form_parts.by_ref().take(texts) {
        parts.push(Prepared::part(&name, part)?);
    }
    for (name, text) in default_texts {
        parts.push(Prepared::text(name, text));
    }
    for (name, part) in form_parts {
        parts.push(Prepared::part(&name, part)?);
    }

    let boundary = pick_boundary(&parts, candidate);
    if arriving.is_some() || parts.iter().any(|part| part.bytes().is_none()) {
        let body = streamed(boundary.clone(), parts, arriving);
        return Ok(EncodedBody::MultipartStream { boundary, body });
    }
    let mut out = BytesMut::new();
    for part in &parts {
        open(&mut out, &boundary, &part.head);
        out.put_slice(part.bytes().unwrap_or_default());
        out.put_slice(b"\r\n");
    }
    close(&mut out, &boundary);
    Ok(EncodedBody::Multipart {
        boundary,
        bytes: out.freeze(),
    })
}

/// Writes the delimiter and header lines that open a part.
fn open(out: &mut BytesMut, boundary: &str, head: &str) {
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"\r\n");
    out.put_slice(head.as_bytes());
    out.put_slice(b"\r\n\r\n");
}

/// Writes the delimiter that ends the body.
fn close(out: &mut BytesMut, boundary: &str) {
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"--\r\n");
}

type Chunks = BoxStream<'static, Result<Bytes, BoxError>>;

/// The body of a streamed form: the parts in hand, then those still arriving, each written as
/// it is read. A part arriving with a content type that cannot be sent ends the body with
/// [`EncodeError::InvalidContentType`].
fn streamed(boundary: String, parts: Vec<Prepared>, arriving: Option<Arriving>) -> Body {
    let leading = {
        let boundary = boundary.clone();
        stream::iter(parts).flat_map(move |part| written(&boundary, part))
    };
    let arriving = {
        let boundary = boundary.clone();
        arriving
            .unwrap_or_else(|| Box::pin(stream::empty()))
            .flat_map(move |part| {
                let part = part.and_then(|(name, part)| Ok(Prepared::part(&name, part)?));
                match part {
                    Ok(part) => written(&boundary, part),
                    Err(e) => stream::once(std::future::ready(Err(e))).boxed(),
                }
            })
    };
    let mut end = BytesMut::new();
    close(&mut end, &boundary);
    let end = stream::once(std::future::ready(Ok(end.freeze())));
    Body::from_stream(leading.chain(arriving).chain(end))
}

/// One part of a streamed form, written: its opening, its content, its line end.
fn written(boundary: &str, part: Prepared) -> Chunks {
    let content: Chunks = match part.content {
        Content::Text(text) => stream::once(std::future::ready(Ok(text.into()))).boxed(),
        Content::Bytes(bytes) => stream::once(std::future::ready(Ok(bytes))).boxed(),
        Content::Streamed(body) => BodyDataStream::new(body).boxed(),
    };
    let mut opening = BytesMut::new();
    open(&mut opening, boundary, &part.head);
    stream::once(std::future::ready(Ok(opening.freeze())))
        .chain(content)
        .chain(stream::once(std::future::ready(Ok(Bytes::from_static(
            b"\r\n",
        )))))
        .boxed()
}

/// The `Content-Disposition` line of a part.
fn disposition(name: &str, filename: Option<&str>) -> String {
    let mut line = format!("Content-Disposition: form-data; name=\"{}\"", escape(name));
    if let Some(filename) = filename {
        line.push_str(&format!("; filename=\"{}\"", escape(filename)));
    }
    line
}

/// Escapes a quoted name as the HTML standard does, so no name can end the quoted string or
/// start a header line.
fn escape(name: &str) -> String {
    name.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Whether `value` is `type/subtype` with optional `; parameters` and nothing that could break
/// the header line.
fn is_content_type(value: &str) -> bool {
    let (essence, params) = value.split_once(';').unwrap_or((value, ""));
    let Some((kind, subtype)) = essence.trim().split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    token(kind)
        && token(subtype)
        && params
            .bytes()
            .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
}

/// The first candidate found in no part's header or content in memory.
fn pick_boundary(parts: &[Prepared], mut candidates: impl FnMut() -> String) -> String {
    loop {
        let boundary = candidates();
        // An empty boundary would match everywhere.
        let found = |haystack: &[u8]| {
            boundary.is_empty() || memchr::memmem::find(haystack, boundary.as_bytes()).is_some()
        };
        if !parts
            .iter()
            .any(|part| found(part.head.as_bytes()) || part.bytes().is_some_and(&found))
        {
            return boundary;
        }
    }
}

/// A fresh boundary candidate: a process-wide counter hashed with a randomly keyed hasher.
///
/// That makes boundaries hard to guess (so content cannot be crafted to contain them) without a
/// random-number crate: the hasher's keys come from the operating system's randomness, and a
/// boundary is never shown to whoever supplies the content. [`pick_boundary`]'s check makes even
/// a collision harmless for content in memory; streamed content, which cannot be checked before
/// it is sent, relies on the guess being out of reach (128 bits), as browsers' boundaries do.
fn candidate() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let hasher = RandomState::new();
    let high = hasher.hash_one(n);
    let low = hasher.hash_one((n, high));
    format!("courier-{high:016x}{low:016x}")
}

#[cfg(test)]
mod tests;
