//! Strategic merge patch: lists merge by their key (`lists`), and the directives kubectl
//! sends are honoured: `$patch: replace|delete|merge` on maps and list items,
//! `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.

use serde_json::{Map, Value};

use super::lists::{ListStrategy, list_strategy};

const SET_ORDER: &str = "$setElementOrder/";
const DELETE_PRIMITIVES: &str = "$deleteFromPrimitiveList/";

/// Applies a strategic merge patch to an object of the kind named in its `kind`.
pub fn strategic_merge(doc: &mut Value, patch: &Value) -> Result<(), String> {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    Merge { kind: &kind }.object(doc, patch, "")
}

struct Merge<'a> {
    kind: &'a str,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn directive(v: &Value) -> Option<&str> {
    v.get("$patch").and_then(Value::as_str)
}

impl Merge<'_> {
    fn object(&self, doc: &mut Value, patch: &Value, path: &str) -> Result<(), String> {
        let Value::Object(p) = patch else {
            *doc = patch.clone();
            return Ok(());
        };
        match directive(patch) {
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
            if k == "$patch" || k == "$retainKeys" || k.starts_with(SET_ORDER) {
                continue;
            }
            if let Some(field) = k.strip_prefix(DELETE_PRIMITIVES) {
                let remove: Vec<&Value> = v.as_array().map(|a| a.iter().collect()).unwrap_or_default();
                if let Some(Value::Array(list)) = d.get_mut(field) {
                    list.retain(|x| !remove.contains(&x));
                }
                continue;
            }
            self.field(d, k, v, &join(path, k))?;
        }
        for (k, order) in p {
            if let (Some(field), Value::Array(order)) = (k.strip_prefix(SET_ORDER), order)
                && let Some(Value::Array(list)) = d.get_mut(field)
            {
                let key = match list_strategy(self.kind, &join(path, field)) {
                    ListStrategy::ByKey(key) => Some(key),
                    _ => None,
                };
                reorder(list, order, key);
            }
        }
        Ok(())
    }

    fn field(&self, d: &mut Map<String, Value>, k: &str, v: &Value, path: &str) -> Result<(), String> {
        match v {
            Value::Null => {
                d.remove(k);
            }
            Value::Object(_) if directive(v) == Some("delete") => {
                d.remove(k);
            }
            Value::Object(_) => {
                let slot = d.entry(k.to_string()).or_insert(Value::Null);
                self.object(slot, v, path)?;
            }
            Value::Array(items) => {
                let slot = d.entry(k.to_string()).or_insert(Value::Array(Vec::new()));
                self.list(slot, items, path)?;
            }
            other => {
                d.insert(k.to_string(), other.clone());
            }
        }
        Ok(())
    }

    fn list(&self, doc: &mut Value, items: &[Value], path: &str) -> Result<(), String> {
        let strategy = list_strategy(self.kind, path);
        let replace_all = items.iter().any(|i| directive(i) == Some("replace"));
        if strategy == ListStrategy::Replace || replace_all || !doc.is_array() {
            let cleaned: Vec<Value> = items.iter().filter(|i| directive(i).is_none()).cloned().collect();
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
                    if directive(item) == Some("delete") {
                        if let Some(i) = pos {
                            list.remove(i);
                        }
                        continue;
                    }
                    match pos {
                        Some(i) => self.object(&mut list[i], item, path)?,
                        None => {
                            let mut fresh = Value::Object(Map::new());
                            self.object(&mut fresh, item, path)?;
                            list.push(fresh);
                        }
                    }
                }
            }
            ListStrategy::Replace => {}
        }
        Ok(())
    }
}

/// Orders `list` as `order` lists its elements (by merge key, or by value for
/// primitives); elements `order` does not name keep their relative order, after those it does.
fn reorder(list: &mut Vec<Value>, order: &[Value], key: Option<&str>) {
    let id = |v: &Value| match key {
        Some(k) => v.get(k).cloned(),
        None => Some(v.clone()),
    };
    let mut rest: Vec<Value> = std::mem::take(list);
    for wanted in order {
        let wanted = id(wanted);
        if let Some(i) = rest.iter().position(|e| wanted.is_some() && id(e) == wanted) {
            list.push(rest.remove(i));
        }
    }
    list.append(&mut rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn three_way_apply_patch_of_a_deployment() {
        let mut doc = json!({"kind":"Deployment","spec":{"template":{"spec":{"containers":[
            {"name":"web","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}]},
            {"name":"side","image":"busybox"}]}}}});
        // What `kubectl apply` sends after 443 was removed from the manifest and the image changed.
        let p = json!({"spec":{"template":{"spec":{
            "$setElementOrder/containers":[{"name":"side"},{"name":"web"}],
            "containers":[{"name":"web","image":"nginx:2",
                "$setElementOrder/ports":[{"containerPort":80}],
                "ports":[{"containerPort":443,"$patch":"delete"}]}]}}}});
        strategic_merge(&mut doc, &p).unwrap();
        let cs = &doc["spec"]["template"]["spec"]["containers"];
        assert_eq!(cs[0]["name"], "side");
        assert_eq!(cs[1]["image"], "nginx:2");
        assert_eq!(cs[1]["ports"], json!([{"containerPort":80,"protocol":"TCP"}]));
    }

    #[test]
    fn service_ports_merge_by_port_and_maps_can_be_deleted() {
        let mut doc = json!({"kind":"Service","spec":{"ports":[{"port":80,"targetPort":8080}],"selector":{"a":"b"}}});
        let p = json!({"spec":{"ports":[{"port":80,"name":"http"},{"port":443}],"selector":{"$patch":"delete"}}});
        strategic_merge(&mut doc, &p).unwrap();
        assert_eq!(doc["spec"]["ports"], json!([{"port":80,"targetPort":8080,"name":"http"},{"port":443}]));
        assert!(doc["spec"].get("selector").is_none());
        let p = json!({"spec":{"ports":[{"$patch":"replace"},{"port":8443}]}});
        strategic_merge(&mut doc, &p).unwrap();
        assert_eq!(doc["spec"]["ports"], json!([{"port":8443}]));
    }
}
