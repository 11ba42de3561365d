//! How a kind's fields merge and are owned under server-side apply, derived once per
//! served resource from its schema: `x-kubernetes-list-type` (with the map keys),
//! `x-kubernetes-map-type`, `x-kubernetes-patch-strategy`/`-merge-key`, and for the
//! built-in kinds (whose generated schemas carry no such extensions) the merge keys of the
//! Kubernetes types. `metadata` is always ObjectMeta's.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::patch::lists::{ListStrategy, list_strategy};

/// The merge type of a value.
#[derive(Debug, Clone)]
pub enum MergeType {
    /// Scalars, and atomic lists, maps and structs: owned and replaced whole.
    Leaf,
    /// An object merged key by key: `fields` are its declared properties, `rest` the type
    /// of any other key (a map's values).
    Object { fields: HashMap<String, MergeType>, rest: Box<MergeType> },
    /// A list of distinct scalars (`x-kubernetes-list-type: set`).
    Set,
    /// A list of objects identified by `keys` (with the default of a key field, used when
    /// an item leaves it out).
    Map { keys: Vec<(String, Option<Value>)>, item: Box<MergeType> },
    /// Free-form (`x-kubernetes-preserve-unknown-fields`): objects merge key by key, lists
    /// are atomic.
    Untyped,
}

/// ObjectMeta: labels and annotations granular maps, finalizers a set, owner references a
/// map keyed by uid whose items are atomic.
static OBJECT_META: LazyLock<MergeType> = LazyLock::new(|| {
    let string_map = || MergeType::Object { fields: HashMap::new(), rest: Box::new(MergeType::Leaf) };
    let fields = HashMap::from([
        ("labels".to_string(), string_map()),
        ("annotations".to_string(), string_map()),
        ("finalizers".to_string(), MergeType::Set),
        (
            "ownerReferences".to_string(),
            MergeType::Map { keys: vec![("uid".into(), None)], item: Box::new(MergeType::Leaf) },
        ),
    ]);
    MergeType::Object { fields, rest: Box::new(MergeType::Leaf) }
});

static LEAF: MergeType = MergeType::Leaf;
static UNTYPED: MergeType = MergeType::Untyped;

impl MergeType {
    /// The type of a kind from its schema; `builtin_kind` names a built-in kind, whose list
    /// merge keys come from the Kubernetes types.
    pub fn from_schema(schema: &Value, builtin_kind: Option<&str>) -> MergeType {
        let mut b = Builder { builtin_kind, path: String::new() };
        match b.build(schema) {
            MergeType::Object { mut fields, rest } => {
                fields.insert("metadata".into(), OBJECT_META.clone());
                MergeType::Object { fields, rest }
            }
            _ => MergeType::Object {
                fields: HashMap::from([("metadata".to_string(), OBJECT_META.clone())]),
                rest: Box::new(MergeType::Untyped),
            },
        }
    }

    /// A kind without a schema.
    pub fn schemaless() -> MergeType {
        Self::from_schema(&Value::Null, None)
    }

    /// The type of `key`'s value in an object of this type, and whether it is a declared
    /// field (rather than a map key).
    pub(super) fn field(&self, key: &str) -> (&MergeType, bool) {
        match self {
            MergeType::Object { fields, rest } => match fields.get(key) {
                Some(t) => (t, true),
                None => (rest, false),
            },
            MergeType::Untyped => (&UNTYPED, false),
            _ => (&LEAF, false),
        }
    }
}

struct Builder<'a> {
    builtin_kind: Option<&'a str>,
    /// Dotted path of property names from the root, list items elided.
    path: String,
}

fn flag(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn str_of<'v>(s: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    s.get(key).and_then(Value::as_str)
}

fn has_type(s: &Map<String, Value>, ty: &str) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

/// LabelSelector and ObjectReference are atomic structs in the Kubernetes types (and marked
/// `x-kubernetes-map-type: atomic` in the CRDs generated from them); schemas generated
/// without the marker are recognised by their fields.
fn is_atomic_shape<'k>(keys: impl Iterator<Item = &'k str>) -> bool {
    const LABEL_SELECTOR: &[&str] = &["matchExpressions", "matchLabels"];
    const OBJECT_REFERENCE: &[&str] =
        &["apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid"];
    let keys: Vec<&str> = keys.collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    sorted == LABEL_SELECTOR || sorted == OBJECT_REFERENCE
}

/// How a list merges.
enum ListKind {
    Atomic,
    Set,
    Map(Vec<(String, Option<Value>)>),
}

impl Builder<'_> {
    fn build(&mut self, schema: &Value) -> MergeType {
        let Value::Object(s) = schema else { return MergeType::Untyped };
        let props = s.get("properties").and_then(Value::as_object);
        let is_object = has_type(s, "object") || props.is_some() || s.contains_key("additionalProperties");
        if has_type(s, "array") {
            return self.list(s);
        }
        if !is_object {
            // Scalars, int-or-string, and `$ref`s without a type: what is not declared an
            // object or array is owned whole.
            return if flag(s, "x-kubernetes-preserve-unknown-fields") && !s.contains_key("type") {
                MergeType::Untyped
            } else {
                MergeType::Leaf
            };
        }
        if matches!(str_of(s, "x-kubernetes-map-type"), Some("atomic"))
            || matches!(str_of(s, "x-kubernetes-patch-strategy"), Some("replace"))
        {
            return MergeType::Leaf;
        }
        if props.is_some_and(|p| is_atomic_shape(p.keys().map(String::as_str))) {
            return MergeType::Leaf;
        }
        let mut fields = HashMap::new();
        for (k, v) in props.into_iter().flatten() {
            let saved = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(k);
            fields.insert(k.clone(), self.build(v));
            self.path.truncate(saved);
        }
        let rest = match s.get("additionalProperties") {
            Some(a @ Value::Object(_)) => self.build(a),
            _ => MergeType::Untyped,
        };
        if fields.is_empty() && matches!(rest, MergeType::Untyped) && self.builtin_kind.is_some() {
            // Generated schemas say `type: object` without properties for free-form values.
            return MergeType::Untyped;
        }
        MergeType::Object { fields, rest: Box::new(rest) }
    }

    fn list(&mut self, s: &Map<String, Value>) -> MergeType {
        let items = s.get("items").cloned().unwrap_or(Value::Null);
        let kind = match str_of(s, "x-kubernetes-list-type") {
            Some("set") => ListKind::Set,
            Some("map") => ListKind::Map(
                s.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|k| k.iter().filter_map(Value::as_str).map(|k| (k.to_string(), None)).collect())
                    .unwrap_or_default(),
            ),
            Some(_) => ListKind::Atomic,
            None => self.unannotated_list(s),
        };
        match kind {
            ListKind::Atomic => MergeType::Leaf,
            ListKind::Set => MergeType::Set,
            ListKind::Map(keys) if keys.is_empty() => MergeType::Leaf,
            ListKind::Map(mut keys) => {
                for (k, default) in &mut keys {
                    if default.is_none() {
                        *default = items.pointer(&format!("/properties/{k}/default")).cloned();
                    }
                }
                MergeType::Map { keys, item: Box::new(self.build(&items)) }
            }
        }
    }

    /// A list without `x-kubernetes-list-type`: the patch strategy if declared, else (for
    /// built-in kinds) the Kubernetes types' merge keys, else atomic.
    fn unannotated_list(&self, s: &Map<String, Value>) -> ListKind {
        let strategy = str_of(s, "x-kubernetes-patch-strategy").unwrap_or_default();
        if strategy.split(',').any(|p| p == "merge") {
            return match str_of(s, "x-kubernetes-patch-merge-key") {
                Some(k) => ListKind::Map(vec![(k.to_string(), None)]),
                None => ListKind::Set,
            };
        }
        let Some(kind) = self.builtin_kind else { return ListKind::Atomic };
        let tcp = || Some(Value::String("TCP".into()));
        if self.path.ends_with(".ports")
            && ["containers.", "initContainers.", "ephemeralContainers."].iter().any(|c| self.path.contains(c))
        {
            return ListKind::Map(vec![("containerPort".into(), None), ("protocol".into(), tcp())]);
        }
        if kind == "Service" && self.path == "spec.ports" {
            return ListKind::Map(vec![("port".into(), None), ("protocol".into(), tcp())]);
        }
        match list_strategy(kind, &self.path) {
            ListStrategy::Replace => ListKind::Atomic,
            ListStrategy::Primitives => ListKind::Set,
            ListStrategy::ByKey(k) => ListKind::Map(vec![(k.to_string(), None)]),
        }
    }
}
