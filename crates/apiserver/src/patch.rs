//! PATCH bodies: JSON patch (RFC 6902, with Go's `test` semantics), JSON merge patch
//! (RFC 7396) and the strategic merge patch subset the built-in kinds need.

use serde_json::{Map, Value};

/// The content types of PATCH requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" | "application/apply-patch+cbor" => {
                Some(Self::Apply)
            }
            _ => None,
        }
    }
}

/// Applies an RFC 6902 patch. As in kube-apiserver, `test` of a missing path against
/// `null` succeeds (kube-rs' finalizer helper relies on it).
pub fn json_patch(doc: &mut Value, body: &Value) -> Result<(), String> {
    let ops: json_patch::Patch =
        serde_json::from_value(body.clone()).map_err(|e| format!("invalid JSON patch: {e}"))?;
    for op in ops.0 {
        if let json_patch::PatchOperation::Test(t) = &op
            && t.value.is_null()
            && doc.pointer(t.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(&op)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Applies an RFC 7396 merge patch.
pub fn merge_patch(doc: &mut Value, patch: &Value) {
    json_patch::merge(doc, patch);
}

/// How a list at some path merges under strategic merge patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListStrategy {
    Replace,
    /// A set of primitives: union.
    Primitives,
    /// Objects merged by the named key.
    ByKey(&'static str),
}

/// patchStrategy/patchMergeKey of the list fields of the built-in kinds served, by path
/// (list indices elided).
fn list_strategy(path: &str) -> ListStrategy {
    use ListStrategy::*;
    match path {
        "metadata.finalizers" => Primitives,
        "metadata.ownerReferences" => ByKey("uid"),
        "status.conditions" | "status.addresses" => ByKey("type"),
        "spec.taints" => ByKey("key"),
        "spec.containers"
        | "spec.initContainers"
        | "spec.ephemeralContainers"
        | "spec.volumes"
        | "spec.imagePullSecrets"
        | "spec.containers.env"
        | "spec.initContainers.env" => ByKey("name"),
        "spec.containers.ports" | "spec.initContainers.ports" => ByKey("containerPort"),
        "spec.containers.volumeMounts" | "spec.initContainers.volumeMounts" => ByKey("mountPath"),
        "status.containerStatuses" | "status.initContainerStatuses" => ByKey("name"),
        _ => Replace,
    }
}

/// Applies a strategic merge patch (the subset built-in kinds need: merge keys, `$patch`,
/// `$retainKeys`, `$deleteFromPrimitiveList/`, `$setElementOrder/`).
pub fn strategic_merge(doc: &mut Value, patch: &Value) -> Result<(), String> {
    smp_object(doc, patch, "")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn smp_object(doc: &mut Value, patch: &Value, path: &str) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *doc = patch.clone();
        return Ok(());
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut clean = p.clone();
            clean.remove("$patch");
            *doc = Value::Object(clean);
            return Ok(());
        }
        Some("delete") => {
            *doc = Value::Object(Map::new());
            return Ok(());
        }
        Some(other) if other != "merge" => return Err(format!("unknown patch type: {other}")),
        _ => {}
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(d) = doc else { return Ok(()) };
    if let Some(Value::Array(retain)) = p.get("$retainKeys") {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        d.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in p {
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let remove: Vec<&Value> = v.as_array().map(|a| a.iter().collect()).unwrap_or_default();
            if let Some(Value::Array(list)) = d.get_mut(field) {
                list.retain(|x| !remove.contains(&x));
            }
            continue;
        }
        let child_path = join(path, k);
        match v {
            Value::Null => {
                d.remove(k);
            }
            Value::Object(_) => {
                let slot = d.entry(k.clone()).or_insert(Value::Null);
                smp_object(slot, v, &child_path)?;
            }
            Value::Array(items) => {
                let slot = d.entry(k.clone()).or_insert(Value::Array(Vec::new()));
                smp_list(slot, items, &child_path)?;
            }
            other => {
                d.insert(k.clone(), other.clone());
            }
        }
    }
    Ok(())
}

fn smp_list(doc: &mut Value, items: &[Value], path: &str) -> Result<(), String> {
    let strategy = list_strategy(path);
    if strategy == ListStrategy::Replace || !doc.is_array() {
        let cleaned: Vec<Value> = items.iter().filter(|i| i.get("$patch").is_none()).cloned().collect();
        *doc = Value::Array(cleaned);
        return Ok(());
    }
    let Value::Array(list) = doc else {
        return Ok(());
    };
    match strategy {
        ListStrategy::Primitives => {
            for item in items {
                if !list.contains(item) {
                    list.push(item.clone());
                }
            }
        }
        ListStrategy::ByKey(key) => {
            for item in items {
                let Some(kv) = item.get(key) else {
                    return Err(format!("map: {item} does not contain declared merge key: {key}"));
                };
                let pos = list.iter().position(|e| e.get(key) == Some(kv));
                if item.get("$patch").and_then(Value::as_str) == Some("delete") {
                    if let Some(i) = pos {
                        list.remove(i);
                    }
                    continue;
                }
                match pos {
                    Some(i) => smp_object(&mut list[i], item, path)?,
                    None => list.push(item.clone()),
                }
            }
        }
        ListStrategy::Replace => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_test_of_missing_path_against_null_succeeds() {
        let mut doc = json!({"metadata":{"name":"a"}});
        let p = json!([{"op":"test","path":"/metadata/finalizers","value":null},
                       {"op":"add","path":"/metadata/finalizers","value":["x/y"]}]);
        json_patch(&mut doc, &p).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["x/y"]));
        let bad = json!([{"op":"test","path":"/metadata/finalizers","value":null}]);
        assert!(json_patch(&mut doc, &bad).is_err(), "present value is not null");
        assert!(json_patch(&mut doc, &json!({"op":"add"})).is_err());
    }

    #[test]
    fn strategic_merge_by_key_and_directives() {
        let mut doc = json!({"metadata":{"finalizers":["a"],"ownerReferences":[{"uid":"1","name":"x"}],"labels":{"k":"v","gone":"1"}},
                             "status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Other","status":"True"}]}});
        let p = json!({"metadata":{"finalizers":["b"],"ownerReferences":[{"uid":"2","name":"y"}],"labels":{"gone":null}},
                       "status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Other","$patch":"delete"}]}});
        strategic_merge(&mut doc, &p).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(doc["metadata"]["ownerReferences"].as_array().unwrap().len(), 2);
        assert_eq!(doc["metadata"]["labels"], json!({"k":"v"}));
        assert_eq!(doc["status"]["conditions"], json!([{"type":"Ready","status":"True"}]));

        let p = json!({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}, "data":{"$patch":"replace","x":"1"}});
        strategic_merge(&mut doc, &p).unwrap();
        assert_eq!(doc["metadata"]["finalizers"], json!(["b"]));
        assert_eq!(doc["data"], json!({"x":"1"}));
    }
}
