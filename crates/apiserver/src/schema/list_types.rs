//! `x-kubernetes-list-type` checks: `set` items are unique, `map` items carry their keys and
//! are unique by them.

use drydock_api::FieldError;
use serde_json::{Map, Value};

use super::node::{ListType, Node};
use super::path::Path;

/// Checks one list's items against the node's list type.
pub fn check(node: &Node, items: &[Value], path: &Path<'_>, errors: &mut Vec<FieldError>) {
    match &node.list_type {
        ListType::Atomic => {}
        ListType::Set => duplicates(items.iter().map(Some), path, errors, |v| v.clone()),
        ListType::Map(keys) => {
            let mut identities = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Value::Object(obj) = item else {
                    identities.push(None);
                    continue;
                };
                let mut id = Map::new();
                let mut complete = true;
                for k in keys {
                    match obj.get(k) {
                        Some(v) => {
                            id.insert(k.clone(), v.clone());
                        }
                        None => {
                            complete = false;
                            let at = path.index(i);
                            errors.push(FieldError::required(at.child(k).render(), ""));
                        }
                    }
                }
                identities.push(complete.then_some(Value::Object(id)));
            }
            duplicates(identities.iter().map(Option::as_ref), path, errors, Value::clone);
        }
    }
}

/// Reports every item equal to an earlier one. Lists are short; for long ones the
/// serialized form is hashed instead of comparing pairwise.
fn duplicates<'v>(
    items: impl Iterator<Item = Option<&'v Value>>,
    path: &Path<'_>,
    errors: &mut Vec<FieldError>,
    shown: impl Fn(&Value) -> Value,
) {
    let mut seen: Vec<&Value> = Vec::new();
    let mut hashed = std::collections::HashSet::new();
    for (i, item) in items.enumerate() {
        let Some(item) = item else { continue };
        let dup = if seen.len() < 32 {
            let dup = seen.contains(&item);
            seen.push(item);
            if seen.len() == 32 {
                hashed.extend(seen.iter().map(|v| v.to_string()));
            }
            dup
        } else {
            !hashed.insert(item.to_string())
        };
        if dup {
            errors.push(FieldError::duplicate(path.index(i).render(), shown(item)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::node::Compiler;
    use serde_json::json;

    fn run(schema: Value, v: Value) -> Vec<String> {
        let mut errs = Vec::new();
        let node =
            Compiler { errors: &mut errs, with_rules: false, free_form_objects: false }.node(&schema, &Path::ROOT);
        let root = Path::Root("spec.x");
        check(&node, v.as_array().map(Vec::as_slice).unwrap_or_default(), &root, &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn sets_and_maps_report_duplicates_and_missing_keys() {
        let set = json!({"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}});
        assert_eq!(run(set, json!(["a", "b", "a"])), vec!["spec.x[2]: Duplicate value: \"a\""]);
        let long: Vec<Value> = (0..40).map(|i| json!(i % 35)).collect();
        let set = json!({"type":"array","x-kubernetes-list-type":"set","items":{"type":"integer"}});
        assert_eq!(run(set, Value::Array(long)).len(), 5);
        let map = json!({"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
            "items":{"type":"object","properties":{"name":{"type":"string"}}}});
        assert_eq!(
            run(map, json!([{"name":"a"},{"name":"b"},{"name":"a","v":1},{"v":2}])),
            vec!["spec.x[3].name: Required value", "spec.x[2]: Duplicate value: {\"name\":\"a\"}"]
        );
    }
}
