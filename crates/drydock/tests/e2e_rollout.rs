//! Day 2 of a MachineDeployment, end to end through a real drydock instance (API server,
//! every controller and the in-memory provider, with zero startup durations): rolling
//! updates stay within maxSurge/maxUnavailable at every Machine event, OnDelete replaces
//! only what the user deletes, revisions and rollbacks through the `drydock rollout` CLI,
//! each pause variant, in-place propagation of template metadata to Machines and Nodes,
//! and minReadySeconds waited out on a paused clock.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::inmemory::InMemoryMachineTemplate;
use drydock_api::capi::keys::{
    DEPLOYMENT_NAME_LABEL, DISABLE_MACHINE_CREATE_ANNOTATION, MAX_REPLICAS_ANNOTATION, PAUSED_ANNOTATION,
    REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
};
use drydock_api::capi::owner;
use drydock_api::tenancy::LogicalClusterName;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use parking_lot::Mutex;
use serde_json::{Value, json};

use common::{Env, eventually, kubectl_ok};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(180);

/// Each test runs its own instance; one at a time keeps them within their deadlines on a
/// small machine.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A cluster from `drydock generate cluster` (one control plane machine, `workers`
/// workers, zero startup durations), without its MachineHealthCheck: these tests mark
/// Machines themselves.
fn manifest(name: &str, workers: u32) -> String {
    common::generated_cluster(name, &["--worker-machine-count", &workers.to_string()])
}

struct Fixture {
    env: Env,
    client: kube::Client,
    kubeconfig: std::path::PathBuf,
    cluster: String,
    md: String,
}

impl Fixture {
    /// Starts drydock, applies the cluster and waits for its workers to be available.
    async fn start(cluster: &str, workers: u32) -> Self {
        Self::start_on(Env::start(true).await, cluster, workers).await
    }

    async fn start_on(env: Env, cluster: &str, workers: u32) -> Self {
        let client = env.client();
        let kubeconfig = env.kubeconfig(None);
        kubectl_ok(&kubeconfig, &["apply", "-f", "-"], Some(&manifest(cluster, workers)));
        let f = Self { client, kubeconfig, cluster: cluster.to_string(), md: format!("{cluster}-md-0"), env };
        f.wait_md("the workers to be available", |md| {
            let s = md.status.as_ref();
            s.and_then(|s| s.available_replicas) == Some(workers as i32)
                && s.and_then(|s| s.updated_replicas) == Some(workers as i32)
        })
        .await;
        f
    }

    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), NS)
    }

    async fn md(&self) -> MachineDeployment {
        self.api().get(&self.md).await.expect("MachineDeployment")
    }

    async fn patch_md(&self, v: Value) {
        self.api::<MachineDeployment>()
            .patch(&self.md, &PatchParams::default(), &Patch::Merge(&v))
            .await
            .expect("patch MachineDeployment");
    }

    async fn wait_md(&self, what: &str, f: impl Fn(&MachineDeployment) -> bool) -> MachineDeployment {
        eventually(what, WAIT, || async {
            let md: MachineDeployment = self.api().get(&self.md).await.ok()?;
            f(&md).then_some(md)
        })
        .await
    }

    /// The deployment's MachineSets.
    async fn sets(&self) -> Vec<MachineSet> {
        let lp = ListParams::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={}", self.md));
        self.api::<MachineSet>().list(&lp).await.expect("list sets").items
    }

    /// The deployment's Machines.
    async fn machines(&self) -> Vec<Machine> {
        let lp = ListParams::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={}", self.md));
        self.api::<Machine>().list(&lp).await.expect("list machines").items
    }

    /// A copy of the workers' InMemoryMachineTemplate under another name.
    async fn copy_template(&self, suffix: &str) -> String {
        let original = self.api::<InMemoryMachineTemplate>().get(&self.md).await.expect("template");
        self.create_template(suffix, json!(original.spec)).await
    }

    /// An InMemoryMachineTemplate named after the workers' with `suffix`.
    async fn create_template(&self, suffix: &str, spec: Value) -> String {
        let api = self.api::<InMemoryMachineTemplate>();
        let name = format!("{}-{suffix}", self.md);
        let copy: InMemoryMachineTemplate = serde_json::from_value(json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "InMemoryMachineTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": spec,
        }))
        .expect("template copy");
        api.create(&PostParams::default(), &copy).await.expect("create template copy");
        name
    }

    /// Runs `drydock rollout ...` against this instance.
    fn rollout(&self, args: &[&str]) -> (bool, String, String) {
        run_cli(&self.kubeconfig, args)
    }

    /// The set running the infrastructure template `infra`, once its `replicas` Machines
    /// are all available, every other set is empty and no other Machine is left.
    async fn wait_rolled_out(&self, infra: &str, replicas: i32) -> MachineSet {
        eventually(&format!("the rollout to {infra}"), WAIT, || async {
            let sets = self.sets().await;
            let (new, old): (Vec<MachineSet>, Vec<MachineSet>) = sets.into_iter().partition(|s| infra_of(s) == infra);
            let new = new.into_iter().next()?;
            let st = new.status.as_ref()?;
            let settled = new.spec.replicas == Some(replicas)
                && st.replicas == Some(replicas)
                && st.available_replicas == Some(replicas)
                && old
                    .iter()
                    .all(|s| s.spec.replicas == Some(0) && s.status.as_ref().and_then(|s| s.replicas) == Some(0));
            let machines = self.machines().await;
            let all_new = machines.len() == replicas as usize
                && machines.iter().all(|m| owner::is_controlled_by(&m.metadata, &new));
            (settled && all_new).then_some(new)
        })
        .await
    }
}

fn run_cli(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .expect("drydock");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn infra_of(ms: &MachineSet) -> &str {
    ms.spec.template.spec.infrastructure_ref.name.as_deref().unwrap_or_default()
}

fn annotation<'a>(meta: &'a kube::core::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

fn label<'a>(meta: &'a kube::core::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

/// Counted as available: not being deleted, with a Node that is healthy.
fn is_available(m: &Machine) -> bool {
    m.metadata.deletion_timestamp.is_none()
        && m.status.as_ref().is_some_and(|s| s.node_ref.is_some())
        && m.is_condition_true("NodeHealthy")
}

/// What a [`Watch`] saw across every Machine event.
#[derive(Clone, Debug, Default)]
struct Seen {
    events: usize,
    max_total: usize,
    min_available: usize,
}

/// Follows the deployment's Machines event by event and records the extremes of the
/// total (deleting ones included) and the available count.
struct Watch {
    seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    /// Starts watching; returns once the initial list is in.
    async fn start(client: &kube::Client, md: &str) -> Self {
        let api: Api<Machine> = Api::namespaced(client.clone(), NS);
        let cfg = watcher::Config::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={md}"));
        let seen = Arc::new(Mutex::new(Seen { min_available: usize::MAX, ..Default::default() }));
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let s = seen.clone();
        let task = tokio::spawn(async move {
            let mut ready = Some(ready_tx);
            let mut machines: BTreeMap<String, Machine> = BTreeMap::new();
            let mut initial: BTreeMap<String, Machine> = BTreeMap::new();
            let mut events = std::pin::pin!(watcher(api, cfg));
            while let Some(ev) = events.next().await {
                let Ok(ev) = ev else { continue };
                match ev {
                    watcher::Event::Init => {
                        initial.clear();
                        continue;
                    }
                    watcher::Event::InitApply(m) => {
                        initial.insert(m.name_any(), m);
                        continue;
                    }
                    watcher::Event::InitDone => machines = std::mem::take(&mut initial),
                    watcher::Event::Apply(m) => {
                        machines.insert(m.name_any(), m);
                    }
                    watcher::Event::Delete(m) => {
                        machines.remove(&m.name_any());
                    }
                }
                let total = machines.len();
                let available = machines.values().filter(|m| is_available(m)).count();
                let mut seen = s.lock();
                seen.events += 1;
                seen.max_total = seen.max_total.max(total);
                seen.min_available = seen.min_available.min(available);
                drop(seen);
                if let Some(tx) = ready.take() {
                    let _ = tx.send(());
                }
            }
        });
        let _ = tokio::time::timeout(WAIT, ready_rx).await;
        Self { seen, task }
    }

    fn seen(&self) -> Seen {
        self.seen.lock().clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_stays_within_surge_and_availability() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("roll", 10).await;
    let v2 = f.copy_template("v2").await;

    // maxSurge 3 / maxUnavailable 2: never more than 13 Machines, never fewer than 8
    // available.
    let watch = Watch::start(&f.client, &f.md).await;
    f.patch_md(json!({"spec": {
        "strategy": {"rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}},
        "template": {"spec": {"infrastructureRef": {"name": v2}}},
    }}))
    .await;
    let new = f.wait_rolled_out(&v2, 10).await;
    let seen = watch.seen();
    drop(watch);
    assert!(seen.max_total <= 13, "more than replicas + maxSurge Machines: {seen:?}");
    assert!(seen.min_available >= 8, "fewer than replicas - maxUnavailable available: {seen:?}");
    assert!(seen.max_total > 10, "the rollout never surged: {seen:?}");
    assert_eq!(annotation(&new.metadata, REVISION_ANNOTATION), Some("2"));
    f.wait_md("the deployment to report the rollout done", |md| {
        let s = md.status.as_ref();
        s.and_then(|s| s.updated_replicas) == Some(10)
            && s.and_then(|s| s.replicas) == Some(10)
            && s.and_then(|s| s.available_replicas) == Some(10)
            && md.is_condition_true("Available")
            && annotation(&md.metadata, REVISION_ANNOTATION) == Some("2")
    })
    .await;

    // The same bounds as percentages (30% of 10 rounds up to 3, 20% down to 2), rolling
    // back to the first template (its set is reused) with a minReadySeconds to wait out.
    let watch = Watch::start(&f.client, &f.md).await;
    f.patch_md(json!({"spec": {
        "minReadySeconds": 1,
        "strategy": {"rollingUpdate": {"maxSurge": "30%", "maxUnavailable": "20%"}},
        "template": {"spec": {"infrastructureRef": {"name": f.md}}},
    }}))
    .await;
    let back = f.wait_rolled_out(&f.md, 10).await;
    let seen = watch.seen();
    drop(watch);
    assert!(seen.max_total <= 13, "more than replicas + 30% Machines: {seen:?}");
    assert!(seen.min_available >= 8, "fewer than replicas - 20% available: {seen:?}");
    assert_eq!(annotation(&back.metadata, REVISION_ANNOTATION), Some("3"));
    assert_eq!(annotation(&back.metadata, REVISION_HISTORY_ANNOTATION), Some("1"));
    assert_eq!(f.sets().await.len(), 2, "the first set was reused, not replaced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_ready_seconds_hold_availability_until_they_pass() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start_on(Env::start_paused().await, "minready", 2).await;
    // The two workers have been Ready for an hour when a third joins with a 5m minReadySeconds.
    f.env.clock.advance(Duration::from_secs(3600));
    f.patch_md(json!({"spec": {"replicas": 3, "minReadySeconds": 300}})).await;
    let counts = |md: &MachineDeployment| {
        let s = md.status.clone().unwrap_or_default();
        (s.replicas, s.ready_replicas, s.available_replicas)
    };
    f.wait_md("the third worker Ready but not yet available", |md| counts(md) == (Some(3), Some(3), Some(2))).await;

    // Just short of 5 minutes: an in-place change makes deployment and set reconcile; once
    // both observed it, their counts are decided, and the third worker is still unavailable.
    f.env.clock.advance(Duration::from_secs(290));
    f.patch_md(json!({"spec": {"template": {"metadata": {"labels": {"touched": "yes"}}}}})).await;
    f.wait_md("the deployment to observe the change", |md| {
        md.status.as_ref().and_then(|s| s.observed_generation) == md.metadata.generation
    })
    .await;
    eventually("the set to observe the change", WAIT, || async {
        let sets = f.sets().await;
        let set = sets.first()?;
        let labelled = set.spec.template.metadata.labels.as_ref()?.contains_key("touched");
        (sets.len() == 1 && labelled && set.status.as_ref()?.observed_generation == set.metadata.generation)
            .then_some(())
    })
    .await;
    assert_eq!(counts(&f.md().await), (Some(3), Some(3), Some(2)), "available before minReadySeconds passed");
    assert!(f.sets().await[0].status.as_ref().is_some_and(|s| s.available_replicas == Some(2)));

    // Past 5 minutes it is available, without anything but the clock moving.
    f.env.clock.advance(Duration::from_secs(20));
    f.wait_md("all three workers available", |md| counts(md) == (Some(3), Some(3), Some(3))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_delete_replaces_only_deleted_machines() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("ondel", 4).await;
    let v2 = f.copy_template("v2").await;
    let watch = Watch::start(&f.client, &f.md).await;
    f.patch_md(json!({"spec": {
        "strategy": {"type": "OnDelete", "rollingUpdate": null},
        "template": {"spec": {"infrastructureRef": {"name": v2}}},
    }}))
    .await;
    // The new set exists and the old one may no longer create Machines ...
    let (new, old) = eventually("the new set and a frozen old one", WAIT, || async {
        let sets = f.sets().await;
        let new = sets.iter().find(|s| infra_of(s) == v2)?.clone();
        let old = sets.iter().find(|s| infra_of(s) != v2)?.clone();
        annotation(&old.metadata, DISABLE_MACHINE_CREATE_ANNOTATION)?;
        Some((new, old))
    })
    .await;
    // ... and nothing is replaced on its own.
    assert_eq!(new.spec.replicas, Some(0));
    let before: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
    assert_eq!(before.len(), 4);
    stays("no Machine replaced without a deletion", Duration::from_secs(3), || async {
        let now: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
        now == before
    })
    .await;

    // Deleting two old Machines: the old set follows them down, the new set replaces them.
    let api = f.api::<Machine>();
    let victims: Vec<String> = before.iter().take(2).cloned().collect();
    for v in &victims {
        api.delete(v, &DeleteParams::default()).await.expect("delete machine");
    }
    eventually("two replacements in the new set", WAIT, || async {
        let machines = f.machines().await;
        let on_new = machines.iter().filter(|m| owner::is_controlled_by(&m.metadata, &new) && is_available(m)).count();
        let gone = victims.iter().all(|v| machines.iter().all(|m| &m.name_any() != v));
        let old_set: MachineSet = f.api().get(&old.name_any()).await.ok()?;
        (on_new == 2 && gone && machines.len() == 4 && old_set.spec.replicas == Some(2)).then_some(())
    })
    .await;
    // The other two old Machines are untouched.
    let untouched: BTreeSet<String> = before.iter().skip(2).cloned().collect();
    let now: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
    assert!(untouched.is_subset(&now), "an old Machine was replaced without being deleted");

    // The rest goes the same way.
    for v in &untouched {
        api.delete(v, &DeleteParams::default()).await.expect("delete machine");
    }
    f.wait_rolled_out(&v2, 4).await;
    let seen = watch.seen();
    assert!(seen.max_total <= 4, "OnDelete surged: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_mid_rollout_grows_the_new_set() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("prop", 4).await;
    // Machines of this template never finish starting: the rollout stalls half way, with
    // both sets holding Machines.
    let slow = f
        .create_template(
            "slow",
            json!({"template": {"spec": {"behaviour": {"vm": {"provisioning": {"startupDuration": "1h"}}}}}}),
        )
        .await;
    // The set records the bounds it was sized for (4 replicas, at most 6 Machines).
    f.patch_md(json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}}}})).await;
    eventually("the set to record the new bounds", WAIT, || async {
        let sets = f.sets().await;
        (annotation(&sets.first()?.metadata, MAX_REPLICAS_ANNOTATION) == Some("6")).then_some(())
    })
    .await;
    let watch = Watch::start(&f.client, &f.md).await;
    f.patch_md(json!({"spec": {"template": {"spec": {"infrastructureRef": {"name": slow}}}}})).await;
    let spec_of = |sets: &[MachineSet], slow_set: bool| {
        sets.iter().find(|s| (infra_of(s) == slow) == slow_set).and_then(|s| s.spec.replicas)
    };
    eventually("the rollout to stall at 4 old + 2 new", WAIT, || async {
        let sets = f.sets().await;
        let machines = f.machines().await;
        (spec_of(&sets, true) == Some(2) && spec_of(&sets, false) == Some(4) && machines.len() == 6).then_some(())
    })
    .await;

    // 4 -> 8 replicas (at most 10 Machines), as upstream: the new set grows by what the
    // surge allows, 2 + min(10 - 6, 8 - 2) = 6; the old set, whose Machines are all that is
    // available, keeps its 4.
    f.patch_md(json!({"spec": {"replicas": 8}})).await;
    eventually("the new set to take the new replicas", WAIT, || async {
        let sets = f.sets().await;
        let machines = f.machines().await;
        (spec_of(&sets, false) == Some(4) && spec_of(&sets, true) == Some(6) && machines.len() == 10).then_some(())
    })
    .await;

    // Rolling back finishes on the first set; the stalled Machines, never available, go
    // first and without costing availability.
    f.patch_md(json!({"spec": {"template": {"spec": {"infrastructureRef": {"name": f.md}}}}})).await;
    f.wait_rolled_out(&f.md, 8).await;
    let seen = watch.seen();
    assert!(seen.max_total <= 10, "more than replicas + maxSurge Machines: {seen:?}");
    assert!(seen.min_available >= 4, "availability dropped during the rollout: {seen:?}");
}

/// Polls `f` for `period`, panicking if it ever turns false (for things that must not
/// happen).
async fn stays<F, Fut>(what: &str, period: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let end = tokio::time::Instant::now() + period;
    while tokio::time::Instant::now() < end {
        assert!(f().await, "{what}: broken");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revisions_rollback_and_history_through_the_cli() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("rev", 2).await;
    let (a, b) = (f.md.clone(), f.copy_template("b").await);
    let target = format!("machinedeployment/{}", f.md);
    let change = |infra: &str, cause: &str| {
        json!({
            "metadata": {"annotations": {"kubernetes.io/change-cause": cause}},
            "spec": {"template": {"spec": {"infrastructureRef": {"name": infra}}}},
        })
    };

    // A (revision 1) -> B (revision 2) -> A again: A's set is reused as revision 3 and
    // remembers revision 1.
    f.patch_md(change(&b, "to b")).await;
    let set_b = f.wait_rolled_out(&b, 2).await;
    assert_eq!(annotation(&set_b.metadata, REVISION_ANNOTATION), Some("2"));
    assert_eq!(annotation(&set_b.metadata, "kubernetes.io/change-cause"), Some("to b"));
    f.patch_md(change(&a, "back to a")).await;
    let set_a = f.wait_rolled_out(&a, 2).await;
    assert_eq!(annotation(&set_a.metadata, REVISION_ANNOTATION), Some("3"));
    assert_eq!(annotation(&set_a.metadata, REVISION_HISTORY_ANNOTATION), Some("1"));
    assert_eq!(annotation(&set_a.metadata, "kubernetes.io/change-cause"), Some("back to a"));
    assert_eq!(f.sets().await.len(), 2);
    f.wait_md("the deployment at revision 3", |md| annotation(&md.metadata, REVISION_ANNOTATION) == Some("3")).await;

    // The history lists every revision with its change cause.
    let (ok, out, err) = f.rollout(&["rollout", "history", &target]);
    assert!(ok, "rollout history failed: {out}\n{err}");
    for needle in ["to b", "back to a", "same MachineSet as revision 3"] {
        assert!(out.contains(needle), "history lacks {needle:?}:\n{out}");
    }

    // Revision 1 lives only in A's revision-history, yet undo reaches it (A is already
    // current: the template stays A, no new set).
    let (ok, out, err) = f.rollout(&["rollout", "undo", &target, "--to-revision", "1"]);
    assert!(ok, "undo to 1 failed: {out}\n{err}");
    let md = f.md().await;
    assert_eq!(md.spec.template.spec.infrastructure_ref.name.as_deref(), Some(a.as_str()));
    assert_eq!(f.sets().await.len(), 2);

    // Back to revision 2: B's set is reused as revision 4 and remembers 2.
    let (ok, out, err) = f.rollout(&["rollout", "undo", &target, "--to-revision", "2"]);
    assert!(ok, "undo to 2 failed: {out}\n{err}");
    let set_b = f.wait_rolled_out(&b, 2).await;
    assert_eq!(annotation(&set_b.metadata, REVISION_ANNOTATION), Some("4"));
    assert_eq!(annotation(&set_b.metadata, REVISION_HISTORY_ANNOTATION), Some("2"));
    assert_eq!(f.sets().await.len(), 2, "undo reused the set instead of creating one");
    f.wait_md("the deployment at revision 4", |md| annotation(&md.metadata, REVISION_ANNOTATION) == Some("4")).await;

    // A restart (rolloutAfter = now) replaces every Machine with the same template: a
    // new set, revision 5.
    let before: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
    let (ok, out, err) = f.rollout(&["rollout", "restart", &target]);
    assert!(ok, "rollout restart failed: {out}\n{err}");
    eventually("the restart to replace every Machine", WAIT, || async {
        let sets = f.sets().await;
        let new = sets.iter().find(|s| annotation(&s.metadata, REVISION_ANNOTATION) == Some("5"))?;
        let machines = f.machines().await;
        let done = infra_of(new) == b
            && new.status.as_ref()?.available_replicas == Some(2)
            && machines.len() == 2
            && machines.iter().all(|m| owner::is_controlled_by(&m.metadata, new))
            && machines.iter().all(|m| !before.contains(&m.name_any()));
        done.then_some(())
    })
    .await;
    // Complete: old sets beyond revisionHistoryLimit (1) are deleted (the oldest; both
    // old sets may have been created in the same second, so which one is not asserted).
    eventually("an old set to be cleaned up", WAIT, || async {
        let sets = f.sets().await;
        let current = sets.iter().any(|s| annotation(&s.metadata, REVISION_ANNOTATION) == Some("5"));
        (sets.len() == 2 && current).then_some(())
    })
    .await;
}

fn paused_reason<K: HasConditions>(obj: &K) -> Option<String> {
    obj.get_condition("Paused").filter(|c| c.is_true()).and_then(|c| c.reason.clone())
}

#[allow(clippy::too_many_lines)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_pause_stops_exactly_what_it_should() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("pause", 2).await;
    let v2 = f.copy_template("v2").await;
    let target = format!("machinedeployment/{}", f.md);
    let first = f.sets().await.into_iter().next().expect("the first set");

    // 1. spec.paused holds the rollout only: a template change waits, scaling goes on.
    let (ok, out, err) = f.rollout(&["rollout", "pause", &target]);
    assert!(ok, "rollout pause failed: {out}\n{err}");
    f.wait_md("the RolloutPaused condition", |md| paused_reason(md).as_deref() == Some("RolloutPaused")).await;
    f.patch_md(json!({"spec": {"replicas": 3, "template": {"spec": {"infrastructureRef": {"name": v2}}}}})).await;
    let md = f.md().await;
    let generation = md.metadata.generation;
    f.wait_md("the paused deployment to scale its set", |md| {
        md.status.as_ref().and_then(|s| s.observed_generation) == generation
            && md.status.as_ref().and_then(|s| s.available_replicas) == Some(3)
    })
    .await;
    let sets = f.sets().await;
    assert_eq!(sets.len(), 1, "a paused rollout created a MachineSet");
    assert_eq!(sets[0].spec.replicas, Some(3));
    let (ok, out, err) = f.rollout(&["rollout", "resume", &target]);
    assert!(ok, "rollout resume failed: {out}\n{err}");
    let current = f.wait_rolled_out(&v2, 3).await;
    let md = f.wait_md("the Paused condition to go", |md| paused_reason(md).is_none()).await;
    assert!(md.get_condition("Paused").is_none());
    assert_ne!(current.name_any(), first.name_any());

    // 2. The annotation on the deployment stops the deployment, not its set.
    f.patch_md(json!({"metadata": {"annotations": {PAUSED_ANNOTATION: "true"}}})).await;
    f.wait_md("the AnnotationPaused condition", |md| paused_reason(md).as_deref() == Some("AnnotationPaused")).await;
    f.patch_md(json!({"spec": {"replicas": 4}})).await;
    // The set still replaces a deleted Machine ...
    let victim = f
        .machines()
        .await
        .into_iter()
        .find(|m| owner::is_controlled_by(&m.metadata, &current))
        .expect("a Machine")
        .name_any();
    f.api::<Machine>().delete(&victim, &DeleteParams::default()).await.expect("delete machine");
    eventually("the set to replace the deleted Machine", WAIT, || async {
        let machines = f.machines().await;
        let mine: Vec<&Machine> = machines.iter().filter(|m| owner::is_controlled_by(&m.metadata, &current)).collect();
        (mine.len() == 3 && mine.iter().all(|m| m.name_any() != victim && is_available(m))).then_some(())
    })
    .await;
    // ... while the paused deployment did not scale it.
    let set: MachineSet = f.api().get(&current.name_any()).await.expect("set");
    assert_eq!(set.spec.replicas, Some(3), "an annotation-paused deployment scaled its set");
    assert_ne!(f.md().await.status.and_then(|s| s.observed_generation), f.md().await.metadata.generation);
    f.patch_md(json!({"metadata": {"annotations": {PAUSED_ANNOTATION: null}}})).await;
    f.wait_md("the resumed deployment to scale to 4", |md| {
        paused_reason(md).is_none() && md.status.as_ref().and_then(|s| s.available_replicas) == Some(4)
    })
    .await;

    // 3. The annotation on the set stops the set: a deleted Machine is not replaced.
    let sets: Api<MachineSet> = f.api();
    let set_name = current.name_any();
    let annotate = |v: Value| {
        let sets = sets.clone();
        let name = set_name.clone();
        async move {
            sets.patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"annotations": {PAUSED_ANNOTATION: v}}})),
            )
            .await
            .expect("annotate set");
        }
    };
    annotate(json!("true")).await;
    eventually("the set's AnnotationPaused condition", WAIT, || async {
        let s: MachineSet = f.api().get(&set_name).await.ok()?;
        (paused_reason(&s).as_deref() == Some("AnnotationPaused")).then_some(())
    })
    .await;
    let victim = f.machines().await[0].name_any();
    f.api::<Machine>().delete(&victim, &DeleteParams::default()).await.expect("delete machine");
    eventually("the deleted Machine to be gone", WAIT, || async {
        f.machines().await.iter().all(|m| m.name_any() != victim).then_some(())
    })
    .await;
    stays("a paused set creates nothing", Duration::from_secs(3), || async { f.machines().await.len() == 3 }).await;
    annotate(Value::Null).await;
    eventually("the resumed set to replace it", WAIT, || async {
        let s: MachineSet = f.api().get(&set_name).await.ok()?;
        let machines = f.machines().await;
        (paused_reason(&s).is_none() && machines.len() == 4 && machines.iter().filter(|m| is_available(m)).count() == 4)
            .then_some(())
    })
    .await;

    // 4. Cluster spec.paused stops everything of the cluster.
    let clusters: Api<Cluster> = f.api();
    let pause_cluster = |paused: bool| {
        let clusters = clusters.clone();
        let name = f.cluster.clone();
        async move {
            clusters
                .patch(&name, &PatchParams::default(), &Patch::Merge(&json!({"spec": {"paused": paused}})))
                .await
                .expect("pause cluster");
        }
    };
    pause_cluster(true).await;
    f.wait_md("the deployment's ClusterPaused condition", |md| paused_reason(md).as_deref() == Some("ClusterPaused"))
        .await;
    eventually("the set's ClusterPaused condition", WAIT, || async {
        let s: MachineSet = f.api().get(&set_name).await.ok()?;
        (paused_reason(&s).as_deref() == Some("ClusterPaused")).then_some(())
    })
    .await;
    f.patch_md(json!({"spec": {"replicas": 5}})).await;
    stays("a paused cluster's deployment does not scale", Duration::from_secs(3), || async {
        let s: MachineSet = f.api().get(&set_name).await.expect("set");
        s.spec.replicas == Some(4) && f.machines().await.len() == 4
    })
    .await;
    pause_cluster(false).await;
    f.wait_md("everything to resume", |md| {
        paused_reason(md).is_none() && md.status.as_ref().and_then(|s| s.available_replicas) == Some(5)
    })
    .await;
    let s: MachineSet = f.api().get(&set_name).await.expect("set");
    assert!(paused_reason(&s).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_metadata_propagates_in_place_to_machines_and_nodes() {
    let _serial = SERIAL.lock().await;
    let f = Fixture::start("meta", 2).await;
    let before: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
    let set = f.sets().await.into_iter().next().expect("set");
    f.patch_md(json!({"spec": {"template": {
        "metadata": {
            "labels": {"node-role.kubernetes.io/gpu": "", "tier": "gold"},
            "annotations": {"example.com/note": "in place"},
        },
        "spec": {"nodeDrainTimeout": "5m", "nodeDeletionTimeout": "30s"},
    }}}))
    .await;
    eventually("labels, annotations and timeouts on the Machines", WAIT, || async {
        let machines = f.machines().await;
        machines
            .iter()
            .all(|m| {
                label(&m.metadata, "tier") == Some("gold")
                    && label(&m.metadata, "node-role.kubernetes.io/gpu") == Some("")
                    && annotation(&m.metadata, "example.com/note") == Some("in place")
                    // Stored in v1beta2 (whole seconds), spelt as Go prints a duration.
                    && m.spec.node_drain_timeout.as_deref() == Some("5m0s")
                    && m.spec.node_deletion_timeout.as_deref() == Some("30s")
            })
            .then_some(())
    })
    .await;
    let workload: Api<Node> =
        Api::all(f.env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, &f.cluster))));
    let nodes: Vec<String> =
        f.machines().await.iter().filter_map(|m| m.status.as_ref()?.node_ref.as_ref()?.name.clone()).collect();
    assert_eq!(nodes.len(), 2);
    eventually("the node role on the Nodes", WAIT, || async {
        for n in &nodes {
            let node = workload.get(n).await.ok()?;
            label(&node.metadata, "node-role.kubernetes.io/gpu")?;
        }
        Some(())
    })
    .await;
    // Nothing was replaced, no set or revision was added.
    let after: BTreeSet<String> = f.machines().await.iter().map(|m| m.name_any()).collect();
    assert_eq!(after, before, "in-place changes replaced Machines");
    let sets = f.sets().await;
    assert_eq!(sets.len(), 1);
    assert_eq!(sets[0].name_any(), set.name_any());
    assert_eq!(annotation(&sets[0].metadata, REVISION_ANNOTATION), Some("1"));
    assert_eq!(annotation(&f.md().await.metadata, REVISION_ANNOTATION), Some("1"));
}
