//! Every kubectl from 1.27 to 1.33 against built-in kinds, Cluster API kinds and
//! third-party CRDs: the imperative `create` subcommands (protobuf bodies from 1.32), apply
//! and diff, the output formats, explain, wait, scale, label/annotate/patch of each patch
//! type, the delete cascades, and discovery.

use crate::common;

use std::time::Duration;

use common::kubectl::Kubectl;
use serde_json::Value;

const VERSIONS: &[&str] = &["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"];

const OPERATOR_CRDS: &str = include_str!("data/operator-crds.yaml");

fn app_manifest(image: &str, ports: &[u16]) -> String {
    let ports: String = ports.iter().map(|p| format!("\n        - containerPort: {p}")).collect();
    format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
    app: app
spec:
  replicas: 1
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
      - name: main
        image: {image}
        ports:{ports}
"
    )
}

/// The imperative `create` subcommands; kubectl 1.32+ sends these bodies as protobuf.
fn create_subcommands(k: &Kubectl, ns: &str) {
    k.run(&["create", "namespace", ns]);
    k.run(&["create", "configmap", "cfg", "--from-literal=a=1", "-n", ns]);
    k.run(&["create", "secret", "generic", "creds", "--from-literal=password=s3cret", "-n", ns]);
    k.run(&["create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80", "-n", ns]);
    k.run(&["create", "service", "clusterip", "web", "--tcp=80:8080", "-n", ns]);
    k.run(&["create", "serviceaccount", "robot", "-n", ns]);
    k.run(&["create", "role", "reader", "--verb=get,list", "--resource=pods,configmaps", "-n", ns]);
    let sa = format!("{ns}:robot");
    k.run(&["create", "rolebinding", "robot-reads", "--role=reader", "--serviceaccount", &sa, "-n", ns]);
    k.run(&["create", "job", "once", "--image=busybox:1.36", "-n", ns, "--", "true"]);

    let cm = k.json(&["get", "configmap", "cfg", "-n", ns]);
    assert_eq!(cm["data"]["a"], "1");
    let secret = k.json(&["get", "secret", "creds", "-n", ns]);
    assert_eq!(secret["data"]["password"], "czNjcmV0", "base64 of the literal");
    assert_eq!(secret["type"], "Opaque");
    let d = k.json(&["get", "deployment", "web", "-n", ns]);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate", "defaulted: {d}");
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"], "TCP");
    let svc = k.json(&["get", "service", "web", "-n", ns]);
    let ip = svc["spec"]["clusterIP"].as_str().unwrap_or_default();
    assert!(ip.starts_with("10.") && ip.parse::<std::net::Ipv4Addr>().is_ok(), "clusterIP allocated: {svc}");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    let rb = k.json(&["get", "rolebinding", "robot-reads", "-n", ns]);
    assert_eq!(rb["subjects"][0]["name"], "robot");
    assert_eq!(rb["roleRef"]["name"], "reader");
    let job = k.json(&["get", "job", "once", "-n", ns]);
    assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["command"][0], "true");
    assert!(job["spec"]["selector"]["matchLabels"].is_object(), "job selector generated: {job}");
}

fn output_formats(k: &Kubectl, ns: &str) {
    let wide = k.run(&["get", "deploy", "web", "-o", "wide", "-n", ns]);
    let header = wide.lines().next().unwrap_or_default();
    for col in ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"] {
        assert!(header.contains(col), "missing {col}: {wide}");
    }
    assert!(wide.contains("nginx:1.27"), "{wide}");
    let svc = k.run(&["get", "svc", "web", "-n", ns]);
    for col in ["TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"] {
        assert!(svc.contains(col), "missing {col}: {svc}");
    }
    assert!(svc.contains("80/TCP"), "{svc}");
    let yaml = k.run(&["get", "deploy", "web", "-n", ns, "-o", "yaml"]);
    assert!(yaml.contains("kind: Deployment") && yaml.contains("image: nginx:1.27"), "{yaml}");
    let replicas = k.run(&["get", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}"]);
    assert_eq!(replicas.trim(), "2");
    let cols = k.run(&[
        "get",
        "deploy",
        "-n",
        ns,
        "-o",
        "custom-columns=NAME:.metadata.name,IMAGE:.spec.template.spec.containers[0].image",
    ]);
    assert!(cols.lines().any(|l| l.starts_with("web") && l.contains("nginx:1.27")), "{cols}");
    let all = k.run(&["get", "all", "-n", ns, "-o", "name"]);
    for want in ["deployment.apps/web", "service/web", "job.batch/once"] {
        assert!(all.contains(want), "get all misses {want}: {all}");
    }
}

/// apply, diff against it, and a re-apply that drops a port (three-way strategic merge).
fn apply_and_diff(k: &Kubectl, ns: &str) {
    k.run_in(&["apply", "-n", ns, "-f", "-"], Some(&app_manifest("nginx:1.27", &[80, 443])));
    let same = k.output(&["diff", "-n", ns, "-f", "-"], Some(&app_manifest("nginx:1.27", &[80, 443])));
    assert_eq!(same.status.code(), Some(0), "no difference: {}", String::from_utf8_lossy(&same.stdout));
    let changed = app_manifest("nginx:1.28", &[80]);
    let diff = k.output(&["diff", "-n", ns, "-f", "-"], Some(&changed));
    let text = String::from_utf8_lossy(&diff.stdout).to_string();
    assert_eq!(diff.status.code(), Some(1), "a difference: {text} {}", String::from_utf8_lossy(&diff.stderr));
    assert!(text.contains("nginx:1.28") && text.contains("nginx:1.27"), "{text}");
    k.run_in(&["apply", "-n", ns, "-f", "-"], Some(&changed));
    let d = k.json(&["get", "deploy", "app", "-n", ns]);
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "nginx:1.28");
    let ports: Vec<&Value> = c["ports"].as_array().map(|p| p.iter().collect()).unwrap_or_default();
    assert_eq!(ports.len(), 1, "the dropped port is removed: {c}");
    assert_eq!(ports[0]["containerPort"], 80);
}

fn scale_wait_label_patch(k: &Kubectl, ns: &str) {
    k.run(&["scale", "deployment", "web", "--replicas=3", "-n", ns]);
    k.run(&["wait", "--for=jsonpath={.spec.replicas}=3", "deployment/web", "-n", ns, "--timeout=20s"]);
    k.run(&["label", "deploy", "web", "tier=front", "-n", ns]);
    k.run(&["annotate", "deploy", "web", "owner=team-a", "-n", ns]);
    let strategic = r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}"#;
    k.run(&["patch", "deploy", "web", "-n", ns, "--type", "strategic", "-p", strategic]);
    k.run(&["patch", "deploy", "web", "-n", ns, "--type", "merge", "-p", r#"{"metadata":{"labels":{"extra":"x"}}}"#]);
    let json = r#"[{"op":"replace","path":"/spec/replicas","value":1}]"#;
    k.run(&["patch", "deploy", "web", "-n", ns, "--type", "json", "-p", json]);
    let d = k.json(&["get", "deploy", "web", "-n", ns]);
    assert_eq!(d["metadata"]["labels"]["tier"], "front");
    assert_eq!(d["metadata"]["labels"]["extra"], "x");
    assert_eq!(d["metadata"]["annotations"]["owner"], "team-a");
    assert_eq!(d["spec"]["replicas"], 1);
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "nginx:1.28", "merged by container name: {c}");
    assert_eq!(c["ports"][0]["containerPort"], 80, "the strategic patch kept the ports: {c}");
}

/// A ConfigMap owned by `owner` (a Deployment), for the delete cascades.
fn dependent(k: &Kubectl, ns: &str, owner: &str) -> String {
    let d = k.json(&["get", "deploy", owner, "-n", ns]);
    let uid = d["metadata"]["uid"].as_str().unwrap_or_default().to_string();
    let name = format!("{owner}-dep");
    let manifest = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  ownerReferences:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: {owner}\n    uid: {uid}\n"
    );
    k.run_in(&["create", "-n", ns, "-f", "-"], Some(&manifest));
    name
}

fn gone(k: &Kubectl, args: &[&str]) -> bool {
    let out = k.output(args, None);
    !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("NotFound")
}

fn delete_cascades(k: &Kubectl, ns: &str) {
    for (owner, cascade) in [("cascade-bg", "background"), ("cascade-fg", "foreground"), ("cascade-or", "orphan")] {
        k.run(&["create", "deployment", owner, "--image=nginx", "-n", ns]);
        let dep = dependent(k, ns, owner);
        k.run(&[
            "delete",
            "deployment",
            owner,
            "-n",
            ns,
            &format!("--cascade={cascade}"),
            "--wait=true",
            "--timeout=30s",
        ]);
        assert!(gone(k, &["get", "deploy", owner, "-n", ns]), "{owner} deleted");
        if cascade == "orphan" {
            let cm = k.json(&["get", "cm", &dep, "-n", ns]);
            assert!(cm["metadata"]["ownerReferences"].as_array().is_none_or(Vec::is_empty), "orphaned: {cm}");
        } else {
            k.run(&["wait", "--for=delete", &format!("configmap/{dep}"), "-n", ns, "--timeout=30s"]);
        }
    }
}

fn discovery(k: &Kubectl) {
    let resources = k.run(&["api-resources"]);
    for want in ["deployments", "deploy", "services", "svc", "serviceaccounts", "rolebindings", "cronjobs", "clusters"]
    {
        assert!(resources.split_whitespace().any(|w| w == want), "api-resources misses {want}:\n{resources}");
    }
    let versions = k.run(&["api-versions"]);
    for want in ["v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1", "cluster.x-k8s.io/v1beta1"] {
        assert!(versions.lines().any(|l| l == want), "api-versions misses {want}:\n{versions}");
    }
}

/// A built-in kind, a Cluster API kind and a CRD applied at runtime.
fn explain(k: &Kubectl) {
    let strategy = k.run(&["explain", "deployment.spec.strategy"]);
    assert!(strategy.contains("rollingUpdate"), "{strategy}");
    let cluster = k.run(&["explain", "clusters.spec"]);
    assert!(cluster.contains("controlPlaneEndpoint"), "{cluster}");
    let database = k.run(&["explain", "databases.spec.instances"]);
    assert!(database.contains("Number of instances"), "{database}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kubectl_on_built_in_and_cluster_api_kinds() {
    let s = common::start_with_capi().await;
    let kubeconfig = s.kubeconfig(None);
    tokio::task::block_in_place(|| install_operator_crds(&Kubectl::new("1.33", kubeconfig.clone())));
    for v in VERSIONS {
        let k = Kubectl::new(v, kubeconfig.clone());
        let ns = format!("kubectl-{}", v.replace('.', "-"));
        tokio::task::block_in_place(|| {
            create_subcommands(&k, &ns);
            output_formats(&k, &ns);
            apply_and_diff(&k, &ns);
            scale_wait_label_patch(&k, &ns);
            delete_cascades(&k, &ns);
            discovery(&k);
            explain(&k);
        });
    }
}

const DATABASE: &str = "apiVersion: db.example.com/v1
kind: Database
metadata:
  name: orders
spec:
  engine: postgres
  storage:
    size: 10Gi
    class: fast
  users:
  - name: app
  parameters:
    shared_buffers: 128MB
    tuning:
      work_mem: 4MB
";

fn database_with(extra: &str) -> String {
    format!("{DATABASE}{extra}")
}

/// Installs the operator CRDs and waits until they are served.
fn install_operator_crds(k: &Kubectl) {
    k.run_in(&["apply", "-f", "-"], Some(OPERATOR_CRDS));
    for crd in ["databases.db.example.com", "tenants.platform.example.org"] {
        k.run(&["wait", "--for=condition=Established", &format!("crd/{crd}"), "--timeout=20s"]);
    }
}

/// Defaults, pruning, strict and warn field validation.
fn crd_defaults_and_pruning(k: &Kubectl, ns: &str) {
    let unknown = database_with("  surprise: 1\n");
    let err = k.fails_in(&["create", "-n", ns, "-f", "-"], Some(&unknown));
    assert!(err.contains("unknown field \"spec.surprise\""), "strict names the field: {err}");
    let warn = k.output(&["create", "-n", ns, "--validate=warn", "-f", "-"], Some(&unknown));
    let stderr = String::from_utf8_lossy(&warn.stderr);
    assert!(warn.status.success(), "{stderr}");
    assert!(stderr.contains("unknown field \"spec.surprise\""), "warned: {stderr}");
    let db = k.json(&["get", "database", "orders", "-n", ns]);
    let spec = &db["spec"];
    assert!(spec.get("surprise").is_none(), "pruned: {db}");
    assert_eq!(spec["version"], "16", "defaulted: {db}");
    assert_eq!(spec["instances"], 1);
    assert_eq!(spec["users"][0]["role"], "reader");
    assert_eq!(spec["parameters"]["tuning"]["work_mem"], "4MB", "preserved: {db}");
}

/// Violations answer 422 with the field path and the rule's message.
fn crd_violations(k: &Kubectl, ns: &str) {
    let cases: [(String, &str, &str); 5] = [
        (
            DATABASE.replace("name: orders", "name: big") + "  instances: 12\n",
            "spec.instances",
            "less than or equal to 9",
        ),
        (
            DATABASE.replace("name: orders", "name: ora").replace("postgres", "oracle"),
            "spec.engine",
            "Unsupported value",
        ),
        (DATABASE.replace("name: orders", "name: huge").replace("10Gi", "lots"), "spec.storage.size", "should match"),
        (
            DATABASE
                .replace("name: orders", "name: twice")
                .replace("  - name: app\n", "  - name: app\n  - name: app\n"),
            "spec.users[1]",
            "Duplicate value",
        ),
        (
            DATABASE.replace("name: orders", "name: keep") + "  backup:\n    retentionDays: 60\n",
            "spec",
            "backups kept longer than 30 days need more than one instance",
        ),
    ];
    for (manifest, field, message) in cases {
        let err = k.fails_in(&["create", "-n", ns, "-f", "-"], Some(&manifest));
        assert!(err.contains("is invalid") && err.contains(field) && err.contains(message), "{field}: {err}");
    }
    // Transition rules: a downgrade and a changed immutable field.
    let err =
        k.fails(&["patch", "database", "orders", "-n", ns, "--type", "merge", "-p", r#"{"spec":{"version":"15"}}"#]);
    assert!(err.contains("the major version may not be downgraded"), "{err}");
    let err = k.fails(&[
        "patch",
        "database",
        "orders",
        "-n",
        ns,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"storage":{"class":"slow"}}}"#,
    ]);
    assert!(err.contains("storage class is immutable"), "{err}");
    k.run(&["patch", "database", "orders", "-n", ns, "--type", "merge", "-p", r#"{"spec":{"version":"17"}}"#]);
}

/// Printer columns, scale and status subresources, the deprecated version.
fn crd_subresources_and_versions(k: &Kubectl, ns: &str) {
    k.run(&["scale", "database", "orders", "-n", ns, "--replicas=3"]);
    let status = r#"{"status":{"readyInstances":3,"selector":"db=orders","phase":"Running"}}"#;
    k.run(&["patch", "database", "orders", "-n", ns, "--subresource=status", "--type", "merge", "-p", status]);
    let table = k.run(&["get", "databases", "-n", ns]);
    let header = table.lines().next().unwrap_or_default();
    for col in ["NAME", "ENGINE", "INSTANCES", "READY", "AGE"] {
        assert!(header.contains(col), "missing {col}: {table}");
    }
    assert!(!header.contains("STORAGE"), "priority 1 only with -o wide: {table}");
    let row = table.lines().nth(1).unwrap_or_default();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["orders", "postgres", "3", "3"], "{table}");
    assert!(k.run(&["get", "databases", "-n", ns, "-o", "wide"]).contains("10Gi"));
    let old = k.output(&["get", "databases.v1alpha1.db.example.com", "orders", "-n", ns, "-o", "json"], None);
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert!(old.status.success(), "{stderr}");
    assert!(
        stderr.contains("db.example.com/v1alpha1 Database is deprecated; use db.example.com/v1 Database"),
        "deprecation warning: {stderr}"
    );
    let old: Value = serde_json::from_slice(&old.stdout).expect("json");
    assert_eq!(old["apiVersion"], "db.example.com/v1alpha1");
    assert_eq!(old["spec"]["instances"], 3);
}

fn crd_selectable_fields(k: &Kubectl) {
    for (name, tier) in [("acme", "gold"), ("initech", "silver")] {
        let t = format!(
            "apiVersion: platform.example.org/v1\nkind: Tenant\nmetadata:\n  name: {name}\nspec:\n  tier: {tier}\n  owner: ops\n"
        );
        k.run_in(&["apply", "-f", "-"], Some(&t));
    }
    let gold = k.run(&["get", "tenants", "--field-selector", "spec.tier=gold", "-o", "name"]);
    assert_eq!(gold.trim(), "tenant.platform.example.org/acme");
    // Declared columns only: no AGE unless the CRD names it.
    let table = k.run(&["get", "tenants"]);
    let header: Vec<&str> = table.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "TIER", "OWNER"], "{table}");
    let crds = k.run(&["get", "crds"]);
    let header: Vec<&str> = crds.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "CREATED", "AT"], "{crds}");
}

fn crd_explain_and_delete(k: &Kubectl, ns: &str) {
    let explained = k.run(&["explain", "databases.spec.instances"]);
    assert!(explained.contains("Number of instances"), "{explained}");
    k.run(&["delete", "crd", "databases.db.example.com", "--wait=true", "--timeout=60s"]);
    let err = k.fails(&["get", "databases", "-n", ns]);
    // kubectl words it by whether its discovery cache still lists the resource.
    let gone = ["the server doesn't have a resource type", "the server could not find the requested resource"];
    assert!(gone.iter().any(|g| err.contains(g)), "{err}");
    install_operator_crds(k);
    let left = k.run(&["get", "databases", "-A", "-o", "name"]);
    assert!(left.trim().is_empty(), "a re-created CRD starts empty: {left}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_crds_are_served_like_kube_apiserver() {
    let s = common::start().await;
    let kubeconfig = s.kubeconfig(None);
    for v in ["1.27", "1.33"] {
        let k = Kubectl::new(v, kubeconfig.clone());
        let ns = format!("crd-{}", v.replace('.', "-"));
        tokio::task::block_in_place(|| {
            install_operator_crds(&k);
            k.run(&["create", "namespace", &ns]);
            crd_defaults_and_pruning(&k, &ns);
            crd_violations(&k, &ns);
            crd_subresources_and_versions(&k, &ns);
            crd_selectable_fields(&k);
            crd_explain_and_delete(&k, &ns);
        });
    }
    // The CRD's instances really are gone from the store, not just hidden.
    let client = s.client().await;
    let gvk = kube::core::GroupVersionKind::gvk("db.example.com", "v1", "Database");
    let (ar, _) = kube::discovery::pinned_kind(&client, &gvk).await.expect("served again");
    let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &ar);
    let list = tokio::time::timeout(Duration::from_secs(10), api.list(&Default::default())).await;
    assert!(list.expect("in time").expect("list").items.is_empty());
}
