//! ClusterClass: a reusable shape for Clusters (templates, variables and patches).

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machinedeployment::MachineDeploymentStrategy;
use super::machinehealthcheck::UnhealthyCondition;
use super::variable_schema::VariableSchema;
use crate::capi::common::{ObjectMeta, V1Beta2Conditions};
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of a ClusterClass.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta1",
    kind = "ClusterClass",
    namespaced,
    status = "ClusterClassStatus",
    derive = "PartialEq",
    shortname = "cc",
    category = "cluster-api",
    doc = "A ClusterClass is a reusable shape for Clusters.",
    printcolumn = r#"{"description":"Time duration since creation of ClusterClass","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassSpec {
    /// Template of the infrastructure cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<LocalObjectTemplate>,
    /// Template of the control plane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlaneClass>,
    /// Classes of worker MachineDeployments and MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersClass>,
    /// Variables Clusters of this class can set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<ClusterClassVariable>>,
    /// Patches applied to the templates from variable values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Vec<ClusterClassPatch>>,
}

/// A reference to a template object in the ClusterClass's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalObjectTemplate {
    /// The template object.
    #[serde(rename = "ref")]
    pub ref_: ObjectReference,
}

/// Control-plane class.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneClass {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Control-plane template (e.g. a KubeadmControlPlaneTemplate).
    #[serde(rename = "ref")]
    pub ref_: ObjectReference,
    /// Infrastructure machine template of control-plane Machines, if the provider uses Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_infrastructure: Option<LocalObjectTemplate>,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// Name template of the control-plane object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(flatten)]
    pub timeouts: MachineTimeouts,
}

/// Name template of generated objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamingStrategy {
    /// Go template for names, e.g. `{{ .cluster.name }}-{{ .random }}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// Worker MachineDeployments and MachinePools: their classes in a ClusterClass, the
/// instances of those classes in a Cluster's topology.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Workers<D, P> {
    /// MachineDeployments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_deployments: Option<Vec<D>>,
    /// MachinePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_pools: Option<Vec<P>>,
}

impl<D, P> Default for Workers<D, P> {
    fn default() -> Self {
        Self { machine_deployments: None, machine_pools: None }
    }
}

/// Worker classes.
pub type WorkersClass = Workers<MachineDeploymentClass, MachinePoolClass>;

/// Templates of a worker MachineDeployment or MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerClassTemplate {
    /// Labels and annotations for the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Bootstrap config template.
    pub bootstrap: LocalObjectTemplate,
    /// Infrastructure machine template.
    pub infrastructure: LocalObjectTemplate,
}

/// A class of worker MachineDeployments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClass {
    /// Name of the class, referenced from Cluster topologies.
    pub class: String,
    /// Bootstrap and infrastructure templates of the Machines.
    pub template: WorkerClassTemplate,
    /// Health check of the Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// Failure domain the Machines are placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Name template of the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    /// Deletion limits and readiness wait of the Machines.
    #[serde(flatten)]
    pub machines: WorkerMachineLimits,
    /// Rollout strategy of the MachineDeployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
}

/// A class of worker MachinePools.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolClass {
    /// Name of the class, referenced from Cluster topologies.
    pub class: String,
    /// Bootstrap and infrastructure templates of the machines.
    pub template: WorkerClassTemplate,
    /// Failure domains the machines may be placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<Vec<String>>,
    /// Name template of the generated objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    /// Deletion limits and readiness wait of the Machines.
    #[serde(flatten)]
    pub machines: WorkerMachineLimits,
}

/// Limits on deleting a Machine: node drain, volume detach and Node deletion (shared by the
/// class and topology of control planes, MachineDeployments and MachinePools).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTimeouts {
    /// Upper bound on node drain time; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// Upper bound on waiting for volumes to detach; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long Node deletion is retried once the infrastructure is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
}

/// Deletion limits and readiness wait of worker Machines (shared by the classes and topology
/// of MachineDeployments and MachinePools).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerMachineLimits {
    /// Node drain, volume detach and Node deletion limits of the Machines.
    #[serde(flatten)]
    pub timeouts: MachineTimeouts,
    /// Seconds a new node must be ready before it counts as available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

/// Health check generated for Clusters of this class (and, with `enable`, for one part of a
/// Cluster's topology).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckClass {
    /// Node conditions that make a Machine unhealthy once held for their timeout (ORed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_conditions: Option<Vec<UnhealthyCondition>>,
    /// Remediation stops when more Machines than this are unhealthy (int or percent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unhealthy: Option<IntOrString>,
    /// Remediation happens only while the unhealthy count is within `[min-max]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_range: Option<String>,
    /// How long a Machine may go without a Node (0 disables the check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout: Option<String>,
    /// Template for external remediation requests, instead of owner remediation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_template: Option<ObjectReference>,
}

/// A variable Clusters of this class may set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassVariable {
    /// Name, unique in the class.
    pub name: String,
    /// Clusters must set it.
    pub required: bool,
    /// Labels and annotations attached to the variable (deprecated in favour of x-metadata).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Schema values must match.
    pub schema: VariableSchema,
}

/// A named set of patches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassPatch {
    /// Name, unique in the class.
    pub name: String,
    /// What the patch does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Go template; the patch applies only when it renders to `true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_if: Option<String>,
    /// Inline JSON patches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Vec<PatchDefinition>>,
    /// Patches computed by a runtime extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalPatchDefinition>,
}

/// JSON patches for the templates a selector matches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchDefinition {
    /// Templates the patches apply to.
    pub selector: PatchSelector,
    /// Patch operations, applied in order.
    pub json_patches: Vec<JSONPatch>,
}

/// Which templates a patch applies to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelector {
    /// apiVersion of the templates to patch.
    pub api_version: String,
    /// Kind of the templates to patch.
    pub kind: String,
    /// Parts of the class whose templates are patched.
    pub match_resources: PatchSelectorMatch,
}

/// Parts of the class a patch selector covers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatch {
    /// Patch the control-plane template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Patch the infrastructure cluster template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_cluster: Option<bool>,
    /// Patch these MachineDeployment classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_deployment_class: Option<PatchSelectorMatchNames>,
    /// Patch these MachinePool classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_pool_class: Option<PatchSelectorMatchNames>,
}

/// Class names a patch selector covers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatchNames {
    /// Class names; `*` matches all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
}

/// One JSON patch operation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONPatch {
    /// add, replace or remove.
    pub op: String,
    /// JSON pointer into the template.
    pub path: String,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::capi::schema::preserve_unknown_fields")]
    pub value: Option<serde_json::Value>,
    /// Value computed from a variable or a template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<JSONPatchValue>,
}

/// Where a patch value comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONPatchValue {
    /// Name of the variable whose value is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    /// Go template rendering the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// Runtime extensions that compute patches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalPatchDefinition {
    /// Runtime extension that generates patches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generate_extension: Option<String>,
    /// Runtime extension that validates the topology.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validate_extension: Option<String>,
    /// Runtime extension that declares variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discover_variables_extension: Option<String>,
    /// Settings passed to the extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<std::collections::BTreeMap<String, String>>,
}

/// Observed state of a ClusterClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatus {
    /// Every variable, from the class and from extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<ClusterClassStatusVariable>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// A variable and where its definitions come from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariable {
    /// Name, unique in the class.
    pub name: String,
    /// Definitions differ between sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions_conflict: Option<bool>,
    /// One entry per source defining the variable.
    pub definitions: Vec<ClusterClassStatusVariableDefinition>,
}

/// One definition of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariableDefinition {
    /// `inline` or the name of the patch that defines it.
    pub from: String,
    /// Clusters must set the variable.
    pub required: bool,
    /// Labels and annotations attached to the variable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Schema values must match.
    pub schema: VariableSchema,
}

impl_has_conditions!(ClusterClass);
crate::capi::v1beta2_conditions::impl_has_v1beta2_conditions!(ClusterClass);
