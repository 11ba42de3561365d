//! kubeadm's InitConfiguration and JoinConfiguration: per-node settings for `kubeadm init`
//! and `kubeadm join`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Settings of the first control-plane node (`kubeadm init`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitConfiguration {
    /// kubeadm API version (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// kubeadm kind (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Tokens created at init (Cluster API manages its own by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_tokens: Option<Vec<BootstrapToken>>,
    /// Registration of the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_registration: Option<NodeRegistrationOptions>,
    /// Where this node's API server listens.
    #[serde(rename = "localAPIEndpoint", skip_serializing_if = "Option::is_none")]
    pub local_api_endpoint: Option<LocalAPIEndpoint>,
    /// Phases to skip and patches to apply.
    #[serde(flatten)]
    pub phases: PhaseOptions,
}

/// Settings of joining nodes (`kubeadm join`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JoinConfiguration {
    /// kubeadm API version (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// kubeadm kind (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Registration of the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_registration: Option<NodeRegistrationOptions>,
    /// Path of the cluster CA on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_cert_path: Option<String>,
    /// How the node finds and trusts the cluster (filled by the controllers when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
    /// Set when the node joins as a control-plane node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<JoinControlPlane>,
    /// Phases to skip and patches to apply.
    #[serde(flatten)]
    pub phases: PhaseOptions,
}

/// kubeadm phases to skip and patches to apply, on `init` and `join` alike.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhaseOptions {
    /// kubeadm phases to skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_phases: Option<Vec<String>>,
    /// Patches applied to kubeadm-generated manifests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patches: Option<Patches>,
}

/// How a node registers with the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeRegistrationOptions {
    /// Node name (default: the hostname).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// CRI socket of the container runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cri_socket: Option<String>,
    /// Taints to register with; unset uses kubeadm's default, `[]` registers none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// Extra kubelet flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubelet_extra_args: Option<BTreeMap<String, String>>,
    /// kubeadm preflight errors to ignore.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignore_preflight_errors: Option<Vec<String>>,
    /// When kubeadm pulls images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
    /// Pull images one at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_serial: Option<bool>,
}

/// When kubeadm pulls images.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum ImagePullPolicy {
    /// Pull every time.
    Always,
    /// Pull when the image is missing.
    IfNotPresent,
    /// Never pull; images must be present.
    Never,
}

/// A bootstrap token created by `kubeadm init`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapToken {
    /// `abcdef.0123456789abcdef`.
    pub token: String,
    /// What the token is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Lifetime (Go duration); exclusive with `expires`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
    /// Absolute expiry; exclusive with `ttl`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<Time>,
    /// What the token may be used for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usages: Option<Vec<String>>,
    /// Extra groups the token authenticates as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

/// Address and port a node's API server advertises and binds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalAPIEndpoint {
    /// Address the API server advertises.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advertise_address: Option<String>,
    /// Port the API server binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_port: Option<i32>,
}

/// Extra settings of a joining control-plane node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JoinControlPlane {
    /// Where this node's API server listens.
    #[serde(rename = "localAPIEndpoint", skip_serializing_if = "Option::is_none")]
    pub local_api_endpoint: Option<LocalAPIEndpoint>,
}

/// Directory of patches for kubeadm-generated manifests.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Patches {
    /// Directory of patch files on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
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
    pub tls_bootstrap_token: Option<String>,
    /// How long discovery may take (Go duration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// Token-based discovery.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapTokenDiscovery {
    /// The bootstrap token.
    pub token: String,
    /// Address of the API server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server_endpoint: Option<String>,
    /// Hashes of the CA public key to pin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_cert_hashes: Option<Vec<String>>,
    /// Trust the CA without pinning.
    #[serde(rename = "unsafeSkipCAVerification", skip_serializing_if = "Option::is_none")]
    pub unsafe_skip_ca_verification: Option<bool>,
}

/// File-based discovery.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiscovery {
    /// Path of the kubeconfig on the node.
    pub kube_config_path: String,
    /// Content Cluster API writes to that path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_config: Option<FileDiscoveryKubeConfig>,
}

/// A kubeconfig generated for file discovery.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiscoveryKubeConfig {
    /// The cluster entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<KubeConfigCluster>,
    /// The user entry.
    pub user: KubeConfigUser,
}

/// Cluster entry of a discovery kubeconfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigCluster {
    /// API server URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Server name for TLS verification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_server_name: Option<String>,
    /// Skip TLS verification.
    #[serde(rename = "insecureSkipTLSVerify", skip_serializing_if = "Option::is_none")]
    pub insecure_skip_tls_verify: Option<bool>,
    /// PEM CA bundle, base64-encoded (kept as the encoded text).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "byte"))]
    pub certificate_authority_data: Option<String>,
    /// Proxy to reach the server through.
    #[serde(rename = "proxyURL", skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
}

/// User entry of a discovery kubeconfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigUser {
    /// Auth-provider plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_provider: Option<KubeConfigAuthProvider>,
    /// Exec credential plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec: Option<KubeConfigAuthExec>,
}

/// Auth-provider plugin settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigAuthProvider {
    /// Name.
    pub name: String,
    /// Plugin configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, String>>,
}

/// Exec credential plugin settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigAuthExec {
    /// Command to run.
    pub command: String,
    /// Arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Extra environment variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<KubeConfigAuthExecEnv>>,
    /// kubeadm API version (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Pass cluster information to the plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provide_cluster_info: Option<bool>,
}

/// An environment variable of an exec plugin.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigAuthExecEnv {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}
