//! Minimal JSON merge patches: the difference between an object as read and as the
//! reconciler wants it, so a reconcile writes only what changed (and nothing when nothing did).

use serde_json::{Map, Value};

/// The RFC 7396 merge patch turning `old` into `new`, or `None` when they are equal.
pub fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    if old == new {
        return None;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                match o.get(k) {
                    Some(ov) => {
                        if let Some(d) = merge_diff(ov, nv) {
                            patch.insert(k.clone(), d);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), nv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !n.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            if patch.is_empty() { None } else { Some(Value::Object(patch)) }
        }
        // Arrays and scalars are replaced whole; a null in `new` must be sent as an explicit
        // removal, which a merge patch cannot express inside a value: replace the parent instead.
        _ => Some(new.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diffs() {
        assert_eq!(merge_diff(&json!({"a":1}), &json!({"a":1})), None);
        assert_eq!(merge_diff(&json!({"a":1,"b":2}), &json!({"a":1,"c":3})), Some(json!({"b":null,"c":3})));
        assert_eq!(merge_diff(&json!({"s":{"x":[1]}}), &json!({"s":{"x":[1,2]}})), Some(json!({"s":{"x":[1,2]}})));
        let mut old = json!({"spec":{"r":1},"status":{"p":"A"}});
        let new = json!({"spec":{"r":2},"status":{"p":"A"}});
        let p = merge_diff(&old, &new).unwrap();
        json_patch_apply(&mut old, &p);
        assert_eq!(old, new);
    }

    fn json_patch_apply(doc: &mut Value, patch: &Value) {
        if let (Value::Object(d), Value::Object(p)) = (&mut *doc, patch) {
            for (k, v) in p {
                if v.is_null() {
                    d.remove(k);
                } else if v.is_object() && d.get(k).is_some_and(Value::is_object) {
                    json_patch_apply(d.get_mut(k).unwrap(), v);
                } else {
                    d.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
