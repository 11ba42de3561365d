//! Small API types shared across Cluster API groups.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The metadata a template may set on the objects created from it: labels and annotations
/// only (Cluster API's own `ObjectMeta`, not the full Kubernetes one).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Labels copied to the created objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations copied to the created objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// The object a template kind stamps out: labels and annotations plus the spec of the
/// generated object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateResource<S> {
    /// Labels and annotations of the generated object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the generated object.
    pub spec: S,
}

/// The spec of a template kind (`<Kind>Template`): one `template` field holding the object
/// it stamps out. Every template kind is namespaced, in the cluster-api category, with an Age
/// printer column only.
macro_rules! template_kind {
    (
        $(#[doc = $doc:tt])*
        $spec:ident {
            group: $group:tt,
            version: $version:tt,
            kind: $kind:tt,
            kind_doc: $kind_doc:tt,
            age_column: $age:tt,
            $(#[doc = $field_doc:tt])*
            template: $resource:ty $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(
            ::kube::CustomResource,
            ::serde::Serialize,
            ::serde::Deserialize,
            Clone,
            Debug,
            Default,
            PartialEq,
            ::schemars::JsonSchema,
        )]
        #[kube(
            group = $group,
            version = $version,
            kind = $kind,
            namespaced,
            derive = "PartialEq",
            category = "cluster-api",
            doc = $kind_doc,
            printcolumn = $age
        )]
        #[serde(rename_all = "camelCase")]
        pub struct $spec {
            $(#[doc = $field_doc])*
            pub template: $resource,
        }
    };
}
pub(crate) use template_kind;

impl ObjectMeta {
    /// No labels and no annotations (empty maps count as none).
    pub fn is_empty(&self) -> bool {
        self.labels.as_ref().is_none_or(BTreeMap::is_empty) && self.annotations.as_ref().is_none_or(BTreeMap::is_empty)
    }
}

/// Where a control plane's API server listens.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIEndpoint {
    /// Hostname or IP address.
    pub host: String,
    /// TCP port.
    pub port: i32,
}

impl APIEndpoint {
    /// An endpoint is usable once both host and port are set.
    pub fn is_valid(&self) -> bool {
        !self.host.is_empty() && self.port != 0
    }
}

/// How names of created Machines are generated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineNamingStrategy {
    /// Go template over `.cluster.name`, `.machineSet.name` (or `.kubeadmControlPlane.name`)
    /// and `.random`; must contain `{{ .random }}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub template: Option<String>,
}

/// Conditions in the newer (v1beta2, `metav1.Condition`) style, reported alongside the
/// v1beta1 ones during the API transition.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta2Conditions {
    /// Conditions in the metav1.Condition style (no severity).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
}

/// v1beta2 status of replica-managing kinds: newer conditions and replica counters based on
/// Machine conditions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta2ReplicaStatus {
    /// Conditions in the metav1.Condition style (no severity).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::time::text::conditions")]
    #[schemars(length(max = 32))]
    pub conditions: Option<Vec<MetaCondition>>,
    /// Machines whose Ready condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// Machines whose Available condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_replicas: Option<i32>,
    /// Machines whose UpToDate condition is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_date_replicas: Option<i32>,
}

/// A v1beta2 reference to a provider object: API group, kind and name, in the referring
/// object's namespace. The version is the one the group's CRD lists for the current
/// contract, looked up when the reference is used.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContractVersionedObjectReference {
    /// API group of the referenced kind (`infrastructure.cluster.x-k8s.io`).
    #[schemars(length(min = 1, max = 253))]
    pub api_group: String,
    /// Kind of the referenced object.
    #[schemars(length(min = 1, max = 63))]
    pub kind: String,
    /// Name of the referenced object.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

impl ContractVersionedObjectReference {
    /// Unset references are zero values in v1beta2 (`omitzero`).
    pub fn is_empty(&self) -> bool {
        self.api_group.is_empty() && self.kind.is_empty() && self.name.is_empty()
    }

    /// Whether the reference points at `kind` of `api_group`.
    pub fn is_kind(&self, api_group: &str, kind: &str) -> bool {
        self.api_group == api_group && self.kind == kind
    }
}

/// A taint a Machine puts on its Node (v1beta2).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTaint {
    /// Taint key.
    #[schemars(length(min = 1, max = 317))]
    pub key: String,
    /// Taint value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: TaintEffect,
    /// Always (kept on the Node) or OnInitialization (set once, when the Node joins).
    pub propagation: TaintPropagation,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum TaintEffect {
    #[default]
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum TaintPropagation {
    #[default]
    Always,
    OnInitialization,
}

/// A Node condition that makes a Machine unhealthy once it has held for `timeoutSeconds`
/// (v1beta2 health checks).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyNodeCondition {
    /// Node condition type.
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub type_: String,
    /// Condition status (True, False, Unknown).
    #[schemars(length(min = 1))]
    pub status: String,
    /// How long the condition must hold.
    #[schemars(range(min = 0))]
    pub timeout_seconds: i32,
}

/// A Machine condition that makes a Machine unhealthy once it has held for
/// `timeoutSeconds` (v1beta2 health checks).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyMachineCondition {
    /// Machine condition type.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = 316))]
    pub type_: String,
    /// True, False or Unknown.
    pub status: ConditionStatus,
    /// How long the condition must hold.
    #[schemars(range(min = 0))]
    pub timeout_seconds: i32,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ConditionStatus {
    True,
    False,
    #[default]
    Unknown,
}

impl ConditionStatus {
    /// As a condition's `status` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

/// A reference with its full apiVersion, used where v1beta2 keeps one (remediation
/// templates, ClusterClass templates): always in the referring object's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionedTemplateReference {
    /// `group/version` of the referenced kind.
    #[schemars(length(min = 1, max = 317))]
    pub api_version: String,
    /// Kind of the referenced object.
    #[schemars(length(min = 1, max = 63))]
    pub kind: String,
    /// Name of the referenced object.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

impl VersionedTemplateReference {
    /// The reference as an `ObjectReference` in the referring object's namespace (empty
    /// fields left out).
    pub fn in_namespace(&self, namespace: Option<&str>) -> k8s_openapi::api::core::v1::ObjectReference {
        let set = |s: &str| (!s.is_empty()).then(|| s.to_string());
        k8s_openapi::api::core::v1::ObjectReference {
            api_version: set(&self.api_version),
            kind: set(&self.kind),
            name: set(&self.name),
            namespace: namespace.map(str::to_string),
            ..Default::default()
        }
    }
}

/// Which status of a gate's condition counts as good.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ConditionPolarity {
    /// Good when True (the default).
    #[default]
    Positive,
    /// Good when False (the condition reports a problem).
    Negative,
}

/// How many replicas run one Kubernetes version (`status.versions` of v1beta2 kinds).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusVersion {
    /// Kubernetes version.
    #[schemars(length(min = 1, max = 256))]
    pub version: String,
    /// Replicas running it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub replicas: Option<i32>,
}
