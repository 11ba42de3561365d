//! MachineDeployment and MachineSet controllers against a real drydock instance (API
//! server with garbage collection, all controllers and the in-memory provider running).
//!
//! The Machine controller's part is played by a stand-in (see [`MachineStandIn`]): it
//! pauses the test's Machines for the real Machine controller, gives them a healthy Node
//! in their status, and lets deleting Machines go. What is checked is what the set and
//! deployment controllers own: MachineSets, Machines and their cloned infrastructure
//! machines and bootstrap configs, labels, owners, counts, revisions, status, adoption,
//! pausing, and garbage collection of everything when the owner goes.

mod common;

use std::collections::BTreeSet;
use std::pin::pin;
use std::time::Duration;

use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::inmemory::{InMemoryMachine, InMemoryMachineTemplate};
use drydock_api::capi::keys::{
    CLONED_FROM_NAME_ANNOTATION, CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_FINALIZER,
    MACHINE_TEMPLATE_HASH_LABEL, PAUSED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, SET_NAME_LABEL,
};
use drydock_api::capi::kubeadm::{KubeadmConfig, KubeadmConfigTemplate};
use drydock_api::capi::owner;
use drydock_controllers::framework::metrics;
use futures::StreamExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde_json::{Value, json};

use common::{Env, eventually, quiet};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(60);

/// Tests in this binary share the controllers' metrics; the idle check must not see the
/// other test's writes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn obj<K: serde::de::DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).expect("test manifest decodes")
}

/// A namespaced kind the helpers below read and write.
trait Namespaced:
    Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Namespaced for K where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

async fn create<K>(client: &kube::Client, v: Value) -> K
where
    K: Namespaced + serde::Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), NS);
    api.create(&PostParams::default(), &obj(v)).await.expect("create")
}

async fn patch<K>(client: &kube::Client, name: &str, v: Value) -> K
where
    K: Namespaced,
{
    let api: Api<K> = Api::namespaced(client.clone(), NS);
    api.patch(name, &PatchParams::default(), &Patch::Merge(&v)).await.expect("patch")
}

/// Objects of `cluster` (by its cluster-name label).
async fn list<K>(client: &kube::Client, cluster: &str) -> Vec<K>
where
    K: Namespaced,
{
    let api: Api<K> = Api::namespaced(client.clone(), NS);
    api.list(&ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={cluster}"))).await.expect("list").items
}

/// A Cluster (paused from the start when `paused`) and the templates the tests use.
async fn setup_cluster(client: &kube::Client, cluster: &str, paused: bool) {
    create::<Cluster>(
        client,
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": cluster, "namespace": NS},
            "spec": {"paused": paused, "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}}}
        }),
    )
    .await;
    for name in [format!("{cluster}-workers"), format!("{cluster}-workers-v2")] {
        create::<InMemoryMachineTemplate>(
            client,
            json!({
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachineTemplate",
                "metadata": {"name": name, "namespace": NS},
                "spec": {"template": {"spec": {"behaviour": {"vm": {"provisioning": {"startupDuration": "1s"}}}}}}
            }),
        )
        .await;
    }
    create::<KubeadmConfigTemplate>(
        client,
        json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate",
            "metadata": {"name": format!("{cluster}-workers"), "namespace": NS},
            "spec": {"template": {"spec": {"joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"node-labels": "role=worker"}}}}}}
        }),
    )
    .await;
}

fn infra_ref(name: &str) -> Value {
    json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachineTemplate", "name": name})
}

/// Plays the Machine controller for the test's Machines (it is developed separately):
/// pauses them for the real one, reports a healthy Node, and removes the finalizer of
/// deleting Machines so they go.
/// A test's drydock: the serial lock held, the cluster set up and the Machine stand-in
/// running (fields drop in this order).
struct Fixture {
    _stand_in: MachineStandIn,
    client: kube::Client,
    _env: Env,
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

impl Fixture {
    async fn start(cluster: &str, paused: bool) -> Self {
        let serial = SERIAL.lock().await;
        let env = Env::start(true).await;
        let client = env.client();
        setup_cluster(&client, cluster, paused).await;
        let stand_in = MachineStandIn::start(client.clone(), cluster);
        Self { _stand_in: stand_in, client, _env: env, _serial: serial }
    }
}

struct MachineStandIn(tokio::task::JoinHandle<()>);

impl MachineStandIn {
    fn start(client: kube::Client, cluster: &str) -> Self {
        let api: Api<Machine> = Api::namespaced(client, NS);
        let cfg = watcher::Config::default().labels(&format!("{CLUSTER_NAME_LABEL}={cluster}"));
        Self(tokio::spawn(async move {
            let mut events = pin!(watcher(api.clone(), cfg).default_backoff().applied_objects());
            while let Some(ev) = events.next().await {
                let Ok(m) = ev else { continue };
                let name = m.name_any();
                let pp = PatchParams::default();
                if m.metadata.deletion_timestamp.is_some() {
                    if !m.finalizers().is_empty() {
                        let p = json!({"metadata": {"finalizers": null}});
                        let _ = api.patch(&name, &pp, &Patch::Merge(&p)).await;
                    }
                    continue;
                }
                if !m.annotations().contains_key(PAUSED_ANNOTATION) {
                    let p = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: "stand-in"}}});
                    let _ = api.patch(&name, &pp, &Patch::Merge(&p)).await;
                }
                // The real Machine controller may have written its own view before it saw
                // the pause: put the healthy Node back whenever it is missing.
                let healthy =
                    m.status.as_ref().is_some_and(|s| s.node_ref.is_some()) && m.is_condition_true("NodeHealthy");
                if !healthy {
                    let now = jiff::Timestamp::now().to_string();
                    let p = json!({"status": {
                        "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": name},
                        "conditions": [{"type": "NodeHealthy", "status": "True", "lastTransitionTime": now}],
                    }});
                    let _ = api.patch_status(&name, &pp, &Patch::Merge(&p)).await;
                }
            }
        }))
    }
}

impl Drop for MachineStandIn {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn controlled_by<K: Resource<DynamicType = ()>>(meta: &kube::core::ObjectMeta, owner: &K) -> bool {
    owner::is_controlled_by(meta, owner)
}

fn writes(controller: &str) -> u64 {
    metrics::get().writes.get_or_create(&metrics::controller(controller)).get()
}

fn label<'a>(meta: &'a kube::core::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

fn annotation<'a>(meta: &'a kube::core::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// The deployment's sets, once there are `n`.
async fn sets_of(client: &kube::Client, md: &MachineDeployment, n: usize) -> Vec<MachineSet> {
    let cluster = md.spec.cluster_name.clone();
    eventually(&format!("{n} MachineSets"), WAIT, || {
        let (client, cluster, md) = (client.clone(), cluster.clone(), md.clone());
        async move {
            let sets: Vec<MachineSet> = list(&client, &cluster).await;
            let owned: Vec<MachineSet> = sets.into_iter().filter(|s| controlled_by(&s.metadata, &md)).collect();
            (owned.len() == n).then_some(owned)
        }
    })
    .await
}

/// The set's Machines once there are exactly `n` (deleting ones included) and its status
/// reports `n` replicas.
async fn machines_of(client: &kube::Client, cluster: &str, ms_name: &str, n: usize) -> Vec<Machine> {
    eventually(&format!("{n} Machines of {ms_name}"), WAIT, || {
        let (client, cluster) = (client.clone(), cluster.to_string());
        async move {
            let machines: Vec<Machine> = list(&client, &cluster).await;
            let ms: MachineSet = Api::namespaced(client.clone(), NS).get(ms_name).await.ok()?;
            let mine: Vec<Machine> = machines.into_iter().filter(|m| controlled_by(&m.metadata, &ms)).collect();
            let reported = ms.status.as_ref().and_then(|s| s.replicas);
            (mine.len() == n && reported == Some(n as i32)).then_some(mine)
        }
    })
    .await
}

async fn wait_gone(client: &kube::Client, cluster: &str) {
    eventually("every object of the deployment to be collected", WAIT, || {
        let (client, cluster) = (client.clone(), cluster.to_string());
        async move {
            let sets: Vec<MachineSet> = list(&client, &cluster).await;
            let machines: Vec<Machine> = list(&client, &cluster).await;
            let infra: Vec<InMemoryMachine> = list(&client, &cluster).await;
            let configs: Vec<KubeadmConfig> = list(&client, &cluster).await;
            (sets.is_empty() && machines.is_empty() && infra.is_empty() && configs.is_empty()).then_some(())
        }
    })
    .await;
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_creates_scales_propagates_and_is_collected() {
    let cluster = "md-e2e";
    let fixture = Fixture::start(cluster, false).await;
    let client = fixture.client.clone();

    let md: MachineDeployment = create(
        &client,
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
            "metadata": {"name": "workers", "namespace": NS, "annotations": {"team": "storage"}},
            "spec": {
                "clusterName": cluster,
                "replicas": 3,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"}},
                "template": {
                    "metadata": {"labels": {"node-role.kubernetes.io/worker": ""}, "annotations": {"example.com/note": "a"}},
                    "spec": {
                        "clusterName": cluster,
                        "version": "v1.30.2",
                        "bootstrap": {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": format!("{cluster}-workers")}},
                        "infrastructureRef": infra_ref(&format!("{cluster}-workers")),
                    }
                }
            }
        }),
    )
    .await;

    // One MachineSet, revision 1, labelled and owned as upstream does.
    let sets = sets_of(&client, &md, 1).await;
    let ms = &sets[0];
    let ms_name = ms.name_any();
    assert!(ms_name.starts_with("workers-"), "{ms_name}");
    let hash = label(&ms.metadata, MACHINE_TEMPLATE_HASH_LABEL).expect("hash label").to_string();
    assert!(hash.ends_with(&ms_name["workers-".len()..]), "{hash} / {ms_name}");
    assert_eq!(label(&ms.metadata, DEPLOYMENT_NAME_LABEL), Some("workers"));
    assert_eq!(label(&ms.metadata, CLUSTER_NAME_LABEL), Some(cluster));
    assert_eq!(annotation(&ms.metadata, REVISION_ANNOTATION), Some("1"));
    assert_eq!(annotation(&ms.metadata, "team"), Some("storage"));
    assert_eq!(ms.spec.replicas, Some(3));
    let md_api: Api<MachineDeployment> = Api::namespaced(client.clone(), NS);
    eventually("the deployment's revision annotation", WAIT, || async {
        let md = md_api.get("workers").await.ok()?;
        (annotation(&md.metadata, REVISION_ANNOTATION) == Some("1")).then_some(())
    })
    .await;

    // Three Machines, each with its own cloned InMemoryMachine and KubeadmConfig.
    let machines = machines_of(&client, cluster, &ms_name, 3).await;
    for m in &machines {
        let name = m.name_any();
        assert!(name.starts_with(&format!("{ms_name}-")), "{name}");
        assert_eq!(label(&m.metadata, SET_NAME_LABEL), Some(ms_name.as_str()));
        assert_eq!(label(&m.metadata, DEPLOYMENT_NAME_LABEL), Some("workers"));
        assert_eq!(label(&m.metadata, MACHINE_TEMPLATE_HASH_LABEL), Some(hash.as_str()));
        assert_eq!(label(&m.metadata, "node-role.kubernetes.io/worker"), Some(""));
        assert_eq!(annotation(&m.metadata, "example.com/note"), Some("a"));
        assert!(m.finalizers().iter().any(|f| f == MACHINE_FINALIZER));
        assert_eq!(m.spec.version.as_deref(), Some("v1.30.2"));
        assert_eq!(m.spec.infrastructure_ref.kind.as_deref(), Some("InMemoryMachine"));
        assert_eq!(m.spec.infrastructure_ref.name.as_deref(), Some(name.as_str()));
        let config_ref = m.spec.bootstrap.config_ref.as_ref().expect("bootstrap config");
        assert_eq!(config_ref.kind.as_deref(), Some("KubeadmConfig"));
        assert_eq!(config_ref.name.as_deref(), Some(name.as_str()));

        let infra: InMemoryMachine = Api::namespaced(client.clone(), NS).get(&name).await.expect("InMemoryMachine");
        // Created owned by the set; the Machine controller may already have taken it over.
        let owned = |meta: &kube::core::ObjectMeta| owner::is_owned_by(meta, ms) || owner::is_owned_by(meta, m);
        assert!(owned(&infra.metadata), "InMemoryMachine owned by the set or its Machine");
        assert_eq!(
            annotation(&infra.metadata, CLONED_FROM_NAME_ANNOTATION),
            Some(format!("{cluster}-workers").as_str())
        );
        assert_eq!(label(&infra.metadata, SET_NAME_LABEL), Some(ms_name.as_str()));
        let config: KubeadmConfig = Api::namespaced(client.clone(), NS).get(&name).await.expect("KubeadmConfig");
        assert!(owned(&config.metadata), "KubeadmConfig owned by the set or its Machine");
        assert_eq!(label(&config.metadata, CLUSTER_NAME_LABEL), Some(cluster));
    }
    // The templates now belong to the Cluster.
    let c: Cluster = Api::namespaced(client.clone(), NS).get(cluster).await.expect("cluster");
    let tpl: InMemoryMachineTemplate =
        Api::namespaced(client.clone(), NS).get(&format!("{cluster}-workers")).await.expect("template");
    assert!(owner::is_owned_by(&tpl.metadata, &c));

    // The stand-in reports healthy Nodes: everything becomes ready and available.
    eventually("the deployment to be available", WAIT, || async {
        let md = md_api.get("workers").await.ok()?;
        let s = md.status.as_ref()?;
        let available = s.conditions.iter().flatten().any(|c| c.type_ == "Available" && c.status == "True");
        (s.replicas == Some(3)
            && s.available_replicas == Some(3)
            && s.updated_replicas == Some(3)
            && s.phase.as_deref() == Some("Running")
            && available)
            .then_some(())
    })
    .await;

    // Scale up 3 -> 10 (in a later second than the first Machines, so ages differ).
    let first: BTreeSet<String> = machines.iter().map(|m| m.name_any()).collect();
    let newest_first = machines
        .iter()
        .filter_map(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0.as_second()))
        .max()
        .expect("creation timestamps");
    eventually("the clock to pass the first Machines' second", WAIT, || async {
        (jiff::Timestamp::now().as_second() > newest_first).then_some(())
    })
    .await;
    patch::<MachineDeployment>(&client, "workers", json!({"spec": {"replicas": 10}})).await;
    let machines = machines_of(&client, cluster, &ms_name, 10).await;
    assert!(first.iter().all(|n| machines.iter().any(|m| &m.name_any() == n)));

    // In-place propagation: labels, annotations and drain timeout reach the set and its
    // Machines without a new set.
    patch::<MachineDeployment>(
        &client,
        "workers",
        json!({"spec": {"template": {
            "metadata": {"labels": {"tier": "gold"}, "annotations": {"example.com/note": "b"}},
            "spec": {"nodeDrainTimeout": "5m"}
        }}}),
    )
    .await;
    eventually("labels and timeouts on every Machine", WAIT, || async {
        let machines: Vec<Machine> = list(&client, cluster).await;
        (machines.len() == 10
            && machines.iter().all(|m| {
                label(&m.metadata, "tier") == Some("gold")
                    && annotation(&m.metadata, "example.com/note") == Some("b")
                    // Machines are stored in v1beta2 (whole seconds): read in v1beta1,
                    // the timeout is spelt as Go prints a duration.
                    && m.spec.node_drain_timeout.as_deref() == Some("5m0s")
            }))
        .then_some(())
    })
    .await;
    eventually("labels on every InMemoryMachine", WAIT, || async {
        let infra: Vec<InMemoryMachine> = list(&client, cluster).await;
        (infra.len() == 10 && infra.iter().all(|i| label(&i.metadata, "tier") == Some("gold"))).then_some(())
    })
    .await;
    assert_eq!(sets_of(&client, &md, 1).await[0].name_any(), ms_name);

    // Scale down 10 -> 1: with deletePolicy Oldest the first three go first.
    patch::<MachineDeployment>(&client, "workers", json!({"spec": {"replicas": 1}})).await;
    let machines = machines_of(&client, cluster, &ms_name, 1).await;
    let survivor = machines[0].name_any();
    assert!(!first.contains(&survivor), "an oldest Machine survived: {survivor}");
    eventually("the deployment status to follow", WAIT, || async {
        let s = md_api.get("workers").await.ok()?.status?;
        (s.replicas == Some(1) && s.available_replicas == Some(1) && s.phase.as_deref() == Some("Running"))
            .then_some(())
    })
    .await;

    // Settled (the last status changes have rippled from Machines to the set to the
    // deployment), an idle deployment makes no writes at all.
    let counts = || (writes("machineset"), writes("machinedeployment"));
    let before = quiet("the controllers to go quiet", WAIT, || async { counts() }).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(counts(), before, "idle controllers wrote");

    // A new infrastructure template makes a new set (revision 2); going back reuses the
    // first set, which becomes revision 3 and remembers revision 1.
    patch::<MachineDeployment>(
        &client,
        "workers",
        json!({"spec": {"template": {"spec": {"infrastructureRef": infra_ref(&format!("{cluster}-workers-v2"))}}}}),
    )
    .await;
    let sets = sets_of(&client, &md, 2).await;
    let new = sets.iter().find(|s| s.name_any() != ms_name).expect("new set");
    assert_eq!(annotation(&new.metadata, REVISION_ANNOTATION), Some("2"));
    assert_ne!(label(&new.metadata, MACHINE_TEMPLATE_HASH_LABEL), Some(hash.as_str()));
    eventually("the deployment's revision 2", WAIT, || async {
        let md = md_api.get("workers").await.ok()?;
        (annotation(&md.metadata, REVISION_ANNOTATION) == Some("2")).then_some(())
    })
    .await;
    patch::<MachineDeployment>(
        &client,
        "workers",
        json!({"spec": {"template": {"spec": {"infrastructureRef": infra_ref(&format!("{cluster}-workers"))}}}}),
    )
    .await;
    eventually("the first set to become revision 3", WAIT, || async {
        let ms: MachineSet = Api::namespaced(client.clone(), NS).get(&ms_name).await.ok()?;
        let md = md_api.get("workers").await.ok()?;
        (annotation(&ms.metadata, REVISION_ANNOTATION) == Some("3")
            && annotation(&ms.metadata, REVISION_HISTORY_ANNOTATION) == Some("1")
            && annotation(&md.metadata, REVISION_ANNOTATION) == Some("3"))
        .then_some(())
    })
    .await;
    assert_eq!(sets_of(&client, &md, 2).await.len(), 2);

    // Deleting the deployment collects its sets, Machines and their clones.
    md_api.delete("workers", &DeleteParams::default()).await.expect("delete");
    wait_gone(&client, cluster).await;
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_set_adopts_releases_and_respects_pause() {
    let cluster = "ms-e2e";
    let fixture = Fixture::start(cluster, false).await;
    let client = fixture.client.clone();
    let ms_api: Api<MachineSet> = Api::namespaced(client.clone(), NS);
    let machines_api: Api<Machine> = Api::namespaced(client.clone(), NS);

    // A Machine without an owner that the set will select.
    create::<Machine>(
        &client,
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": {"name": "orphan", "namespace": NS, "labels": {"pool": "solo"}},
            "spec": {
                "clusterName": cluster,
                "bootstrap": {"dataSecretName": "bootstrap-data"},
                "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachine", "name": "orphan"}
            }
        }),
    )
    .await;
    let ms: MachineSet = create(
        &client,
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
            "metadata": {"name": "solo", "namespace": NS},
            "spec": {
                "clusterName": cluster,
                "replicas": 2,
                "selector": {"matchLabels": {"pool": "solo"}},
                "template": {
                    "metadata": {"labels": {"pool": "solo"}},
                    "spec": {
                        "clusterName": cluster,
                        "bootstrap": {"dataSecretName": "bootstrap-data"},
                        "infrastructureRef": infra_ref(&format!("{cluster}-workers")),
                    }
                }
            }
        }),
    )
    .await;

    // The orphan is adopted and one Machine is created next to it.
    let machines = machines_of(&client, cluster, "solo", 2).await;
    assert!(machines.iter().any(|m| m.name_any() == "orphan"));
    let created = machines.iter().find(|m| m.name_any() != "orphan").expect("created Machine");
    assert_eq!(created.spec.bootstrap.data_secret_name.as_deref(), Some("bootstrap-data"));
    assert!(created.spec.bootstrap.config_ref.is_none());
    let infra: InMemoryMachine =
        Api::namespaced(client.clone(), NS).get(&created.name_any()).await.expect("cloned InMemoryMachine");
    assert!(owner::is_owned_by(&infra.metadata, &ms) || owner::is_owned_by(&infra.metadata, created));
    // A standalone set belongs to its Cluster.
    let c: Cluster = Api::namespaced(client.clone(), NS).get(cluster).await.expect("cluster");
    let stored = ms_api.get("solo").await.expect("set");
    assert!(owner::is_owned_by(&stored.metadata, &c));
    assert_eq!(label(&stored.metadata, CLUSTER_NAME_LABEL), Some(cluster));

    // Relabelled, the orphan is released and replaced.
    patch::<Machine>(&client, "orphan", json!({"metadata": {"labels": {"pool": "other"}}})).await;
    eventually("the relabelled Machine to be released", WAIT, || async {
        let orphan = machines_api.get("orphan").await.ok()?;
        owner::get_controller(&orphan.metadata).is_none().then_some(())
    })
    .await;
    let machines = machines_of(&client, cluster, "solo", 2).await;
    assert!(machines.iter().all(|m| m.name_any() != "orphan"));

    // The paused annotation stops the set (set in the same write as the new replicas, so
    // no reconcile can see one without the other); removing it lets the set scale.
    patch::<MachineSet>(
        &client,
        "solo",
        json!({"metadata": {"annotations": {PAUSED_ANNOTATION: "true"}}, "spec": {"replicas": 3}}),
    )
    .await;
    // The reconcile that reports the pause has seen the new replicas too.
    eventually("the set to report its pause", WAIT, || async {
        let set = ms_api.get("solo").await.ok()?;
        let paused = set.get_condition("Paused").filter(|c| c.is_true())?;
        (paused.reason.as_deref() == Some("AnnotationPaused")).then_some(())
    })
    .await;
    let all: Vec<Machine> = list(&client, cluster).await;
    assert_eq!(all.iter().filter(|m| controlled_by(&m.metadata, &ms)).count(), 2, "a paused set created Machines");
    patch::<MachineSet>(&client, "solo", json!({"metadata": {"annotations": {PAUSED_ANNOTATION: null}}})).await;
    machines_of(&client, cluster, "solo", 3).await;

    // Deleting the set collects its Machines and their clones; the released Machine stays.
    ms_api.delete("solo", &DeleteParams::default()).await.expect("delete");
    eventually("the set's Machines to be collected", WAIT, || async {
        let all: Vec<Machine> = list(&client, cluster).await;
        let infra: Vec<InMemoryMachine> = list(&client, cluster).await;
        (all.len() == 1 && all[0].name_any() == "orphan" && infra.is_empty()).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_of_a_paused_cluster_waits_until_it_resumes() {
    let cluster = "paused-e2e";
    let fixture = Fixture::start(cluster, true).await;
    let client = fixture.client.clone();
    create::<MachineSet>(
        &client,
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
            "metadata": {"name": "held", "namespace": NS},
            "spec": {
                "clusterName": cluster,
                "replicas": 2,
                "template": {"spec": {
                    "clusterName": cluster,
                    "bootstrap": {"dataSecretName": "bootstrap-data"},
                    "infrastructureRef": infra_ref(&format!("{cluster}-workers")),
                }}
            }
        }),
    )
    .await;
    // The Cluster was created paused: the set only reports that it is paused.
    let api: Api<MachineSet> = Api::namespaced(client.clone(), NS);
    let held =
        eventually("the set to report the Cluster pause", Duration::from_secs(20), || {
            let api = api.clone();
            async move {
                let ms = api.get("held").await.ok()?;
                let paused =
                    ms.status.as_ref()?.conditions.as_ref()?.iter().any(|c| {
                        c.type_ == "Paused" && c.status == "True" && c.reason.as_deref() == Some("ClusterPaused")
                    });
                paused.then_some(ms)
            }
        })
        .await;
    let machines: Vec<Machine> = list(&client, cluster).await;
    assert!(machines.is_empty(), "a paused Cluster's set created Machines");
    let status = held.status.expect("status");
    assert_eq!(status.replicas.unwrap_or(0), 0, "a paused Cluster's set counted machines");

    // Resuming the Cluster wakes its sets up.
    patch::<Cluster>(&client, cluster, json!({"spec": {"paused": false}})).await;
    machines_of(&client, cluster, "held", 2).await;
}
