//! InMemoryMachine: a simulated machine whose VM, Node, etcd and API server "start" after
//! configurable delays.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use k8s_openapi::api::core::v1::TypedLocalObjectReference;

use crate::capi::common::{TemplateResource, V1Beta2Conditions, template_kind};
use crate::capi::conditions::{Condition, impl_has_conditions};
use crate::capi::core::v1beta2::MachineAddress;

/// Desired state of an InMemoryMachine.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1alpha1",
    kind = "InMemoryMachine",
    namespaced,
    status = "InMemoryMachineStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "An InMemoryMachine is a simulated machine.",
    printcolumn = r#"{"description":"Cluster","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machine object which owns with this InMemoryMachine","jsonPath":".metadata.ownerReferences[?(@.kind==\"Machine\")].name","name":"Machine","type":"string"}"#,
    printcolumn = r#"{"description":"Provider ID","jsonPath":".spec.providerID","name":"ProviderID","type":"string"}"#,
    printcolumn = r#"{"description":"Machine ready status","jsonPath":".status.ready","name":"Ready","type":"string"}"#,
    printcolumn = r#"{"description":"Time duration since creation of InMemoryMachine","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryMachineSpec {
    /// `in-memory://<name>`; set by the provider.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Simulated start-up delays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<InMemoryMachineBehaviour>,
    /// IP pools (drydock's extension, as other providers' `addressesFromPools`): the machine
    /// claims an address from each (an IPAddressClaim `<machine>-<index>` it owns), starts
    /// once every claim has one and reports them in `status.addresses`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8))]
    pub addresses_from_pools: Option<Vec<TypedLocalObjectReference>>,
}

/// Start-up delays of each simulated component. Unset means instant.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryMachineBehaviour {
    /// The VM; its clock starts when the machine is created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vm: Option<InMemoryComponentBehaviour>,
    /// The Node; its clock starts when the VM is provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<InMemoryComponentBehaviour>,
    /// The API server (control plane only); starts when the Node is provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server: Option<InMemoryComponentBehaviour>,
    /// etcd (control plane only); starts when the Node is provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd: Option<InMemoryComponentBehaviour>,
}

/// Behaviour of one simulated component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryComponentBehaviour {
    /// Start-up timing of the component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioning: Option<CommonProvisioningSettings>,
}

/// How long a component takes to start.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommonProvisioningSettings {
    /// Base start-up time (Go duration).
    pub startup_duration: String,
    /// Extra random delay as a fraction of the duration, a float in a string (e.g. `"0.2"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_jitter: Option<String>,
}

/// Observed state of an InMemoryMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InMemoryMachineStatus {
    /// Every simulated component is up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The addresses claimed from `spec.addressesFromPools`, copied to the Machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Status in the newer v1beta2 style, reported alongside during the API transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

template_kind! {
    /// Desired state of an InMemoryMachineTemplate.
    InMemoryMachineTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1alpha1",
        kind: "InMemoryMachineTemplate",
        kind_doc: "An InMemoryMachineTemplate is cloned into an InMemoryMachine for each new Machine.",
        age_column: r#"{"description":"Time duration since creation of InMemoryMachineTemplate","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The InMemoryMachine to stamp out.
        template: InMemoryMachineTemplateResource,
    }
}

/// The InMemoryMachine a template stamps out.
pub type InMemoryMachineTemplateResource = TemplateResource<InMemoryMachineSpec>;

impl_has_conditions!(InMemoryMachine);
