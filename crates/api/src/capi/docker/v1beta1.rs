//! `infrastructure.cluster.x-k8s.io/v1beta1` Docker kinds: served deprecated, as upstream,
//! on the v1beta1 contract (`status.ready`, failure domains as a map, conditions with
//! severity); converted to and from [`super::v1beta2`].

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::v1beta2::DockerMachinePoolInstanceStatus;
use crate::capi::common::{TemplateResource, V1Beta2Conditions, template_kind};
use crate::capi::conditions::{Condition, impl_has_conditions};
use crate::capi::dev::backend::{DockerMachineBackendSpec, DockerMachinePoolBackendSpec, MachineAddress};
use crate::capi::dev::v1beta1::{APIEndpoint, DevClusterStatus, DockerClusterBackendSpec};

/// Desired state of a DockerCluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "DockerCluster",
    namespaced,
    status = "DockerClusterStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DockerCluster is the infrastructure of a workload cluster of the Docker provider (simulated in memory by drydock).",
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DockerCluster was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DockerClusterSpec {
    /// Address of the workload cluster's API server; set by the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<APIEndpoint>,
    /// Failure domains (by name) and load balancer, as a DevCluster's `backend.docker`.
    #[serde(flatten)]
    pub docker: DockerClusterBackendSpec,
}

/// Observed state of a DockerCluster: a DevCluster's.
pub type DockerClusterStatus = DevClusterStatus;

template_kind! {
    /// Desired state of a DockerClusterTemplate.
    DockerClusterTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "DockerClusterTemplate",
        kind_doc: "A DockerClusterTemplate is the DockerCluster of a ClusterClass.",
        age_column: r#"{"description":"Time since the DockerClusterTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DockerCluster to stamp out.
        template: DockerClusterTemplateResource,
    }
}

/// The DockerCluster a template stamps out.
pub type DockerClusterTemplateResource = TemplateResource<DockerClusterSpec>;

/// Desired state of a DockerMachine.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "DockerMachine",
    namespaced,
    status = "DockerMachineStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DockerMachine is a machine of the Docker provider (simulated in memory by drydock).",
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machine object which uses this DockerMachine","jsonPath":".metadata.ownerReferences[?(@.kind==\"Machine\")].name","name":"Machine","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"ProviderID","type":"string"}"#,
    printcolumn = r#"{"description":"Machine ready status","jsonPath":".status.ready","name":"Ready","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DockerMachine was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineSpec {
    /// The machine's identity for its Node; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Image, mounts, preloaded images and bootstrap timeout (kept as written).
    #[serde(flatten)]
    pub docker: DockerMachineBackendSpec,
}

/// Observed state of a DockerMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineStatus {
    /// The machine is up (the v1beta1 contract's flag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The load balancer knows this control plane machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer_configured: Option<bool>,
    /// Addresses of the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Conditions in the newer v1beta2 style, reported alongside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

template_kind! {
    /// Desired state of a DockerMachineTemplate.
    DockerMachineTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "DockerMachineTemplate",
        kind_doc: "A DockerMachineTemplate is cloned into a DockerMachine for each new Machine.",
        age_column: r#"{"description":"Time since the DockerMachineTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DockerMachine to stamp out.
        template: DockerMachineTemplateResource,
    }
}

/// The DockerMachine a template stamps out.
pub type DockerMachineTemplateResource = TemplateResource<DockerMachineSpec>;

/// Desired state of a DockerMachinePool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta1",
    kind = "DockerMachinePool",
    namespaced,
    status = "DockerMachinePoolStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DockerMachinePool is the infrastructure of a MachinePool of the Docker provider (simulated in memory by drydock).",
    printcolumn = r#"{"description":"Time since the DockerMachinePool was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachinePoolSpec {
    /// Identity of the pool; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Identities of the pool's instances; set by the provider.
    #[serde(rename = "providerIDList", skip_serializing_if = "Option::is_none")]
    pub provider_id_list: Option<Vec<String>>,
    /// The instances' container settings (kept as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<DockerMachinePoolBackendSpec>,
}

/// Observed state of a DockerMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachinePoolStatus {
    /// Every instance is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Number of instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The generation last reconciled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The instances and their state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<Vec<DockerMachinePoolInstanceStatus>>,
    /// Kind of the infrastructure machines backing the instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_machine_kind: Option<String>,
    /// Observations about this object (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

template_kind! {
    /// Desired state of a DockerMachinePoolTemplate.
    DockerMachinePoolTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "DockerMachinePoolTemplate",
        kind_doc: "A DockerMachinePoolTemplate is the DockerMachinePool of a ClusterClass.",
        age_column: r#"{"description":"Time since the DockerMachinePoolTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DockerMachinePool to stamp out.
        template: DockerMachinePoolTemplateResource,
    }
}

/// The DockerMachinePool a template stamps out.
pub type DockerMachinePoolTemplateResource = TemplateResource<DockerMachinePoolSpec>;

impl_has_conditions!(DockerCluster, DockerMachine, DockerMachinePool);
