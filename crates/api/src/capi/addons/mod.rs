//! `addons.cluster.x-k8s.io`: ClusterResourceSet (Secrets and ConfigMaps of manifests to
//! apply into every workload cluster a label selector matches) and ClusterResourceSetBinding
//! (per Cluster, what was applied from which set). v1beta1 (deprecated) is here, v1beta2
//! (stored) in [`v1beta2`]; [`conversion`] maps one to the other.

mod admission;
pub mod conversion;
mod v1beta1;
pub mod v1beta2;

pub(crate) use admission::{ClusterResourceSetAdmission, ClusterResourceSetBindingAdmission};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
pub use v1beta1::*;

/// The API group.
pub const GROUP: &str = "addons.cluster.x-k8s.io";
/// Secrets a set applies must have this type (`kubectl create secret generic --type`).
pub const RESOURCE_SET_SECRET_TYPE: &str = "addons.cluster.x-k8s.io/resource-set";
/// Held by a set until it is taken out of its bindings.
pub const FINALIZER: &str = "addons.cluster.x-k8s.io";

/// The kinds a set may list.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema)]
pub enum ResourceKind {
    #[default]
    Secret,
    ConfigMap,
}

impl ResourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Secret => "Secret",
            Self::ConfigMap => "ConfigMap",
        }
    }
}

/// A Secret or ConfigMap in the set's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// Name of the Secret or ConfigMap.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Secret or ConfigMap.
    pub kind: ResourceKind,
}

/// How often a set applies its resources to a cluster.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ClusterResourceSetStrategy {
    /// Once per cluster; later changes to the resources are not applied.
    #[default]
    ApplyOnce,
    /// Again whenever a resource's data changes.
    Reconcile,
}

/// One resource of a set as applied to the binding's cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBinding {
    /// Name of the Secret or ConfigMap.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Secret or ConfigMap.
    pub kind: ResourceKind,
    /// `sha256:<hex>` of the data applied, which tells a Reconcile set that it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub hash: Option<String>,
    /// When the resource was last applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_applied_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    /// Whether the last application succeeded.
    pub applied: bool,
}

impl ResourceBinding {
    pub fn is(&self, r: &ResourceRef) -> bool {
        self.kind == r.kind && self.name == r.name
    }
}

/// What the binding's cluster received from one set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSetBinding {
    /// The ClusterResourceSet.
    #[schemars(length(min = 1, max = 253))]
    pub cluster_resource_set_name: String,
    /// Its resources as applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub resources: Vec<ResourceBinding>,
}
