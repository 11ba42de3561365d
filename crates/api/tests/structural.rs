//! Every generated CRD schema is structural, so a Kubernetes API server would accept it and
//! drydock's server can prune, default and type-check with it.

use crate::common;

use serde_json::Value;

const FORBIDDEN_KEYS: &[&str] =
    &["$ref", "$schema", "definitions", "additionalItems", "dependencies", "patternProperties", "id", "const"];
const LOGIC_KEYS: &[&str] = &["allOf", "anyOf", "oneOf", "not"];

fn check(node: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(obj) = node.as_object() else {
        problems.push(format!("{path}: schema is not an object"));
        return;
    };
    for key in FORBIDDEN_KEYS {
        if obj.contains_key(*key) {
            problems.push(format!("{path}: has {key}"));
        }
    }
    for key in LOGIC_KEYS {
        if obj.contains_key(*key) {
            // Structural schemas may only carry value validations in logic junctors; we use none.
            problems.push(format!("{path}: has {key}"));
        }
    }
    if obj.get("uniqueItems") == Some(&Value::Bool(true)) {
        problems.push(format!("{path}: uniqueItems is not allowed"));
    }
    let int_or_string = obj.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let preserve = obj.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if obj.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        problems.push(format!("{path}: x-kubernetes-preserve-unknown-fields must be true if set"));
    }
    let type_ = obj.get("type").and_then(Value::as_str);
    match (type_, int_or_string) {
        (Some(t), true) => problems.push(format!("{path}: int-or-string with type {t}")),
        (None, false) if !preserve => problems.push(format!("{path}: no type")),
        _ => {}
    }
    if let Some(t) = type_
        && !["object", "array", "string", "integer", "number", "boolean"].contains(&t)
    {
        problems.push(format!("{path}: unknown type {t}"));
    }
    if obj.contains_key("properties") && obj.contains_key("additionalProperties") {
        problems.push(format!("{path}: both properties and additionalProperties"));
    }
    if (obj.contains_key("properties") || obj.contains_key("additionalProperties")) && type_ != Some("object") {
        problems.push(format!("{path}: properties on a non-object"));
    }
    match (type_, obj.get("items")) {
        (Some("array"), None) => problems.push(format!("{path}: array without items")),
        (Some("array"), Some(items)) => check(items, &format!("{path}[]"), problems),
        (_, Some(_)) => problems.push(format!("{path}: items on a non-array")),
        _ => {}
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            check(child, &format!("{path}.{name}"), problems);
        }
    }
    match obj.get("additionalProperties") {
        Some(Value::Object(_)) => check(&obj["additionalProperties"], &format!("{path}{{}}"), problems),
        Some(other) => problems.push(format!("{path}: additionalProperties is {other}")),
        None => {}
    }
    if let (Some(values), Some(t)) = (obj.get("enum").and_then(Value::as_array), type_) {
        for v in values {
            let ok = match t {
                "string" => v.is_string(),
                "integer" => v.is_i64() || v.is_u64(),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                _ => true,
            };
            if !ok {
                problems.push(format!("{path}: enum value {v} is not a {t}"));
            }
        }
    }
}

#[test]
fn generated_schemas_are_structural() {
    let mut problems = Vec::new();
    for (name, crd) in common::our_crds() {
        for version in crd["spec"]["versions"].as_array().unwrap() {
            let schema = &version["schema"]["openAPIV3Schema"];
            assert!(schema.is_object(), "{name} has no schema");
            let mut p = Vec::new();
            check(schema, "", &mut p);
            problems.extend(p.into_iter().map(|e| format!("{name}: {e}")));
            // Only apiVersion, kind, metadata, spec and status at the root.
            for key in schema["properties"].as_object().unwrap().keys() {
                assert!(
                    ["apiVersion", "kind", "metadata", "spec", "status"].contains(&key.as_str()),
                    "{name}: unexpected root field {key}"
                );
            }
        }
    }
    assert!(problems.is_empty(), "non-structural schemas:\n{}", problems.join("\n"));
}

#[test]
fn checker_rejects_non_structural_shapes() {
    let bad = serde_json::json!({
        "type": "object",
        "properties": {
            "untyped": {},
            "list": { "type": "array" },
            "both": { "type": "object", "properties": {}, "additionalProperties": { "type": "string" } },
            "choice": { "type": "object", "oneOf": [ { "properties": { "a": { "type": "string" } } } ] },
            "ios": { "type": "string", "x-kubernetes-int-or-string": true },
        }
    });
    let mut p = Vec::new();
    check(&bad, "", &mut p);
    assert_eq!(p.len(), 5, "{p:#?}");
}
