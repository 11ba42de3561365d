//! kubeadm's ClusterConfiguration as Cluster API embeds it: control-plane components, etcd,
//! DNS and networking shared by every control-plane node.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Cluster-wide kubeadm settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConfiguration {
    /// kubeadm API version (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// kubeadm kind (set by the bootstrap provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Local etcd or an external etcd cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd: Option<Etcd>,
    /// Pod/service subnets and DNS domain (filled from the Cluster by the controllers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub networking: Option<Networking>,
    /// Kubernetes version (filled from the Machine by the controllers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Stable address of the control plane (filled from the Cluster by the controllers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<String>,
    /// Extra settings of kube-apiserver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_server: Option<APIServer>,
    /// Extra settings of kube-controller-manager.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_manager: Option<ControlPlaneComponent>,
    /// Extra settings of kube-scheduler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<ControlPlaneComponent>,
    /// CoreDNS image override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns: Option<DNS>,
    /// Where certificates are stored on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificates_dir: Option<String>,
    /// Registry control-plane images are pulled from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_repository: Option<String>,
    /// kubeadm feature gates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// Cluster name written into kubeconfigs (filled from the Cluster by the controllers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
}

/// Settings of a control-plane static pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneComponent {
    /// Extra command-line flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<BTreeMap<String, String>>,
    /// Extra host paths mounted into the pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_volumes: Option<Vec<HostPathMount>>,
    /// Extra environment variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_envs: Option<Vec<EnvVar>>,
}

/// Settings of kube-apiserver: those of every control-plane component, and its certificate
/// and start-up timeout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIServer {
    /// Flags, volumes and environment, as for the other components.
    #[serde(flatten)]
    pub component: ControlPlaneComponent,
    /// Extra subject alternative names of the serving certificate.
    #[serde(rename = "certSANs", skip_serializing_if = "Option::is_none")]
    pub cert_sans: Option<Vec<String>>,
    /// How long kubeadm waits for the API server to come up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_for_control_plane: Option<String>,
}

/// A host path mounted into a control-plane pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostPathMount {
    /// Volume name.
    pub name: String,
    /// Path on the host.
    pub host_path: String,
    /// Path in the pod.
    pub mount_path: String,
    /// Mount read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Kubernetes HostPathType of the volume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_type: Option<String>,
}

/// CoreDNS image settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DNS {
    /// Registry the image is pulled from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_repository: Option<String>,
    /// Tag of the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_tag: Option<String>,
}

/// etcd: stacked on the control-plane nodes (local) or an external cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Etcd {
    /// etcd run by kubeadm on the control-plane nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalEtcd>,
    /// An etcd cluster outside the control plane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalEtcd>,
}

/// etcd run by kubeadm on each control-plane node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalEtcd {
    /// Registry the image is pulled from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_repository: Option<String>,
    /// Tag of the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_tag: Option<String>,
    /// Data directory on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// Extra command-line flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<BTreeMap<String, String>>,
    /// Extra environment variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_envs: Option<Vec<EnvVar>>,
    /// Extra SANs of the serving certificate.
    #[serde(rename = "serverCertSANs", skip_serializing_if = "Option::is_none")]
    pub server_cert_sans: Option<Vec<String>>,
    /// Extra SANs of the peer certificate.
    #[serde(rename = "peerCertSANs", skip_serializing_if = "Option::is_none")]
    pub peer_cert_sans: Option<Vec<String>>,
}

/// An etcd cluster outside the control plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalEtcd {
    /// Client URLs of the etcd members.
    pub endpoints: Vec<String>,
    /// CA file on the node.
    pub ca_file: String,
    /// Client certificate file on the node.
    pub cert_file: String,
    /// Client key file on the node.
    pub key_file: String,
}

/// Cluster networking as kubeadm sees it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Networking {
    /// Service CIDR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_subnet: Option<String>,
    /// Pod CIDR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_subnet: Option<String>,
    /// DNS domain of services.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns_domain: Option<String>,
}
