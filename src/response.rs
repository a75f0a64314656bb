//! Reading responses into your types.
//!
//! A call resolves to its type — the field's `R` in a typed view, JSON by dotted path — through
//! [`FromResponse`], implemented for every `serde` type and for [`BodyStream`] (the body unread,
//! for `stream: true` endpoints). The body reaches it as a [`ResponseBody`], read as the
//! endpoint's response type says; a body that does not fit is a [`DecodeError`]. A view's
//! `.raw()`, and [`Client::call`](crate::Client::call), give the whole [`HttpResponse`]: status,
//! headers and the parsed body.
//!
//! | response type | body | a `Deserialize` type is read from |
//! |---|---|---|
//! | `json` (default) | JSON text | the JSON; an empty body is `null` |
//! | `text` | UTF-8 text | a string |
//! | `bytes` | raw bytes | bytes (`Vec<u8>`, `bytes::Bytes`, `serde_bytes::ByteBuf`), a UTF-8 string, or (`serde_json::Value`) an array of byte values |
//! | `form` | `application/x-www-form-urlencoded` | a map of strings, by the search-parameter rules |
//! | a [`ResponseParser`](crate::tree::ResponseParser) | whatever it returns | its JSON value |
//! | status 204, or a HEAD | none | `null`: `()` and `Option<T>` take it, other types fail to decode |
//!
//! ```
//! use courier::response::{DecodeError, FromResponse, ResponseBody};
//!
//! /// A version string the upstream answers as plain text.
//! struct Version(String);
//!
//! impl FromResponse for Version {
//!     fn from_response(body: ResponseBody) -> Result<Self, DecodeError> {
//!         match body {
//!             ResponseBody::Text(text) => Ok(Version(text)),
//!             _ => Err(DecodeError::new("a version is text")),
//!         }
//!     }
//! }
//!
//! let version = Version::from_response(ResponseBody::Text("1.4.2".into()))?;
//! assert_eq!(version.0, "1.4.2");
//! # Ok::<(), DecodeError>(())
//! ```

pub use courier_core::{BodyStream, DecodeError, FromResponse, HttpResponse, ResponseBody};
