//! ClusterResourceSets end to end, through kubectl as users drive them: a set's ConfigMap and
//! Secret manifests reach the workload clusters its selector matches (and no other), the
//! binding records what was applied, a Reconcile set carries an edit over while an ApplyOnce
//! set does not, a Cluster labelled later gets the resources, a Secret of the wrong type is
//! reported on the set, and a deleted set leaves the bindings but what it applied stays.

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use common::{Env, generated_cluster, json, kubectl, kubectl_ok, wait, workload_kubeconfig};

const MINUTE: Duration = Duration::from_secs(60);

const RESOURCES: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: calico-addon, namespace: default}
data:
  calico.yaml: |
    apiVersion: v1
    kind: Namespace
    metadata: {name: calico-system}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: calico-config, namespace: calico-system}
    data: {mtu: "1440"}
    ---
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: {name: calico-node}
    rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: v1
kind: Secret
metadata: {name: calico-credentials, namespace: default}
type: addons.cluster.x-k8s.io/resource-set
stringData:
  secret.yaml: |
    apiVersion: v1
    kind: Secret
    metadata: {name: calico-token, namespace: calico-system}
    stringData: {token: s3cret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: once-addon, namespace: default}
data:
  once.yaml: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: once, namespace: default}
    data: {value: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: opaque, namespace: default}
stringData: {x.yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: never}\n"}
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata: {name: cni, namespace: default}
spec:
  strategy: Reconcile
  clusterSelector: {matchLabels: {cni: calico}}
  resources:
  - {kind: ConfigMap, name: calico-addon}
  - {kind: Secret, name: calico-credentials}
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata: {name: once, namespace: default}
spec:
  clusterSelector: {matchLabels: {cni: calico}}
  resources: [{kind: ConfigMap, name: once-addon}]
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata: {name: wrong-type, namespace: default}
spec:
  clusterSelector: {matchLabels: {cni: calico}}
  resources: [{kind: Secret, name: opaque}]
"#;

/// `.data.<key>` of a ConfigMap in a workload cluster, if it exists.
fn workload_value(wkc: &Path, ns: &str, name: &str, key: &str) -> Option<String> {
    let (ok, out, _) = kubectl(wkc, &["get", "configmap", "-n", ns, name, "-o", "json"], None);
    let v: Value = serde_json::from_str(&out).ok().filter(|_| ok)?;
    v["data"][key].as_str().map(str::to_string)
}

/// The resources of `set` on `cluster`'s binding: (kind/name, applied, hash, lastAppliedTime).
fn bound(kc: &Path, cluster: &str, set: &str) -> Vec<(String, bool, String, String)> {
    let (ok, out, _) = kubectl(kc, &["get", "clusterresourcesetbinding", cluster, "-o", "json"], None);
    let v: Value = serde_json::from_str(&out).ok().filter(|_| ok).unwrap_or_default();
    let entry = v["spec"]["bindings"].as_array().into_iter().flatten().find(|b| b["clusterResourceSetName"] == set);
    entry
        .and_then(|e| e["resources"].as_array())
        .into_iter()
        .flatten()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (format!("{}/{}", s("kind"), s("name")), r["applied"] == true, s("hash"), s("lastAppliedTime"))
        })
        .collect()
}

/// `(status, reason, message)` of the set's v1beta2 ResourcesApplied condition.
fn applied_condition(kc: &Path, set: &str) -> (String, String, String) {
    let v = json(kc, &["get", "clusterresourceset", set]);
    let c = v["status"]["conditions"].as_array().into_iter().flatten().find(|c| c["type"] == "ResourcesApplied");
    let s = |k: &str| c.and_then(|c| c[k].as_str()).unwrap_or_default().to_string();
    (s("status"), s("reason"), s("message"))
}

/// `drydock describe cluster c1 --show-resourcesets`: a ClusterResourceSets node with the
/// sets that applied something to c1, each with its ResourcesApplied.
fn describe_shows_the_bound_sets(kc: &Path) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock"))
        .env("KUBECONFIG", kc)
        .args(["describe", "cluster", "c1", "--show-resourcesets"])
        .output()
        .expect("drydock describe");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tree}{}", String::from_utf8_lossy(&out.stderr));
    let at = tree.find("ClusterResourceSets").unwrap_or_else(|| panic!("no ClusterResourceSets node:\n{tree}"));
    for set in ["ClusterResourceSet/cni", "ClusterResourceSet/once"] {
        assert!(tree[at..].contains(set), "{set} under the node:\n{tree}");
    }
    assert!(!tree.contains("wrong-type"), "a set that applied nothing is not bound:\n{tree}");
    assert!(tree[at..].contains("ResourcesApplied: True"), "each set's ResourcesApplied:\n{tree}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_resource_sets_apply_reconcile_and_release() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(RESOURCES));
    for name in ["c1", "c2"] {
        kubectl_ok(&kc, &["apply", "-f", "-"], Some(&generated_cluster(name, &["--worker-machine-count", "0"])));
    }
    kubectl_ok(&kc, &["label", "cluster", "c1", "cni=calico"], None);

    // c1 matches: every manifest of both resources of `cni`, and `once`'s, reach it.
    wait("c1's kubeconfig", MINUTE, || kubectl(&kc, &["get", "secret", "c1-kubeconfig"], None).0).await;
    let c1 = workload_kubeconfig(&env, &kc, "c1");
    wait("calico-config in c1", MINUTE, || {
        workload_value(&c1, "calico-system", "calico-config", "mtu").as_deref() == Some("1440")
    })
    .await;
    let token = json(&c1, &["get", "secret", "-n", "calico-system", "calico-token"]);
    assert_eq!(token["data"]["token"], "czNjcmV0", "the Secret's manifest, decoded once");
    assert!(kubectl(&c1, &["get", "clusterrole", "calico-node"], None).0, "cluster-scoped objects too");
    wait("once in c1", MINUTE, || workload_value(&c1, "default", "once", "value").as_deref() == Some("1")).await;

    // The binding is c1's, owned by it, and lists what each set applied.
    let binding = json(&kc, &["get", "clusterresourcesetbinding", "c1"]);
    assert_eq!(binding["spec"]["clusterName"], "c1");
    assert_eq!(binding["metadata"]["ownerReferences"][0]["kind"], "Cluster");
    let cni = bound(&kc, "c1", "cni");
    let names: Vec<_> = cni.iter().map(|(n, applied, _, _)| (n.as_str(), *applied)).collect();
    assert_eq!(names, [("ConfigMap/calico-addon", true), ("Secret/calico-credentials", true)]);
    assert!(cni.iter().all(|(_, _, h, t)| h.starts_with("sha256:") && h.len() == 71 && !t.is_empty()), "{cni:?}");
    wait("cni ResourcesApplied", MINUTE, || applied_condition(&kc, "cni").0 == "True").await;
    let listed = kubectl_ok(&kc, &["get", "clusterresourceset", "cni"], None);
    assert!(listed.lines().next().is_some_and(|h| h.contains("APPLIED")), "{listed}");
    // The resources name the set as an owner; v1beta1 readers see the conditions too.
    let addon = json(&kc, &["get", "configmap", "calico-addon"]);
    assert!(addon["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|o| o["name"] == "cni"));
    let v1 = json(&kc, &["get", "clusterresourcesets.v1beta1.addons.cluster.x-k8s.io", "cni"]);
    assert_eq!(v1["status"]["conditions"][0]["type"], "ResourcesApplied");
    assert_eq!(v1["status"]["v1beta2"]["conditions"][0]["type"], "ResourcesApplied");

    // `drydock describe --show-resourcesets` lists the sets bound to the Cluster, as clusterctl.
    describe_shows_the_bound_sets(&kc);

    // c2 is not selected: nothing reaches it.
    wait("c2's kubeconfig", MINUTE, || kubectl(&kc, &["get", "secret", "c2-kubeconfig"], None).0).await;
    let c2 = workload_kubeconfig(&env, &kc, "c2");
    assert!(workload_value(&c2, "default", "once", "value").is_none());
    assert!(!kubectl(&kc, &["get", "clusterresourcesetbinding", "c2"], None).0, "no binding for c2");

    // A Secret of the wrong type is reported on its set.
    wait("wrong-type refused", MINUTE, || applied_condition(&kc, "wrong-type").1 == "WrongSecretType").await;
    assert!(applied_condition(&kc, "wrong-type").2.contains("addons.cluster.x-k8s.io/resource-set"));

    // Edits: the Reconcile set carries them to the cluster, the ApplyOnce set does not.
    let before = bound(&kc, "c1", "cni");
    let once_before = bound(&kc, "c1", "once");
    let edit = |name: &str, from: &str, to: &str| {
        let cm = json(&kc, &["get", "configmap", name]);
        let key = cm["data"].as_object().and_then(|d| d.keys().next().cloned()).expect("a key");
        let text = cm["data"][&key].as_str().unwrap_or_default().replace(from, to);
        let patch = serde_json::json!({"data": {key: text}}).to_string();
        kubectl_ok(&kc, &["patch", "configmap", name, "--type", "merge", "-p", &patch], None);
    };
    edit("once-addon", "\"1\"", "\"2\"");
    edit("calico-addon", "1440", "1500");
    wait("the new mtu in c1", MINUTE, || {
        workload_value(&c1, "calico-system", "calico-config", "mtu").as_deref() == Some("1500")
    })
    .await;
    wait("the new hash recorded", MINUTE, || bound(&kc, "c1", "cni")[0].2 != before[0].2).await;
    assert_eq!(bound(&kc, "c1", "cni")[1], before[1], "the unchanged Secret was not applied again");
    assert_eq!(bound(&kc, "c1", "once"), once_before, "ApplyOnce records nothing new");
    assert_eq!(workload_value(&c1, "default", "once", "value").as_deref(), Some("1"), "ApplyOnce applied once");

    // A Cluster labelled later gets the sets' resources as they are now.
    kubectl_ok(&kc, &["label", "cluster", "c2", "cni=calico"], None);
    wait("calico-config in c2", MINUTE, || {
        workload_value(&c2, "calico-system", "calico-config", "mtu").as_deref() == Some("1500")
    })
    .await;
    wait("once in c2", MINUTE, || workload_value(&c2, "default", "once", "value").as_deref() == Some("2")).await;

    // Deleting a set takes it out of the bindings; what it applied stays.
    kubectl_ok(&kc, &["delete", "clusterresourceset", "cni", "--wait=true", "--timeout=60s"], None);
    wait("cni out of c1's binding", MINUTE, || bound(&kc, "c1", "cni").is_empty()).await;
    assert_eq!(bound(&kc, "c1", "once").len(), 1, "the other set stays bound");
    assert_eq!(workload_value(&c1, "calico-system", "calico-config", "mtu").as_deref(), Some("1500"));

    // Immutable fields, as upstream's webhook holds them.
    let (ok, _, err) = kubectl(
        &kc,
        &["patch", "clusterresourceset", "once", "--type", "merge", "-p", r#"{"spec":{"strategy":"Reconcile"}}"#],
        None,
    );
    assert!(!ok && err.contains("field is immutable"), "{err}");
}
