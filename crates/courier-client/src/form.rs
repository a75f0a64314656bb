//! The `form` response type: a response body read into a map of its fields, whichever of the
//! two form encodings it comes in.
//!
//! - `multipart/form-data`: each part by its name; a part without a filename is its text, a
//!   part with one (a file) is `{"filename", "content_type", "bytes"}`, `bytes` an array of the
//!   file's bytes (what `Vec<u8>` deserialises from).
//! - anything else is read as URL-encoded, by the source's search-parameter rules: its
//!   [`SearchParamsSerializer::parse`](courier_core::encode::SearchParamsSerializer::parse),
//!   the custom one when the source sets one (the one place courier reads search parameters
//!   back).
//!
//! A name given more than once becomes an array of its values, in order, in both encodings.

use courier_core::ApiDef;
use http::header::CONTENT_TYPE;
use http::HeaderMap;
use serde_json::{json, Map, Value};
use std::fmt;

/// A form response that does not read as its content type says.
#[derive(Debug)]
pub(crate) struct NotAForm(String);

impl fmt::Display for NotAForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the form response cannot be read: {}", self.0)
    }
}

impl std::error::Error for NotAForm {}

/// `body`'s fields, read as `headers`' content type says.
pub(crate) async fn read(
    api: &ApiDef,
    headers: &HeaderMap,
    body: bytes::Bytes,
) -> Result<Map<String, Value>, NotAForm> {
    let kind = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if let Some(boundary) = kind.and_then(|kind| multer::parse_boundary(kind).ok()) {
        return multipart(body, boundary).await;
    }
    let text = std::str::from_utf8(&body).map_err(|e| NotAForm(e.to_string()))?;
    api.options()
        .search_params_serializer
        .parse(text)
        .map_err(|e| NotAForm(e.to_string()))
}

async fn multipart(body: bytes::Bytes, boundary: String) -> Result<Map<String, Value>, NotAForm> {
    let whole = futures_util::stream::once(async { Ok::<_, std::convert::Infallible>(body) });
    let mut parts = multer::Multipart::new(whole, boundary);
    let mut fields = Map::new();
    while let Some(part) = parts
        .next_field()
        .await
        .map_err(|e| NotAForm(e.to_string()))?
    {
        let name = part.name().unwrap_or_default().to_owned();
        let filename = part.file_name().map(str::to_owned);
        let content_type = part.content_type().map(ToString::to_string);
        let bytes = part.bytes().await.map_err(|e| NotAForm(e.to_string()))?;
        let value = match filename {
            Some(filename) => json!({
                "filename": filename,
                "content_type": content_type,
                "bytes": bytes.as_ref(),
            }),
            None => Value::String(
                String::from_utf8(bytes.to_vec())
                    .map_err(|_| NotAForm(format!("the field `{name}` is not UTF-8 text")))?,
            ),
        };
        match fields.get_mut(&name) {
            None => {
                fields.insert(name, value);
            }
            Some(Value::Array(values)) => values.push(value),
            Some(first) => {
                let first = first.take();
                fields.insert(name, Value::Array(vec![first, value]));
            }
        }
    }
    Ok(fields)
}
