//! The Swagger 2.0 document of everything served (`/openapi/v2`), derived from the v3
//! group-version documents: definitions instead of components, body parameters instead
//! of request bodies, and schemas reduced to what Swagger 2.0 can say (no
//! `allOf`/`anyOf`/`oneOf`/`not`; a `nullable` schema loses its type, as kube-apiserver
//! publishes custom resource schemas).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

const V3_REFS: &str = "#/components/schemas/";
const V2_REFS: &str = "#/definitions/";

/// Merges the v3 documents into one Swagger 2.0 document.
pub fn document(v3: &BTreeMap<String, Value>) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for doc in v3.values() {
        if let Some(Value::Object(p)) = doc.get("paths") {
            for (path, item) in p {
                paths.insert(path.clone(), path_item(item));
            }
        }
        if let Some(Value::Object(s)) = doc.pointer("/components/schemas") {
            for (name, schema) in s {
                if !definitions.contains_key(name) {
                    definitions.insert(name.clone(), swagger_schema(schema));
                }
            }
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "drydock", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "definitions": definitions,
    })
}

fn path_item(item: &Value) -> Value {
    let Value::Object(item) = item else { return item.clone() };
    let mut out = Map::new();
    for (key, value) in item {
        let converted = match key.as_str() {
            "parameters" => parameters(value),
            _ => operation(value),
        };
        out.insert(key.clone(), converted);
    }
    Value::Object(out)
}

/// Query and path parameters carry their type directly in Swagger 2.0.
fn parameters(params: &Value) -> Value {
    let Value::Array(params) = params else { return params.clone() };
    let converted = params.iter().map(|p| {
        let Value::Object(p) = p else { return p.clone() };
        let mut out = p.clone();
        if let Some(Value::Object(schema)) = out.remove("schema") {
            out.extend(schema);
        }
        Value::Object(out)
    });
    Value::Array(converted.collect())
}

fn operation(op: &Value) -> Value {
    let Value::Object(op) = op else { return op.clone() };
    let mut out = Map::new();
    let mut params = op.get("parameters").map(parameters).and_then(|p| p.as_array().cloned()).unwrap_or_default();
    let mut produces: Vec<String> = Vec::new();
    for (key, value) in op {
        match key.as_str() {
            "parameters" => {}
            "requestBody" => {
                let (types, schema) = first_schema(value.get("content"));
                out.insert("consumes".into(), json!(types));
                params.insert(0, json!({"name": "body", "in": "body", "required": value.get("required").cloned().unwrap_or(json!(false)), "schema": schema}));
            }
            "responses" => {
                let mut responses = Map::new();
                for (code, r) in value.as_object().into_iter().flatten() {
                    let (types, schema) = first_schema(r.get("content"));
                    let mut response = json!({"description": r.get("description").cloned().unwrap_or(json!(""))});
                    if !schema.is_null() {
                        response["schema"] = schema;
                    }
                    for t in types {
                        if !produces.contains(&t) {
                            produces.push(t);
                        }
                    }
                    responses.insert(code.clone(), response);
                }
                out.insert("responses".into(), Value::Object(responses));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    if !produces.is_empty() {
        out.insert("produces".into(), json!(produces));
    }
    out.insert("schemes".into(), json!(["https"]));
    Value::Object(out)
}

/// The media types of a v3 `content` map and the (first) schema, with v2 references.
fn first_schema(content: Option<&Value>) -> (Vec<String>, Value) {
    let Some(Value::Object(content)) = content else { return (Vec::new(), Value::Null) };
    let schema = content.values().find_map(|c| c.get("schema")).map(swagger_schema).unwrap_or(Value::Null);
    (content.keys().cloned().collect(), schema)
}

/// Rewrites one schema for Swagger 2.0.
pub fn swagger_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(s) => {
            let mut out = Map::new();
            // A single `allOf` reference (how v3 gives a reference a description) becomes
            // the reference itself.
            if let Some(Value::Array(all)) = s.get("allOf")
                && let [single] = all.as_slice()
                && let Some(r) = single.get("$ref")
            {
                out.insert("$ref".into(), swagger_schema(r));
            }
            let nullable = s.get("nullable") == Some(&Value::Bool(true));
            for (key, value) in s {
                match key.as_str() {
                    "allOf" | "anyOf" | "oneOf" | "not" | "nullable" => {}
                    "type" | "items" | "properties" if nullable => {}
                    "$ref" => {
                        out.insert(key.clone(), swagger_schema(value));
                    }
                    // Keys of `properties` are names, not keywords.
                    "properties" => {
                        let props =
                            value.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), swagger_schema(v)));
                        out.insert(key.clone(), Value::Object(props.collect()));
                    }
                    _ => {
                        out.insert(key.clone(), swagger_schema(value));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(swagger_schema).collect()),
        Value::String(r) if r.starts_with(V3_REFS) => Value::String(r.replacen(V3_REFS, V2_REFS, 1)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_lose_what_swagger_cannot_say() {
        let v3 = json!({
            "properties": {
                "meta": {"allOf": [{"$ref": "#/components/schemas/X"}], "description": "d"},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                "maybe": {"nullable": true, "type": "object", "properties": {"a": {"type": "string"}}, "description": "m"},
                "allOf": {"type": "string"}
            }
        });
        let v2 = swagger_schema(&v3);
        assert_eq!(v2["properties"]["meta"], json!({"$ref": "#/definitions/X", "description": "d"}));
        assert_eq!(v2["properties"]["either"], json!({"x-kubernetes-int-or-string": true}));
        assert_eq!(v2["properties"]["maybe"], json!({"description": "m"}));
        assert_eq!(v2["properties"]["allOf"], json!({"type": "string"}));
    }
}
