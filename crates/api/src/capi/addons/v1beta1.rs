//! ClusterResourceSet and ClusterResourceSetBinding v1beta1.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClusterResourceSetStrategy, ResourceRef, ResourceSetBinding};
use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::Condition;

/// Desired state of a ClusterResourceSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addons.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "ClusterResourceSet",
    namespaced,
    status = "ClusterResourceSetStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A ClusterResourceSet applies the manifests of Secrets and ConfigMaps to the workload clusters its selector matches.",
    printcolumn = r#"{"description":"Time duration since creation of ClusterResourceSet","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetSpec {
    /// Clusters (of the set's namespace) that get the resources; immutable, never empty.
    pub cluster_selector: LabelSelector,
    /// Secrets and ConfigMaps whose values are manifests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub resources: Vec<ResourceRef>,
    /// ApplyOnce (the default) or Reconcile; immutable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ClusterResourceSetStrategy>,
}

/// Observed state of a ClusterResourceSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetStatus {
    /// Generation last processed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions in the v1beta1 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// What was applied to one Cluster, from every set that matched it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "addons.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "ClusterResourceSetBinding",
    namespaced,
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A ClusterResourceSetBinding records what ClusterResourceSets applied to one Cluster.",
    printcolumn = r#"{"description":"Time duration since creation of ClusterResourceSetBinding","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetBindingSpec {
    /// One entry per set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub bindings: Vec<ResourceSetBinding>,
    /// The Cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: Option<String>,
}
