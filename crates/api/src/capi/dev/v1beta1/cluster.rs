//! DevCluster v1beta1: the infrastructure cluster of the Dev provider, on the v1beta1
//! contract (`status.ready`, failure domains as a map, conditions with severity).

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::common::{TemplateResource, V1Beta2Conditions, template_kind};
use crate::capi::conditions::{Condition, impl_has_conditions};
use crate::capi::core::FailureDomainSpec;
use crate::capi::dev::backend::{Backend, DockerLoadBalancer, InMemoryClusterBackendSpec};

/// Desired state of a DevCluster.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "infrastructure.cluster.x-k8s.io",
    version = "v1beta1",
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
    pub control_plane_endpoint: Option<APIEndpoint>,
    /// The backend simulating (or, upstream, running) the cluster.
    pub backend: DevClusterBackendSpec,
}

/// Where an API server listens. Either part may be unset until the provider fills it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIEndpoint {
    /// Hostname or IP address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// TCP port.
    #[serde(skip_serializing_if = "Option::is_none")]
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
    pub fn selected(&self) -> Backend {
        Backend::of(self.in_memory.is_some())
    }
}

/// The docker backend of a DevCluster (v1beta1: failure domains by name).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerClusterBackendSpec {
    /// Failure domains offered to Machines, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<BTreeMap<String, FailureDomainSpec>>,
    /// The load balancer container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<DockerLoadBalancer>,
}

/// Observed state of a DevCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevClusterStatus {
    /// The infrastructure is ready (the v1beta1 contract's flag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// Failure domains Machines may be placed in, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_domains: Option<BTreeMap<String, FailureDomainSpec>>,
    /// Observations about this object, Ready first (v1beta1 style, with severity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Conditions in the newer v1beta2 style, reported alongside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

template_kind! {
    /// Desired state of a DevClusterTemplate.
    DevClusterTemplateSpec {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta1",
        kind: "DevClusterTemplate",
        kind_doc: "A DevClusterTemplate is the DevCluster of a ClusterClass.",
        age_column: r#"{"description":"Time since the DevClusterTemplate was created","jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#,
        /// The DevCluster to stamp out.
        template: DevClusterTemplateResource,
    }
}

/// The DevCluster a template stamps out.
pub type DevClusterTemplateResource = TemplateResource<DevClusterSpec>;

impl_has_conditions!(DevCluster);
