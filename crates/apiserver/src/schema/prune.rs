//! The write-time walk: prunes unknown fields, drops nulls of non-nullable fields, applies
//! defaults and checks each value's keywords, in one pass over the object. On update the
//! stored object is walked alongside: a failing value the update left unchanged is let
//! through (ratcheting), so a stricter schema does not block unrelated changes.

use drydock_api::FieldError;
use serde_json::{Map, Value};

use super::ascending::Children;
use super::node::Node;
use super::path::Path;
use super::{meta, validate};
use crate::ordered::Counterparts;

/// What the walk collects.
pub struct Walk<'o> {
    /// Paths of pruned fields (reported under `fieldValidation=Strict`/`Warn`).
    pub unknown: &'o mut Vec<String>,
    pub errors: &'o mut Vec<FieldError>,
    /// Keyword checks run (off for defaulting on read and for pre-pruning defaults).
    pub validate: bool,
}

/// Walks `v` against `node`; `old` is its counterpart in the stored object.
pub fn walk(node: &Node, v: &mut Value, old: Option<&Value>, path: &Path<'_>, w: &mut Walk<'_>) {
    if w.validate {
        let mark = w.errors.len();
        let typed = validate::value(node, v, path, w.errors);
        // Compared only on failure: a clean write pays nothing for ratcheting.
        if w.errors.len() > mark && old.is_some_and(|o| o == v) {
            w.errors.truncate(mark);
        }
        if !typed {
            return;
        }
    }
    match v {
        Value::Object(map) => walk_object(node, map, old.and_then(Value::as_object), path, w, node.embedded, &[]),
        Value::Array(items) => {
            let old_items = old.and_then(Value::as_array);
            if let Some(item) = &node.items {
                for (i, v) in items.iter_mut().enumerate() {
                    let item_old = old_items.and_then(|o| super::late::correlate(&node.list_type, v, i, o));
                    walk(item, v, item_old, &path.index(i), w);
                }
            }
            if w.validate && old_items.is_none_or(|o| o != items.as_slice()) {
                super::list_types::check(node, items, path, w.errors);
            }
        }
        _ => {}
    }
}

/// Walks an object's fields; `resource` objects (the root, embedded resources) keep
/// `apiVersion` and `kind` and have their `metadata` treated as ObjectMeta. Members named
/// in `apart` are there but not shown (kept as stored): they get no default.
pub fn walk_object(
    node: &Node,
    map: &mut Map<String, Value>,
    old: Option<&Map<String, Value>>,
    path: &Path<'_>,
    w: &mut Walk<'_>,
    resource: bool,
    apart: &[&str],
) {
    let keep_unknown = node.keeps_unknown() || node.ty.is_none();
    // `retain` visits the members in key order.
    let (mut children, mut olds) = (Children::of(node), Counterparts::of(old));
    map.retain(|k, v| {
        if resource {
            match k.as_str() {
                "apiVersion" | "kind" => return true,
                "metadata" => {
                    meta::walk(node.property("metadata"), v, olds.get(k), &path.child(k), w);
                    return true;
                }
                _ => {}
            }
        }
        match children.child(k) {
            Some(child) => {
                let old = olds.get(k);
                if v.is_null() && !child.nullable {
                    return false;
                }
                walk(child, v, old, &path.child(k), w);
                true
            }
            None if keep_unknown => true,
            None => {
                w.unknown.push(path.child(k).render());
                false
            }
        }
    });
    if node.defaults_here {
        apply_defaults(node, map, apart);
    }
    if node.embedded && w.validate {
        embedded_type_meta(map, path, w.errors);
    }
}

/// An embedded resource names its apiVersion and kind.
fn embedded_type_meta(map: &Map<String, Value>, path: &Path<'_>, errors: &mut Vec<FieldError>) {
    for key in ["apiVersion", "kind"] {
        match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(v @ (Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_))) => {
                errors.push(super::validate::type_error(&path.child(key).render(), v, "string"));
            }
            _ => errors.push(FieldError::required(path.child(key).render(), "must not be empty")),
        }
    }
}

/// Fills absent properties that have a default.
fn apply_defaults(node: &Node, map: &mut Map<String, Value>, apart: &[&str]) {
    for (k, child) in &node.properties {
        if let Some(d) = &child.default
            && !map.contains_key(k)
            && !apart.contains(&k.as_str())
        {
            map.insert(k.clone(), d.clone());
        }
    }
}

/// Defaults only: what reads from storage apply, and what compiling does to a default value.
pub fn default_only(node: &Node, v: &mut Value, resource: bool) {
    default_only_apart(node, v, resource, &[]);
}

/// [`default_only`] of an object whose members named in `apart` are there but not shown.
pub fn default_only_apart(node: &Node, v: &mut Value, resource: bool, apart: &[&str]) {
    if !node.has_defaults {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, child_v) in map.iter_mut() {
                if resource && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(child) = node.child(k) {
                    default_only(child, child_v, child.embedded);
                }
            }
            if node.defaults_here {
                apply_defaults(node, map, apart);
            }
        }
        Value::Array(items) => {
            if let Some(item) = &node.items {
                for v in items {
                    default_only(item, v, item.embedded);
                }
            }
        }
        _ => {}
    }
}

/// Prunes and defaults a schema's `default` value by the schema itself, once, at compile time.
pub fn prune_default(node: &Node, d: &mut Value) {
    let mut unknown = Vec::new();
    let mut errors = Vec::new();
    let mut w = Walk { unknown: &mut unknown, errors: &mut errors, validate: false };
    walk(node, d, None, &Path::ROOT, &mut w);
}
