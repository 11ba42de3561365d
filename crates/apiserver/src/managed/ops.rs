//! The operations of server-side apply on values typed by a [`MergeType`]: the set of
//! fields a configuration sets, the comparison of two versions of an object, the merge of a
//! configuration into the live object, and the removal of fields.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::set::{FieldSet, field, key_elem, value_elem};
use super::types::MergeType;

/// The element of each item of a list-map, or `None` when an item has no key field (such a
/// list is then treated as atomic, as no item could be told apart).
fn item_keys(items: &[Value], keys: &[(String, Option<Value>)]) -> Option<Vec<String>> {
    items
        .iter()
        .map(|item| {
            let obj = item.as_object()?;
            let mut k = Map::new();
            for (name, default) in keys {
                if let Some(v) = obj.get(name).filter(|v| !v.is_null()).or(default.as_ref()) {
                    k.insert(name.clone(), v.clone());
                }
            }
            (!k.is_empty()).then(|| key_elem(&k))
        })
        .collect()
}

fn is_empty_object(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// The fields a configuration sets, as an applier comes to own them: every scalar, each
/// item of a set or map list, atomic values whole, map keys (not declared fields) and
/// fields whose value is null or `{}`.
pub fn to_field_set(v: &Value, ty: &MergeType) -> FieldSet {
    let mut s = FieldSet::default();
    if let Value::Object(m) = v {
        object_fields(m, ty, &mut s);
    }
    s
}

fn object_fields(m: &Map<String, Value>, ty: &MergeType, node: &mut FieldSet) {
    for (k, cv) in m {
        let (cty, declared) = ty.field(k);
        let c = node.children.entry(field(k)).or_default();
        value_fields(cv, cty, c);
        if !declared || cv.is_null() || is_empty_object(cv) {
            c.member = true;
        }
    }
}

fn value_fields(v: &Value, ty: &MergeType, node: &mut FieldSet) {
    match (ty, v) {
        (MergeType::Object { .. } | MergeType::Untyped, Value::Object(m)) => object_fields(m, ty, node),
        (MergeType::Set, Value::Array(items)) => {
            for item in items {
                node.children.entry(value_elem(item)).or_default().member = true;
            }
        }
        (MergeType::Map { keys, item }, Value::Array(items)) => match item_keys(items, keys) {
            Some(ks) => {
                for (k, it) in ks.iter().zip(items) {
                    let c = node.child_mut(k);
                    c.member = true;
                    value_fields(it, item, c);
                }
            }
            None => node.member = true,
        },
        _ => node.member = true,
    }
}

/// What changed between two versions of an object. `added` holds every new path,
/// parents included; `modified` the leaves whose value changed; `removed` every path gone.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// Added and modified paths: what a write takes from other managers.
    pub fn changed(&self) -> FieldSet {
        let mut s = self.added.clone();
        s.union(&self.modified);
        s
    }

    /// [`Comparison::changed`] and the removed paths, without copying the added ones (on a
    /// create, that is the whole object).
    pub fn into_changed(self) -> (FieldSet, FieldSet) {
        let mut s = self.added;
        s.union(&self.modified);
        (s, self.removed)
    }
}

/// Compares `old` with `new`, leaving out the metadata fields the server sets (no manager
/// owns them).
pub fn compare(old: &Value, new: &Value, ty: &MergeType) -> Comparison {
    compare_except(old, new, ty, &[])
}

/// [`compare`] without the top-level fields `skipped` either: what the endpoint of an
/// update neither writes nor owns (`status` through the main resource, `metadata` and
/// `spec` through `/status`) is not even looked at.
pub fn compare_except(old: &Value, new: &Value, ty: &MergeType, skipped: &[&str]) -> Comparison {
    let mut c = Comparison::default();
    c.children(Some(old), Some(new), ty, &mut Vec::new(), skipped);
    c
}

impl Comparison {
    /// Compares two values its callers found to differ (equal ones are skipped there,
    /// so that a deep comparison is not made twice).
    fn walk(&mut self, old: Option<&Value>, new: Option<&Value>, ty: &MergeType, path: &mut Vec<String>) {
        match (old, new) {
            (None, None) => return,
            (None, Some(n)) => {
                // Everything below is new: built in one descent rather than path by path.
                if !path.is_empty() {
                    let node = self.added.node_mut(path);
                    node.member = true;
                    let skipped = metadata_skipped(path).unwrap_or_default();
                    added_below(node, n, ty, skipped);
                }
                return;
            }
            (Some(_), None) => self.removed.insert(path),
            (Some(o), Some(n)) => {
                if !descends(ty, o, n) {
                    self.modified.insert(path);
                    return;
                }
            }
        }
        self.children(old, new, ty, path, &[]);
    }

    /// Compares the children of two values, except those named in `skipped`.
    fn children(
        &mut self,
        old: Option<&Value>,
        new: Option<&Value>,
        ty: &MergeType,
        path: &mut Vec<String>,
        skipped: &[&str],
    ) {
        match ty {
            MergeType::Object { .. } | MergeType::Untyped => {
                let (om, nm) = (old.and_then(Value::as_object), new.and_then(Value::as_object));
                let skipped = metadata_skipped(path).unwrap_or(skipped);
                for (k, o, n) in crate::ordered::side_by_side(om, nm) {
                    if o == n || skipped.contains(&k.as_str()) {
                        continue;
                    }
                    path.push(field(k));
                    self.walk(o, n, ty.field(k).0, path);
                    path.pop();
                }
            }
            MergeType::Set => {
                let (oa, na) = (list(old), list(new));
                let os: HashSet<String> = oa.iter().map(value_elem).collect();
                let ns: HashSet<String> = na.iter().map(value_elem).collect();
                for e in ns.difference(&os) {
                    path.push(e.clone());
                    self.added.insert(path);
                    path.pop();
                }
                for e in os.difference(&ns) {
                    path.push(e.clone());
                    self.removed.insert(path);
                    path.pop();
                }
            }
            MergeType::Map { keys, item } => {
                let (oa, na) = (list(old), list(new));
                let (Some(ok), Some(nk)) = (item_keys(oa, keys), item_keys(na, keys)) else { return };
                let oi: HashMap<&str, &Value> = ok.iter().map(String::as_str).zip(oa).rev().collect();
                let ni: HashMap<&str, &Value> = nk.iter().map(String::as_str).zip(na).rev().collect();
                let mut seen = HashSet::new();
                for k in ok.iter().chain(nk.iter()) {
                    if !seen.insert(k.as_str()) {
                        continue;
                    }
                    let (o, n) = (oi.get(k.as_str()).copied(), ni.get(k.as_str()).copied());
                    if o == n {
                        continue;
                    }
                    path.push(k.clone());
                    self.walk(o, n, item, path);
                    path.pop();
                }
            }
            MergeType::Leaf => {}
        }
    }
}

/// The fields a comparison leaves out below `path`: those the server sets in `metadata`.
fn metadata_skipped(path: &[String]) -> Option<&'static [&'static str]> {
    matches!(path, [m] if m == "f:metadata").then_some(super::SERVER_SET_METADATA)
}

/// Adds every path below `node`, whose value `v` is new, as [`Comparison::children`] would
/// find them one by one (except `skipped` fields of an object).
fn added_below(node: &mut FieldSet, v: &Value, ty: &MergeType, skipped: &[&str]) {
    match ty {
        MergeType::Object { .. } | MergeType::Untyped => {
            for (k, c) in v.as_object().into_iter().flatten() {
                if skipped.contains(&k.as_str()) {
                    continue;
                }
                let child = node.children.entry(field(k)).or_default();
                child.member = true;
                added_below(child, c, ty.field(k).0, &[]);
            }
        }
        MergeType::Set => {
            for item in list(Some(v)) {
                node.children.entry(value_elem(item)).or_default().member = true;
            }
        }
        MergeType::Map { keys, item } => {
            let items = list(Some(v));
            let Some(ks) = item_keys(items, keys) else { return };
            let mut seen = HashSet::new();
            for (k, it) in ks.iter().zip(items) {
                // A key listed twice: its first item stands for it.
                if seen.insert(k.as_str()) {
                    let child = node.child_mut(k);
                    child.member = true;
                    added_below(child, it, item, &[]);
                }
            }
        }
        MergeType::Leaf => {}
    }
}

fn list(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Whether a change between two present values is looked at field by field (else the
/// value is one leaf).
fn descends(ty: &MergeType, o: &Value, n: &Value) -> bool {
    match (ty, o, n) {
        (MergeType::Object { .. } | MergeType::Untyped, Value::Object(_), Value::Object(_)) => true,
        (MergeType::Set, Value::Array(_), Value::Array(_)) => true,
        (MergeType::Map { keys, .. }, Value::Array(a), Value::Array(b)) => {
            item_keys(a, keys).is_some() && item_keys(b, keys).is_some()
        }
        _ => false,
    }
}

/// The live object with a configuration merged in: the configuration wins where both set a
/// value; objects merge key by key, sets by union, list-maps item by item (live order, new
/// items where the configuration puts them); everything else is replaced.
pub fn merge(live: &Value, config: &Value, ty: &MergeType) -> Value {
    match (ty, live, config) {
        (MergeType::Object { .. } | MergeType::Untyped, Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, ty.field(k).0),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (MergeType::Set, Value::Array(l), Value::Array(c)) => {
            let mut out = l.clone();
            for item in c {
                if !out.contains(item) {
                    out.push(item.clone());
                }
            }
            Value::Array(out)
        }
        (MergeType::Map { keys, item }, Value::Array(l), Value::Array(c)) => {
            match (item_keys(l, keys), item_keys(c, keys)) {
                (Some(lk), Some(ck)) => Value::Array(merge_items(l, &lk, c, &ck, item)),
                _ => config.clone(),
            }
        }
        _ => config.clone(),
    }
}

fn merge_items(l: &[Value], lk: &[String], c: &[Value], ck: &[String], item: &MergeType) -> Vec<Value> {
    let c_at: HashMap<&str, usize> = ck.iter().enumerate().rev().map(|(i, k)| (k.as_str(), i)).collect();
    let in_live: HashSet<&str> = lk.iter().map(String::as_str).collect();
    let mut emitted = vec![false; c.len()];
    let mut out = Vec::with_capacity(l.len() + c.len());
    let mut next = 0;
    for (li, litem) in l.iter().enumerate() {
        match c_at.get(lk[li].as_str()) {
            None => out.push(litem.clone()),
            Some(&j) if !emitted[j] => {
                // New items the configuration lists before this one go first.
                while next < j {
                    if !emitted[next] && !in_live.contains(ck[next].as_str()) {
                        out.push(c[next].clone());
                        emitted[next] = true;
                    }
                    next += 1;
                }
                out.push(merge(litem, &c[j], item));
                emitted[j] = true;
            }
            Some(_) => {}
        }
    }
    for (j, citem) in c.iter().enumerate() {
        if !emitted[j] && !in_live.contains(ck[j].as_str()) && c_at.get(ck[j].as_str()) == Some(&j) {
            out.push(citem.clone());
        }
    }
    out
}

/// The paths of `last` to delete from the object: those neither `keep` holds nor has
/// anything below. An item's key fields go only with the whole item.
pub fn removable(last: &FieldSet, keep: &FieldSet) -> FieldSet {
    removable_in(last, keep, &[])
}

fn removable_in(last: &FieldSet, keep: &FieldSet, key_fields: &[String]) -> FieldSet {
    let mut out = FieldSet::default();
    for (k, c) in &last.children {
        if key_fields.contains(k) {
            continue;
        }
        match keep.child(k) {
            None => out.child_mut(k).member = true,
            Some(kc) => {
                let inner_keys: Vec<String> = match k.strip_prefix("k:") {
                    Some(j) => serde_json::from_str::<Map<String, Value>>(j)
                        .map(|m| m.keys().map(|f| field(f)).collect())
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                let sub = removable_in(c, kc, &inner_keys);
                if !sub.is_empty() {
                    out.children.insert(k.clone(), sub);
                }
            }
        }
    }
    out
}

/// Deletes the member paths of `set` from `v`.
pub fn remove(v: &mut Value, set: &FieldSet, ty: &MergeType) {
    for (k, c) in &set.children {
        if let Some(name) = k.strip_prefix("f:") {
            let Value::Object(m) = v else { continue };
            if c.member {
                m.remove(name);
            } else if let Some(cv) = m.get_mut(name) {
                remove(cv, c, ty.field(name).0);
            }
        } else if k.starts_with("v:") {
            if let Value::Array(a) = v
                && c.member
            {
                a.retain(|x| value_elem(x) != *k);
            }
        } else if k.starts_with("k:") {
            let (MergeType::Map { keys, item }, Value::Array(a)) = (ty, &mut *v) else { continue };
            let Some(ks) = item_keys(a, keys) else { continue };
            if c.member {
                let mut i = 0;
                a.retain(|_| {
                    i += 1;
                    ks[i - 1] != *k
                });
            } else {
                for (it, key) in a.iter_mut().zip(&ks) {
                    if key == k {
                        remove(it, c, item);
                    }
                }
            }
        }
    }
}
