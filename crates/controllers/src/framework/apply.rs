//! Server-side apply for the fields a controller owns: labels and annotations it propagates
//! and the in-place fields of a template. Each controller applies, under its own field
//! manager and with `force` (as upstream's controllers do), a minimal apply configuration
//! holding only what it means to own; the API server's field ownership then removes what
//! the controller stops applying while leaving what other actors (users) set.
//!
//! Applies are skipped when they would change nothing: [`would_change`] compares the
//! configuration with the object's current values of the same fields, and with the fields
//! the manager's earlier apply owns (its `managedFields` entry), which an apply omitting
//! them would remove.
//!
//! Objects the controller created with POST, or that predate managedFields, carry no Apply
//! entry for the manager. Applying to them as they are would share ownership of every
//! equal value with the Update entries that wrote them (the creator's, the server's
//! `before-first-apply`), and a later removal would then leave the value in place. So the
//! first apply is preceded by [`adoption`]: one write taking the configuration's fields out
//! of every Update entry and adding an Apply entry of the manager owning them, so the apply
//! that follows owns them alone. Apply entries (other appliers) keep what they own.

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::metrics;

/// The manager the API server records for the state of an object that had no
/// managedFields when it was first applied to.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// A minimal apply configuration: apiVersion, kind, name, namespace, and the fields set
/// through the builder methods. Absent values (`None`, empty label maps) are left out, so
/// applying the configuration gives up (and so removes) a field the manager owned before.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyConfig {
    body: Value,
}

impl ApplyConfig {
    pub fn new(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Self {
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(name));
        if let Some(ns) = namespace {
            metadata.insert("namespace".into(), json!(ns));
        }
        Self { body: json!({"apiVersion": api_version, "kind": kind, "metadata": metadata}) }
    }

    /// A configuration for `obj`'s kind and identity.
    pub fn for_object<K: Resource<DynamicType = ()>>(obj: &K) -> Self {
        let meta = obj.meta();
        Self::new(
            &K::api_version(&()),
            &K::kind(&()),
            meta.name.as_deref().unwrap_or_default(),
            meta.namespace.as_deref(),
        )
    }

    /// Owns these labels (no others).
    pub fn labels(self, labels: &BTreeMap<String, String>) -> Self {
        self.map(&["metadata", "labels"], labels)
    }

    /// Owns these annotations (no others).
    pub fn annotations(self, annotations: &BTreeMap<String, String>) -> Self {
        self.map(&["metadata", "annotations"], annotations)
    }

    /// Owns these keys of the map at `path` (nothing when empty).
    pub fn map(self, path: &[&str], entries: &BTreeMap<String, String>) -> Self {
        if entries.is_empty() {
            return self;
        }
        self.set(path, json!(entries))
    }

    /// Owns the field at `path`, set to `value`; `null` leaves it out.
    pub fn set(mut self, path: &[&str], value: Value) -> Self {
        if value.is_null() {
            return self;
        }
        let Some((last, parents)) = path.split_last() else {
            return self;
        };
        let mut node = &mut self.body;
        for p in parents {
            if !node.get(*p).is_some_and(Value::is_object) {
                node[*p] = json!({});
            }
            node = &mut node[*p];
        }
        node[*last] = value;
        self
    }

    /// Owns an optional field at `path`.
    pub fn opt<T: serde::Serialize>(self, path: &[&str], value: Option<&T>) -> Self {
        match value.and_then(|v| serde_json::to_value(v).ok()) {
            Some(v) => self.set(path, v),
            None => self,
        }
    }

    /// The request body.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// The fields set, without apiVersion, kind, name and namespace (which nobody owns).
    pub fn fields(&self) -> Value {
        let mut f = self.body.clone();
        if let Some(o) = f.as_object_mut() {
            o.remove("apiVersion");
            o.remove("kind");
            let empty = o.get_mut("metadata").and_then(Value::as_object_mut).is_some_and(|m| {
                m.remove("name");
                m.remove("namespace");
                m.is_empty()
            });
            if empty {
                o.remove("metadata");
            }
        }
        f
    }

    /// The `fieldsV1` set an apply of this configuration owns: every field set, with maps
    /// owned key by key and lists and scalars as leaves.
    pub fn owned_set(&self) -> Value {
        fn walk(v: &Value) -> Value {
            match v {
                Value::Object(m) if !m.is_empty() => {
                    Value::Object(m.iter().map(|(k, v)| (format!("f:{k}"), walk(v))).collect())
                }
                _ => json!({}),
            }
        }
        walk(&self.fields())
    }
}

/// The field set of `manager`'s Apply entry on the main resource, if any.
pub fn applied_by<'a>(meta: &'a ObjectMeta, manager: &str) -> Option<&'a Value> {
    meta.managed_fields
        .iter()
        .flatten()
        .find(|e| is_apply_of(e, manager))
        .map(|e| e.fields_v1.as_ref().map_or(&Value::Null, |f| &f.0))
}

fn is_apply_of(e: &ManagedFieldsEntry, manager: &str) -> bool {
    e.manager.as_deref() == Some(manager) && e.operation.as_deref() == Some("Apply") && e.subresource.is_none()
}

/// Whether applying `config` as `manager` would change an object whose current values of
/// the configuration's fields are `current` (an [`ApplyConfig`] built from the object the
/// same way): a value differs, or the manager's earlier apply owns a field the object has
/// and the configuration no longer sets.
pub fn would_change(current: &ApplyConfig, meta: &ObjectMeta, manager: &str, config: &ApplyConfig) -> bool {
    let (have, want) = (current.fields(), config.fields());
    !is_subset(&want, &have) || applied_by(meta, manager).is_some_and(|owned| gives_up(owned, &want, &have))
}

/// Every field of `want` is in `have` with the same value (maps compared key by key).
fn is_subset(want: &Value, have: &Value) -> bool {
    match (want, have) {
        (Value::Object(w), Value::Object(h)) => w.iter().all(|(k, wv)| h.get(k).is_some_and(|hv| is_subset(wv, hv))),
        _ => want == have,
    }
}

/// A field owned in `owned` (a fieldsV1 node) that `have` has and `want` does not set.
fn gives_up(owned: &Value, want: &Value, have: &Value) -> bool {
    let Some(owned) = owned.as_object() else { return false };
    owned.iter().any(|(k, child)| {
        let Some(name) = k.strip_prefix("f:") else { return false };
        let Some(h) = have.get(name) else { return false };
        match want.get(name) {
            None => true,
            Some(w) => w.is_object() && h.is_object() && gives_up(child, w, h),
        }
    })
}

/// The managedFields an object needs before `manager` first applies `config` to it, or
/// `None` when the manager already has an Apply entry. The configuration's fields are taken
/// out of every Update entry (entries left empty are dropped): writes by updaters never
/// give fields up, so sharing them would keep every value the manager later stops
/// applying. An Apply entry of `manager` owning the configuration's fields is added.
pub fn adoption(meta: &ObjectMeta, manager: &str, config: &ApplyConfig) -> Option<Vec<Value>> {
    let entries = meta.managed_fields.as_deref().unwrap_or_default();
    if entries.iter().any(|e| is_apply_of(e, manager)) {
        return None;
    }
    let owned = config.owned_set();
    let mut out = Vec::with_capacity(entries.len() + 1);
    for e in entries {
        let mut e = e.clone();
        if e.operation.as_deref() == Some("Update")
            && e.subresource.is_none()
            && let Some(f) = e.fields_v1.as_mut()
        {
            f.0 = difference(&f.0, &owned);
            if f.0.as_object().is_none_or(Map::is_empty) {
                continue;
            }
        }
        if let Ok(v) = serde_json::to_value(&e) {
            out.push(v);
        }
    }
    let time = drydock_api::time::rfc3339(jiff::Timestamp::now());
    out.push(json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": config.body["apiVersion"],
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    }));
    Some(out)
}

/// The fieldsV1 set `fields` without the paths of `remove` (a leaf of `remove` removes
/// the whole subtree). A node left with nothing but itself (`.`) is kept as a leaf.
fn difference(fields: &Value, remove: &Value) -> Value {
    let (Some(f), Some(r)) = (fields.as_object(), remove.as_object()) else {
        return fields.clone();
    };
    let mut out = Map::new();
    for (k, child) in f {
        match r.get(k) {
            None => {
                out.insert(k.clone(), child.clone());
            }
            Some(rc) if rc.as_object().is_none_or(Map::is_empty) => {}
            Some(rc) => {
                let rest = difference(child, rc);
                let Some(m) = rest.as_object() else { continue };
                if m.is_empty() {
                    continue;
                }
                let only_self = m.len() == 1 && m.contains_key(".");
                out.insert(k.clone(), if only_self { json!({}) } else { rest });
            }
        }
    }
    Value::Object(out)
}

/// Applies `config` as `manager` (forced) to the object `meta` describes, after its
/// [`adoption`] when it needs one; counts each write for `controller`.
pub async fn apply<K>(
    api: &Api<K>,
    controller: &str,
    meta: &ObjectMeta,
    manager: &str,
    config: &ApplyConfig,
) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let name = meta.name.as_deref().unwrap_or_default();
    if adoption(meta, manager, config).is_some() {
        // Cached objects may carry only the Apply entries (what watch events bring the
        // in-process controllers), so the entries to rewrite are read from the object.
        let live = api.get(name).await?;
        let meta = live.meta();
        if let Some(entries) = adoption(meta, manager, config) {
            // Guarded by the version it was computed from: a concurrent write may have
            // added an entry this list would drop.
            let body = json!({"metadata": {"resourceVersion": meta.resource_version, "managedFields": entries}});
            api.patch(name, &PatchParams::default(), &Patch::Merge(&body)).await?;
            metrics::write(controller);
        }
    }
    let written = api.patch(name, &PatchParams::apply(manager).force(), &Patch::Apply(config.body())).await?;
    metrics::write(controller);
    Ok(written)
}

/// Carries removals made by an apply into a copy computed before it: keys of `map` that
/// `before` had with the same value and `written` no longer has are dropped, so a later
/// merge patch from `before`'s descendants does not put them back.
pub fn carry_removals(
    map: &mut Option<BTreeMap<String, String>>,
    before: Option<&BTreeMap<String, String>>,
    written: Option<&BTreeMap<String, String>>,
) {
    let (Some(m), Some(before)) = (map.as_mut(), before) else { return };
    m.retain(|k, v| before.get(k) != Some(v) || written.is_some_and(|w| w.contains_key(k)));
    if m.is_empty() && written.is_none_or(BTreeMap::is_empty) {
        *map = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(operation.into()),
            api_version: Some("cluster.x-k8s.io/v1beta1".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(fields)),
            ..Default::default()
        }
    }

    fn config(labels: &[(&str, &str)]) -> ApplyConfig {
        ApplyConfig::new("cluster.x-k8s.io/v1beta1", "Machine", "m1", Some("ns")).labels(&map(labels))
    }

    #[test]
    fn minimal_body_and_owned_set() {
        let c = config(&[("a", "1")])
            .annotations(&BTreeMap::new())
            .set(&["spec", "nodeDrainTimeout"], json!("5m"))
            .opt::<String>(&["spec", "nodeVolumeDetachTimeout"], None)
            .set(&["spec", "readinessGates"], json!([{"conditionType": "X"}]));
        assert_eq!(
            c.body(),
            &json!({
                "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
                "metadata": {"name": "m1", "namespace": "ns", "labels": {"a": "1"}},
                "spec": {"nodeDrainTimeout": "5m", "readinessGates": [{"conditionType": "X"}]},
            })
        );
        assert_eq!(
            c.owned_set(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:nodeDrainTimeout": {}, "f:readinessGates": {}}})
        );
        // Nothing but the identity: nothing owned.
        assert_eq!(config(&[]).fields(), json!({}));
    }

    #[test]
    fn changes_when_a_value_differs_or_an_owned_field_is_given_up() {
        let want = config(&[("a", "1")]);
        let mut meta = ObjectMeta::default();
        // Equal, extra keys of others: nothing to do.
        assert!(!would_change(&config(&[("a", "1"), ("user", "x")]), &meta, "capi-machineset", &want));
        assert!(would_change(&config(&[("a", "2")]), &meta, "capi-machineset", &want));
        assert!(would_change(&config(&[]), &meta, "capi-machineset", &want));
        // `b` was applied by this manager and is no longer wanted: the apply removes it.
        meta.managed_fields = Some(vec![
            entry("kubectl-label", "Update", json!({"f:metadata": {"f:labels": {"f:user": {}}}})),
            entry("capi-machineset", "Apply", json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}})),
        ]);
        let have = config(&[("a", "1"), ("b", "2"), ("user", "x")]);
        assert!(would_change(&have, &meta, "capi-machineset", &want));
        // Once gone (or owned by someone else only), nothing to do.
        assert!(!would_change(&config(&[("a", "1"), ("user", "x")]), &meta, "capi-machineset", &want));
        assert!(!would_change(&have, &meta, "capi-machinedeployment", &want));
        // A whole map given up.
        let none = ApplyConfig::new("cluster.x-k8s.io/v1beta1", "Machine", "m1", Some("ns"));
        assert!(would_change(&have, &meta, "capi-machineset", &none));
    }

    #[test]
    fn adoption_takes_the_fields_out_of_update_entries() {
        let want = config(&[("a", "1")]);
        let mut meta = ObjectMeta::default();
        let seeded = adoption(&meta, "capi-machineset", &want).expect("needs adoption");
        assert_eq!(seeded.len(), 1);
        assert_eq!(seeded[0]["manager"], "capi-machineset");
        assert_eq!(seeded[0]["operation"], "Apply");
        assert_eq!(seeded[0]["apiVersion"], "cluster.x-k8s.io/v1beta1");
        assert_eq!(seeded[0]["fieldsV1"], json!({"f:metadata": {"f:labels": {"f:a": {}}}}));

        let status = ManagedFieldsEntry { subresource: Some("status".into()), ..entry("unknown", "Update", json!({})) };
        meta.managed_fields = Some(vec![
            entry(
                "unknown",
                "Update",
                json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}, "f:spec": {"f:x": {}}}),
            ),
            entry(BEFORE_FIRST_APPLY, "Update", json!({"f:metadata": {"f:labels": {"f:a": {}}}})),
            entry("alice", "Apply", json!({"f:metadata": {"f:labels": {"f:a": {}}}})),
            status,
        ]);
        let kept = adoption(&meta, "capi-machineset", &want).expect("needs adoption");
        let managers: Vec<&str> = kept.iter().filter_map(|e| e["manager"].as_str()).collect();
        assert_eq!(managers, ["unknown", "alice", "unknown", "capi-machineset"]);
        assert_eq!(
            kept[0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {".": {}, "f:b": {}}}, "f:spec": {"f:x": {}}})
        );
        // Another applier shares what it applied; subresource entries are left alone.
        assert_eq!(kept[1]["fieldsV1"], json!({"f:metadata": {"f:labels": {"f:a": {}}}}));
        assert_eq!(kept[2]["subresource"], "status");

        meta.managed_fields.as_mut().expect("entries").push(entry("capi-machineset", "Apply", json!({})));
        assert_eq!(adoption(&meta, "capi-machineset", &want), None);
    }

    #[test]
    fn differences_of_field_sets() {
        let f = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {"f:t": {"f:x": {}}}});
        assert_eq!(
            difference(&f, &json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:t": {}}})),
            json!({"f:metadata": {"f:labels": {}}})
        );
        assert_eq!(difference(&f, &json!({})), f);
    }

    #[test]
    fn removals_carry_into_copies() {
        let before = map(&[("a", "1"), ("gone", "x"), ("changed", "1")]);
        let written = map(&[("a", "1"), ("changed", "1")]);
        let mut want = Some(map(&[("a", "1"), ("gone", "x"), ("changed", "2"), ("new", "y")]));
        carry_removals(&mut want, Some(&before), Some(&written));
        assert_eq!(want, Some(map(&[("a", "1"), ("changed", "2"), ("new", "y")])));
        let mut only = Some(map(&[("gone", "x")]));
        carry_removals(&mut only, Some(&map(&[("gone", "x")])), None);
        assert_eq!(only, None);
    }
}
