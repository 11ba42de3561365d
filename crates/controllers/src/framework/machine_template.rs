//! When a MachineSet runs a MachineDeployment's current template.
//!
//! Only what a Machine cannot change in place counts: the Kubernetes version, the
//! bootstrap source, the infrastructure reference and the failure domain. Labels,
//! annotations and node timeouts are propagated in place and never cause a rollout; the
//! version part of a reference's apiVersion is ignored, so a provider's API bump does not
//! replace every Machine either.
//!
//! The same comparison decides which set is current (the MachineDeployment's plan) and whether a
//! Machine is up to date (its v1beta2 `UpToDate`), so the two never disagree.

use std::sync::Arc;

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::core::{Bootstrap, MachineDeployment, MachineSet, MachineTemplateSpec};
use drydock_api::capi::keys::DEPLOYMENT_NAME_LABEL;
use drydock_api::capi::owner::{self, api_group};
use drydock_api::capi::v1beta2_conditions::{Observed, names};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;

use super::objects::CAPI_GROUP;

/// The parts of a Machine template that need new Machines to change.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutFields {
    version: Option<String>,
    bootstrap: Bootstrap,
    infrastructure_ref: ObjectReference,
    failure_domain: Option<String>,
}

fn group_only(r: &ObjectReference) -> ObjectReference {
    ObjectReference { api_version: r.api_version.as_deref().map(|v| api_group(v).to_string()), ..r.clone() }
}

pub fn rollout_fields(t: &MachineTemplateSpec) -> RolloutFields {
    let s = &t.spec;
    RolloutFields {
        version: s.version.clone(),
        bootstrap: Bootstrap {
            config_ref: s.bootstrap.config_ref.as_ref().map(group_only),
            data_secret_name: s.bootstrap.data_secret_name.clone(),
        },
        infrastructure_ref: group_only(&s.infrastructure_ref),
        failure_domain: s.failure_domain.clone(),
    }
}

/// True when Machines of template `a` also satisfy template `b` (no rollout needed).
pub fn equal(a: &MachineTemplateSpec, b: &MachineTemplateSpec) -> bool {
    differences(a, b).is_empty()
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
    differs("Version", opt(h.version.as_deref()), opt(w.version.as_deref()));
    differs("Bootstrap config", opt_ref(h.bootstrap.config_ref.as_ref()), opt_ref(w.bootstrap.config_ref.as_ref()));
    differs(
        "Bootstrap data secret",
        opt(h.bootstrap.data_secret_name.as_deref()),
        opt(w.bootstrap.data_secret_name.as_deref()),
    );
    differs("Infrastructure", show_ref(&h.infrastructure_ref), show_ref(&w.infrastructure_ref));
    differs("Failure domain", opt(h.failure_domain.as_deref()), opt(w.failure_domain.as_deref()));
    // Fields that render alike but differ (namespace, uid of a reference) still count.
    if out.is_empty() && h != w {
        out.push("Machine template differs from the MachineDeployment's".to_string());
    }
    out
}

fn opt(v: Option<&str>) -> String {
    v.map_or_else(|| "unset".to_string(), str::to_string)
}

fn show_ref(r: &ObjectReference) -> String {
    format!("{}/{}", r.kind.as_deref().unwrap_or_default(), r.name.as_deref().unwrap_or_default())
}

fn opt_ref(r: Option<&ObjectReference>) -> String {
    r.map_or_else(|| "unset".to_string(), show_ref)
}

/// Why the Machines of `ms` are not what `md` wants at `now` (empty: they are): template
/// differences, or a passed `rolloutAfter` that the set predates.
pub fn outdated(ms: &MachineSet, md: &MachineDeployment, now: Timestamp) -> Vec<String> {
    let mut out = differences(&ms.spec.template, &md.spec.template);
    let after = md.spec.rollout_after.as_ref().map(|t| t.0).filter(|t| now >= *t);
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

    fn template() -> MachineTemplateSpec {
        let mut t = MachineTemplateSpec::default();
        t.spec.version = Some("v1.30.2".into());
        t.spec.infrastructure_ref = ObjectReference {
            api_version: Some("infrastructure.cluster.x-k8s.io/v1alpha1".into()),
            kind: Some("InMemoryMachineTemplate".into()),
            name: Some("workers".into()),
            ..Default::default()
        };
        t.spec.bootstrap.config_ref = Some(ObjectReference {
            api_version: Some("bootstrap.cluster.x-k8s.io/v1beta1".into()),
            kind: Some("KubeadmConfigTemplate".into()),
            name: Some("workers".into()),
            ..Default::default()
        });
        t
    }

    #[test]
    fn in_place_fields_and_api_versions_do_not_count() {
        let a = template();
        let mut b = template();
        b.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
        b.metadata.annotations = Some([("x".to_string(), "y".to_string())].into());
        b.spec.node_drain_timeout = Some("5m".into());
        b.spec.node_deletion_timeout = Some("1m".into());
        b.spec.node_volume_detach_timeout = Some("1m".into());
        b.spec.cluster_name = "renamed".into();
        b.spec.infrastructure_ref.api_version = Some("infrastructure.cluster.x-k8s.io/v1beta1".into());
        assert!(equal(&a, &b));
        assert_eq!(hash(&a), hash(&b));
    }

    #[test]
    fn version_refs_and_failure_domain_count() {
        let a = template();
        let changes: [fn(&mut MachineTemplateSpec); 4] = [
            |t| t.spec.version = Some("v1.31.0".into()),
            |t| t.spec.infrastructure_ref.name = Some("workers-v2".into()),
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
        have.spec.infrastructure_ref.name = Some("workers-v1".into());
        have.spec.failure_domain = Some("fd1".into());
        assert_eq!(
            differences(&have, &template()),
            [
                "Infrastructure InMemoryMachineTemplate/workers-v1 (InMemoryMachineTemplate/workers wanted)",
                "Failure domain fd1 (unset wanted)",
            ]
        );
        let mut other_ns = template();
        other_ns.spec.infrastructure_ref.namespace = Some("elsewhere".into());
        assert_eq!(differences(&other_ns, &template()), ["Machine template differs from the MachineDeployment's"]);
        assert!(differences(&template(), &template()).is_empty());
    }
}
