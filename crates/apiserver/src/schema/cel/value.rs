//! JSON values as CEL sees them, typed by the schema: integers are `int`, numbers
//! `double`, `byte` strings `bytes`, `date`/`date-time` timestamps, `duration` durations;
//! declared properties appear under their escaped names and unknown fields are invisible.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use cel::Value as Cel;
use cel::objects::{Key, Map};
use serde_json::Value;

use super::escape::escape;
use crate::schema::node::{Additional, Node, Type};

/// Converts `v`, described by `node` (`None`: no schema, converted as plain JSON).
/// `resource` objects (the root, embedded resources) also show `apiVersion`, `kind` and
/// `metadata.name`/`generateName`.
pub fn to_cel(node: Option<&Node>, v: &Value, resource: bool) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => number(node, n),
        Value::String(s) => string(node, s),
        Value::Array(items) => {
            let item = node.and_then(|n| n.items.as_deref());
            Cel::List(Arc::new(items.iter().map(|i| to_cel(item, i, item.is_some_and(|n| n.embedded))).collect()))
        }
        Value::Object(map) => object(node, map, resource),
    }
}

fn number(node: Option<&Node>, n: &serde_json::Number) -> Cel {
    let float = node.is_some_and(|n| n.ty == Some(Type::Number));
    if !float {
        if let Some(i) = n.as_i64() {
            return Cel::Int(i);
        }
        if let Some(u) = n.as_u64() {
            return Cel::UInt(u);
        }
        if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && node.is_some_and(|n| n.ty == Some(Type::Integer))) {
            return Cel::Int(f as i64);
        }
    }
    Cel::Float(n.as_f64().unwrap_or(0.0))
}

fn string(node: Option<&Node>, s: &str) -> Cel {
    let format = node.and_then(|n| n.checks.as_ref()).and_then(|c| c.format.as_deref());
    let typed = match format {
        Some("byte") => base64::engine::general_purpose::STANDARD.decode(s).ok().map(|b| Cel::Bytes(Arc::new(b))),
        Some("date-time") => chrono::DateTime::parse_from_rfc3339(s).ok().map(Cel::Timestamp),
        Some("date") => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|dt| Cel::Timestamp(dt.and_utc().fixed_offset())),
        Some("duration") => parse_duration(s).map(Cel::Duration),
        _ => None,
    };
    typed.unwrap_or_else(|| Cel::String(Arc::new(s.to_string())))
}

fn object(node: Option<&Node>, map: &serde_json::Map<String, Value>, resource: bool) -> Cel {
    let mut out: HashMap<Key, Cel> = HashMap::with_capacity(map.len());
    let Some(node) = node.filter(|n| n.ty.is_some() || !n.properties.is_empty()) else {
        for (k, v) in map {
            out.insert(Key::String(Arc::new(k.clone())), to_cel(None, v, false));
        }
        return Cel::Map(Map { map: Arc::new(out) });
    };
    for (k, v) in map {
        if resource {
            match k.as_str() {
                "apiVersion" | "kind" => {
                    out.insert(Key::String(Arc::new(k.clone())), to_cel(None, v, false));
                    continue;
                }
                "metadata" => {
                    out.insert(Key::String(Arc::new(k.clone())), visible_metadata(v));
                    continue;
                }
                _ => {}
            }
        }
        if let Some(child) = node.property(k) {
            if let Some(name) = escape(k) {
                out.insert(Key::String(Arc::new(name)), to_cel(Some(child), v, child.embedded));
            }
        } else if let Additional::Schema(child) = &node.additional {
            // Map keys are data, not field names: no escaping.
            out.insert(Key::String(Arc::new(k.clone())), to_cel(Some(child), v, child.embedded));
        }
    }
    Cel::Map(Map { map: Arc::new(out) })
}

/// Rules see only `metadata.name` and `metadata.generateName`.
fn visible_metadata(v: &Value) -> Cel {
    let mut out: HashMap<Key, Cel> = HashMap::new();
    for field in ["name", "generateName"] {
        if let Some(Value::String(s)) = v.get(field) {
            out.insert(Key::String(Arc::new(field.to_string())), Cel::String(Arc::new(s.clone())));
        }
    }
    Cel::Map(Map { map: Arc::new(out) })
}

/// A Go-style duration (`1h30m`, `1.5s`, `-2m`), the shape `format: duration` values have.
pub fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    let mut nanos: f64 = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let value: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        nanos += value * scale;
    }
    let d = chrono::Duration::nanoseconds(nanos as i64);
    Some(if neg { -d } else { d })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::node::Compiler;
    use crate::schema::path::Path;
    use serde_json::json;

    #[test]
    fn types_values_by_schema() {
        let schema = json!({"type":"object","properties":{
            "n":{"type":"number"},"i":{"type":"integer"},"t":{"type":"string","format":"date-time"},
            "d":{"type":"string","format":"duration"},"b":{"type":"string","format":"byte"},
            "max-surge":{"type":"string"},"m":{"type":"object","additionalProperties":{"type":"string"}}}});
        let mut errs = Vec::new();
        let node =
            Compiler { errors: &mut errs, with_rules: false, free_form_objects: false }.node(&schema, &Path::ROOT);
        let v = json!({"n":1,"i":2,"t":"2024-01-02T03:04:05Z","d":"1m30s","b":"aGk=","max-surge":"x","m":{"a-b":"c"},"unknown":1});
        let Cel::Map(m) = to_cel(Some(&node), &v, false) else { panic!("not a map") };
        let get = |k: &str| m.map.get(&Key::String(Arc::new(k.to_string()))).cloned();
        assert_eq!(get("n"), Some(Cel::Float(1.0)));
        assert_eq!(get("i"), Some(Cel::Int(2)));
        assert!(matches!(get("t"), Some(Cel::Timestamp(_))));
        assert_eq!(get("d"), Some(Cel::Duration(chrono::Duration::seconds(90))));
        assert_eq!(get("b"), Some(Cel::Bytes(Arc::new(b"hi".to_vec()))));
        assert!(get("max__dash__surge").is_some());
        assert!(get("unknown").is_none());
        let Some(Cel::Map(inner)) = get("m") else { panic!("m is not a map") };
        assert!(inner.map.contains_key(&Key::String(Arc::new("a-b".to_string()))));
    }
}
