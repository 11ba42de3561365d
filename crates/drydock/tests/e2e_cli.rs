//! The drydock CLI against a live drydock with a provisioned cluster: generate, describe,
//! get kubeconfig, rollout history/undo/pause/resume/restart/status. Assertions are on the
//! output's structure (rows, columns, revisions, tree shape), not on timestamps.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Env, eventually, kubectl, kubectl_ok, v1beta1};
use serde_json::Value;

/// Runs drydock with `kc` as KUBECONFIG (commands that take no connection flags run too).
fn drydock(kc: &Path, args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_drydock")).env("KUBECONFIG", kc).args(args).output().expect("run drydock");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn drydock_ok(kc: &Path, args: &[&str]) -> String {
    let (ok, out, err) = drydock(kc, args);
    assert!(ok, "drydock {args:?} failed:\n{out}\n{err}");
    out
}

async fn wait_ok(what: &str, kc: &Path, args: &[&str], pred: impl Fn(&str) -> bool) -> String {
    eventually(what, Duration::from_secs(120), || {
        let (ok, out, _) = kubectl(kc, args, None);
        let hit = ok && pred(&out);
        async move { hit.then_some(out) }
    })
    .await
}

/// The names of the objects `kubectl get ARGS -o json` lists, with their controller's name.
fn listed(kc: &Path, args: &[&str]) -> Vec<(String, String)> {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    let list: Value = serde_json::from_str(&kubectl_ok(kc, &a, None)).expect("json");
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let controller = o["metadata"]["ownerReferences"]
                .as_array()
                .and_then(|rs| rs.iter().find(|r| r["controller"] == true))
                .and_then(|r| r["name"].as_str())
                .unwrap_or_default();
            (o["metadata"]["name"].as_str().unwrap_or_default().to_string(), controller.to_string())
        })
        .collect()
}

/// The cells of a table's column `name` (read at the header's offset, so empty cells are
/// empty strings).
fn column(table: &str, name: &str) -> Vec<String> {
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    let at = header
        .split_whitespace()
        .find(|h| *h == name)
        .and_then(|_| header.match_indices(name).map(|(i, _)| i).find(|i| *i == 0 || header.as_bytes()[i - 1] == b' '));
    let Some(at) = at else { panic!("no column {name} in:\n{table}") };
    lines.map(|l| l.get(at..).unwrap_or_default().split_whitespace().next().unwrap_or_default().to_string()).collect()
}

/// The value after `key: ` on the line of `out` that has it.
fn reported<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines().find_map(|l| l.trim().strip_prefix(key)).map(str::trim).unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

/// `rollout restart` followed at once by `rollout status` waits for the restart's rollout
/// and reports what replaced what.
async fn restart_then_status(kc: &Path) {
    let workers = ["get", "machines", "-l", "cluster.x-k8s.io/deployment-name=c1-md-0"];
    let old_sets: Vec<String> = listed(kc, &workers).into_iter().map(|(_, set)| set).collect();
    assert!(!old_sets.is_empty());
    drydock_ok(kc, &["rollout", "restart", "md/c1-md-0"]);
    let out = drydock_ok(kc, &["rollout", "status", "md/c1-md-0", "--timeout", "2m"]);
    assert!(out.contains("successfully rolled out"), "{out}");
    let new_set = reported(&out, "MachineSet:").split_whitespace().next().unwrap_or_default().to_string();
    assert!(!old_sets.contains(&new_set), "a new MachineSet ({new_set}) replaced {old_sets:?}:\n{out}");
    let now = listed(kc, &workers);
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now.iter().all(|(_, set)| *set == new_set), "the new MachineSet owns every worker: {now:?}");

    let cp = ["get", "machines", "-l", "cluster.x-k8s.io/control-plane-name=c1-control-plane"];
    let old: Vec<String> = listed(kc, &cp).into_iter().map(|(m, _)| m).collect();
    drydock_ok(kc, &["rollout", "restart", "kcp/c1-control-plane"]);
    let out = drydock_ok(kc, &["rollout", "status", "kcp/c1-control-plane", "--timeout", "2m"]);
    let machines: Vec<&str> = reported(&out, "control plane Machines:").split(", ").collect();
    assert_eq!(machines.len(), old.len(), "{out}");
    for m in &old {
        assert!(!machines.contains(&m.as_str()), "{m} was replaced:\n{out}");
        assert!(reported(&out, "replaced:").contains(m.as_str()), "{out}");
    }
    let now: Vec<String> = listed(kc, &cp).into_iter().map(|(m, _)| m).collect();
    assert!(old.iter().all(|m| !now.contains(m)), "old control plane Machines are gone: {old:?} {now:?}");
}

fn md_infra(kc: &Path) -> String {
    kubectl_ok(kc, &["get", "md", "c1-md-0", "-o", "jsonpath={.spec.template.spec.infrastructureRef.name}"], None)
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_against_a_provisioned_cluster() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);

    // generate cluster output applies with kubectl and provisions.
    let manifest =
        drydock_ok(&kc, &["generate", "cluster", "c1", "--worker-machine-count", "2", "--startup-duration", "0s"]);
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    wait_ok("3 machines Running", &kc, &["get", "machines", "-o", "jsonpath={.items[*].status.phase}"], |o| {
        o.split_whitespace().filter(|p| *p == "Running").count() == 3
    })
    .await;

    // get kubeconfig works with kubectl get nodes.
    let wkc_text = drydock_ok(&kc, &["get", "kubeconfig", "c1"]);
    let wkc = env.dir.path().join("c1.kubeconfig");
    std::fs::write(&wkc, wkc_text).expect("write");
    wait_ok("3 nodes through the workload kubeconfig", &wkc, &["get", "nodes", "-o", "name"], |o| {
        o.lines().count() == 3
    })
    .await;

    // Tables: label columns (upstream's quoted-key JSONPath) and LogicalCluster phases are filled.
    for kind in ["kubeadmcontrolplanes", "inmemoryclusters", "inmemorymachines", "kubeadmconfigs"] {
        let table = drydock_ok(&kc, &["get", kind, "-o", "wide"]);
        let cells = column(&table, "CLUSTER");
        assert!(!cells.is_empty() && cells.iter().all(|c| c == "c1"), "{kind}:\n{table}");
    }
    let lcs = drydock_ok(&kc, &["get", "lc"]);
    assert!(column(&lcs, "NAME").contains(&"default.c1".to_string()), "{lcs}");
    assert!(column(&lcs, "PHASE").iter().all(|p| p == "Ready"), "{lcs}");
    let names = drydock_ok(&kc, &["get", "kcp", "-o", "name"]);
    assert_eq!(names.trim(), "kubeadmcontrolplane.controlplane.cluster.x-k8s.io/c1-control-plane");

    // describe: tree shape.
    let tree = drydock_ok(&kc, &["describe", "cluster", "c1"]);
    let lines: Vec<&str> = tree.lines().collect();
    let header: Vec<&str> = lines[0].split("   ").map(str::trim).filter(|s| !s.is_empty()).collect();
    assert_eq!(
        header,
        ["NAME", "REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE"]
    );
    assert!(lines[1].starts_with("Cluster/c1") && lines[1].contains("Available: "), "{tree}");
    assert!(
        lines.iter().any(|l| l.starts_with("├─ControlPlane - KubeadmControlPlane/c1-control-plane")
            && (l.contains("Available: ") || l.contains("Same as parent"))),
        "the control plane shows its v1beta2 Available (or that it is the Cluster's, as clusterctl says):\n{tree}"
    );
    let old = drydock_ok(&kc, &["describe", "cluster", "c1", "--v1beta1"]);
    let header: Vec<&str> = old.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, vec!["NAME", "READY", "SEVERITY", "REASON", "SINCE", "MESSAGE"], "{old}");
    assert!(lines.iter().any(|l| l.starts_with("├─ClusterInfrastructure - InMemoryCluster/c1")), "{tree}");
    assert!(lines.iter().any(|l| l.starts_with("├─ControlPlane - KubeadmControlPlane/c1-control-plane")), "{tree}");
    assert!(lines.iter().any(|l| l.starts_with("└─Workers")), "{tree}");
    assert!(
        lines.iter().any(|l| l.trim_start_matches(['│', ' ']).starts_with("└─MachineDeployment/c1-md-0")),
        "{tree}"
    );
    assert!(lines.iter().any(|l| l.contains("2 Machines...")), "identical workers are grouped:\n{tree}");
    let ungrouped = drydock_ok(&kc, &["describe", "cluster", "c1", "--grouping=false", "--show-conditions", "all"]);
    assert_eq!(ungrouped.lines().filter(|l| l.contains("Machine/c1-md-0")).count(), 2, "{ungrouped}");
    assert!(ungrouped.lines().any(|l| l.contains("InfrastructureReady")), "conditions shown:\n{ungrouped}");
    assert!(!tree.contains('\x1b'), "no colours when piped");
    let as_yaml = drydock_ok(&kc, &["describe", "cluster", "c1", "-o", "yaml"]);
    assert!(as_yaml.contains("kind: List") && as_yaml.contains("kind: Cluster"), "{as_yaml}");

    // Errors name the object and exit non-zero.
    let (ok, _, err) = drydock(&kc, &["describe", "cluster", "nope"]);
    assert!(!ok && err.contains("nope") && err.contains("not found"), "{err}");
    let (ok, _, err) = drydock(&kc, &["get", "widgets"]);
    assert!(!ok && err.contains("widgets"), "{err}");
    let unreachable = env.dir.path().join("dead.kubeconfig");
    drydock::kubeconfig::write(&unreachable, &drydock::kubeconfig::render("http://127.0.0.1:9", "dead", None))
        .expect("kubeconfig");
    let (ok, _, err) = drydock(&kc, &["get", "clusters", "--kubeconfig", &unreachable.to_string_lossy()]);
    assert!(!ok && err.contains("cannot reach the API server"), "--kubeconfig wins over KUBECONFIG: {err}");

    // history / undo round trip: templates A, B, A, C (the history limit is a v1beta1 field).
    kubectl_ok(
        &kc,
        &["patch", &v1beta1("md"), "c1-md-0", "--type", "merge", "-p", r#"{"spec":{"revisionHistoryLimit":10}}"#],
        None,
    );
    let tpl: Value =
        serde_json::from_str(&kubectl_ok(&kc, &["get", "inmemorymachinetemplate", "c1-md-0", "-o", "json"], None))
            .expect("json");
    for suffix in ["b", "c"] {
        let mut copy = serde_json::json!({"apiVersion": tpl["apiVersion"], "kind": tpl["kind"],
            "metadata": {"name": format!("c1-md-0-{suffix}"), "namespace": "default"}, "spec": tpl["spec"]});
        copy["metadata"]["labels"] = serde_json::json!({"template": suffix});
        kubectl_ok(&kc, &["apply", "-f", "-"], Some(&copy.to_string()));
    }
    for (infra, cause) in [("c1-md-0-b", "to B"), ("c1-md-0", "back to A"), ("c1-md-0-c", "to C")] {
        kubectl_ok(
            &kc,
            &["annotate", "md", "c1-md-0", "--overwrite", &format!("kubernetes.io/change-cause={cause}")],
            None,
        );
        let patch = format!(r#"{{"spec":{{"template":{{"spec":{{"infrastructureRef":{{"name":"{infra}"}}}}}}}}}}"#);
        kubectl_ok(&kc, &["patch", "md", "c1-md-0", "--type", "merge", "-p", &patch], None);
        drydock_ok(&kc, &["rollout", "status", "machinedeployment/c1-md-0", "--timeout", "2m"]);
    }
    let history = drydock_ok(&kc, &["rollout", "history", "machinedeployment/c1-md-0"]);
    let rows: Vec<Vec<&str>> = history.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    let numbers: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(numbers, vec!["1", "2", "3", "4"], "{history}");
    assert_eq!(rows[0][1], rows[2][1], "revisions 1 and 3 are the same MachineSet:\n{history}");
    assert!(history.lines().nth(2).is_some_and(|l| l.contains("same MachineSet as revision 3")), "{history}");
    assert!(history.contains("back to A") && history.contains("to C"), "change causes shown:\n{history}");
    // -o: the MachineSets of the history (one revision: its MachineSet), as kubectl prints ReplicaSets.
    let sets: Value =
        serde_json::from_str(&drydock_ok(&kc, &["rollout", "history", "md/c1-md-0", "-o", "json"])).expect("json");
    assert_eq!(sets["kind"], "List");
    let set_names: Vec<&str> =
        sets["items"].as_array().into_iter().flatten().filter_map(|s| s["metadata"]["name"].as_str()).collect();
    assert_eq!(set_names.len(), 3, "three MachineSets hold four revisions: {sets}");
    assert!(sets["items"].as_array().into_iter().flatten().all(|s| s["kind"] == "MachineSet"));
    let one = drydock_ok(&kc, &["rollout", "history", "md/c1-md-0", "--revision", "2", "-o", "yaml"]);
    assert!(one.contains("kind: MachineSet") && one.contains("name: c1-md-0-b"), "{one}");
    let rev2 = drydock_ok(&kc, &["rollout", "history", "machinedeployment/c1-md-0", "--revision", "2"]);
    assert!(rev2.contains("name: c1-md-0-b"), "revision 2's template:\n{rev2}");

    for (rev, infra) in [("1", "c1-md-0"), ("2", "c1-md-0-b")] {
        drydock_ok(&kc, &["rollout", "undo", "machinedeployment/c1-md-0", "--to-revision", rev]);
        assert_eq!(md_infra(&kc), infra, "undo to revision {rev}");
        drydock_ok(&kc, &["rollout", "status", "machinedeployment/c1-md-0", "--timeout", "2m"]);
        // Every worker now runs on infrastructure cloned from that revision's template.
        let ims: Value = serde_json::from_str(&kubectl_ok(
            &kc,
            &["get", "inmemorymachines", "-l", "cluster.x-k8s.io/deployment-name=c1-md-0", "-o", "json"],
            None,
        ))
        .expect("json");
        let sources: Vec<&str> = ims["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["metadata"]["deletionTimestamp"].is_null())
            .filter_map(|m| m["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"].as_str())
            .collect();
        assert_eq!(sources, vec![infra, infra], "workers after undo to revision {rev}");
    }
    let (ok, _, err) = drydock(&kc, &["rollout", "undo", "machinedeployment/c1-md-0", "--to-revision", "99"]);
    assert!(!ok && err.contains("revision 99 not found"), "{err}");

    // pause / resume / restart are idempotent with a message.
    assert!(drydock_ok(&kc, &["rollout", "pause", "md/c1-md-0"]).contains("paused"));
    assert!(drydock_ok(&kc, &["rollout", "pause", "md/c1-md-0"]).contains("already paused"));
    let (ok, _, err) = drydock(&kc, &["rollout", "restart", "md/c1-md-0"]);
    assert!(!ok && err.contains("resume"), "{err}");
    assert!(drydock_ok(&kc, &["rollout", "resume", "md/c1-md-0"]).contains("resumed"));
    assert!(drydock_ok(&kc, &["rollout", "resume", "md/c1-md-0"]).contains("already resumed"));
    let paused: Value =
        serde_json::from_str(&drydock_ok(&kc, &["rollout", "pause", "kcp/c1-control-plane", "-o", "json"]))
            .expect("-o json prints the object written");
    assert_eq!(paused["kind"], "KubeadmControlPlane");
    assert!(paused["metadata"]["annotations"]["cluster.x-k8s.io/paused"].is_string(), "{paused}");
    assert!(drydock_ok(&kc, &["rollout", "resume", "kcp/c1-control-plane"]).contains("resumed"));
    restart_then_status(&kc).await;

    // rollout status: exit 0 when complete (above), non-zero on timeout.
    kubectl_ok(&kc, &["patch", "md", "c1-md-0", "--type", "merge", "-p", r#"{"spec":{"paused":true}}"#], None);
    kubectl_ok(
        &kc,
        &[
            "patch",
            "md",
            "c1-md-0",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"infrastructureRef":{"name":"c1-md-0-c"}}}}}"#,
        ],
        None,
    );
    let (ok, _, err) = drydock(&kc, &["rollout", "status", "md/c1-md-0", "--timeout", "2s"]);
    assert!(!ok, "a paused rollout cannot complete");
    assert!(err.contains("timed out"), "{err}");

    // apply -o json: the objects as written (several: a List).
    let manifest = drydock_ok(&kc, &["generate", "cluster", "c9", "-n", "other"]);
    kubectl_ok(
        &kc,
        &["apply", "-f", "-"],
        Some(r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}"#),
    );
    let file = env.dir.path().join("c9.yaml");
    std::fs::write(&file, manifest).expect("write manifest");
    let applied: Value =
        serde_json::from_str(&drydock_ok(&kc, &["apply", "-f", &file.to_string_lossy(), "-o", "json"])).expect("json");
    let items = applied["items"].as_array().expect("a List");
    assert_eq!(items.len(), 8);
    assert!(items.iter().all(|o| o["metadata"]["namespace"] == "other" && o["metadata"]["uid"].is_string()));

    // get in kubectl's table shape, and -o json.
    let table = drydock_ok(&kc, &["get", "machinedeployments"]);
    let header: Vec<&str> = table.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header[0], "NAME");
    // The preferred version's columns: v1beta2's.
    assert!(["DESIRED", "UP-TO-DATE", "PHASE"].iter().all(|c| header.contains(c)), "{table}");
    let json: Value = serde_json::from_str(&drydock_ok(&kc, &["get", "md", "c1-md-0", "-o", "json"])).expect("json");
    assert_eq!(json["metadata"]["name"], "c1-md-0");
}

/// `generate cluster` writes the namespace `-n` (or `--target-namespace`) names, and
/// `-o json` is one List of the objects.
#[test]
fn generate_honours_namespace_and_output() {
    let kc = Path::new("unused.kubeconfig");
    for flag in ["-n", "--target-namespace", "--namespace"] {
        let yaml = drydock_ok(kc, &["generate", "cluster", "foo", flag, "bar"]);
        let docs: Vec<Value> = serde_saphyr::from_multiple(&yaml).expect("YAML");
        assert_eq!(docs.len(), 8);
        assert!(docs.iter().all(|d| d["metadata"]["namespace"] == "bar"), "{flag}:\n{yaml}");
    }
    let list: Value = serde_json::from_str(&drydock_ok(kc, &["generate", "cluster", "foo", "-n", "bar", "-o", "json"]))
        .expect("json");
    assert_eq!(list["kind"], "List");
    assert_eq!(list["apiVersion"], "v1");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 8);
    assert!(items.iter().all(|d| d["metadata"]["namespace"] == "bar"));
    assert_eq!(
        drydock_ok(kc, &["generate", "cluster", "foo", "-o", "yaml"]),
        drydock_ok(kc, &["generate", "cluster", "foo"])
    );
}

/// Commands that talk to no server do not take connection flags.
#[test]
fn server_free_commands_refuse_connection_flags() {
    let kc = Path::new("unused.kubeconfig");
    for args in [&["crds", "-n", "x"][..], &["up", "--kubeconfig", "k", "--help"], &["bench", "-o", "json"]] {
        let (ok, _, err) = drydock(kc, args);
        assert!(!ok && err.contains("unexpected argument"), "{args:?}: {err}");
    }
}
