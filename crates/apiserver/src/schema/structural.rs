//! Checks of a CRD version's schema when the CRD is written: the structural-schema rules,
//! defaults that validate against their own schema, CEL rules that compile and fit the
//! cost limits.

use drydock_api::FieldError;
use serde_json::{Map, Value};

use super::cel::STATIC_LIMIT;
use super::node::{Additional, Compiler, Node};
use super::path::Path;
use super::prune::{self, Walk};

/// Keys a structural schema may not use.
const FORBIDDEN_KEYS: &[&str] = &[
    "definitions",
    "dependencies",
    "deprecated",
    "discriminator",
    "id",
    "patternProperties",
    "readOnly",
    "writeOnly",
    "xml",
    "$ref",
];

/// Keys not allowed inside `allOf`/`anyOf`/`oneOf`/`not`.
const JUNCTOR_FORBIDDEN: &[&str] = &["description", "type", "default", "additionalProperties", "nullable"];

/// Most all the rules of one schema may be estimated to cost together.
const TOTAL_LIMIT: f64 = 100_000_000.0;

/// Every problem with `schema`, located under `path` (e.g.
/// `spec.versions[0].schema.openAPIV3Schema`).
pub fn check_crd_schema(schema: &Value, path: &str) -> Vec<FieldError> {
    let root = Path::Root(path);
    let mut errors = Vec::new();
    let Value::Object(s) = schema else {
        errors.push(FieldError::required(root.render(), "must be an object"));
        return errors;
    };
    if s.get("type").and_then(Value::as_str) != Some("object") {
        errors.push(FieldError::invalid(
            root.child("type").render(),
            s.get("type").cloned().unwrap_or(Value::Null),
            "must be object at the root",
        ));
    }
    structure(s, &root, false, &mut errors);
    if let Some(Value::Object(meta)) = s.get("properties").and_then(|p| p.get("metadata")) {
        metadata(meta, &root.child("properties").key("metadata"), &mut errors);
    }
    defaults(s, &root, &mut errors);
    let compiled = Compiler { errors: &mut errors, with_rules: true, free_form_objects: false }.node(schema, &root);
    let mut total = 0.0;
    costs(&compiled, &mut total, &mut errors);
    if total > TOTAL_LIMIT {
        errors.push(FieldError::forbidden(
            root.render(),
            format!(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of {:.1}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                total / TOTAL_LIMIT
            ),
        ));
    }
    errors
}

/// The structural rules of one node and, recursively, its children.
fn structure(s: &Map<String, Value>, path: &Path<'_>, in_junctor: bool, errors: &mut Vec<FieldError>) {
    for key in FORBIDDEN_KEYS {
        if s.contains_key(*key) {
            errors.push(FieldError::forbidden(path.child(key).render(), "must not be specified"));
        }
    }
    if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        errors.push(FieldError::forbidden(
            path.child("uniqueItems").render(),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(false)) => errors.push(FieldError::forbidden(
            path.child("additionalProperties").render(),
            "additionalProperties cannot be set to false",
        )),
        Some(_) if s.contains_key("properties") => errors.push(FieldError::forbidden(
            path.child("additionalProperties").render(),
            "additionalProperties and properties are mutual exclusive",
        )),
        _ => {}
    }
    let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
    let typed = s.get("type").and_then(Value::as_str).is_some_and(|t| !t.is_empty());
    if in_junctor {
        for key in JUNCTOR_FORBIDDEN {
            if s.contains_key(*key) {
                errors.push(FieldError::forbidden(path.child(key).render(), "must be empty to be structural"));
            }
        }
    } else if !typed && !flag("x-kubernetes-int-or-string") && !flag("x-kubernetes-preserve-unknown-fields") {
        errors.push(FieldError::required(path.child("type").render(), "must not be empty for specified fields"));
    }
    if flag("x-kubernetes-int-or-string") && typed {
        errors.push(FieldError::forbidden(
            path.child("type").render(),
            "must be empty if x-kubernetes-int-or-string is true",
        ));
    }
    if flag("x-kubernetes-embedded-resource") && s.get("type").and_then(Value::as_str) != Some("object") {
        errors.push(FieldError::required(
            path.child("type").render(),
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    }
    children(s, path, in_junctor, errors);
}

fn children(s: &Map<String, Value>, path: &Path<'_>, in_junctor: bool, errors: &mut Vec<FieldError>) {
    if let Some(Value::Object(props)) = s.get("properties") {
        let p = path.child("properties");
        for (k, v) in props {
            if let Value::Object(child) = v {
                structure(child, &p.key(k), in_junctor, errors);
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(Value::Object(child)) = s.get(key) {
            structure(child, &path.child(key), in_junctor || key == "not", errors);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = s.get(key) {
            let p = path.child(key);
            for (i, v) in list.iter().enumerate() {
                if let Value::Object(child) = v {
                    let at = p.index(i);
                    structure(child, &at, true, errors);
                    junctor_fields(s, child, &at, errors);
                }
            }
        }
    }
}

/// Every property a junctor names must also be declared outside it.
fn junctor_fields(
    outer: &Map<String, Value>,
    junctor: &Map<String, Value>,
    path: &Path<'_>,
    errors: &mut Vec<FieldError>,
) {
    let declared = outer.get("properties").and_then(Value::as_object);
    if let Some(Value::Object(props)) = junctor.get("properties") {
        for k in props.keys() {
            if !declared.is_some_and(|d| d.contains_key(k)) {
                errors.push(FieldError::required(
                    path.child("properties").key(k).render(),
                    "must have a counterpart outside of the junctors",
                ));
            }
        }
    }
}

/// Under `metadata`, only `name` and `generateName` may be restricted.
fn metadata(meta: &Map<String, Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    for key in meta.keys() {
        match key.as_str() {
            "type" | "description" => {}
            "properties" => {
                if let Some(Value::Object(props)) = meta.get("properties") {
                    let p = path.child("properties");
                    for (k, v) in props {
                        let allowed = matches!(k.as_str(), "name" | "generateName")
                            && v.as_object().is_some_and(|o| o.get("type").and_then(Value::as_str) == Some("string"));
                        if !allowed {
                            errors.push(FieldError::forbidden(
                                p.key(k).render(),
                                "must not be specified: only name and generateName of metadata may be restricted",
                            ));
                        }
                    }
                }
            }
            other => errors.push(FieldError::forbidden(
                path.child(other).render(),
                "must not be specified: metadata is implicitly specified",
            )),
        }
    }
    if meta.get("type").and_then(Value::as_str).is_some_and(|t| t != "object") {
        errors.push(FieldError::invalid(path.child("type").render(), meta["type"].clone(), "must be object"));
    }
}

/// Each `default` must be valid for its own schema.
fn defaults(s: &Map<String, Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    if let Some(d) = s.get("default").filter(|d| !d.is_null()) {
        let mut scratch = Vec::new();
        let node = Compiler { errors: &mut scratch, with_rules: false, free_form_objects: false }
            .node(&Value::Object(s.clone()), path);
        let mut d = d.clone();
        let at = path.child("default");
        let mut unknown = Vec::new();
        let mut found = Vec::new();
        let mut w = Walk { unknown: &mut unknown, errors: &mut found, validate: true };
        prune::walk(&node, &mut d, None, &at, &mut w);
        super::late::run_at(&node, &d, &at, &mut found);
        errors.extend(found);
        for u in unknown {
            errors.push(FieldError::forbidden(u, "must not have unknown fields in default"));
        }
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        let p = path.child("properties");
        for (k, v) in props {
            if let Value::Object(child) = v {
                defaults(child, &p.key(k), errors);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(Value::Object(child)) = s.get(key) {
            defaults(child, &path.child(key), errors);
        }
    }
}

/// Rules whose estimated cost exceeds the per-rule limit, and the running total.
fn costs(node: &Node, total: &mut f64, errors: &mut Vec<FieldError>) {
    for rule in &node.rules {
        *total += rule.estimated_cost;
        if rule.estimated_cost > STATIC_LIMIT {
            errors.push(FieldError::forbidden(
                rule.at.clone(),
                format!(
                    "estimated rule cost exceeds budget by factor of {:.1}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                    rule.estimated_cost / STATIC_LIMIT
                ),
            ));
        }
    }
    for (_, child) in &node.properties {
        costs(child, total, errors);
    }
    if let Additional::Schema(a) = &node.additional {
        costs(a, total, errors);
    }
    if let Some(i) = &node.items {
        costs(i, total, errors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value) -> Vec<String> {
        check_crd_schema(&schema, "spec.versions[0].schema.openAPIV3Schema").iter().map(ToString::to_string).collect()
    }

    #[test]
    fn structural_rules() {
        let errs = check(json!({"type":"object","properties":{
            "spec":{"properties":{"a":{"type":"string","uniqueItems":true}},
                    "anyOf":[{"properties":{"b":{"type":"string"}}}]},
            "x":{"type":"object","additionalProperties":false},
            "y":{"type":"object","$ref":"#/definitions/z"},
            "metadata":{"type":"object","properties":{"labels":{"type":"object"}}}}}));
        let want = [
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value",
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].uniqueItems: Forbidden",
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].anyOf[0].properties[b].type: Forbidden",
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].anyOf[0].properties[b]: Required value",
            "spec.versions[0].schema.openAPIV3Schema.properties[x].additionalProperties: Forbidden",
            "spec.versions[0].schema.openAPIV3Schema.properties[y].$ref: Forbidden",
            "spec.versions[0].schema.openAPIV3Schema.properties[metadata].properties[labels]: Forbidden",
        ];
        for w in want {
            assert!(errs.iter().any(|e| e.starts_with(w)), "missing {w} in {errs:#?}");
        }
        assert_eq!(errs.len(), want.len(), "{errs:#?}");
    }

    #[test]
    fn defaults_rules_and_costs() {
        let errs = check(json!({"type":"object","properties":{"spec":{"type":"object","properties":{
            "n":{"type":"integer","maximum":5,"default":7},
            "ok":{"type":"integer","default":3},
            "r":{"type":"string","x-kubernetes-validations":[{"rule":"self ==== 1"}]},
            "l":{"type":"array","items":{"type":"array","items":{"type":"string"}},
                 "x-kubernetes-validations":[{"rule":"self.all(x, x.all(y, self.all(z, z.size() > 0)))"}]},
            "b":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10},
                 "x-kubernetes-validations":[{"rule":"self.all(x, self.exists(y, y == x))"}]}
        }}}}));
        let p = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties";
        assert!(errs.iter().any(|e| e.starts_with(&format!("{p}[n].default: Invalid value: 7"))), "{errs:#?}");
        assert!(
            errs.iter().any(|e| e.starts_with(&format!(
                "{p}[r].x-kubernetes-validations[0].rule: Invalid value: \"self ==== 1\": compilation failed"
            ))),
            "{errs:#?}"
        );
        assert!(
            errs.iter().any(|e| e.starts_with(&format!(
                "{p}[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget"
            ))),
            "{errs:#?}"
        );
        assert!(
            errs.iter().any(|e| e.starts_with(
                "spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total"
            )),
            "{errs:#?}"
        );
        assert_eq!(errs.len(), 4, "{errs:#?}");
    }
}
