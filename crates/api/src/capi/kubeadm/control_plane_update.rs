//! What may change in a KubeadmControlPlane spec (v1beta2) after creation. Control-plane
//! nodes are configured once by kubeadm, so most of the kubeadm configuration is fixed;
//! changes to the allowed parts trigger a rollout or are applied in place.

use serde_json::Value;

use super::v1beta2::KubeadmControlPlaneSpec;
use crate::admission::{FieldError, FieldPath};
use crate::capi::validation::to_value;
use crate::capi::version;

/// Spec paths (dot-separated) whose contents may change; anything below them is allowed.
/// Fixed are the cluster's identity as kubeadm set it up: `controlPlaneEndpoint`,
/// `certificatesDir`, `caCertificateValidityPeriodDays` (the CA is generated once) and
/// `encryptionAlgorithm`.
const MUTABLE_PATHS: &[&str] = &[
    // Every etcd setting (local image, flags, environment, data dir and SANs; external
    // endpoints and client certificates); switching between local and external is refused
    // on its own.
    "kubeadmConfigSpec.clusterConfiguration.etcd",
    "kubeadmConfigSpec.clusterConfiguration.dns",
    "kubeadmConfigSpec.clusterConfiguration.imageRepository",
    "kubeadmConfigSpec.clusterConfiguration.featureGates",
    "kubeadmConfigSpec.clusterConfiguration.apiServer",
    "kubeadmConfigSpec.clusterConfiguration.controllerManager",
    "kubeadmConfigSpec.clusterConfiguration.scheduler",
    "kubeadmConfigSpec.clusterConfiguration.certificateValidityPeriodDays",
    "kubeadmConfigSpec.initConfiguration.nodeRegistration",
    "kubeadmConfigSpec.initConfiguration.patches",
    "kubeadmConfigSpec.initConfiguration.skipPhases",
    "kubeadmConfigSpec.initConfiguration.bootstrapTokens",
    "kubeadmConfigSpec.initConfiguration.localAPIEndpoint",
    "kubeadmConfigSpec.initConfiguration.timeouts",
    "kubeadmConfigSpec.joinConfiguration.nodeRegistration",
    "kubeadmConfigSpec.joinConfiguration.patches",
    "kubeadmConfigSpec.joinConfiguration.skipPhases",
    "kubeadmConfigSpec.joinConfiguration.caCertPath",
    "kubeadmConfigSpec.joinConfiguration.controlPlane",
    "kubeadmConfigSpec.joinConfiguration.discovery",
    "kubeadmConfigSpec.joinConfiguration.timeouts",
    "kubeadmConfigSpec.bootCommands",
    "kubeadmConfigSpec.preKubeadmCommands",
    "kubeadmConfigSpec.postKubeadmCommands",
    "kubeadmConfigSpec.files",
    "kubeadmConfigSpec.verbosity",
    "kubeadmConfigSpec.users",
    "kubeadmConfigSpec.ntp",
    "kubeadmConfigSpec.ignition",
    "kubeadmConfigSpec.diskSetup",
    "kubeadmConfigSpec.format",
    "kubeadmConfigSpec.mounts",
    "machineTemplate.metadata",
    // The infrastructure reference (any of apiGroup, kind, name: there is no namespace to
    // keep), readiness gates, deletion timeouts and taints.
    "machineTemplate.spec",
    "replicas",
    "version",
    "remediation",
    "rollout",
    "machineNaming",
];

/// Collects the paths of leaves that differ between `old` and `new` (null and absent are
/// the same; lists are compared whole).
fn changed_paths(old: Option<&Value>, new: Option<&Value>, prefix: &mut Vec<String>, out: &mut Vec<String>) {
    let old = old.filter(|v| !v.is_null());
    let new = new.filter(|v| !v.is_null());
    if old == new {
        return;
    }
    let (old_map, new_map) = (old.and_then(Value::as_object), new.and_then(Value::as_object));
    let objects = (old_map.is_some() || old.is_none()) && (new_map.is_some() || new.is_none());
    if !objects {
        out.push(prefix.join("."));
        return;
    }
    let mut keys: Vec<&String> = old_map.into_iter().chain(new_map).flat_map(|m| m.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        prefix.push(k.clone());
        changed_paths(old_map.and_then(|m| m.get(k)), new_map.and_then(|m| m.get(k)), prefix, out);
        prefix.pop();
    }
}

fn is_mutable(path: &str) -> bool {
    MUTABLE_PATHS.iter().any(|m| path == *m || path.strip_prefix(m).is_some_and(|rest| rest.starts_with('.')))
}

/// Every problem with changing `old` into `new`.
pub(crate) fn validate_update(new: &KubeadmControlPlaneSpec, old: &KubeadmControlPlaneSpec) -> Vec<FieldError> {
    let spec = FieldPath::new("spec");
    let mut errs = Vec::new();
    let mut changed = Vec::new();
    changed_paths(Some(&to_value(old)), Some(&to_value(new)), &mut Vec::new(), &mut changed);
    for path in changed.iter().filter(|p| !is_mutable(p)) {
        errs.push(FieldError::forbidden(format!("spec.{path}"), "cannot be modified"));
    }
    if new.has_external_etcd() != old.has_external_etcd() {
        errs.push(FieldError::forbidden(
            "spec.kubeadmConfigSpec.clusterConfiguration.etcd",
            "cannot change between external and local etcd",
        ));
    }
    errs.extend(validate_version_change(&old.version, &new.version, &spec.child("version")));
    errs.extend(validate_coredns_tag(new, old));
    errs
}

/// Version changes a kubeadm control plane can make: upgrades of at most one minor at a time
/// (kubeadm upgrades one minor per step), never v1.19.0 (kubeadm 1.19.0 cannot join control
/// planes), and never downwards.
///
/// Upstream's KubeadmControlPlane webhook lets downgrades through (only the Cluster topology
/// webhook refuses them). drydock refuses them for every control plane, as its Day 2 issue
/// requires: once the first Machine runs the newer version, etcd and the API server may
/// have migrated stored data, and replacing Machines with older ones is not a rollback.
fn validate_version_change(old: &str, new: &str, path: &FieldPath) -> Option<FieldError> {
    if old == new {
        return None;
    }
    if new == "v1.19.0" {
        return Some(FieldError::forbidden(
            path.as_str(),
            "cannot update Kubernetes version to v1.19.0, for more information see kubernetes/kubeadm#2276",
        ));
    }
    let (Ok(o), Ok(n)) = (version::parse(old), version::parse(new)) else { return None };
    if version::is_downgrade(&o, &n) {
        return Some(FieldError::forbidden(
            path.as_str(),
            format!(
                "cannot change spec.version from {old} to {new}: downgrading a control plane is not supported; \
                 keep spec.version at {old} or later (to undo other changes, revert them instead)"
            ),
        ));
    }
    version::skips_minor(&o, &n).then(|| {
        let next = format!("v{}.{}", o.major, o.minor + 1);
        FieldError::forbidden(
            path.as_str(),
            format!(
                "cannot change spec.version from {old} to {new}: upgrades go one minor version at a time; \
                 upgrade to a {next}.x release first, then to {new}"
            ),
        )
    })
}

/// A changed CoreDNS image tag must be a semantic version, since the controller migrates the
/// Corefile between versions.
fn validate_coredns_tag(new: &KubeadmControlPlaneSpec, old: &KubeadmControlPlaneSpec) -> Option<FieldError> {
    let tag = |s: &KubeadmControlPlaneSpec| {
        s.kubeadm_config_spec
            .cluster_configuration
            .as_ref()
            .and_then(|c| c.dns.as_ref())
            .and_then(|d| d.image_tag.clone())
    };
    let new_tag = tag(new)?;
    if tag(old).as_deref() == Some(new_tag.as_str()) {
        return None;
    }
    version::parse(&new_tag).is_err().then(|| {
        FieldError::forbidden(
            "spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag",
            format!("failed to parse CoreDNS version {new_tag:?}: must be a semantic version"),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn changed_leaf_paths() {
        let mut out = Vec::new();
        changed_paths(
            Some(&json!({ "a": { "b": 1, "c": [1] }, "d": null, "e": 1 })),
            Some(&json!({ "a": { "b": 2, "c": [1, 2] }, "f": { "g": { "h": true } }, "e": 1 })),
            &mut Vec::new(),
            &mut out,
        );
        assert_eq!(out, ["a.b", "a.c", "f.g.h"]);
        assert!(is_mutable("kubeadmConfigSpec.files"));
        assert!(is_mutable("kubeadmConfigSpec.clusterConfiguration.apiServer.certSANs"));
        assert!(!is_mutable("kubeadmConfigSpec.clusterConfiguration.apiServerX"));
        assert!(is_mutable("kubeadmConfigSpec.joinConfiguration.timeouts.discoverySeconds"));
        assert!(is_mutable("machineTemplate.spec.infrastructureRef.apiGroup"));
        assert!(!is_mutable("kubeadmConfigSpec.clusterConfiguration.caCertificateValidityPeriodDays"));
        assert!(!is_mutable("kubeadmConfigSpec.clusterConfiguration.controlPlaneEndpoint"));
    }
}
