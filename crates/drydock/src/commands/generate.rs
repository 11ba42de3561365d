//! `drydock generate cluster`: a ready-to-apply manifest for the in-memory provider, in the
//! shape of upstream's quick-start templates (KubeadmControlPlane, MachineDeployment,
//! MachineHealthCheck), in the API versions upstream v1.14 writes (v1beta2; the in-memory
//! kinds are v1alpha1, referenced by API group through their contract labels).

use anyhow::Context;
use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct GenerateClusterArgs {
    /// Cluster name.
    pub name: String,
    /// Kubernetes version of the control plane and worker machines.
    #[arg(long, default_value = "v1.31.2")]
    pub kubernetes_version: String,
    /// Number of control plane machines.
    #[arg(long, default_value_t = 1)]
    pub control_plane_machine_count: u32,
    /// Number of worker machines (one MachineDeployment).
    #[arg(long, default_value_t = 1)]
    pub worker_machine_count: u32,
    /// Namespace the objects are written for (clusterctl's `--target-namespace`).
    #[arg(short = 'n', long, visible_alias = "namespace", default_value = "default")]
    pub target_namespace: String,
    /// Simulated VM startup time of each machine (node, API server and etcd take a fifth each).
    #[arg(long, default_value = "2s")]
    pub startup_duration: String,
}

/// A fifth of a Go-style duration string, for the later provisioning phases.
fn fifth(d: &str) -> String {
    match drydock_api::capi::duration::parse(d) {
        Ok(dur) => format!("{}ms", dur.as_millis() / 5),
        Err(_) => "0s".into(),
    }
}

/// The manifest in the format asked for: YAML documents, or a JSON `List` as kubectl prints
/// several objects.
pub fn print(a: &GenerateClusterArgs, format: super::OutputFormat) -> anyhow::Result<String> {
    let text = render(a);
    if format != super::OutputFormat::Json {
        return Ok(text);
    }
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&text).context("reading back the generated manifest")?;
    super::print_objects(&docs, super::OutputFormat::Json, true)
}

/// The manifest: the Cluster and its InMemoryCluster, the control plane and its machine
/// template, one MachineDeployment with its templates and MachineHealthCheck.
pub fn render(a: &GenerateClusterArgs) -> String {
    [
        cluster(a),
        machine_template(a, "control-plane", &["node", "apiServer", "etcd"]),
        control_plane(a),
        machine_template(a, "md-0", &["node"]),
        config_template(a),
        machine_deployment(a),
        health_check(a),
    ]
    .join("---\n")
}

fn cluster(a: &GenerateClusterArgs) -> String {
    let (name, ns) = (&a.name, &a.target_namespace);
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: {ns}
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
    services:
      cidrBlocks: ["10.128.0.0/12"]
    serviceDomain: cluster.local
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: InMemoryCluster
    name: {name}
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: KubeadmControlPlane
    name: {name}-control-plane
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryCluster
metadata:
  name: {name}
  namespace: {ns}
spec: {{}}
"#
    )
}

/// An InMemoryMachineTemplate `<name>-<suffix>`: the VM starts in the startup duration, then
/// each of `later` (node, API server, etcd) in a fifth of it.
fn machine_template(a: &GenerateClusterArgs, suffix: &str, later: &[&str]) -> String {
    let (name, ns) = (&a.name, &a.target_namespace);
    let rest = fifth(&a.startup_duration);
    let mut out = format!(
        r#"apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryMachineTemplate
metadata:
  name: {name}-{suffix}
  namespace: {ns}
spec:
  template:
    spec:
      behaviour:
"#
    );
    out.push_str(&provisioning("vm", &a.startup_duration));
    for component in later {
        out.push_str(&provisioning(component, &rest));
    }
    out
}

fn provisioning(component: &str, duration: &str) -> String {
    format!(
        "        {component}:\n          provisioning:\n            startupDuration: \"{duration}\"\n            startupJitter: \"0.2\"\n"
    )
}

fn control_plane(a: &GenerateClusterArgs) -> String {
    let (name, ns, version) = (&a.name, &a.target_namespace, &a.kubernetes_version);
    let cp = a.control_plane_machine_count;
    format!(
        r#"apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: {name}-control-plane
  namespace: {ns}
spec:
  replicas: {cp}
  version: {version}
  machineTemplate:
    spec:
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: InMemoryMachineTemplate
        name: {name}-control-plane
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        certSANs: [localhost, 127.0.0.1]
    initConfiguration:
      nodeRegistration: {{}}
    joinConfiguration:
      nodeRegistration: {{}}
"#
    )
}

fn config_template(a: &GenerateClusterArgs) -> String {
    let (name, ns) = (&a.name, &a.target_namespace);
    format!(
        r#"apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: {name}-md-0
  namespace: {ns}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration: {{}}
"#
    )
}

fn machine_deployment(a: &GenerateClusterArgs) -> String {
    let (name, ns, version) = (&a.name, &a.target_namespace, &a.kubernetes_version);
    let workers = a.worker_machine_count;
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: {name}-md-0
  namespace: {ns}
spec:
  clusterName: {name}
  replicas: {workers}
  selector:
    matchLabels: {{}}
  template:
    spec:
      clusterName: {name}
      version: {version}
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfigTemplate
          name: {name}-md-0
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: InMemoryMachineTemplate
        name: {name}-md-0
"#
    )
}

fn health_check(a: &GenerateClusterArgs) -> String {
    let (name, ns) = (&a.name, &a.target_namespace);
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  name: {name}-md-0
  namespace: {ns}
spec:
  clusterName: {name}
  selector:
    matchLabels:
      cluster.x-k8s.io/deployment-name: {name}-md-0
  checks:
    nodeStartupTimeoutSeconds: 600
    unhealthyNodeConditions:
    - type: Ready
      status: Unknown
      timeoutSeconds: 300
    - type: Ready
      status: "False"
      timeoutSeconds: 300
  remediation:
    triggerIf:
      unhealthyLessThanOrEqualTo: 100%
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_object() {
        let a = GenerateClusterArgs {
            name: "c1".into(),
            kubernetes_version: "v1.31.2".into(),
            control_plane_machine_count: 3,
            worker_machine_count: 2,
            target_namespace: "ns1".into(),
            startup_duration: "5s".into(),
        };
        let text = render(&a);
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).expect("valid YAML");
        let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            vec![
                "Cluster",
                "InMemoryCluster",
                "InMemoryMachineTemplate",
                "KubeadmControlPlane",
                "InMemoryMachineTemplate",
                "KubeadmConfigTemplate",
                "MachineDeployment",
                "MachineHealthCheck"
            ]
        );
        let versions: Vec<&str> = docs.iter().filter_map(|d| d["apiVersion"].as_str()).collect();
        assert!(versions.iter().all(|v| v.ends_with("/v1beta2") || v.ends_with("/v1alpha1")), "{versions:?}");
        assert_eq!(docs[3]["spec"]["replicas"], 3);
        assert_eq!(docs[6]["spec"]["replicas"], 2);
        assert!(docs.iter().all(|d| d["metadata"]["namespace"] == "ns1"));
        assert_eq!(
            docs[2]["spec"]["template"]["spec"]["behaviour"]["node"]["provisioning"]["startupDuration"],
            "1000ms"
        );
        assert_eq!(print(&a, super::super::OutputFormat::Yaml).ok(), Some(text));
        let list: serde_json::Value =
            serde_json::from_str(&print(&a, super::super::OutputFormat::Json).expect("json")).expect("valid JSON");
        assert_eq!((list["apiVersion"].as_str(), list["kind"].as_str()), (Some("v1"), Some("List")));
        let items = list["items"].as_array().expect("items");
        assert_eq!(items.len(), 8);
        assert!(items.iter().all(|d| d["metadata"]["namespace"] == "ns1"));
    }
}
