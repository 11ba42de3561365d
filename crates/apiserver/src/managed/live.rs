//! The live object's managedFields as stored: raw JSON, read only as far as a write needs.
//!
//! Most writes are a controller setting again fields it alone owns already. Their entries
//! change in the writer's time at most. That case is decided on the stored bytes, reading
//! only the paths the write took or removed, and answered with the stored entries and the
//! writer's rewritten; the entries are decoded into [`super::Entry`] only when ownership
//! moves. Parsing a stored object ([`parse_object`]) so never builds a JSON tree of them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde::{Deserialize, de};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::entries::Encoding;
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
    let mut managed = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let obj = Object { metadata: true, managed: &mut managed }.deserialize(&mut de)?;
    de.end()?;
    Ok((obj, managed.map(Live)))
}

/// An object whose `metadata` (at the root) or `managedFields` (in metadata) is treated
/// apart; every other value is parsed as usual.
struct Object<'m, 'de> {
    /// The root: its `metadata` is an Object too. Otherwise it is the metadata itself.
    metadata: bool,
    managed: &'m mut Option<&'de RawValue>,
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
                (true, "metadata") => {
                    access.next_value_seed(Object { metadata: false, managed: &mut *self.managed })?
                }
                (false, "managedFields") => {
                    *self.managed = Some(access.next_value::<&'de RawValue>()?);
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
        let operation = if self.operation == "Apply" { Operation::Apply } else { Operation::Update };
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

/// An entry of the list a write leaves: as stored, or with the writer's new time.
enum Piece<'e, 'a> {
    Stored(&'a RawValue),
    Retimed(&'e RawEntry<'a>, &'e str),
}

impl Serialize for Piece<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Piece::Stored(raw) => raw.serialize(s),
            Piece::Retimed(e, time) => Encoding {
                api_version: &e.api_version,
                fields: &e.fields,
                manager: &e.manager,
                operation: &e.operation,
                subresource: &e.subresource,
                time: Some(time),
            }
            .serialize(s),
        }
    }
}

impl Entries<'_> {
    /// Every entry decoded; `None` if a field set is malformed or two entries have the
    /// same identity.
    pub fn decode(&self) -> Option<Vec<Entry>> {
        super::entries::collect(self.entries.iter().map(RawEntry::decode))
    }

    /// The common update, decided on the stored entries: the writer already owns every
    /// field it took, nobody else owns any of them, and nothing owned was removed. Then
    /// only the writer's time changes (when it took anything). `None`: the entries change
    /// otherwise (or a field set is malformed).
    pub fn unchanged_but_time(&self, took: &FieldSet, removed: &FieldSet, w: &Writer<'_>) -> Option<Box<RawValue>> {
        let mut mine = None;
        for (i, e) in self.entries.iter().enumerate() {
            let is_mine = e.operation == "Update"
                && e.manager == w.manager
                && e.api_version == w.api_version
                && e.subresource == w.subresource;
            let fields = e.fields?;
            if !took.is_empty() || !removed.is_empty() {
                let fields = Level::parse(fields)?;
                if fields.intersects(removed)? {
                    return None;
                }
                if is_mine {
                    if !fields.contains_all(took)? {
                        return None;
                    }
                } else if fields.intersects(took)? {
                    return None;
                }
            }
            if is_mine {
                mine = Some(i);
            }
        }
        if took.is_empty() {
            return Some(self.all.to_owned());
        }
        let i = mine?;
        // The order kube-apiserver keeps entries in (as `entries::sorted`).
        let key = |j: usize| {
            let e = &self.entries[j];
            let time = if j == i { w.now } else { e.time.as_deref().unwrap_or("") };
            (e.operation.as_ref(), time, e.manager.as_ref(), e.api_version.as_ref(), e.subresource.as_ref())
        };
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| key(a).cmp(&key(b)));
        let pieces: Vec<Piece<'_, '_>> = order
            .iter()
            .map(|&j| if j == i { Piece::Retimed(&self.entries[j], w.now) } else { Piece::Stored(self.stored[j]) })
            .collect();
        serde_json::value::to_raw_value(&pieces).ok()
    }
}

/// A key of an encoded field set, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

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
struct Level<'a>(Vec<(Key<'a>, &'a RawValue)>);

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
    fn parse(raw: &'a RawValue) -> Option<Level<'a>> {
        serde_json::from_str(raw.get()).ok()
    }

    fn child(&self, key: &str) -> Option<Option<Level<'a>>> {
        self.0.iter().find(|(k, _)| k.0 == key).map(|(_, raw)| Level::parse(raw))
    }

    /// The path to this node is in the set.
    fn is_member(&self) -> bool {
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

    fn unchanged_but_time(
        live: Live<'_>,
        took: &FieldSet,
        removed: &FieldSet,
        w: &Writer<'_>,
    ) -> Option<Box<RawValue>> {
        live.read()?.unchanged_but_time(took, removed, w)
    }

    fn entries(live: Live<'_>) -> Option<Vec<Entry>> {
        live.read()?.decode()
    }

    fn writer() -> Writer<'static> {
        Writer { manager: "b", api_version: "v1", subresource: "", ignored: &[], now: "2026-12-02T00:00:00Z" }
    }

    fn set(paths: &[&[&str]]) -> FieldSet {
        let mut s = FieldSet::default();
        for p in paths {
            s.insert(&p.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        }
        s
    }

    #[test]
    fn the_common_update_rewrites_only_the_writers_time() {
        let list = json!([
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}},
             "manager": "a", "operation": "Update", "time": "2026-12-01T10:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:k\"q": {}}},
             "manager": "b", "operation": "Update", "time": "2026-12-01T09:00:00Z"}
        ]);
        let raw = serde_json::value::to_raw_value(&list).unwrap();
        let took = set(&[&["f:data", "f:k\"q"]]);
        let out = unchanged_but_time(Live(&raw), &took, &FieldSet::default(), &writer()).unwrap();
        // What decoding the entries, changing the time and sorting them gives.
        let mut decoded = super::super::entries::decode(Some(&list)).unwrap();
        assert_eq!(entries(Live(&raw)), Some(decoded.clone()));
        decoded[1].time = Some("2026-12-02T00:00:00Z".into());
        let want = serde_json::to_string(&super::super::entries::sorted(decoded)).unwrap();
        assert_eq!(out.get(), want);
        // Nothing taken: the stored bytes as they are.
        let same = unchanged_but_time(Live(&raw), &FieldSet::default(), &FieldSet::default(), &writer()).unwrap();
        assert_eq!(same.get(), raw.get());
    }

    #[test]
    fn ownership_moving_is_left_to_the_decoded_entries() {
        let list = json!([
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}},
             "manager": "a", "operation": "Update", "time": "2026-12-01T10:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}},
             "manager": "b", "operation": "Update", "time": "2026-12-01T09:00:00Z"}
        ]);
        let raw = serde_json::value::to_raw_value(&list).unwrap();
        let none = FieldSet::default();
        // Taking a field another manager owns, or one the writer does not own yet.
        assert!(unchanged_but_time(Live(&raw), &set(&[&["f:data", "f:x"]]), &none, &writer()).is_none());
        assert!(unchanged_but_time(Live(&raw), &set(&[&["f:data", "f:z"]]), &none, &writer()).is_none());
        // Removing an owned field.
        assert!(unchanged_but_time(Live(&raw), &none, &set(&[&["f:data", "f:x"]]), &writer()).is_none());
        // A malformed field set.
        let bad =
            serde_json::value::to_raw_value(&json!([{"manager": "b", "operation": "Update", "fieldsV1": 1}])).unwrap();
        assert!(unchanged_but_time(Live(&bad), &set(&[&["f:data", "f:y"]]), &none, &writer()).is_none());
        assert_eq!(entries(Live(&bad)), None);
        let twice = serde_json::value::to_raw_value(&json!([list[0], list[0]])).unwrap();
        assert_eq!(entries(Live(&twice)), None);
        let unknown = serde_json::value::to_raw_value(&json!([{"manager": "b", "operation": "Patch"}])).unwrap();
        assert!(Live(&unknown).read().is_none());
    }
}
