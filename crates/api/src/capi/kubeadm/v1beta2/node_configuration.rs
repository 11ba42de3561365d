//! kubeadm's InitConfiguration and JoinConfiguration (v1beta2): per-node settings of
//! `kubeadm init` and `kubeadm join`, with the timeouts of kubeadm v1beta4.

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_configuration::Arg;
use crate::capi::kubeadm::{FileDiscovery, ImagePullPolicy, JoinControlPlane, LocalAPIEndpoint, Patches};

/// Settings of the first control-plane node (`kubeadm init`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitConfiguration {
    /// Bootstrap tokens created at init (not uploaded to the cluster's kubeadm config).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub bootstrap_tokens: Option<Vec<BootstrapToken>>,
    /// Registration of the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_registration: Option<NodeRegistrationOptions>,
    /// Address and port this node's API server advertises and binds.
    #[serde(rename = "localAPIEndpoint", skip_serializing_if = "Option::is_none")]
    pub local_api_endpoint: Option<LocalAPIEndpoint>,
    /// kubeadm phases to skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 50))]
    pub skip_phases: Option<Vec<String>>,
    /// Patches applied to the manifests kubeadm generates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Patches>,
    /// Timeouts of the kubeadm command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<Timeouts>,
}

/// Settings of joining nodes (`kubeadm join`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JoinConfiguration {
    /// Registration of the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_registration: Option<NodeRegistrationOptions>,
    /// Path of the cluster CA certificate on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub ca_cert_path: Option<String>,
    /// How the node finds and trusts the cluster (filled by the controllers when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
    /// Present when the node joins as a control-plane node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<JoinControlPlane>,
    /// kubeadm phases to skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 50))]
    pub skip_phases: Option<Vec<String>>,
    /// Patches applied to the manifests kubeadm generates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Patches>,
    /// Timeouts of the kubeadm command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<Timeouts>,
}

/// How long kubeadm waits for each step, in seconds (0: no wait limit where kubeadm allows).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    /// Until the control-plane components are healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub control_plane_component_health_check_seconds: Option<i32>,
    /// Until the kubelet is healthy.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub kubelet_health_check_seconds: Option<i32>,
    /// Each call to the Kubernetes API.
    #[serde(rename = "kubernetesAPICallSeconds", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub kubernetes_api_call_seconds: Option<i32>,
    /// Each call to etcd.
    #[serde(rename = "etcdAPICallSeconds", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub etcd_api_call_seconds: Option<i32>,
    /// The TLS bootstrap of a joining node.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub tls_bootstrap_seconds: Option<i32>,
    /// Discovery of the cluster by a joining node.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub discovery_seconds: Option<i32>,
}

/// How a node registers with the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeRegistrationOptions {
    /// Node name (default: the hostname).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// CRI socket of the container runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub cri_socket: Option<String>,
    /// Taints to register with; unset uses kubeadm's default, `[]` registers none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub taints: Option<Vec<Taint>>,
    /// Extra kubelet flags. Names are unique.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub kubelet_extra_args: Option<Vec<Arg>>,
    /// Preflight errors kubeadm ignores.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 50))]
    pub ignore_preflight_errors: Option<Vec<String>>,
    /// When kubeadm pulls images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
    /// Pull images one at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_serial: Option<bool>,
}

/// A bootstrap token created by `kubeadm init`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapToken {
    /// `[a-z0-9]{6}.[a-z0-9]{16}`.
    #[schemars(length(min = 1, max = 23))]
    pub token: String,
    /// What the token is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub description: Option<String>,
    /// Lifetime in seconds; exclusive with `expires`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ttl_seconds: Option<i32>,
    /// Absolute expiry; exclusive with `ttlSeconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<Time>,
    /// What the token may be used for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub usages: Option<Vec<String>>,
    /// Extra groups the token authenticates as.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub groups: Option<Vec<String>>,
}

/// How a joining node discovers the cluster: a bootstrap token or a kubeconfig file.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    /// Discover with a bootstrap token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_token: Option<BootstrapTokenDiscovery>,
    /// Discover with a kubeconfig file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<FileDiscovery>,
    /// Token for the TLS bootstrap.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub tls_bootstrap_token: Option<String>,
}

/// Token-based discovery.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapTokenDiscovery {
    /// The bootstrap token (filled by the controllers when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub token: Option<String>,
    /// Address of the API server.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub api_server_endpoint: Option<String>,
    /// Hashes of the CA public key to pin (`sha256:<hex>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub ca_cert_hashes: Option<Vec<String>>,
    /// Trust the CA without pinning it.
    #[serde(rename = "unsafeSkipCAVerification", skip_serializing_if = "Option::is_none")]
    pub unsafe_skip_ca_verification: Option<bool>,
}
