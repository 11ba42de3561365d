//! MachinePool v1beta2: `minReadySeconds` moved into the Machine template; readiness flags
//! became `status.initialization`; the replica counters follow Machine conditions, the old
//! ones are kept under `deprecated.v1beta1`.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machine::MachineTemplateSpec;
use crate::capi::common::StatusVersion;
use crate::capi::conditions::Condition;

/// Desired state of a MachinePool.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "cluster.x-k8s.io",
    version = "v1beta2",
    kind = "MachinePool",
    namespaced,
    status = "MachinePoolStatus",
    derive = "PartialEq",
    shortname = "mp",
    category = "cluster-api",
    doc = "A MachinePool is a group of machines the infrastructure provider scales as one.",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"),
    printcolumn = r#"{"description":"Cluster the MachinePool belongs to","jsonPath":".spec.clusterName","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Machines wanted","jsonPath":".spec.replicas","name":"Desired","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines that exist","jsonPath":".status.replicas","name":"Current","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Ready condition is True","jsonPath":".status.readyReplicas","name":"Ready","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose Available condition is True","jsonPath":".status.availableReplicas","name":"Available","type":"integer"}"#,
    printcolumn = r#"{"description":"Machines whose UpToDate condition is True","jsonPath":".status.upToDateReplicas","name":"Up-to-date","type":"integer"}"#,
    printcolumn = r#"{"description":"Status of the Paused condition","jsonPath":".status.conditions[?(@.type==\"Paused\")].status","name":"Paused","priority":10,"type":"string"}"#,
    printcolumn = r#"{"description":"Lifecycle phase of the MachinePool","jsonPath":".status.phase","name":"Phase","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the MachinePool was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
    printcolumn = r#"{"description":"Kubernetes version of the machines","jsonPath":".spec.template.spec.version","name":"Version","type":"string"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolSpec {
    /// Name of the Cluster. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
    /// Number of machines wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Template of the pool's machines.
    pub template: MachineTemplateSpec,
    /// Provider IDs of the pool's instances, as reported by the provider.
    #[serde(rename = "providerIDList", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 10000))]
    pub provider_id_list: Option<Vec<String>>,
    /// Failure domains the pool may place machines in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub failure_domains: Option<Vec<String>>,
}

/// Observed state of a MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolStatus {
    /// Conditions of the MachinePool.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// What initial provisioning has completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<MachinePoolInitializationStatus>,
    /// Nodes of the pool's instances.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 10000))]
    pub node_refs: Option<Vec<ObjectReference>>,
    /// Replicas that exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Replicas whose Ready condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Replicas whose Available condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Replicas whose UpToDate condition is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
    /// Kubernetes versions of the machines, with how many run each.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub versions: Option<Vec<StatusVersion>>,
    /// Lifecycle phase (Pending, Provisioning, Provisioned, Running, Scaling..., Deleting, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = [
        "Pending", "Provisioning", "Provisioned", "Running", "ScalingUp", "ScalingDown", "Scaling", "Deleting",
        "Failed", "Unknown"
    ]))]
    pub phase: Option<String>,
    /// Generation last processed by the controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub observed_generation: Option<i64>,
    /// What only v1beta1 reported, kept while clients move over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<MachinePoolDeprecatedStatus>,
}

/// Initial provisioning of a MachinePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolInitializationStatus {
    /// The infrastructure machine pool reported itself provisioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// The bootstrap data secret exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_data_secret_created: Option<bool>,
}

/// Status fields only v1beta1 had.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MachinePoolDeprecatedStatus {
    /// The v1beta1 fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<MachinePoolV1Beta1DeprecatedStatus>,
}

/// A MachinePool's v1beta1 conditions, failure fields and counters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolV1Beta1DeprecatedStatus {
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
    /// Replicas whose Node is ready (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Replicas ready for at least minReadySeconds (v1beta1 meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Desired replicas that are not available yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_replicas: Option<i32>,
}

impl_hub_status!(MachinePool, MachinePoolInitializationStatus, MachinePoolV1Beta1DeprecatedStatus);

impl MachinePool {
    /// The bootstrap data secret exists (`status.initialization.bootstrapDataSecretCreated`).
    pub fn bootstrap_data_secret_created(&self) -> bool {
        self.initialization().and_then(|i| i.bootstrap_data_secret_created) == Some(true)
    }

    /// The infrastructure pool is provisioned (`status.initialization.infrastructureProvisioned`).
    pub fn infrastructure_provisioned(&self) -> bool {
        self.initialization().and_then(|i| i.infrastructure_provisioned) == Some(true)
    }
}
