//! An object serialized member by member: the outer levels of objects are kept as lists of
//! members, and each value below them as its own JSON text.
//!
//! The writer compares an object as read with the object wanted. Serializing each side to
//! one text and then scanning both texts again to find their members costs as much as the
//! serialization itself; capturing the members while serializing costs nothing more. The
//! texts are exactly what `serde_json` writes for each value, so equal values are equal
//! texts, and a whole object's text is its members' texts joined.

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::{Error, Value};

/// A value serialized as JSON, its outer objects split into members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serialized {
    /// The value's JSON text.
    Text(String),
    /// An object's members, in the order they were serialized.
    Object(Vec<(String, Serialized)>),
}

impl Serialized {
    /// Serializes `value`, splitting objects into members down to `levels` levels (0: one
    /// text for the whole value).
    pub fn of<T: Serialize + ?Sized>(value: &T, levels: usize) -> Result<Self, Error> {
        if levels == 0 {
            return Ok(Self::Text(serde_json::to_string(value)?));
        }
        value.serialize(Capture { levels, keep: None })
    }

    /// Serializes `value` as [`Serialized::of`] does, leaving out the members of its outer
    /// object that `keep` refuses: they are not serialized at all (a writer that knows two
    /// objects' metadata equal need not write either out to compare them).
    pub fn of_members<T: Serialize + ?Sized>(value: &T, levels: usize, keep: fn(&str) -> bool) -> Result<Self, Error> {
        value.serialize(Capture { levels: levels.max(1), keep: Some(keep) })
    }

    /// Whether the value is JSON null.
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Text(t) if t == "null")
    }

    /// The member `key` of an object, unless absent or null.
    pub fn get(&self, key: &str) -> Option<&Serialized> {
        match self {
            Self::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Self::Text(_) => None,
        }
        .filter(|v| !v.is_null())
    }

    /// Removes and returns the member `key` of an object, unless absent or null.
    pub fn take(&mut self, key: &str) -> Option<Serialized> {
        let Self::Object(members) = self else { return None };
        let i = members.iter().position(|(k, _)| k == key)?;
        Some(members.remove(i).1).filter(|v| !v.is_null())
    }

    /// The members of an object (`None` for any other value).
    pub fn members(&self) -> Option<&[(String, Serialized)]> {
        match self {
            Self::Object(members) => Some(members),
            Self::Text(_) => None,
        }
    }

    /// The whole value's JSON text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) {
        match self {
            Self::Text(t) => out.push_str(t),
            Self::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_key(out, k);
                    v.write_text(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as a JSON tree.
    pub fn to_value(&self) -> Result<Value, Error> {
        match self {
            Self::Text(t) => serde_json::from_str(t),
            Self::Object(members) => members
                .iter()
                .map(|(k, v)| Ok((k.clone(), v.to_value()?)))
                .collect::<Result<_, Error>>()
                .map(Value::Object),
        }
    }
}

fn push_key(out: &mut String, key: &str) {
    // A key needs escaping only when it holds a quote, a backslash or a control character.
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(&Value::String(key.to_string()).to_string());
    } else {
        out.push('"');
        out.push_str(key);
        out.push('"');
    }
    out.push(':');
}

/// The serializer capturing members `levels` levels deep; anything that is not an object
/// is written by `serde_json` as a whole.
struct Capture {
    levels: usize,
    /// Which members of the outer object to serialize (all when `None`).
    keep: Option<fn(&str) -> bool>,
}

fn text<T: Serialize + ?Sized>(value: &T) -> Result<Serialized, Error> {
    Ok(Serialized::Text(serde_json::to_string(value)?))
}

/// `{"variant":<value>}`, as `serde_json` writes an enum variant holding data.
fn variant_text(variant: &str, value: &str) -> Serialized {
    let mut out = String::from("{");
    push_key(&mut out, variant);
    out.push_str(value);
    out.push('}');
    Serialized::Text(out)
}

impl ser::Serializer for Capture {
    type Ok = Serialized;
    type Error = Error;
    type SerializeSeq = Elements;
    type SerializeTuple = Elements;
    type SerializeTupleStruct = Elements;
    type SerializeTupleVariant = Elements;
    type SerializeMap = Members;
    type SerializeStruct = Members;
    type SerializeStructVariant = Members;

    fn serialize_bool(self, v: bool) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_i8(self, v: i8) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_i16(self, v: i16) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_i32(self, v: i32) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_i64(self, v: i64) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_i128(self, v: i128) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_u8(self, v: u8) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_u16(self, v: u16) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_u32(self, v: u32) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_u64(self, v: u64) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_u128(self, v: u128) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_f32(self, v: f32) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_f64(self, v: f64) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_char(self, v: char) -> Result<Serialized, Error> {
        text(&v)
    }
    fn serialize_str(self, v: &str) -> Result<Serialized, Error> {
        text(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Serialized, Error> {
        text(v)
    }
    fn serialize_none(self) -> Result<Serialized, Error> {
        text(&())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Serialized, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Serialized, Error> {
        text(&())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Serialized, Error> {
        text(&())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Serialized, Error> {
        text(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<Serialized, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Serialized, Error> {
        Ok(variant_text(variant, &serde_json::to_string(value)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Elements, Error> {
        Ok(Elements { items: Vec::with_capacity(len.unwrap_or(0)), variant: None })
    }
    fn serialize_tuple(self, len: usize) -> Result<Elements, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Elements, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Elements, Error> {
        Ok(Elements { items: Vec::with_capacity(len), variant: Some(variant) })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Members, Error> {
        Ok(Members::new(self.levels, len.unwrap_or(0), None, self.keep))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Members, Error> {
        Ok(Members::new(self.levels, len, None, self.keep))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Members, Error> {
        // Below a variant nothing is split: it is written whole.
        Ok(Members::new(1, len, Some(variant), None))
    }
}

/// The elements of an array (or a tuple variant's), each written whole.
struct Elements {
    items: Vec<String>,
    variant: Option<&'static str>,
}

impl Elements {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(serde_json::to_string(value)?);
        Ok(())
    }

    fn finish(self) -> Serialized {
        let array = format!("[{}]", self.items.join(","));
        match self.variant {
            Some(v) => variant_text(v, &array),
            None => Serialized::Text(array),
        }
    }
}

/// serde's four sequence traits, one element at a time.
macro_rules! elements {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Elements {
            type Ok = Serialized;
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> Result<Serialized, Error> {
                Ok(self.finish())
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// The members of an object (or a struct variant's), each value captured one level less
/// deep.
struct Members {
    levels: usize,
    members: Vec<(String, Serialized)>,
    key: Option<String>,
    variant: Option<&'static str>,
    keep: Option<fn(&str) -> bool>,
}

impl Members {
    fn new(levels: usize, len: usize, variant: Option<&'static str>, keep: Option<fn(&str) -> bool>) -> Self {
        Self { levels, members: Vec::with_capacity(len), key: None, variant, keep }
    }

    fn push<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Error> {
        if self.keep.is_some_and(|keep| !keep(&key)) {
            return Ok(());
        }
        let value = Serialized::of(value, self.levels - 1)?;
        self.members.push((key, value));
        Ok(())
    }

    fn finish(self) -> Serialized {
        let object = Serialized::Object(self.members);
        match self.variant {
            Some(v) => variant_text(v, &object.text()),
            None => object,
        }
    }
}

impl ser::SerializeMap for Members {
    type Ok = Serialized;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeyName)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| ser::Error::custom("a map value without its key"))?;
        self.push(key, value)
    }
    fn end(self) -> Result<Serialized, Error> {
        Ok(self.finish())
    }
}

/// serde's two struct traits, one named field at a time.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Members {
            type Ok = Serialized;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                self.push(key.to_string(), value)
            }
            fn end(self) -> Result<Serialized, Error> {
                Ok(self.finish())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

/// A map key as `serde_json` writes it: strings as they are, numbers and booleans as their
/// text; anything else is an error, as it is there.
struct KeyName;

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

/// Keys written as their text.
macro_rules! key_text {
    ($($method:ident : $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<String, Error> {
            Ok(v.to_string())
        }
    )*};
}

/// Values that cannot be keys.
macro_rules! not_a_key {
    ($($method:ident : $ty:ty),*) => {$(
        fn $method(self, _: $ty) -> Result<String, Error> {
            Err(key_must_be_a_string())
        }
    )*};
}

impl ser::Serializer for KeyName {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    key_text!(
        serialize_str: &str,
        serialize_char: char,
        serialize_bool: bool,
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64
    );
    not_a_key!(serialize_f32: f32, serialize_f64: f64, serialize_bytes: &[u8]);
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String, Error> {
        Ok(variant.to_string())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

#[cfg(test)]
mod tests;
