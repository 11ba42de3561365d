//! DevMachinePool and DevMachinePoolTemplate (v1beta2 only): the infrastructure of a
//! MachinePool, whose instances drydock simulates in memory (as VMs and Nodes).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Conditions, TemplateResource};
use crate::capi::common::template_kind;
use crate::capi::dev::backend::{Backend, DockerMachinePoolBackendSpec, MachineAddress};
use crate::capi::inmemory::InMemoryMachineBehaviour;

/// Desired state of a DevMachinePool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "DevMachinePool",
    namespaced,
    status = "DevMachinePoolStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DevMachinePool is the infrastructure of a MachinePool of the Dev provider.",
    printcolumn = r#"{"description":"Time since the DevMachinePool was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DevMachinePoolSpec {
    /// Identity of the pool; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Identities of the pool's instances; set by the provider.
    #[serde(rename = "providerIDList", skip_serializing_if = "Option::is_none")]
    pub provider_id_list: Option<Vec<String>>,
    /// The backend running the instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<DevMachinePoolBackendSpec>,
}

/// The backend of a DevMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachinePoolBackendSpec {
    /// The docker backend (simulated in memory by drydock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docker: Option<DockerMachinePoolBackendSpec>,
    /// Instances simulated in memory, with these start-up timings (as a DevMachine's
    /// `backend.inMemory`; a drydock extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_memory: Option<InMemoryMachineBehaviour>,
}

impl DevMachinePoolBackendSpec {
    /// The backend in effect: in-memory when set, otherwise docker.
    pub fn selected(&self) -> Backend {
        Backend::of(self.in_memory.is_some())
    }
}

/// Observed state of a DevMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachinePoolStatus {
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
    pub instances: Option<Vec<DevMachinePoolInstanceStatus>>,
    /// Kind of the infrastructure machines backing the instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_machine_kind: Option<String>,
    /// Observations about this object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Conditions>,
}

/// One instance of a DevMachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachinePoolInstanceStatus {
    /// Addresses of the instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Name of the instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_name: Option<String>,
    /// Identity of the instance's Node.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The instance is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Kubernetes version of the instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

template_kind! {
    /// Desired state of a DevMachinePoolTemplate.
    DevMachinePoolTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta2",
        kind: "DevMachinePoolTemplate",
        kind_doc: "A DevMachinePoolTemplate is the DevMachinePool of a ClusterClass.",
        age_column: r#"{"description":"Time since the DevMachinePoolTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DevMachinePool to stamp out.
        template: DevMachinePoolTemplateResource,
    }
}

/// The DevMachinePool a template stamps out.
pub type DevMachinePoolTemplateResource = TemplateResource<DevMachinePoolSpec>;
