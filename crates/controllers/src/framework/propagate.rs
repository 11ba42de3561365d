//! Propagating labels, annotations and node timeouts from an owner (a MachineSet or a
//! control plane) to its Machines' infrastructure machines and bootstrap configs.
//!
//! Labels and annotations are server-side applied under the owner's metadata field
//! manager ([`super::apply`]): keys the owner stops propagating are removed, keys other
//! actors set are left alone.

use std::collections::BTreeMap;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::core::DEFAULT_NODE_DELETION_TIMEOUT_SECONDS;
use drydock_api::capi::core::v1beta2::{Machine, MachineDeletionSpec, MachineReadinessGate, MachineSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::context::Context;
use crate::external;
use crate::framework::Result;
use crate::framework::apply::{self, ApplyConfig};
use crate::framework::referenced;

/// The node timeouts, in whole seconds, a template gives its Machines (MachineSets and
/// control planes alike).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeTimeouts {
    pub drain: Option<i32>,
    pub volume_detach: Option<i32>,
    pub deletion: i32,
}

impl NodeTimeouts {
    /// From a v1beta2 template's `deletion`. Machine admission defaults an unset deletion
    /// timeout; wanting the default keeps the two from undoing each other on every reconcile.
    pub fn from_seconds(deletion: Option<&MachineDeletionSpec>) -> Self {
        let d = deletion.cloned().unwrap_or_default();
        Self {
            drain: d.node_drain_timeout_seconds,
            volume_detach: d.node_volume_detach_timeout_seconds,
            deletion: d.node_deletion_timeout_seconds.unwrap_or(DEFAULT_NODE_DELETION_TIMEOUT_SECONDS),
        }
    }

    /// As a Machine's `spec.deletion`.
    pub fn spec(&self) -> MachineDeletionSpec {
        MachineDeletionSpec {
            node_drain_timeout_seconds: self.drain,
            node_volume_detach_timeout_seconds: self.volume_detach,
            node_deletion_timeout_seconds: Some(self.deletion),
        }
    }

    pub fn is_applied(&self, spec: &MachineSpec) -> bool {
        spec.deletion.as_ref().is_some_and(|d| *d == self.spec())
    }

    pub fn apply(&self, spec: &mut MachineSpec) {
        spec.deletion = Some(self.spec());
    }
}

/// What an owner (a MachineSet, a control plane) applies to each of its Machines: labels,
/// annotations, node timeouts, and the spec fields a Machine takes in place.
pub struct MachineFields {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub timeouts: NodeTimeouts,
    pub in_place: InPlaceSpec,
}

/// Spec fields of a Machine its owner sets in place (a MachineSet, as upstream v1.11+:
/// readiness gates and minReadySeconds); unset ones are not applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InPlaceSpec {
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    pub min_ready_seconds: Option<i32>,
}

impl InPlaceSpec {
    /// True when `spec` already has every field that is set here.
    fn is_applied(&self, spec: &MachineSpec) -> bool {
        (self.readiness_gates.is_none() || spec.readiness_gates == self.readiness_gates)
            && (self.min_ready_seconds.is_none() || spec.min_ready_seconds == self.min_ready_seconds)
    }
}

impl MachineFields {
    /// A deleting Machine as its owner wants it: only its timeouts (they govern its
    /// deletion), merged rather than applied so nothing the owner owned is given up while
    /// the Machine goes.
    pub fn deleting(&self, m: &Machine) -> Machine {
        let mut want = m.clone();
        self.timeouts.apply(&mut want.spec);
        want
    }

    fn build(
        base: ApplyConfig,
        labels: &BTreeMap<String, String>,
        annotations: &BTreeMap<String, String>,
        timeouts: [Option<i32>; 3],
        in_place: &InPlaceSpec,
    ) -> ApplyConfig {
        let [drain, volume_detach, deletion] = timeouts;
        base.labels(labels)
            .annotations(annotations)
            .opt(&["spec", "deletion", "nodeDrainTimeoutSeconds"], drain.as_ref())
            .opt(&["spec", "deletion", "nodeVolumeDetachTimeoutSeconds"], volume_detach.as_ref())
            .opt(&["spec", "deletion", "nodeDeletionTimeoutSeconds"], deletion.as_ref())
            .opt(&["spec", "readinessGates"], in_place.readiness_gates.as_ref())
            .opt(&["spec", "minReadySeconds"], in_place.min_ready_seconds.as_ref())
    }

    /// The apply configuration of these fields on `m`.
    pub fn config(&self, m: &Machine) -> ApplyConfig {
        let t = &self.timeouts;
        Self::build(
            ApplyConfig::for_object(m),
            &self.labels,
            &self.annotations,
            [t.drain, t.volume_detach, Some(t.deletion)],
            &self.in_place,
        )
    }

    /// Whether applying [`MachineFields::config`] as `manager` would change `m`. Decided
    /// without building anything while the manager has applied nothing to it and it has
    /// every entry (this runs for every Machine on every reconcile of its owner).
    pub fn would_change(&self, m: &Machine, manager: &str) -> bool {
        let meta = &m.metadata;
        if apply::applied_by(meta, manager).is_none()
            && contains(meta.labels.as_ref(), &self.labels)
            && contains(meta.annotations.as_ref(), &self.annotations)
            && self.timeouts.is_applied(&m.spec)
            && self.in_place.is_applied(&m.spec)
        {
            return false;
        }
        let empty = BTreeMap::new();
        let d = m.spec.deletion.clone().unwrap_or_default();
        let current = Self::build(
            ApplyConfig::new("", "", "", None),
            meta.labels.as_ref().unwrap_or(&empty),
            meta.annotations.as_ref().unwrap_or(&empty),
            [d.node_drain_timeout_seconds, d.node_volume_detach_timeout_seconds, d.node_deletion_timeout_seconds],
            &InPlaceSpec {
                readiness_gates: m.spec.readiness_gates.clone(),
                min_ready_seconds: m.spec.min_ready_seconds,
            },
        );
        apply::would_change(&current, meta, manager, &self.config(m))
    }
}

/// Whether `have` holds every entry of `want`.
pub fn contains(have: Option<&BTreeMap<String, String>>, want: &BTreeMap<String, String>) -> bool {
    want.iter().all(|(k, v)| have.and_then(|h| h.get(k)) == Some(v))
}

/// Who applies the labels and annotations of referenced objects.
#[derive(Debug, Clone, Copy)]
pub struct Managers<'a> {
    /// The controller, for its write metrics.
    pub controller: &'a str,
    /// The field manager applying the objects' labels and annotations.
    pub manager: &'a str,
}

/// A referenced object as far as the informer caches know it.
enum Cached {
    /// A kind drydock does not cache.
    Unknown,
    /// A cached kind; the object is not (yet) in the cache, is being deleted, or has what
    /// it should.
    Settled,
    /// The metadata of an object that needs an apply.
    Stale(Box<ObjectMeta>),
}

/// Looks the object up in the informer caches; `stale` tells whether it needs an apply
/// (checked on the cached copy: only objects that need one are copied).
fn from_cache(ctx: &Context, namespace: &str, r: &ObjectReference, stale: impl Fn(&ObjectMeta) -> bool) -> Cached {
    match referenced::cached(ctx, namespace, r) {
        None => Cached::Unknown,
        Some(Some(o)) if !o.is_deleting() && stale(o.meta()) => Cached::Stale(Box::new(o.meta().clone())),
        Some(_) => Cached::Settled,
    }
}

/// The apply configuration of a referenced object's propagated metadata.
pub fn metadata_config(
    namespace: &str,
    r: &ObjectReference,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> ApplyConfig {
    ApplyConfig::new(
        r.api_version.as_deref().unwrap_or_default(),
        r.kind.as_deref().unwrap_or_default(),
        r.name.as_deref().unwrap_or_default(),
        Some(namespace),
    )
    .labels(labels)
    .annotations(annotations)
}

/// Whether applying `labels` and `annotations` as `manager` would change `meta`. The common
/// case — nothing applied by the manager yet and every entry present — is decided without
/// building anything.
pub fn metadata_would_change(
    meta: &ObjectMeta,
    manager: &str,
    config: impl FnOnce() -> ApplyConfig,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> bool {
    let present = contains(meta.labels.as_ref(), labels) && contains(meta.annotations.as_ref(), annotations);
    if apply::applied_by(meta, manager).is_none() {
        return !present;
    }
    let config = config();
    let empty = BTreeMap::new();
    let current = ApplyConfig::new("", "", "", None)
        .labels(meta.labels.as_ref().unwrap_or(&empty))
        .annotations(meta.annotations.as_ref().unwrap_or(&empty));
    apply::would_change(&current, meta, manager, &config)
}

/// Applies the owner's labels and annotations to a Machine's infrastructure machine or
/// bootstrap config. Cached kinds are compared from the cache; other kinds are read only
/// when `changed` says the Machine's own metadata was just updated (a change is
/// propagating), so a steady fleet makes no reads for them.
pub async fn sync_referenced(
    ctx: &Context,
    who: Managers<'_>,
    namespace: &str,
    r: &ContractVersionedObjectReference,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    changed: bool,
) -> Result<()> {
    // A kind whose CRD is gone has no object to label.
    let Some(r) = &referenced::resolve(ctx, namespace, r).await? else { return Ok(()) };
    let config = || metadata_config(namespace, r, labels, annotations);
    let stale = |meta: &ObjectMeta| metadata_would_change(meta, who.manager, config, labels, annotations);
    let meta = match from_cache(ctx, namespace, r, stale) {
        Cached::Stale(meta) => *meta,
        Cached::Settled => return Ok(()),
        Cached::Unknown if !changed => return Ok(()),
        Cached::Unknown => match external::get(ctx, namespace, r).await? {
            Some(obj) if obj.metadata.deletion_timestamp.is_none() && stale(&obj.metadata) => obj.metadata,
            _ => return Ok(()),
        },
    };
    let api = external::api_for(ctx, namespace, r).await;
    match apply::apply(&api, who.controller, &meta, who.manager, &config()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use serde_json::json;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn referenced_metadata_is_applied_when_missing_or_given_up() {
        let r = ObjectReference {
            api_version: Some("infrastructure.cluster.x-k8s.io/v1alpha1".into()),
            kind: Some("InMemoryMachine".into()),
            name: Some("m1".into()),
            ..Default::default()
        };
        let (labels, annotations) = (map(&[("role", "worker")]), BTreeMap::new());
        let config = || metadata_config("ns", &r, &labels, &annotations);
        assert_eq!(
            config().body(),
            &json!({
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine",
                "metadata": {"name": "m1", "namespace": "ns", "labels": {"role": "worker"}},
            })
        );
        let mut meta = ObjectMeta { labels: Some(map(&[("from-template", "x")])), ..Default::default() };
        assert!(metadata_would_change(&meta, "capi-machineset-metadata", config, &labels, &annotations));
        meta.labels = Some(map(&[("from-template", "x"), ("role", "worker"), ("old", "1")]));
        assert!(!metadata_would_change(&meta, "capi-machineset-metadata", config, &labels, &annotations));
        // `old` was applied by the manager: applying without it removes it.
        meta.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("capi-machineset-metadata".into()),
            operation: Some("Apply".into()),
            fields_v1: Some(FieldsV1(json!({"f:metadata": {"f:labels": {"f:role": {}, "f:old": {}}}}))),
            ..Default::default()
        }]);
        assert!(metadata_would_change(&meta, "capi-machineset-metadata", config, &labels, &annotations));
        meta.labels.as_mut().expect("labels").remove("old");
        assert!(!metadata_would_change(&meta, "capi-machineset-metadata", config, &labels, &annotations));
    }
}
