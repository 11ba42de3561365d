//! The validation that runs after admission, as kube-apiserver validates after mutating
//! webhooks: required fields and CEL rules. Only subtrees that carry either are visited,
//! each with the matching part of the stored object (for transition rules and ratcheting).

use drydock_api::FieldError;
use serde_json::Value;

use super::ascending::Children;
use super::cel::{self, Eval};
use super::node::{ListType, Node};
use super::path::Path;
use crate::ordered::Counterparts;

/// Walks `v` (with `old`, its counterpart in the stored object). Members named in `apart`
/// are there but not shown (kept as stored).
pub fn walk(
    node: &Node,
    v: &Value,
    old: Option<&Value>,
    path: &Path<'_>,
    (resource, apart): (bool, &[&str]),
    e: &mut Eval<'_>,
) {
    if !node.has_late_checks || v.is_null() {
        return;
    }
    match v {
        Value::Object(map) => {
            for r in &node.required {
                let implied = (resource && r == "metadata") || apart.contains(&r.as_str());
                if !implied && !map.contains_key(r) {
                    e.errors.push(FieldError::required(path.child(r).render(), ""));
                }
            }
            let (mut children, mut olds) = (Children::of(node), Counterparts::of(old.and_then(Value::as_object)));
            for (k, child_v) in map {
                if resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(child) = children.child(k).filter(|c| c.has_late_checks) {
                    let child_old = olds.get(k);
                    walk(child, child_v, child_old, &path.child(k), (child.embedded, &[]), e);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref().filter(|i| i.has_late_checks) {
                let old_items = old.and_then(Value::as_array);
                for (i, iv) in items.iter().enumerate() {
                    let item_old = old_items.and_then(|o| correlate(&node.list_type, iv, i, o));
                    walk(item, iv, item_old, &path.index(i), (item.embedded, &[]), e);
                }
            }
        }
        _ => {}
    }
    cel::run(node, v, old, path, resource, e);
}

/// The old item a new one, at `at`, continues: the one with the same keys in a list-map,
/// the equal one in a set. Atomic lists have no identity, so their items have no old value.
/// The old item at the same place is tried first: a write seldom reorders a list.
pub fn correlate<'o>(list: &ListType, item: &Value, at: usize, old: &'o [Value]) -> Option<&'o Value> {
    let continues: &dyn Fn(&Value) -> bool = match list {
        ListType::Atomic => return None,
        ListType::Set => &|o| o == item,
        ListType::Map(keys) => &|o| {
            keys.iter().all(|k| {
                let key = o.get(k);
                key.is_some() && key == item.get(k)
            })
        },
    };
    // Keys are unique in a list-map and items in a set: the first match is the only one.
    old.get(at).filter(|o| continues(o)).or_else(|| old.iter().find(|o| continues(o)))
}

/// A validation with errors and the warnings ratcheting turned errors into.
pub fn run(node: &Node, (obj, apart): (&Value, &[&str]), old: Option<&Value>, r: &mut super::Report) {
    let mut e = Eval { errors: &mut r.errors, warnings: &mut r.warnings, budget: cel::OBJECT_BUDGET, exhausted: false };
    walk(node, obj, old, &Path::ROOT, (true, apart), &mut e);
}

/// Required fields of a value outside any object (a schema's `default`).
pub fn run_at(node: &Node, v: &Value, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    let mut warnings = Vec::new();
    let mut e = Eval { errors, warnings: &mut warnings, budget: cel::OBJECT_BUDGET, exhausted: false };
    walk(node, v, None, path, (node.embedded, &[]), &mut e);
}
