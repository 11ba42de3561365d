//! `kubectl apply --server-side` from every kubectl 1.27 to 1.33 against one server, each
//! version in its own namespace and thread: create, update, removal of a dropped field, a
//! second manager's conflict and `--force-conflicts`, `--field-manager`,
//! `--dry-run=server`, and the migration from client-side apply.

use crate::common;

use common::kubectl::Kubectl;
use serde_json::{Value, json};

const VERSIONS: &[&str] = &["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"];

/// A ConfigMap manifest with `data` as (key, value) pairs.
fn config_map(name: &str, data: &[(&str, &str)]) -> String {
    let data: String = data.iter().map(|(k, v)| format!("\n  {k}: \"{v}\"")).collect();
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:{data}\n")
}

/// The object with its managedFields (hidden by kubectl's `-o json` unless asked for).
fn get(k: &Kubectl, ns: &str, name: &str) -> Value {
    k.json(&["get", "configmap", name, "-n", ns, "--show-managed-fields"])
}

/// (manager, operation) → fieldsV1 of every entry.
fn managers(obj: &Value) -> Vec<(String, String, Value)> {
    let mut out: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |f: &str| e[f].as_str().unwrap_or_default().to_string();
            (s("manager"), s("operation"), e["fieldsV1"].clone())
        })
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

fn owns(manager: &str, operation: &str, fields: Value) -> (String, String, Value) {
    (manager.to_string(), operation.to_string(), fields)
}

fn data_keys(keys: &[&str]) -> Value {
    let keys: serde_json::Map<String, Value> = keys.iter().map(|k| (format!("f:{k}"), json!({}))).collect();
    json!({"f:data": keys})
}

fn create_update_remove(k: &Kubectl, ns: &str) {
    let out =
        k.run_in(&["apply", "--server-side", "-n", ns, "-f", "-"], Some(&config_map("cfg", &[("a", "1"), ("b", "2")])));
    assert!(out.contains("configmap/cfg serverside-applied"), "{out}");
    let cm = get(k, ns, "cfg");
    assert_eq!(cm["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(managers(&cm), [owns("kubectl", "Apply", data_keys(&["a", "b"]))]);

    k.run_in(&["apply", "--server-side", "-n", ns, "-f", "-"], Some(&config_map("cfg", &[("a", "10"), ("b", "2")])));
    assert_eq!(get(k, ns, "cfg")["data"], json!({"a": "10", "b": "2"}));

    // Dropped from the file and owned by nobody else: removed.
    k.run_in(&["apply", "--server-side", "-n", ns, "-f", "-"], Some(&config_map("cfg", &[("a", "10")])));
    let cm = get(k, ns, "cfg");
    assert_eq!(cm["data"], json!({"a": "10"}));
    assert_eq!(managers(&cm), [owns("kubectl", "Apply", data_keys(&["a"]))]);
}

fn conflict_and_force(k: &Kubectl, ns: &str) {
    let theirs = config_map("cfg", &[("a", "20"), ("c", "3")]);
    let err = k.fails_in(&["apply", "--server-side", "--field-manager=other", "-n", ns, "-f", "-"], Some(&theirs));
    assert!(err.contains("conflict with \"kubectl\"") && err.contains(".data.a"), "names the manager and field: {err}");
    assert_eq!(get(k, ns, "cfg")["data"], json!({"a": "10"}), "a refused apply changes nothing");

    let args = ["apply", "--server-side", "--force-conflicts", "--field-manager=other", "-n", ns, "-f", "-"];
    k.run_in(&args, Some(&theirs));
    let cm = get(k, ns, "cfg");
    assert_eq!(cm["data"], json!({"a": "20", "c": "3"}));
    assert_eq!(managers(&cm), [owns("other", "Apply", data_keys(&["a", "c"]))], "kubectl lost its only field");
}

fn dry_run(k: &Kubectl, ns: &str) {
    let args = ["apply", "--server-side", "--dry-run=server", "-n", ns, "-f", "-"];
    let out = k.run_in(&args, Some(&config_map("dry", &[("x", "1")])));
    assert!(out.contains("configmap/dry serverside-applied (server dry run)"), "{out}");
    let err = k.fails(&["get", "configmap", "dry", "-n", ns]);
    assert!(err.contains("NotFound"), "nothing stored: {err}");
    let args = ["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-n", ns, "-f", "-"];
    k.run_in(&args, Some(&config_map("cfg", &[("a", "99")])));
    assert_eq!(get(k, ns, "cfg")["data"], json!({"a": "20", "c": "3"}), "nothing changed");
}

/// Client-side apply first, then server-side with the same file: no conflict, and a field
/// later dropped from the file is removed.
fn migration_from_client_side(k: &Kubectl, ns: &str) {
    let full = config_map("mig", &[("x", "1"), ("y", "2")]);
    k.run_in(&["apply", "-n", ns, "-f", "-"], Some(&full));
    let cm = get(k, ns, "mig");
    assert!(
        managers(&cm).iter().any(|(m, o, _)| m == "kubectl-client-side-apply" && o == "Update"),
        "client-side apply is tracked as an Update: {cm}"
    );
    let out = k.run_in(&["apply", "--server-side", "-n", ns, "-f", "-"], Some(&full));
    assert!(out.contains("configmap/mig serverside-applied"), "{out}");
    let cm = get(k, ns, "mig");
    assert!(managers(&cm).iter().any(|(m, o, _)| m == "kubectl" && o == "Apply"), "{cm}");

    k.run_in(&["apply", "--server-side", "-n", ns, "-f", "-"], Some(&config_map("mig", &[("x", "1")])));
    let cm = get(k, ns, "mig");
    assert_eq!(cm["data"], json!({"x": "1"}), "the dropped field is removed after the upgrade: {cm}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kubectl_applies_server_side() {
    let s = common::start().await;
    let kubeconfig = s.kubeconfig(None);
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            for v in VERSIONS {
                let k = Kubectl::new(v, kubeconfig.clone());
                let ns = format!("ssa-{}", v.replace('.', "-"));
                scope.spawn(move || {
                    k.run(&["create", "namespace", &ns]);
                    create_update_remove(&k, &ns);
                    conflict_and_force(&k, &ns);
                    dry_run(&k, &ns);
                    migration_from_client_side(&k, &ns);
                });
            }
        });
    });
}
