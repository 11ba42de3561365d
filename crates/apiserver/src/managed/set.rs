//! Sets of field paths, as managedFields' `fieldsV1` encodes them: a tree whose edges are
//! path elements (`f:name`, `k:{"name":"x"}`, `v:"x"`) and whose nodes are members when
//! the path to them is itself in the set.

use std::collections::BTreeMap;

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A set of paths. The root is never a member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    pub(super) member: bool,
    pub(super) children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    pub(super) fn child(&self, key: &str) -> Option<&FieldSet> {
        self.children.get(key)
    }

    pub(super) fn child_mut(&mut self, key: &str) -> &mut FieldSet {
        if !self.children.contains_key(key) {
            self.children.insert(key.to_string(), FieldSet::default());
        }
        self.children.get_mut(key).unwrap_or_else(|| unreachable!("inserted above"))
    }

    /// Adds the path `elems` (empty: nothing, the root is never a member).
    pub(super) fn insert(&mut self, elems: &[String]) {
        if !elems.is_empty() {
            self.node_mut(elems).member = true;
        }
    }

    /// The node at the path `elems`, created (not a member) if absent.
    pub(super) fn node_mut(&mut self, elems: &[String]) -> &mut FieldSet {
        let mut cur = self;
        for e in elems {
            cur = cur.child_mut(e);
        }
        cur
    }

    pub fn union(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (k, c) in &other.children {
            self.child_mut(k).union(c);
        }
    }

    /// The paths of `self` that are not in `other` (path by path, not by prefix).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && !other.member, children: BTreeMap::new() };
        for (k, c) in &self.children {
            let d = match other.children.get(k) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// Takes the paths of `other` out of `self` in place: [`FieldSet::difference`] without
    /// copying the (usually much larger) rest.
    pub fn subtract(&mut self, other: &FieldSet) {
        if other.member {
            self.member = false;
        }
        for (k, o) in &other.children {
            if let Some(c) = self.children.get_mut(k) {
                c.subtract(o);
                if c.is_empty() {
                    self.children.remove(k);
                }
            }
        }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && other.member, children: BTreeMap::new() };
        for (k, c) in &self.children {
            if let Some(o) = other.children.get(k) {
                let i = c.intersection(o);
                if !i.is_empty() {
                    out.children.insert(k.clone(), i);
                }
            }
        }
        out
    }

    /// The paths of `self` that neither are in `other` nor lie below a member of it.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && !other.member, children: BTreeMap::new() };
        for (k, c) in &self.children {
            let d = match other.children.get(k) {
                Some(o) if o.member => continue,
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// Every member path, in order.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect(&mut prefix, &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.member && !prefix.is_empty() {
            out.push(prefix.clone());
        }
        for (k, c) in &self.children {
            prefix.push(k.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// Writes the node at a path (not the root): `.` first when it is a member with
    /// children, as the JSON tree sorts it.
    fn serialize_node<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let dot = self.member && !self.children.is_empty();
        let mut m = s.serialize_map(Some(self.children.len() + usize::from(dot)))?;
        if dot {
            m.serialize_entry(".", &Empty)?;
        }
        for (k, c) in &self.children {
            m.serialize_entry(k, &Node(c))?;
        }
        m.end()
    }

    /// Parses `fieldsV1`; `None` when it is not a well-formed set.
    pub fn from_fields_v1(v: &Value) -> Option<FieldSet> {
        let Value::Object(m) = v else { return None };
        let mut out = FieldSet::default();
        for (k, c) in m {
            if !is_element(k) {
                return None;
            }
            out.children.insert(k.clone(), Self::decode_node(c)?);
        }
        Some(out)
    }

    fn decode_node(v: &Value) -> Option<FieldSet> {
        let Value::Object(m) = v else { return None };
        let mut out = FieldSet { member: m.is_empty(), children: BTreeMap::new() };
        for (k, c) in m {
            if k == "." {
                out.member = true;
            } else if is_element(k) {
                out.children.insert(k.clone(), Self::decode_node(c)?);
            } else {
                return None;
            }
        }
        Some(out)
    }
}

/// Reads `fieldsV1` straight from its JSON text, with the checks of
/// [`FieldSet::from_fields_v1`]: a node is an object whose keys are path elements (or `.`,
/// below the root).
struct Decode {
    root: bool,
}

impl<'de> DeserializeSeed<'de> for Decode {
    type Value = FieldSet;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FieldSet, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Decode {
    type Value = FieldSet;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a fieldsV1 object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<FieldSet, A::Error> {
        let mut out = FieldSet::default();
        let mut empty = true;
        while let Some(k) = access.next_key::<String>()? {
            empty = false;
            if k == "." && !self.root {
                access.next_value::<IgnoredAny>()?;
                out.member = true;
            } else if is_element(&k) {
                let child = access.next_value_seed(Decode { root: false })?;
                out.children.insert(k, child);
            } else {
                return Err(de::Error::custom(format!("invalid path element {k:?}")));
            }
        }
        out.member |= empty && !self.root;
        Ok(out)
    }
}

impl FieldSet {
    /// Parses `fieldsV1` from its JSON text; `None` when it is not a well-formed set.
    pub fn from_raw(raw: &RawValue) -> Option<FieldSet> {
        let mut de = serde_json::Deserializer::from_str(raw.get());
        Decode { root: true }.deserialize(&mut de).ok()
    }
}

pub(super) fn is_element(k: &str) -> bool {
    match k.split_at_checked(2) {
        Some(("f:", _)) => true,
        Some(("i:", n)) => n.parse::<u64>().is_ok(),
        Some(("k:", j)) => serde_json::from_str::<Value>(j).is_ok_and(|v| v.is_object()),
        Some(("v:", j)) => serde_json::from_str::<Value>(j).is_ok(),
        _ => false,
    }
}

/// `f:name`. (Path elements are made for every field a write touches: no formatting
/// machinery, one allocation.)
pub(super) fn field(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push_str("f:");
    s.push_str(name);
    s
}

/// `v:<json>` of a set item.
pub(super) fn value_elem(v: &Value) -> String {
    json_elem("v:", v)
}

/// `k:<json>` of a list-map item (keys sorted by name, as the map serializes them).
pub(super) fn key_elem(keys: &Map<String, Value>) -> String {
    json_elem("k:", keys)
}

fn json_elem(prefix: &str, v: &impl Serialize) -> String {
    let mut out = Vec::with_capacity(32);
    out.extend_from_slice(prefix.as_bytes());
    // Neither can fail: the value's map keys are strings and JSON is UTF-8.
    let _ = serde_json::to_writer(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// A path as conflict messages print it: `.spec.containers[name="nginx"].image`.
pub fn render_path(elems: &[String]) -> String {
    let mut s = String::new();
    for e in elems {
        let (kind, rest) = e.split_at_checked(2).unwrap_or(("", e));
        match kind {
            "f:" => {
                s.push('.');
                s.push_str(rest);
            }
            "k:" => {
                let parts: Vec<String> = match serde_json::from_str::<Map<String, Value>>(rest) {
                    Ok(m) => m.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    Err(_) => vec![rest.to_string()],
                };
                s.push('[');
                s.push_str(&parts.join(","));
                s.push(']');
            }
            "v:" => {
                s.push_str("[=");
                s.push_str(rest);
                s.push(']');
            }
            "i:" => {
                s.push('[');
                s.push_str(rest);
                s.push(']');
            }
            _ => s.push_str(e),
        }
    }
    s
}

/// `{}`.
struct Empty;

impl Serialize for Empty {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_map(Some(0))?.end()
    }
}

struct Node<'a>(&'a FieldSet);

impl FieldSet {
    /// Appends the encoding of this set as a node below the root (`.` for a member with
    /// children).
    pub(super) fn write_node(&self, out: &mut String) -> Option<()> {
        out.push_str(&serde_json::to_string(&Node(self)).ok()?);
        Some(())
    }
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_node(s)
    }
}

/// The `fieldsV1` encoding.
impl Serialize for FieldSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.children.len()))?;
        for (k, c) in &self.children {
            m.serialize_entry(k, &Node(c))?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn encodes_members_with_children_using_dot() {
        let mut s = FieldSet::default();
        s.insert(&p(&["f:spec", "f:containers", r#"k:{"name":"nginx"}"#]));
        s.insert(&p(&["f:spec", "f:containers", r#"k:{"name":"nginx"}"#, "f:image"]));
        s.insert(&p(&["f:spec", "f:replicas"]));
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(
            v,
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}}}, "f:replicas": {}}})
        );
        // Written straight to bytes, keys come in the order the JSON tree sorts them.
        assert_eq!(serde_json::to_string(&s).unwrap(), v.to_string());
        assert_eq!(FieldSet::from_fields_v1(&v), Some(s.clone()));
        let raw = serde_json::value::to_raw_value(&v).unwrap();
        assert_eq!(FieldSet::from_raw(&raw), Some(s));
        for bad in [json!({"spec": {}}), json!({"f:a": 1}), json!({".": {}}), json!({"f:a": {"x": {}}})] {
            assert!(FieldSet::from_raw(&serde_json::value::to_raw_value(&bad).unwrap()).is_none(), "{bad}");
        }
        assert!(FieldSet::from_fields_v1(&json!({"spec": {}})).is_none());
        assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_none());
    }

    #[test]
    fn set_algebra_is_per_path() {
        let mut a = FieldSet::default();
        a.insert(&p(&["f:spec", "f:a"]));
        a.insert(&p(&["f:spec", "f:b"]));
        let mut b = FieldSet::default();
        b.insert(&p(&["f:spec", "f:b"]));
        b.insert(&p(&["f:data"]));
        assert_eq!(a.difference(&b).paths(), vec![p(&["f:spec", "f:a"])]);
        assert_eq!(a.intersection(&b).paths(), vec![p(&["f:spec", "f:b"])]);
        let mut spec = FieldSet::default();
        spec.insert(&p(&["f:spec"]));
        assert!(a.recursive_difference(&spec).is_empty());
        assert_eq!(a.difference(&spec), a);
    }

    #[test]
    fn renders_paths_like_kube_apiserver() {
        assert_eq!(
            render_path(&p(&["f:spec", "f:containers", r#"k:{"name":"nginx"}"#, "f:image"])),
            r#".spec.containers[name="nginx"].image"#
        );
        assert_eq!(
            render_path(&p(&["f:spec", "f:ports", r#"k:{"containerPort":53,"protocol":"UDP"}"#, "f:name"])),
            r#".spec.ports[containerPort=53,protocol="UDP"].name"#
        );
        assert_eq!(render_path(&p(&["f:metadata", "f:finalizers", r#"v:"a""#])), r#".metadata.finalizers[="a"]"#);
    }
}
