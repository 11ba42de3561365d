//! Machine v1beta2, and the Machine spec that MachineSets, MachineDeployments and
//! MachinePools stamp out: references name only the API group, deletion timeouts are
//! seconds under `deletion`, `minReadySeconds` and `taints` live on the Machine.

use k8s_openapi::api::core::v1::NodeSystemInfo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{ConditionPolarity, ContractVersionedObjectReference, MachineTaint, ObjectMeta};
use crate::capi::conditions::Condition;

/// Desired state of a Machine; also the `spec` of the Machines a MachineSet,
/// MachineDeployment or MachinePool creates.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "Machine",
    namespaced,
    status = "MachineStatus",
    derive = "PartialEq",
    shortname = "ma",
    category = "cluster-api",
    doc = "A Machine is one node of a workload cluster.",
    printcolumn = r#"{"description":"Cluster the Machine belongs to","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Name of the Machine's Node","jsonPath":".status.nodeRef.name","name":"Node Name","type":"string"}"#,
    printcolumn = r#"{"description":"Provider's identifier of the machine","jsonPath":".spec.providerID","name":"Provider ID","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Failure domain the machine runs in","jsonPath":".status.failureDomain","name":"Failure domain","type":"string"}"#,
    printcolumn = r#"{"description":"Status of the Ready condition","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","name":"Ready","type":"string"}"#,
    printcolumn = r#"{"description":"Status of the Available condition","jsonPath":".status.conditions[?(@.type==\"Available\")].status","name":"Available","type":"string"}"#,
    printcolumn = r#"{"description":"Status of the UpToDate condition","jsonPath":".status.conditions[?(@.type==\"UpToDate\")].status","name":"Up-to-date","type":"string"}"#,
    printcolumn = r#"{"description":"Internal IP address","jsonPath":".status.addresses[?(@.type==\"InternalIP\")].address","name":"Internal-IP","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"External IP address","jsonPath":".status.addresses[?(@.type==\"ExternalIP\")].address","name":"External-IP","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Operating system image of the Node","jsonPath":".status.nodeInfo.osImage","name":"OS-Image","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Status of the Paused condition","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Lifecycle phase of the Machine","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the Machine was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version of the Machine","jsonPath":".spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// Name of the Cluster this Machine belongs to. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
    /// How the node gets its bootstrap data.
    pub bootstrap: Bootstrap,
    /// The provider-specific machine object (e.g. a DevMachine).
    pub infrastructure_ref: ContractVersionedObjectReference,
    /// Kubernetes version of the node, `vX.Y.Z`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub version: Option<String>,
    /// Provider's identifier of the machine; must match the Node's `spec.providerID`.
    #[serde(rename = "providerID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub provider_id: Option<String>,
    /// Failure domain the machine should run in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Seconds the Machine must be Ready before it counts as Available (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_ready_seconds: Option<i32>,
    /// Extra conditions that take part in the Machine's Ready condition.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32))]
    pub readiness_gates: Option<Vec<MachineReadinessGate>>,
    /// Timeouts of the deletion steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionSpec>,
    /// Taints kept on (or first set on) the Machine's Node.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub taints: Option<Vec<MachineTaint>>,
}

/// Where bootstrap data comes from: a bootstrap config object, or an existing secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// Bootstrap provider object (e.g. a KubeadmConfig) that produces the data secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_ref: Option<ContractVersionedObjectReference>,
    /// Name of the secret holding the bootstrap data, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 0, max = 253))]
    pub data_secret_name: Option<String>,
}

/// A condition the Machine's Ready condition also depends on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineReadinessGate {
    /// Condition type (in the Machine's `status.conditions`) taken into account.
    #[schemars(length(min = 1, max = 316))]
    pub condition_type: String,
    /// Whether the condition is good when True (Positive, the default) or when False.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polarity: Option<ConditionPolarity>,
}

/// Upper bounds on the steps of a Machine's deletion, in seconds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletionSpec {
    /// Upper bound on draining the Node; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_drain_timeout_seconds: Option<i32>,
    /// Upper bound on waiting for the Node's volumes to detach; unset or 0 waits forever.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_volume_detach_timeout_seconds: Option<i32>,
    /// How long to keep retrying Node deletion once the infrastructure is gone (default 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub node_deletion_timeout_seconds: Option<i32>,
}

/// Observed state of a Machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// Conditions of the Machine (Ready, Available, UpToDate, ...).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// What initial provisioning has completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<MachineInitializationStatus>,
    /// The Node of this Machine in the workload cluster, once found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_ref: Option<MachineNodeReference>,
    /// System information reported by the Node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_info: Option<NodeSystemInfo>,
    /// When the phase last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// Failure domain the infrastructure machine actually runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: Option<String>,
    /// Expiry of the node's certificates (control-plane Machines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificates_expiry_date: Option<Time>,
    /// Addresses copied from the infrastructure machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub addresses: Option<Vec<MachineAddress>>,
    /// Lifecycle phase (Pending, Provisioning, Provisioned, Running, Updating, Deleting, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [
        "Pending", "Provisioning", "Provisioned", "Running", "Updating", "Deleting", "Deleted", "Failed", "Unknown"
    ]))]
    pub phase: Option<String>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// Progress of an ongoing deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionStatus>,
    /// What only v1beta1 reported, kept while clients move over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachineDeprecatedStatus>,
}

/// Initial provisioning of a Machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineInitializationStatus {
    /// The infrastructure machine reported itself provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// The bootstrap data secret exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_data_secret_created: Option<bool>,
}

/// The Node of a Machine, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineNodeReference {
    /// Name of the Node.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// One address of a machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineAddress {
    /// Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["Hostname", "ExternalIP", "InternalIP", "ExternalDNS", "InternalDNS"]))]
    pub type_: String,
    /// The address value.
    #[schemars(length(min = 1, max = 256))]
    pub address: String,
}

/// When the deletion steps of a Machine started.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletionStatus {
    /// Start of node drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_drain_start_time: Option<Time>,
    /// Start of waiting for volumes to detach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for_node_volume_detach_start_time: Option<Time>,
    /// Start of waiting for pre-drain hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for_pre_drain_hook_start_time: Option<Time>,
    /// Start of waiting for pre-terminate hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for_pre_terminate_hook_start_time: Option<Time>,
}

/// Status fields only v1beta1 had.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachineDeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachineV1Beta1DeprecatedStatus>,
}

/// A Machine's v1beta1 conditions and failure fields.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineV1Beta1DeprecatedStatus {
    /// Conditions in the v1beta1 style, with severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Problem reported by a provider (machine-readable); no longer terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Problem reported by a provider (human-readable); no longer terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub failure_message: Option<String>,
}

/// Template for the Machines a MachineSet, MachineDeployment or MachinePool creates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTemplateSpec {
    /// Labels and annotations of created Machines.
    #[serde(default, skip_serializing_if = "ObjectMeta::is_empty")]
    pub metadata: ObjectMeta,
    /// Spec of created Machines.
    pub spec: MachineSpec,
}

impl_hub_status!(Machine, MachineInitializationStatus, MachineV1Beta1DeprecatedStatus);

impl Machine {
    /// `status.initialization.infrastructureProvisioned`.
    pub fn infrastructure_provisioned(&self) -> bool {
        self.initialization().and_then(|i| i.infrastructure_provisioned).unwrap_or(false)
    }

    /// `status.initialization.bootstrapDataSecretCreated`.
    pub fn bootstrap_data_secret_created(&self) -> bool {
        self.initialization().and_then(|i| i.bootstrap_data_secret_created).unwrap_or(false)
    }

    /// The name of the Machine's Node, once found.
    pub fn node_name(&self) -> Option<&str> {
        self.status.as_ref()?.node_ref.as_ref().map(|n| n.name.as_str()).filter(|n| !n.is_empty())
    }
}
