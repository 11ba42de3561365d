//! KubeadmControlPlane upgrades and rollouts end to end, with every drydock controller in
//! process:
//! - a 3-replica control plane upgrades v1.30 → v1.31 one Machine at a time; watchers on
//!   the Machines and on the workload cluster's etcd pods check at every event that there
//!   are never more than 4 control plane Machines and never fewer than 2 healthy etcd
//!   members; a downgrade and a two-minor jump are then refused by kubectl;
//! - template metadata and timeouts reach the Machines in place; rotating the
//!   infrastructure template, `drydock rollout restart` (rolloutAfter) and expiring
//!   certificates each replace Machines, with maxSurge 0 (never more than 3 Machines).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use common::{Env, eventually, kubectl, kubectl_ok, logs, v1beta1};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::Machine;
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::{CERTIFICATES_EXPIRY_ANNOTATION, CLONED_FROM_NAME_ANNOTATION};
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::etcd::{self, Membership};
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::Mutex;
use serde_json::json;

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(180);

fn manifest(cluster: &str, version: &str, max_surge: u8) -> String {
    let kubeadm = "{clusterConfiguration: {apiServer: {certSANs: [localhost]}}, initConfiguration: {nodeRegistration: {}}, joinConfiguration: {nodeRegistration: {}}}";
    let strategy = format!("  rolloutStrategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {max_surge}}}}}\n");
    format!(
        "{}---\n{}---\n{}",
        common::cluster_preamble(cluster, NS),
        common::machine_template(&format!("{cluster}-cp"), NS, "0s"),
        common::control_plane(cluster, NS, (3, version), &format!("{cluster}-cp"), kubeadm, &strategy)
    )
}

fn selector(cluster: &str) -> String {
    format!("cluster.x-k8s.io/control-plane,cluster.x-k8s.io/cluster-name={cluster}")
}

async fn control_plane_machines(client: &kube::Client, cluster: &str) -> Option<Vec<Machine>> {
    let api: Api<Machine> = Api::namespaced(client.clone(), NS);
    Some(api.list(&ListParams::default().labels(&selector(cluster))).await.ok()?.items)
}

/// The control plane settled at `version`: 3 Ready, up-to-date Machines on that version,
/// none deleting, and etcd made of exactly their Nodes, all healthy. Returns the Machines.
async fn settled(mgmt: &kube::Client, workload: &kube::Client, cluster: &str, version: &str) -> Option<Vec<Machine>> {
    let kcp = Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS).get(&format!("{cluster}-cp")).await.ok()?;
    let s = kcp.status.clone()?;
    let three = Some(3);
    if s.replicas != three
        || s.ready_replicas != three
        || s.updated_replicas != three
        || s.version.as_deref() != Some(version)
        || !kcp.is_condition_true("MachinesSpecUpToDate")
    {
        return None;
    }
    let machines = control_plane_machines(mgmt, cluster).await?;
    let ok = |m: &Machine| {
        m.metadata.deletion_timestamp.is_none()
            && m.is_condition_true("Ready")
            && m.spec.version.as_deref() == Some(version)
            && m.status.as_ref().and_then(|s| s.node_ref.as_ref()).is_some()
    };
    if machines.len() != 3 || !machines.iter().all(ok) {
        return None;
    }
    let nodes: BTreeSet<String> =
        machines.iter().filter_map(|m| m.status.as_ref()?.node_ref.as_ref()?.name.clone()).collect();
    let pods = Api::<Pod>::namespaced(workload.clone(), "kube-system")
        .list(&ListParams::default().labels(etcd::ETCD_SELECTOR))
        .await
        .ok()?;
    let membership = Membership::from_pods(&pods.items);
    let members: BTreeSet<String> = membership.members.iter().map(|m| m.node.clone()).collect();
    (members == nodes && membership.healthy() == 3 && membership.leader.is_some()).then_some(machines)
}

fn names(machines: &[Machine]) -> BTreeSet<String> {
    machines.iter().map(|m| m.name_any()).collect()
}

/// What the watchers saw: the most control plane Machines at once, the fewest healthy
/// etcd members, and every breach of the bounds, at every event after their first list.
#[derive(Default)]
struct Seen {
    max_machines: usize,
    min_healthy: Option<usize>,
    breaches: Vec<String>,
    machines_synced: bool,
    etcd_synced: bool,
    /// Reasons of MachinesSpecUpToDate seen False.
    rollout_reasons: BTreeSet<String>,
}

struct Watchers {
    seen: Arc<Mutex<Seen>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Watchers {
    /// Starts watching and waits until both watches listed what exists.
    #[allow(clippy::too_many_lines)]
    async fn start(mgmt: &kube::Client, workload: &kube::Client, cluster: &str, most: usize, fewest: usize) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut tasks = Vec::new();

        let (api, s, sel) = (Api::<Machine>::namespaced(mgmt.clone(), NS), seen.clone(), selector(cluster));
        tasks.push(tokio::spawn(async move {
            let mut events = pin!(watcher(api, watcher::Config::default().labels(&sel)).default_backoff());
            let (mut live, mut listing) = (BTreeSet::new(), BTreeSet::new());
            while let Ok(Some(ev)) = events.try_next().await {
                let synced = match ev {
                    watcher::Event::Init => {
                        listing.clear();
                        false
                    }
                    watcher::Event::InitApply(m) => {
                        listing.insert(m.name_any());
                        false
                    }
                    watcher::Event::InitDone => {
                        live = std::mem::take(&mut listing);
                        true
                    }
                    watcher::Event::Apply(m) => {
                        live.insert(m.name_any());
                        true
                    }
                    watcher::Event::Delete(m) => {
                        live.remove(&m.name_any());
                        true
                    }
                };
                if synced {
                    let mut s = s.lock();
                    s.machines_synced = true;
                    s.max_machines = s.max_machines.max(live.len());
                    if live.len() > most {
                        s.breaches.push(format!("{} control plane Machines: {live:?}", live.len()));
                    }
                }
            }
        }));

        let (api, s) = (Api::<Pod>::namespaced(workload.clone(), "kube-system"), seen.clone());
        tasks.push(tokio::spawn(async move {
            let cfg = watcher::Config::default().labels(etcd::ETCD_SELECTOR);
            let mut events = pin!(watcher(api, cfg).default_backoff());
            let (mut live, mut listing): (BTreeMap<String, Pod>, BTreeMap<String, Pod>) = Default::default();
            let mut synced = false;
            while let Ok(Some(ev)) = events.try_next().await {
                match ev {
                    watcher::Event::Init => listing.clear(),
                    watcher::Event::InitApply(p) => {
                        listing.insert(p.name_any(), p);
                    }
                    watcher::Event::InitDone => {
                        live = std::mem::take(&mut listing);
                        synced = true;
                    }
                    watcher::Event::Apply(p) => {
                        live.insert(p.name_any(), p);
                    }
                    watcher::Event::Delete(p) => {
                        live.remove(&p.name_any());
                    }
                }
                if synced {
                    let pods: Vec<Pod> = live.values().cloned().collect();
                    let healthy = Membership::from_pods(&pods).healthy();
                    let mut s = s.lock();
                    s.etcd_synced = true;
                    s.min_healthy = Some(s.min_healthy.map_or(healthy, |m| m.min(healthy)));
                    if healthy < fewest {
                        s.breaches.push(format!("{healthy} healthy etcd members of {:?}", live.keys()));
                    }
                }
            }
        }));

        let (api, s, name) =
            (Api::<KubeadmControlPlane>::namespaced(mgmt.clone(), NS), seen.clone(), format!("{cluster}-cp"));
        tasks.push(tokio::spawn(async move {
            let mut events = pin!(watcher(api, watcher::Config::default()).default_backoff().applied_objects());
            while let Ok(Some(kcp)) = events.try_next().await {
                if kcp.name_any() != name {
                    continue;
                }
                if let Some(c) = kcp.get_condition("MachinesSpecUpToDate").filter(|c| c.is_false()) {
                    s.lock().rollout_reasons.insert(c.reason.clone().unwrap_or_default());
                }
            }
        }));

        let w = Watchers { seen, tasks };
        eventually("the watchers to list what exists", WAIT, || async {
            let s = w.seen.lock();
            (s.machines_synced && s.etcd_synced).then_some(())
        })
        .await;
        w
    }

    fn stop(self) -> Arc<Mutex<Seen>> {
        for t in &self.tasks {
            t.abort();
        }
        self.seen
    }
}

fn patch_kcp(kc: &Path, cluster: &str, patch: serde_json::Value) -> (bool, String, String) {
    kubectl(
        kc,
        &["patch", &v1beta1("kcp"), &format!("{cluster}-cp"), "--type", "merge", "-p", &patch.to_string()],
        None,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_plane_upgrades_one_machine_at_a_time() {
    logs();
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let mgmt = env.client();
    let cluster = "up";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(cluster, "v1.30.4", 1)));
    let before =
        eventually("3 control plane Machines at v1.30.4", WAIT, || settled(&mgmt, &workload, cluster, "v1.30.4")).await;

    let watchers = Watchers::start(&mgmt, &workload, cluster, 4, 2).await;
    let (ok, out, err) = patch_kcp(&kc, cluster, json!({"spec": {"version": "v1.31.1"}}));
    assert!(ok, "upgrade refused: {out}{err}");
    let after =
        eventually("3 control plane Machines at v1.31.1", WAIT, || settled(&mgmt, &workload, cluster, "v1.31.1")).await;
    {
        let seen = watchers.stop();
        let seen = seen.lock();
        assert!(seen.breaches.is_empty(), "bounds breached during the upgrade: {:#?}", seen.breaches);
        assert_eq!(seen.max_machines, 4, "one Machine at a time, surging by one");
        assert!(seen.min_healthy.is_some_and(|h| h >= 2), "fewest healthy etcd members: {:?}", seen.min_healthy);
        assert!(seen.rollout_reasons.contains("RollingUpdateInProgress"), "{:?}", seen.rollout_reasons);
    }
    assert!(names(&before).is_disjoint(&names(&after)), "every Machine was replaced");

    // Going back down is refused, and so is skipping a minor; both name the field.
    for (version, says) in [("v1.30.4", "downgrading"), ("v1.33.0", "one minor version at a time")] {
        let (ok, out, err) = patch_kcp(&kc, cluster, json!({"spec": {"version": version}}));
        assert!(!ok, "spec.version {version} was accepted: {out}");
        for part in ["spec.version", "v1.31.1", version, says] {
            assert!(err.contains(part), "{version}: {part:?} missing from {err}");
        }
    }
    let kcp: KubeadmControlPlane =
        Api::namespaced(mgmt.clone(), NS).get(&format!("{cluster}-cp")).await.expect("control plane");
    assert_eq!(kcp.spec.version, "v1.31.1");
}

/// Every Machine's name, once all were replaced since `before` and the plane settled.
async fn replaced(
    mgmt: &kube::Client,
    workload: &kube::Client,
    cluster: &str,
    before: &[Machine],
    what: &str,
) -> Vec<Machine> {
    let old = names(before);
    eventually(what, WAIT, || async {
        let now = settled(mgmt, workload, cluster, "v1.30.4").await?;
        names(&now).is_disjoint(&old).then_some(now)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_rotation_restart_and_certificates_roll_machines() {
    logs();
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let mgmt = env.client();
    let cluster = "ro";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(cluster, "v1.30.4", 0)));
    let first = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, "v1.30.4")).await;
    // maxSurge 0: a Machine goes before its replacement comes.
    let watchers = Watchers::start(&mgmt, &workload, cluster, 3, 2).await;

    // Template metadata and timeouts propagate in place: same Machines. The control plane
    // keeps the timeout in v1beta2's whole seconds, so its Machines show it as a Go
    // duration, as upstream's do.
    let (ok, _, err) = patch_kcp(
        &kc,
        cluster,
        json!({"spec": {"machineTemplate": {"metadata": {"labels": {"tier": "gold"}}, "nodeDrainTimeout": "5m"}}}),
    );
    assert!(ok, "{err}");
    eventually("the template's label and timeout on every Machine", WAIT, || async {
        let ms = control_plane_machines(&mgmt, cluster).await?;
        (names(&ms) == names(&first)
            && ms.iter().all(|m| {
                m.labels().get("tier").map(String::as_str) == Some("gold")
                    && m.spec.node_drain_timeout.as_deref() == Some("5m0s")
            }))
        .then_some(())
    })
    .await;
    let imms: Api<InMemoryMachine> = Api::namespaced(mgmt.clone(), NS);
    eventually("the label on the infrastructure machines", WAIT, || async {
        let list = imms.list(&ListParams::default().labels("tier=gold")).await.ok()?;
        (list.items.len() == 3).then_some(())
    })
    .await;

    // A rotated infrastructure template replaces every Machine.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&common::machine_template(&format!("{cluster}-cp-v2"), NS, "0s")));
    let (ok, _, err) = patch_kcp(
        &kc,
        cluster,
        json!({"spec": {"machineTemplate": {"infrastructureRef": {"name": format!("{cluster}-cp-v2")}}}}),
    );
    assert!(ok, "{err}");
    let second = replaced(&mgmt, &workload, cluster, &first, "Machines of the rotated template").await;
    for m in &second {
        let infra = imms.get(m.spec.infrastructure_ref.name.as_deref().unwrap_or_default()).await.expect("infra");
        assert_eq!(infra.annotations().get(CLONED_FROM_NAME_ANNOTATION), Some(&format!("{cluster}-cp-v2")));
        assert_eq!(m.labels().get("tier").map(String::as_str), Some("gold"), "new Machines carry the template");
    }

    // `drydock rollout restart` sets rolloutAfter: every Machine is replaced again.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["rollout", "restart", &format!("kubeadmcontrolplane/{cluster}-cp"), "--kubeconfig"])
        .arg(&kc)
        .output()
        .expect("drydock rollout restart");
    assert!(out.status.success(), "rollout restart failed: {out:?}");
    let third = replaced(&mgmt, &workload, cluster, &second, "Machines after the restart").await;

    // Certificates expiring within rolloutBefore.certificatesExpiryDays replace only their Machine.
    let (ok, _, err) = patch_kcp(&kc, cluster, json!({"spec": {"rolloutBefore": {"certificatesExpiryDays": 30}}}));
    assert!(ok, "{err}");
    let expiring = third[0].name_any();
    let soon = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * 10)).to_string();
    Api::<Machine>::namespaced(mgmt.clone(), NS)
        .patch(
            &expiring,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {CERTIFICATES_EXPIRY_ANNOTATION: soon}}})),
        )
        .await
        .expect("annotate");
    let fourth = eventually("the Machine with expiring certificates replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, "v1.30.4").await?;
        (!names(&now).contains(&expiring)).then_some(now)
    })
    .await;
    let kept: BTreeSet<String> = names(&third).intersection(&names(&fourth)).cloned().collect();
    assert_eq!(kept.len(), 2, "only the expiring Machine was replaced");

    let seen = watchers.stop();
    let seen = seen.lock();
    assert!(seen.breaches.is_empty(), "bounds breached: {:#?}", seen.breaches);
    assert_eq!(seen.max_machines, 3, "maxSurge 0 never adds a fourth Machine");
}
