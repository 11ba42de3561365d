//! When a MachineSet runs a MachineDeployment's current template.
//!
//! Only what a Machine cannot change in place counts: the Kubernetes version, the
//! bootstrap source, the infrastructure reference and the failure domain. Labels,
//! annotations and node timeouts are propagated in place and never cause a rollout; the
//! version part of a reference's apiVersion is ignored, so a provider's API bump does not
//! replace every Machine either.

use drydock_api::capi::core::{Bootstrap, MachineTemplateSpec};
use drydock_api::capi::owner::api_group;
use k8s_openapi::api::core::v1::ObjectReference;
use serde::Serialize;

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
    rollout_fields(a) == rollout_fields(b)
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
}
