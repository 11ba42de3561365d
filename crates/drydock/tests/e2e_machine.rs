//! The Cluster, Machine and KubeadmConfig controllers end to end on an in-process drydock.
//!
//! The tests stand in for the infrastructure provider and the control plane where needed:
//! they create the workload cluster's LogicalCluster and kubeconfig, mark the
//! InMemoryCluster ready with its endpoint, and once a Machine has bootstrap data they
//! register its Node and mark its InMemoryMachine ready with the provider's conventions
//! (Node named after the Machine, providerID `in-memory://<name>`). Every such step is
//! idempotent, so the tests hold whether or not the in-memory provider runs too.

use crate::common;

use std::fmt::Debug;
use std::time::{Duration, Instant};

use drydock::instance::{Instance, Options};
use drydock_api::capi::conditions::{self, Condition};
use drydock_api::capi::core::{Cluster, Machine};
use drydock_api::capi::inmemory::{InMemoryCluster, InMemoryMachine};
use drydock_api::capi::kubeadm::KubeadmConfig;
use drydock_api::tenancy::{KubeconfigFor, LogicalClusterName};
use drydock_apiserver::Config;
use k8s_openapi::api::core::v1::{Node, Secret};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(90);

struct Env {
    instance: Instance,
    client: kube::Client,
    _dir: tempfile::TempDir,
}

/// Logs go to the test's output; `DRYDOCK_LOG` sets the filter, as for `drydock up`.
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DRYDOCK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
}

async fn start() -> Env {
    init_logs();
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        server: Config { data_dir: Some(dir.path().to_path_buf()), ..Default::default() },
        ..Default::default()
    };
    let mut instance = Instance::start(opts).await.expect("start drydock");
    instance.spawn_serve().expect("serve");
    let client = instance.server.client(None);
    Env { instance, client, _dir: dir }
}

impl Env {
    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Nodes of the workload cluster `cluster`, in-process.
    fn nodes(&self, cluster: &str) -> Api<Node> {
        Api::all(self.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster))))
    }

    /// The workload cluster as the provider and control plane would set it up: its
    /// LogicalCluster, and the kubeconfig Secret pointing at it.
    async fn workload_cluster(&self, cluster: &str) {
        let gvk = GroupVersionKind::gvk("tenancy.drydock.dev", "v1alpha1", "LogicalCluster");
        let ar = ApiResource::from_gvk_with_plural(&gvk, "logicalclusters");
        let lcs: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        let lc: DynamicObject = from(json!({
            "apiVersion": "tenancy.drydock.dev/v1alpha1", "kind": "LogicalCluster",
            "metadata": {"name": format!("{NS}.{cluster}")},
        }));
        create_idempotent(&lcs, &lc).await;
        let server = format!("{}{}", self.instance.url(), LogicalClusterName::for_cluster(NS, cluster).path());
        let kubeconfig = KubeconfigFor {
            server: &server,
            cluster,
            user: "admin",
            context: cluster,
            namespace: None,
            ..Default::default()
        }
        .to_yaml();
        let mut secret: Secret = from(json!({
            "metadata": {"name": format!("{cluster}-kubeconfig"), "labels": {"cluster.x-k8s.io/cluster-name": cluster}},
            "type": "cluster.x-k8s.io/secret",
        }));
        secret.data = Some([("value".to_string(), k8s_openapi::ByteString(kubeconfig.into_bytes()))].into());
        create_idempotent(&self.api::<Secret>(), &secret).await;
    }

    /// Marks the InMemoryCluster ready with the endpoint the provider gives it.
    async fn infrastructure_ready(&self, name: &str) {
        let api = self.api::<InMemoryCluster>();
        let spec = json!({
            "metadata": {"annotations": {
                drydock_controllers::workload::ENDPOINT_PATH_ANNOTATION: format!("/clusters/{NS}.{name}")}},
            "spec": {"controlPlaneEndpoint": {"host": self.instance.addr.ip().to_string(), "port": self.instance.addr.port()}},
        });
        api.patch(name, &PatchParams::default(), &Patch::Merge(&spec)).await.expect("endpoint");
        let status = json!({"status": {"ready": true}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.expect("ready");
    }

    /// What the provider does once a Machine has its bootstrap data: the Node registers,
    /// and the InMemoryMachine reports its providerID and readiness.
    async fn machine_comes_up(&self, cluster: &str, machine: &str, control_plane: bool) {
        let provider_id = format!("in-memory://{machine}");
        let mut labels = json!({"kubernetes.io/hostname": machine});
        if control_plane {
            labels["node-role.kubernetes.io/control-plane"] = json!("");
        }
        let node: Node = from(json!({
            "metadata": {"name": machine, "labels": labels},
            "spec": {"providerID": provider_id,
                     "taints": [{"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}]},
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "KubeletReady"},
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "DiskPressure", "status": "False"},
                    {"type": "PIDPressure", "status": "False"},
                ],
                "nodeInfo": {
                    "architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "containerd://1.7.20",
                    "kernelVersion": "6.1.0", "kubeProxyVersion": "v1.30.2", "kubeletVersion": "v1.30.2",
                    "machineID": "m", "operatingSystem": "linux", "osImage": "drydock", "systemUUID": "u",
                },
            },
        }));
        create_idempotent(&self.nodes(cluster), &node).await;
        let api = self.api::<InMemoryMachine>();
        let spec = json!({"spec": {"providerID": provider_id}});
        api.patch(machine, &PatchParams::default(), &Patch::Merge(&spec)).await.expect("providerID");
        let status = json!({"status": {"ready": true}});
        api.patch_status(machine, &PatchParams::default(), &Patch::Merge(&status)).await.expect("ready");
    }
}

fn from<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("object")
}

async fn create_idempotent<K>(api: &Api<K>, obj: &K)
where
    K: Clone + DeserializeOwned + serde::Serialize + Debug,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("create {obj:?}: {e}"),
    }
}

async fn create<K>(api: &Api<K>, v: Value)
where
    K: Clone + DeserializeOwned + serde::Serialize + Debug,
{
    let obj: K = from(v);
    api.create(&PostParams::default(), &obj).await.expect("create");
}

/// Polls `name` until `pred` holds; panics with the last state seen after the deadline.
async fn wait_for<K>(api: &Api<K>, name: &str, what: &str, pred: impl Fn(&K) -> bool) -> K
where
    K: Clone + DeserializeOwned + Debug,
{
    let deadline = Instant::now() + WAIT;
    loop {
        let got = api.get_opt(name).await.expect("get");
        if let Some(o) = &got
            && pred(o)
        {
            return o.clone();
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}; last seen: {got:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_gone<K>(api: &Api<K>, name: &str, what: &str)
where
    K: Clone + DeserializeOwned + Debug,
{
    let deadline = Instant::now() + WAIT;
    loop {
        let got = api.get_opt(name).await.expect("get");
        if got.is_none() {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what} to go; last seen: {got:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn condition<'a>(conds: Option<&'a Vec<Condition>>, type_: &str) -> Option<&'a Condition> {
    conds.and_then(|c| conditions::get(c, type_))
}

fn is_true(conds: Option<&Vec<Condition>>, type_: &str) -> bool {
    condition(conds, type_).is_some_and(Condition::is_true)
}

fn machine_conditions(m: &Machine) -> Option<&Vec<Condition>> {
    m.status.as_ref().and_then(|s| s.conditions.as_ref())
}

fn phase(m: &Machine) -> Option<&str> {
    m.status.as_ref().and_then(|s| s.phase.as_deref())
}

fn cluster_json(name: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}, "services": {"cidrBlocks": ["10.128.0.0/12"]}},
            "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryCluster", "name": name},
        },
    })
}

/// A standalone Machine with its KubeadmConfig and InMemoryMachine, all named `name`.
async fn machine(env: &Env, cluster: &str, name: &str, control_plane: bool, config_spec: Value) {
    create::<KubeadmConfig>(&env.api(), json!({"metadata": {"name": name}, "spec": config_spec})).await;
    create::<InMemoryMachine>(&env.api(), json!({"metadata": {"name": name}, "spec": {}})).await;
    let mut labels = json!({});
    if control_plane {
        labels["cluster.x-k8s.io/control-plane"] = json!("");
    } else {
        labels["node-role.kubernetes.io/worker"] = json!("");
    }
    create::<Machine>(
        &env.api(),
        json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "clusterName": cluster,
                "version": "v1.30.2",
                "bootstrap": {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig", "name": name}},
                "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine", "name": name},
            },
        }),
    )
    .await;
}

fn bootstrap_value(s: &Secret) -> (String, String) {
    let data = s.data.as_ref().expect("secret data");
    let text = |k: &str| String::from_utf8(data.get(k).expect(k).0.clone()).expect("utf-8");
    (text("format"), text("value"))
}

fn controller_of(meta: &kube::api::ObjectMeta) -> Option<(String, String)> {
    drydock_api::capi::owner::get_controller(meta).map(|o| (o.kind.clone(), o.name.clone()))
}

/// Cluster, control plane Machine and worker Machine go from nothing to Running: bootstrap
/// data (init for the control plane, join for the worker once the control plane is
/// initialized), adoption, nodeRef, node labels, conditions and phases; then an idle fleet
/// writes nothing; then deleting the worker removes its infrastructure, config and Node.
#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_machines_run_and_delete() {
    let env = start().await;
    let clusters = env.api::<Cluster>();
    let machines = env.api::<Machine>();
    let configs = env.api::<KubeadmConfig>();
    let secrets = env.api::<Secret>();
    let infra_machines = env.api::<InMemoryMachine>();
    env.workload_cluster("c1").await;
    create::<InMemoryCluster>(&env.api(), json!({"metadata": {"name": "c1"}, "spec": {}})).await;
    create::<Cluster>(&clusters, cluster_json("c1")).await;

    // The Cluster adopts its infrastructure and waits for it.
    wait_for(&clusters, "c1", "Cluster finalizer and phase", |c| {
        c.finalizers().iter().any(|f| f == "cluster.cluster.x-k8s.io")
            && matches!(c.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Provisioning" | "Provisioned"))
    })
    .await;
    let ic = wait_for(&env.api::<InMemoryCluster>(), "c1", "InMemoryCluster adopted", |o| {
        controller_of(&o.metadata).is_some()
    })
    .await;
    assert_eq!(controller_of(&ic.metadata), Some(("Cluster".into(), "c1".into())));
    assert_eq!(ic.labels()["cluster.x-k8s.io/cluster-name"], "c1");

    // A worker first: with no control plane it can only wait.
    machine(&env, "c1", "c1-md-0", false, json!({"joinConfiguration": {"nodeRegistration": {}}})).await;
    env.infrastructure_ready("c1").await;
    let c = wait_for(&clusters, "c1", "Cluster Provisioned", |c| {
        c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Provisioned")
    })
    .await;
    let status = c.status.as_ref().expect("status");
    assert_eq!(status.infrastructure_ready, Some(true));
    assert!(is_true(status.conditions.as_ref(), "InfrastructureReady"));
    assert!(is_true(status.conditions.as_ref(), "Ready"));
    assert_eq!(status.observed_generation, c.metadata.generation);
    let endpoint = c.spec.control_plane_endpoint.as_ref().expect("endpoint copied");
    assert_eq!(endpoint.port, i32::from(env.instance.addr.port()));
    assert_eq!(c.annotations()[drydock_controllers::workload::ENDPOINT_PATH_ANNOTATION], "/clusters/default.c1");
    let waiting = wait_for(&configs, "c1-md-0", "worker config waiting for the control plane", |k| {
        condition(k.status.as_ref().and_then(|s| s.conditions.as_ref()), "DataSecretAvailable")
            .is_some_and(|c| c.reason.as_deref() == Some("WaitingForControlPlaneAvailable"))
    })
    .await;
    assert_ne!(waiting.status.as_ref().and_then(|s| s.ready), Some(true));
    assert!(secrets.get_opt("c1-md-0").await.expect("get").is_none());
    let c = clusters.get("c1").await.expect("cluster");
    assert!(!is_true(c.status.as_ref().and_then(|s| s.conditions.as_ref()), "ControlPlaneInitialized"));

    // The control plane Machine gets init data.
    machine(
        &env,
        "c1",
        "c1-cp-0",
        true,
        json!({
            "clusterConfiguration": {"apiServer": {"certSANs": ["localhost"]}},
            "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": "nodefs.available<0%"}}},
            "preKubeadmCommands": ["echo before"],
            "files": [{"path": "/etc/motd", "content": "hello\n"}],
        }),
    )
    .await;
    let cp =
        wait_for(&machines, "c1-cp-0", "control plane bootstrap data", |m| m.spec.bootstrap.data_secret_name.is_some())
            .await;
    assert_eq!(cp.spec.bootstrap.data_secret_name.as_deref(), Some("c1-cp-0"));
    let (format, value) = bootstrap_value(&secrets.get("c1-cp-0").await.expect("bootstrap secret"));
    assert_eq!(format, "cloud-config");
    assert!(value.starts_with("#cloud-config\n"), "{value}");
    for want in [
        "kubeadm init --config /run/kubeadm/kubeadm.yaml",
        "kind: ClusterConfiguration",
        "kind: InitConfiguration",
        &format!("controlPlaneEndpoint: \"{}:{}\"", endpoint.host, endpoint.port),
        "podSubnet: \"192.168.0.0/16\"",
        "path: /etc/motd",
        "\"echo before\"",
    ] {
        assert!(value.contains(want), "missing {want:?} in\n{value}");
    }
    let secret = secrets.get("c1-cp-0").await.expect("secret");
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    assert_eq!(controller_of(&secret.metadata), Some(("KubeadmConfig".into(), "c1-cp-0".into())));
    let cfg = configs.get("c1-cp-0").await.expect("config");
    let cfg_status = cfg.status.as_ref().expect("config status");
    assert_eq!((cfg_status.ready, cfg_status.data_secret_name.as_deref()), (Some(true), Some("c1-cp-0")));
    assert!(is_true(cfg_status.conditions.as_ref(), "DataSecretAvailable"));
    assert!(is_true(cfg_status.conditions.as_ref(), "Ready"));
    assert_eq!(controller_of(&cfg.metadata), Some(("Machine".into(), "c1-cp-0".into())));
    // Provisioning until the infrastructure is up (later phases if a provider is quicker).
    wait_for(&machines, "c1-cp-0", "Provisioning", |m| {
        matches!(phase(m), Some("Provisioning" | "Provisioned" | "Running"))
    })
    .await;

    // Its infrastructure comes up; the Machine finds its Node and runs.
    env.machine_comes_up("c1", "c1-cp-0", true).await;
    let cp = wait_for(&machines, "c1-cp-0", "control plane Running", |m| phase(m) == Some("Running")).await;
    let s = cp.status.as_ref().expect("status");
    assert_eq!(s.node_ref.as_ref().and_then(|r| r.name.as_deref()), Some("c1-cp-0"));
    assert_eq!(s.node_info.as_ref().map(|i| i.kubelet_version.as_str()), Some("v1.30.2"));
    assert_eq!((s.bootstrap_ready, s.infrastructure_ready), (Some(true), Some(true)));
    for t in ["BootstrapReady", "InfrastructureReady", "NodeHealthy", "Ready"] {
        assert!(is_true(s.conditions.as_ref(), t), "{t} not true: {:#?}", s.conditions);
    }
    assert_eq!(s.observed_generation, cp.metadata.generation);
    assert!(s.last_updated.is_some());
    assert_eq!(cp.spec.provider_id.as_deref(), Some("in-memory://c1-cp-0"));
    assert!(cp.finalizers().iter().any(|f| f == "machine.cluster.x-k8s.io"));
    assert_eq!(cp.labels()["cluster.x-k8s.io/cluster-name"], "c1");
    let owner = cp.owner_references().iter().find(|r| r.kind == "Cluster").expect("Cluster owner");
    assert_eq!((owner.name.as_str(), owner.controller), ("c1", None));
    let im = infra_machines.get("c1-cp-0").await.expect("infra machine");
    assert_eq!(controller_of(&im.metadata), Some(("Machine".into(), "c1-cp-0".into())));
    assert_eq!(im.labels()["cluster.x-k8s.io/cluster-name"], "c1");

    // The Node carries the Machine's annotations and lost the uninitialized taint.
    let node = wait_for(&env.nodes("c1"), "c1-cp-0", "node annotations", |n| {
        n.annotations().get("cluster.x-k8s.io/machine").map(String::as_str) == Some("c1-cp-0")
    })
    .await;
    assert_eq!(node.annotations()["cluster.x-k8s.io/cluster-name"], "c1");
    assert_eq!(node.annotations()["cluster.x-k8s.io/cluster-namespace"], NS);
    let taints = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
    assert!(taints.iter().all(|t| t.key != "node.cluster.x-k8s.io/uninitialized"), "{taints:?}");

    // The first control plane Node initializes the cluster; the worker then gets join data.
    let c = wait_for(&clusters, "c1", "ControlPlaneInitialized", |c| {
        is_true(c.status.as_ref().and_then(|s| s.conditions.as_ref()), "ControlPlaneInitialized")
    })
    .await;
    let initialized_at = condition(c.status.as_ref().and_then(|s| s.conditions.as_ref()), "ControlPlaneInitialized")
        .map(|c| c.last_transition_time.0)
        .expect("transition time");
    wait_for(&machines, "c1-md-0", "worker bootstrap data", |m| m.spec.bootstrap.data_secret_name.is_some()).await;
    let worker_secret = secrets.get("c1-md-0").await.expect("worker secret");
    let (_, value) = bootstrap_value(&worker_secret);
    assert!(value.contains("kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"), "{value}");
    assert!(value.contains("kind: JoinConfiguration"));
    assert!(!value.contains("controlPlane:"), "a worker joins without a controlPlane section");
    let created = worker_secret.metadata.creation_timestamp.as_ref().expect("created").0;
    assert!(created >= initialized_at, "join data was written before the control plane was initialized");

    env.machine_comes_up("c1", "c1-md-0", false).await;
    wait_for(&machines, "c1-md-0", "worker Running", |m| {
        phase(m) == Some("Running") && is_true(machine_conditions(m), "NodeHealthy")
    })
    .await;
    let node = wait_for(&env.nodes("c1"), "c1-md-0", "worker node label", |n| {
        n.labels().contains_key("node-role.kubernetes.io/worker")
    })
    .await;
    assert_eq!(node.annotations()["cluster.x-k8s.io/labels-from-machine"], "node-role.kubernetes.io/worker");

    // Idle: nothing the controllers own is written again.
    let versions = || async {
        let mut v = Vec::new();
        v.push(clusters.get("c1").await.expect("c").resource_version());
        for name in ["c1-cp-0", "c1-md-0"] {
            v.push(machines.get(name).await.expect("m").resource_version());
            v.push(configs.get(name).await.expect("k").resource_version());
            v.push(infra_machines.get(name).await.expect("i").resource_version());
            v.push(env.nodes("c1").get(name).await.expect("n").resource_version());
        }
        v
    };
    let before = common::quiet("the last writes to land", WAIT, versions).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(versions().await, before, "an idle cluster was written to");

    // Deleting the worker deletes its infrastructure machine, config and Node, then the Machine.
    machines.delete("c1-md-0", &DeleteParams::default()).await.expect("delete worker");
    wait_gone(&machines, "c1-md-0", "worker Machine").await;
    assert!(infra_machines.get_opt("c1-md-0").await.expect("get").is_none());
    assert!(configs.get_opt("c1-md-0").await.expect("get").is_none());
    assert!(env.nodes("c1").get_opt("c1-md-0").await.expect("get").is_none());
    wait_gone(&secrets, "c1-md-0", "worker bootstrap secret (owned by its config)").await;
    // The control plane Machine and its Node are untouched.
    assert_eq!(phase(&machines.get("c1-cp-0").await.expect("cp")), Some("Running"));
    assert!(env.nodes("c1").get_opt("c1-cp-0").await.expect("get").is_some());
}

/// Deleting a Cluster deletes its Machines (with their infrastructure and configs), then the
/// infrastructure cluster, then the kubeconfig, and finally the Cluster itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_deletion_cascades_in_order() {
    let env = start().await;
    let clusters = env.api::<Cluster>();
    let machines = env.api::<Machine>();
    env.workload_cluster("c2").await;
    create::<InMemoryCluster>(&env.api(), json!({"metadata": {"name": "c2"}, "spec": {}})).await;
    create::<Cluster>(&clusters, cluster_json("c2")).await;
    env.infrastructure_ready("c2").await;
    machine(&env, "c2", "c2-cp-0", true, json!({"initConfiguration": {}})).await;
    wait_for(&machines, "c2-cp-0", "bootstrap data", |m| m.spec.bootstrap.data_secret_name.is_some()).await;
    env.machine_comes_up("c2", "c2-cp-0", true).await;
    wait_for(&machines, "c2-cp-0", "Running", |m| phase(m) == Some("Running")).await;

    clusters.delete("c2", &DeleteParams::default()).await.expect("delete cluster");
    // Order: while the Machine exists, the infrastructure cluster is not touched.
    let infra_clusters = env.api::<InMemoryCluster>();
    let deadline = Instant::now() + WAIT;
    while machines.get_opt("c2-cp-0").await.expect("get").is_some() {
        let ic = infra_clusters.get("c2").await.expect("infrastructure cluster still there");
        assert!(ic.metadata.deletion_timestamp.is_none(), "infrastructure deleted before the Machines");
        assert!(clusters.get_opt("c2").await.expect("get").is_some(), "Cluster gone before its Machines");
        assert!(Instant::now() < deadline, "control plane Machine not deleted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(env.api::<InMemoryMachine>().get_opt("c2-cp-0").await.expect("get").is_none());
    assert!(env.api::<KubeadmConfig>().get_opt("c2-cp-0").await.expect("get").is_none());
    wait_gone(&clusters, "c2", "Cluster").await;
    // The phase change and the end were reported as events on the Cluster (events are sent
    // in the background: the last may arrive just after the Cluster is gone).
    let events: Api<k8s_openapi::api::events::v1::Event> = env.api();
    common::eventually("Provisioned, Deleting and Deleted events on the Cluster", Duration::from_secs(30), || async {
        let reasons: Vec<String> = events
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("c2"))
            .filter_map(|e| e.reason)
            .collect();
        ["Provisioned", "Deleting", "Deleted"].iter().all(|want| reasons.iter().any(|r| r == want)).then_some(())
    })
    .await;
    assert!(infra_clusters.get_opt("c2").await.expect("get").is_none());
    assert!(env.api::<Secret>().get_opt("c2-kubeconfig").await.expect("get").is_none());
}

/// A Cluster without an infrastructure cluster (its endpoint set by the user) is ready at
/// once, and a KubeadmConfig with `format: ignition` gets Ignition v3 data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignition_bootstrap_without_infrastructure_cluster() {
    let env = start().await;
    let clusters = env.api::<Cluster>();
    create::<Cluster>(
        &clusters,
        json!({"metadata": {"name": "c3"}, "spec": {"controlPlaneEndpoint": {"host": "10.1.0.1", "port": 6443}}}),
    )
    .await;
    let c = wait_for(&clusters, "c3", "Provisioned without infrastructure", |c| {
        c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Provisioned")
    })
    .await;
    assert_eq!(c.status.as_ref().and_then(|s| s.infrastructure_ready), Some(true));

    machine(
        &env,
        "c3",
        "c3-cp-0",
        true,
        json!({
            "format": "ignition",
            "initConfiguration": {},
            "users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}],
            "ignition": {"containerLinuxConfig": {"additionalConfig": "{\"systemd\": {\"units\": [{\"name\": \"extra.service\", \"enabled\": true}]}}"}},
        }),
    )
    .await;
    wait_for(&env.api::<Machine>(), "c3-cp-0", "bootstrap data", |m| m.spec.bootstrap.data_secret_name.is_some()).await;
    let (format, value) = bootstrap_value(&env.api::<Secret>().get("c3-cp-0").await.expect("secret"));
    assert_eq!(format, "ignition");
    let ign: Value = serde_json::from_str(&value).expect("ignition JSON");
    assert_eq!(ign["ignition"]["version"], "3.3.0");
    let files = ign["storage"]["files"].as_array().expect("files");
    assert!(files.iter().any(|f| f["path"] == "/run/kubeadm/kubeadm.yaml"), "{files:#?}");
    let units = ign["systemd"]["units"].as_array().expect("units");
    assert!(units.iter().any(|u| u["name"] == "kubeadm.service"));
    assert!(units.iter().any(|u| u["name"] == "extra.service"), "additionalConfig merged");
    assert_eq!(ign["passwd"]["users"][0]["name"], "core");
}
