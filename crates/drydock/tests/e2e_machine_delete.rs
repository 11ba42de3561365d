//! Deleting Machines end to end on an in-process drydock with the in-memory provider:
//!
//! - pre-drain and pre-terminate hooks hold the deletion until their owners remove them;
//!   the drain cordons the Node and evicts its pods, except mirror pods, DaemonSet pods and
//!   pods labelled `cluster.x-k8s.io/drain: skip`; Machine node labels are propagated to the
//!   Node and taken back when removed from the Machine;
//! - a Machine excluded from draining keeps its pods;
//! - a pod that does not go holds the drain until nodeDrainTimeout;
//! - a Node held by a finalizer holds the Machine until nodeDeletionTimeout;
//! - MachineDrainRules and the `wait-completed` label: skipped pods stay, pods are evicted
//!   in groups of increasing order, and pods to wait for are not evicted but waited for;
//! - a deleted MachineDeployment and its MachineSet are held by their finalizers until
//!   their Machines are gone;
//! - the deletion waits for the Node's volumes to detach, but for those of skipped pods.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Env, KUBEADM, eventually, kubectl_ok};
use drydock_api::capi::conditions::{Condition, HasConditions};
use drydock_api::capi::core::{Machine, MachineDeployment, MachineDrainRule, MachineSet};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::tenancy::LogicalClusterName;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const NS: &str = "default";
const MINUTE: Duration = Duration::from_secs(60);
/// Namespace of the test's pods in the workload cluster.
const APPS: &str = "apps";
const PRE_DRAIN: &str = "pre-drain.delete.hook.machine.cluster.x-k8s.io/test";
const PRE_TERMINATE: &str = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/test";

/// Drain and node deletion timeouts of the workers' template.
const SHORT_TIMEOUTS: &str = "      nodeDrainTimeout: 3s\n      nodeDeletionTimeout: 3s\n";

/// One control plane machine and `workers` workers whose template sets `timeouts`.
fn manifest(name: &str, workers: u32, timeouts: &str) -> String {
    format!(
        r#"{preamble}---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryMachineTemplate
metadata: {{name: {name}, namespace: {NS}}}
spec: {{template: {{spec: {{}}}}}}
---
{control_plane}---
{workers}"#,
        preamble = common::cluster_preamble(name, NS),
        control_plane = common::control_plane(name, NS, (1, "v1.30.2"), name, KUBEADM, ""),
        workers = common::workers(name, NS, workers, name, "", timeouts),
    )
}

struct Fleet {
    env: Env,
    client: kube::Client,
    name: String,
}

impl Fleet {
    async fn start(name: &str, workers: u32) -> Self {
        Self::start_with(name, workers, SHORT_TIMEOUTS).await
    }

    async fn start_with(name: &str, workers: u32, timeouts: &str) -> Self {
        let env = Env::start(true).await;
        let client = env.client();
        kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&manifest(name, workers, timeouts)));
        let f = Self { env, client, name: name.to_string() };
        let ns: Namespace = obj(json!({"metadata": {"name": APPS}}));
        eventually("the workload cluster", MINUTE, || async {
            match Api::<Namespace>::all(f.workload()).create(&PostParams::default(), &ns).await {
                Ok(_) => Some(()),
                Err(kube::Error::Api(s)) if s.code == 409 => Some(()),
                Err(_) => None,
            }
        })
        .await;
        f
    }

    fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), NS)
    }

    fn workload(&self) -> kube::Client {
        self.env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, &self.name)))
    }

    fn nodes(&self) -> Api<Node> {
        Api::all(self.workload())
    }

    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.workload(), APPS)
    }

    /// The workers once all are Running, by name.
    async fn running_workers(&self, n: usize) -> BTreeMap<String, Machine> {
        let lp = ListParams::default().labels(&format!("cluster.x-k8s.io/deployment-name={}-workers", self.name));
        eventually(&format!("{n} workers Running"), 2 * MINUTE, || async {
            let list = self.api::<Machine>().list(&lp).await.ok()?;
            let running = list.items.iter().all(|m| {
                m.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    && m.status.as_ref().and_then(|s| s.node_ref.as_ref()).is_some()
            });
            (list.items.len() == n && running).then(|| list.items.into_iter().map(|m| (m.name_any(), m)).collect())
        })
        .await
    }

    async fn machine(&self, name: &str) -> Option<Machine> {
        self.api::<Machine>().get_opt(name).await.expect("get machine")
    }

    /// Waits until the Machine satisfies `pred`.
    async fn machine_until(&self, name: &str, what: &str, pred: impl Fn(&Machine) -> bool) -> Machine {
        eventually(what, MINUTE, || async { self.machine(name).await.filter(|m| pred(m)) }).await
    }

    async fn gone(&self, name: &str, what: &str) {
        eventually(what, MINUTE, || async { self.machine(name).await.is_none().then_some(()) }).await;
    }

    async fn annotate(&self, machine: &str, annotations: Value) {
        let patch = json!({"metadata": {"annotations": annotations}});
        self.api::<Machine>().patch(machine, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("annotate");
    }

    async fn pod(&self, name: &str, node: &str, meta: Value) -> Pod {
        let mut metadata = json!({"name": name});
        if let (Some(m), Some(extra)) = (metadata.as_object_mut(), meta.as_object()) {
            m.extend(extra.clone());
        }
        let pod: Pod = obj(json!({
            "metadata": metadata,
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.example/app:1"}]},
        }));
        self.pods().create(&PostParams::default(), &pod).await.expect("create pod")
    }

    async fn pod_names(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.pods().list(&ListParams::default()).await.expect("pods").items.iter().map(|p| p.name_any()).collect();
        names.sort();
        names
    }
}

fn obj<K: serde::de::DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).expect("object")
}

fn node_of(m: &Machine) -> String {
    m.status.as_ref().and_then(|s| s.node_ref.as_ref()).and_then(|r| r.name.clone()).expect("nodeRef")
}

fn has_condition(m: &Machine, type_: &str, pred: impl Fn(&Condition) -> bool) -> bool {
    m.get_condition(type_).is_some_and(pred)
}

fn reason_is(reason: &'static str) -> impl Fn(&Condition) -> bool {
    move |c| c.reason.as_deref() == Some(reason)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_hold_deletion_and_drain_evicts_pods() {
    let f = Fleet::start("hooks", 2).await;
    let workers = f.running_workers(2).await;
    let mut names = workers.keys();
    let (w, excluded) = (names.next().expect("worker").clone(), names.next().expect("worker").clone());
    let node = node_of(&workers[&w]);

    // Node labels follow the Machine both ways.
    let label = "node-role.kubernetes.io/special";
    let set = |v: Value| json!({"metadata": {"labels": {label: v}}});
    f.api::<Machine>().patch(&w, &PatchParams::default(), &Patch::Merge(&set(json!("")))).await.expect("label");
    eventually("the label on the Node", MINUTE, || async {
        f.nodes().get(&node).await.ok().filter(|n| n.labels().contains_key(label))
    })
    .await;
    f.api::<Machine>().patch(&w, &PatchParams::default(), &Patch::Merge(&set(Value::Null))).await.expect("unlabel");
    let n = eventually("the label to leave the Node", MINUTE, || async {
        f.nodes().get(&node).await.ok().filter(|n| !n.labels().contains_key(label))
    })
    .await;
    assert_eq!(n.annotations().get("cluster.x-k8s.io/labels-from-machine").map(String::as_str), Some(""));
    assert!(n.labels().contains_key("kubernetes.io/hostname"), "labels not set by the Machine stay");

    // Pods on the Node: one to evict, and three a drain leaves alone. A ConfigMap stands in
    // for the DaemonSet (the simulated workload API serves no apps/v1; garbage collection
    // only follows the owner's uid).
    let owner: ConfigMap = Api::namespaced(f.workload(), APPS)
        .create(&PostParams::default(), &obj(json!({"metadata": {"name": "agent"}})))
        .await
        .expect("owner");
    let ds_ref = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                         "uid": owner.metadata.uid, "controller": true}]);
    f.pod("app", &node, json!({})).await;
    f.pod("agent-x", &node, json!({"ownerReferences": ds_ref})).await;
    f.pod("static", &node, json!({"annotations": {"kubernetes.io/config.mirror": "h"}})).await;
    f.pod("pinned", &node, json!({"labels": {"cluster.x-k8s.io/drain": "skip"}})).await;
    let other_node = node_of(&workers[&excluded]);
    f.pod("elsewhere", &other_node, json!({})).await;

    f.annotate(&w, json!({PRE_DRAIN: "test", PRE_TERMINATE: "test"})).await;
    f.api::<Machine>().delete(&w, &DeleteParams::default()).await.expect("delete");
    f.machine_until(&w, "the pre-drain hook to hold", |m| {
        has_condition(m, "PreDrainDeleteHookSucceeded", reason_is("WaitingExternalHook"))
    })
    .await;
    let n = f.nodes().get(&node).await.expect("node");
    assert_ne!(n.spec.as_ref().and_then(|s| s.unschedulable), Some(true), "cordoned before the hook went");
    assert_eq!(f.pod_names().await, ["agent-x", "app", "elsewhere", "pinned", "static"]);

    // The pre-drain hook goes: the Node is drained; the pre-terminate hook holds the rest.
    f.annotate(&w, json!({PRE_DRAIN: null})).await;
    let m = f
        .machine_until(&w, "the pre-terminate hook to hold", |m| {
            has_condition(m, "PreTerminateDeleteHookSucceeded", reason_is("WaitingExternalHook"))
        })
        .await;
    assert!(has_condition(&m, "DrainingSucceeded", Condition::is_true), "{:?}", m.status);
    assert!(has_condition(&m, "PreDrainDeleteHookSucceeded", Condition::is_true));
    assert!(
        m.status.as_ref().and_then(|s| s.deletion.as_ref()).and_then(|d| d.node_drain_start_time.as_ref()).is_some()
    );
    let n = f.nodes().get(&node).await.expect("node still there");
    assert_eq!(n.spec.as_ref().and_then(|s| s.unschedulable), Some(true), "cordoned");
    assert_eq!(f.pod_names().await, ["agent-x", "elsewhere", "pinned", "static"]);
    let infra = m.spec.infrastructure_ref.name.clone().expect("infra");
    let im = f.api::<InMemoryMachine>().get(&infra).await.expect("infrastructure kept");
    assert!(im.metadata.deletion_timestamp.is_none(), "infrastructure deleted before the pre-terminate hook went");

    f.annotate(&w, json!({PRE_TERMINATE: null})).await;
    f.gone(&w, "the Machine").await;
    assert!(f.api::<InMemoryMachine>().get_opt(&infra).await.expect("get").is_none());
    assert!(f.nodes().get_opt(&node).await.expect("get").is_none(), "Node deleted");
    let events = f.api::<k8s_openapi::api::events::v1::Event>().list(&ListParams::default()).await.expect("events");
    assert!(
        events.items.iter().any(|e| e.reason.as_deref() == Some("SuccessfulDrainNode")
            && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(w.as_str())),
        "no SuccessfulDrainNode event"
    );

    // Excluded from draining: its pods stay (only the Node goes).
    f.annotate(&excluded, json!({"machine.cluster.x-k8s.io/exclude-node-draining": ""})).await;
    f.api::<Machine>().delete(&excluded, &DeleteParams::default()).await.expect("delete");
    f.gone(&excluded, "the excluded Machine").await;
    assert!(f.pod_names().await.contains(&"elsewhere".to_string()), "an excluded Node was drained");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_and_node_deletion_timeouts() {
    let f = Fleet::start("timeouts", 2).await;
    let workers = f.running_workers(2).await;
    let mut names = workers.keys();
    let (stuck_pod, stuck_node) = (names.next().expect("worker").clone(), names.next().expect("worker").clone());

    // A pod that does not go (a finalizer holds it) holds the drain until nodeDrainTimeout.
    let node = node_of(&workers[&stuck_pod]);
    f.pod("sticky", &node, json!({"finalizers": ["example.com/hold"]})).await;
    f.api::<Machine>().delete(&stuck_pod, &DeleteParams::default()).await.expect("delete");
    let m = f
        .machine_until(&stuck_pod, "the drain to wait for the pod", |m| {
            has_condition(m, "DrainingSucceeded", |c| {
                c.is_false() && c.message.as_deref().is_some_and(|msg| msg.contains("apps/sticky"))
            })
        })
        .await;
    let started = m.status.as_ref().and_then(|s| s.deletion.as_ref()).and_then(|d| d.node_drain_start_time.clone());
    let started = started.expect("drain start time").0;
    f.gone(&stuck_pod, "the Machine after its drain timed out").await;
    let waited = jiff::Timestamp::now().duration_since(started);
    assert!(waited.as_secs() >= 2, "gave up on the drain after {waited:?}");
    let p = f.pods().get("sticky").await.expect("the pod is still terminating");
    assert!(p.metadata.deletion_timestamp.is_some());
    let release = json!({"metadata": {"finalizers": null}});
    f.pods().patch("sticky", &PatchParams::default(), &Patch::Merge(&release)).await.expect("release pod");

    // A Node held by a finalizer holds the Machine until nodeDeletionTimeout, then is left.
    let node = node_of(&workers[&stuck_node]);
    let hold = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    f.nodes().patch(&node, &PatchParams::default(), &Patch::Merge(&hold)).await.expect("hold node");
    f.api::<Machine>().delete(&stuck_node, &DeleteParams::default()).await.expect("delete");
    let m = f
        .machine_until(&stuck_node, "the Machine to wait for its Node", |m| {
            has_condition(m, "NodeHealthy", |c| {
                c.reason.as_deref() == Some("Deleting")
                    && c.message.as_deref() == Some("Waiting for the Node to be deleted")
            })
        })
        .await;
    let deleted_at = m.metadata.deletion_timestamp.clone().expect("deleting").0;
    f.gone(&stuck_node, "the Machine after its node deletion timeout").await;
    let waited = jiff::Timestamp::now().duration_since(deleted_at);
    assert!(waited.as_secs() >= 3, "gave up on the Node after {waited:?}");
    let n = f.nodes().get(&node).await.expect("the Node is still held");
    assert!(n.metadata.deletion_timestamp.is_some());
    f.nodes()
        .patch(&node, &PatchParams::default(), &Patch::Merge(&json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release");
    eventually("the Node to go", MINUTE, || async {
        f.nodes().get_opt(&node).await.ok().flatten().is_none().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_rules_order_skip_and_wait_for_completion() {
    // No drain timeout: the drain waits as long as the rules say.
    let f = Fleet::start_with("rules", 1, "").await;
    let workers = f.running_workers(1).await;
    let w = workers.keys().next().expect("worker").clone();
    let node = node_of(&workers[&w]);

    let label_ns = json!({"metadata": {"labels": {"tier": "keep"}}});
    Api::<Namespace>::all(f.workload())
        .patch(APPS, &PatchParams::default(), &Patch::Merge(&label_ns))
        .await
        .expect("label namespace");
    let rules: Api<MachineDrainRule> = f.api();
    for rule in [
        json!({"metadata": {"name": "a-keep"}, "spec": {"drain": {"behavior": "Skip"},
            "machines": [{"selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "rules-workers"}}}],
            "pods": [{"selector": {"matchLabels": {"app": "keep"}}, "namespaceSelector": {"matchLabels": {"tier": "keep"}}}]}}),
        json!({"metadata": {"name": "b-late"}, "spec": {"drain": {"behavior": "Drain", "order": 1},
            "pods": [{"selector": {"matchLabels": {"app": "late"}}}]}}),
        // Selects no Machine of this fleet: it changes nothing.
        json!({"metadata": {"name": "c-elsewhere"}, "spec": {"drain": {"behavior": "Skip"},
            "machines": [{"clusterSelector": {"matchLabels": {"env": "other"}}}]}}),
    ] {
        rules.create(&PostParams::default(), &obj(rule)).await.expect("create rule");
    }
    f.pod("keep", &node, json!({"labels": {"app": "keep"}})).await;
    // Order 0 (no rule): evicted first, and held terminating by its finalizer.
    f.pod("first", &node, json!({"finalizers": ["example.com/hold"]})).await;
    f.pod("late", &node, json!({"labels": {"app": "late"}})).await;
    f.pod("job", &node, json!({"labels": {"cluster.x-k8s.io/drain": "wait-completed"}})).await;
    f.pods()
        .patch_status("job", &PatchParams::default(), &Patch::Merge(&json!({"status": {"phase": "Running"}})))
        .await
        .expect("job running");

    f.api::<Machine>().delete(&w, &DeleteParams::default()).await.expect("delete");
    let waiting_for = |pod: &'static str| {
        move |m: &Machine| {
            has_condition(m, "DrainingSucceeded", |c| {
                c.is_false() && c.message.as_deref().is_some_and(|msg| msg.contains(&format!("apps/{pod}")))
            })
        }
    };
    f.machine_until(&w, "the drain to wait for the first group", waiting_for("first")).await;
    let first = f.pods().get("first").await.expect("first is terminating");
    assert!(first.metadata.deletion_timestamp.is_some(), "the order-0 pod was evicted");
    let late = f.pods().get("late").await.expect("late");
    assert!(late.metadata.deletion_timestamp.is_none(), "order 1 evicted before order 0 was gone");
    let job = f.pods().get("job").await.expect("job");
    assert!(job.metadata.deletion_timestamp.is_none(), "a pod to wait for was evicted");

    // The first group goes: the next one is evicted; the job is still waited for.
    let release = json!({"metadata": {"finalizers": null}});
    f.pods().patch("first", &PatchParams::default(), &Patch::Merge(&release)).await.expect("release first");
    eventually("the order-1 pod to be evicted", MINUTE, || async {
        f.pods().get_opt("late").await.ok().flatten().is_none().then_some(())
    })
    .await;
    let m = f.machine_until(&w, "the drain to wait for the job", waiting_for("job")).await;
    assert!(m.metadata.deletion_timestamp.is_some());
    assert_eq!(f.pod_names().await, ["job", "keep"]);

    // The job completes: the drain is done and the Machine goes; the skipped pod stays.
    f.pods()
        .patch_status("job", &PatchParams::default(), &Patch::Merge(&json!({"status": {"phase": "Succeeded"}})))
        .await
        .expect("job done");
    f.gone(&w, "the Machine after its drain").await;
    assert_eq!(f.pod_names().await, ["job", "keep"], "completed and skipped pods are not evicted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_and_set_finalizers_hold_until_their_machines_are_gone() {
    const MD_FINALIZER: &str = "cluster.x-k8s.io/machinedeployment";
    const MS_FINALIZER: &str = "cluster.x-k8s.io/machineset";
    let f = Fleet::start("cascade", 1).await;
    let workers = f.running_workers(1).await;
    let w = workers.keys().next().expect("worker").clone();
    let md_name = "cascade-workers";
    let in_md = ListParams::default().labels(&format!("cluster.x-k8s.io/deployment-name={md_name}"));
    let has = |f: &Option<Vec<String>>, name: &str| f.iter().flatten().any(|x| x == name);

    let md = eventually("the MachineDeployment's finalizer", MINUTE, || async {
        f.api::<MachineDeployment>().get(md_name).await.ok().filter(|md| has(&md.metadata.finalizers, MD_FINALIZER))
    })
    .await;
    let ms = eventually("the MachineSet's finalizer", MINUTE, || async {
        let sets = f.api::<MachineSet>().list(&in_md).await.ok()?.items;
        sets.into_iter().find(|ms| has(&ms.metadata.finalizers, MS_FINALIZER))
    })
    .await;
    let ms_name = ms.name_any();

    // A pre-drain hook holds the Machine; the set and the deployment wait for it.
    f.annotate(&w, json!({PRE_DRAIN: "test"})).await;
    f.api::<MachineDeployment>().delete(md_name, &DeleteParams::default()).await.expect("delete");
    f.machine_until(&w, "the pre-drain hook to hold", |m| {
        m.metadata.deletion_timestamp.is_some()
            && has_condition(m, "PreDrainDeleteHookSucceeded", reason_is("WaitingExternalHook"))
    })
    .await;
    let held = f.api::<MachineSet>().get(&ms_name).await.expect("the MachineSet is held");
    assert!(held.metadata.deletion_timestamp.is_some());
    let held = f.api::<MachineDeployment>().get(md_name).await.expect("the MachineDeployment is held");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.metadata.uid, md.metadata.uid);

    // The hook goes: the Machine, then the set, then the deployment.
    f.annotate(&w, json!({PRE_DRAIN: null})).await;
    f.gone(&w, "the Machine").await;
    eventually("the MachineSet and MachineDeployment to go", MINUTE, || async {
        let ms = f.api::<MachineSet>().get_opt(&ms_name).await.ok()?;
        let md = f.api::<MachineDeployment>().get_opt(md_name).await.ok()?;
        (ms.is_none() && md.is_none()).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_waits_for_volumes_to_detach_but_not_for_skipped_pods_volumes() {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    use k8s_openapi::api::storage::v1::VolumeAttachment;

    let f = Fleet::start_with("volumes", 1, "").await;
    let workers = f.running_workers(1).await;
    let w = workers.keys().next().expect("worker").clone();
    let node = node_of(&workers[&w]);
    let pp = PostParams::default();

    // A pod the drain skips keeps its volume (vol-kept, through its claim); vol-1 and the
    // attachment of pv-1 belong to nothing that stays.
    Api::<PersistentVolume>::all(f.workload())
        .create(
            &pp,
            &obj(json!({"metadata": {"name": "pv-kept"}, "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "drv.example.com", "volumeHandle": "vol-kept"}}})),
        )
        .await
        .expect("pv");
    Api::<PersistentVolumeClaim>::namespaced(f.workload(), APPS)
        .create(&pp, &obj(json!({"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv-kept"}})))
        .await
        .expect("pvc");
    let db = obj::<Pod>(json!({"metadata": {"name": "db", "labels": {"cluster.x-k8s.io/drain": "skip"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.example/db:1"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}));
    f.pods().create(&pp, &db).await.expect("pod");
    let attached = |names: &[&str]| {
        let list: Vec<Value> = names.iter().map(|n| json!({"name": n, "devicePath": ""})).collect();
        json!({"status": {"volumesAttached": list}})
    };
    let (kept, gone) = ("kubernetes.io/csi/drv.example.com^vol-kept", "kubernetes.io/csi/drv.example.com^vol-1");
    f.nodes()
        .patch_status(&node, &PatchParams::default(), &Patch::Merge(&attached(&[kept, gone])))
        .await
        .expect("attach");
    let attachments: Api<VolumeAttachment> = Api::all(f.workload());
    attachments
        .create(
            &pp,
            &obj(json!({"metadata": {"name": "va-1"}, "spec": {"attacher": "drv.example.com",
            "nodeName": node, "source": {"persistentVolumeName": "pv-1"}}})),
        )
        .await
        .expect("attachment");
    let attached_true = json!({"status": {"attached": true}});
    attachments.patch_status("va-1", &PatchParams::default(), &Patch::Merge(&attached_true)).await.expect("attached");

    f.api::<Machine>().delete(&w, &DeleteParams::default()).await.expect("delete");
    let m = f
        .machine_until(&w, "the deletion to wait for the volumes", |m| {
            has_condition(m, "VolumeDetachSucceeded", |c| {
                c.reason.as_deref() == Some("WaitingForVolumeDetach")
                    && c.message.as_deref().is_some_and(|msg| msg.contains("vol-1") && msg.contains("pv-1"))
            })
        })
        .await;
    let message = m.get_condition("VolumeDetachSucceeded").and_then(|c| c.message.clone()).unwrap_or_default();
    assert!(!message.contains("vol-kept"), "waited for a skipped pod's volume: {message}");
    assert!(has_condition(&m, "DrainingSucceeded", Condition::is_true));
    let started = m
        .status
        .as_ref()
        .and_then(|s| s.deletion.as_ref())
        .and_then(|d| d.wait_for_node_volume_detach_start_time.as_ref());
    assert!(started.is_some(), "the wait's start is recorded");

    // vol-1 detaches, but pv-1 is still attached: the Machine stays.
    f.nodes().patch_status(&node, &PatchParams::default(), &Patch::Merge(&attached(&[kept]))).await.expect("detach");
    f.machine_until(&w, "the wait to name only pv-1", |m| {
        has_condition(m, "VolumeDetachSucceeded", |c| {
            c.message.as_deref().is_some_and(|msg| msg.contains("pv-1") && !msg.contains("vol-1"))
        })
    })
    .await;
    let detached = json!({"status": {"attached": false}});
    attachments.patch_status("va-1", &PatchParams::default(), &Patch::Merge(&detached)).await.expect("detached");
    f.gone(&w, "the Machine once its volumes are detached").await;
}
