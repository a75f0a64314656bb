//! Writing a [`Form`] as a `multipart/form-data` body (RFC 7578).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value};

use super::text::any_text;
use super::{EncodeError, EncodedBody, Form, Part};

/// One part, ready to write: its header lines and its content.
struct Prepared<'a> {
    head: String,
    content: &'a [u8],
}

/// Encodes `form`, adding `defaults` (the source's `defaultBody`) as text parts for names the
/// form lacks.
///
/// Order: the form's text parts, then the defaults, then the form's files, since some servers
/// stream files and only see the fields that came before them.
pub(super) fn encode_form(
    form: &Form,
    defaults: Option<&Map<String, Value>>,
) -> Result<EncodedBody, EncodeError> {
    let default_texts: Vec<(&str, String)> = defaults
        .into_iter()
        .flatten()
        .filter(|(name, _)| !form.contains(name))
        .filter_map(|(name, value)| Some((name.as_str(), any_text(value)?.into_owned())))
        .collect();

    let mut parts = Vec::with_capacity(form.parts().len() + default_texts.len());
    for (name, part) in form.parts() {
        if let Part::Text(text) = part {
            parts.push(Prepared {
                head: disposition(name, None),
                content: text.as_bytes(),
            });
        }
    }
    for (name, text) in &default_texts {
        parts.push(Prepared {
            head: disposition(name, None),
            content: text.as_bytes(),
        });
    }
    for (name, part) in form.parts() {
        if let Part::File(file) = part {
            let content_type = file
                .content_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            if !is_content_type(content_type) {
                return Err(EncodeError::InvalidContentType {
                    part: name.clone(),
                    content_type: content_type.to_owned(),
                });
            }
            // Browsers name an unnamed Blob "blob"; servers tell files from fields by the
            // presence of a filename, so one is always sent.
            let filename = file.filename.as_deref().unwrap_or("blob");
            let mut head = disposition(name, Some(filename));
            head.push_str("\r\nContent-Type: ");
            head.push_str(content_type.trim());
            parts.push(Prepared {
                head,
                content: &file.bytes,
            });
        }
    }

    let boundary = pick_boundary(&parts, candidate);
    let mut out = BytesMut::new();
    for part in &parts {
        out.put_slice(b"--");
        out.put_slice(boundary.as_bytes());
        out.put_slice(b"\r\n");
        out.put_slice(part.head.as_bytes());
        out.put_slice(b"\r\n\r\n");
        out.put_slice(part.content);
        out.put_slice(b"\r\n");
    }
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"--\r\n");
    Ok(EncodedBody::Multipart {
        boundary,
        bytes: Bytes::from(out),
    })
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

/// The first candidate found in no part's header or content.
fn pick_boundary(parts: &[Prepared<'_>], mut candidates: impl FnMut() -> String) -> String {
    loop {
        let boundary = candidates();
        // An empty boundary would match everywhere.
        let found = |haystack: &[u8]| {
            boundary.is_empty() || memchr::memmem::find(haystack, boundary.as_bytes()).is_some()
        };
        if !parts
            .iter()
            .any(|part| found(part.head.as_bytes()) || found(part.content))
        {
            return boundary;
        }
    }
}

/// A fresh boundary candidate: a process-wide counter hashed with a randomly keyed hasher.
///
/// That makes boundaries hard to guess (so content cannot be crafted to contain them) without a
/// random-number crate; [`pick_boundary`]'s check makes even a collision harmless.
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
