//! Finding raw bytes in a `Serialize` value before it becomes JSON.
//!
//! JSON has no bytes: `serde_json` writes a `serialize_bytes` call (`bytes::Bytes`,
//! `serde_bytes::ByteBuf`) as an array of numbers, which is never what a proxy call means. The
//! proxy caller refuses such variables before sending (`PROXY_VARIABLE_NOT_SERIALIZABLE`); files
//! go in a [`Form`](super::Form). [`raw_bytes_at`] walks a value with a serializer that writes
//! nothing and stops at the first `serialize_bytes`, naming where it was.

use serde::ser::{self, Serialize};
use std::fmt;

/// Where in `value` the first raw bytes are, as a dotted path from the root (`variables`,
/// `variables.avatar`, `variables.files.0`); `None` when there are none.
///
/// ```
/// use courier::encode::raw_bytes_at;
///
/// #[derive(serde::Serialize)]
/// struct Upload<'a> { name: &'a str, #[serde(with = "serde_bytes_like")] data: &'a [u8] }
/// # mod serde_bytes_like {
/// #     pub fn serialize<S: serde::Serializer>(v: &&[u8], s: S) -> Result<S::Ok, S::Error> { s.serialize_bytes(v) }
/// # }
/// let upload = Upload { name: "a.png", data: b"\x89PNG" };
/// assert_eq!(raw_bytes_at(&upload).as_deref(), Some("variables.data"));
/// assert_eq!(raw_bytes_at(&serde_json::json!({ "name": "a.png" })), None);
/// ```
pub fn raw_bytes_at<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    let mut probe = Probe {
        path: vec!["variables".to_owned()],
    };
    match value.serialize(&mut probe) {
        Err(Found(path)) if !path.is_empty() => Some(path),
        _ => None,
    }
}

/// The walk stopped: raw bytes at this path (or, for a value that failed to serialise on its
/// own, the value's message, which the caller's later serialisation reports properly).
#[derive(Debug)]
struct Found(String);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        // Not bytes: a value that cannot serialise at all. The JSON conversion that follows
        // reports it with its own message; the probe says only "no bytes found".
        Found(String::new())
    }
}

struct Probe {
    path: Vec<String>,
}

impl Probe {
    fn found(&self) -> Found {
        Found(self.path.join("."))
    }

    fn nested<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Found> {
        self.path.push(key);
        let result = value.serialize(&mut *self);
        self.path.pop();
        result
    }
}

/// A compound value being walked: the index of its next element.
struct Compound<'a> {
    probe: &'a mut Probe,
    index: usize,
    key: Option<String>,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        let key = self.index.to_string();
        self.index += 1;
        self.probe.nested(key, value)
    }
}

macro_rules! nothing {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Found> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Probe {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    nothing!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_unit_struct(&'static str),
    );

    fn serialize_bytes(self, _: &[u8]) -> Result<(), Found> {
        Err(self.found())
    }

    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Found> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Found> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.nested(variant.to_owned(), value)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        Ok(self.compound())
    }
}

impl Probe {
    fn compound(&mut self) -> Compound<'_> {
        Compound {
            probe: self,
            index: 0,
            key: None,
        }
    }
}

/// The element-by-index compounds: sequences and tuples of every kind.
macro_rules! by_index {
    ($($trait:ident::$method:ident),* $(,)?) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Found;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
                self.element(value)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        }
    )*};
}

by_index!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Found> {
        // A key names the entry; `serde_json` wants keys to be strings or numbers.
        let name = serde_json::to_value(key)
            .ok()
            .map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .unwrap_or_default();
        self.key = Some(name);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        let key = self.key.take().unwrap_or_default();
        self.probe.nested(key, value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

/// The compounds with named fields: structs and struct variants.
macro_rules! by_name {
    ($($trait:ident),* $(,)?) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Found;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Result<(), Found> {
                self.probe.nested(name.to_owned(), value)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        }
    )*};
}

by_name!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::raw_bytes_at;
    use serde::{Serialize, Serializer};
    use std::collections::BTreeMap;

    struct Raw(&'static [u8]);

    impl Serialize for Raw {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[derive(Serialize)]
    struct Outer {
        name: String,
        files: Vec<Option<Raw>>,
    }

    #[derive(Serialize)]
    enum Shape {
        Blob { data: Raw },
    }

    #[test]
    fn names_where_the_bytes_are() {
        assert_eq!(raw_bytes_at(&Raw(b"x")).as_deref(), Some("variables"));
        let outer = Outer {
            name: "a".into(),
            files: vec![None, Some(Raw(b"x"))],
        };
        assert_eq!(raw_bytes_at(&outer).as_deref(), Some("variables.files.1"));
        let mut map = BTreeMap::new();
        map.insert("avatar", Raw(b"x"));
        assert_eq!(raw_bytes_at(&map).as_deref(), Some("variables.avatar"));
        assert_eq!(
            raw_bytes_at(&Shape::Blob { data: Raw(b"x") }).as_deref(),
            Some("variables.data")
        );
    }

    #[test]
    fn plain_json_has_none() {
        assert_eq!(
            raw_bytes_at(&serde_json::json!({"a": [1, 2, {"b": null}]})),
            None
        );
        assert_eq!(
            raw_bytes_at(&vec![1u8, 2, 3]),
            None,
            "a Vec<u8> is a JSON array"
        );
        assert_eq!(raw_bytes_at(&()), None);
    }
}
