//! kubectl 1.27, 1.30 and 1.33 against the server over TCP, on a custom resource with
//! status and scale subresources and on a ConfigMap, at the root and inside a logical
//! cluster. Uses the versioned kubectl binaries installed beside the real `kubectl`.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::kubectl::Kubectl;

const VERSIONS: &[&str] = &["1.27", "1.30", "1.33"];

const WIDGET: &str = "apiVersion: example.drydock.dev/v1
kind: Widget
metadata:
  name: w
  labels:
    app: demo
spec:
  replicas: 1
  color: red
";

const CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    app: demo
data:
  a: \"1\"
";

fn scenario(k: &Kubectl) {
    // create and apply
    k.run_in(&["apply", "-f", "-"], Some(WIDGET));
    k.run_in(&["create", "-f", "-"], Some(CONFIGMAP));
    let err = k.fails_in(&["create", "-f", "-"], Some(CONFIGMAP));
    assert!(err.contains("AlreadyExists") || err.contains("already exists"), "{err}");
    k.run_in(&["apply", "-f", "-"], Some(&WIDGET.replace("color: red", "color: green")));
    k.run_in(&["apply", "-f", "-"], Some(&CONFIGMAP.replace("a: \"1\"", "a: \"2\"\n  b: \"3\"")));

    let w = k.json(&["get", "widget", "w"]);
    assert_eq!(w["spec"]["color"], "green");
    assert!(w["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string());
    let cm = k.json(&["get", "configmap", "settings"]);
    assert_eq!(cm["data"]["a"], "2");
    assert_eq!(cm["data"]["b"], "3");
    let yaml = k.run(&["get", "cm", "settings", "-o", "yaml"]);
    assert!(yaml.contains("name: settings"), "{yaml}");

    // tables and selectors
    let table = k.run(&["get", "widgets"]);
    let header = table.lines().next().unwrap_or_default();
    for col in ["NAME", "REPLICAS", "COLOR"] {
        assert!(header.contains(col), "missing {col} in {header}");
    }
    // A CRD that declares its columns shows AGE only if it declares it.
    assert!(!header.contains("AGE"), "{header}");
    assert!(table.lines().nth(1).unwrap_or_default().starts_with("w "), "{table}");
    let names = k.run(&["get", "cm,widgets", "-l", "app=demo", "-o", "name"]);
    assert!(names.contains("configmap/settings") && names.contains("widget.example.drydock.dev/w"), "{names}");
    let none = k.run(&["get", "cm", "-l", "app notin (demo)", "-o", "name"]);
    assert!(!none.contains("settings"), "{none}");

    // patch, scale, label, annotate
    k.run(&["patch", "widget", "w", "--type", "merge", "-p", r#"{"spec":{"color":"blue"}}"#]);
    k.run(&["patch", "widget", "w", "--type", "json", "-p", r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#]);
    k.run(&["patch", "cm", "settings", "-p", r#"{"data":{"c":"4"}}"#]);
    k.run(&["scale", "widget", "w", "--replicas=5"]);
    k.run(&["label", "widget", "w", "tier=gold"]);
    k.run(&["annotate", "widget", "w", "note=hello"]);
    k.run(&["label", "cm", "settings", "tier=silver"]);
    let w = k.json(&["get", "widget", "w"]);
    assert_eq!(w["spec"]["color"], "blue");
    assert_eq!(w["spec"]["replicas"], 5);
    assert_eq!(w["metadata"]["labels"]["tier"], "gold");
    assert_eq!(w["metadata"]["annotations"]["note"], "hello");
    let cm = k.json(&["get", "cm", "settings"]);
    assert_eq!(cm["data"]["c"], "4");
    assert_eq!(cm["metadata"]["labels"]["tier"], "silver");

    // server-side strict validation (kubectl sends fieldValidation=Strict)
    let bad = WIDGET.replace("name: w", "name: w2").replace("color: red", "color: red\n  bogus: 1");
    let stderr = k.fails_in(&["create", "-f", "-"], Some(&bad));
    assert!(stderr.contains("unknown field \"spec.bogus\""), "{stderr}");

    // get -w sees a change
    let mut watch = k
        .cmd(&["get", "widgets", "-w", "--output-watch-events"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn watch");
    let stdout = watch.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(10)).expect("initial watch output");
    assert!(first.contains("EVENT") || first.contains("ADDED"), "{first}");
    std::thread::sleep(Duration::from_millis(300));
    k.run(&["label", "widget", "w", "seen=yes"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut modified = false;
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200))
            && line.starts_with("MODIFIED")
        {
            modified = true;
            break;
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(modified, "kubectl get -w did not show the MODIFIED event");

    // delete waits until the object is gone
    k.run(&["delete", "widget", "w", "--wait=true", "--timeout=20s"]);
    let gone = k.fails(&["get", "widget", "w"]);
    assert!(gone.contains("NotFound") || gone.contains("not found"), "{gone}");
    k.run(&["delete", "cm", "settings", "--wait=true"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_versions_against_root_and_logical_cluster() {
    let s = common::start().await;
    let root = s.kubeconfig(None);
    for v in VERSIONS {
        let k = Kubectl::new(v, root.clone());
        tokio::task::block_in_place(|| scenario(&k));
    }
    // A logical cluster: created in the root, then used through its own URL prefix.
    let k = Kubectl::new("1.33", root.clone());
    k.run_in(
        &["apply", "-f", "-"],
        Some("apiVersion: tenancy.drydock.dev/v1alpha1\nkind: LogicalCluster\nmetadata:\n  name: team-a\n"),
    );
    let inner = s.kubeconfig(Some("team-a"));
    // Custom resources are served only where their CRD lives: install the Widget's here.
    let k = Kubectl::new("1.33", inner.clone());
    k.run_in(&["apply", "-f", "-"], Some(&common::widget_crd()));
    k.run(&["wait", "--for=condition=established", "crd/widgets.example.drydock.dev", "--timeout=20s"]);
    for v in VERSIONS {
        let k = Kubectl::new(v, inner.clone());
        tokio::task::block_in_place(|| scenario(&k));
    }
    // Objects in the logical cluster are not visible from the root.
    let ki = Kubectl::new("1.33", inner.clone());
    ki.run_in(&["create", "-f", "-"], Some(&CONFIGMAP.replace("settings", "only-in-team-a")));
    let root_names = Kubectl::new("1.33", root).run(&["get", "cm", "-o", "name"]);
    assert!(!root_names.contains("only-in-team-a"), "{root_names}");
    let ns = ki.run(&["get", "namespaces", "-o", "name"]);
    assert!(ns.contains("namespace/default") && ns.contains("namespace/kube-system"), "{ns}");
}
