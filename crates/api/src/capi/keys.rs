//! Well-known label, annotation and finalizer keys shared by the Cluster API kinds.
//!
//! The strings are part of the wire contract: existing manifests, providers and tools match
//! them exactly, so they are spelled as upstream spells them (including the plural
//! `machinedeployment.clusters.x-k8s.io` in the revision annotations).

// --- Labels -------------------------------------------------------------------------------

/// Name of the Cluster an object belongs to; defaulted by admission, forced by controllers.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// MachineDeployment name, on the MachineSets it owns and their Machines.
pub const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
/// MachineSet name (formatted as a label value), on the Machines it creates.
pub const SET_NAME_LABEL: &str = "cluster.x-k8s.io/set-name";
/// Unique per MachineSet; part of its selector and template labels.
pub const MACHINE_TEMPLATE_HASH_LABEL: &str = "machine-template-hash";
/// Present (value `""`) on control-plane Machines.
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
/// KubeadmControlPlane name (formatted), on its Machines.
pub const CONTROL_PLANE_NAME_LABEL: &str = "cluster.x-k8s.io/control-plane-name";
/// MachinePool name, on MachinePool Machines.
pub const POOL_NAME_LABEL: &str = "cluster.x-k8s.io/pool-name";
/// Optional sharding label: controllers started with a watch filter only see matching objects.
pub const WATCH_FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// Node label set when the infrastructure machine is interruptible (spot).
pub const INTERRUPTIBLE_LABEL: &str = "cluster.x-k8s.io/interruptible";
/// Pod label controlling drain: `skip` or `wait-completed`.
pub const POD_DRAIN_LABEL: &str = "cluster.x-k8s.io/drain";

// --- Annotations --------------------------------------------------------------------------

/// Presence pauses reconciliation of the annotated object only (not its children).
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// Presence marks a Machine as preferred for deletion on scale down.
pub const DELETE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/delete-machine";
/// Presence stops a MachineSet from creating Machines (OnDelete rollouts).
pub const DISABLE_MACHINE_CREATE_ANNOTATION: &str = "cluster.x-k8s.io/disable-machine-create";
/// Presence excludes a Machine from MachineHealthCheck remediation.
pub const SKIP_REMEDIATION_ANNOTATION: &str = "cluster.x-k8s.io/skip-remediation";
/// Presence asks the MachineHealthCheck to treat the Machine as unhealthy.
pub const REMEDIATE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/remediate-machine";
/// Comma-separated MachineSet preflight checks to skip (or `All`).
pub const SKIP_PREFLIGHT_CHECKS_ANNOTATION: &str = "machineset.cluster.x-k8s.io/skip-preflight-checks";
/// Cluster autoscaler lower bound; used to default `spec.replicas`.
pub const AUTOSCALER_MIN_SIZE_ANNOTATION: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
/// Cluster autoscaler upper bound; used to default `spec.replicas`.
pub const AUTOSCALER_MAX_SIZE_ANNOTATION: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
/// On a MachinePool: something outside Cluster API (an autoscaler acting on the provider's
/// pool) decides the replicas; the MachinePool takes them from its infrastructure pool.
pub const REPLICAS_MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/replicas-managed-by";
/// Rollout revision of a MachineDeployment and of its MachineSets.
pub const REVISION_ANNOTATION: &str = "machinedeployment.clusters.x-k8s.io/revision";
/// Comma-separated earlier revisions of a reused MachineSet.
pub const REVISION_HISTORY_ANNOTATION: &str = "machinedeployment.clusters.x-k8s.io/revision-history";
/// MachineDeployment replicas as seen by a MachineSet when last scaled.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "machinedeployment.clusters.x-k8s.io/desired-replicas";
/// MachineDeployment replicas plus max surge as seen by a MachineSet when last scaled.
pub const MAX_REPLICAS_ANNOTATION: &str = "machinedeployment.clusters.x-k8s.io/max-replicas";
/// Prefix of pre-drain lifecycle hooks; each `<prefix>/<name>` blocks drain while present.
pub const PRE_DRAIN_DELETE_HOOK_PREFIX: &str = "pre-drain.delete.hook.machine.cluster.x-k8s.io";
/// Prefix of pre-terminate lifecycle hooks; each `<prefix>/<name>` blocks infra deletion.
pub const PRE_TERMINATE_DELETE_HOOK_PREFIX: &str = "pre-terminate.delete.hook.machine.cluster.x-k8s.io";
/// KubeadmControlPlane's own pre-terminate hook (removes the etcd member last).
pub const KCP_CLEANUP_HOOK_ANNOTATION: &str = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup";
/// Presence skips node drain on Machine deletion.
pub const EXCLUDE_NODE_DRAINING_ANNOTATION: &str = "machine.cluster.x-k8s.io/exclude-node-draining";
/// Presence skips waiting for volume detach on Machine deletion.
pub const EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION: &str =
    "machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach";
/// RFC 3339 expiry of the Machine's certificates.
pub const CERTIFICATES_EXPIRY_ANNOTATION: &str = "machine.cluster.x-k8s.io/certificates-expiry";
/// Name of the template an object was cloned from.
pub const CLONED_FROM_NAME_ANNOTATION: &str = "cluster.x-k8s.io/cloned-from-name";
/// `Kind.group` of the template an object was cloned from.
pub const CLONED_FROM_GROUP_KIND_ANNOTATION: &str = "cluster.x-k8s.io/cloned-from-groupkind";
/// Opt-out of the Cluster topology version checks.
pub const DISABLE_UPDATE_VERSION_CHECK_ANNOTATION: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-version-check";

/// Node annotations written by the Machine controller.
pub const NODE_CLUSTER_NAME_ANNOTATION: &str = "cluster.x-k8s.io/cluster-name";
pub const NODE_CLUSTER_NAMESPACE_ANNOTATION: &str = "cluster.x-k8s.io/cluster-namespace";
pub const NODE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/machine";
pub const NODE_OWNER_KIND_ANNOTATION: &str = "cluster.x-k8s.io/owner-kind";
pub const NODE_OWNER_NAME_ANNOTATION: &str = "cluster.x-k8s.io/owner-name";
pub const NODE_LABELS_FROM_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/labels-from-machine";

/// KubeadmControlPlane annotations.
pub const KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION: &str =
    "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration";
pub const REMEDIATION_IN_PROGRESS_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/remediation-in-progress";
pub const REMEDIATION_FOR_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/remediation-for";
pub const SKIP_COREDNS_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/skip-coredns";
pub const SKIP_KUBE_PROXY_ANNOTATION: &str = "controlplane.cluster.x-k8s.io/skip-kube-proxy";

/// Lets `clusterctl move` delete a pool that still has addresses.
pub const IPAM_SKIP_VALIDATE_DELETE_ANNOTATION: &str = "ipam.cluster.x-k8s.io/skip-validate-delete-webhook";

// --- Finalizers ---------------------------------------------------------------------------

pub const CLUSTER_FINALIZER: &str = "cluster.cluster.x-k8s.io";
pub const MACHINE_FINALIZER: &str = "machine.cluster.x-k8s.io";
pub const KUBEADM_CONTROL_PLANE_FINALIZER: &str = "kubeadm.controlplane.cluster.x-k8s.io";
pub const MACHINE_DEPLOYMENT_FINALIZER: &str = "cluster.x-k8s.io/machinedeployment";
pub const MACHINE_SET_FINALIZER: &str = "cluster.x-k8s.io/machineset";
pub const MACHINE_POOL_FINALIZER: &str = "machinepool.cluster.x-k8s.io";
pub const MACHINE_DEPLOYMENT_TOPOLOGY_FINALIZER: &str = "machinedeployment.topology.cluster.x-k8s.io";
pub const IPAM_RELEASE_ADDRESS_FINALIZER: &str = "ipam.cluster.x-k8s.io/ReleaseAddress";
pub const IPAM_PROTECT_ADDRESS_FINALIZER: &str = "ipam.cluster.x-k8s.io/ProtectAddress";
pub const IPAM_PROTECT_POOL_FINALIZER: &str = "ipam.cluster.x-k8s.io/ProtectPool";

// --- Node taints --------------------------------------------------------------------------

/// Added by bootstrap, removed by the Machine controller on the first label sync.
pub const NODE_UNINITIALIZED_TAINT: &str = "node.cluster.x-k8s.io/uninitialized";
/// Marks Nodes of MachineSets older than the MachineDeployment's revision.
pub const NODE_OUTDATED_REVISION_TAINT: &str = "node.cluster.x-k8s.io/outdated-revision";

// --- MachineSet preflight checks ----------------------------------------------------------

/// Skips every preflight check.
pub const PREFLIGHT_CHECK_ALL: &str = "All";
pub const PREFLIGHT_CHECK_KUBEADM_VERSION_SKEW: &str = "KubeadmVersionSkew";
pub const PREFLIGHT_CHECK_KUBERNETES_VERSION_SKEW: &str = "KubernetesVersionSkew";
pub const PREFLIGHT_CHECK_CONTROL_PLANE_IS_STABLE: &str = "ControlPlaneIsStable";
/// Every value accepted in the skip-preflight-checks annotation (case-sensitive).
pub const PREFLIGHT_CHECKS: &[&str] = &[
    PREFLIGHT_CHECK_ALL,
    PREFLIGHT_CHECK_KUBEADM_VERSION_SKEW,
    PREFLIGHT_CHECK_KUBERNETES_VERSION_SKEW,
    PREFLIGHT_CHECK_CONTROL_PLANE_IS_STABLE,
];

/// True if `annotations` has `key` (presence semantics: the value is ignored).
pub fn has_annotation(annotations: Option<&std::collections::BTreeMap<String, String>>, key: &str) -> bool {
    annotations.is_some_and(|a| a.contains_key(key))
}

/// True if any annotation key starts with `prefix` (lifecycle hooks).
pub fn has_annotation_prefix(annotations: Option<&std::collections::BTreeMap<String, String>>, prefix: &str) -> bool {
    annotations.is_some_and(|a| a.keys().any(|k| k.starts_with(prefix)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn presence_and_prefix() {
        let mut a = BTreeMap::new();
        a.insert(format!("{PRE_DRAIN_DELETE_HOOK_PREFIX}/my-hook"), "owner".to_string());
        a.insert(PAUSED_ANNOTATION.to_string(), String::new());
        assert!(has_annotation(Some(&a), PAUSED_ANNOTATION));
        assert!(!has_annotation(Some(&a), DELETE_MACHINE_ANNOTATION));
        assert!(!has_annotation(None, PAUSED_ANNOTATION));
        assert!(has_annotation_prefix(Some(&a), PRE_DRAIN_DELETE_HOOK_PREFIX));
        assert!(!has_annotation_prefix(Some(&a), PRE_TERMINATE_DELETE_HOOK_PREFIX));
    }
}
