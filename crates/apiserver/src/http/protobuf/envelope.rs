//! The protobuf envelope of every object on the wire: the magic `k8s\0`, then a
//! `runtime.Unknown {typeMeta {apiVersion, kind}, raw, contentEncoding, contentType}` whose
//! `raw` is the object's own message (objects carry no TypeMeta of their own). Also the
//! length-prefixed `WatchEvent` frames of protobuf watch streams.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use super::codec::{CodecError, decode_message, encode_message, utf8};
use super::registry;
use super::wire::{self, LEN, Reader};

pub const MAGIC: [u8; 4] = *b"k8s\0";

/// A parsed envelope; `raw` borrows the body.
#[derive(Debug)]
pub struct Unknown<'a> {
    pub api_version: String,
    pub kind: String,
    pub raw: &'a [u8],
    pub content_encoding: String,
    pub content_type: String,
}

pub fn parse(body: &[u8]) -> Result<Unknown<'_>, CodecError> {
    let rest = body
        .strip_prefix(&MAGIC)
        .ok_or_else(|| CodecError::new("the body does not start with the protobuf prefix \"k8s\\x00\""))?;
    let mut u = Unknown {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
        content_encoding: String::new(),
        content_type: String::new(),
    };
    let mut r = Reader::new(rest);
    while !r.is_empty() {
        match r.tag()? {
            (1, LEN) => {
                let mut tm = Reader::new(r.bytes()?);
                while !tm.is_empty() {
                    match tm.tag()? {
                        (1, LEN) => u.api_version = utf8(tm.bytes()?)?,
                        (2, LEN) => u.kind = utf8(tm.bytes()?)?,
                        (_, w) => tm.skip(w)?,
                    }
                }
            }
            (2, LEN) => u.raw = r.bytes()?,
            (3, LEN) => u.content_encoding = utf8(r.bytes()?)?,
            (4, LEN) => u.content_type = utf8(r.bytes()?)?,
            (_, w) => r.skip(w)?,
        }
    }
    Ok(u)
}

/// Wraps an encoded message of (apiVersion, kind).
pub fn write(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    wire::put_string(&mut type_meta, 1, api_version);
    wire::put_string(&mut type_meta, 2, kind);
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(&MAGIC);
    wire::put_len(&mut out, 1, &type_meta);
    wire::put_len(&mut out, 2, raw);
    out
}

/// Encodes a JSON object in its envelope, by its own apiVersion and kind.
pub fn encode_value(v: &Value) -> Result<Vec<u8>, CodecError> {
    let api_version = v.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    let desc = registry::message(api_version, kind).ok_or_else(|| {
        CodecError::new(format!("no protobuf message is defined for kind \"{kind}\" of \"{api_version}\""))
    })?;
    let mut raw = Vec::with_capacity(256);
    encode_message(desc, v, &mut raw)?;
    Ok(write(api_version, kind, &raw))
}

/// Decodes a whole envelope into the JSON object, apiVersion and kind included.
pub fn decode_any(body: &[u8], depth: usize) -> Result<Value, CodecError> {
    let u = parse(body)?;
    decode_unknown(&u, depth)
}

pub fn decode_unknown(u: &Unknown<'_>, depth: usize) -> Result<Value, CodecError> {
    if !u.content_encoding.is_empty() {
        return Err(CodecError::new(format!("unsupported content encoding \"{}\"", u.content_encoding)));
    }
    let desc = registry::message(&u.api_version, &u.kind).ok_or_else(|| {
        CodecError::new(format!("no kind \"{}\" is registered for version \"{}\"", u.kind, u.api_version))
    })?;
    let mut v = decode_message(desc, u.raw, depth)?;
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), Value::String(u.api_version.clone()));
        m.insert("kind".into(), Value::String(u.kind.clone()));
    }
    Ok(v)
}

/// One watch frame: 4-byte big-endian length, then `WatchEvent {type, object: {raw}}` with the
/// object's full envelope as `raw`.
pub fn watch_frame(event_type: &str, object: &[u8]) -> Bytes {
    let mut ext = Vec::with_capacity(object.len() + 6);
    wire::put_len(&mut ext, 1, object);
    let mut ev = Vec::with_capacity(ext.len() + event_type.len() + 12);
    wire::put_string(&mut ev, 1, event_type);
    wire::put_len(&mut ev, 2, &ext);
    let mut b = BytesMut::with_capacity(ev.len() + 4);
    b.put_u32(u32::try_from(ev.len()).unwrap_or(u32::MAX));
    b.put_slice(&ev);
    b.freeze()
}
