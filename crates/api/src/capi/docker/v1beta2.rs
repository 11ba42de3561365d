//! `infrastructure.cluster.x-k8s.io/v1beta2` Docker kinds, the version upstream and drydock
//! store. Their specs are the Dev kinds' `spec.backend.docker` settings at the top of the
//! spec; their statuses are the Dev kinds' (a DockerMachine adds `loadBalancerConfigured`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::template_kind;
use crate::capi::dev::backend::{DockerMachineBackendSpec, DockerMachinePoolBackendSpec, MachineAddress};
use crate::capi::dev::v1beta2::{
    APIEndpoint, Conditions, DeprecatedStatus, DevClusterStatus, DevMachinePoolInstanceStatus,
    DevMachineTemplateStatus, DockerClusterBackendSpec, InitializationStatus, TemplateResource,
};

/// Desired state of a DockerCluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
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
    #[schemars(extend("minProperties" = 1))]
    pub control_plane_endpoint: Option<APIEndpoint>,
    /// Failure domains and load balancer, as a DevCluster's `backend.docker`.
    #[serde(flatten)]
    pub docker: DockerClusterBackendSpec,
}

/// Observed state of a DockerCluster: a DevCluster's.
pub type DockerClusterStatus = DevClusterStatus;

template_kind! {
    /// Desired state of a DockerClusterTemplate.
    DockerClusterTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta2",
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
    version = "v1beta2",
    kind = "DockerMachine",
    namespaced,
    status = "DockerMachineStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DockerMachine is a machine of the Docker provider (simulated in memory by drydock).",
    printcolumn = r#"{"description":"Cluster this DockerMachine belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"Provider ID","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Failure domain the machine runs in","jsonPath":".status.failureDomain","name":"Failure domain","type":"string"}"#,
    printcolumn = r#"{"description":"Internal IP address","jsonPath":".status.addresses[?(@.type==\"InternalIP\")].address","name":"IP","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether reconciliation is paused","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Whether the machine is provisioned","jsonPath":".status.initialization.provisioned","name":"Provisioned","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DockerMachine was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineSpec {
    /// The machine's identity for its Node; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub provider_id: Option<String>,
    /// Image, mounts, preloaded images and bootstrap timeout, as a DevMachine's
    /// `backend.docker` (kept as written: drydock starts no container).
    #[serde(flatten)]
    pub docker: DockerMachineBackendSpec,
}

/// Observed state of a DockerMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineStatus {
    /// How far initial provisioning went.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minProperties" = 1))]
    pub initialization: Option<InitializationStatus>,
    /// The load balancer knows this control plane machine (upstream's flag; drydock's
    /// simulated endpoint needs no configuring).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer_configured: Option<bool>,
    /// Addresses of the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// The failure domain the machine runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Observations about this object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Conditions>,
    /// What is left of the v1beta1 status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedStatus>,
}

/// Desired state of a DockerMachineTemplate.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "DockerMachineTemplate",
    namespaced,
    status = "DockerMachineTemplateStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DockerMachineTemplate is cloned into a DockerMachine for each new Machine.",
    printcolumn = r#"{"description":"Time since the DockerMachineTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineTemplateSpec {
    /// The DockerMachine to stamp out.
    pub template: DockerMachineTemplateResource,
}

/// The DockerMachine a template stamps out.
pub type DockerMachineTemplateResource = TemplateResource<DockerMachineSpec>;

/// What the machines of a template offer: a DevMachineTemplate's.
pub type DockerMachineTemplateStatus = DevMachineTemplateStatus;

/// Desired state of a DockerMachinePool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
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
    /// Observations about this object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Conditions>,
    /// What is left of the v1beta1 status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedStatus>,
}

/// One instance of a DockerMachinePool: a DevMachinePool instance's state, and whether it
/// was bootstrapped.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachinePoolInstanceStatus {
    /// The instance ran its bootstrap data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrapped: Option<bool>,
    /// Name, identity, addresses, readiness and version of the instance.
    #[serde(flatten)]
    pub instance: DevMachinePoolInstanceStatus,
}

template_kind! {
    /// Desired state of a DockerMachinePoolTemplate.
    DockerMachinePoolTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta2",
        kind: "DockerMachinePoolTemplate",
        kind_doc: "A DockerMachinePoolTemplate is the DockerMachinePool of a ClusterClass.",
        age_column: r#"{"description":"Time since the DockerMachinePoolTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DockerMachinePool to stamp out.
        template: DockerMachinePoolTemplateResource,
    }
}

/// The DockerMachinePool a template stamps out.
pub type DockerMachinePoolTemplateResource = TemplateResource<DockerMachinePoolSpec>;

crate::capi::conditions::impl_has_deprecated_conditions!(DockerCluster, DockerMachine, DockerMachinePool);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(DockerCluster);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(DockerMachine);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(DockerMachinePool);
