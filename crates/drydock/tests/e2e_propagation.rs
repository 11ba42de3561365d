//! Template metadata of a MachineDeployment propagated in place through server-side apply,
//! end to end (API server, every controller, the in-memory provider): labels added to the
//! template reach the MachineSet, Machines, InMemoryMachines, KubeadmConfigs and (node
//! prefixes only) the workload cluster's Nodes; removed from the template they are removed
//! everywhere, while a label a user put on a Machine stays and no Machine is replaced;
//! `minReadySeconds` reaches the Machines in place as well.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use drydock_api::capi::core::{Machine, MachineDeployment, MachineSet};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::DEPLOYMENT_NAME_LABEL;
use drydock_api::capi::kubeadm::KubeadmConfig;
use drydock_api::tenancy::LogicalClusterName;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::ObjectMeta;
use kube::{Resource, ResourceExt};
use serde_json::json;

use common::{Env, eventually, kubectl_ok};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(180);
const CLUSTER: &str = "prop";
const MD: &str = "prop-md-0";

/// Propagated to every object; only the node-prefixed ones reach Nodes.
const LABELS: [(&str, &str); 5] = [
    ("tier", "gold"),
    ("node-role.kubernetes.io/gpu", ""),
    ("node.cluster.x-k8s.io/pool", "a"),
    ("sub.node-restriction.kubernetes.io/zone", "z1"),
    ("eu.node.cluster.x-k8s.io/rack", "r7"),
];
const NOTE: &str = "example.com/note";

fn api<K>(client: &kube::Client) -> Api<K>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    Api::namespaced(client.clone(), NS)
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

fn has_all(meta: &ObjectMeta, labels: &[(&str, &str)]) -> bool {
    labels.iter().all(|(k, v)| label(meta, k) == Some(*v))
}

fn has_none(meta: &ObjectMeta, labels: &[(&str, &str)]) -> bool {
    labels.iter().all(|(k, _)| label(meta, k).is_none())
}

fn is_node_label(key: &str) -> bool {
    key.starts_with("node-role.kubernetes.io/")
        || key.contains("node-restriction.kubernetes.io/")
        || key.contains("node.cluster.x-k8s.io/")
}

/// Every object the deployment's template metadata reaches, as currently stored.
struct Objects {
    sets: Vec<MachineSet>,
    machines: Vec<Machine>,
    infra: Vec<InMemoryMachine>,
    configs: Vec<KubeadmConfig>,
    nodes: Vec<Node>,
}

async fn objects(client: &kube::Client, workload: &Api<Node>) -> Option<Objects> {
    let lp = ListParams::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={MD}"));
    let sets = api::<MachineSet>(client).list(&lp).await.ok()?.items;
    let machines = api::<Machine>(client).list(&lp).await.ok()?.items;
    let (mut infra, mut configs, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
    for m in &machines {
        infra.push(api::<InMemoryMachine>(client).get(m.spec.infrastructure_ref.name.as_deref()?).await.ok()?);
        let config = m.spec.bootstrap.config_ref.as_ref()?.name.as_deref()?;
        configs.push(api::<KubeadmConfig>(client).get(config).await.ok()?);
        let node = m.status.as_ref()?.node_ref.as_ref()?.name.as_deref()?;
        nodes.push(workload.get(node).await.ok()?);
    }
    Some(Objects { sets, machines, infra, configs, nodes })
}

impl Objects {
    /// Each object's metadata with what it must carry.
    fn metas(&self) -> impl Iterator<Item = (&'static str, &ObjectMeta)> {
        let sets = self.sets.iter().map(|o| ("MachineSet", &o.metadata));
        let machines = self.machines.iter().map(|o| ("Machine", &o.metadata));
        let infra = self.infra.iter().map(|o| ("InMemoryMachine", &o.metadata));
        let configs = self.configs.iter().map(|o| ("KubeadmConfig", &o.metadata));
        sets.chain(machines).chain(infra).chain(configs)
    }

    fn identities(&self) -> BTreeMap<String, String> {
        self.machines.iter().map(|m| (m.name_any(), m.uid().unwrap_or_default())).collect()
    }
}

/// Each test runs its own instance; one at a time keeps them within their deadlines.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_labels_come_and_go_everywhere_and_hand_labels_stay() {
    scenario(false).await;
}

/// Objects from before field ownership was recorded (no managedFields at all): the first
/// apply takes them over, and a later removal still removes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_without_managed_fields_migrate() {
    scenario(true).await;
}

/// Clears every managedFields entry of `o`'s objects (an empty list resets them), as on
/// objects written before the server kept them.
async fn forget_ownership(client: &kube::Client, o: &Objects) {
    let reset = json!({"metadata": {"managedFields": []}});
    let pp = PatchParams::default();
    for s in &o.sets {
        api::<MachineSet>(client).patch(&s.name_any(), &pp, &Patch::Merge(&reset)).await.expect("reset set");
    }
    for m in &o.machines {
        api::<Machine>(client).patch(&m.name_any(), &pp, &Patch::Merge(&reset)).await.expect("reset machine");
    }
    for i in &o.infra {
        api::<InMemoryMachine>(client).patch(&i.name_any(), &pp, &Patch::Merge(&reset)).await.expect("reset infra");
    }
    for c in &o.configs {
        api::<KubeadmConfig>(client).patch(&c.name_any(), &pp, &Patch::Merge(&reset)).await.expect("reset config");
    }
}

/// Each object's labels are owned by upstream's field manager for its propagation.
fn assert_labels_applied_by_upstream_managers(after: &Objects) {
    for (kind, meta) in after.metas() {
        let manager = match kind {
            "MachineSet" => "capi-machinedeployment",
            "Machine" => "capi-machineset",
            _ => "capi-machineset-metadata",
        };
        let applied = meta.managed_fields.iter().flatten().any(|e| {
            e.manager.as_deref() == Some(manager)
                && e.operation.as_deref() == Some("Apply")
                && e.fields_v1.as_ref().is_some_and(|f| f.0.pointer("/f:metadata/f:labels").is_some())
        });
        assert!(
            applied,
            "{kind} {:?} has no {manager} Apply entry owning labels: {:?}",
            meta.name, meta.managed_fields
        );
    }
}

/// Waits until the cluster's Machines, read in v1beta2, have these minReadySeconds.
async fn min_ready_seconds_everywhere(kubeconfig: &std::path::Path, want: &str) {
    let selector = format!("cluster.x-k8s.io/cluster-name={CLUSTER}");
    let args = ["get", "machines.v1beta2.cluster.x-k8s.io", "-l", &selector, "-o"];
    let args = [&args[..], &["jsonpath={.items[*].spec.minReadySeconds}"]].concat();
    eventually("minReadySeconds on every Machine", WAIT, || {
        let out = kubectl_ok(kubeconfig, &args, None);
        std::future::ready((out == want).then_some(()))
    })
    .await;
}

async fn scenario(legacy: bool) {
    let _serial = SERIAL.lock().await;
    let env = Env::start(true).await;
    let client = env.client();
    let kubeconfig = env.kubeconfig(None);
    let manifest = common::generated_cluster(CLUSTER, &["--worker-machine-count", "2"]);
    kubectl_ok(&kubeconfig, &["apply", "-f", "-"], Some(&manifest));
    let workload: Api<Node> = Api::all(env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, CLUSTER))));
    let before = eventually("two workers with their Nodes", WAIT, || async {
        let md: MachineDeployment = api(&client).get(MD).await.ok()?;
        let available = md.status.as_ref()?.available_replicas == Some(2);
        let o = objects(&client, &workload).await?;
        (available && o.machines.len() == 2 && o.sets.len() == 1).then_some(o)
    })
    .await;
    let identities = before.identities();
    if legacy {
        forget_ownership(&client, &before).await;
        let o = objects(&client, &workload).await.expect("objects");
        assert!(o.metas().all(|(_, m)| m.managed_fields.as_ref().is_none_or(Vec::is_empty)));
    }
    let set_name = before.sets[0].name_any();

    // A user labels one Machine by hand.
    let by_hand = before.machines[0].name_any();
    kubectl_ok(&kubeconfig, &["label", "machine", &by_hand, "owner=alice"], None);

    let mds: Api<MachineDeployment> = api(&client);
    let labels: serde_json::Map<String, serde_json::Value> =
        LABELS.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let add = json!({"spec": {
        "minReadySeconds": 5,
        "template": {"metadata": {"labels": labels, "annotations": {NOTE: "in place"}}},
    }});
    mds.patch(MD, &PatchParams::default(), &Patch::Merge(&add)).await.expect("add template labels");
    let node_labels: Vec<(&str, &str)> = LABELS.iter().copied().filter(|(k, _)| is_node_label(k)).collect();
    eventually("the template labels on every object", WAIT, || async {
        let o = objects(&client, &workload).await?;
        let everywhere = o.metas().all(|(_, m)| has_all(m, &LABELS));
        let noted = o.machines.iter().all(|m| m.annotations().get(NOTE).map(String::as_str) == Some("in place"));
        let nodes = o.nodes.iter().all(|n| has_all(&n.metadata, &node_labels) && label(&n.metadata, "tier").is_none());
        (o.machines.len() == 2 && everywhere && noted && nodes).then_some(())
    })
    .await;
    // minReadySeconds too reaches the Machines in place (v1beta1 Machines have no such field).
    min_ready_seconds_everywhere(&kubeconfig, "5 5").await;

    let removed: serde_json::Map<String, serde_json::Value> =
        LABELS.iter().map(|(k, _)| (k.to_string(), serde_json::Value::Null)).collect();
    let remove = json!({"spec": {"template": {"metadata": {"labels": removed, "annotations": {NOTE: null}}}}});
    mds.patch(MD, &PatchParams::default(), &Patch::Merge(&remove)).await.expect("remove template labels");
    let after = eventually("the template labels gone from every object", WAIT, || async {
        let o = objects(&client, &workload).await?;
        let nowhere = o.metas().all(|(_, m)| has_none(m, &LABELS));
        let unnoted = o.machines.iter().all(|m| !m.annotations().contains_key(NOTE));
        let nodes = o.nodes.iter().all(|n| has_none(&n.metadata, &LABELS));
        (o.machines.len() == 2 && nowhere && unnoted && nodes).then_some(o)
    })
    .await;

    // The hand-made label stays; nothing was replaced; the set is the same.
    let labelled = after.machines.iter().find(|m| m.name_any() == by_hand).expect("the labelled Machine");
    assert_eq!(label(&labelled.metadata, "owner"), Some("alice"));
    assert_eq!(after.identities(), identities, "Machines were replaced");
    assert_eq!(after.sets.len(), 1);
    assert_eq!(after.sets[0].name_any(), set_name);
    assert_labels_applied_by_upstream_managers(&after);
    // The labels every object had before are still there.
    for (kind, meta) in after.metas() {
        let was = before.metas().find(|(k, m)| *k == kind && m.name == meta.name).map(|(_, m)| m);
        let kept = was.and_then(|w| w.labels.as_ref()).into_iter().flatten().all(|(k, v)| label(meta, k) == Some(v));
        assert!(kept, "{kind} {:?} lost labels it had before: {:?}", meta.name, meta.labels);
    }
}
