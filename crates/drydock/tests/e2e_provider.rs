//! The in-memory provider on its own: InMemoryCluster and InMemoryMachine controllers run
//! against a real drydock API server, with the test standing in for the Cluster and
//! Machine controllers (owner references, `infrastructureReady`, bootstrap data,
//! `ControlPlaneInitialized`), so the provider's behaviour is checked in isolation.
//!
//! - simulated clusters and machines appear in the workload cluster (logical cluster), with
//!   startup durations honoured and etcd membership as kubeadm would build it;
//! - workers wait for the control plane to be initialized;
//! - an idle fleet makes no writes; deletion cleans the workload cluster;
//! - a drydock killed mid-provisioning resumes the schedule instead of starting over.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, free_port, process_client, process_config, quiet, spawn_drydock};
use drydock::instance::{Instance, Options};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_api::tenancy::LogicalClusterName;
use drydock_apiserver::Config;
use drydock_controllers::etcd::{CLUSTER_ID_ANNOTATION, LEADER_FROM_ANNOTATION, MEMBER_ID_ANNOTATION, Membership};
use drydock_controllers::framework::Clock;
use drydock_controllers::workload::{ENDPOINT_PATH_ANNOTATION, WorkloadClients};
use drydock_controllers::{Context, Settings};
use drydock_provider_inmemory::machine::STARTED_ANNOTATION;
use drydock_provider_inmemory::timing::Plan;
use drydock_provider_inmemory::{Host, ProviderContext};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

const NS: &str = "default";

/// The in-process tests share the controllers' metrics; the idle check must not see the
/// other test's writes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn logical_clusters(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster");
    Api::all_with(client.clone(), &ApiResource::from_gvk_with_plural(&gvk, "logicalclusters"))
}

fn owner(kind: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": kind, "name": name, "uid": uid}])
}

fn behaviour(vm: &str, node: &str, etcd: &str, api: &str) -> Value {
    let p = |d: &str| json!({"provisioning": {"startupDuration": d, "startupJitter": "0.2"}});
    json!({"vm": p(vm), "node": p(node), "etcd": p(etcd), "apiServer": p(api)})
}

/// Creates a Cluster and its InMemoryCluster, owned by it (as the Cluster controller would).
async fn create_cluster(mgmt: &kube::Client, name: &str) -> Cluster {
    let clusters: Api<Cluster> = Api::namespaced(mgmt.clone(), NS);
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                                        "kind": "InMemoryCluster", "name": name}},
    }))
    .expect("cluster");
    let cluster = clusters.create(&PostParams::default(), &cluster).await.expect("create cluster");
    let ic: InMemoryCluster = serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryCluster",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"cluster.x-k8s.io/cluster-name": name},
                     "ownerReferences": owner("Cluster", name, &cluster.uid().unwrap_or_default())},
        "spec": {},
    }))
    .expect("inmemorycluster");
    Api::<InMemoryCluster>::namespaced(mgmt.clone(), NS)
        .create(&PostParams::default(), &ic)
        .await
        .expect("create inmemorycluster");
    cluster
}

async fn patch_cluster_status(mgmt: &kube::Client, name: &str, status: Value) {
    Api::<Cluster>::namespaced(mgmt.clone(), NS)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&json!({"status": status})))
        .await
        .expect("patch cluster status");
}

/// Creates a Machine with bootstrap data and its InMemoryMachine owned by it.
async fn create_machine(mgmt: &kube::Client, cluster: &str, name: &str, control_plane: bool, behaviour: Value) {
    let mut labels = BTreeMap::from([("cluster.x-k8s.io/cluster-name", cluster)]);
    if control_plane {
        labels.insert("cluster.x-k8s.io/control-plane", "");
    }
    let machine: Machine = serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {"clusterName": cluster, "version": "v1.30.2",
                 "bootstrap": {"dataSecretName": format!("{name}-bootstrap")},
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                                       "kind": "InMemoryMachine", "name": name}},
    }))
    .expect("machine");
    let machine = Api::<Machine>::namespaced(mgmt.clone(), NS)
        .create(&PostParams::default(), &machine)
        .await
        .expect("create machine");
    let imm: InMemoryMachine = serde_json::from_value(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine",
        "metadata": {"name": name, "namespace": NS, "labels": labels,
                     "ownerReferences": owner("Machine", name, &machine.uid().unwrap_or_default())},
        "spec": {"behaviour": behaviour},
    }))
    .expect("inmemorymachine");
    Api::<InMemoryMachine>::namespaced(mgmt.clone(), NS)
        .create(&PostParams::default(), &imm)
        .await
        .expect("create inmemorymachine");
}

async fn ready_machine(api: &Api<InMemoryMachine>, name: &str) -> Option<InMemoryMachine> {
    let m = api.get_opt(name).await.ok()??;
    (m.status.as_ref()?.ready == Some(true)).then_some(m)
}

fn reason(m: &InMemoryMachine, type_: &str) -> Option<String> {
    m.get_condition(type_)?.reason.clone()
}

/// Total API writes made by drydock's controllers in this process.
fn controller_writes() -> u64 {
    let mut text = String::new();
    drydock_controllers::encode_metrics(&mut text);
    text.lines()
        .filter(|l| l.starts_with("drydock_controller_writes_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Runs only the provider's controllers in-process (the core controllers stay off, so the
/// test's stand-ins are the only other writers).
fn start_provider(instance: &Instance, clock: &Clock) {
    let mgmt = instance.server.client(None);
    let settings = Settings { clock: clock.clone(), ..Settings::default() };
    let ctx = Context::new(mgmt.clone(), WorkloadClients::new(mgmt.clone(), None), settings);
    let host =
        Host { client: mgmt, endpoint_host: instance.addr.ip().to_string(), endpoint_port: instance.addr.port() };
    let controllers = drydock_provider_inmemory::controllers(Arc::new(ProviderContext { ctx: ctx.clone(), host }));
    tokio::spawn(drydock_controllers::start(ctx, controllers));
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_simulates_clusters_and_machines() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut instance = Instance::start(Options {
        server: Config { data_dir: Some(dir.path().to_path_buf()), ..Default::default() },
        controllers: false,
        ..Default::default()
    })
    .await
    .expect("start drydock");
    instance.spawn_serve().expect("serve");
    let clock = Clock::paused();
    start_provider(&instance, &clock);
    let mgmt = instance.server.client(None);
    let wait = Duration::from_secs(30);

    // The cluster: a logical cluster on the host, endpoint pointing at it.
    create_cluster(&mgmt, "c1").await;
    let ics: Api<InMemoryCluster> = Api::namespaced(mgmt.clone(), NS);
    let ic = eventually("InMemoryCluster ready", wait, || async {
        let ic = ics.get("c1").await.ok()?;
        (ic.status.as_ref()?.ready == Some(true)).then_some(ic)
    })
    .await;
    let ep = ic.spec.control_plane_endpoint.clone().expect("endpoint");
    assert_eq!((ep.host.as_str(), ep.port), (instance.addr.ip().to_string().as_str(), i32::from(instance.addr.port())));
    assert_eq!(ic.annotations().get(ENDPOINT_PATH_ANNOTATION).map(String::as_str), Some("/clusters/default.c1"));
    assert!(ic.finalizers().iter().any(|f| f == "inmemorycluster.infrastructure.cluster.x-k8s.io"));
    assert!(logical_clusters(&mgmt).get_opt("default.c1").await.expect("get lc").is_some());
    let workload = instance.server.client(Some(&LogicalClusterName::for_cluster("default", "c1")));
    let namespaces: Api<Namespace> = Api::all(workload.clone());
    eventually("kube-system in the workload cluster", wait, || async {
        namespaces.get_opt("kube-system").await.ok()?.map(|_| ())
    })
    .await;

    // A control plane machine waits for the cluster infrastructure.
    let imms: Api<InMemoryMachine> = Api::namespaced(mgmt.clone(), NS);
    create_machine(&mgmt, "c1", "cp-0", true, behaviour("10m", "5m", "5m", "3m")).await;
    eventually("WaitingForClusterInfrastructure", wait, || async {
        let m = imms.get("cp-0").await.ok()?;
        (reason(&m, "VMProvisioned").as_deref() == Some("WaitingForClusterInfrastructure")).then_some(())
    })
    .await;
    let imm = imms.get("cp-0").await.expect("get cp-0");
    assert!(imm.finalizers().is_empty(), "nothing to clean up before provisioning starts");
    assert!(!imm.annotations().contains_key(STARTED_ANNOTATION));

    // Startup durations are honoured on the provider's clock, paused here and moved by the
    // test: VM 10m, then Node 5m, then etcd 5m and API server 3m, each plus up to 20%
    // jitter (deterministic per machine, so the test can compute the instants).
    let t0 = Instant::now();
    patch_cluster_status(&mgmt, "c1", json!({"infrastructureReady": true})).await;
    let imm = eventually("cp-0 to start", wait, || async {
        let m = imms.get("cp-0").await.ok()?;
        m.annotations().contains_key(STARTED_ANNOTATION).then_some(m)
    })
    .await;
    let started: jiff::Timestamp = imm.annotations()[STARTED_ANNOTATION].parse().expect("start annotation");
    assert_eq!(started, clock.now(), "the start is the provider's instant");
    let deadlines = Plan::new("cp-0", imm.spec.behaviour.as_ref(), true).deadlines(started);
    let cp_ready_at = deadlines.etcd.max(deadlines.api_server).expect("control plane deadlines");
    let nodes: Api<Node> = Api::all(workload.clone());
    let advance_to = |t: jiff::Timestamp| clock.advance(clock.until(t));
    let phase = |type_: &'static str| {
        let imms = imms.clone();
        async move { imms.get("cp-0").await.ok().and_then(|m| m.is_condition_true(type_).then_some(m)) }
    };

    // The start annotation and the conditions are two writes: wait for the second.
    advance_to(deadlines.vm - jiff::SignedDuration::from_secs(1));
    let waiting = eventually("cp-0 waiting for its VM", wait, || async {
        let m = imms.get("cp-0").await.ok()?;
        (reason(&m, "VMProvisioned").as_deref() == Some("WaitingForStartupTimeout")).then_some(m)
    })
    .await;
    assert!(!waiting.is_condition_true("VMProvisioned"), "a second before its instant the VM is not up");
    advance_to(deadlines.vm);
    let vm_up = eventually("the VM up at its instant", wait, || phase("VMProvisioned")).await;
    assert_eq!(
        vm_up.get_condition("VMProvisioned").expect("VM").last_transition_time.0.as_second(),
        deadlines.vm.as_second()
    );
    assert!(!vm_up.is_condition_true("NodeProvisioned"));
    assert!(nodes.get_opt("cp-0").await.expect("get").is_none(), "the Node registered with the VM");

    advance_to(deadlines.node);
    eventually("the Node at its instant", wait, || async { nodes.get_opt("cp-0").await.ok()?.map(|_| ()) }).await;
    let node_up = eventually("NodeProvisioned", wait, || phase("NodeProvisioned")).await;
    assert!(!node_up.is_condition_true("Ready"), "ready before etcd and the API server started");

    advance_to(cp_ready_at);
    let cp0 = eventually("cp-0 ready", wait, || ready_machine(&imms, "cp-0")).await;
    let took = t0.elapsed();
    println!("control plane machine with 10m+5m+5m simulated startup ready after {took:?} of real time");
    assert!(took < Duration::from_secs(10), "cp-0 took {took:?} of real time");
    for c in ["Ready", "VMProvisioned", "NodeProvisioned", "EtcdProvisioned", "APIServerProvisioned"] {
        assert!(cp0.is_condition_true(c), "{c}: {:?}", cp0.get_condition(c));
    }
    assert_eq!(cp0.spec.provider_id.as_deref(), Some("in-memory://cp-0"));
    let api_server_at = cp0.get_condition("APIServerProvisioned").unwrap().last_transition_time.0;
    assert_eq!(api_server_at.as_second(), deadlines.api_server.expect("API server").as_second());

    // What the workload cluster now holds.
    let node = nodes.get("cp-0").await.expect("node cp-0");
    assert_eq!(node.spec.as_ref().and_then(|s| s.provider_id.as_deref()), Some("in-memory://cp-0"));
    assert!(node.labels().contains_key("node-role.kubernetes.io/control-plane"));
    let status = node.status.clone().expect("node status");
    assert_eq!(status.node_info.expect("nodeInfo").kubelet_version, "v1.30.2");
    assert!(status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let pods: Api<Pod> = Api::namespaced(workload.clone(), "kube-system");
    for c in ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
        let pod = pods.get(&format!("{c}-cp-0")).await.expect("static pod");
        assert_eq!(pod.labels().get("component").map(String::as_str), Some(c));
        assert_eq!(pod.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    }
    let etcd0 = pods.get("etcd-cp-0").await.expect("etcd pod");
    let cluster_id = etcd0.annotations()[CLUSTER_ID_ANNOTATION].clone();
    assert!(etcd0.annotations().contains_key(LEADER_FROM_ANNOTATION), "the founding member leads");
    let cms: Api<ConfigMap> = Api::namespaced(workload.clone(), "kube-system");
    let kc = cms.get("kubeadm-config").await.expect("kubeadm-config uploaded");
    assert!(kc.data.unwrap_or_default().contains_key("ClusterConfiguration"));

    // A worker waits for the control plane to be initialized (zero durations: instant after).
    create_machine(&mgmt, "c1", "w-0", false, json!({})).await;
    eventually("WaitingControlPlaneInitialized", wait, || async {
        let m = imms.get("w-0").await.ok()?;
        (reason(&m, "VMProvisioned").as_deref() == Some("WaitingControlPlaneInitialized")).then_some(())
    })
    .await;
    let t1 = Instant::now();
    // v1beta1's `controlPlaneReady` is v1beta2's `initialization.controlPlaneInitialized`.
    patch_cluster_status(&mgmt, "c1", json!({"controlPlaneReady": true})).await;
    let w0 = eventually("w-0 ready", wait, || ready_machine(&imms, "w-0")).await;
    println!("worker with zero durations ready {:?} after the control plane was initialized", t1.elapsed());
    assert!(t1.elapsed() < Duration::from_secs(2));
    assert!(w0.get_condition("EtcdProvisioned").is_none(), "workers run no etcd");
    let wnode = nodes.get("w-0").await.expect("worker node");
    assert!(!wnode.labels().contains_key("node-role.kubernetes.io/control-plane"));
    assert!(pods.get_opt("etcd-w-0").await.expect("get").is_none());

    // A second control plane machine joins the existing etcd cluster as a follower.
    create_machine(&mgmt, "c1", "cp-1", true, json!({})).await;
    eventually("cp-1 ready", wait, || ready_machine(&imms, "cp-1")).await;
    let etcd1 = pods.get("etcd-cp-1").await.expect("etcd-cp-1");
    assert_eq!(etcd1.annotations()[CLUSTER_ID_ANNOTATION], cluster_id);
    assert!(!etcd1.annotations().contains_key(LEADER_FROM_ANNOTATION));
    assert_ne!(etcd1.annotations()[MEMBER_ID_ANNOTATION], etcd0.annotations()[MEMBER_ID_ANNOTATION]);
    let all = pods.list(&ListParams::default()).await.expect("list pods");
    let membership = Membership::from_pods(&all.items);
    assert_eq!(membership.members.len(), 2);
    assert_eq!(membership.leader.as_deref(), Some("cp-0"));

    // Idle: once the join's last writes have landed (they may trail its readiness), no
    // controller writes at all.
    let before = quiet("the controllers to settle after the join", wait, || async { controller_writes() }).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(controller_writes(), before, "an idle fleet writes nothing");

    // Deleting a machine removes its Node and static pods.
    imms.delete("cp-1", &DeleteParams::default()).await.expect("delete cp-1");
    eventually("cp-1 gone", wait, || async { imms.get_opt("cp-1").await.ok()?.is_none().then_some(()) }).await;
    assert!(nodes.get_opt("cp-1").await.expect("get").is_none());
    for c in ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
        assert!(pods.get_opt(&format!("{c}-cp-1")).await.expect("get").is_none(), "{c}-cp-1 left behind");
    }
    assert!(nodes.get_opt("cp-0").await.expect("get").is_some());

    // Deleting the cluster wipes its logical cluster.
    ics.delete("c1", &DeleteParams::default()).await.expect("delete inmemorycluster");
    eventually("InMemoryCluster gone", wait, || async { ics.get_opt("c1").await.ok()?.is_none().then_some(()) }).await;
    eventually("LogicalCluster gone", wait, || async {
        logical_clusters(&mgmt).get_opt("default.c1").await.ok()?.is_none().then_some(())
    })
    .await;
}

/// Many clusters and machines with zero durations: how fast the provider goes, and how many
/// writes it makes per machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_zero_durations_are_fast() {
    let _serial = SERIAL.lock().await;
    let mut instance =
        Instance::start(Options { controllers: false, ..Default::default() }).await.expect("start drydock");
    instance.spawn_serve().expect("serve");
    start_provider(&instance, &Clock::system());
    let mgmt = instance.server.client(None);
    let clusters = 20;
    let t0 = Instant::now();
    for i in 0..clusters {
        let name = format!("z{i}");
        create_cluster(&mgmt, &name).await;
        patch_cluster_status(&mgmt, &name, json!({"infrastructureReady": true, "controlPlaneReady": true})).await;
        create_machine(&mgmt, &name, &format!("{name}-cp"), true, json!({})).await;
        for w in 0..3 {
            create_machine(&mgmt, &name, &format!("{name}-w{w}"), false, json!({})).await;
        }
    }
    let imms: Api<InMemoryMachine> = Api::namespaced(mgmt.clone(), NS);
    eventually("all machines ready", Duration::from_secs(60), || async {
        let list = imms.list(&ListParams::default()).await.ok()?;
        let ready = list.items.iter().filter(|m| m.status.as_ref().and_then(|s| s.ready) == Some(true)).count();
        (ready == clusters * 4).then_some(())
    })
    .await;
    println!("{} machines in {clusters} clusters ready in {:?} with zero durations", clusters * 4, t0.elapsed());
    assert!(t0.elapsed() < Duration::from_secs(30));
    for i in 0..clusters {
        let nodes: Api<Node> =
            Api::all(instance.server.client(Some(&LogicalClusterName::for_cluster("default", &format!("z{i}")))));
        assert_eq!(nodes.list(&ListParams::default()).await.expect("nodes").items.len(), 4);
    }
}

/// SIGKILL while a machine is provisioning: after the restart the machine keeps its
/// original start and finishes on the original schedule, and nothing is created twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_resumes_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut child = spawn_drydock(dir.path(), &format!("127.0.0.1:{port}"));
    let mgmt = process_client(dir.path()).await;
    let wait = Duration::from_secs(30);
    create_cluster(&mgmt, "r1").await;
    patch_cluster_status(&mgmt, "r1", json!({"infrastructureReady": true})).await;
    let imms: Api<InMemoryMachine> = Api::namespaced(mgmt.clone(), NS);
    // VM 2s, Node 3s, etcd and API server 1s: about 6s, killed after the VM is up.
    create_machine(&mgmt, "r1", "cp-0", true, behaviour("2s", "3s", "1s", "1s")).await;
    let vm_up = eventually("VM provisioned", wait, || async {
        let m = imms.get("cp-0").await.ok()?;
        m.is_condition_true("VMProvisioned").then_some(m)
    })
    .await;
    let started = vm_up.annotations()[STARTED_ANNOTATION].clone();
    assert!(!vm_up.is_condition_true("NodeProvisioned"));
    child.kill().expect("kill");
    child.wait().expect("wait");
    let killed_at = jiff::Timestamp::now();

    let mut child = spawn_drydock(dir.path(), &format!("127.0.0.1:{port}"));
    let mgmt = process_client(dir.path()).await;
    let imms: Api<InMemoryMachine> = Api::namespaced(mgmt.clone(), NS);
    let ready = eventually("cp-0 ready after restart", wait, || ready_machine(&imms, "cp-0")).await;
    let done_at = jiff::Timestamp::now();
    assert_eq!(ready.annotations()[STARTED_ANNOTATION], started, "the schedule was not restarted");
    let start: jiff::Timestamp = started.parse().expect("start");
    let plan = Plan::new("cp-0", ready.spec.behaviour.as_ref(), true);
    let planned = plan.deadlines(start).api_server.max(plan.deadlines(start).etcd).expect("deadline");
    println!(
        "restarted machine ready {:?} after its original start (planned {:?}, killed at {:?})",
        done_at.duration_since(start),
        planned.duration_since(start),
        killed_at.duration_since(start)
    );
    assert!(done_at >= planned, "ready before its startup durations elapsed");
    // Starting over after the restart would need the full 6s from the restart.
    assert!(done_at < killed_at + jiff::SignedDuration::from_secs(6), "provisioning started over after the restart");
    // The administrator reaches every logical cluster.
    let mut config = process_config(dir.path()).await;
    config.cluster_url = format!("https://127.0.0.1:{port}/clusters/default.r1").parse().expect("url");
    let workload = kube::Client::try_from(config).expect("workload client");
    let nodes: Api<Node> = Api::all(workload.clone());
    assert_eq!(nodes.list(&ListParams::default()).await.expect("nodes").items.len(), 1);
    let pods: Api<Pod> = Api::namespaced(workload, "kube-system");
    assert_eq!(pods.list(&ListParams::default()).await.expect("pods").items.len(), 4);
    child.kill().expect("kill");
    child.wait().expect("wait");
}
