//! The workload-cluster objects a simulated machine brings up, built with their status so
//! each is one create: the Node (kubelet and cloud provider at once), the control plane
//! static pods, and kubeadm's `kube-system/kubeadm-config` ConfigMap.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use serde_json::json;

use crate::timing::fnv1a;
use drydock_controllers::framework::Result;

pub const CONTROL_PLANE_NODE_ROLE: &str = "node-role.kubernetes.io/control-plane";
pub const KUBE_SYSTEM: &str = "kube-system";
/// kubeadm uploads this ConfigMap when `kubeadm init` finishes; its existence is what the
/// control plane calls "initialized".
pub const KUBEADM_CONFIG: &str = "kubeadm-config";

/// Static pods of a control plane node besides etcd.
pub const API_SERVER_COMPONENTS: [&str; 3] = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];
pub const ETCD: &str = "etcd";
const ETCD_VERSION: &str = "3.5.15-0";

/// The provider ID of a simulated machine.
pub fn provider_id(name: &str) -> String {
    format!("in-memory://{name}")
}

/// A stable private address for a machine (10.0.0.0/8, never .0 or .255).
pub fn internal_ip(name: &str) -> String {
    let h = fnv1a(&[name.as_bytes()]);
    let b = h.to_be_bytes();
    format!("10.{}.{}.{}", b[0], b[1], 1 + b[2] % 254)
}

/// What the objects of one machine are built from.
pub struct MachineFacts<'a> {
    /// Machine (and Node) name.
    pub name: &'a str,
    /// Kubernetes version (`vX.Y.Z`).
    pub version: &'a str,
    pub control_plane: bool,
}

fn time(t: Timestamp) -> String {
    // Whole seconds, as Kubernetes serialises metav1.Time.
    Timestamp::from_second(t.as_second()).unwrap_or(t).to_string()
}

/// The Node as a kubelet and cloud provider would have registered it: Ready, no pressure.
pub fn node(f: &MachineFacts<'_>, at: Timestamp) -> Result<Node> {
    let at = time(at);
    let mut labels = BTreeMap::from([
        ("kubernetes.io/hostname".to_string(), f.name.to_string()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
    ]);
    let mut taints = Vec::new();
    if f.control_plane {
        labels.insert(CONTROL_PLANE_NODE_ROLE.to_string(), String::new());
        taints.push(json!({"key": CONTROL_PLANE_NODE_ROLE, "effect": "NoSchedule"}));
    }
    let cond = |type_: &str, status: &str, reason: &str, message: &str| {
        json!({"type": type_, "status": status, "reason": reason, "message": message,
               "lastHeartbeatTime": at, "lastTransitionTime": at})
    };
    let uid = format!("{:016x}", fnv1a(&[f.name.as_bytes(), b"/machine-id"]));
    let node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f.name, "labels": labels},
        "spec": {"providerID": provider_id(f.name), "taints": taints},
        "status": {
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": internal_ip(f.name)},
                {"type": "Hostname", "address": f.name},
            ],
            "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uid,
                "containerRuntimeVersion": "containerd://1.7.20",
                "kernelVersion": "6.1.0",
                "kubeProxyVersion": f.version,
                "kubeletVersion": f.version,
                "machineID": uid,
                "operatingSystem": "linux",
                "osImage": "drydock in-memory",
                "systemUUID": uid,
            },
        },
    });
    Ok(serde_json::from_value(node)?)
}

/// A Running, Ready static pod `<component>-<node>` in kube-system.
pub fn static_pod(
    f: &MachineFacts<'_>,
    component: &str,
    annotations: BTreeMap<String, String>,
    at: Timestamp,
) -> Result<Pod> {
    let at = time(at);
    let tag = if component == ETCD { ETCD_VERSION } else { f.version };
    let ip = internal_ip(f.name);
    let cond = |type_: &str| json!({"type": type_, "status": "True", "lastTransitionTime": at});
    // What the kubelet puts on the API copy (mirror pod) of a static pod; drains skip them.
    let hash = format!("{:016x}", fnv1a(&[component.as_bytes(), b"/", f.name.as_bytes()]));
    let mut annotations = annotations;
    annotations.insert("kubernetes.io/config.mirror".into(), hash.clone());
    annotations.insert("kubernetes.io/config.hash".into(), hash);
    annotations.insert("kubernetes.io/config.source".into(), "file".into());
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("{component}-{}", f.name),
            "namespace": KUBE_SYSTEM,
            "labels": {"component": component, "tier": "control-plane"},
            "annotations": annotations,
        },
        "spec": {
            "nodeName": f.name,
            "hostNetwork": true,
            "priorityClassName": "system-node-critical",
            "containers": [{"name": component, "image": format!("registry.k8s.io/{component}:{tag}")}],
        },
        "status": {
            "phase": "Running",
            "hostIP": ip,
            "podIP": ip,
            "startTime": at,
            "conditions": [cond("PodScheduled"), cond("Initialized"), cond("ContainersReady"), cond("Ready")],
        },
    });
    Ok(serde_json::from_value(pod)?)
}

/// Name of a component's static pod on a node.
pub fn pod_name(component: &str, node: &str) -> String {
    format!("{component}-{node}")
}

/// kubeadm's ClusterConfiguration ConfigMap, uploaded by the first control plane node.
pub fn kubeadm_config(cluster_name: &str, version: &str) -> ConfigMap {
    let cc = format!(
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nclusterName: {cluster_name}\nkubernetesVersion: {version}\n"
    );
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(KUBEADM_CONFIG.to_string());
    cm.metadata.namespace = Some(KUBE_SYSTEM.to_string());
    cm.data = Some(BTreeMap::from([("ClusterConfiguration".to_string(), cc)]));
    cm
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(cp: bool) -> MachineFacts<'static> {
        MachineFacts { name: "m-1", version: "v1.30.2", control_plane: cp }
    }

    #[test]
    fn nodes() {
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let n = node(&facts(true), at).unwrap();
        assert_eq!(n.spec.as_ref().unwrap().provider_id.as_deref(), Some("in-memory://m-1"));
        let labels = n.metadata.labels.as_ref().unwrap();
        assert!(labels.contains_key(CONTROL_PLANE_NODE_ROLE));
        let taints = n.spec.as_ref().unwrap().taints.as_ref().unwrap();
        assert_eq!(taints[0].effect, "NoSchedule");
        let status = n.status.as_ref().unwrap();
        assert_eq!(status.node_info.as_ref().unwrap().kubelet_version, "v1.30.2");
        let ready = status.conditions.as_ref().unwrap().iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.status, "True");

        let w = node(&facts(false), at).unwrap();
        assert!(!w.metadata.labels.unwrap().contains_key(CONTROL_PLANE_NODE_ROLE));
        assert!(w.spec.unwrap().taints.unwrap_or_default().is_empty());
    }

    #[test]
    fn pods_and_addresses() {
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let p = static_pod(&facts(true), "kube-apiserver", BTreeMap::new(), at).unwrap();
        assert_eq!(p.metadata.name.as_deref(), Some("kube-apiserver-m-1"));
        assert!(p.metadata.annotations.as_ref().is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")));
        assert_eq!(p.status.as_ref().unwrap().phase.as_deref(), Some("Running"));
        assert_eq!(internal_ip("m-1"), internal_ip("m-1"));
        assert_ne!(internal_ip("m-1"), internal_ip("m-2"));
        let ip = internal_ip("x");
        let last: u32 = ip.rsplit('.').next().unwrap().parse().unwrap();
        assert!((1..=254).contains(&last));
    }
}
