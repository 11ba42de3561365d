//! Field ownership: `metadata.managedFields` kept on every write, and server-side apply.
//!
//! A write is either an **update** (create, PUT, JSON/merge/strategic patch), whose writer
//! takes every field it added or changed from whoever owned it, or an **apply**, whose
//! writer comes to own exactly the fields of its configuration: fields it owned before and
//! no longer sets are removed unless another manager owns them, and changing a field
//! another manager owns is a conflict unless forced. Merge and ownership follow the kind's
//! schema ([`MergeType`]); sets of fields are trees of path elements ([`FieldSet`]),
//! encoded as `fieldsV1`.

pub mod apply_only;
mod entries;
mod live;
mod ops;
mod raw_merge;
mod set;
#[cfg(test)]
mod tests;
mod types;
mod versions;

use std::sync::LazyLock;

use serde_json::{Value, json};

pub use entries::{Entry, Identity, Managers, Operation};
pub use live::{Apart, Live, parse_object, parse_object_apart};
pub use ops::{compare, compare_except, merge, to_field_set};
pub use set::{FieldSet, render_path};
pub use types::MergeType;
pub use versions::{OneVersion, Versions};

use entries::Sent;
use versions::InVersions;

/// The annotation client-side `kubectl apply` keeps its configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The manager of `kubectl apply --server-side`, which upgrades client-side applied objects.
const KUBECTL: &str = "kubectl";
/// The manager that owns what an object held before its first apply.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Who writes, through which endpoint.
#[derive(Clone, Copy, Debug)]
pub struct Writer<'a> {
    pub manager: &'a str,
    /// The group/version of the endpoint.
    pub api_version: &'a str,
    /// Empty for the main resource.
    pub subresource: &'a str,
    /// Top-level fields this endpoint neither writes nor owns: `status` on the main
    /// resource of a kind with a status subresource; `metadata` and `spec` on `/status`.
    pub ignored: &'a [&'a str],
    /// RFC 3339 time of the write.
    pub now: &'a str,
}

impl Writer<'_> {
    /// The identity of the entry an update by this writer records.
    pub fn update_identity(&self) -> Identity<'_> {
        Identity {
            manager: self.manager,
            operation: Operation::Update,
            api_version: self.api_version,
            subresource: self.subresource,
        }
    }
}

/// The metadata fields the server sets, which no manager owns (nor are they compared).
const SERVER_SET_METADATA: &[&str] = &[
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

/// Fields no manager owns: type and identity, and what the server sets.
static STRIPPED: LazyLock<FieldSet> = LazyLock::new(|| {
    let mut s = FieldSet::default();
    for f in ["apiVersion", "kind", "metadata"] {
        s.insert(&[format!("f:{f}")]);
    }
    for f in SERVER_SET_METADATA {
        s.insert(&["f:metadata".to_string(), format!("f:{f}")]);
    }
    s
});

/// `set` without the fields no manager owns and those the endpoint ignores.
fn strip(mut set: FieldSet, ignored: &[&str]) -> FieldSet {
    set.subtract(&STRIPPED);
    for f in ignored {
        set.children.remove(&format!("f:{f}"));
    }
    set
}

fn live_entries(managed: Option<Live<'_>>) -> Vec<Entry> {
    managed.and_then(Live::read).and_then(|r| r.decode()).unwrap_or_default()
}

/// The managedFields after an update from `live` (`None` on create; its managedFields
/// taken out into `live_managed`) to `new`, whose body carried `sent` as its managedFields;
/// `None` when the object is not tracked (an existing object without managedFields, or a
/// body resetting them). A body sending back the live managedFields leaves them as they are.
/// Managers recorded in another version lose what the update changed as that version sees it.
pub fn track_update(
    (ty, versions): (&MergeType, &dyn Versions),
    live: Option<&Value>,
    live_managed: Option<Live<'_>>,
    new: &Value,
    sent: Option<&Value>,
    w: &Writer<'_>,
) -> Option<Managers> {
    let main = w.subresource.is_empty();
    let live_managed = live_managed.filter(Live::has_entries);
    let sent = sent.filter(|s| live_managed.and_then(|m| m.to_value()).as_ref() != Some(*s));
    let replaced = match entries::sent(sent) {
        Sent::Reset if main => return None,
        Sent::Replace(list) if main => Some(list),
        _ => None,
    };
    if replaced.is_none() && live.is_some() && live_managed.is_none() {
        return None;
    }
    let empty = json!({});
    let (changed, removed) = compare_except(live.unwrap_or(&empty), new, ty, w.ignored).into_changed();
    let took = strip(changed, w.ignored);
    let list = match replaced {
        Some(list) => list,
        None => {
            // Read once: for the common update, else to decode.
            let read = live_managed.and_then(Live::read);
            if let Some(out) = read.as_ref().and_then(|r| r.only_writer_changes(&took, &removed, w)) {
                return Some(Managers::Raw(out));
            }
            read.and_then(|r| r.decode()).unwrap_or_default()
        }
    };
    let mut elsewhere = InVersions::new(versions, (live.unwrap_or(&empty), new), w.api_version, w.ignored);
    Some(update_entries(list, took, &removed, w, &mut elsewhere))
}

/// `list` after an update by `w` that took `took` and removed `removed`: the writer's
/// entry takes them from every other entry (from one of another version, what the update
/// changed or removed there).
fn update_entries(
    mut list: Vec<Entry>,
    took: FieldSet,
    removed: &FieldSet,
    w: &Writer<'_>,
    elsewhere: &mut InVersions<'_>,
) -> Managers {
    for e in list.iter_mut() {
        if e.identity().same(&w.update_identity()) {
            continue;
        }
        match elsewhere.get(&e.api_version) {
            Some(there) => {
                e.fields.subtract(&there.added);
                e.fields.subtract(&there.modified);
                e.fields.subtract(&there.removed);
            }
            None => {
                e.fields.subtract(&took);
                e.fields.subtract(removed);
            }
        }
    }
    match list.iter_mut().find(|e| e.identity().same(&w.update_identity())) {
        Some(mine) => {
            mine.fields.union(&took);
            mine.fields.subtract(removed);
            if !took.is_empty() {
                mine.time = Some(w.now.to_string());
            }
        }
        None if !took.is_empty() => list.push(Entry {
            manager: w.manager.to_string(),
            operation: Operation::Update,
            api_version: w.api_version.to_string(),
            time: Some(w.now.to_string()),
            subresource: w.subresource.to_string(),
            fields: took,
        }),
        None => {}
    }
    entries::sorted(list)
}

/// Conflicts of an apply: per other manager, the fields it owns that the apply would change.
#[derive(Debug)]
pub struct Conflicts(pub Vec<(String, String)>);

impl Conflicts {
    /// kube-apiserver's message: `Apply failed with 1 conflict: conflict with "bob": .data.key`.
    pub fn message(&self) -> String {
        if let [(manager, path)] = self.0.as_slice() {
            return format!("Apply failed with 1 conflict: conflict with {manager}: {path}");
        }
        let mut managers: Vec<&String> = self.0.iter().map(|(m, _)| m).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for m in managers {
            lines.push(format!("conflicts with {m}:"));
            lines.extend(self.0.iter().filter(|(o, _)| o == m).map(|(_, p)| format!("- {p}")));
        }
        format!("Apply failed with {} conflicts: {}", self.0.len(), lines.join("\n"))
    }

    /// `details.causes` of the 409.
    pub fn causes(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": p}))
                .collect(),
        )
    }
}

/// The result of an apply.
#[derive(Debug)]
pub struct Applied {
    /// The object to store, managedFields set.
    pub object: Value,
    /// Whether anything but managedFields changed.
    pub changed: bool,
}

/// Applies `config` (already checked: apiVersion, kind, no managedFields; ignored fields
/// removed) to `live` (`None`: the object is created; its managedFields taken out into
/// `live_managed`). Managers recorded in another version conflict on, and lose, what the
/// apply changes as that version sees it.
pub fn apply(
    (ty, versions): (&MergeType, &dyn Versions),
    live: Option<&Value>,
    live_managed: Option<Live<'_>>,
    config: &Value,
    w: &Writer<'_>,
    force: bool,
) -> Result<Applied, Conflicts> {
    let empty = json!({});
    let base = live.unwrap_or(&empty);
    let mut list = live_entries(live_managed);
    if live.is_some() && list.is_empty() {
        list.extend(before_first_apply(ty, base, w));
    }
    let merged = merge(base, config, ty);
    let full = to_field_set(config, ty);
    let mine = strip(full.clone(), w.ignored);
    let is_mine = |e: &Entry| e.is(w.manager, Operation::Apply, w.api_version, w.subresource);
    let mut others = FieldSet::default();
    for e in list.iter().filter(|e| !is_mine(e)) {
        others.union(&e.fields);
    }
    let mut next = merged;
    let previous = list.iter().find(|e| is_mine(e)).cloned();
    if let Some(prev) = &previous {
        let mut keep = full.clone();
        keep.union(&others);
        let mut kept_there = FieldSet::default();
        for e in list.iter().filter(|e| !is_mine(e) && e.api_version == prev.api_version) {
            kept_there.union(&e.fields);
        }
        let dropped = dropped_by(&next, prev, &kept_there, (ty, versions), w.api_version);
        ops::remove(&mut next, &ops::removable(dropped.as_ref().unwrap_or(&prev.fields), &keep), ty);
    }
    let cmp = compare(base, &next, ty);
    let changed = cmp.changed();
    let mut elsewhere = InVersions::new(versions, (base, &next), w.api_version, &[]);
    let mut conflicts: Vec<(usize, FieldSet)> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        if !is_mine(e) {
            let c = match elsewhere.get(&e.api_version) {
                Some(there) => e.fields.intersection(&there.changed()),
                None => e.fields.intersection(&changed),
            };
            if !c.is_empty() {
                conflicts.push((i, c));
            }
        }
    }
    if !conflicts.is_empty() && !force && !last_applied_allows(base, &conflicts, w, ty) {
        let mut out: Vec<(String, String)> = conflicts
            .iter()
            .flat_map(|(i, set)| {
                let who = list[*i].describe();
                set.paths().into_iter().map(move |p| (who.clone(), render_path(&p)))
            })
            .collect();
        out.sort();
        return Err(Conflicts(out));
    }
    for (i, set) in &conflicts {
        list[*i].fields.subtract(set);
    }
    for e in list.iter_mut().filter(|e| !is_mine(e)) {
        match elsewhere.get(&e.api_version) {
            Some(there) => e.fields.subtract(&there.removed),
            None => e.fields.subtract(&cmp.removed),
        }
    }
    let object_changed = !cmp.is_same();
    let time = if object_changed { Some(w.now.to_string()) } else { previous.as_ref().and_then(|p| p.time.clone()) };
    list.retain(|e| !is_mine(e));
    list.push(Entry {
        manager: w.manager.to_string(),
        operation: Operation::Apply,
        api_version: w.api_version.to_string(),
        time,
        subresource: w.subresource.to_string(),
        fields: mine,
    });
    if w.manager == KUBECTL && has_last_applied(base) {
        next["metadata"]["annotations"][LAST_APPLIED] = Value::String(last_applied_of(config));
    }
    next["metadata"]["managedFields"] = entries::encode(list);
    Ok(Applied { object: next, changed: object_changed })
}

/// The applier's previous fields in this version's paths, when its previous apply was in
/// another version (`None` otherwise, or when the object does not convert: its fields are
/// then read as this version's). As structured-merge-diff prunes, each is removed in the
/// version it was applied in (unless `kept_there`, what other managers recorded there own),
/// and what that removed is read back in this version. One path at a time: removing them
/// all would leave an object without its required fields, which no longer converts.
fn dropped_by(
    next: &Value,
    prev: &Entry,
    kept_there: &FieldSet,
    (ty, versions): (&MergeType, &dyn Versions),
    writer_version: &str,
) -> Option<FieldSet> {
    if prev.api_version == writer_version {
        return None;
    }
    let (there, ty_there) = versions.view(next, &prev.api_version)?;
    let mut dropped = FieldSet::default();
    for path in prev.fields.difference(kept_there).paths() {
        let mut one = FieldSet::default();
        one.insert(&path);
        let mut without = there.clone();
        ops::remove(&mut without, &one, ty_there);
        if let Some(back) = versions.back(&without, &prev.api_version) {
            dropped.union(&compare(next, &back, ty).removed);
        }
    }
    Some(dropped)
}

/// What the object holds before its first apply is owned by one updater, so an apply
/// changing it conflicts.
fn before_first_apply(ty: &MergeType, live: &Value, w: &Writer<'_>) -> Option<Entry> {
    let all = strip(compare(&json!({}), live, ty).added, w.ignored);
    (!all.is_empty()).then(|| Entry {
        manager: BEFORE_FIRST_APPLY.to_string(),
        operation: Operation::Update,
        api_version: w.api_version.to_string(),
        time: Some(w.now.to_string()),
        subresource: String::new(),
        fields: all,
    })
}

/// The last-applied annotation `kubectl apply --server-side` keeps current on objects
/// that have one: the configuration without the annotation itself.
fn last_applied_of(config: &Value) -> String {
    let mut cfg = config.clone();
    if let Some(a) = cfg.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        a.remove(LAST_APPLIED);
        if a.is_empty()
            && let Some(m) = cfg["metadata"].as_object_mut()
        {
            m.remove("annotations");
        }
    }
    cfg.to_string()
}

fn has_last_applied(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations").and_then(|a| a.get(LAST_APPLIED)).is_some_and(Value::is_string)
}

/// `kubectl apply --server-side` on an object client-side apply managed: conflicts on
/// fields its last-applied configuration lists are taken over, as if forced.
fn last_applied_allows(live: &Value, conflicts: &[(usize, FieldSet)], w: &Writer<'_>, ty: &MergeType) -> bool {
    if w.manager != KUBECTL {
        return false;
    }
    let Some(text) = live.pointer("/metadata/annotations").and_then(|a| a.get(LAST_APPLIED)).and_then(Value::as_str)
    else {
        return false;
    };
    let Ok(last) = serde_json::from_str::<Value>(text) else { return false };
    let allowed = to_field_set(&last, ty);
    conflicts.iter().all(|(_, set)| set.difference(&allowed).is_empty())
}

/// Drops managedFields from an object (what the main resource's writes may not send on
/// apply, and what no manager owns).
pub fn take_sent(obj: &mut Value) -> Option<Value> {
    obj.get_mut("metadata").and_then(Value::as_object_mut).and_then(|m| m.remove("managedFields"))
}

pub use entries::{ANCIENT_CHANGES, MAX_UPDATE_MANAGERS};
