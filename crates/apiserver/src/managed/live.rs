//! The live object's managedFields as stored: raw JSON, read only as far as a write needs.
//!
//! Most writes are a controller setting fields no other manager owns: again the ones it
//! owns already, or new ones (a status filling in). Only the writer's entry changes then.
//! That case is decided on the stored bytes, reading only the paths the write took or
//! removed, and answered with the other entries as stored and the writer's rewritten
//! (its field set decoded only when it changes); every entry is decoded into
//! [`super::Entry`] only when fields move between managers. Parsing a stored object
//! ([`parse_object`]) so never builds a JSON tree of them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde::{Deserialize, de};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::entries::Encoding;
use super::entries::Identity;
use super::{Entry, FieldSet, Operation, Writer};

/// An object's managedFields as stored (normally a JSON array of entries).
#[derive(Clone, Copy, Debug)]
pub struct Live<'a>(pub &'a RawValue);

impl Live<'_> {
    /// Whether it is a list with at least one entry.
    pub fn has_entries(&self) -> bool {
        let text = self.0.get().trim();
        text.starts_with('[') && text[1..].trim_start() != "]"
    }

    /// The entries as a JSON tree; `None` if they do not parse.
    pub fn to_value(&self) -> Option<Value> {
        serde_json::from_str(self.0.get()).ok()
    }
}

impl<'a> Live<'a> {
    /// The entries, read once for both the common update and decoding, their field sets
    /// left unparsed; `None` if one is malformed (a write then starts from none, as
    /// kube-apiserver does).
    pub fn read(self) -> Option<Entries<'a>> {
        let stored: Vec<&'a RawValue> = serde_json::from_str(self.0.get()).ok()?;
        let mut entries = Vec::with_capacity(stored.len());
        for raw in &stored {
            let e: RawEntry<'a> = serde_json::from_str(raw.get()).ok()?;
            if !matches!(e.operation.as_ref(), "Apply" | "Update")
                || e.fields_type.as_deref().is_some_and(|t| t != "FieldsV1")
            {
                return None;
            }
            entries.push(e);
        }
        Some(Entries { all: self.0, stored, entries })
    }
}

/// The stored entries ([`Live::read`]): each as stored, and read but for its field set.
pub struct Entries<'a> {
    all: &'a RawValue,
    stored: Vec<&'a RawValue>,
    entries: Vec<RawEntry<'a>>,
}

/// Parses a stored object, leaving its `metadata.managedFields` unparsed.
pub fn parse_object(bytes: &[u8]) -> serde_json::Result<(Value, Option<Live<'_>>)> {
    let (obj, managed, _) = parse_object_apart(bytes, |_| false)?;
    Ok((obj, managed))
}

/// Top-level members of a stored object kept as their stored text, in stored order.
pub type Apart<'a> = Vec<(String, &'a RawValue)>;

/// Like [`parse_object`], with the top-level members `apart` accepts left out of the tree
/// and returned as stored text: a write that cannot change them never parses them.
pub fn parse_object_apart(
    bytes: &[u8],
    apart: fn(&str) -> bool,
) -> serde_json::Result<(Value, Option<Live<'_>>, Apart<'_>)> {
    let mut managed = None;
    let mut kept = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let obj = Object { metadata: true, managed: &mut managed, apart, kept: &mut kept }.deserialize(&mut de)?;
    de.end()?;
    Ok((obj, managed.map(Live), kept))
}

/// An object whose `metadata` (at the root) or `managedFields` (in metadata) is treated
/// apart, as are the root's members `apart` accepts; every other value is parsed as usual.
struct Object<'m, 'de> {
    /// The root: its `metadata` is an Object too. Otherwise it is the metadata itself.
    metadata: bool,
    managed: &'m mut Option<&'de RawValue>,
    apart: fn(&str) -> bool,
    kept: &'m mut Apart<'de>,
}

impl<'de> DeserializeSeed<'de> for Object<'_, 'de> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Object<'_, 'de> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = match (self.metadata, key.as_str()) {
                (true, "metadata") => access.next_value_seed(Object {
                    metadata: false,
                    managed: &mut *self.managed,
                    apart: |_| false,
                    kept: &mut Vec::new(),
                })?,
                (false, "managedFields") => {
                    *self.managed = Some(access.next_value::<&'de RawValue>()?);
                    continue;
                }
                (true, k) if (self.apart)(k) => {
                    self.kept.push((key, access.next_value::<&'de RawValue>()?));
                    continue;
                }
                _ => access.next_value::<Value>()?,
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// One stored entry, its field set left unparsed.
#[derive(Deserialize)]
struct RawEntry<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Cow<'a, str>,
    #[serde(rename = "fieldsType", borrow, default)]
    fields_type: Option<Cow<'a, str>>,
    #[serde(rename = "fieldsV1", borrow)]
    fields: Option<&'a RawValue>,
    #[serde(borrow, default)]
    manager: Cow<'a, str>,
    #[serde(borrow, default)]
    operation: Cow<'a, str>,
    #[serde(borrow, default)]
    subresource: Cow<'a, str>,
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
}

impl RawEntry<'_> {
    /// The entry decoded (its operation and fieldsType checked by [`Live::read`]); `None`
    /// if its field set is malformed.
    fn decode(&self) -> Option<Entry> {
        let operation = self.operation();
        let fields = match self.fields {
            None => FieldSet::default(),
            Some(raw) => FieldSet::from_raw(raw)?,
        };
        Some(Entry {
            manager: self.manager.to_string(),
            operation,
            api_version: self.api_version.to_string(),
            time: self.time.as_deref().map(str::to_string),
            subresource: self.subresource.to_string(),
            fields,
        })
    }
}

/// An entry of the list a write leaves: as stored, or the writer's with its new time
/// and field set.
enum Piece<'e, 'a> {
    Stored(&'a RawValue),
    Mine(Mine<'e>),
}

/// The writer's entry after an update that changed only it.
struct Mine<'e> {
    api_version: &'e str,
    manager: &'e str,
    subresource: &'e str,
    /// Absent only when the stored entry had none and the write took nothing.
    time: Option<&'e str>,
    fields: Fields<'e>,
}

/// A field set as stored, or as the update left it.
enum Fields<'e> {
    Raw(&'e RawValue),
    Set(FieldSet),
    /// The stored set with what the write took and removed merged in
    /// ([`super::raw_merge::merged`]).
    Merged(Box<RawValue>),
}

impl Fields<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Fields::Raw(_) => false,
            Fields::Set(s) => s.is_empty(),
            Fields::Merged(raw) => raw.get() == "{}",
        }
    }
}

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Fields::Raw(raw) => raw.serialize(s),
            Fields::Set(set) => set.serialize(s),
            Fields::Merged(raw) => raw.serialize(s),
        }
    }
}

impl Serialize for Piece<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Piece::Stored(raw) => raw.serialize(s),
            Piece::Mine(m) => Encoding {
                api_version: m.api_version,
                fields: &m.fields,
                manager: m.manager,
                operation: "Update",
                subresource: m.subresource,
                time: m.time,
            }
            .serialize(s),
        }
    }
}

impl RawEntry<'_> {
    /// Its identity (the operation checked by [`Live::read`]).
    fn identity(&self) -> Identity<'_> {
        Identity {
            manager: &self.manager,
            operation: self.operation(),
            api_version: &self.api_version,
            subresource: &self.subresource,
        }
    }

    fn operation(&self) -> Operation {
        if self.operation == "Apply" { Operation::Apply } else { Operation::Update }
    }
}

impl Entries<'_> {
    /// Every entry decoded; `None` if a field set is malformed or two entries have the
    /// same identity.
    pub fn decode(&self) -> Option<Vec<Entry>> {
        super::entries::collect(self.entries.iter().map(RawEntry::decode))
    }

    /// The common update, decided on the stored entries: no other manager owns a field
    /// the write took or removed, so only the writer's entry changes. It comes to own what
    /// it took besides what it had, less what was removed, with the time of the write when
    /// it took anything; it is decoded only when its field set changes. The other entries
    /// are kept as stored. `None`: other entries change, one is of another version, the list
    /// is malformed, or a new entry would need the updaters capped (decoding does all that).
    pub fn only_writer_changes(&self, took: &FieldSet, removed: &FieldSet, w: &Writer<'_>) -> Option<Box<RawValue>> {
        if took.is_empty() && removed.is_empty() {
            return Some(self.all.to_owned());
        }
        let (mut mine, writer) = (None, w.update_identity());
        for (i, e) in self.entries.iter().enumerate() {
            let identity = e.identity();
            if self.entries[..i].iter().any(|o| o.identity().same(&identity)) {
                return None;
            }
            // A manager of another version owns other paths: the full path sees to it.
            if e.api_version != w.api_version {
                return None;
            }
            let level = Level::parse(e.fields?)?;
            if identity.same(&writer) {
                mine = Some((i, level));
            } else if level.0.is_empty() || level.intersects(removed)? || level.intersects(took)? {
                return None;
            }
        }
        match self.writers_entry(mine, took, removed, w)? {
            Some((at, mine)) => self.with_writers(at, mine),
            None => Some(self.all.to_owned()),
        }
    }

    /// The writer's entry after the update and its index (past the end when it is new);
    /// `Some(None)` when nothing changes.
    fn writers_entry<'e>(
        &'e self,
        mine: Option<(usize, Level<'e>)>,
        took: &FieldSet,
        removed: &FieldSet,
        w: &Writer<'e>,
    ) -> Option<Option<(usize, Mine<'e>)>> {
        let Some((i, level)) = mine else {
            if took.is_empty() {
                return Some(None);
            }
            let updaters = self.entries.iter().filter(|e| e.operation == "Update").count();
            if updaters >= super::entries::MAX_UPDATE_MANAGERS {
                return None;
            }
            let (api_version, manager, subresource) = (w.api_version, w.manager, w.subresource);
            let fields = Fields::Set(took.clone());
            return Some(Some((
                self.entries.len(),
                Mine { api_version, manager, subresource, time: Some(w.now), fields },
            )));
        };
        let e = &self.entries[i];
        let fields = if level.contains_all(took)? && !level.intersects(removed)? {
            if took.is_empty() {
                return Some(None);
            }
            Fields::Raw(e.fields?)
        } else {
            Fields::Merged(super::raw_merge::merged(e.fields?, took, removed)?)
        };
        let time = if took.is_empty() { e.time.as_deref() } else { Some(w.now) };
        let (api_version, manager, subresource) = (e.api_version.as_ref(), e.manager.as_ref(), e.subresource.as_ref());
        Some(Some((i, Mine { api_version, manager, subresource, time, fields })))
    }

    /// The stored entries with the writer's at `at` (dropped if left empty), in the order
    /// kube-apiserver keeps them (as `entries::sorted`).
    fn with_writers(&self, at: usize, mine: Mine<'_>) -> Option<Box<RawValue>> {
        let empty = mine.fields.is_empty();
        let key = |j: usize| -> (&str, &str, &str, &str, &str) {
            if j == at {
                return ("Update", mine.time.unwrap_or(""), mine.manager, mine.api_version, mine.subresource);
            }
            let e = &self.entries[j];
            let time = e.time.as_deref().unwrap_or("");
            (&e.operation, time, &e.manager, &e.api_version, &e.subresource)
        };
        let count = self.entries.len().max(at + 1);
        let mut order: Vec<usize> = (0..count).filter(|&j| j != at || !empty).collect();
        order.sort_by(|&a, &b| key(a).cmp(&key(b)));
        let mut mine = Some(mine);
        let pieces: Vec<Piece<'_, '_>> = order
            .iter()
            .filter_map(|&j| if j == at { mine.take().map(Piece::Mine) } else { Some(Piece::Stored(self.stored[j])) })
            .collect();
        serde_json::value::to_raw_value(&pieces).ok()
    }
}

/// A key of an encoded field set, borrowed when it has no escapes.
pub(super) struct Key<'a>(pub(super) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// One node of an encoded field set: its keys and their (unparsed) subtrees.
pub(super) struct Level<'a>(pub(super) Vec<(Key<'a>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Level<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Level<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field set")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Level<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = access.next_entry::<Key<'de>, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Level(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> Level<'a> {
    pub(super) fn parse(raw: &'a RawValue) -> Option<Level<'a>> {
        serde_json::from_str(raw.get()).ok()
    }

    fn child(&self, key: &str) -> Option<Option<Level<'a>>> {
        self.0.iter().find(|(k, _)| k.0 == key).map(|(_, raw)| Level::parse(raw))
    }

    /// The path to this node is in the set.
    pub(super) fn is_member(&self) -> bool {
        self.0.is_empty() || self.0.iter().any(|(k, _)| k.0 == ".")
    }

    /// Whether it holds every path of `set`; `None` if it is malformed.
    fn contains_all(&self, set: &FieldSet) -> Option<bool> {
        for (k, c) in &set.children {
            let Some(sub) = self.child(k) else { return Some(false) };
            let sub = sub?;
            if (c.member && !sub.is_member()) || !sub.contains_all(c)? {
                return Some(false);
            }
        }
        Some(true)
    }

    /// Whether it shares a path with `set`; `None` if it is malformed.
    fn intersects(&self, set: &FieldSet) -> Option<bool> {
        for (k, c) in &set.children {
            let Some(sub) = self.child(k) else { continue };
            let sub = sub?;
            if (c.member && sub.is_member()) || sub.intersects(c)? {
                return Some(true);
            }
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_object_parses_without_its_managed_fields() {
        let obj = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": [{"manager": "m", "operation": "Update"}],
                         "labels": {"managedFields": "x"}},
            "data": {"metadata": {"managedFields": []}}
        });
        let bytes = serde_json::to_vec(&obj).unwrap();
        let (v, managed) = parse_object(&bytes).unwrap();
        let mut want = obj.clone();
        want["metadata"].as_object_mut().unwrap().remove("managedFields");
        assert_eq!(v, want);
        assert_eq!(managed.and_then(|m| m.to_value()), Some(obj["metadata"]["managedFields"].clone()));
        assert!(managed.is_some_and(|m| m.has_entries()));
        let bare = serde_json::to_vec(&want).unwrap();
        assert!(parse_object(&bare).unwrap().1.is_none());
    }

    #[test]
    fn members_left_apart_stay_stored_text() {
        let bytes = br#"{"kind":"K","metadata":{"name":"a","managedFields":[]},"spec":{"x": [1, 2]},"status":{"y":1}}"#;
        let (v, managed, apart) = parse_object_apart(bytes, |k| k == "spec").unwrap();
        assert_eq!(v, json!({"kind": "K", "metadata": {"name": "a"}, "status": {"y": 1}}));
        assert!(managed.is_some_and(|m| !m.has_entries()));
        let apart: Vec<(&str, &str)> = apart.iter().map(|(k, r)| (k.as_str(), r.get())).collect();
        assert_eq!(apart, [("spec", r#"{"x": [1, 2]}"#)]);
    }

    fn fast(live: Live<'_>, took: &FieldSet, removed: &FieldSet, w: &Writer<'_>) -> Option<Box<RawValue>> {
        live.read()?.only_writer_changes(took, removed, w)
    }

    fn entries(live: Live<'_>) -> Option<Vec<Entry>> {
        live.read()?.decode()
    }

    /// What decoding every entry and updating them gives, encoded.
    fn decoded(live: Live<'_>, took: &FieldSet, removed: &FieldSet, w: &Writer<'_>) -> String {
        let list = entries(live).unwrap();
        let empty = json!({});
        let mut elsewhere = super::super::InVersions::new(&super::super::OneVersion, (&empty, &empty), "v1", &[]);
        serde_json::to_string(&super::super::update_entries(list, took.clone(), removed, w, &mut elsewhere)).unwrap()
    }

    fn writer(manager: &'static str) -> Writer<'static> {
        Writer { manager, api_version: "v1", subresource: "", ignored: &[], now: "2026-12-02T00:00:00Z" }
    }

    fn set(paths: &[&[&str]]) -> FieldSet {
        let mut s = FieldSet::default();
        for p in paths {
            s.insert(&p.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        }
        s
    }

    /// Entries as the server stores them: sorted.
    fn list() -> Value {
        json!([
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:l": {}}}},
             "manager": "d", "operation": "Apply", "time": "2026-12-01T08:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:s": {}}},
             "manager": "b", "operation": "Update", "subresource": "status", "time": "2026-12-01T07:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:k\"q": {}, "f:y": {}}},
             "manager": "b", "operation": "Update", "time": "2026-12-01T09:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}},
             "manager": "a", "operation": "Update", "time": "2026-12-01T10:00:00Z"}
        ])
    }

    #[test]
    fn an_update_changing_only_the_writers_entry_matches_decoding() {
        let raw = serde_json::value::to_raw_value(&list()).unwrap();
        let none = FieldSet::default();
        let (y, z, kq) = (&["f:data", "f:y"][..], &["f:data", "f:z"][..], &["f:data", "f:k\"q"][..]);
        let cases: Vec<(&str, FieldSet, FieldSet, &str)> = vec![
            ("setting again what it owns: only the time", set(&[y]), none.clone(), "b"),
            ("a new field joins the writer's entry", set(&[z]), none.clone(), "b"),
            ("a removal leaves the writer's entry, not its time", none.clone(), set(&[y]), "b"),
            ("both at once", set(&[z]), set(&[y, kq]), "b"),
            ("everything it owned removed: the entry goes", none.clone(), set(&[&["f:data"], y, kq]), "b"),
            ("a new writer gets its entry", set(&[&["f:data", "f:w"]]), none.clone(), "e"),
            ("a removal of what nobody owns", none.clone(), set(&[&["f:spec"]]), "e"),
        ];
        for (what, took, removed, manager) in cases {
            let w = writer(manager);
            let out =
                fast(Live(&raw), &took, &removed, &w).unwrap_or_else(|| panic!("{what}: not decided on the bytes"));
            assert_eq!(out.get(), decoded(Live(&raw), &took, &removed, &w), "{what}");
        }
        // An entry stored without a time keeps none when the write only removes.
        let untimed = json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}, "f:z": {}}},
                              "manager": "b", "operation": "Update"}]);
        let untimed = serde_json::value::to_raw_value(&untimed).unwrap();
        let removed = set(&[y]);
        let out = fast(Live(&untimed), &none, &removed, &writer("b")).unwrap();
        assert_eq!(out.get(), decoded(Live(&untimed), &none, &removed, &writer("b")));
        assert!(!out.get().contains("time"));
        // Nothing taken or removed: the stored bytes as they are.
        let same = fast(Live(&raw), &none, &none, &writer("b")).unwrap();
        assert_eq!(same.get(), raw.get());
    }

    #[test]
    fn other_managers_losing_fields_is_left_to_decoding() {
        let raw = serde_json::value::to_raw_value(&list()).unwrap();
        let none = FieldSet::default();
        let w = writer("b");
        // Taking a field an updater or an applier owns; removing one another manager owns.
        assert!(fast(Live(&raw), &set(&[&["f:data", "f:x"]]), &none, &w).is_none());
        assert!(fast(Live(&raw), &set(&[&["f:metadata", "f:labels", "f:l"]]), &none, &w).is_none());
        assert!(fast(Live(&raw), &none, &set(&[&["f:data", "f:x"]]), &w).is_none());
        // A new updater beyond the cap: decoding merges the oldest.
        let many: Vec<Value> = (0..10)
            .map(|i| {
                json!({"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {format!("f:{i}"): {}}},
                       "manager": format!("m{i}"), "operation": "Update", "time": "2026-12-01T10:00:00Z"})
            })
            .collect();
        let many = serde_json::value::to_raw_value(&many).unwrap();
        assert!(fast(Live(&many), &set(&[&["f:data", "f:new"]]), &none, &w).is_none());
        // A malformed field set, entries of one identity, an unknown operation.
        let bad =
            serde_json::value::to_raw_value(&json!([{"manager": "b", "operation": "Update", "fieldsV1": 1}])).unwrap();
        assert!(fast(Live(&bad), &set(&[&["f:data", "f:y"]]), &none, &w).is_none());
        assert_eq!(entries(Live(&bad)), None);
        let twice = serde_json::value::to_raw_value(&json!([list()[3], list()[3]])).unwrap();
        assert!(fast(Live(&twice), &set(&[&["f:data", "f:q"]]), &none, &w).is_none());
        assert_eq!(entries(Live(&twice)), None);
        let unknown = serde_json::value::to_raw_value(&json!([{"manager": "b", "operation": "Patch"}])).unwrap();
        assert!(Live(&unknown).read().is_none());
    }
}
