//! What the control plane looks like from inside the workload cluster: control plane Nodes,
//! static pods, etcd membership and whether kubeadm init finished. Read once per
//! reconcile (two lists, plus one get until initialized), then judged per Machine.

use std::time::Duration;

use drydock_api::capi::conditions::{HasConditions, READY};
use drydock_api::capi::core::v1beta2::Machine;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use crate::etcd::Membership;
use crate::framework::{Error, Result};

pub const CONTROL_PLANE_NODE_ROLE: &str = "node-role.kubernetes.io/control-plane";
const LEGACY_MASTER_NODE_ROLE: &str = "node-role.kubernetes.io/master";
/// Static pods of a kubeadm control plane node besides etcd.
pub const COMPONENTS: [&str; 3] = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];
/// One slow workload cluster must not hold a worker for long.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The workload cluster's control plane as read.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// Nodes with a control plane role label.
    pub nodes: Vec<Node>,
    /// Control plane static pods in kube-system.
    pub pods: Vec<Pod>,
    pub membership: Membership,
    /// `kube-system/kubeadm-config` exists (only read until initialized).
    pub kubeadm_config: bool,
}

/// Runs a workload-cluster call with the read timeout.
pub async fn bounded<T>(what: &str, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(READ_TIMEOUT, f)
        .await
        .map_err(|_| Error::Timeout { what: what.to_string(), after: READ_TIMEOUT })?
        .map_err(Error::during(what))
}

/// Reads the workload cluster. `check_initialized`: also look for kubeadm-config.
pub async fn observe(client: &kube::Client, check_initialized: bool) -> Result<Observed> {
    let read = async {
        let nodes: Api<Node> = Api::all(client.clone());
        let pods: Api<Pod> = Api::namespaced(client.clone(), "kube-system");
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
        let nodes = nodes.list(&ListParams::default().labels(CONTROL_PLANE_NODE_ROLE)).await?.items;
        let pods = pods.list(&ListParams::default().labels("tier=control-plane")).await?.items;
        let kubeadm_config = check_initialized && cms.get_opt("kubeadm-config").await?.is_some();
        let membership = Membership::from_pods(&pods);
        Ok::<_, Error>(Observed { nodes, pods, membership, kubeadm_config })
    };
    tokio::time::timeout(READ_TIMEOUT, read)
        .await
        .map_err(|_| Error::Timeout { what: "reading the control plane".into(), after: READ_TIMEOUT })?
}

fn node_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn pod_ready(p: &Pod) -> bool {
    let s = p.status.as_ref();
    s.and_then(|s| s.phase.as_deref()) == Some("Running")
        && s.and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

impl Observed {
    /// Ready control plane Nodes (what `status.readyReplicas` counts).
    pub fn ready_nodes(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| {
                let l = n.labels();
                (l.contains_key(CONTROL_PLANE_NODE_ROLE) || l.contains_key(LEGACY_MASTER_NODE_ROLE)) && node_ready(n)
            })
            .count()
    }

    /// The Node of a Machine: by `status.nodeRef`, else by provider ID.
    pub fn node_of(&self, m: &Machine) -> Option<&Node> {
        if let Some(name) = m.node_name() {
            return self.nodes.iter().find(|n| n.name_any() == name);
        }
        let pid = m.spec.provider_id.as_deref()?;
        self.nodes.iter().find(|n| n.spec.as_ref().and_then(|s| s.provider_id.as_deref()) == Some(pid))
    }

    fn pod(&self, component: &str, node: &str) -> Option<&Pod> {
        let name = format!("{component}-{node}");
        self.pods.iter().find(|p| p.name_any() == name)
    }

    /// Where the static pod of `component` (`etcd` included) on `node` stands.
    pub fn pod_state(&self, component: &str, node: &str) -> PodState {
        let Some(p) = self.pod(component, node) else {
            return PodState::Missing;
        };
        match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
            Some("Pending") => PodState::Provisioning,
            Some("Running") if pod_ready(p) => PodState::Running,
            Some("Running") => PodState::NotReady,
            Some("Failed" | "Succeeded") => PodState::Failed,
            _ => PodState::Unknown,
        }
    }

    /// How a Machine's control plane looks.
    pub fn health(&self, m: &Machine) -> MachineHealth {
        let Some(node) = self.node_of(m) else {
            return MachineHealth::default();
        };
        let name = node.name_any();
        MachineHealth {
            node: Some(name.clone()),
            node_ready: node_ready(node),
            components_ready: COMPONENTS.map(|c| self.pod(c, &name).is_some_and(pod_ready)),
            etcd_member_healthy: self.membership.member(&name).is_some_and(|m| m.healthy),
        }
    }
}

/// A static pod as seen in the workload cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodState {
    Missing,
    Provisioning,
    Running,
    /// Running, but not ready.
    NotReady,
    /// Terminated.
    Failed,
    /// A phase that says nothing (`Unknown`, or none).
    Unknown,
}

/// A Machine's control plane components, as seen in the workload cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineHealth {
    /// Name of its Node, when found.
    pub node: Option<String>,
    pub node_ready: bool,
    /// In the order of [`COMPONENTS`].
    pub components_ready: [bool; 3],
    pub etcd_member_healthy: bool,
}

impl MachineHealth {
    pub fn components_healthy(&self) -> bool {
        self.components_ready.iter().all(|r| *r)
    }

    /// Why this Machine cannot count as a stable member of the control plane, if it cannot.
    pub fn problem(&self, m: &Machine) -> Option<String> {
        let name = m.name_any();
        if m.metadata.deletion_timestamp.is_some() {
            return Some(format!("Machine {name} is being deleted"));
        }
        if !m.is_condition_true(READY) {
            return Some(format!("Machine {name} is not ready"));
        }
        let Some(node) = &self.node else {
            return Some(format!("Machine {name} has no Node yet"));
        };
        if !self.node_ready {
            return Some(format!("Node {node} is not ready"));
        }
        if let Some(i) = self.components_ready.iter().position(|r| !r) {
            return Some(format!("{} on Node {node} is not ready", COMPONENTS[i]));
        }
        if !self.etcd_member_healthy {
            return Some(format!("etcd member on Node {node} is not healthy"));
        }
        None
    }
}
