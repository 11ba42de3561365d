//! ClusterResourceSet and ClusterResourceSetBinding v1beta2, the stored version.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, LabelSelector};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClusterResourceSetStrategy, ResourceRef, ResourceSetBinding};
use crate::capi::conditions::Condition;

/// Desired state of a ClusterResourceSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addons.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterResourceSet",
    namespaced,
    status = "ClusterResourceSetStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A ClusterResourceSet applies the manifests of Secrets and ConfigMaps to the workload clusters its selector matches.",
    printcolumn = r#"{"description":"Resource applied","jsonPath":".status.conditions[?(@.type==\"ResourcesApplied\")].status","name":"Applied","type":"string"}"#,
    printcolumn = r#"{"description":"Reconciliation paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of ClusterResourceSet","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetSpec {
    /// Clusters (of the set's namespace) that get the resources; immutable, never empty.
    pub cluster_selector: LabelSelector,
    /// Secrets and ConfigMaps whose values are manifests.
    #[schemars(length(min = 1, max = 100))]
    pub resources: Vec<ResourceRef>,
    /// ApplyOnce (the default) or Reconcile; immutable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ClusterResourceSetStrategy>,
}

/// Observed state of a ClusterResourceSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetStatus {
    /// ResourcesApplied and Paused.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Generation last processed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// What v1beta1 readers see.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<ClusterResourceSetDeprecatedStatus>,
}

/// Status fields kept for clients of older API versions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetDeprecatedStatus {
    /// What v1beta1 reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<ClusterResourceSetV1Beta1DeprecatedStatus>,
}

/// The v1beta1 conditions (with severity) of a ClusterResourceSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// What was applied to one Cluster, from every set that matched it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addons.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterResourceSetBinding",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A ClusterResourceSetBinding records what ClusterResourceSets applied to one Cluster.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of ClusterResourceSetBinding","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetBindingSpec {
    /// One entry per set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub bindings: Vec<ResourceSetBinding>,
    /// The Cluster.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
}

crate::capi::conditions::impl_has_deprecated_conditions!(ClusterResourceSet);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(ClusterResourceSet);
