//! Cluster API manifests as users write them apply unchanged with kubectl and read back
//! with upstream's defaults; the generated CRDs parse with kubectl; invalid objects and
//! forbidden updates are refused with the field that is wrong.

use crate::common;

use common::{Env, SAMPLE, kubectl, kubectl_ok, v1beta1};
use serde_json::Value;

fn get_json(kc: &std::path::Path, what: &str) -> Value {
    serde_json::from_str(&kubectl_ok(kc, &["get", what, "-o", "json"], None)).expect("json")
}

/// Written the way upstream's docs and e2e tests write them: empty selectors, int-or-percent
/// strings, no namespace on references.
const UPSTREAM_STYLE: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: md-percent
spec:
  clusterName: sample
  replicas: 4
  selector: {}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: "25%"
      maxUnavailable: "50%"
  template:
    spec:
      clusterName: sample
      version: v1.30.2
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfigTemplate
          name: sample-workers
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
        kind: InMemoryMachineTemplate
        name: sample-workers
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineSet
metadata:
  name: ms-autoscaled
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "2"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"
spec:
  clusterName: sample
  selector:
    matchLabels: {}
  template:
    spec:
      clusterName: sample
      version: v1.30.2
      bootstrap:
        dataSecretName: some-secret
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
        kind: InMemoryMachineTemplate
        name: sample-workers
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_apply_and_read_back_with_defaults() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let out = kubectl_ok(&kc, &["apply", "-f", "-"], Some(SAMPLE));
    assert_eq!(out.lines().count(), 8, "{out}");
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(UPSTREAM_STYLE));

    let md = get_json(&kc, &v1beta1("machinedeployment/sample-workers"));
    assert_eq!(md["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "sample");
    assert_eq!(md["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"], "sample-workers");
    assert_eq!(md["spec"]["template"]["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"], "sample-workers");
    // Stored in v1beta2, which has no revisionHistoryLimit: as upstream v1.14, unset.
    assert!(md["spec"].get("revisionHistoryLimit").is_none(), "{md:#}");
    assert_eq!(md["spec"]["minReadySeconds"], 0);
    assert_eq!(md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["namespace"], "default");

    let pct = get_json(&kc, &v1beta1("machinedeployment/md-percent"));
    assert_eq!(pct["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(pct["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], "50%");
    assert_eq!(pct["spec"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"], "md-percent");

    let ms = get_json(&kc, &v1beta1("machineset/ms-autoscaled"));
    assert_eq!(ms["spec"]["replicas"], 2, "replicas default to the autoscaler min size");
    assert_eq!(ms["spec"]["deletePolicy"], "Random");

    let kcp = get_json(&kc, &v1beta1("kubeadmcontrolplane/sample-control-plane"));
    assert_eq!(kcp["spec"]["rolloutStrategy"]["type"], "RollingUpdate");
    assert_eq!(kcp["spec"]["rolloutStrategy"]["rollingUpdate"]["maxSurge"], 1);
    assert_eq!(kcp["spec"]["kubeadmConfigSpec"]["format"], "cloud-config");

    let mhc = get_json(&kc, &v1beta1("machinehealthcheck/sample-workers"));
    assert_eq!(mhc["spec"]["maxUnhealthy"], "40%");
    assert_eq!(mhc["spec"]["nodeStartupTimeout"], "10m");
    assert_eq!(mhc["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "sample");

    // Printer columns as upstream shows them, in the preferred version (v1beta2) and in v1beta1.
    let header = |resource: &str| {
        let table = kubectl_ok(&kc, &["get", resource], None);
        table.lines().next().unwrap_or_default().split_whitespace().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(
        header("machinedeployments"),
        [
            "NAME",
            "CLUSTER",
            "AVAILABLE",
            "DESIRED",
            "CURRENT",
            "READY",
            "AVAILABLE",
            "UP-TO-DATE",
            "PHASE",
            "AGE",
            "VERSION"
        ]
    );
    assert_eq!(
        header(&v1beta1("machinedeployments")),
        ["NAME", "CLUSTER", "REPLICAS", "READY", "UPDATED", "UNAVAILABLE", "PHASE", "AGE", "VERSION"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_objects_and_forbidden_updates_are_refused() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(SAMPLE));

    let bad_selector = UPSTREAM_STYLE
        .replace("selector: {}", "selector:\n    matchLabels:\n      app: other")
        .replace("md-percent", "md-bad");
    let (ok, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&bad_selector));
    assert!(!ok);
    assert!(err.contains("spec.template.metadata.labels") || err.contains("selector"), "{err}");

    let (ok, _, err) = kubectl(
        &kc,
        &["patch", "kcp", "sample-control-plane", "--type", "merge", "-p", r#"{"spec":{"version":"v1.32.0"}}"#],
        None,
    );
    assert!(!ok, "skipping a minor version must be refused");
    assert!(err.contains("spec.version"), "{err}");
    kubectl_ok(
        &kc,
        &["patch", "kcp", "sample-control-plane", "--type", "merge", "-p", r#"{"spec":{"version":"v1.31.0"}}"#],
        None,
    );

    let (ok, _, err) = kubectl(
        &kc,
        &["patch", "kcp", "sample-control-plane", "--type", "merge", "-p", r#"{"spec":{"replicas":2}}"#],
        None,
    );
    assert!(!ok, "an even number of stacked-etcd replicas is refused");
    assert!(err.contains("spec.replicas"), "{err}");

    let (ok, _, err) = kubectl(
        &kc,
        &["patch", "md", "sample-workers", "--type", "merge", "-p", r#"{"spec":{"clusterName":"other"}}"#],
        None,
    );
    assert!(!ok, "clusterName is immutable");
    assert!(err.contains("spec.clusterName"), "{err}");

    let (ok, _, err) = kubectl(
        &kc,
        &["patch", &v1beta1("mhc"), "sample-workers", "--type", "merge", "-p", r#"{"spec":{"maxUnhealthy":"lots"}}"#],
        None,
    );
    assert!(!ok);
    // Admission runs in the stored version, v1beta2, as upstream's webhooks do: the error
    // names the field there.
    assert!(err.contains("spec.remediation.triggerIf.unhealthyLessThanOrEqualTo"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_crds_parse_with_kubectl() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock")).arg("crds").output().expect("drydock crds");
    assert!(out.status.success());
    let yaml = String::from_utf8_lossy(&out.stdout).to_string();
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let stdout = kubectl_ok(&kc, &["apply", "--dry-run=client", "-f", "-"], Some(&yaml));
    // Every Cluster API kind drydock serves, each one CRD.
    let kinds = drydock_api::capi::crds().len();
    assert_eq!(kinds, 35, "the kinds of upstream v1.9 and the newer ones drydock serves");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("customresourcedefinition.apiextensions.k8s.io/")).count(),
        kinds,
        "{stdout}"
    );
}

/// Multi-version CRDs name drydock's conversion endpoint (the Service, or the URL and CA
/// given), deprecate v1beta1 as upstream does, and provider CRDs carry contract labels.
#[test]
fn generated_crds_name_the_conversion_webhook_and_contracts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").expect("write ca");
    let crds = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock")).args(args).output().expect("drydock crds");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_saphyr::from_multiple(&String::from_utf8_lossy(&out.stdout)).expect("yaml")
    };
    let find = |crds: &[serde_json::Value], name: &str| {
        crds.iter().find(|c| c["metadata"]["name"] == name).cloned().unwrap_or_else(|| panic!("no {name}"))
    };
    let default = crds(&["crds"]);
    let rules = find(&default, "machinedrainrules.cluster.x-k8s.io");
    let versions: Vec<(&str, bool, bool)> = rules["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| (v["name"].as_str().unwrap_or(""), v["deprecated"] == true, v["served"] == true))
        .collect();
    assert_eq!(versions, [("v1beta1", true, true), ("v1beta2", false, true)]);
    let webhook = &rules["spec"]["conversion"]["webhook"];
    assert_eq!(rules["spec"]["conversion"]["strategy"], "Webhook");
    assert_eq!(webhook["conversionReviewVersions"], serde_json::json!(["v1"]));
    assert_eq!(webhook["clientConfig"]["service"]["path"], "/convert");
    let machines = find(&default, "inmemorymachines.infrastructure.cluster.x-k8s.io");
    assert_eq!(machines["metadata"]["labels"]["cluster.x-k8s.io/v1beta1"], "v1alpha1");
    assert!(machines["spec"].get("conversion").is_none_or(|c| c["strategy"] == "None"), "{machines}");
    let dev = find(&default, "devmachines.infrastructure.cluster.x-k8s.io");
    assert_eq!(dev["metadata"]["labels"]["cluster.x-k8s.io/v1beta1"], "v1beta1");
    assert_eq!(dev["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"], "v1beta2");
    assert_eq!(dev["spec"]["conversion"]["strategy"], "Webhook");
    let pools = find(&default, "devmachinepools.infrastructure.cluster.x-k8s.io");
    assert_eq!(pools["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"], "v1beta2");
    assert!(pools["metadata"]["labels"].get("cluster.x-k8s.io/v1beta1").is_none(), "{pools}");

    let ca_arg = ca.to_string_lossy().to_string();
    let pointed =
        crds(&["crds", "--conversion-url", "https://drydock.example:6443/convert", "--conversion-ca-file", &ca_arg]);
    let client = &find(&pointed, "machinedrainrules.cluster.x-k8s.io")["spec"]["conversion"]["webhook"]["clientConfig"];
    assert_eq!(client["url"], "https://drydock.example:6443/convert");
    assert!(client.get("service").is_none(), "{client}");
    assert!(client["caBundle"].as_str().is_some_and(|b| !b.is_empty()), "{client}");
}
