//! kubeadm's ClusterConfiguration (v1beta2): control-plane components, etcd and DNS shared
//! by every control-plane node. What the Cluster already says (networking, version, name) is
//! no longer repeated here.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::kubeadm::{DNS, ExternalEtcd, HostPathMount};

/// Cluster-wide kubeadm settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConfiguration {
    /// Stacked (local) etcd or an external etcd cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd: Option<Etcd>,
    /// Stable address (IP or DNS name, optional port) of the control plane.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
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
    /// Directory of the certificates on the node (kubeadm's default `/etc/kubernetes/pki`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub certificates_dir: Option<String>,
    /// Registry the control-plane images come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image_repository: Option<String>,
    /// kubeadm feature gates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// Lifetime in days of the leaf certificates kubeadm issues (Kubernetes 1.31+).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1095))]
    pub certificate_validity_period_days: Option<i32>,
    /// Lifetime in days of the CA certificates Cluster API generates; immutable.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 36500))]
    pub ca_certificate_validity_period_days: Option<i32>,
    /// Key algorithm of new keys and certificates (default RSA-2048).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption_algorithm: Option<EncryptionAlgorithm>,
}

/// Key algorithm of generated keys and certificates.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum EncryptionAlgorithm {
    /// ECDSA on curve P-256.
    #[serde(rename = "ECDSA-P256")]
    EcdsaP256,
    /// ECDSA on curve P-384 (Kubernetes 1.34+).
    #[serde(rename = "ECDSA-P384")]
    EcdsaP384,
    /// RSA, 2048-bit keys (default).
    #[serde(rename = "RSA-2048")]
    Rsa2048,
    /// RSA, 3072-bit keys.
    #[serde(rename = "RSA-3072")]
    Rsa3072,
    /// RSA, 4096-bit keys.
    #[serde(rename = "RSA-4096")]
    Rsa4096,
}

/// One command-line flag of a component, without its leading dashes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Arg {
    /// Flag name.
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Flag value (may be empty).
    #[schemars(length(max = 1024))]
    pub value: String,
}

/// Settings of a control-plane static pod (controller manager, scheduler).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneComponent {
    /// Extra flags; they override kubeadm's own. Names are unique.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub extra_args: Option<Vec<Arg>>,
    /// Extra host paths mounted into the pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub extra_volumes: Option<Vec<HostPathMount>>,
    /// Extra environment variables (Kubernetes 1.31+).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub extra_envs: Option<Vec<EnvVar>>,
}

/// Settings of kube-apiserver: those of every component plus its serving certificate's SANs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct APIServer {
    /// Flags, volumes and environment, as for the other components.
    #[serde(flatten)]
    pub component: ControlPlaneComponent,
    /// Extra subject alternative names of the serving certificate.
    #[serde(rename = "certSANs", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub cert_sans: Option<Vec<String>>,
}

/// etcd: stacked on the control-plane nodes or external.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Etcd {
    /// etcd run by kubeadm on each control-plane node.
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
    /// Registry the image comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image_repository: Option<String>,
    /// Tag of the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub image_tag: Option<String>,
    /// Data directory on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub data_dir: Option<String>,
    /// Extra flags of etcd. Names are unique.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub extra_args: Option<Vec<Arg>>,
    /// Extra environment variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub extra_envs: Option<Vec<EnvVar>>,
    /// Extra SANs of the serving certificate.
    #[serde(rename = "serverCertSANs", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub server_cert_sans: Option<Vec<String>>,
    /// Extra SANs of the peer certificate.
    #[serde(rename = "peerCertSANs", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub peer_cert_sans: Option<Vec<String>>,
}
