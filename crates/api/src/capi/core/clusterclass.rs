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
    #[serde(rename = "ref")]
    pub ref_: ObjectReference,
}

/// Control-plane class.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneClass {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Control-plane template (e.g. a KubeadmControlPlaneTemplate).
    #[serde(rename = "ref")]
    pub ref_: ObjectReference,
    /// Infrastructure machine template of control-plane Machines, if the provider uses Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_infrastructure: Option<LocalObjectTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// Name template of the control-plane object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
}

/// Name template of generated objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamingStrategy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// Worker classes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersClass {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_deployments: Option<Vec<MachineDeploymentClass>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_pools: Option<Vec<MachinePoolClass>>,
}

/// Templates of a worker MachineDeployment or MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerClassTemplate {
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
    pub template: WorkerClassTemplate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
}

/// A class of worker MachinePools.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolClass {
    /// Name of the class, referenced from Cluster topologies.
    pub class: String,
    pub template: WorkerClassTemplate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

/// Health check generated for Clusters of this class.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckClass {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_conditions: Option<Vec<UnhealthyCondition>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unhealthy: Option<IntOrString>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unhealthy_range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation_template: Option<ObjectReference>,
}

/// A variable Clusters of this class may set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassVariable {
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
    pub name: String,
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
    pub selector: PatchSelector,
    pub json_patches: Vec<JSONPatch>,
}

/// Which templates a patch applies to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelector {
    pub api_version: String,
    pub kind: String,
    pub match_resources: PatchSelectorMatch,
}

/// Parts of the class a patch selector covers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_cluster: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_deployment_class: Option<PatchSelectorMatchNames>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_pool_class: Option<PatchSelectorMatchNames>,
}

/// Class names a patch selector covers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatchNames {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// Runtime extensions that compute patches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalPatchDefinition {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generate_extension: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validate_extension: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discover_variables_extension: Option<String>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// A variable and where its definitions come from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariable {
    pub name: String,
    /// Definitions differ between sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions_conflict: Option<bool>,
    pub definitions: Vec<ClusterClassStatusVariableDefinition>,
}

/// One definition of a variable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariableDefinition {
    /// `inline` or the name of the patch that defines it.
    pub from: String,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    pub schema: VariableSchema,
}

impl_has_conditions!(ClusterClass);
