//! Messages whose JSON form is not an object of their fields: times, durations, quantities,
//! int-or-strings, embedded raw JSON, and the apiextensions schema unions. Also the JSON names
//! of JSONSchemaProps (`$ref`, `x-kubernetes-*`), the one message whose proto field names
//! differ from its JSON names.

use protobuf::reflect::{FieldDescriptor, MessageDescriptor};
use serde_json::Value;

use super::codec::{CodecError, decode_message, encode_message, utf8};
use super::envelope;
use super::wire::{self, LEN, Reader, VARINT};

const META: &str = "apimachinery.pkg.apis.meta.v1.";
const APIEXTENSIONS: &str = "apiextensions_apiserver.pkg.apis.apiextensions.";

/// Seconds of Go's zero `time.Time`, which metav1.Time marshals for an unset timestamp.
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

#[derive(Clone, Copy)]
enum Special {
    Time,
    MicroTime,
    Duration,
    Quantity,
    IntOrString,
    /// `bytes raw = 1` holding JSON: RawExtension, FieldsV1, apiextensions JSON.
    RawJson,
    SchemaOrBool,
    SchemaOrArray,
    SchemaOrStringArray,
}

fn special(d: &MessageDescriptor) -> Option<Special> {
    let full = d.full_name();
    if let Some(name) = full.strip_prefix(META) {
        return match name {
            "Time" => Some(Special::Time),
            "MicroTime" => Some(Special::MicroTime),
            "Duration" => Some(Special::Duration),
            "FieldsV1" => Some(Special::RawJson),
            _ => None,
        };
    }
    if let Some(rest) = full.strip_prefix(APIEXTENSIONS) {
        return match rest.split_once('.').map(|(_, name)| name) {
            Some("JSON") => Some(Special::RawJson),
            Some("JSONSchemaPropsOrBool") => Some(Special::SchemaOrBool),
            Some("JSONSchemaPropsOrArray") => Some(Special::SchemaOrArray),
            Some("JSONSchemaPropsOrStringArray") => Some(Special::SchemaOrStringArray),
            _ => None,
        };
    }
    match full {
        "apimachinery.pkg.api.resource.Quantity" => Some(Special::Quantity),
        "apimachinery.pkg.util.intstr.IntOrString" => Some(Special::IntOrString),
        "apimachinery.pkg.runtime.RawExtension" => Some(Special::RawJson),
        _ => None,
    }
}

fn is_schema_props(d: &MessageDescriptor) -> bool {
    d.full_name().starts_with(APIEXTENSIONS) && d.name() == "JSONSchemaProps"
}

/// The field of `d` holding an embedded Go struct whose fields JSON shows inline (in the
/// proto it is one message-typed field).
pub(super) fn inline_field(d: &MessageDescriptor) -> Option<FieldDescriptor> {
    let name = match d.full_name() {
        "api.core.v1.Probe" => "handler",
        "api.core.v1.Volume" => "volumeSource",
        "api.core.v1.PersistentVolumeSpec" => "persistentVolumeSource",
        "api.core.v1.EphemeralContainer" => "ephemeralContainerCommon",
        full if full.starts_with("api.resource.") && full.ends_with("Configuration") => "deviceConfiguration",
        _ => return None,
    };
    d.field_by_name(name)
}

/// The proto field for a JSON field name.
pub(super) fn field_by_json_name(d: &MessageDescriptor, name: &str) -> Option<FieldDescriptor> {
    d.field_by_name(name).or_else(|| {
        if !is_schema_props(d) {
            return None;
        }
        if let Some(plain) = name.strip_prefix('$') {
            return d.field_by_name(plain);
        }
        let mut camel = String::with_capacity(name.len());
        let mut upper = false;
        for c in name.chars() {
            if c == '-' {
                upper = true;
            } else if upper {
                camel.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                camel.push(c);
            }
        }
        d.field_by_name(&camel)
    })
}

/// The JSON name of a proto field.
pub(super) fn json_name(d: &MessageDescriptor, f: &FieldDescriptor) -> String {
    let name = f.name();
    if !is_schema_props(d) {
        return name.to_string();
    }
    match name {
        "ref" | "schema" => format!("${name}"),
        _ if name.starts_with("xKubernetes") => {
            let mut kebab = String::with_capacity(name.len() + 4);
            for c in name.chars() {
                if c.is_ascii_uppercase() {
                    kebab.push('-');
                    kebab.push(c.to_ascii_lowercase());
                } else {
                    kebab.push(c);
                }
            }
            kebab
        }
        _ => name.to_string(),
    }
}

/// Encodes `v` if `d` is a special message; `false` if it is an ordinary one.
pub(super) fn encode(d: &MessageDescriptor, v: &Value, out: &mut Vec<u8>) -> Result<bool, CodecError> {
    let Some(s) = special(d) else { return Ok(false) };
    match s {
        Special::Time | Special::MicroTime => {
            let text = v.as_str().ok_or_else(|| CodecError::new("expected an RFC 3339 time string"))?;
            let ts: jiff::Timestamp =
                text.parse().map_err(|e| CodecError::new(format!("invalid time \"{text}\": {e}")))?;
            put_varint_field(out, 1, ts.as_second() as u64);
            put_varint_field(out, 2, i64::from(ts.subsec_nanosecond()) as u64);
        }
        Special::Duration => {
            let text = v.as_str().ok_or_else(|| CodecError::new("expected a duration string"))?;
            put_varint_field(out, 1, parse_duration(text)? as u64);
        }
        Special::Quantity => match v {
            Value::String(s) => wire::put_string(out, 1, s),
            Value::Number(n) => wire::put_string(out, 1, &n.to_string()),
            _ => return Err(CodecError::new("expected a quantity string")),
        },
        Special::IntOrString => match v {
            Value::String(s) => {
                put_varint_field(out, 1, 1);
                wire::put_string(out, 3, s);
            }
            Value::Number(n) => {
                let i = n.as_i64().and_then(|i| i32::try_from(i).ok());
                let i = i.ok_or_else(|| CodecError::new(format!("{n} is not a 32-bit integer")))?;
                put_varint_field(out, 1, 0);
                put_varint_field(out, 2, i64::from(i) as u64);
            }
            _ => return Err(CodecError::new("expected an integer or a string")),
        },
        Special::RawJson => wire::put_len(out, 1, v.to_string().as_bytes()),
        Special::SchemaOrBool => match v {
            Value::Bool(b) => put_varint_field(out, 1, u64::from(*b)),
            _ => {
                put_varint_field(out, 1, 1);
                put_schema(d, 2, v, out)?;
            }
        },
        Special::SchemaOrArray | Special::SchemaOrStringArray => match v {
            Value::Array(items) => {
                for item in items {
                    match (s, item) {
                        (Special::SchemaOrStringArray, Value::String(p)) => wire::put_string(out, 2, p),
                        (Special::SchemaOrStringArray, _) => return Err(CodecError::new("expected strings")),
                        _ => put_schema(d, 2, item, out)?,
                    }
                }
            }
            _ => put_schema(d, 1, v, out)?,
        },
    }
    Ok(true)
}

fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    wire::put_tag(out, field, VARINT);
    wire::put_varint(out, v);
}

fn put_schema(union: &MessageDescriptor, field: u32, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let props = schema_props(union)?;
    let mut buf = Vec::new();
    encode_message(&props, v, &mut buf)?;
    wire::put_len(out, field, &buf);
    Ok(())
}

fn schema_props(union: &MessageDescriptor) -> Result<MessageDescriptor, CodecError> {
    union
        .file_descriptor()
        .message_by_package_relative_name("JSONSchemaProps")
        .ok_or_else(|| CodecError::new("JSONSchemaProps is not defined beside its union"))
}

/// Decodes `bytes` if `d` is a special message; `None` if it is an ordinary one.
pub(super) fn decode(d: &MessageDescriptor, bytes: &[u8], depth: usize) -> Result<Option<Value>, CodecError> {
    let Some(s) = special(d) else { return Ok(None) };
    let fields = Fields::read(bytes)?;
    let v = match s {
        Special::Time | Special::MicroTime => {
            let (secs, nanos) = (fields.int(1), fields.int(2));
            if secs == GO_ZERO_TIME_SECONDS && nanos == 0 {
                Value::Null
            } else {
                let ts = jiff::Timestamp::new(secs, nanos as i32)
                    .map_err(|e| CodecError::new(format!("invalid time {secs}s {nanos}ns: {e}")))?;
                Value::String(format_time(ts, matches!(s, Special::MicroTime)))
            }
        }
        Special::Duration => Value::String(format_duration(fields.int(1))),
        Special::Quantity => Value::String(fields.string(1)?.unwrap_or_else(|| "0".to_string())),
        Special::IntOrString => match fields.int(1) {
            1 => Value::String(fields.string(3)?.unwrap_or_default()),
            _ => Value::from(fields.int(2) as i32),
        },
        Special::RawJson => match fields.last(1) {
            None | Some([]) => Value::Null,
            Some(raw) if raw.starts_with(&envelope::MAGIC) => envelope::decode_any(raw, depth)?,
            Some(raw) => serde_json::from_slice(raw)
                .map_err(|e| CodecError::new(format!("embedded object is not valid JSON: {e}")))?,
        },
        Special::SchemaOrBool => match fields.last(2) {
            Some(schema) => decode_message(&schema_props(d)?, schema, depth)?,
            None => Value::Bool(fields.int(1) != 0),
        },
        Special::SchemaOrArray | Special::SchemaOrStringArray => match fields.last(1) {
            Some(schema) => decode_message(&schema_props(d)?, schema, depth)?,
            None => {
                let mut items = Vec::new();
                for raw in fields.all(2) {
                    items.push(match s {
                        Special::SchemaOrStringArray => Value::String(utf8(raw)?),
                        _ => decode_message(&schema_props(d)?, raw, depth)?,
                    });
                }
                Value::Array(items)
            }
        },
    };
    Ok(Some(v))
}

/// The fields of a small message, read without a descriptor (varints and byte strings).
struct Fields<'a>(Vec<(u32, u64, &'a [u8])>);

impl<'a> Fields<'a> {
    fn read(bytes: &'a [u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.is_empty() {
            match r.tag()? {
                (n, VARINT) => out.push((n, r.varint()?, &[][..])),
                (n, LEN) => out.push((n, 0, r.bytes()?)),
                (_, w) => r.skip(w)?,
            }
        }
        Ok(Self(out))
    }
    fn int(&self, n: u32) -> i64 {
        self.0.iter().rev().find(|f| f.0 == n).map_or(0, |f| f.1 as i64)
    }
    fn last(&self, n: u32) -> Option<&'a [u8]> {
        self.0.iter().rev().find(|f| f.0 == n && f.1 == 0).map(|f| f.2)
    }
    fn all(&self, n: u32) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.0.iter().filter(move |f| f.0 == n).map(|f| f.2)
    }
    fn string(&self, n: u32) -> Result<Option<String>, CodecError> {
        self.last(n).map(utf8).transpose()
    }
}

/// RFC 3339 in UTC: whole seconds for Time, six fractional digits for MicroTime (Go's layouts).
fn format_time(ts: jiff::Timestamp, micro: bool) -> String {
    let secs = ts.strftime("%Y-%m-%dT%H:%M:%S");
    if micro { format!("{secs}.{:06}Z", ts.subsec_nanosecond() / 1000) } else { format!("{secs}Z") }
}

const NS_PER_SECOND: u64 = 1_000_000_000;

/// A duration in nanoseconds as Go prints it (`1h2m3.5s`, `1.5ms`, `0s`).
pub(super) fn format_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    if u < NS_PER_SECOND {
        let (unit, div) = match u {
            0..1_000 => ("ns", 1),
            1_000..1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{sign}{}{unit}", decimal(u, div));
    }
    let (h, m) = (u / (3600 * NS_PER_SECOND), (u / (60 * NS_PER_SECOND)) % 60);
    let s = decimal(u % (60 * NS_PER_SECOND), NS_PER_SECOND);
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}

/// `v / div` with the fraction's trailing zeros trimmed.
fn decimal(v: u64, div: u64) -> String {
    let (whole, rem) = (v / div, v % div);
    if rem == 0 {
        return whole.to_string();
    }
    let width = div.ilog10() as usize;
    let frac = format!("{rem:0width$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// Parses a Go duration string (`300ms`, `-1.5h`, `2h45m`) into nanoseconds.
pub(super) fn parse_duration(text: &str) -> Result<i64, CodecError> {
    let bad = || CodecError::new(format!("time: invalid duration \"{text}\""));
    let (neg, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let (num, tail) = rest.split_at(num_end);
        let unit_end = tail.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(bad()),
        };
        let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
        if whole.is_empty() && frac.is_empty() {
            return Err(bad());
        }
        let whole: i128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
        total += whole * scale;
        let mut place = scale;
        for d in frac.bytes() {
            place /= 10;
            total += i128::from(d - b'0') * place;
        }
        if total > i128::from(i64::MAX) {
            return Err(bad());
        }
        rest = tail;
    }
    let total = if neg { -total } else { total };
    i64::try_from(total).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_and_parse_like_go() {
        for (ns, text) in [
            (0, "0s"),
            (1_500_000, "1.5ms"),
            (999, "999ns"),
            (2_000, "2µs"),
            (90 * 1_000_000_000, "1m30s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-5_000_000_000, "-5s"),
            (3_600_000_000_000, "1h0m0s"),
        ] {
            assert_eq!(format_duration(ns), text);
            assert_eq!(parse_duration(text).expect("parses"), ns, "{text}");
        }
        assert_eq!(parse_duration("2h45m").expect("parses"), (2 * 3600 + 45 * 60) * 1_000_000_000);
        for bad in ["", "1", "1x", "h", "-", ".s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
