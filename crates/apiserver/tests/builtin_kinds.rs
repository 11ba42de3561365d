//! The built-in Kubernetes kinds through kubectl 1.27 and 1.33 in a workload logical
//! cluster: imperative creates, a multi-document add-on manifest, `get all` and wide
//! tables, scale, set image, 3-way re-apply, the three patch types, label/annotate,
//! cascading deletes and discovery; and Service cluster IP allocation.

use crate::common;

use std::time::Duration;

use common::kubectl::Kubectl;
use serde_json::Value;

/// Each version runs in its own logical cluster.
const VERSIONS: &[&str] = &["1.27", "1.33"];

const ADDONS: &str = r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: agent
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: agent
rules:
- apiGroups: [""]
  resources: ["nodes", "pods"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: agent
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: agent
subjects:
- kind: ServiceAccount
  name: agent
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: agent-config
  namespace: kube-system
data:
  level: info
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: kube-system
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      serviceAccountName: agent
      containers:
      - name: agent
        image: registry.k8s.io/agent:v1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: dns
  namespace: kube-system
spec:
  replicas: 2
  selector:
    matchLabels: {app: dns}
  template:
    metadata:
      labels: {app: dns}
    spec:
      containers:
      - name: dns
        image: registry.k8s.io/coredns/coredns:v1.11.3
        ports:
        - {containerPort: 53, protocol: UDP, name: dns}
        - {containerPort: 9153, name: metrics}
        env:
        - {name: A, value: "1"}
---
apiVersion: v1
kind: Service
metadata:
  name: dns
  namespace: kube-system
spec:
  selector: {app: dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: metrics, port: 9153}
"#;

/// kubectl 1.32+ sends protobuf for `kubectl create <generator>`; until the server
/// decodes protobuf, newer versions render the object locally and create it as JSON.
fn create(k: &Kubectl, version: &str, args: &[&str]) {
    let mut full = vec!["create"];
    full.extend(args);
    if version < "1.32" {
        k.run(&full);
        return;
    }
    full.extend(["--dry-run=client", "-o", "json"]);
    let rendered = k.run(&full);
    k.run_in(&["create", "-f", "-"], Some(&rendered));
}

fn header(table: &str) -> Vec<String> {
    table
        .lines()
        .next()
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn imperative(k: &Kubectl, v: &str) {
    create(k, v, &["deployment", "web", "--image=nginx:1.25", "--port=80", "--replicas=2"]);
    create(k, v, &["service", "clusterip", "web", "--tcp=80:8080"]);
    create(k, v, &["serviceaccount", "bot"]);
    create(k, v, &["role", "reader", "--verb=get,list", "--resource=pods"]);
    create(k, v, &["rolebinding", "reader", "--role=reader", "--serviceaccount=default:bot"]);
    create(k, v, &["job", "once", "--image=busybox:1.36"]);
    create(k, v, &["cronjob", "tick", "--image=busybox:1.36", "--schedule=*/5 * * * *"]);

    let d = k.json(&["get", "deploy", "web"]);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["terminationMessagePolicy"], "File");
    let svc = k.json(&["get", "svc", "web"]);
    assert!(svc["spec"]["clusterIP"].as_str().is_some_and(|ip| ip.starts_with("10.")), "{svc}");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    let job = k.json(&["get", "job", "once"]);
    let uid = job["metadata"]["uid"].clone();
    assert_eq!(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
    assert_eq!(job["spec"]["template"]["metadata"]["labels"]["job-name"], "once");
    assert_eq!(job["spec"]["backoffLimit"], 6);
    let cj = k.json(&["get", "cj", "tick"]);
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    let rb = k.run(&["get", "rolebinding", "reader", "-o", "wide"]);
    assert!(rb.contains("Role/reader") && rb.contains("default/bot"), "{rb}");
    let sa = k.run(&["get", "sa", "bot"]);
    assert_eq!(header(&sa), ["NAME", "SECRETS", "AGE"], "{sa}");
    let jobs = k.run(&["get", "jobs"]);
    assert_eq!(header(&jobs), ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], "{jobs}");
    assert!(jobs.contains("Running") && jobs.contains("0/1"), "{jobs}");
    let cjs = k.run(&["get", "cronjobs"]);
    assert_eq!(header(&cjs), ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"], "{cjs}");
}

fn tables(k: &Kubectl) {
    let all = k.run(&["get", "all", "-A"]);
    for name in ["deployment.apps/web", "service/web", "daemonset.apps/agent", "job.batch/once", "cronjob.batch/tick"] {
        assert!(all.contains(name), "`get all` lacks {name}:\n{all}");
    }
    let wide = k.run(&["get", "deploy", "web", "-o", "wide"]);
    assert_eq!(
        header(&wide),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
        "{wide}"
    );
    let row = wide.lines().nth(1).unwrap_or_default();
    assert!(row.contains("0/2") && row.contains("nginx:1.25") && row.contains("app=web"), "{wide}");
    let svc = k.run(&["get", "svc", "-n", "kube-system", "dns"]);
    assert_eq!(header(&svc), ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], "{svc}");
    assert!(svc.contains("53/UDP,9153/TCP") && svc.contains("<none>"), "{svc}");
    let resources = k.run(&["api-resources"]);
    for (name, short) in
        [("deployments", "deploy"), ("services", "svc"), ("cronjobs", "cj"), ("networkpolicies", "netpol")]
    {
        assert!(
            resources.lines().any(|l| l.split_whitespace().take(2).eq([name, short])),
            "{name} ({short}) missing:\n{resources}"
        );
    }
}

fn edits(k: &Kubectl) {
    k.run(&["scale", "deployment", "web", "--replicas=3"]);
    k.run(&["set", "image", "deployment/web", "nginx=nginx:1.27"]);
    let d = k.json(&["get", "deploy", "web"]);
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");

    // Strategic merge: a container merged by name keeps what the patch does not name.
    k.run(&[
        "patch",
        "deploy",
        "web",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"MODE","value":"x"}]}]}}}}"#,
    ]);
    k.run(&["patch", "deploy", "web", "--type", "merge", "-p", r#"{"metadata":{"labels":{"merged":"yes"}}}"#]);
    k.run(&[
        "patch",
        "deploy",
        "web",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/spec/minReadySeconds","value":5}]"#,
    ]);
    k.run(&["label", "deploy", "web", "tier=front"]);
    k.run(&["annotate", "deploy", "web", "note=hi"]);
    let d = k.json(&["get", "deploy", "web"]);
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "nginx:1.27");
    assert_eq!(c["env"][0]["value"], "x");
    assert_eq!(d["metadata"]["labels"]["merged"], "yes");
    assert_eq!(d["metadata"]["labels"]["tier"], "front");
    assert_eq!(d["metadata"]["annotations"]["note"], "hi");
    assert_eq!(d["spec"]["minReadySeconds"], 5);

    // Re-apply without the metrics port: client-side apply's 3-way patch drops it.
    let edited = ADDONS.replace("        - {containerPort: 9153, name: metrics}\n", "");
    k.run_in(&["apply", "-f", "-"], Some(&edited));
    let dns = k.json(&["get", "deploy", "-n", "kube-system", "dns"]);
    let ports = &dns["spec"]["template"]["spec"]["containers"][0]["ports"];
    assert_eq!(ports.as_array().map(Vec::len), Some(1), "{ports}");
    assert_eq!(ports[0]["containerPort"], 53);

    // A selector that does not match the template is refused.
    let bad = k
        .fails_in(&["apply", "-f", "-"], Some(&ADDONS.replace("matchLabels: {app: dns}", "matchLabels: {app: other}")));
    assert!(bad.contains("`selector` does not match template `labels`"), "{bad}");
}

fn deletes(k: &Kubectl) {
    for (cascade, kind, name) in
        [("background", "deploy", "web"), ("foreground", "job", "once"), ("orphan", "cronjob", "tick")]
    {
        k.run(&["delete", kind, name, &format!("--cascade={cascade}"), "--wait=true", "--timeout=20s"]);
        let gone = k.fails(&["get", kind, name]);
        assert!(gone.contains("NotFound") || gone.contains("not found"), "{gone}");
    }
}

fn scenario(k: &Kubectl, version: &str) {
    imperative(k, version);
    k.run_in(&["apply", "-f", "-"], Some(ADDONS));
    let ds = k.json(&["get", "ds", "-n", "kube-system", "agent"]);
    assert_eq!(ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], 1);
    let crb = k.json(&["get", "clusterrolebinding", "agent"]);
    assert_eq!(crb["subjects"][0]["apiGroup"], "");
    tables(k);
    edits(k);
    deletes(k);
}

async fn logical_cluster(s: &common::TestServer, name: &str) -> std::path::PathBuf {
    let root = Kubectl::new("1.33", s.kubeconfig(None));
    let manifest =
        format!("apiVersion: tenancy.drydock.dev/v1alpha1\nkind: LogicalCluster\nmetadata:\n  name: {name}\n");
    tokio::task::block_in_place(|| root.run_in(&["apply", "-f", "-"], Some(&manifest)));
    let config = s.kubeconfig(Some(name));
    let k = Kubectl::new("1.33", config.clone());
    common::eventually("the workload cluster's namespaces", Duration::from_secs(20), || {
        let ready = k.output(&["get", "ns", "kube-system"], None).status.success();
        async move { ready.then_some(()) }
    })
    .await;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_manages_builtin_kinds_in_a_workload_cluster() {
    let s = common::start().await;
    for v in VERSIONS {
        let config = logical_cluster(&s, &format!("w-{}", v.replace('.', "-"))).await;
        let k = Kubectl::new(v, config);
        tokio::task::block_in_place(|| scenario(&k, v));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_cluster_ips_are_unique_and_explicit_ones_checked() {
    let s = common::start().await;
    let k = Kubectl::new("1.33", s.kubeconfig(None));
    let svc = |name: &str, extra: &str| {
        format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  ports:\n  - port: 80\n{extra}")
    };
    tokio::task::block_in_place(|| {
        let mut ips = std::collections::HashSet::new();
        for i in 0..20 {
            k.run_in(&["create", "-f", "-"], Some(&svc(&format!("s{i}"), "")));
            let got: Value = k.json(&["get", "svc", &format!("s{i}")]);
            let ip = got["spec"]["clusterIP"].as_str().unwrap_or_default().to_string();
            assert_eq!(got["spec"]["clusterIPs"][0], ip.as_str());
            assert!(ip.starts_with("10.") && ip != "10.96.0.1", "{ip}");
            assert!(ips.insert(ip.clone()), "{ip} handed out twice");
        }
        let taken = ips.iter().next().cloned().unwrap_or_default();
        let err = k.fails_in(&["create", "-f", "-"], Some(&svc("dup", &format!("  clusterIP: {taken}\n"))));
        assert!(err.contains("provided IP is already allocated"), "{err}");
        let err = k.fails_in(&["create", "-f", "-"], Some(&svc("outside", "  clusterIP: 192.168.1.1\n")));
        assert!(err.contains("not in the valid range"), "{err}");
        k.run_in(&["create", "-f", "-"], Some(&svc("fixed", "  clusterIP: 10.100.0.7\n")));
        k.run_in(&["create", "-f", "-"], Some(&svc("headless", "  clusterIP: None\n")));
        let headless = k.json(&["get", "svc", "headless"]);
        assert_eq!(headless["spec"]["clusterIPs"][0], "None");
        k.run_in(&["create", "-f", "-"], Some(&svc("np", "  type: NodePort\n")));
        let np = k.json(&["get", "svc", "np"]);
        let port = np["spec"]["ports"][0]["nodePort"].as_i64().unwrap_or_default();
        assert!((30000..=32767).contains(&port), "{np}");
        let np2 = format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: np2\nspec:\n  type: NodePort\n  ports:\n  - port: 80\n    nodePort: {port}\n"
        );
        let err = k.fails_in(&["create", "-f", "-"], Some(&np2));
        assert!(err.contains("provided port is already allocated"), "{err}");
        // Re-applying keeps the allocated address.
        k.run_in(&["apply", "-f", "-"], Some(&svc("s0", "  selector:\n    app: x\n")));
        let again = k.json(&["get", "svc", "s0"]);
        assert!(ips.contains(again["spec"]["clusterIP"].as_str().unwrap_or_default()), "{again}");
    });
}
