//! From a response body to the typed value a call resolves to: [`FromResponse`], implemented
//! for every `serde` type and for [`BodyStream`].
//!
//! A caller reads the body as the endpoint's response type says ([`ResponseBody`]) and asks the
//! call's type to take it:
//!
//! | response type | body | a `Deserialize` type is read from |
//! |---|---|---|
//! | `json` (default) | JSON text | the JSON; an empty body is `null` |
//! | `text` | UTF-8 text | a string |
//! | `bytes` | raw bytes | bytes (`Vec<u8>`, `bytes::Bytes`, `serde_bytes::ByteBuf`), a UTF-8 string, or (`serde_json::Value`) an array of byte values |
//! | `form` | `application/x-www-form-urlencoded` | a map of strings, by the search-parameter rules |
//! | a `responseParser` | whatever it returns | its JSON value |
//! | status 204, or a HEAD | none | `null`: `()` and `Option<T>` take it, other types fail to decode |
//!
//! An endpoint with `stream: true` hands over the body unread; its response type is
//! [`BodyStream`].

use crate::body::Body;
use bytes::Bytes;
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A body as the endpoint's response type reads it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ResponseBody {
    /// No body (status 204, a HEAD, or an empty JSON body).
    Empty,
    /// JSON text, not yet parsed.
    Json(Bytes),
    /// UTF-8 text.
    Text(String),
    /// Raw bytes.
    Bytes(Bytes),
    /// A form, read into its fields: URL-encoded (by the source's search-parameter rules) or
    /// `multipart/form-data` (a file part as `{"filename", "content_type", "bytes"}`).
    Form(Map<String, Value>),
    /// What a custom response parser returned.
    Value(Value),
    /// The body unread, for `stream: true` endpoints.
    Stream(Body),
}

/// A response body could not become the call's type.
#[derive(Debug)]
pub struct DecodeError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl DecodeError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    fn caused(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as _)
    }
}

/// A type a call can resolve to: every `serde` type, and [`BodyStream`].
pub trait FromResponse: Sized + Send + 'static {
    /// Whether the type wants the body unread.
    const STREAM: bool = false;

    /// Takes the body.
    ///
    /// # Errors
    ///
    /// When the body does not fit the type.
    fn from_response(body: ResponseBody) -> Result<Self, DecodeError>;
}

impl<T: DeserializeOwned + Send + 'static> FromResponse for T {
    fn from_response(body: ResponseBody) -> Result<Self, DecodeError> {
        let type_name = std::any::type_name::<T>();
        let failed = |what: &str| format!("the {what} response does not fit `{type_name}`");
        match body {
            ResponseBody::Empty => T::deserialize(Value::Null).map_err(|e| {
                DecodeError::caused(format!("an empty response does not fit `{type_name}`"), e)
            }),
            ResponseBody::Json(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| DecodeError::caused(failed("JSON"), e))
            }
            ResponseBody::Text(text) => {
                let de: de::value::StringDeserializer<de::value::Error> = text.into_deserializer();
                T::deserialize(de).map_err(|e| DecodeError::caused(failed("text"), e))
            }
            ResponseBody::Bytes(bytes) => T::deserialize(BytesDeserializer(bytes))
                .map_err(|e| DecodeError::caused(failed("binary"), e)),
            ResponseBody::Form(fields) => T::deserialize(Value::Object(fields))
                .map_err(|e| DecodeError::caused(failed("form"), e)),
            ResponseBody::Value(value) => T::deserialize(value)
                .map_err(|e| DecodeError::caused(failed("parsed"), e)),
            ResponseBody::Stream(_) => Err(DecodeError::new(format!(
                "the endpoint streams its body (`stream: true`); declare its response as `courier::response::BodyStream`, not `{type_name}`"
            ))),
        }
    }
}

/// The response body unread, for endpoints with `stream: true`.
/// It is an [`http_body::Body`]; `http_body_util::BodyExt` reads it frame by frame.
#[derive(Debug)]
pub struct BodyStream(Body);

impl BodyStream {
    /// The body.
    pub fn into_body(self) -> Body {
        self.0
    }
}

impl FromResponse for BodyStream {
    const STREAM: bool = true;

    fn from_response(body: ResponseBody) -> Result<Self, DecodeError> {
        Ok(Self(match body {
            ResponseBody::Stream(body) => body,
            ResponseBody::Empty => Body::empty(),
            ResponseBody::Json(b) | ResponseBody::Bytes(b) => Body::from(b),
            ResponseBody::Form(fields) => Body::from(Value::Object(fields).to_string()),
            ResponseBody::Text(t) => Body::from(t),
            ResponseBody::Value(v) => Body::from(v.to_string()),
        }))
    }
}

/// Presents raw bytes to `serde`: as bytes to types that take them, as a sequence of `u8` to
/// `Vec<u8>`, as a string when they are UTF-8 and the type wants one.
struct BytesDeserializer(Bytes);

impl<'de> de::Deserializer<'de> for BytesDeserializer {
    type Error = de::value::Error;

    // Self-describing types (`serde_json::Value`) see an array of byte values.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let seq = de::value::SeqDeserializer::<_, Self::Error>::new(self.0.iter().copied());
        visitor.visit_seq(seq)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_byte_buf(self.0.to_vec())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_byte_buf(self.0.to_vec())
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match String::from_utf8(self.0.to_vec()) {
            Ok(text) => visitor.visit_string(text),
            Err(_) => Err(de::Error::custom("the body is not UTF-8 text")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char unit
        unit_struct tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct User {
        id: u64,
    }

    #[test]
    fn json_bodies_parse_into_the_type() {
        let user =
            User::from_response(ResponseBody::Json(Bytes::from_static(b"{\"id\":7}"))).unwrap();
        assert_eq!(user, User { id: 7 });
        let err =
            User::from_response(ResponseBody::Json(Bytes::from_static(b"\"nope\""))).unwrap_err();
        assert!(err.to_string().contains("User"), "{err}");
    }

    #[test]
    fn empty_bodies_are_null() {
        <()>::from_response(ResponseBody::Empty).unwrap();
        assert_eq!(
            Option::<User>::from_response(ResponseBody::Empty).unwrap(),
            None
        );
        assert_eq!(
            Value::from_response(ResponseBody::Empty).unwrap(),
            Value::Null
        );
        assert!(User::from_response(ResponseBody::Empty).is_err());
    }

    #[test]
    fn text_and_bytes_reach_string_and_byte_types() {
        let text = String::from_response(ResponseBody::Text("hi".into())).unwrap();
        assert_eq!(text, "hi");
        let bytes =
            Vec::<u8>::from_response(ResponseBody::Bytes(Bytes::from_static(b"\x00\xff"))).unwrap();
        assert_eq!(bytes, [0, 255]);
        let text = String::from_response(ResponseBody::Bytes(Bytes::from_static(b"ok"))).unwrap();
        assert_eq!(text, "ok");
        assert!(String::from_response(ResponseBody::Bytes(Bytes::from_static(b"\xff"))).is_err());
    }

    #[test]
    fn forms_read_into_their_fields() {
        #[derive(Deserialize)]
        struct Token {
            access_token: String,
            scope: Vec<String>,
        }
        let fields = json!({ "access_token": "abc", "scope": ["a", "b"] });
        let Value::Object(fields) = fields else {
            unreachable!()
        };
        let token = Token::from_response(ResponseBody::Form(fields)).unwrap();
        assert_eq!(token.access_token, "abc");
        assert_eq!(token.scope, ["a", "b"]);
    }

    #[test]
    fn parsed_values_and_streams() {
        let user = User::from_response(ResponseBody::Value(json!({ "id": 1 }))).unwrap();
        assert_eq!(user.id, 1);
        let err = User::from_response(ResponseBody::Stream(Body::empty())).unwrap_err();
        assert!(err.to_string().contains("BodyStream"), "{err}");
        assert!(BodyStream::from_response(ResponseBody::Stream(Body::empty())).is_ok());
        const { assert!(BodyStream::STREAM && !User::STREAM) };
    }
}
