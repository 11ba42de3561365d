//! ClusterClass v1beta2: templates named by `templateRef` (apiVersion, kind, name), naming,
//! health checks, rollout and deletion grouped as in Cluster topologies, plus availability
//! gates, the Kubernetes versions offered and an upgrade-plan extension.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster::ClusterAvailabilityGate;
use super::clusterclass_variables::{ClusterClassPatch, ClusterClassStatus, ClusterClassVariable};
use super::machine::{MachineDeletionSpec, MachineReadinessGate};
use super::topology::{
    ControlPlaneHealthCheckRemediation, TopologyHealthCheckChecks, TopologyMachineDeploymentDeletion,
    TopologyRolloutStrategy, WorkerHealthCheckRemediation,
};
use crate::admission::FieldPath;
use crate::capi::common::{MachineTaint, ObjectMeta, VersionedTemplateReference};

/// Desired state of a ClusterClass.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterClass",
    namespaced,
    status = "ClusterClassStatus",
    derive = "PartialEq",
    shortname = "cc",
    category = "cluster-api",
    doc = "A ClusterClass is a reusable shape for Clusters.",
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether the variables are known","jsonPath":".status.conditions[?(@.type==\"VariablesReady\")].status","name":"Variables Ready","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the ClusterClass was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassSpec {
    /// Extra conditions the Available condition of this class's Clusters depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub availability_gates: Option<Vec<ClusterAvailabilityGate>>,
    /// Template of the infrastructure cluster.
    pub infrastructure: InfrastructureClass,
    /// Template of the control plane.
    pub control_plane: ControlPlaneClass,
    /// Classes of worker MachineDeployments and MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersClass>,
    /// Variables Clusters of this class can set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub variables: Option<Vec<ClusterClassVariable>>,
    /// Patches applied to the templates from variable values.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub patches: Option<Vec<ClusterClassPatch>>,
    /// Kubernetes versions Clusters of this class may run (and upgrade through), in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub kubernetes_versions: Option<Vec<String>>,
    /// How upgrades of this class's Clusters are planned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<ClusterClassUpgrade>,
}

/// Template of the infrastructure cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfrastructureClass {
    /// The template object.
    pub template_ref: VersionedTemplateReference,
    /// Name template of the infrastructure cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming: Option<ClassNaming>,
}

/// A template object named by a ClusterClass (in the ClusterClass's namespace).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassTemplate {
    /// The template object.
    pub template_ref: VersionedTemplateReference,
}

/// Name template of generated objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClassNaming {
    /// Go template for names, e.g. `{{ .cluster.name }}-{{ .random }}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub template: Option<String>,
}

/// Control-plane class.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneClass {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Control-plane template (e.g. a KubeadmControlPlaneTemplate).
    pub template_ref: VersionedTemplateReference,
    /// Infrastructure machine template of control-plane Machines, if the provider uses Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_infrastructure: Option<ClusterClassTemplate>,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<ControlPlaneClassHealthCheck>,
    /// Name template of the control-plane object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming: Option<ClassNaming>,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Extra conditions the Machines' Ready condition depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}

/// Health check generated for the control plane of this class's Clusters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneClassHealthCheck {
    /// When a Machine is unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<TopologyHealthCheckChecks>,
    /// What happens to unhealthy Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<ControlPlaneHealthCheckRemediation>,
}

/// Worker classes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersClass {
    /// MachineDeployment classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub machine_deployments: Option<Vec<MachineDeploymentClass>>,
    /// MachinePool classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub machine_pools: Option<Vec<MachinePoolClass>>,
}

/// A class of worker MachineDeployments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClass {
    /// Name of the class, referenced from Cluster topologies.
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Bootstrap config template.
    pub bootstrap: ClusterClassTemplate,
    /// Infrastructure machine template.
    pub infrastructure: ClusterClassTemplate,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_check: Option<MachineDeploymentClassHealthCheck>,
    /// Failure domain the Machines are placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Name template of the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming: Option<ClassNaming>,
    /// Node drain, volume detach and Node deletion limits, and which Machines go first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<TopologyMachineDeploymentDeletion>,
    /// Seconds a new Machine must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_ready_seconds: Option<i32>,
    /// Extra conditions the Machines' Ready condition depends on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// How Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<MachineDeploymentClassRollout>,
    /// Taints the Machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}

/// Health check generated for a class's MachineDeployments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClassHealthCheck {
    /// When a Machine is unhealthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<TopologyHealthCheckChecks>,
    /// What happens to unhealthy Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<WorkerHealthCheckRemediation>,
}

/// Rollout of a class's MachineDeployments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClassRollout {
    /// How Machines are replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<TopologyRolloutStrategy>,
}

/// A class of worker MachinePools.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolClass {
    /// Name of the class, referenced from Cluster topologies.
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Bootstrap config template.
    pub bootstrap: ClusterClassTemplate,
    /// Infrastructure machine pool template.
    pub infrastructure: ClusterClassTemplate,
    /// Failure domains the machines may be placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub failure_domains: Option<Vec<String>>,
    /// Name template of the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming: Option<ClassNaming>,
    /// Node drain, volume detach and Node deletion limits of the machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Seconds a new machine must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_ready_seconds: Option<i32>,
    /// Taints the machines put on their Nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}

/// How upgrades of a class's Clusters are planned.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassUpgrade {
    /// Runtime extensions involved in upgrades.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ClusterClassUpgradeExternal>,
}

/// Runtime extensions involved in upgrades.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassUpgradeExternal {
    /// Runtime extension that computes the versions an upgrade goes through.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub generate_upgrade_plan_extension: Option<String>,
}

impl ClusterClass {
    /// Every template reference of the class, in spec order, with its field path (a
    /// template used twice is listed twice).
    pub fn template_refs(&self) -> Vec<(&VersionedTemplateReference, FieldPath)> {
        let spec = FieldPath::new("spec");
        let template_ref = |p: FieldPath| p.child("templateRef");
        let mut out = vec![(&self.spec.infrastructure.template_ref, template_ref(spec.child("infrastructure")))];
        let cp = &self.spec.control_plane;
        let cp_path = spec.child("controlPlane");
        out.push((&cp.template_ref, template_ref(cp_path.clone())));
        if let Some(mi) = &cp.machine_infrastructure {
            out.push((&mi.template_ref, template_ref(cp_path.child("machineInfrastructure"))));
        }
        let workers = spec.child("workers");
        if let Some(w) = &self.spec.workers {
            let deployments = w.machine_deployments.iter().flatten().map(|m| (&m.bootstrap, &m.infrastructure));
            let pools = w.machine_pools.iter().flatten().map(|m| (&m.bootstrap, &m.infrastructure));
            for (kind, templates) in
                [("machineDeployments", deployments.collect::<Vec<_>>()), ("machinePools", pools.collect())]
            {
                for (i, (bootstrap, infrastructure)) in templates.into_iter().enumerate() {
                    let p = workers.child(kind).index(i);
                    out.push((&bootstrap.template_ref, template_ref(p.child("bootstrap"))));
                    out.push((&infrastructure.template_ref, template_ref(p.child("infrastructure"))));
                }
            }
        }
        out
    }
}

crate::capi::conditions::impl_has_deprecated_conditions!(ClusterClass);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(ClusterClass);
