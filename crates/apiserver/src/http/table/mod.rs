//! `meta.k8s.io/v1` Table responses for `kubectl get`: NAME, the kind's printer columns
//! (evaluated with a JSONPath subset, or computed: `computed`, and one module of cells per
//! area), and AGE; dates rendered as kubectl's human durations.

mod cluster;
mod computed;
mod network;
mod workloads;

use drydock_api::{PrinterColumn, ResourceDef};
use serde_json::{Value, json};

use computed::computed_cell;

/// Column definitions of a kind's table.
pub fn columns(def: &ResourceDef) -> Vec<PrinterColumn> {
    let mut cols = vec![
        PrinterColumn::new("Name", "string", ".metadata.name").description("Name must be unique within a namespace."),
    ];
    cols.extend(def.printer_columns.iter().cloned());
    // A CRD shows AGE only when it declares no columns (it names AGE itself otherwise); the
    // built-in kinds' printers end with AGE unless they show the creation time another way.
    let dated = |c: &PrinterColumn| c.name.eq_ignore_ascii_case("age") || c.json_path == "#createdAt";
    let age = if crate::builtin::is_builtin_group(&def.group) {
        !def.printer_columns.iter().any(dated)
    } else {
        def.printer_columns.is_empty()
    };
    if age {
        cols.push(PrinterColumn::new("Age", "date", ".metadata.creationTimestamp"));
    }
    cols
}

fn column_defs(cols: &[PrinterColumn]) -> Value {
    Value::Array(
        cols.iter()
            .map(|c| {
                let (ty, format) = match c.type_.as_str() {
                    "date" => ("string", "date"),
                    t => (t, c.format.as_str()),
                };
                let format = if c.name == "Name" { "name" } else { format };
                json!({"name": c.name, "type": ty, "format": format, "description": c.description, "priority": c.priority})
            })
            .collect(),
    )
}

/// One row for an object.
pub fn row(cols: &[PrinterColumn], obj: &Value, include_object: &str) -> Value {
    let cells: Vec<Value> = cols.iter().map(|c| cell(c, obj)).collect();
    let object = match include_object {
        "None" => Value::Null,
        "Object" => obj.clone(),
        _ => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]})
        }
    };
    json!({"cells": cells, "object": object})
}

/// A whole table.
pub fn table(def: &ResourceDef, objs: &[Value], rv: &str, cont: Option<&str>, include_object: &str) -> Value {
    let cols = columns(def);
    let rows: Vec<Value> = objs.iter().map(|o| row(&cols, o, include_object)).collect();
    let mut meta = json!({"resourceVersion": rv});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": column_defs(&cols), "rows": rows})
}

fn cell(c: &PrinterColumn, obj: &Value) -> Value {
    if let Some(computed) = c.json_path.strip_prefix('#') {
        return computed_cell(computed, obj);
    }
    let Some(v) = jsonpath(obj, &c.json_path) else {
        return Value::Null;
    };
    match c.type_.as_str() {
        "date" => v.as_str().map_or(Value::Null, |s| json!(age(s))),
        "integer" | "number" | "boolean" => v.clone(),
        _ => match v {
            Value::String(_) => v.clone(),
            Value::Null => Value::Null,
            other => json!(other.to_string()),
        },
    }
}

/// Evaluates a JSONPath subset: `.a.b`, escaped dots (`.labels.x\.io/y`), `[n]`, `[*]` and
/// `[?(@.field=="value")]`. Returns the first match.
pub fn jsonpath<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut cur = vec![obj];
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let (field, after) = split_field(r);
            cur = cur.into_iter().filter_map(|v| v.get(&field)).collect();
            rest = after;
        } else if let Some((key, after)) = rest.strip_prefix('[').and_then(quoted_key) {
            cur = cur.into_iter().filter_map(|v| v.get(&key)).collect();
            rest = after;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = &r[..end];
            rest = &r[end + 1..];
            cur = if inner == "*" {
                cur.into_iter().flat_map(|v| v.as_array().into_iter().flatten()).collect()
            } else if let Some(filter) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                let (field, want) = filter.split_once("==")?;
                let want = want.trim().trim_matches('"').trim_matches('\'');
                let field = field.trim();
                cur.into_iter()
                    .flat_map(|v| v.as_array().into_iter().flatten())
                    .filter(|item| item.get(field).and_then(Value::as_str) == Some(want))
                    .collect()
            } else {
                let i: usize = inner.parse().ok()?;
                cur.into_iter().filter_map(|v| v.get(i)).collect()
            };
        } else {
            return None;
        }
    }
    cur.into_iter().next()
}

/// A quoted key in brackets (`['cluster\.x-k8s\.io/cluster-name']`, as upstream's CRDs
/// write label columns, or `["key"]`), after the `[`: the key with its backslash escapes
/// removed, as client-go's JSONPath reads it, and what follows the `]`.
fn quoted_key(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut key = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => key.push(chars.next()?.1),
            c if c == quote => return s[i + 1..].strip_prefix(']').map(|after| (key, after)),
            c => key.push(c),
        }
    }
    None
}

/// Splits the next field name off a path, honouring `\.` escapes.
fn split_field(s: &str) -> (String, &str) {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    out.push(n);
                }
            }
            '.' | '[' => return (out, &s[i..]),
            other => out.push(other),
        }
    }
    (out, "")
}

/// Time since an RFC 3339 timestamp, as kubectl prints ages.
pub fn age(ts: &str) -> String {
    let Ok(t) = ts.parse::<jiff::Timestamp>() else {
        return "<invalid>".into();
    };
    let secs = jiff::Timestamp::now().as_second() - t.as_second();
    human_duration(secs)
}

/// apimachinery's HumanDuration.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let d = (hours / 24) % 365;
        return if d == 0 { format!("{}y", hours / 24 / 365) } else { format!("{}y{d}d", hours / 24 / 365) };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_subset() {
        let o = json!({"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"c1"}},
            "status":{"conditions":[{"type":"A","status":"False"},{"type":"Ready","status":"True"}],"list":[1,2]}});
        assert_eq!(jsonpath(&o, ".metadata.labels.cluster\\.x-k8s\\.io/cluster-name"), Some(&json!("c1")));
        // Upstream's CRDs write label columns as quoted keys with escaped dots.
        assert_eq!(jsonpath(&o, ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"), Some(&json!("c1")));
        assert_eq!(jsonpath(&o, ".metadata.labels[\"cluster.x-k8s.io/cluster-name\"]"), Some(&json!("c1")));
        assert_eq!(jsonpath(&o, ".metadata.labels['missing']"), None);
        assert_eq!(jsonpath(&o, ".metadata.labels['unterminated"), None);
        assert_eq!(jsonpath(&o, ".status.conditions[?(@.type==\"Ready\")].status"), Some(&json!("True")));
        assert_eq!(jsonpath(&o, ".status.list[1]"), Some(&json!(2)));
        assert_eq!(jsonpath(&o, ".status.missing"), None);
    }

    #[test]
    fn human_durations() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(125), "2m5s");
        assert_eq!(human_duration(3600 * 3 + 60 * 5), "3h5m");
        assert_eq!(human_duration(86400 * 3), "3d");
    }
}
