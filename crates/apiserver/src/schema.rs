//! Structural-schema processing of incoming objects, as kube-apiserver does for custom
//! resources: unknown fields are pruned (or reported, under `fieldValidation=Strict`),
//! nulls of non-nullable fields dropped, defaults applied, and types and enums checked.

use std::sync::LazyLock;

use drydock_api::{FieldError, FieldErrorKind};
use serde_json::{Map, Value};

/// ObjectMeta's schema: metadata is checked the same way for every kind.
static OBJECT_META: LazyLock<Value> = LazyLock::new(|| {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema =
        settings.into_generator().into_root_schema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>();
    serde_json::to_value(schema).unwrap_or(Value::Null)
});

/// What processing found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Paths of fields the schema does not know (already removed from the object).
    pub unknown: Vec<String>,
    /// Type, enum and required-field violations.
    pub errors: Vec<FieldError>,
}

/// Processes a whole object against its kind's schema (`None`: anything goes below the root).
pub fn process(schema: Option<&Value>, obj: &mut Value) -> Outcome {
    let mut out = Outcome::default();
    let Value::Object(map) = obj else {
        out.errors.push(FieldError::new(FieldErrorKind::TypeInvalid, "", "object must be a JSON object"));
        return out;
    };
    if let Some(meta) = map.get_mut("metadata") {
        walk(&OBJECT_META, meta, "metadata", &mut out);
    }
    let Some(schema) = schema else { return out };
    let props = schema.get("properties").and_then(Value::as_object);
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        match props.and_then(|p| p.get(&k)) {
            Some(child) => {
                if map.get(&k).is_some_and(Value::is_null) && !nullable(child) {
                    map.remove(&k);
                    continue;
                }
                if let Some(v) = map.get_mut(&k) {
                    walk(child, v, &k, &mut out);
                }
            }
            None if preserves_unknown(schema) => {}
            None => {
                map.remove(&k);
                out.unknown.push(k);
            }
        }
    }
    apply_defaults(schema, map);
    out
}

fn nullable(s: &Value) -> bool {
    s.get("nullable").and_then(Value::as_bool).unwrap_or(false)
}

fn preserves_unknown(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool).unwrap_or(false)
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The schema's type, treating schemars' `["string", "null"]` form as nullable string.
fn schema_type(s: &Value) -> Option<&str> {
    match s.get("type")? {
        Value::String(t) => Some(t.as_str()),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

fn walk(s: &Value, v: &mut Value, path: &str, out: &mut Outcome) {
    let int_or_string = s.get("x-kubernetes-int-or-string").and_then(Value::as_bool).unwrap_or(false);
    if int_or_string {
        if !matches!(type_name(v), "integer" | "string") {
            out.errors.push(type_error(path, v, "integer or string"));
        }
        return;
    }
    if let Some(want) = schema_type(s) {
        let got = type_name(v);
        let ok = got == want || (want == "number" && got == "integer");
        if !ok {
            out.errors.push(type_error(path, v, want));
            return;
        }
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let names: Vec<String> = allowed.iter().map(|a| a.as_str().map_or(a.to_string(), str::to_string)).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        out.errors.push(FieldError::not_supported(path, v.clone(), &refs));
        return;
    }
    match v {
        Value::Object(map) => walk_object(s, map, path, out),
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn walk_object(s: &Value, map: &mut Map<String, Value>, path: &str, out: &mut Outcome) {
    let props = s.get("properties").and_then(Value::as_object);
    let additional = s.get("additionalProperties");
    // An object declaring no fields at all is treated as free-form (e.g. `fieldsV1`,
    // RawExtension): dropping data the schema cannot describe would be worse.
    let free = preserves_unknown(s)
        || matches!(additional, Some(Value::Bool(true)))
        || (props.is_none() && additional.is_none());
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        let child = props.and_then(|p| p.get(&k)).or(match additional {
            Some(a @ Value::Object(_)) => Some(a),
            _ => None,
        });
        match child {
            Some(child) => {
                if map.get(&k).is_some_and(Value::is_null) && !nullable(child) {
                    map.remove(&k);
                    continue;
                }
                if let Some(v) = map.get_mut(&k) {
                    walk(child, v, &child_path(path, &k), out);
                }
            }
            None if free => {}
            None => {
                map.remove(&k);
                out.unknown.push(child_path(path, &k));
            }
        }
    }
    apply_defaults(s, map);
}

fn apply_defaults(s: &Value, map: &mut Map<String, Value>) {
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, child) in props {
            if !map.contains_key(k)
                && let Some(d) = child.get("default")
                && !d.is_null()
            {
                map.insert(k.clone(), d.clone());
            }
        }
    }
}

/// Reports required fields that are missing. Runs after admission defaulting, as
/// kube-apiserver validates the schema after mutating webhooks.
pub fn missing_required(schema: Option<&Value>, obj: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    if let Some(s) = schema {
        required_walk(s, obj, "", &mut out);
    }
    out
}

fn required_walk(s: &Value, v: &Value, path: &str, out: &mut Vec<FieldError>) {
    match v {
        Value::Object(map) => {
            if let Some(required) = s.get("required").and_then(Value::as_array) {
                for r in required.iter().filter_map(Value::as_str) {
                    let implicit = path.is_empty() && r == "metadata";
                    if !implicit && !map.contains_key(r) {
                        out.push(FieldError::required(child_path(path, r), ""));
                    }
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            for (k, child_v) in map {
                if path.is_empty() && k == "metadata" {
                    continue;
                }
                let child = props.and_then(|p| p.get(k)).or(match s.get("additionalProperties") {
                    Some(a @ Value::Object(_)) => Some(a),
                    _ => None,
                });
                if let Some(child) = child {
                    required_walk(child, child_v, &child_path(path, k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    required_walk(item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn type_error(path: &str, v: &Value, want: &str) -> FieldError {
    let shown = match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    };
    FieldError {
        kind: FieldErrorKind::TypeInvalid,
        field: path.to_string(),
        value: Some(Value::String(type_name(v).to_string())),
        detail: format!("{path} in body must be of type {want}: {shown}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "spec":{"type":"object","required":["clusterName"],"properties":{
                "clusterName":{"type":"string"},
                "replicas":{"type":"integer","default":1},
                "maxSurge":{"x-kubernetes-int-or-string":true},
                "mode":{"type":"string","enum":["A","B"]},
                "labels":{"type":"object","additionalProperties":{"type":"string"}},
                "items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
                "raw":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
                "opt":{"type":"string"}
            }},
            "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}
        }})
    }

    #[test]
    fn prunes_unknown_and_applies_defaults() {
        let mut obj = json!({"apiVersion":"x/v1","kind":"X","metadata":{"name":"a","bogus":1},
            "spec":{"clusterName":"c","foo":1,"labels":{"a":"b"},"items":[{"name":"n","extra":true}],
                    "raw":{"anything":{"goes":1}},"opt":null,"maxSurge":"25%"},"top":1});
        let out = process(Some(&schema()), &mut obj);
        assert_eq!(out.unknown, vec!["metadata.bogus", "spec.foo", "spec.items[0].extra", "top"]);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(obj["spec"]["replicas"], 1);
        assert!(obj["spec"].get("opt").is_none());
        assert_eq!(obj["spec"]["raw"]["anything"]["goes"], 1);
    }

    #[test]
    fn reports_types_enums_and_required() {
        let mut obj = json!({"metadata":{"name":"a"},"spec":{"replicas":"three","mode":"C","maxSurge":true}});
        let out = process(Some(&schema()), &mut obj);
        let msgs: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
        assert!(
            msgs.contains(
                &"spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"three\""
                    .to_string()
            ),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.starts_with("spec.mode: Unsupported value: \"C\"")), "{msgs:?}");
        assert!(msgs.iter().any(|m| m.starts_with("spec.maxSurge: Invalid value")), "{msgs:?}");
        let missing: Vec<String> = missing_required(Some(&schema()), &obj).iter().map(ToString::to_string).collect();
        assert_eq!(missing, vec!["spec.clusterName: Required value".to_string()]);
    }
}
