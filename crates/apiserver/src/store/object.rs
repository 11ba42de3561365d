//! Stored objects: the encoded JSON kept in memory next to the few parsed fields that
//! selectors, garbage collection and namespace lifecycle need.
//!
//! Objects are serialized once, when written. Lists, gets and watch events reuse those
//! bytes. The resourceVersion is only known when the store orders the write, so an object
//! is encoded with a marker in its place ([`Encoded`]) and the revision is spliced in
//! under the store lock: no serialization happens while the lock is held.

use std::sync::{Arc, LazyLock, OnceLock};

use bytes::{BufMut, Bytes, BytesMut};
use memchr::memmem::Finder;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::managed::{Managers, apply_only};

/// The placeholder as encoded: it contains a control character, which JSON escapes.
static MARKER: LazyLock<Finder<'static>> = LazyLock::new(|| {
    let escaped = serde_json::to_string(RV_MARKER).unwrap_or_default();
    Finder::new(escaped.as_bytes()).into_owned()
});

/// What an object's encoding starts with room for (it is copied into an exact-size buffer
/// by [`Encoded::finish`]).
const ENCODE_CAPACITY: usize = 8192;

/// Placeholder written as `metadata.resourceVersion` before the revision is known.
const RV_MARKER: &str = "\u{1}drydock-resource-version\u{1}";

/// The parsed bits of an object's metadata the server itself acts on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjMeta {
    pub uid: String,
    /// Sorted by key.
    pub labels: Vec<(String, String)>,
    pub owners: Vec<OwnerRef>,
    pub finalizers: Vec<String>,
    pub deleting: bool,
    /// Values of extra selectable fields (e.g. `involvedObject.name` on core Events),
    /// in the order of the resource's `selectable_fields`.
    pub fields: Vec<Option<String>>,
}

/// An ownerReference, as garbage collection needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnerRef {
    pub uid: String,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

impl ObjMeta {
    /// Extracts the summary from an object; `selectable` lists dotted paths of extra fields.
    pub fn from_value(obj: &Value, selectable: &[String]) -> Self {
        let meta = &obj["metadata"];
        let mut labels: Vec<(String, String)> = meta["labels"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
            .unwrap_or_default();
        labels.sort();
        let owners = meta["ownerReferences"]
            .as_array()
            .map(|refs| {
                refs.iter()
                    .map(|r| OwnerRef {
                        uid: str_at(r, "uid"),
                        api_version: str_at(r, "apiVersion"),
                        kind: str_at(r, "kind"),
                        name: str_at(r, "name"),
                        controller: r["controller"].as_bool().unwrap_or(false),
                        block_owner_deletion: r["blockOwnerDeletion"].as_bool().unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let finalizers = meta["finalizers"]
            .as_array()
            .map(|f| f.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        let fields = selectable
            .iter()
            .map(|path| {
                let mut cur = obj;
                for part in path.split('.') {
                    cur = &cur[part];
                }
                match cur {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                }
            })
            .collect();
        Self {
            uid: str_at(meta, "uid"),
            labels,
            owners,
            finalizers,
            deleting: !meta["deletionTimestamp"].is_null(),
            fields,
        }
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|i| self.labels[i].1.as_str())
    }
}

fn str_at(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

/// An object as held by the store: its revision, its encoding (which carries that
/// revision as `metadata.resourceVersion`) and its metadata summary.
#[derive(Debug)]
pub struct Stored {
    pub rv: u64,
    pub bytes: Bytes,
    /// Byte range of the resourceVersion digits inside `bytes`.
    rv_span: (usize, usize),
    pub meta: Arc<ObjMeta>,
    /// Where the Update entries of its managedFields are in `bytes`, found on first use
    /// and then shared by every watcher shown the object without them.
    update_entries: OnceLock<Box<[(usize, usize)]>>,
}

impl Stored {
    fn new(rv: u64, bytes: Bytes, rv_span: (usize, usize), meta: Arc<ObjMeta>) -> Stored {
        Stored { rv, bytes, rv_span, meta, update_entries: OnceLock::new() }
    }

    /// The byte ranges of the Update entries of its managedFields
    /// ([`apply_only::update_entry_ranges`]).
    pub fn update_entry_ranges(&self) -> &[(usize, usize)] {
        self.update_entries.get_or_init(|| apply_only::update_entry_ranges(&self.bytes).into())
    }

    /// This object as the in-process clients are shown it: managedFields with only their
    /// Apply entries ([`apply_only`]); `None` when that is all it has.
    pub fn apply_entries_only(&self) -> Option<Stored> {
        let ranges = self.update_entry_ranges();
        if ranges.is_empty() {
            return None;
        }
        let (bytes, start) = apply_only::without(&self.bytes, ranges, self.rv_span.0);
        let span = (start, start + self.rv_span.1 - self.rv_span.0);
        Some(Stored::new(self.rv, bytes, span, self.meta.clone()))
    }

    /// Parses the stored JSON (e.g. to apply a patch to it).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_slice(&self.bytes)
    }

    /// The same object with another revision spliced in (a tombstone carries the deletion's revision).
    pub fn with_rv(&self, rv: u64) -> Stored {
        let (prefix, suffix) = (&self.bytes[..self.rv_span.0], &self.bytes[self.rv_span.1..]);
        let (bytes, rv_span) = splice(prefix, rv, suffix);
        Stored::new(rv, bytes, rv_span, self.meta.clone())
    }

    /// Rebuilds a stored object from its encoding (used when loading the log).
    pub fn from_bytes(rv: u64, bytes: Bytes, selectable: &[String]) -> Result<Stored, serde_json::Error> {
        let value: Value = serde_json::from_slice(&bytes)?;
        let encoded = Encoded::new(value, None, selectable)?;
        Ok(encoded.finish(rv))
    }
}

/// An object serialized with a placeholder revision, ready to be stored.
#[derive(Debug)]
pub struct Encoded {
    prefix: Bytes,
    suffix: Bytes,
    pub meta: Arc<ObjMeta>,
}

impl Encoded {
    /// Serializes `obj`, whose `metadata.resourceVersion` is replaced by the placeholder,
    /// with `managers` as its managedFields when given.
    pub fn new(obj: Value, managers: Option<&Managers>, selectable: &[String]) -> Result<Self, serde_json::Error> {
        Self::with_apart(obj, (managers, &[]), selectable)
    }

    /// [`Encoded::new`] of an object whose top-level members `apart` are kept as their
    /// stored text, outside `obj`: written as they are, in key order among the others.
    /// The selectable fields must not be among them.
    pub fn with_apart(
        mut obj: Value,
        (managers, apart): (Option<&Managers>, &[(String, &RawValue)]),
        selectable: &[String],
    ) -> Result<Self, serde_json::Error> {
        let meta = Arc::new(ObjMeta::from_value(&obj, selectable));
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("resourceVersion".into(), Value::String(RV_MARKER.into()));
        }
        // Most objects fit: no reallocations while writing. The stored copy is exact.
        let mut bytes = Vec::with_capacity(ENCODE_CAPACITY);
        if managers.is_none() && apart.is_empty() {
            serde_json::to_writer(&mut bytes, &obj)?;
        } else {
            let mut apart: Vec<&(String, &RawValue)> = apart.iter().collect();
            apart.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            serde_json::to_writer(&mut bytes, &WithManagers { obj: &obj, managers, apart })?;
        }
        let marker = &*MARKER;
        let pos = marker.find(&bytes).ok_or_else(|| {
            serde_json::Error::io(std::io::Error::other("object has no metadata to carry a resourceVersion"))
        })?;
        let marker_len = marker.needle().len();
        if marker.find(&bytes[pos + 1..]).is_some() {
            return Err(serde_json::Error::io(std::io::Error::other("object contains a reserved string")));
        }
        let bytes = Bytes::from(bytes);
        Ok(Self { prefix: bytes.slice(..pos + 1), suffix: bytes.slice(pos + marker_len - 1..), meta })
    }

    /// True when this encoding equals `old` apart from the revision: the write would change nothing.
    pub fn same_as(&self, old: &Stored) -> bool {
        old.bytes.len() >= old.rv_span.1
            && &old.bytes[..old.rv_span.0] == self.prefix.as_ref()
            && &old.bytes[old.rv_span.1..] == self.suffix.as_ref()
    }

    /// Completes the encoding with its revision.
    pub fn finish(&self, rv: u64) -> Stored {
        let (bytes, rv_span) = splice(&self.prefix, rv, &self.suffix);
        Stored::new(rv, bytes, rv_span, self.meta.clone())
    }
}

/// An object serialized with `managers` as its `metadata.managedFields` (in place of any
/// it has), where a JSON object sorts the key, left out when there are none; and with the
/// stored members `apart` (sorted by key) among its own.
struct WithManagers<'a> {
    obj: &'a Value,
    managers: Option<&'a Managers>,
    apart: Vec<&'a (String, &'a RawValue)>,
}

impl Serialize for WithManagers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(top) = self.obj else { return self.obj.serialize(s) };
        let mut out = s.serialize_map(Some(top.len() + self.apart.len()))?;
        let mut apart = self.apart.iter().peekable();
        for (k, v) in top {
            while let Some((ak, av)) = apart.next_if(|(ak, _)| ak < k) {
                out.serialize_entry(ak, av)?;
            }
            match (v, self.managers) {
                (Value::Object(meta), Some(managers)) if k == "metadata" => {
                    out.serialize_entry(k, &MetadataWith { meta, managers })?
                }
                _ => out.serialize_entry(k, v)?,
            }
        }
        for (ak, av) in apart {
            out.serialize_entry(ak, av)?;
        }
        out.end()
    }
}

struct MetadataWith<'a> {
    meta: &'a Map<String, Value>,
    managers: &'a Managers,
}

impl Serialize for MetadataWith<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const KEY: &str = "managedFields";
        let mut out = s.serialize_map(None)?;
        let mut pending = !self.managers.is_empty();
        for (k, v) in self.meta {
            if pending && k.as_str() > KEY {
                out.serialize_entry(KEY, self.managers)?;
                pending = false;
            }
            if k != KEY {
                out.serialize_entry(k, v)?;
            }
        }
        if pending {
            out.serialize_entry(KEY, self.managers)?;
        }
        out.end()
    }
}

fn splice(prefix: &[u8], rv: u64, suffix: &[u8]) -> (Bytes, (usize, usize)) {
    let digits = rv.to_string();
    let mut out = BytesMut::with_capacity(prefix.len() + digits.len() + suffix.len());
    out.put_slice(prefix);
    let start = out.len();
    out.put_slice(digits.as_bytes());
    let end = out.len();
    out.put_slice(suffix);
    (out.freeze(), (start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn managers_are_written_where_the_object_would_have_them() {
        let list = json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}},
            "manager": "m", "operation": "Update", "time": "2026-01-01T00:00:00Z"}]);
        let with = |meta: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}});
        let managers = Managers::Json(list.clone());
        for meta in [json!({"name": "a", "labels": {"x": "1"}}), json!({"labels": {"x": "1"}}), json!({"name": "a"})] {
            let mut full = meta.clone();
            full["managedFields"] = list.clone();
            let direct = Encoded::new(with(meta), Some(&managers), &[]).unwrap().finish(3);
            let tree = Encoded::new(with(full), None, &[]).unwrap().finish(3);
            assert_eq!(direct.bytes, tree.bytes);
        }
        let empty = Managers::Json(json!([]));
        let s = Encoded::new(with(json!({"name": "a", "managedFields": list})), Some(&empty), &[]).unwrap().finish(3);
        assert!(s.to_value().unwrap()["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn members_kept_as_stored_text_encode_as_the_whole_object_would() {
        let list = json!([{"apiVersion": "v1", "manager": "m", "operation": "Update"}]);
        let managers = Managers::Json(list);
        let whole = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a"}, "spec": {"b": [1, "x"]},
            "status": {"s": {"t": true}}, "zz": 1});
        let stored = Encoded::new(whole.clone(), None, &[]).unwrap().finish(3);
        for keep in [&["status"][..], &["spec", "zz"], &["apiVersion", "status"]] {
            let parsed: Value = serde_json::from_slice(&stored.bytes).unwrap();
            let mut obj = whole.clone();
            let mut apart = Vec::new();
            for k in keep {
                let text = serde_json::to_string(&parsed[*k]).unwrap();
                apart.push((k.to_string(), RawValue::from_string(text).unwrap()));
                obj.as_object_mut().unwrap().remove(*k);
            }
            // Stored order is not required: the encoder sorts them among the others.
            apart.reverse();
            let apart: Vec<(String, &RawValue)> = apart.iter().map(|(k, r)| (k.clone(), &**r)).collect();
            for m in [None, Some(&managers)] {
                let split = Encoded::with_apart(obj.clone(), (m, &apart), &[]).unwrap().finish(3);
                let full = Encoded::new(whole.clone(), m, &[]).unwrap().finish(3);
                assert_eq!(split.bytes, full.bytes, "{keep:?}");
                assert!(Encoded::with_apart(obj.clone(), (m, &apart), &[]).unwrap().same_as(&full));
            }
        }
    }

    #[test]
    fn splices_revision_and_detects_noop() {
        let obj =
            json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v"}});
        let enc = Encoded::new(obj.clone(), None, &[]).unwrap();
        let s = enc.finish(42);
        let back = s.to_value().unwrap();
        assert_eq!(back["metadata"]["resourceVersion"], "42");
        assert_eq!(back["data"]["k"], "v");
        assert_eq!(s.meta.label("x"), Some("1"));

        let again = Encoded::new(back.clone(), None, &[]).unwrap();
        assert!(again.same_as(&s), "re-encoding the stored object is a no-op");
        let mut changed = back;
        changed["data"]["k"] = json!("w");
        assert!(!Encoded::new(changed, None, &[]).unwrap().same_as(&s));

        let t = s.with_rv(1000);
        assert_eq!(t.to_value().unwrap()["metadata"]["resourceVersion"], "1000");
        assert_eq!(t.with_rv(7).to_value().unwrap()["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn event_with_nested_resource_version_is_spliced_in_metadata() {
        let obj =
            json!({"apiVersion":"v1","kind":"Event","involvedObject":{"resourceVersion":"9"},"metadata":{"name":"e"}});
        let s = Encoded::new(obj, None, &["involvedObject.resourceVersion".into()]).unwrap().finish(5);
        let v = s.to_value().unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "5");
        assert_eq!(v["involvedObject"]["resourceVersion"], "9");
        assert_eq!(s.meta.fields, vec![Some("9".to_string())]);
    }
}
