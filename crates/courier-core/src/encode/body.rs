//! Request bodies: the encoded result, and the pluggable serializer for object bodies.

use bytes::Bytes;
use http::HeaderValue;

use crate::body::Body;
use serde_json::{Map, Value};

use super::search::write_urlencoded;
use super::EncodeError;

/// Encodes an object body: the source's `bodySerializer`.
///
/// It receives the variables left after path substitution, merged over the source's
/// `defaultBody`. Without one, bodies are JSON. Failures are reported with
/// [`EncodeError::body`].
pub trait BodySerializer: Send + Sync + std::fmt::Debug {
    /// Encodes `body` and names its content type.
    fn serialize(&self, body: &Map<String, Value>) -> Result<SerializedBody, EncodeError>;
}

/// A [`BodySerializer`]'s output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SerializedBody {
    /// The `Content-Type` to send; `None` sends none.
    pub content_type: Option<HeaderValue>,
    /// The body.
    pub bytes: Bytes,
}

/// `application/x-www-form-urlencoded` bodies: a ready-made [`BodySerializer`] for a source to
/// set in place of JSON.
///
/// Nested values follow the [default search-parameter rules](super#how-variables-become-search-parameters):
/// arrays repeat the key, objects use brackets, nulls are left out.
#[derive(Clone, Copy, Debug, Default)]
pub struct UrlEncodedBody;

impl BodySerializer for UrlEncodedBody {
    fn serialize(&self, body: &Map<String, Value>) -> Result<SerializedBody, EncodeError> {
        let mut text = String::new();
        write_urlencoded(body, &mut text);
        Ok(SerializedBody {
            content_type: Some(HeaderValue::from_static(
                "application/x-www-form-urlencoded",
            )),
            bytes: Bytes::from(text),
        })
    }
}

/// The body of an encoded call.
#[derive(Debug)]
pub enum EncodedBody {
    /// No body at all: no bytes and no `Content-Type`.
    Empty,
    /// A JSON object (`application/json`).
    Json(Bytes),
    /// A `multipart/form-data` body from a [`Form`](super::Form).
    Multipart {
        /// The boundary, which occurs in none of the parts.
        boundary: String,
        /// The whole body, closing delimiter included.
        bytes: Bytes,
    },
    /// A `multipart/form-data` body from a [`Form`](super::Form) that is read as it is sent: a
    /// file of it is [streamed](super::FilePart::streamed), or parts are still
    /// [arriving](super::Form::arriving). It can be sent once.
    MultipartStream {
        /// The boundary: found in none of the parts in memory, and unguessable for the others.
        boundary: String,
        /// The body, written as its parts are read.
        body: Body,
    },
    /// The output of a custom [`BodySerializer`].
    Custom(SerializedBody),
}

impl EncodedBody {
    /// The `Content-Type` header to send with the body, if any.
    pub fn content_type(&self) -> Option<HeaderValue> {
        match self {
            EncodedBody::Empty => None,
            EncodedBody::Json(_) => Some(HeaderValue::from_static("application/json")),
            // Our boundaries are plain ASCII, so this only fails if that ever changes.
            EncodedBody::Multipart { boundary, .. }
            | EncodedBody::MultipartStream { boundary, .. } => {
                HeaderValue::try_from(format!("multipart/form-data; boundary={boundary}")).ok()
            }
            EncodedBody::Custom(body) => body.content_type.clone(),
        }
    }

    /// Whether there is no body at all ([`EncodedBody::Empty`]).
    pub fn is_empty(&self) -> bool {
        matches!(self, EncodedBody::Empty)
    }

    /// The body's bytes when they are in memory (empty for [`EncodedBody::Empty`]); `None` for a
    /// [streamed form](EncodedBody::MultipartStream).
    pub fn as_bytes(&self) -> Option<&Bytes> {
        static EMPTY: Bytes = Bytes::new();
        match self {
            EncodedBody::Empty => Some(&EMPTY),
            EncodedBody::Json(bytes) | EncodedBody::Multipart { bytes, .. } => Some(bytes),
            EncodedBody::Custom(body) => Some(&body.bytes),
            EncodedBody::MultipartStream { .. } => None,
        }
    }

    /// The body, to send.
    pub fn into_body(self) -> Body {
        match self {
            EncodedBody::Empty => Body::empty(),
            EncodedBody::Json(bytes) | EncodedBody::Multipart { bytes, .. } => bytes.into(),
            EncodedBody::Custom(body) => body.bytes.into(),
            EncodedBody::MultipartStream { body, .. } => body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_encoded_body_follows_search_param_rules() {
        // Keys in sorted order, so the expectation holds with or without serde_json's
        // `preserve_order`.
        let Value::Object(body) =
            json!({"a b": "x&y", "f": {"g": true}, "n": 1, "tags": ["p", "q"], "z": null})
        else {
            unreachable!()
        };
        let out = UrlEncodedBody.serialize(&body).unwrap();
        assert_eq!(
            out.content_type.unwrap(),
            "application/x-www-form-urlencoded"
        );
        assert_eq!(out.bytes, "a%20b=x%26y&f%5Bg%5D=true&n=1&tags=p&tags=q");
    }

    #[test]
    fn content_types_and_emptiness() {
        assert_eq!(EncodedBody::Empty.content_type(), None);
        assert!(EncodedBody::Empty.is_empty());
        assert_eq!(EncodedBody::Empty.as_bytes(), Some(&Bytes::new()));
        let json = EncodedBody::Json(Bytes::from_static(b"{}"));
        assert_eq!(json.content_type().unwrap(), "application/json");
        assert!(!json.is_empty());
        let multipart = EncodedBody::Multipart {
            boundary: "b0".into(),
            bytes: Bytes::from_static(b"--b0--\r\n"),
        };
        assert_eq!(
            multipart.content_type().unwrap(),
            "multipart/form-data; boundary=b0"
        );
        let custom = EncodedBody::Custom(SerializedBody {
            content_type: None,
            bytes: Bytes::from_static(b"x"),
        });
        assert_eq!(custom.content_type(), None);
        assert!(!custom.is_empty());
        assert_eq!(custom.as_bytes().unwrap(), "x");
    }
}
