//! `--clusterclass`: the fleet as topology Clusters of one ClusterClass whose templates are
//! the objects `generate cluster` writes, so the two fleets differ only in what makes the
//! infrastructure cluster, control plane and MachineDeployments: the user, or the topology.

use anyhow::Context;
use serde_json::{Value, json};

use super::FleetArgs;
use crate::commands::generate::render;

/// Name of the class and of its templates.
const CLASS: &str = "bench";
const WORKER_CLASS: &str = "default-worker";

/// The ClusterClass and its templates.
pub fn class_docs(a: &FleetArgs, version: &str) -> anyhow::Result<Vec<Value>> {
    let g = super::generate_args(a, CLASS, version);
    let docs: Vec<Value> = serde_saphyr::from_multiple(&render(&g)).context("generated manifest")?;
    let mut out = Vec::new();
    let mut refs = serde_json::Map::new();
    for d in docs {
        let api_version = d["apiVersion"].clone();
        let name = d["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let template = |kind: &str, spec: Value| {
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"},
                "spec": {"template": {"spec": spec}}})
        };
        let (role, doc) = match d["kind"].as_str().unwrap_or_default() {
            "InMemoryCluster" => ("infrastructure", template("InMemoryClusterTemplate", d["spec"].clone())),
            "KubeadmControlPlane" => (
                "controlPlane",
                template("KubeadmControlPlaneTemplate", json!({"kubeadmConfigSpec": d["spec"]["kubeadmConfigSpec"]})),
            ),
            "InMemoryMachineTemplate" if name.ends_with("-control-plane") => ("controlPlaneMachine", d.clone()),
            "InMemoryMachineTemplate" => ("workerMachine", d.clone()),
            "KubeadmConfigTemplate" => ("workerBootstrap", d.clone()),
            _ => continue,
        };
        refs.insert(
            role.into(),
            json!({"apiVersion": doc["apiVersion"], "kind": doc["kind"], "name": doc["metadata"]["name"]}),
        );
        out.push(doc);
    }
    out.push(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "ClusterClass",
        "metadata": {"name": CLASS, "namespace": "default"},
        "spec": {
            "infrastructure": {"templateRef": refs["infrastructure"]},
            "controlPlane": {
                "templateRef": refs["controlPlane"],
                "machineInfrastructure": {"templateRef": refs["controlPlaneMachine"]},
            },
            "workers": {"machineDeployments": [{
                "class": WORKER_CLASS,
                "bootstrap": {"templateRef": refs["workerBootstrap"]},
                "infrastructure": {"templateRef": refs["workerMachine"]},
            }]},
        },
    }));
    Ok(out)
}

/// Cluster `i` of the fleet, a topology of the class.
pub fn cluster_doc(a: &FleetArgs, name: &str, version: &str) -> Value {
    let deployments: Vec<Value> = (0..a.machine_deployments)
        .map(|md| json!({"class": WORKER_CLASS, "name": format!("md-{md}"), "replicas": a.workers}))
        .collect();
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "clusterNetwork": {
                "pods": {"cidrBlocks": ["192.168.0.0/16"]},
                "services": {"cidrBlocks": ["10.128.0.0/12"]},
                "serviceDomain": "cluster.local",
            },
            "topology": {
                "classRef": {"name": CLASS},
                "version": version,
                "controlPlane": {"replicas": a.control_plane_machines},
                "workers": {"machineDeployments": deployments},
            },
        },
    })
}
