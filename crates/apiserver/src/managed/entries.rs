//! `metadata.managedFields`: one entry per manager identity, kept sorted and capped as
//! kube-apiserver keeps them.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::set::FieldSet;

/// At most this many `Update` entries; older ones merge into [`ANCIENT_CHANGES`].
pub const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager the oldest `Update` entries are merged into, per apiVersion.
pub const ANCIENT_CHANGES: &str = "ancient-changes";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One managedFields entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    /// RFC 3339, seconds.
    pub time: Option<String>,
    /// Empty for the main resource.
    pub subresource: String,
    pub fields: FieldSet,
}

/// Whose an entry is: one entry per identity.
#[derive(Clone, Copy, Debug)]
pub struct Identity<'a> {
    pub manager: &'a str,
    pub operation: Operation,
    pub api_version: &'a str,
    /// Empty for the main resource.
    pub subresource: &'a str,
}

impl Identity<'_> {
    /// Same manager, operation and subresource, and for updates the same apiVersion too
    /// (an applier keeps one entry across versions).
    pub fn same(&self, other: &Identity<'_>) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }
}

impl Entry {
    pub fn identity(&self) -> Identity<'_> {
        Identity {
            manager: &self.manager,
            operation: self.operation,
            api_version: &self.api_version,
            subresource: &self.subresource,
        }
    }

    /// Whether `self` is the entry of this writer ([`Identity::same`]).
    pub fn is(&self, manager: &str, operation: Operation, api_version: &str, subresource: &str) -> bool {
        self.identity().same(&Identity { manager, operation, api_version, subresource })
    }

    /// How conflict messages name the manager.
    pub fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    fn from_json(v: &Value) -> Option<Entry> {
        let operation = match v.get("operation")?.as_str()? {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return None,
        };
        if v.get("fieldsType").and_then(Value::as_str).is_some_and(|t| t != "FieldsV1") {
            return None;
        }
        let fields = match v.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(f) => FieldSet::from_fields_v1(f)?,
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        Some(Entry {
            manager: text("manager"),
            operation,
            api_version: text("apiVersion"),
            time: v.get("time").and_then(Value::as_str).map(str::to_string),
            subresource: text("subresource"),
            fields,
        })
    }
}

/// What a body's `metadata.managedFields` asks for.
pub enum Sent {
    /// Absent, or not a valid list: the live entries are kept.
    Keep,
    /// `[]` or `[{}]`: every entry is dropped.
    Reset,
    /// A valid list: it replaces the live entries.
    Replace(Vec<Entry>),
}

/// Reads the managedFields a write's body carries.
pub fn sent(v: Option<&Value>) -> Sent {
    let Some(Value::Array(list)) = v else { return Sent::Keep };
    if list.is_empty() || (list.len() == 1 && list[0].as_object().is_some_and(Map::is_empty)) {
        return Sent::Reset;
    }
    match decode(v) {
        Some(entries) if !entries.is_empty() => Sent::Replace(entries),
        _ => Sent::Keep,
    }
}

/// Parses an object's managedFields; `None` if they are malformed (a write then starts
/// from none, as kube-apiserver does).
pub fn decode(v: Option<&Value>) -> Option<Vec<Entry>> {
    let Some(v) = v else { return Some(Vec::new()) };
    let list = match v {
        Value::Null => return Some(Vec::new()),
        Value::Array(l) => l,
        _ => return None,
    };
    collect(list.iter().map(Entry::from_json))
}

/// Collects decoded entries; `None` if one is malformed or two have the same identity.
pub(super) fn collect(list: impl ExactSizeIterator<Item = Option<Entry>>) -> Option<Vec<Entry>> {
    let mut out: Vec<Entry> = Vec::with_capacity(list.len());
    for e in list {
        let e = e?;
        if out.iter().any(|o| o.identity().same(&e.identity())) {
            return None;
        }
        out.push(e);
    }
    Some(out)
}

/// An object's managedFields as a write leaves them. They are kept apart from the object
/// until it is encoded, and then serialized straight into the stored bytes.
#[derive(Clone, Debug)]
pub enum Managers {
    /// Sorted and capped entries ([`encode`]).
    Entries(Vec<Entry>),
    /// A list an apply built.
    Json(Value),
    /// The live list with at most the writer's time changed ([`super::live`]).
    Raw(Box<RawValue>),
}

impl Managers {
    pub fn is_empty(&self) -> bool {
        match self {
            Managers::Entries(list) => list.is_empty(),
            Managers::Json(v) => v.as_array().is_none_or(Vec::is_empty),
            Managers::Raw(raw) => !super::Live(raw).has_entries(),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            // Cannot fail: every map key is a string.
            Managers::Entries(list) => serde_json::to_value(list).unwrap_or_default(),
            Managers::Json(v) => v.clone(),
            Managers::Raw(raw) => super::Live(raw).to_value().unwrap_or_default(),
        }
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Encoding {
            api_version: &self.api_version,
            fields: &self.fields,
            manager: &self.manager,
            operation: self.operation.as_str(),
            subresource: &self.subresource,
            time: self.time.as_deref(),
        }
        .serialize(s)
    }
}

/// The one encoding of an entry: its keys in the order a JSON object sorts them, so the
/// bytes are those of the same entry parsed and written back.
pub(super) struct Encoding<'a, F> {
    pub api_version: &'a str,
    pub fields: &'a F,
    pub manager: &'a str,
    pub operation: &'a str,
    /// Left out when empty.
    pub subresource: &'a str,
    pub time: Option<&'a str>,
}

impl<F: Serialize> Serialize for Encoding<'_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("apiVersion", self.api_version)?;
        m.serialize_entry("fieldsType", "FieldsV1")?;
        m.serialize_entry("fieldsV1", self.fields)?;
        m.serialize_entry("manager", self.manager)?;
        m.serialize_entry("operation", self.operation)?;
        if !self.subresource.is_empty() {
            m.serialize_entry("subresource", self.subresource)?;
        }
        if let Some(t) = self.time {
            m.serialize_entry("time", t)?;
        }
        m.end()
    }
}

impl Serialize for Managers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Managers::Entries(list) => list.serialize(s),
            Managers::Json(v) => v.serialize(s),
            Managers::Raw(raw) => raw.serialize(s),
        }
    }
}

/// Sorts, drops empty entries, caps the updaters and encodes.
pub fn encode(entries: Vec<Entry>) -> Value {
    sorted(entries).to_value()
}

/// Sorts, drops empty entries and caps the updaters.
pub fn sorted(mut entries: Vec<Entry>) -> Managers {
    entries.retain(|e| !e.fields.is_empty());
    cap_updaters(&mut entries);
    entries.sort_by(|a, b| {
        (a.operation, a.time.as_deref().unwrap_or(""), &a.manager, &a.api_version, &a.subresource).cmp(&(
            b.operation,
            b.time.as_deref().unwrap_or(""),
            &b.manager,
            &b.api_version,
            &b.subresource,
        ))
    });
    Managers::Entries(entries)
}

/// Merges the oldest `Update` entries (by time, then manager) into one
/// `ancient-changes` entry per apiVersion until at most [`MAX_UPDATE_MANAGERS`] remain;
/// a bucket takes the newest merged time.
fn cap_updaters(entries: &mut Vec<Entry>) {
    let updaters = entries.iter().filter(|e| e.operation == Operation::Update).count();
    if updaters <= MAX_UPDATE_MANAGERS {
        return;
    }
    let mut order: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].operation == Operation::Update).collect();
    order.sort_by(|&a, &b| {
        (entries[a].time.as_deref().unwrap_or(""), &entries[a].manager)
            .cmp(&(entries[b].time.as_deref().unwrap_or(""), &entries[b].manager))
    });
    let mut first_of_version: Vec<(String, usize)> = Vec::new();
    let mut gone = vec![false; entries.len()];
    let mut count = updaters;
    for i in order {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        let bucket = entries
            .iter()
            .position(|e| e.manager == ANCIENT_CHANGES && e.operation == Operation::Update && e.api_version == version);
        match (bucket, first_of_version.iter().find(|(v, _)| *v == version).map(|(_, f)| *f)) {
            (Some(b), _) if b != i && !gone[b] => {
                let fields = entries[i].fields.clone();
                entries[b].fields.union(&fields);
                entries[b].time = entries[i].time.clone();
                gone[i] = true;
                count -= 1;
            }
            (_, Some(first)) => {
                let (fields, time) = (entries[i].fields.clone(), entries[i].time.clone());
                let e = &mut entries[first];
                e.manager = ANCIENT_CHANGES.to_string();
                e.fields.union(&fields);
                e.time = time;
                gone[i] = true;
                count -= 1;
            }
            _ => first_of_version.push((version, i)),
        }
    }
    let mut i = 0;
    entries.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_are_written_as_the_json_they_were_read_from() {
        let list = json!([
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:k": {}}},
             "manager": "a", "operation": "Apply", "time": "2026-01-01T00:00:00Z"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}},
             "manager": "b", "operation": "Update", "subresource": "status", "time": "2026-01-02T00:00:00Z"}
        ]);
        let managers = sorted(decode(Some(&list)).unwrap());
        assert_eq!(serde_json::to_string(&managers).unwrap(), list.to_string());
        assert_eq!(managers.to_value(), list);
    }
}
