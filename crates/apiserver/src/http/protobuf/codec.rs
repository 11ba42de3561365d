//! JSON <-> protobuf for any Kubernetes message, driven by its descriptor: a JSON field maps
//! to the proto field of the same name (Kubernetes' protos use the JSON names), messages with
//! their own JSON form are handled in `special`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use protobuf::reflect::{FieldDescriptor, MessageDescriptor, RuntimeFieldType, RuntimeType};
use serde_json::{Map, Number, Value};

use super::special;
use super::wire::{self, FIXED32, FIXED64, LEN, Reader, VARINT};

/// Deepest message nesting decoded (JSONSchemaProps is recursive; this bounds the stack).
const MAX_DEPTH: usize = 100;

/// A conversion failure, with the JSON path where it happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{what}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
pub struct CodecError {
    path: String,
    what: String,
}

impl CodecError {
    pub(super) fn new(what: impl Into<String>) -> Self {
        Self { path: String::new(), what: what.into() }
    }

    /// Prefixes the path with the field (or `[i]` index) the error happened under.
    pub(super) fn at(mut self, segment: &str) -> Self {
        if self.path.is_empty() {
            self.path = segment.to_string();
        } else if self.path.starts_with('[') {
            self.path = format!("{segment}{}", self.path);
        } else {
            self.path = format!("{segment}.{}", self.path);
        }
        self
    }
}

fn expected(what: &str, got: &Value) -> CodecError {
    let kind = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    CodecError::new(format!("expected {what}, got {kind}"))
}

/// Encodes a JSON object as the message `desc`. JSON fields without a proto field (the
/// top-level `apiVersion`/`kind`, which travel in the envelope) are left out.
pub fn encode_message(desc: &MessageDescriptor, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let Value::Object(map) = v else { return Err(expected("an object", v)) };
    let inline = special::inline_field(desc);
    let mut inlined = Map::new();
    for (name, value) in map {
        if value.is_null() {
            continue;
        }
        match special::field_by_json_name(desc, name) {
            Some(field) => encode_field(&field, value, out).map_err(|e| e.at(name))?,
            None if inline.is_some() => {
                inlined.insert(name.clone(), value.clone());
            }
            None => {}
        }
    }
    if let Some(field) = inline
        && !inlined.is_empty()
    {
        encode_field(&field, &Value::Object(inlined), out)?;
    }
    Ok(())
}

fn encode_field(f: &FieldDescriptor, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let num = u32::try_from(f.number()).map_err(|_| CodecError::new("negative field number"))?;
    match f.runtime_field_type() {
        RuntimeFieldType::Singular(t) => encode_value(num, &t, v, out),
        RuntimeFieldType::Repeated(t) => {
            let Value::Array(items) = v else { return Err(expected("an array", v)) };
            for (i, item) in items.iter().enumerate() {
                encode_value(num, &t, item, out).map_err(|e| e.at(&format!("[{i}]")))?;
            }
            Ok(())
        }
        RuntimeFieldType::Map(_, t) => {
            let Value::Object(entries) = v else { return Err(expected("an object", v)) };
            let mut entry = Vec::new();
            for (key, item) in entries {
                entry.clear();
                wire::put_string(&mut entry, 1, key);
                encode_value(2, &t, item, &mut entry).map_err(|e| e.at(key))?;
                wire::put_len(out, num, &entry);
            }
            Ok(())
        }
    }
}

fn encode_value(num: u32, t: &RuntimeType, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
    match t {
        RuntimeType::I32 | RuntimeType::I64 | RuntimeType::U32 | RuntimeType::U64 | RuntimeType::Enum(_) => {
            let n = integer(v)?;
            wire::put_tag(out, num, VARINT);
            // Negative int32 values are sign-extended to 64 bits on the wire.
            wire::put_varint(out, n as u64);
        }
        RuntimeType::Bool => {
            let b = v.as_bool().ok_or_else(|| expected("a boolean", v))?;
            wire::put_tag(out, num, VARINT);
            wire::put_varint(out, u64::from(b));
        }
        RuntimeType::F64 => {
            let f = v.as_f64().ok_or_else(|| expected("a number", v))?;
            wire::put_tag(out, num, FIXED64);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        RuntimeType::F32 => {
            let f = v.as_f64().ok_or_else(|| expected("a number", v))? as f32;
            wire::put_tag(out, num, FIXED32);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        RuntimeType::String => wire::put_string(out, num, v.as_str().ok_or_else(|| expected("a string", v))?),
        RuntimeType::VecU8 => {
            let s = v.as_str().ok_or_else(|| expected("a base64 string", v))?;
            let raw = BASE64.decode(s).map_err(|e| CodecError::new(format!("illegal base64 data: {e}")))?;
            wire::put_len(out, num, &raw);
        }
        RuntimeType::Message(d) => {
            let mut buf = Vec::new();
            if v.is_null() {
                // A null list element is Go's zero value: an empty message.
            } else if !special::encode(d, v, &mut buf)? {
                encode_message(d, v, &mut buf)?;
            }
            wire::put_len(out, num, &buf);
        }
    }
    Ok(())
}

fn integer(v: &Value) -> Result<i64, CodecError> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u as i64))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| expected("an integer", v)),
        _ => Err(expected("an integer", v)),
    }
}

/// Decodes the message `desc` into its JSON object. Scalars holding their zero value are left
/// out, as Go's JSON encoding omits them (`omitempty`): Go's protobuf marshalling writes every
/// non-pointer field, so `""`, `false` and `0` on the wire usually mean "unset". Pointer
/// fields explicitly set to zero (`replicas: 0`, `automountServiceAccountToken: false`) look
/// the same on the wire and are therefore dropped too; map values and list items are kept.
pub fn decode_message(desc: &MessageDescriptor, bytes: &[u8], depth: usize) -> Result<Value, CodecError> {
    if depth > MAX_DEPTH {
        return Err(CodecError::new(format!("messages nested deeper than {MAX_DEPTH} levels")));
    }
    let mut out = Map::new();
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let (num, wire_type) = r.tag()?;
        let Some(f) = desc.field_by_number(num) else {
            r.skip(wire_type)?;
            continue;
        };
        let name = special::json_name(desc, &f);
        decode_field(&f, &name, wire_type, &mut r, &mut out, depth).map_err(|e| e.at(&name))?;
    }
    // An embedded struct's fields show at this level in JSON.
    if let Some(field) = special::inline_field(desc)
        && let Some(Value::Object(inner)) = out.remove(field.name())
    {
        out.extend(inner);
    }
    Ok(Value::Object(out))
}

fn decode_field(
    f: &FieldDescriptor,
    name: &str,
    wire_type: u8,
    r: &mut Reader<'_>,
    out: &mut Map<String, Value>,
    depth: usize,
) -> Result<(), CodecError> {
    match f.runtime_field_type() {
        RuntimeFieldType::Singular(t) => {
            let v = decode_value(&t, wire_type, r, depth)?;
            // Messages have their own zero: only an unset time (null) is left out.
            let omit = if matches!(t, RuntimeType::Message(_)) { v.is_null() } else { is_zero(&v) };
            if omit {
                out.remove(name);
            } else {
                out.insert(name.to_string(), v);
            }
        }
        RuntimeFieldType::Repeated(t) => {
            let slot = out.entry(name.to_string()).or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(items) = slot else { return Err(CodecError::new("field repeated and singular")) };
            if wire_type == LEN && is_packable(&t) {
                let mut packed = Reader::new(r.bytes()?);
                while !packed.is_empty() {
                    items.push(decode_value(&t, expected_wire(&t), &mut packed, depth)?);
                }
            } else {
                items.push(decode_value(&t, wire_type, r, depth)?);
            }
        }
        RuntimeFieldType::Map(_, t) => {
            check_wire(LEN, wire_type)?;
            let (key, value) = decode_entry(&t, r.bytes()?, depth)?;
            let slot = out.entry(name.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = slot {
                m.insert(key, value);
            }
        }
    }
    Ok(())
}

/// One map entry: key (field 1, always a string in Kubernetes) and value (field 2).
fn decode_entry(t: &RuntimeType, bytes: &[u8], depth: usize) -> Result<(String, Value), CodecError> {
    let mut r = Reader::new(bytes);
    let (mut key, mut value) = (String::new(), None);
    while !r.is_empty() {
        match r.tag()? {
            (1, LEN) => key = utf8(r.bytes()?)?,
            (2, w) => value = Some(decode_value(t, w, &mut r, depth)?),
            (_, w) => r.skip(w)?,
        }
    }
    let value = match value {
        Some(v) => v,
        None => decode_value(t, expected_wire(t), &mut Reader::new(&zero_encoding(t)), depth)?,
    };
    Ok((key, value))
}

/// The bytes of a zero value of `t` (a map entry may omit its value).
fn zero_encoding(t: &RuntimeType) -> Vec<u8> {
    match expected_wire(t) {
        LEN => vec![0],
        FIXED64 => vec![0; 8],
        FIXED32 => vec![0; 4],
        _ => vec![0],
    }
}

fn decode_value(t: &RuntimeType, wire_type: u8, r: &mut Reader<'_>, depth: usize) -> Result<Value, CodecError> {
    check_wire(expected_wire(t), wire_type)?;
    Ok(match t {
        RuntimeType::I32 | RuntimeType::Enum(_) => Value::from(r.varint()? as i32),
        RuntimeType::I64 => Value::from(r.varint()? as i64),
        RuntimeType::U32 => Value::from(r.varint()? as u32),
        RuntimeType::U64 => Value::from(r.varint()?),
        RuntimeType::Bool => Value::Bool(r.varint()? != 0),
        RuntimeType::F64 => Number::from_f64(f64::from_bits(r.fixed64()?)).map_or(Value::Null, Value::Number),
        RuntimeType::F32 => {
            Number::from_f64(f64::from(f32::from_bits(r.fixed32()?))).map_or(Value::Null, Value::Number)
        }
        RuntimeType::String => Value::String(utf8(r.bytes()?)?),
        RuntimeType::VecU8 => Value::String(BASE64.encode(r.bytes()?)),
        RuntimeType::Message(d) => {
            let bytes = r.bytes()?;
            match special::decode(d, bytes, depth + 1)? {
                Some(v) => v,
                None => decode_message(d, bytes, depth + 1)?,
            }
        }
    })
}

fn expected_wire(t: &RuntimeType) -> u8 {
    match t {
        RuntimeType::F64 => FIXED64,
        RuntimeType::F32 => FIXED32,
        RuntimeType::String | RuntimeType::VecU8 | RuntimeType::Message(_) => LEN,
        _ => VARINT,
    }
}

fn is_packable(t: &RuntimeType) -> bool {
    expected_wire(t) != LEN
}

fn check_wire(want: u8, got: u8) -> Result<(), CodecError> {
    if want == got {
        Ok(())
    } else {
        Err(CodecError::new(format!("wire type {got} does not match the field's type (wire type {want})")))
    }
}

pub(super) fn utf8(b: &[u8]) -> Result<String, CodecError> {
    String::from_utf8(b.to_vec()).map_err(|_| CodecError::new("string is not valid UTF-8"))
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(_) | Value::Object(_) => false,
    }
}
