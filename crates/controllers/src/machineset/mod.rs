//! MachineSet controller: keeps `spec.replicas` Machines of one template, each with its
//! own infrastructure machine and bootstrap config cloned from the template's.
//!
//! One reconcile: check pause (see [`pause`] for the model); default the cluster label,
//! Cluster owner and selector; make sure the templates exist and belong to the Cluster;
//! sort the cached Machines of the set's cluster into owned, to adopt and to release;
//! remediate unhealthy Machines ([`remediation`]); propagate labels, annotations and
//! timeouts in place, and give the Machines of a deployment's set their v1beta2
//! `UpToDate` ([`v1beta2`]); create (after the [`preflight`] checks) or delete Machines;
//! write status. Only differences are written, so reconciling a settled set writes nothing.
//! Machines of a deleted set go with it through garbage collection (they carry its
//! controller reference).

pub mod delete_policy;
pub mod machines;
pub mod preflight;
pub mod propagate;
pub mod remediation;
pub mod replicas;
pub mod status;
pub mod v1beta2;
pub mod wake;

use std::sync::Arc;
use std::time::Duration;

use drydock_api::capi::conditions::{HasConditions, time_at};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_SET_FINALIZER, REVISION_ANNOTATION};
use drydock_api::capi::kubeadm::v1beta2::KubeadmControlPlane;
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::Observed;
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;

use self::machines::Selection;
use self::preflight::Waiting;
use self::remediation::Outcome;
use self::replicas::Scale;
use crate::framework::apply;
use crate::framework::cascade;
use crate::framework::cluster_index::ClusterIndex;
use crate::framework::expectations::{Expectations, Outstanding};
use crate::framework::index::Changes;
use crate::framework::machine_template::{self as template, deployment_name};
use crate::framework::objects::CAPI_GROUP;
use crate::framework::pause::{self, ClusterPauses, Pause};
use crate::framework::propagate::{Managers, sync_referenced};
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue, key_of};
use crate::framework::select::parse_selector;
use crate::framework::templates::{self, TemplateOwners};
use crate::framework::write::{self, Writer};
use crate::framework::{Error, Result};
use crate::{Context, Running};

pub const NAME: &str = "machineset";

/// Writes MachineSets and their Machines.
pub(crate) static WRITER: Writer = Writer::new(NAME);

/// How often a set held by preflight checks looks again when its control plane is not a
/// cached kind (a KubeadmControlPlane's changes wake it instead).
const PREFLIGHT_RECHECK: Duration = Duration::from_secs(15);

/// What the MachineSet reconciler keeps between reconciles.
pub struct State {
    pub ctx: Arc<Context>,
    /// Cached Machines by namespace and cluster.
    pub machines: Arc<ClusterIndex<Machine>>,
    /// Cached MachineSets by namespace and cluster (to map orphans and resumed Clusters).
    pub sets: Arc<ClusterIndex<MachineSet>>,
    pub expectations: Expectations,
    pub templates: TemplateOwners,
    /// Sets held by preflight checks, woken by their control plane and Cluster.
    pub waiting: Arc<Waiting>,
}

/// `namespace/name` of a MachineSet (the key of its pending changes).
pub fn key(ms: &MachineSet) -> String {
    key_of(ms)
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let queue = Queue::new(NAME);
    let st = Arc::new(State {
        ctx: ctx.clone(),
        machines: ClusterIndex::new(ctx.informers.machines.store.clone(), ctx.informers.machines.listed.clone()),
        sets: ClusterIndex::new(ctx.informers.machine_sets.store.clone(), ctx.informers.machine_sets.listed.clone()),
        expectations: Expectations::default(),
        templates: TemplateOwners::default(),
        waiting: Arc::new(Waiting::default()),
    });
    let trigger = queue.track(ctx.informers.machine_sets.subscribe()).map(st.sets.recorder());
    let (wake, held) = wake::Wake::new(
        &st.machines,
        &st.sets,
        ctx.informers.machines.store.clone(),
        ctx.informers.machine_sets.store.clone(),
    );
    let on_machine = queue.map_to(move |m: &Machine| wake.sets_of(m));
    let (sets, waiting, pauses) = (st.sets.clone(), st.waiting.clone(), ClusterPauses::default());
    let on_cluster = queue.map_to(move |c: &Cluster| {
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        let name = c.metadata.name.as_deref().unwrap_or_default();
        if pauses.changed(c) {
            return sets.list(ns, name).iter().map(|ms| ObjectRef::from_obj(&**ms)).collect();
        }
        // The Cluster's skip-preflight-checks annotation may have changed.
        refs(ns, waiting.of(ns, name))
    });
    let waiting = st.waiting.clone();
    let on_control_plane = queue.map_to(move |kcp: &KubeadmControlPlane| {
        let ns = kcp.metadata.namespace.as_deref().unwrap_or_default();
        match cluster_of(&kcp.metadata) {
            Some(cluster) => refs(ns, waiting.of(ns, cluster)),
            None => Vec::new(),
        }
    });
    let (sets, md_store, templates) =
        (st.sets.clone(), ctx.informers.machine_deployments.store.clone(), Changes::default());
    let on_deployment = queue.map_to(move |md: &MachineDeployment| {
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(n, m)| md_store.get(&ObjectRef::new(m).within(n)).is_some());
        if !templates.changed(key_of(md), rollout_digest(md), md_store.len(), exists) {
            return Vec::new();
        }
        let (ns, name) = (md.metadata.namespace.as_deref().unwrap_or_default(), md.metadata.name.as_deref());
        let sets = sets.list(ns, &md.spec.cluster_name);
        sets.iter().filter(|ms| deployment_name(ms) == name).map(|ms| ObjectRef::from_obj(&**ms)).collect()
    });
    let c = Controller::for_shared_stream(trigger, ctx.informers.machine_sets.store.clone())
        .watches_shared_stream(ctx.informers.machines.subscribe(), on_machine)
        .watches_shared_stream(ctx.informers.clusters.subscribe(), on_cluster)
        .watches_shared_stream(ctx.informers.control_planes.subscribe(), on_control_plane)
        .watches_shared_stream(ctx.informers.machine_deployments.subscribe(), on_deployment)
        .reconcile_on(queue.track_refs(held));
    let concurrency = ctx.settings.machineset_concurrency;
    Box::pin(runner::run(NAME, c, queue, concurrency, ctx.clock().clone(), st, reconcile))
}

fn refs(ns: &str, names: Vec<String>) -> Vec<ObjectRef<MachineSet>> {
    names.iter().map(|n| ObjectRef::new(n).within(ns)).collect()
}

/// The Cluster a control plane belongs to: its cluster-name label, else its Cluster owner.
fn cluster_of(meta: &kube::core::ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .map(String::as_str)
        .or_else(|| owner::find_owner(meta, CAPI_GROUP, "Cluster").map(|r| r.name.as_str()))
}

/// What of a MachineDeployment decides whether its sets' Machines are up to date: the
/// template's rollout fields, `rolloutAfter`, and the revision (which moves when
/// `rolloutAfter` passes). The deployment's other changes (mostly status) wake no set.
fn rollout_digest(md: &MachineDeployment) -> (u32, Option<Timestamp>, Option<String>) {
    let revision = md.metadata.annotations.as_ref().and_then(|a| a.get(REVISION_ANNOTATION)).cloned();
    let after = md.spec.rollout.as_ref().and_then(|r| r.after.as_ref()).map(|t| t.0);
    (crate::framework::machine_template::hash(&md.spec.template), after, revision)
}

/// The name of the MachineDeployment the set belongs to (its owner, else its
/// deployment-name label).
/// The MachineDeployment the set belongs to (its owner, else its deployment-name label).
pub fn owning_deployment(st: &State, ms: &MachineSet) -> Option<Arc<MachineDeployment>> {
    let name = deployment_name(ms)?;
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    st.ctx.informers.machine_deployments.store.get(&ObjectRef::new(name).within(ns))
}

async fn reconcile(ms: Arc<MachineSet>, st: Arc<State>) -> Result<Requeue> {
    let key = key(&ms);
    let ns = ms.metadata.namespace.clone().unwrap_or_default();
    let name = ms.metadata.name.clone().unwrap_or_default();
    let cluster_name = ms.spec.cluster_name.clone();
    if ms.metadata.deletion_timestamp.is_some() {
        st.expectations.forget(&key);
        st.waiting.set(&ns, &cluster_name, &name, false);
        st.machines.ensure_seeded().await;
        let machines = st.machines.list(&ns, &cluster_name);
        let (api, machines_api) = (st.ctx.api::<MachineSet>(&ns), st.ctx.api::<Machine>(&ns));
        let now = st.ctx.clock().condition_time();
        let ms = cascade::report_deleting(&WRITER, &api, &ms, &machines, v1beta2::deleting, &now).await?;
        return cascade::finalize(&WRITER, &api, &ms, MACHINE_SET_FINALIZER, &machines_api, &machines).await;
    }
    st.machines.ensure_seeded().await;
    st.ctx.informers.clusters.ready().await;
    let cluster = st.ctx.cluster(&ns, &cluster_name)?;
    let api: Api<MachineSet> = st.ctx.api(&ns);
    let mut want = (*ms).clone();
    let paused = Pause::of(&cluster, &ms.metadata, false);
    let cond_time = st.ctx.clock().condition_time();
    pause::set_condition(&mut want, paused, &cluster, cond_time.clone());
    if paused.is_some() {
        st.waiting.set(&ns, &cluster_name, &name, false);
        if want != *ms {
            WRITER.apply(&api, &ms, &want).await?;
        }
        return Ok(Requeue::await_change());
    }

    default_metadata(&mut want, &cluster);
    ensure_templates(&st, &want, &cluster).await?;
    let selector = parse_selector(&want)?;
    let mut selection = machines::select(&want, &selector, st.machines.list(&ns, &cluster_name));
    adopt_and_release(&st, &want, &mut selection).await?;
    let owned = selection.owned;

    let mut pending = outstanding(&st, &key, &owned);
    let remediated = {
        let deleting = |m: &Machine| is_deleting(m, &pending);
        remediation::reconcile(&st, &ms, &cluster, &owned, deleting).await?
    };
    if remediated == Outcome::Deleted {
        pending = outstanding(&st, &key, &owned);
    }
    let now = st.ctx.clock().now();
    let up_to_date = owning_deployment(&st, &want).map(|md| template::machine_up_to_date(&want, &md, now));
    let owned = sync_machines(&st, &want, &owned, up_to_date.as_ref(), &time_at(now)).await?;
    let scaled = replicas::sync(&st, &mut want, &ms, &cluster, &owned, &pending, now).await;

    let (counters, next_available) = status::count(&want, &owned, now);
    let (v1beta2_counters, next_v1beta2_available) = v1beta2::count(&want, &owned, now);
    let cond_time = time_at(now);
    let generation = want.metadata.generation;
    status::set_counters(&mut want, counters, selector.to_query(), generation);
    let desired = want.spec.replicas.unwrap_or(1);
    status::set_resized(&mut want, desired, counters, cond_time.clone());
    status::set_machines_ready(&mut want, &owned, cond_time.clone());
    want.set_ready_summary(status::READY_SUMMARY, cond_time.clone());
    let remediates = !is_old_revision(&st, &want);
    v1beta2::set(&mut want, &owned, v1beta2_counters, remediates, &cond_time);
    // Comparing is much cheaper than the serialisation a diff needs; most reconciles
    // change nothing.
    if want != *ms {
        WRITER.apply(&api, &ms, &want).await?;
    }
    let scaled = scaled?;

    let held = scaled == Scale::Held || remediated == Outcome::Held;
    st.waiting.set(&ns, &cluster_name, &name, held);
    let recheck = (held && !kcp_managed(&cluster)).then_some(PREFLIGHT_RECHECK);
    let requeue = [next_available, next_v1beta2_available, pending.expires_in, recheck].into_iter().flatten().min();
    Ok(Requeue::after_opt(requeue.map(|d| d.max(Duration::from_millis(100)))))
}

/// True when the Machine is going: marked deleted in the cache, or deleted by this
/// controller and not cached as such yet.
fn is_deleting(m: &Machine, pending: &Outstanding) -> bool {
    m.metadata.deletion_timestamp.is_some() || m.metadata.name.as_ref().is_some_and(|n| pending.deletes.contains(n))
}

/// True when the Cluster's control plane is a KubeadmControlPlane, whose changes wake the
/// sets waiting on it.
fn kcp_managed(cluster: &Cluster) -> bool {
    cluster
        .spec
        .control_plane_ref
        .as_ref()
        .is_some_and(|r| r.is_kind("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"))
}

/// The cluster-name label, the Cluster owner of a standalone set, and the cluster-name in
/// the selector and the template labels (so the set never selects another cluster's
/// Machines).
fn default_metadata(ms: &mut MachineSet, cluster: &Cluster) {
    let cluster_name = ms.spec.cluster_name.clone();
    ms.metadata.labels.get_or_insert_with(Default::default).insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
    // Written with the first change of the set, not on a write of its own.
    write::add_finalizer(ms, MACHINE_SET_FINALIZER);
    let in_deployment = owner::has_owner(&ms.metadata, CAPI_GROUP, "MachineDeployment")
        || ms.metadata.labels.as_ref().is_some_and(|l| l.contains_key(DEPLOYMENT_NAME_LABEL));
    if !in_deployment
        && !owner::has_owner(&ms.metadata, CAPI_GROUP, "Cluster")
        && let Some(r) = owner::owner_ref(cluster)
    {
        owner::ensure_owner_ref(&mut ms.metadata, r);
    }
    ms.spec
        .selector
        .match_labels
        .get_or_insert_with(Default::default)
        .insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
    ms.spec
        .template
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(CLUSTER_NAME_LABEL.into(), cluster_name);
}

/// Ensures the templates exist and belong to the Cluster. A missing template is an error,
/// except for an old revision of a deployment: it never creates Machines again, so its
/// templates may have been deleted.
async fn ensure_templates(st: &State, ms: &MachineSet, cluster: &Cluster) -> Result<()> {
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let tpl = &ms.spec.template.spec;
    let refs = [Some(&tpl.infrastructure_ref), tpl.bootstrap.config_ref.as_ref()];
    for r in refs.into_iter().flatten() {
        if !templates::is_template(r) {
            continue;
        }
        let found = st.templates.ensure_versioned(&st.ctx, NAME, ns, r, cluster).await?;
        if !found && !is_old_revision(st, ms) {
            return Err(Error::Missing(format!("{} {ns}/{}", r.kind, r.name)));
        }
    }
    Ok(())
}

/// True when the set belongs to a MachineDeployment whose revision is not the set's.
fn is_old_revision(st: &State, ms: &MachineSet) -> bool {
    let revision = |annotations: Option<&std::collections::BTreeMap<String, String>>| {
        annotations.and_then(|a| a.get(REVISION_ANNOTATION)).cloned()
    };
    owning_deployment(st, ms)
        .is_some_and(|md| revision(md.metadata.annotations.as_ref()) != revision(ms.metadata.annotations.as_ref()))
}

/// Takes orphans that match the selector and lets go of Machines that no longer match.
async fn adopt_and_release(st: &State, ms: &MachineSet, sel: &mut Selection) -> Result<()> {
    let Some(controller_ref) = owner::controller_ref(ms) else {
        return Ok(());
    };
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<Machine> = st.ctx.api(ns);
    for m in std::mem::take(&mut sel.adopt) {
        let mut want = (*m).clone();
        owner::ensure_owner_ref(&mut want.metadata, controller_ref.clone());
        let name = m.metadata.name.clone().unwrap_or_default();
        match WRITER.apply(&api, &m, &want).await {
            Ok(out) => {
                st.ctx.events.normal(ms, "SuccessfulAdopt", format!("Adopted Machine {name:?}")).await;
                sel.owned.push(Arc::new(out.or_wanted(&want)?));
            }
            Err(e) => {
                st.ctx.events.warning(ms, "FailedAdopt", format!("Failed to adopt Machine {name:?}: {e}")).await;
                return Err(e);
            }
        }
    }
    for m in std::mem::take(&mut sel.release) {
        let mut want = (*m).clone();
        owner::remove_owner_ref(&mut want.metadata, &controller_ref);
        match WRITER.apply(&api, &m, &want).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    sel.owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(())
}

/// Pending creations and deletions of this set that the cache does not show yet.
fn outstanding(st: &State, key: &str, owned: &[Arc<Machine>]) -> Outstanding {
    let find = |name: &str| owned.iter().find(|m| m.metadata.name.as_deref() == Some(name));
    st.expectations.outstanding(
        key,
        |name| find(name).is_some(),
        |name| find(name).is_none_or(|m| m.metadata.deletion_timestamp.is_some()),
    )
}

/// Propagates the set's labels, annotations and timeouts to its Machines and their
/// infrastructure machines and bootstrap configs, and sets `up_to_date` (a deployment's
/// set only) on the live ones where it changed. Returns the Machines as they are now.
async fn sync_machines(
    st: &State,
    ms: &MachineSet,
    owned: &[Arc<Machine>],
    up_to_date: Option<&Observed>,
    now: &Time,
) -> Result<Vec<Arc<Machine>>> {
    use std::borrow::Cow;
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<Machine> = st.ctx.api(ns);
    let wanted = propagate::propagated(ms);
    let who = Managers { controller: NAME, manager: propagate::METADATA_MANAGER };
    let mut out = Vec::with_capacity(owned.len());
    for m in owned {
        if m.metadata.deletion_timestamp.is_some() {
            if !wanted.timeouts.is_applied(&m.spec) {
                match WRITER.apply(&api, m, &wanted.deleting(m)).await {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
            }
            out.push(m.clone());
            continue;
        }
        let mut current = Cow::Borrowed(m.as_ref());
        if propagate::needs_finalizer(m) {
            let finalized = propagate::with_finalizer(m);
            match WRITER.apply(&api, m, &finalized).await {
                Ok(written) => current = Cow::Owned(written.or_wanted(&finalized)?),
                // Gone meanwhile: counted as the cache shows it until the cache catches up.
                Err(e) if e.is_not_found() => {
                    out.push(m.clone());
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        let applied = wanted.would_change(&current, propagate::MANAGER);
        if applied {
            let config = wanted.config(&current);
            match apply::apply(&api, NAME, &current.metadata, propagate::MANAGER, &config).await {
                // The status write below is conditional on this version.
                Ok(written) => current = Cow::Owned(written),
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    out.push(m.clone());
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        }
        let refs = [Some(&m.spec.infrastructure_ref), m.spec.bootstrap.config_ref.as_ref()];
        for r in refs.into_iter().flatten() {
            sync_referenced(&st.ctx, who, ns, r, &wanted.labels, &wanted.annotations, applied).await?;
        }
        if let Some(want) = up_to_date.and_then(|u| v1beta2::with_up_to_date(&current, u, now)) {
            // Conditional: the Machine controller writes the rest of the list. A conflict
            // means a newer Machine is on its way through the watch, which wakes the set
            // again; failing here would hold back the set's status (its replicas, which
            // the deployment's rollout budgets with) behind a busy Machine.
            match WRITER.write_status(&api, &current, &want).await {
                Ok(written) => current = Cow::Owned(written.unwrap_or(want)),
                Err(e) if e.is_gone() || e.is_conflict() => {
                    out.push(m.clone());
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        out.push(match current {
            Cow::Borrowed(_) => m.clone(),
            Cow::Owned(o) => Arc::new(o),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::informer::Listed;
    use crate::framework::select::owners_of;
    use drydock_api::capi::core::v1beta2::MachineSetSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher::Event;

    fn set(name: &str, uid: &str, pool: &str) -> MachineSet {
        let mut ms = MachineSet::new(
            name,
            MachineSetSpec {
                cluster_name: "c1".into(),
                selector: LabelSelector {
                    match_labels: Some([("pool".to_string(), pool.to_string())].into()),
                    match_expressions: None,
                },
                ..Default::default()
            },
        );
        ms.metadata.namespace = Some("ns".into());
        ms.metadata.uid = Some(uid.into());
        ms
    }

    fn machine(pool: &str) -> Machine {
        let mut m = Machine::new(
            "m",
            drydock_api::capi::core::v1beta2::MachineSpec { cluster_name: "c1".into(), ..Default::default() },
        );
        m.metadata.namespace = Some("ns".into());
        m.metadata.labels = Some([("pool".to_string(), pool.to_string())].into());
        m
    }

    #[tokio::test]
    async fn machine_events_go_to_the_controller_or_selecting_sets() {
        let mut writer: Writer<MachineSet> = Writer::default();
        let (a, b) = (set("a", "uid-a", "x"), set("b", "uid-b", "y"));
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(a.clone()));
        writer.apply_watcher_event(&Event::InitApply(b.clone()));
        writer.apply_watcher_event(&Event::InitDone);
        let (raise, listed) = Listed::channel();
        raise.send_replace(true);
        let index = ClusterIndex::new(writer.as_reader(), listed);
        index.ensure_seeded().await;
        let names = |refs: Vec<ObjectRef<MachineSet>>| -> Vec<String> { refs.into_iter().map(|r| r.name).collect() };

        // An orphan goes to the sets selecting it.
        assert_eq!(names(owners_of(&machine("y"), "MachineSet", &index)), ["b"]);
        // A controlled Machine goes to its controller only, selected or not.
        let mut owned = machine("y");
        owned.metadata.owner_references = owner::controller_ref(&a).map(|r| vec![r]);
        assert_eq!(names(owners_of(&owned, "MachineSet", &index)), ["a"]);
        // Controlled by something else, or a deleting orphan: nobody.
        let mut other = machine("y");
        let mut cluster = Cluster::new("c1", Default::default());
        cluster.metadata.uid = Some("uid-c1".into());
        other.metadata.owner_references = owner::controller_ref(&cluster).map(|r| vec![r]);
        assert!(owners_of(&other, "MachineSet", &index).is_empty());
        let mut deleting = machine("y");
        deleting.metadata.deletion_timestamp = Some(time_at(jiff::Timestamp::now()));
        assert!(owners_of(&deleting, "MachineSet", &index).is_empty());
    }
}
