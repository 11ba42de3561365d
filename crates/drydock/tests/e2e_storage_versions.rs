//! Changing which version stores and serves a kind, as a user does it: a CRD moves its
//! storage to a new version, `drydock migrate storage` rewrites what was stored in the old
//! one, and the old version can then go; `--runtime-config` switches versions of drydock's
//! own kinds off (never the one objects are stored in), and what is stored keeps working
//! without them.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{
    Env, SAMPLE, eventually, json, kubeconfig_of, kubectl, kubectl_ok, running, spawn_drydock, spawn_drydock_with, wait,
};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

fn crd(versions: &[(&str, bool)]) -> String {
    let versions: Vec<Value> = versions
        .iter()
        .map(|(name, storage)| {
            serde_json::json!({
                "name": name, "served": true, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            })
        })
        .collect();
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": versions,
        },
    })
    .to_string()
}

fn drydock(kc: &Path, args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_drydock")).env("KUBECONFIG", kc).args(args).output().expect("run drydock");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

async fn stored_versions(kc: &Path, want: &[&str]) {
    eventually(&format!("storedVersions {want:?}"), Duration::from_secs(30), || {
        let out =
            kubectl_ok(kc, &["get", "crd", "gadgets.example.com", "-o", "jsonpath={.status.storedVersions}"], None);
        let got: Vec<String> = serde_json::from_str(&out).unwrap_or_default();
        std::future::ready((got == want).then_some(()))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_storage_rewrites_objects_so_the_old_version_can_go() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&crd(&[("v1", true), ("v2", false)])));
    kubectl_ok(&kc, &["wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s"], None);
    for name in ["a", "b", "c"] {
        let obj = format!(
            r#"{{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{{"name":"{name}"}},"spec":{{"size":3}}}}"#
        );
        kubectl_ok(&kc, &["create", "-f", "-"], Some(&obj));
    }
    let (ok, out, _) = drydock(&kc, &["migrate", "storage"]);
    assert!(ok && out.contains("nothing to migrate"), "{out}");

    // The storage version moves to v2: v1 objects stay as they were written until migrated.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&crd(&[("v1", false), ("v2", true)])));
    stored_versions(&kc, &["v1", "v2"]).await;
    let listed = kubectl_ok(&kc, &["get", "gadgets.v2.example.com", "-o", "json"], None);
    let listed: Value = serde_json::from_str(&listed).expect("json");
    let versions: Vec<&str> =
        listed["items"].as_array().expect("items").iter().filter_map(|i| i["apiVersion"].as_str()).collect();
    assert_eq!(versions, ["example.com/v2"; 3], "objects stored in v1 are served in the version asked for");

    // Removing v1 now would strand the objects stored in it.
    let (ok, _, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&crd(&[("v2", true)])));
    assert!(
        !ok && err.contains("status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"),
        "{err}"
    );

    let (ok, out, err) = drydock(&kc, &["migrate", "storage"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("gadgets.example.com: 3 objects rewritten in v2"), "{out}");
    stored_versions(&kc, &["v2"]).await;

    // With nothing left in v1, the version can be removed; every object is still there.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&crd(&[("v2", true)])));
    let names = kubectl_ok(&kc, &["get", "gadgets", "-o", "jsonpath={.items[*].metadata.name}"], None);
    assert_eq!(names, "a b c");
    let size = kubectl_ok(&kc, &["get", "gadget", "b", "-o", "jsonpath={.spec.size}"], None);
    assert_eq!(size, "3");
    let (ok, out, _) = drydock(&kc, &["migrate", "storage"]);
    assert!(ok && out.contains("nothing to migrate"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_config_switches_a_version_off() {
    let mut env = Env::start_with_runtime_config(&[
        "bootstrap.cluster.x-k8s.io/v1beta1=false",
        "ipam.cluster.x-k8s.io/v1alpha1=false",
    ])
    .await;
    let kc = env.kubeconfig(None);
    let (ok, _, err) = kubectl(&kc, &["get", "kubeadmconfigs.v1beta1.bootstrap.cluster.x-k8s.io"], None);
    assert!(!ok, "v1beta1 is switched off");
    assert!(err.contains("the server doesn't have a resource type") || err.contains("NotFound"), "{err}");
    kubectl_ok(&kc, &["get", "kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io"], None);
    let groups = kubectl_ok(&kc, &["api-versions"], None);
    let served = |v: &str| groups.lines().any(|l| l == v);
    assert!(!served("bootstrap.cluster.x-k8s.io/v1beta1") && served("bootstrap.cluster.x-k8s.io/v1beta2"), "{groups}");
    assert!(served("cluster.x-k8s.io/v1beta2"), "other groups keep v1beta2: {groups}");
    assert!(!served("ipam.cluster.x-k8s.io/v1alpha1") && served("ipam.cluster.x-k8s.io/v1beta1"), "{groups}");
    env.instance.stop_controllers().await;

    // The version objects are stored in cannot be switched off.
    for (flag, stores) in [
        (
            "cluster.x-k8s.io/v1beta2=false",
            "v1beta2 is the storage version of Cluster, ClusterClass, Machine, MachineSet, MachineDeployment, \
             MachineHealthCheck",
        ),
        (
            "bootstrap.cluster.x-k8s.io/v1beta2=false",
            "v1beta2 is the storage version of KubeadmConfig, KubeadmConfigTemplate",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["up", "--listen", "127.0.0.1:0", "--runtime-config", flag, "--data-dir"])
            .arg(dir.path())
            .output()
            .expect("drydock up");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{flag}: {stores}")), "{err}");
    }
}

/// IPAM is served in v1alpha1 too, as upstream v1.14 serves it: a provider on the v1alpha1
/// contract and one on v1beta2 share the same claims, and neither loses the other's fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipam_claims_read_and_write_in_v1alpha1_v1beta1_and_v1beta2() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let claim = |version: &str, name: &str, cluster: &str| {
        format!(
            "apiVersion: ipam.cluster.x-k8s.io/{version}\nkind: IPAddressClaim\nmetadata: {{name: {name}, namespace: default}}\n\
             spec:\n  {cluster}poolRef: {{apiGroup: ipam.cluster.x-k8s.io, kind: InClusterIPPool, name: nodes}}\n"
        )
    };
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&claim("v1alpha1", "node-0", "")));
    let get = |version: &str, name: &str| -> Value {
        let resource = format!("ipaddressclaims.{version}.ipam.cluster.x-k8s.io");
        serde_json::from_str(&kubectl_ok(&kc, &["get", &resource, name, "-o", "json"], None)).expect("json")
    };
    let alpha = get("v1alpha1", "node-0");
    for version in ["v1beta1", "v1beta2"] {
        let other = get(version, "node-0");
        assert_eq!(other["apiVersion"], format!("ipam.cluster.x-k8s.io/{version}"));
        assert_eq!(other["metadata"]["uid"], alpha["metadata"]["uid"]);
        assert_eq!(other["spec"]["poolRef"], alpha["spec"]["poolRef"], "{version}");
    }
    // A v1beta2 writer sets the cluster name, which v1alpha1 has no field for.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&claim("v1beta2", "node-1", "clusterName: c1\n  ")));
    let alpha = get("v1alpha1", "node-1");
    assert!(alpha["spec"].get("clusterName").is_none(), "{alpha}");
    // The v1alpha1 client labels what it read and writes it all back: the name stays.
    let mut written = alpha.clone();
    written["metadata"]["labels"] = serde_json::json!({"provider": "v1alpha1"});
    kubectl_ok(&kc, &["replace", "-f", "-"], Some(&written.to_string()));
    let hub = get("v1beta2", "node-1");
    assert_eq!(hub["spec"]["clusterName"], "c1", "{hub}");
    assert_eq!(hub["metadata"]["labels"]["provider"], "v1alpha1", "{hub}");
    let stored_in = kubectl_ok(
        &kc,
        &["get", "crd", "ipaddressclaims.ipam.cluster.x-k8s.io", "-o", "jsonpath={.status.storedVersions}"],
        None,
    );
    assert_eq!(stored_in, r#"["v1beta2"]"#);
}

/// Discovery prefers a group's newest version, as kube-apiserver does, whatever version
/// its kinds are stored in: a plain `kubectl get` answers in v1beta2 without a deprecation
/// warning, and v1beta1 stays one qualified name away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_prefers_the_newest_version() {
    let env = Env::start(false).await;
    let kc = env.kubeconfig(None);
    let preferred = |group: &str| -> Value {
        let doc: Value = serde_json::from_str(&kubectl_ok(&kc, &["get", "--raw", &format!("/apis/{group}")], None))
            .expect("APIGroup");
        doc["preferredVersion"]["version"].clone()
    };
    for group in
        ["cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "ipam.cluster.x-k8s.io"]
    {
        assert_eq!(preferred(group), "v1beta2", "{group}");
    }
    let cluster = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c, namespace: default}\n\
                   spec: {paused: true}\n";
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(cluster));
    let (ok, out, stderr) = kubectl(&kc, &["get", "cluster", "c", "-o", "json"], None);
    assert!(ok, "{stderr}");
    let read: Value = serde_json::from_str(&out).expect("Cluster");
    assert_eq!(read["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert_eq!(read["spec"]["paused"], true, "{read}");
    assert!(!stderr.contains("deprecated"), "no warning for the preferred version: {stderr}");
    let (ok, out, stderr) = kubectl(&kc, &["get", "clusters.v1beta1.cluster.x-k8s.io", "c", "-o", "json"], None);
    assert!(ok, "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(&out).expect("Cluster")["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert!(stderr.contains("cluster.x-k8s.io/v1beta1 Cluster is deprecated"), "{stderr}");
}

/// Every kind is stored in v1beta2, so v1beta1 can be switched off: a cluster applied from
/// v1beta1 manifests (its references naming v1beta1), its objects rewritten by `drydock
/// migrate storage`, keeps working after a restart without any v1beta1, and grows: new
/// Machines of its MachineDeployment and control plane get their bootstrap configs and
/// infrastructure through v1beta2, the references resolved by the CRDs' contract labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1beta1_switched_off_after_migrating_storage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = spawn_drydock(dir.path(), "127.0.0.1:0");
    let kc = kubeconfig_of(dir.path()).await;
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(SAMPLE));
    wait("6 machines Running", 3 * MINUTE, || running(&kc, "sample") == 6).await;
    let (ok, out, err) = drydock(&kc, &["migrate", "storage"]);
    assert!(ok, "{out}{err}");
    child.kill().expect("kill");
    child.wait().expect("reap");

    let off = "cluster.x-k8s.io/v1beta1=false,bootstrap.cluster.x-k8s.io/v1beta1=false,\
               controlplane.cluster.x-k8s.io/v1beta1=false";
    let mut child = spawn_drydock_with(dir.path(), "127.0.0.1:0", &["--runtime-config", off]);
    let kc = kubeconfig_of(dir.path()).await;
    for old in [
        "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinedeployments",
        "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machines",
        "/apis/bootstrap.cluster.x-k8s.io/v1beta1/namespaces/default/kubeadmconfigs",
        "/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/default/kubeadmcontrolplanes",
    ] {
        let (ok, _, err) = kubectl(&kc, &["get", "--raw", old], None);
        assert!(!ok && err.contains("NotFound"), "{old} is switched off: {err}");
    }
    let groups = kubectl_ok(&kc, &["api-versions"], None);
    assert!(!groups.lines().any(|l| l == "cluster.x-k8s.io/v1beta1"), "{groups}");
    let configs = kubectl_ok(&kc, &["get", "kubeadmconfigs.v1beta2.bootstrap.cluster.x-k8s.io", "-o", "name"], None);
    assert_eq!(configs.lines().count(), 6, "every KubeadmConfig stays: {configs}");
    let sets = json(&kc, &["get", "machinesets"]);
    assert_eq!(sets["items"].as_array().map(Vec::len), Some(1), "the MachineSet stays: {sets:#}");
    assert_eq!(sets["items"][0]["apiVersion"], "cluster.x-k8s.io/v1beta2");
    let kcp = kubectl_ok(&kc, &["get", "kcp", "sample-control-plane", "-o", "jsonpath={.status.readyReplicas}"], None);
    assert_eq!(kcp, "3");
    // The Cluster follows its group-only control plane reference through the contract
    // labels, v1beta1 of the control plane group being off.
    let cluster = json(&kc, &["get", "clusters", "sample"]);
    assert_eq!(cluster["status"]["initialization"]["controlPlaneInitialized"], true, "{cluster:#}");
    assert_eq!(cluster["spec"]["controlPlaneRef"]["apiGroup"], "controlplane.cluster.x-k8s.io");

    kubectl_ok(&kc, &["scale", "md", "sample-workers", "--replicas=4"], None);
    kubectl_ok(&kc, &["scale", "kcp", "sample-control-plane", "--replicas=5"], None);
    wait("9 machines Running", 3 * MINUTE, || running(&kc, "sample") == 9).await;
    let configs = json(&kc, &["get", "kubeadmconfigs"]);
    let items = configs["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 9);
    assert!(
        items.iter().all(|c| c["status"]["initialization"]["dataSecretCreated"] == true),
        "every config rendered: {configs}"
    );
    // A new cluster from `drydock generate cluster` (v1beta2 manifests) provisions too.
    let (ok, manifest, err) = drydock(&kc, &["generate", "cluster", "fresh", "--startup-duration", "0s"]);
    assert!(ok, "{err}");
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    wait("the new cluster's 2 machines Running", 3 * MINUTE, || running(&kc, "fresh") == 2).await;
    child.kill().expect("kill");
    child.wait().expect("reap");
}
