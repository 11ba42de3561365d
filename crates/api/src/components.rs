//! Who drydock's own controllers are when they call the management cluster. Upstream runs
//! one manager per provider (core, kubeadm bootstrap, kubeadm control plane, IPAM, the
//! infrastructure provider), each as its own ServiceAccount bound to its own role; drydock
//! runs them in one process and gives each the same separation: its own user, bound by
//! default to a ClusterRole that grants what that component reads and writes, no more.
//! The caches they share (informers, provider contract lookups, workload kubeconfigs, the
//! Nodes of every workload cluster) read as [`CACHE_USER`], which may not write.

/// The identity the shared caches list and watch as.
pub const CACHE_USER: &str = "system:drydock:controller-manager";

/// One of the managers drydock runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// Cluster API's core controllers: Clusters, ClusterClasses and topologies, Machines,
    /// MachineSets, MachineDeployments, MachinePools, MachineHealthChecks,
    /// ClusterResourceSets, ExtensionConfigs (and the Runtime Extension calls).
    Core,
    /// The kubeadm bootstrap provider (KubeadmConfig).
    KubeadmBootstrap,
    /// The kubeadm control plane provider (KubeadmControlPlane).
    KubeadmControlPlane,
    /// The in-cluster IPAM provider (InClusterIPPool, GlobalInClusterIPPool).
    IpamInCluster,
    /// The in-memory infrastructure provider (InMemory* and Dev* kinds).
    InMemory,
}

impl Component {
    pub const ALL: [Component; 5] =
        [Self::Core, Self::KubeadmBootstrap, Self::KubeadmControlPlane, Self::IpamInCluster, Self::InMemory];

    /// The component's name, as upstream names its manager.
    pub fn name(self) -> &'static str {
        match self {
            Self::Core => "capi-manager",
            Self::KubeadmBootstrap => "capi-kubeadm-bootstrap-manager",
            Self::KubeadmControlPlane => "capi-kubeadm-control-plane-manager",
            Self::IpamInCluster => "capi-ipam-in-cluster-manager",
            Self::InMemory => "capi-in-memory-manager",
        }
    }

    /// The user its requests are authorized as.
    pub fn user(self) -> String {
        format!("system:drydock:{}", self.name())
    }

    /// The default ClusterRole bound to [`Self::user`]. The core's and the kubeadm control
    /// plane's aggregate other ClusterRoles, as upstream's do (and are named as theirs).
    pub fn role(self) -> String {
        match self {
            Self::Core => "drydock:capi-aggregated-manager-role".to_string(),
            Self::KubeadmControlPlane => "drydock:capi-kubeadm-control-plane-aggregated-manager-role".to_string(),
            _ => format!("drydock:{}-role", self.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_component_has_its_own_user_and_role() {
        let users: std::collections::HashSet<String> = Component::ALL.iter().map(|c| c.user()).collect();
        let roles: std::collections::HashSet<String> = Component::ALL.iter().map(|c| c.role()).collect();
        assert_eq!(users.len(), Component::ALL.len());
        assert_eq!(roles.len(), Component::ALL.len());
        assert!(!users.contains(CACHE_USER));
    }
}
