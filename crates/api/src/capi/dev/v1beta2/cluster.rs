//! DevCluster v1beta2 (and its template).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Conditions, DeprecatedStatus, InitializationStatus, TemplateResource};
use crate::capi::common::template_kind;
use crate::capi::dev::backend::{DockerLoadBalancer, InMemoryClusterBackendSpec};

/// Desired state of a DevCluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta2",
    kind = "DevCluster",
    namespaced,
    status = "DevClusterStatus",
    derive = "PartialEq",
    category = "cluster-api",
    doc = "A DevCluster is the infrastructure of a workload cluster of the Dev provider.",
    printcolumn = r#"{"description":"Cluster this DevCluster belongs to","jsonPath":".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']","name":"Cluster","type":"string"}"#,
    printcolumn = r#"{"description":"Time since the DevCluster was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DevClusterSpec {
    /// Address of the workload cluster's API server; set by the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minProperties" = 1))]
    pub control_plane_endpoint: Option<APIEndpoint>,
    /// The backend simulating (or, upstream, running) the cluster.
    pub backend: DevClusterBackendSpec,
}

/// Where an API server listens.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIEndpoint {
    /// Hostname or IP address.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub host: Option<String>,
    /// TCP port.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

/// One backend of a DevCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevClusterBackendSpec {
    /// The docker backend (simulated in memory by drydock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docker: Option<DockerClusterBackendSpec>,
    /// The in-memory backend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_memory: Option<InMemoryClusterBackendSpec>,
}

impl DevClusterBackendSpec {
    /// The backend that runs the cluster: in-memory when `inMemory` is set (whatever else
    /// is), docker otherwise (admission defaults an empty backend to docker, as upstream).
    pub fn selected(&self) -> crate::capi::dev::backend::Backend {
        crate::capi::dev::backend::Backend::of(self.in_memory.is_some())
    }
}

/// The docker backend of a DevCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerClusterBackendSpec {
    /// Failure domains offered to Machines.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub failure_domains: Option<Vec<FailureDomain>>,
    /// The load balancer container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<DockerLoadBalancer>,
}

/// A failure domain, named.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureDomain {
    /// Name of the failure domain.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Control plane Machines may be placed here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// Provider-specific attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

/// Observed state of a DevCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevClusterStatus {
    /// How far initial provisioning went.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minProperties" = 1))]
    pub initialization: Option<InitializationStatus>,
    /// Failure domains Machines may be placed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub failure_domains: Option<Vec<FailureDomain>>,
    /// Observations about this object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Conditions>,
    /// What is left of the v1beta1 status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedStatus>,
}

template_kind! {
    /// Desired state of a DevClusterTemplate.
    DevClusterTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta2",
        kind: "DevClusterTemplate",
        kind_doc: "A DevClusterTemplate is the DevCluster of a ClusterClass.",
        age_column: r#"{"description":"Time since the DevClusterTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DevCluster to stamp out.
        template: DevClusterTemplateResource,
    }
}

/// The DevCluster a template stamps out.
pub type DevClusterTemplateResource = TemplateResource<DevClusterSpec>;

crate::capi::conditions::impl_has_deprecated_conditions!(DevCluster);
crate::capi::v1beta2_conditions::impl_has_hub_conditions!(DevCluster);
