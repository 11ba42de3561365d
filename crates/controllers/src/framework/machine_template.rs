//! When a MachineSet runs a MachineDeployment's current template.
//!
//! Only what a Machine cannot change in place counts: the Kubernetes version, the
//! bootstrap source, the infrastructure reference and the failure domain. Labels,
//! annotations and node timeouts are propagated in place and never cause a rollout; v1beta2
//! references name an API group, not a version, so a provider's API bump does not replace
//! every Machine either.
//!
//! The same comparison decides which set is current (the MachineDeployment's plan) and whether a
//! Machine is up to date (its v1beta2 `UpToDate`), so the two never disagree.

use std::sync::Arc;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::core::v1beta2::{Bootstrap, Machine, MachineDeployment, MachineSet, MachineTemplateSpec};
use drydock_api::capi::keys::DEPLOYMENT_NAME_LABEL;
use drydock_api::capi::owner::{self, api_group};
use drydock_api::capi::v1beta2_conditions::{Observed, names};
use jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;

use super::objects::CAPI_GROUP;

/// The parts of a Machine template that need new Machines to change.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutFields<'a> {
    version: Option<&'a str>,
    bootstrap: &'a Bootstrap,
    infrastructure_ref: &'a ContractVersionedObjectReference,
    failure_domain: Option<&'a str>,
}

pub fn rollout_fields(t: &MachineTemplateSpec) -> RolloutFields<'_> {
    let s = &t.spec;
    RolloutFields {
        version: s.version.as_deref(),
        bootstrap: &s.bootstrap,
        infrastructure_ref: &s.infrastructure_ref,
        failure_domain: s.failure_domain.as_deref(),
    }
}

/// True when Machines of template `a` also satisfy template `b` (no rollout needed).
pub fn equal(a: &MachineTemplateSpec, b: &MachineTemplateSpec) -> bool {
    rollout_fields(a) == rollout_fields(b)
}

/// What Machines of template `have` lack to satisfy template `want`, one line per rollout
/// field that differs (empty: no rollout needed).
pub fn differences(have: &MachineTemplateSpec, want: &MachineTemplateSpec) -> Vec<String> {
    let (h, w) = (rollout_fields(have), rollout_fields(want));
    let mut out = Vec::new();
    let mut differs = |what: &str, h: String, w: String| {
        if h != w {
            out.push(format!("{what} {h} ({w} wanted)"));
        }
    };
    differs("Version", opt(h.version), opt(w.version));
    differs("Bootstrap config", opt_ref(h.bootstrap.config_ref.as_ref()), opt_ref(w.bootstrap.config_ref.as_ref()));
    differs(
        "Bootstrap data secret",
        opt(h.bootstrap.data_secret_name.as_deref()),
        opt(w.bootstrap.data_secret_name.as_deref()),
    );
    differs("Infrastructure", show_ref(h.infrastructure_ref), show_ref(w.infrastructure_ref));
    differs("Failure domain", opt(h.failure_domain), opt(w.failure_domain));
    // Fields that render alike but differ (the API group of a reference) still count.
    if out.is_empty() && h != w {
        out.push("Machine template differs from the MachineDeployment's".to_string());
    }
    out
}

fn opt(v: Option<&str>) -> String {
    v.map_or_else(|| "unset".to_string(), str::to_string)
}

fn show_ref(r: &ContractVersionedObjectReference) -> String {
    format!("{}/{}", r.kind, r.name)
}

fn opt_ref(r: Option<&ContractVersionedObjectReference>) -> String {
    r.map_or_else(|| "unset".to_string(), show_ref)
}

/// Why the Machines of `ms` are not what `md` wants at `now` (empty: they are): template
/// differences, or a passed `rolloutAfter` that the set predates.
pub fn outdated(ms: &MachineSet, md: &MachineDeployment, now: Timestamp) -> Vec<String> {
    let mut out = differences(&ms.spec.template, &md.spec.template);
    let after = md.spec.rollout.as_ref().and_then(|r| r.after.as_ref()).map(|t| t.0).filter(|t| now >= *t);
    if after.is_some_and(|after| ms.metadata.creation_timestamp.as_ref().is_none_or(|c| c.0 < after)) {
        out.push("MachineDeployment spec.rolloutAfter passed".to_string());
    }
    out
}

/// The `UpToDate` a Machine of `ms` gets: whether the set runs its MachineDeployment's
/// current template.
pub fn machine_up_to_date(ms: &MachineSet, md: &MachineDeployment, now: Timestamp) -> Observed {
    let outdated = outdated(ms, md, now);
    if outdated.is_empty() {
        return Observed::true_(names::UP_TO_DATE, names::UP_TO_DATE_REASON);
    }
    let message = outdated.iter().map(|l| format!("* {l}")).collect::<Vec<_>>().join("\n");
    Observed::false_(names::UP_TO_DATE, names::NOT_UP_TO_DATE_REASON, message)
}

/// The name of the MachineDeployment a MachineSet belongs to: its owner, else its
/// deployment-name label.
pub fn deployment_name(ms: &MachineSet) -> Option<&str> {
    owner::find_owner(&ms.metadata, CAPI_GROUP, "MachineDeployment")
        .map(|r| r.name.as_str())
        .or_else(|| ms.metadata.labels.as_ref().and_then(|l| l.get(DEPLOYMENT_NAME_LABEL)).map(String::as_str))
}

/// The `UpToDate` of a Machine whose MachineSet belongs to a MachineDeployment, read from
/// the stores; `None` for other Machines (a control plane sets its own Machines').
pub fn machine_up_to_date_in(ctx: &crate::Context, m: &Machine, now: Timestamp) -> Option<Observed> {
    let ns = m.metadata.namespace.as_deref().unwrap_or_default();
    let set = owner::get_controller(&m.metadata)
        .filter(|r| r.kind == "MachineSet" && api_group(&r.api_version) == CAPI_GROUP)?;
    let ms = ctx.informers.machine_sets.store.get(&ObjectRef::new(&set.name).within(ns))?;
    let md: Arc<MachineDeployment> =
        ctx.informers.machine_deployments.store.get(&ObjectRef::new(deployment_name(&ms)?).within(ns))?;
    Some(machine_up_to_date(&ms, &md, now))
}

/// The informational hash in `machine-template-hash`: FNV-1a (32 bit) of the rollout
/// fields' JSON, in decimal. Sets are matched structurally; the hash only tells people
/// which sets share a template.
pub fn hash(t: &MachineTemplateSpec) -> u32 {
    let bytes = serde_json::to_vec(&rollout_fields(t)).unwrap_or_default();
    bytes.iter().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::MachineDeletionSpec;

    fn template() -> MachineTemplateSpec {
        let mut t = MachineTemplateSpec::default();
        t.spec.version = Some("v1.30.2".into());
        t.spec.infrastructure_ref = ContractVersionedObjectReference {
            api_group: "infrastructure.cluster.x-k8s.io".into(),
            kind: "DevMachineTemplate".into(),
            name: "workers".into(),
        };
        t.spec.bootstrap.config_ref = Some(ContractVersionedObjectReference {
            api_group: "bootstrap.cluster.x-k8s.io".into(),
            kind: "KubeadmConfigTemplate".into(),
            name: "workers".into(),
        });
        t
    }

    #[test]
    fn in_place_fields_do_not_count() {
        let a = template();
        let mut b = template();
        b.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
        b.metadata.annotations = Some([("x".to_string(), "y".to_string())].into());
        b.spec.deletion = Some(MachineDeletionSpec {
            node_drain_timeout_seconds: Some(300),
            node_deletion_timeout_seconds: Some(60),
            node_volume_detach_timeout_seconds: Some(60),
        });
        b.spec.min_ready_seconds = Some(30);
        b.spec.cluster_name = "renamed".into();
        assert!(equal(&a, &b));
        assert_eq!(hash(&a), hash(&b));
    }

    #[test]
    fn version_refs_and_failure_domain_count() {
        let a = template();
        let changes: [fn(&mut MachineTemplateSpec); 4] = [
            |t| t.spec.version = Some("v1.31.0".into()),
            |t| t.spec.infrastructure_ref.name = "workers-v2".into(),
            |t| t.spec.bootstrap.data_secret_name = Some("s".into()),
            |t| t.spec.failure_domain = Some("fd1".into()),
        ];
        for change in changes {
            let mut b = template();
            change(&mut b);
            assert!(!equal(&a, &b), "{b:?}");
            assert_ne!(hash(&a), hash(&b));
        }
    }

    #[test]
    fn differences_say_what_a_rollout_changes() {
        let mut have = template();
        have.spec.infrastructure_ref.name = "workers-v1".into();
        have.spec.failure_domain = Some("fd1".into());
        assert_eq!(
            differences(&have, &template()),
            [
                "Infrastructure DevMachineTemplate/workers-v1 (DevMachineTemplate/workers wanted)",
                "Failure domain fd1 (unset wanted)",
            ]
        );
        let mut other_group = template();
        other_group.spec.infrastructure_ref.api_group = "infrastructure.example.com".into();
        assert_eq!(differences(&other_group, &template()), ["Machine template differs from the MachineDeployment's"]);
        assert!(differences(&template(), &template()).is_empty());
    }
}
