//! InMemoryMachine: a simulated machine whose VM, Node, etcd and API server "start" after
//! configurable delays.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{TemplateResource, template_kind};
use crate::capi::conditions::impl_has_conditions;

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

/// Observed state of an InMemoryMachine: the same fields as an InMemoryCluster's (ready once
/// every simulated component is up).
pub type InMemoryMachineStatus = super::cluster::InMemoryClusterStatus;

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
