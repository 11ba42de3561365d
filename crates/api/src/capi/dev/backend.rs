//! The backend settings both served versions of the Dev kinds share, field for field.
//!
//! A Dev object names its backend under `spec.backend`: `inMemory` (drydock's in-memory
//! simulation, the point of these kinds here) or `docker` (upstream runs containers; drydock
//! accepts the settings, simulates the machine in memory all the same and says so).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::inmemory::InMemoryMachineBehaviour;

/// The in-memory backend of a DevCluster: it has no settings. Its presence selects the
/// backend.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct InMemoryClusterBackendSpec {}

/// The in-memory backend of a DevMachine: start-up delays of each simulated component
/// (the same settings as an InMemoryMachine's `behaviour`).
pub type InMemoryMachineBackendSpec = InMemoryMachineBehaviour;

/// One backend of a DevMachine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DevMachineBackendSpec {
    /// The docker backend (simulated in memory by drydock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docker: Option<DockerMachineBackendSpec>,
    /// The in-memory backend, with the start-up delays of the simulated components.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_memory: Option<InMemoryMachineBackendSpec>,
}

impl DevMachineBackendSpec {
    /// The backend that runs the machine: in-memory when `inMemory` is set (whatever else
    /// is), docker otherwise (admission defaults an empty backend to docker, as upstream).
    pub fn selected(&self) -> Backend {
        Backend::of(self.in_memory.is_some())
    }
}

/// The docker backend of a DevMachine. drydock starts no container: these settings are
/// kept as written and have no effect.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachineBackendSpec {
    /// Node image to run instead of the one matching the Machine's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_image: Option<String>,
    /// Host paths mounted into the container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_mounts: Option<Vec<Mount>>,
    /// Images loaded into the node before it boots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_load_images: Option<Vec<String>>,
    /// How long bootstrapping may take (Go duration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_timeout: Option<String>,
}

/// The docker backend of a DevMachinePool: a DevMachine's settings without the bootstrap
/// timeout.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerMachinePoolBackendSpec {
    /// Node image to run instead of the one matching the Machine's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_image: Option<String>,
    /// Host paths mounted into each container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_mounts: Option<Vec<Mount>>,
    /// Images loaded into each node before it boots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_load_images: Option<Vec<String>>,
}

/// A host path mounted into a node container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mount {
    /// Where the path appears in the container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_path: Option<String>,
    /// The path on the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_path: Option<String>,
    /// Mounted read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// The load balancer container in front of a docker-backed cluster's API servers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DockerLoadBalancer {
    /// Registry and repository of the load balancer image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_repository: Option<String>,
    /// Tag of the load balancer image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_tag: Option<String>,
    /// A ConfigMap holding an HAProxy configuration template to use instead of the default.
    #[serde(rename = "customHAProxyConfigTemplateRef", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-map-type" = "atomic"))]
    pub custom_haproxy_config_template_ref: Option<LocalObjectReference>,
}

/// An object in the same namespace, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct LocalObjectReference {
    /// Name of the object.
    #[serde(default)]
    pub name: String,
}

/// One address of a machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineAddress {
    /// What kind of address it is.
    #[serde(rename = "type")]
    pub type_: MachineAddressType,
    /// The address.
    #[schemars(length(min = 1, max = 256))]
    pub address: String,
}

/// Kinds of machine address.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum MachineAddressType {
    Hostname,
    ExternalIP,
    #[default]
    InternalIP,
    ExternalDNS,
    InternalDNS,
}

impl MachineAddressType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hostname => "Hostname",
            Self::ExternalIP => "ExternalIP",
            Self::InternalIP => "InternalIP",
            Self::ExternalDNS => "ExternalDNS",
            Self::InternalDNS => "InternalDNS",
        }
    }
}

/// Which backend a Dev object asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    InMemory,
    /// Accepted, and simulated in memory: drydock runs no containers.
    Docker,
}

impl Backend {
    /// `inMemory` wins when set; anything else is docker (upstream's rule).
    pub fn of(in_memory: bool) -> Self {
        if in_memory { Self::InMemory } else { Self::Docker }
    }
}

/// Why a docker-backed Dev object behaves as an in-memory one; said at admission, in an
/// Event and in the object's conditions.
pub const DOCKER_SIMULATED_MESSAGE: &str =
    "drydock runs no containers: the docker backend is simulated in memory (its container settings have no effect)";
