//! KubeadmControlPlane end to end, with every drydock controller running (in-process, or in
//! a `drydock up` process for the restart): the sample manifest (3 control plane machines,
//! 3 workers) reaches 3 ready control plane replicas and Nodes; scaling 3 → 5 → 3 converges
//! with etcd membership matching the Machines; startup durations are honoured; zero
//! durations are fast; an idle control plane writes nothing; deleting the Cluster removes
//! everything; a converged fleet killed and restarted keeps its Machines and writes nothing.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{SAMPLE, eventually, free_port, process_client, quiet, spawn_drydock};
use drydock::instance::{Instance, Options};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use drydock_api::tenancy::LogicalClusterName;
use drydock_apiserver::Config;
use drydock_controllers::etcd::Membership;
use drydock_controllers::external::api_resource;
use drydock_provider_inmemory::machine::STARTED_ANNOTATION;
use drydock_provider_inmemory::timing::Plan;
use k8s_openapi::api::core::v1::{Node, Pod, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use parking_lot::Mutex;
use serde_json::{Value, json};

const NS: &str = "default";
const KCP: &str = "sample-control-plane";

/// The tests share the controllers' write counters; the idle check must not see the other
/// test's writes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start() -> (Instance, tempfile::TempDir) {
    common::logs();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut instance = Instance::start(Options {
        server: Config { data_dir: Some(dir.path().to_path_buf()), ..Default::default() },
        ..Default::default()
    })
    .await
    .expect("start drydock");
    instance.spawn_serve().expect("serve");
    (instance, dir)
}

/// Creates every object of a manifest, in order, in the root cluster.
async fn apply(client: &kube::Client, manifest: &str) {
    let docs: Vec<Value> = serde_saphyr::from_multiple(manifest).expect("manifest parses");
    for doc in docs.into_iter().filter(|d| d.is_object()) {
        let ar = api_resource(doc["apiVersion"].as_str().unwrap_or_default(), doc["kind"].as_str().unwrap_or_default());
        let obj: DynamicObject = serde_json::from_value(doc).expect("object");
        let ns = obj.namespace().unwrap_or_else(|| NS.to_string());
        Api::<DynamicObject>::namespaced_with(client.clone(), &ns, &ar)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap_or_else(|e| panic!("creating {} {}: {e}", ar.kind, obj.name_any()));
    }
}

/// Writes of drydock's controllers in this process, for the given controllers.
fn writes_of(controllers: &[&str]) -> u64 {
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    text.lines()
        .filter(|l| l.starts_with("drydock_controller_writes_total"))
        .filter(|l| controllers.iter().any(|c| l.contains(&format!("controller=\"{c}\""))))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// The control plane's converged state: `n` ready replicas, `n` Machines with Ready Nodes,
/// and an etcd cluster of exactly those Machines' Nodes.
struct Converged {
    machines: Vec<Machine>,
    membership: Membership,
}

async fn converged(mgmt: &kube::Client, workload: &kube::Client, n: usize) -> Option<Converged> {
    let kcp = Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS).get(KCP).await.ok()?;
    let s = kcp.status.clone()?;
    let want = Some(i32::try_from(n).ok()?);
    if s.replicas != want || s.ready_replicas != want || s.updated_replicas != want || s.initialized != Some(true) {
        return None;
    }
    let machines: Vec<Machine> = Api::<Machine>::namespaced(mgmt.clone(), NS)
        .list(&ListParams::default().labels("cluster.x-k8s.io/control-plane"))
        .await
        .ok()?
        .items;
    if machines.len() != n
        || machines.iter().any(|m| m.metadata.deletion_timestamp.is_some() || !m.is_condition_true("Ready"))
    {
        return None;
    }
    let nodes: Vec<Node> = Api::<Node>::all(workload.clone())
        .list(&ListParams::default().labels("node-role.kubernetes.io/control-plane"))
        .await
        .ok()?
        .items;
    let node_names: BTreeSet<String> = nodes.iter().map(|n| n.name_any()).collect();
    let machine_nodes: BTreeSet<String> =
        machines.iter().filter_map(|m| m.status.as_ref()?.node_ref.as_ref()?.name.clone()).collect();
    if machine_nodes.len() != n || node_names != machine_nodes {
        return None;
    }
    let pods = Api::<Pod>::namespaced(workload.clone(), "kube-system").list(&ListParams::default()).await.ok()?;
    let membership = Membership::from_pods(&pods.items);
    let members: BTreeSet<String> = membership.members.iter().map(|m| m.node.clone()).collect();
    if members != machine_nodes || membership.healthy() != n || membership.leader.is_none() {
        return None;
    }
    Some(Converged { machines, membership })
}

async fn scale(mgmt: &kube::Client, replicas: i32) {
    Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS)
        .patch(KCP, &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": replicas}})))
        .await
        .expect("scale the control plane");
}

/// Records, for every InMemoryMachine, when it was first seen ready (wall clock).
fn watch_ready(mgmt: kube::Client) -> (Arc<Mutex<HashMap<String, jiff::Timestamp>>>, tokio::task::JoinHandle<()>) {
    let seen = Arc::new(Mutex::new(HashMap::new()));
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let api: Api<InMemoryMachine> = Api::namespaced(mgmt, NS);
        loop {
            if let Ok(list) = api.list(&ListParams::default()).await {
                let now = jiff::Timestamp::now();
                let mut seen = record.lock();
                for m in list.items.iter().filter(|m| m.status.as_ref().and_then(|s| s.ready) == Some(true)) {
                    seen.entry(m.name_any()).or_insert(now);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (seen, task)
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_cluster_provisions_and_scales_its_control_plane() {
    let _serial = SERIAL.lock().await;
    let (instance, _dir) = start().await;
    let mgmt = instance.server.client(None);
    let workload = instance.server.client(Some(&LogicalClusterName::for_cluster("default", "sample")));
    let (first_ready, recorder) = watch_ready(mgmt.clone());
    let t0 = Instant::now();
    apply(&mgmt, SAMPLE).await;

    // 3 ready control plane replicas, their Nodes Ready, etcd made of exactly them.
    let three =
        eventually("3 ready control plane replicas", Duration::from_secs(120), || converged(&mgmt, &workload, 3)).await;
    let took = t0.elapsed();
    println!("sample: 3 control plane replicas ready in {took:?}");
    // Machines come one at a time, each taking at least 1s + 0.5s + 0.5s.
    assert!(took >= Duration::from_secs(6), "3 sequential control plane machines took only {took:?}");
    let cluster_ids: BTreeSet<&str> = three.membership.members.iter().map(|m| m.cluster_id.as_str()).collect();
    assert_eq!(cluster_ids.len(), 1, "one etcd cluster");

    // The kubeconfig Secret the control plane wrote reaches the workload cluster.
    let secret = Api::<Secret>::namespaced(mgmt.clone(), NS).get("sample-kubeconfig").await.expect("kubeconfig");
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    let text = String::from_utf8(secret.data.expect("data")["value"].0.clone()).expect("utf-8");
    assert!(text.contains(&format!("server: {}/clusters/default.sample", instance.url())), "{text}");

    // The control plane's status and the Cluster's view of it (the conditions follow the
    // last Machine's Ready within a reconcile).
    let healthy =
        ["Ready", "Available", "MachinesReady", "Resized", "ControlPlaneComponentsHealthy", "EtcdClusterHealthy"];
    let kcps = Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS);
    let kcp = eventually("control plane conditions True", Duration::from_secs(30), || async {
        let kcp = kcps.get(KCP).await.ok()?;
        healthy.iter().all(|c| kcp.is_condition_true(c)).then_some(kcp)
    })
    .await;
    let s = kcp.status.clone().expect("status");
    assert_eq!(s.ready, Some(true));
    assert_eq!(s.version.as_deref(), Some("v1.30.2"));
    assert_eq!(s.selector.as_deref(), Some("cluster.x-k8s.io/cluster-name=sample,cluster.x-k8s.io/control-plane"));
    eventually("Cluster sees the control plane ready", Duration::from_secs(30), || async {
        let c = Api::<Cluster>::namespaced(mgmt.clone(), NS).get("sample").await.ok()?;
        (c.status?.control_plane_ready == Some(true)).then_some(())
    })
    .await;

    // Workers join too: 3 control plane + 3 worker Nodes, all Ready.
    let nodes: Api<Node> = Api::all(workload.clone());
    eventually("6 Ready Nodes", Duration::from_secs(60), || async {
        let list = nodes.list(&ListParams::default()).await.ok()?;
        let ready = list
            .items
            .iter()
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .count();
        (ready == 6).then_some(())
    })
    .await;

    // Scale up to 5, then back to 3.
    let t1 = Instant::now();
    scale(&mgmt, 5).await;
    let five =
        eventually("5 ready control plane replicas", Duration::from_secs(120), || converged(&mgmt, &workload, 5)).await;
    println!("scale 3 -> 5 converged in {:?}", t1.elapsed());
    assert_eq!(five.membership.members.len(), 5);
    let t2 = Instant::now();
    scale(&mgmt, 3).await;
    let back = eventually("back to 3 replicas", Duration::from_secs(120), || converged(&mgmt, &workload, 3)).await;
    println!("scale 5 -> 3 converged in {:?}", t2.elapsed());
    // Scale down removes the oldest Machines first (no failure domains).
    let mut by_age = five.machines.clone();
    by_age.sort_by_key(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0));
    let newest: BTreeSet<String> = by_age[2..].iter().map(|m| m.name_any()).collect();
    let kept: BTreeSet<String> = back.machines.iter().map(|m| m.name_any()).collect();
    assert_eq!(kept, newest, "the two oldest Machines were removed");
    // `converged` checked that etcd is exactly the kept Machines' Nodes, with a leader among them.

    // Startup durations were honoured: no machine was ready before its start plus its plan.
    recorder.abort();
    let imms = Api::<InMemoryMachine>::namespaced(mgmt.clone(), NS).list(&ListParams::default()).await.expect("list");
    let seen = first_ready.lock().clone();
    let mut checked = 0;
    for m in &imms.items {
        let (Some(start), Some(ready_at)) = (m.annotations().get(STARTED_ANNOTATION), seen.get(&m.name_any())) else {
            continue;
        };
        let start: jiff::Timestamp = start.parse().expect("start");
        let cp = m.labels().contains_key("cluster.x-k8s.io/control-plane");
        let plan = Plan::new(&m.name_any(), m.spec.behaviour.as_ref(), cp);
        let d = plan.deadlines(start);
        let done = [Some(d.node), d.etcd, d.api_server].into_iter().flatten().max().expect("deadline");
        assert!(
            *ready_at >= done,
            "{} ready at {ready_at}, before its startup durations elapsed ({done})",
            m.name_any()
        );
        checked += 1;
    }
    assert!(checked >= 6, "checked {checked} machines");

    // Idle: the control plane and the provider write nothing.
    let mine = ["kubeadmcontrolplane", "inmemorymachine", "inmemorycluster"];
    let before = quiet("the last writes to land", Duration::from_secs(30), || async { writes_of(&mine) }).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(writes_of(&mine), before, "an idle control plane writes nothing");

    // Deleting the Cluster takes everything with it, the workload cluster included.
    let t3 = Instant::now();
    Api::<Cluster>::namespaced(mgmt.clone(), NS).delete("sample", &DeleteParams::default()).await.expect("delete");
    eventually("Cluster gone", Duration::from_secs(120), || async {
        Api::<Cluster>::namespaced(mgmt.clone(), NS).get_opt("sample").await.ok()?.is_none().then_some(())
    })
    .await;
    println!("cluster deleted in {:?}", t3.elapsed());
    assert!(Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS).get_opt(KCP).await.expect("get").is_none());
    assert!(
        Api::<Machine>::namespaced(mgmt.clone(), NS).list(&ListParams::default()).await.expect("list").items.is_empty()
    );
    let gvk = GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster");
    let lcs: Api<DynamicObject> =
        Api::all_with(mgmt.clone(), &ApiResource::from_gvk_with_plural(&gvk, "logicalclusters"));
    assert!(lcs.get_opt("default.sample").await.expect("get").is_none(), "workload cluster wiped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_durations_provision_three_replicas_fast() {
    let _serial = SERIAL.lock().await;
    let (instance, _dir) = start().await;
    let mgmt = instance.server.client(None);
    let workload = instance.server.client(Some(&LogicalClusterName::for_cluster("default", "sample")));
    let instant = SAMPLE
        .replace("startupDuration: \"1s\"", "startupDuration: \"0s\"")
        .replace("startupDuration: \"500ms\"", "startupDuration: \"0s\"");
    assert!(!instant.contains("500ms"));
    let before = write_counts();
    let t0 = Instant::now();
    apply(&mgmt, &instant).await;
    eventually("3 ready control plane replicas", Duration::from_secs(60), || converged(&mgmt, &workload, 3)).await;
    let took = t0.elapsed();
    println!("zero durations: 3 control plane replicas ready in {took:?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    eventually("the workers' Nodes", Duration::from_secs(60), || async {
        let n = Api::<Node>::all(workload.clone()).list(&ListParams::default()).await.ok()?;
        (n.items.len() == 6).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    print_writes(&before, 6.0);
}

/// Writes counted by a drydock process's controllers, by controller.
async fn process_writes(client: &kube::Client) -> BTreeMap<String, f64> {
    process_counter(client, "drydock_controller_writes_total").await
}

/// Reconciles finished so far by the process behind `client`, by controller.
async fn process_reconciles(client: &kube::Client) -> BTreeMap<String, f64> {
    process_counter(client, "controller_runtime_reconcile_total").await
}

/// A counter of the process behind `client`, summed by its `controller` label.
async fn process_counter(client: &kube::Client, metric: &str) -> BTreeMap<String, f64> {
    let req = http::Request::get("/metrics").body(Vec::new()).expect("request");
    let text = client.request_text(req).await.expect("metrics");
    let mut sums = BTreeMap::new();
    let samples =
        text.lines().filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with('{')).filter_map(|l| {
            let name = l.split("controller=\"").nth(1)?.split('"').next()?.to_string();
            Some((name, l.rsplit(' ').next()?.parse::<f64>().ok()?))
        });
    for (name, v) in samples {
        *sums.entry(name).or_insert(0.0) += v;
    }
    sums
}

/// Waits until the process's controllers have written nothing for 3 s.
async fn wait_quiet(client: &kube::Client) {
    let mut last = process_writes(client).await;
    let mut quiet_since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(60);
    while quiet_since.elapsed() < Duration::from_secs(3) {
        assert!(Instant::now() < deadline, "the controllers never went quiet: {last:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = process_writes(client).await;
        if now != last {
            last = now;
            quiet_since = Instant::now();
        }
    }
}

/// A converged fleet killed and restarted stays as it was: the same Machines (none
/// recreated or deleted), and no writes from the control plane or the provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarted_fleet_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut child = spawn_drydock(dir.path(), &format!("127.0.0.1:{port}"));
    let mgmt = process_client(dir.path()).await;
    let clusters = 12;
    for i in 0..clusters {
        let manifest = SAMPLE
            .replace("sample", &format!("f{i}"))
            .replace("startupDuration: \"1s\"", "startupDuration: \"0s\"")
            .replace("startupDuration: \"500ms\"", "startupDuration: \"0s\"");
        apply(&mgmt, &manifest).await;
    }
    let machines: Api<Machine> = Api::namespaced(mgmt.clone(), NS);
    let running = || async {
        let list = machines.list(&ListParams::default()).await.ok()?;
        let ready: BTreeMap<String, String> = list
            .items
            .iter()
            .filter(|m| m.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .map(|m| (m.name_any(), m.uid().unwrap_or_default()))
            .collect();
        (ready.len() == clusters * 6 && list.items.len() == clusters * 6).then_some(ready)
    };
    let before = eventually("the fleet running", Duration::from_secs(180), running).await;
    // Converged: every control plane Ready, and no controller writing any more.
    let kcps: Api<KubeadmControlPlane> = Api::namespaced(mgmt.clone(), NS);
    eventually("every control plane Ready", Duration::from_secs(60), || async {
        let list = kcps.list(&ListParams::default()).await.ok()?;
        list.items.iter().all(|k| k.is_condition_true("Ready")).then_some(())
    })
    .await;
    wait_quiet(&mgmt).await;
    child.kill().expect("kill");
    child.wait().expect("wait");

    let mut child = spawn_drydock(dir.path(), &format!("127.0.0.1:{port}"));
    let mgmt = process_client(dir.path()).await;
    let machines: Api<Machine> = Api::namespaced(mgmt.clone(), NS);
    // Every controller goes through every one of its objects once, then settles.
    let objects = [("kubeadmcontrolplane", clusters), ("inmemorycluster", clusters), ("inmemorymachine", clusters * 6)];
    eventually("every object reconciled after the restart", Duration::from_secs(120), || async {
        let done = process_reconciles(&mgmt).await;
        objects.iter().all(|(c, n)| done.get(*c).copied().unwrap_or(0.0) >= *n as f64).then_some(())
    })
    .await;
    wait_quiet(&mgmt).await;
    let after: BTreeMap<String, String> = machines
        .list(&ListParams::default())
        .await
        .expect("machines")
        .items
        .iter()
        .map(|m| (m.name_any(), m.uid().unwrap_or_default()))
        .collect();
    let writes = process_writes(&mgmt).await;
    println!("writes after the restart: {writes:?}");
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(after, before, "Machines were recreated or removed after the restart");
    for c in ["kubeadmcontrolplane", "inmemorymachine", "inmemorycluster"] {
        assert_eq!(writes.get(c).copied().unwrap_or(0.0), 0.0, "{c} wrote after the restart");
    }
}

/// API writes so far: by controller (`controller <name>`) and by verb and resource as the
/// API server counted them (`api <VERB> <resource>`, events and workload objects included).
fn write_counts() -> BTreeMap<String, f64> {
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    let _ = drydock_apiserver::metrics::encode(&mut text);
    let label = |l: &str, k: &str| -> String {
        l.split(&format!("{k}=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap_or_default().to_string()
    };
    let value = |l: &str| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let mut counts = BTreeMap::new();
    for l in text.lines() {
        if l.starts_with("drydock_controller_writes_total") {
            *counts.entry(format!("controller {}", label(l, "controller"))).or_default() += value(l);
        }
        let verb = label(l, "verb");
        if l.starts_with("apiserver_request_total{") && ["POST", "PUT", "PATCH", "DELETE"].contains(&verb.as_str()) {
            let sub = label(l, "subresource");
            let sub = if sub.is_empty() { sub } else { format!("/{sub}") };
            *counts.entry(format!("api {verb} {}{sub}", label(l, "resource"))).or_default() += value(l);
        }
    }
    counts
}

/// Prints the writes made since `before`, per machine.
fn print_writes(before: &BTreeMap<String, f64>, machines: f64) {
    let mut api_total = 0.0;
    for (k, v) in write_counts() {
        let d = v - before.get(&k).copied().unwrap_or(0.0);
        if d > 0.0 {
            println!("  {k:<45} {:>6.2} writes/machine", d / machines);
            if k.starts_with("api ") {
                api_total += d;
            }
        }
    }
    println!("  API writes in total: {:.1} per machine", api_total / machines);
}
