//! InMemoryCluster: the in-memory provider's infrastructure cluster (an API endpoint served
//! by the simulator, no real machines).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{APIEndpoint, TemplateResource, V1Beta2Conditions, template_kind};
use crate::capi::conditions::{Condition, impl_has_conditions};

/// Desired state of an InMemoryCluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "InMemoryCluster",
    namespaced,
    status = "InMemoryClusterStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An InMemoryCluster is a simulated infrastructure cluster.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of InMemoryCluster","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryClusterSpec {
    /// Address of the simulated API server; set by the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<APIEndpoint>,
}

/// Observed state of an InMemoryCluster (and of an InMemoryMachine).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryClusterStatus {
    /// The simulated infrastructure is ready (a machine's: every simulated component is up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

template_kind! {
    /// Desired state of an InMemoryClusterTemplate.
    InMemoryClusterTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1alpha1",
        kind: "InMemoryClusterTemplate",
        kind_doc: "An InMemoryClusterTemplate is the InMemoryCluster of a ClusterClass.",
        age_column: r#"{"description":"Time duration since creation of InMemoryClusterTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The InMemoryCluster to stamp out.
        template: InMemoryClusterTemplateResource,
    }
}

/// The InMemoryCluster a template stamps out.
pub type InMemoryClusterTemplateResource = TemplateResource<InMemoryClusterSpec>;

impl_has_conditions!(InMemoryCluster);
