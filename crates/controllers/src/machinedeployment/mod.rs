//! MachineDeployment controller: runs a Machine template through MachineSets, one set
//! per distinct template (the "current" set runs the deployment's template), numbered by
//! revision.
//!
//! One reconcile: check pause (see [`crate::framework::pause`] for the model); label and
//! own by the Cluster; check the templates; gather the deployment's sets (adopting orphans
//! that match its selector); find or create the current set and propagate labels,
//! annotations and timeouts to it in place; then one step of the strategy: a rolling update
//! ([`rollout`], [`rolling`]), OnDelete ([`ondelete`]), or plain scaling ([`sync`]) while
//! paused or when the replicas changed; clean up old empty sets beyond the history limit
//! once complete; write status. Every set is written at most once per reconcile, and only
//! where it differs.

mod apply;
pub mod build;
pub mod cleanup;
pub mod ondelete;
pub mod plan;
pub mod revision;
pub mod rolling;
pub mod rollout;
pub mod status;
pub mod sync;
pub use crate::framework::machine_template as template;
pub mod v1beta2;

use std::sync::Arc;
use std::time::Duration;

use crate::framework::requeue::Requeue;
use drydock_api::capi::conditions::time_at;
use drydock_api::capi::core::MachineDeploymentStrategyType;
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_DEPLOYMENT_FINALIZER, REVISION_ANNOTATION,
};
use drydock_api::capi::owner;
use drydock_api::capi::selector::Selector;
use futures::StreamExt;
use jiff::Timestamp;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};

use self::ondelete::Counted;
use self::plan::Plan;
use crate::framework::cascade;
use crate::framework::cluster_index::ClusterIndex;
use crate::framework::expectations::{Expectations, Outstanding};
use crate::framework::names::random_suffix;
use crate::framework::pause::{self, ClusterPauses, Pause};
use crate::framework::runner::{self, Queue, key_of};
use crate::framework::select::{owners_of_recorded, parse_selector};
use crate::framework::templates::{self, TemplateOwners};
use crate::framework::write::{self, Writer};
use crate::framework::{Error, Result};
use crate::{Context, Running};

pub const NAME: &str = "machinedeployment";

/// Writes MachineDeployments and their MachineSets.
static WRITER: Writer = Writer::new(NAME);

/// The field manager of what the deployment applies to its current set (upstream's name).
pub const MANAGER: &str = "capi-machinedeployment";

/// What the MachineDeployment reconciler keeps between reconciles.
pub struct State {
    pub ctx: Arc<Context>,
    /// Cached MachineSets by namespace and cluster.
    pub sets: Arc<ClusterIndex<MachineSet>>,
    /// Cached MachineDeployments by namespace and cluster (to map orphans and resumed
    /// Clusters).
    pub deployments: Arc<ClusterIndex<MachineDeployment>>,
    /// Cached Machines by namespace and cluster (OnDelete counts its old sets' Machines).
    pub machines: Arc<ClusterIndex<Machine>>,
    /// MachineSets created and not yet cached, per deployment.
    pub expectations: Expectations,
    pub templates: TemplateOwners,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let queue = Queue::new(NAME);
    let st = Arc::new(State {
        ctx: ctx.clone(),
        sets: ClusterIndex::new(ctx.informers.machine_sets.store.clone(), ctx.informers.machine_sets.listed.clone()),
        deployments: ClusterIndex::new(
            ctx.informers.machine_deployments.store.clone(),
            ctx.informers.machine_deployments.listed.clone(),
        ),
        machines: ClusterIndex::new(ctx.informers.machines.store.clone(), ctx.informers.machines.listed.clone()),
        expectations: Expectations::default(),
        templates: TemplateOwners::default(),
    });
    let trigger = queue.track(ctx.informers.machine_deployments.subscribe()).map(st.deployments.recorder());
    let on_set = queue.map_to(owners_of_recorded(&st.sets, "MachineDeployment", &st.deployments));
    let machines = st.machines.clone();
    let md_store = ctx.informers.machine_deployments.store.clone();
    let on_machine = queue.map_to(move |m: &Machine| {
        machines.observe(m);
        on_delete_deployment_of_deleting_machine(m, &md_store)
    });
    let (deployments, pauses) = (st.deployments.clone(), ClusterPauses::default());
    let on_cluster = queue.map_to(move |c: &Cluster| {
        if !pauses.changed(c) {
            return Vec::new();
        }
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        let name = c.metadata.name.as_deref().unwrap_or_default();
        deployments.list(ns, name).iter().map(|md| ObjectRef::from_obj(&**md)).collect()
    });
    let c = Controller::for_shared_stream(trigger, ctx.informers.machine_deployments.store.clone())
        .watches_shared_stream(ctx.informers.machine_sets.subscribe(), on_set)
        .watches_shared_stream(ctx.informers.machines.subscribe(), on_machine)
        .watches_shared_stream(ctx.informers.clusters.subscribe(), on_cluster);
    let concurrency = ctx.settings.machinedeployment_concurrency;
    Box::pin(runner::run(NAME, c, queue, concurrency, ctx.clock().clone(), st, reconcile))
}

/// An OnDelete deployment follows its old Machines as users delete them: a Machine marked
/// for deletion wakes it (the set's status does not change until the Machine is gone).
fn on_delete_deployment_of_deleting_machine(
    m: &Machine,
    deployments: &Store<MachineDeployment>,
) -> Vec<ObjectRef<MachineDeployment>> {
    if m.metadata.deletion_timestamp.is_none() {
        return Vec::new();
    }
    let Some(name) = m.metadata.labels.as_ref().and_then(|l| l.get(DEPLOYMENT_NAME_LABEL)) else {
        return Vec::new();
    };
    let ns = m.metadata.namespace.as_deref().unwrap_or_default();
    let r = ObjectRef::new(name).within(ns);
    let on_delete =
        deployments.get(&r).is_some_and(|md| rollout::strategy_type(&md) == MachineDeploymentStrategyType::OnDelete);
    if on_delete { vec![r] } else { Vec::new() }
}

fn invalid<E: std::fmt::Display>(field: &str) -> impl Fn(E) -> Error + '_ {
    move |e| Error::InvalidSpec(format!("{field}: {e}"))
}

async fn reconcile(md: Arc<MachineDeployment>, st: Arc<State>) -> Result<Requeue> {
    let key = key_of(&*md);
    let ns = md.metadata.namespace.clone().unwrap_or_default();
    if md.metadata.deletion_timestamp.is_some() {
        st.expectations.forget(&key);
        st.sets.ensure_seeded().await;
        let sets = st.sets.list(&ns, &md.spec.cluster_name);
        let (api, sets_api) = (st.ctx.api::<MachineDeployment>(&ns), st.ctx.api::<MachineSet>(&ns));
        let now = st.ctx.clock().condition_time();
        let md = cascade::report_deleting(&WRITER, &api, &md, &sets, v1beta2::deleting, &now).await?;
        return cascade::finalize(&WRITER, &api, &md, MACHINE_DEPLOYMENT_FINALIZER, &sets_api, &sets).await;
    }
    st.sets.ensure_seeded().await;
    st.ctx.informers.clusters.ready().await;
    let cluster = st.ctx.cluster(&ns, &md.spec.cluster_name)?;
    let api: Api<MachineDeployment> = st.ctx.api(&ns);
    let mut want = (*md).clone();
    let paused = Pause::of(&cluster, &md.metadata, md.spec.paused == Some(true));
    let cond_time = st.ctx.clock().condition_time();
    pause::set_condition(&mut want, paused, &cluster, cond_time.clone());
    if paused.is_some_and(Pause::stops_everything) {
        if want != *md {
            WRITER.apply(&api, &md, &want).await?;
        }
        return Ok(Requeue::await_change());
    }
    want.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(CLUSTER_NAME_LABEL.into(), want.spec.cluster_name.clone());
    // Written with the first change of the deployment, not on a write of its own.
    write::add_finalizer(&mut want, MACHINE_DEPLOYMENT_FINALIZER);
    if let Some(r) = owner::owner_ref(&*cluster) {
        owner::ensure_owner_ref(&mut want.metadata, r);
    }
    let selector = parse_selector(&want)?;
    let read = read(&st, &want, &cluster, &selector, &key, paused.is_some()).await?;
    let (expires_in, now) = (read.pending.expires_in, read.now);
    let Decided { plan, deferred, max_unavailable } = decide(&mut want, read)?;
    apply::write_sets(&st, &want, &plan, &key).await?;
    let mut status = status::compute(&want, &plan, selector.to_query());
    if deferred.is_some() {
        status.observed_generation = md.status.as_ref().and_then(|s| s.observed_generation);
    }
    want.status = Some(status);
    status::set_conditions(&mut want, &plan, max_unavailable, time_at(now));
    v1beta2::set(&mut want, &plan, max_unavailable, now, &time_at(now));
    if paused.is_none() && status::is_complete(&want) {
        apply::cleanup(&st, &want, &plan).await?;
    }
    // Comparing is much cheaper than the serialisation a diff needs; most reconciles
    // change nothing.
    if want != *md {
        WRITER.apply(&api, &md, &want).await?;
    }
    if let Some(e) = deferred {
        return Err(e);
    }
    Ok(requeue(&want, expires_in, now))
}

/// What a reconcile plans from, read before planning.
struct Read {
    /// The deployment's sets, and orphans its selector matches.
    owned: Vec<Arc<MachineSet>>,
    orphans: Vec<Arc<MachineSet>>,
    /// Templates that do not exist (existing sets can still scale; no new set is created).
    missing_templates: Vec<String>,
    /// Creations not yet seen in the cache.
    pending: Outstanding,
    /// The cluster's Machines, for an OnDelete rollout.
    machines: Vec<Arc<Machine>>,
    rollout_paused: bool,
    now: Timestamp,
}

async fn read(
    st: &State,
    md: &MachineDeployment,
    cluster: &Cluster,
    selector: &Selector,
    key: &str,
    rollout_paused: bool,
) -> Result<Read> {
    let missing_templates = ensure_templates(st, md, cluster).await?;
    let (owned, orphans) = sets_of(st, md, selector);
    let pending = st.expectations.outstanding(
        key,
        |name| owned.iter().chain(&orphans).any(|ms| ms.metadata.name.as_deref() == Some(name)),
        |_| true,
    );
    let machines = if rollout::strategy_type(md) == MachineDeploymentStrategyType::OnDelete {
        st.machines.ensure_seeded().await;
        st.machines.list(md.metadata.namespace.as_deref().unwrap_or_default(), &md.spec.cluster_name)
    } else {
        Vec::new()
    };
    Ok(Read { owned, orphans, missing_templates, pending, machines, rollout_paused, now: st.ctx.clock().now() })
}

/// The plan, and what the status needs of it.
struct Decided {
    plan: Plan,
    /// An error reported once the status is written (the rollout cannot start).
    deferred: Option<Error>,
    max_unavailable: i32,
}

/// Plans the sets from what was read (no API calls): adoption, the new set or the current
/// set's in-place fields, then one step of the strategy. Records the revision on `md`.
fn decide(md: &mut MachineDeployment, read: Read) -> Result<Decided> {
    let owner = owner::controller_ref(md);
    let mut plan = Plan::adopting(md, read.owned, read.orphans, owner.as_ref(), read.now);
    let desired = rollout::replicas(md);
    let max_replicas =
        desired + rollout::max_surge(md).map_err(invalid("spec.rollout.strategy.rollingUpdate.maxSurge"))?;
    let strategy = rollout::strategy_type(md);
    let md_name = md.metadata.name.clone().unwrap_or_default();
    for p in plan.iter_mut() {
        p.want
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(DEPLOYMENT_NAME_LABEL.into(), md_name.clone());
    }
    let mut deferred = None;
    if plan.current().is_some() {
        update_current(md, &mut plan, max_replicas)?;
    } else if read.rollout_paused || !read.pending.creates.is_empty() {
        // Paused: no rollout. Pending: the new set is created, not yet cached.
    } else if !read.missing_templates.is_empty() {
        let missing = read.missing_templates.join(", ");
        deferred = Some(Error::Missing(format!("templates for a new MachineSet: {missing}")));
    } else {
        let revision = revision::next_revision(plan.old().map(|ms| ms.metadata.annotations.as_ref()));
        let replicas = rollout::new_set_replicas(md, plan.old(), 0)
            .map_err(invalid("spec.rollout.strategy (replicas of a new MachineSet)"))?;
        plan.push_new(build::new_machine_set(md, &random_suffix(), revision, replicas, max_replicas));
    }
    if let Some(rev) = plan.current().and_then(|ms| ms.metadata.annotations.as_ref()?.get(REVISION_ANNOTATION).cloned())
    {
        md.metadata.annotations.get_or_insert_with(Default::default).insert(REVISION_ANNOTATION.into(), rev);
    }
    let max_unavailable =
        rollout::max_unavailable(md).map_err(invalid("spec.rollout.strategy.rollingUpdate.maxUnavailable"))?;
    // The current set must always be able to create Machines (an earlier OnDelete
    // rollout may have frozen it while it was old).
    if let Some(current) = plan.current_mut() {
        ondelete::allow_creation(current);
    }
    // A change of replicas mid-rollout is no special case, as upstream: the rollout step
    // grows the new set within the surge; only a paused deployment scales in proportion.
    if read.rollout_paused {
        sync::scale(md, &mut plan, max_replicas);
    } else {
        rollout::reconcile_new(md, &mut plan, max_replicas).map_err(invalid("spec.rollout.strategy (rollout)"))?;
        match strategy {
            MachineDeploymentStrategyType::RollingUpdate => {
                rolling::reconcile_old(md, &mut plan, max_unavailable, max_replicas);
            }
            MachineDeploymentStrategyType::OnDelete => {
                ondelete::reconcile_old(md, &mut plan, max_replicas, |ms| count_machines(ms, &read.machines));
            }
        }
    }
    Ok(Decided { plan, deferred, max_unavailable })
}

/// The Machines an old set's selector matches (whoever owns them), and how many of those
/// are being deleted.
fn count_machines(ms: &MachineSet, machines: &[Arc<Machine>]) -> Counted {
    let Ok(selector) = parse_selector(ms) else {
        return Counted::default();
    };
    if selector.is_empty() {
        return Counted::default();
    }
    let empty = Default::default();
    let mut c = Counted::default();
    for m in machines {
        if selector.matches(m.metadata.labels.as_ref().unwrap_or(&empty)) {
            c.total += 1;
            if m.metadata.deletion_timestamp.is_some() {
                c.deleting += 1;
            }
        }
    }
    c
}

/// When to look again without an event: when a pending creation expires, or when a
/// future `rolloutAfter` passes (upstream waits for the next resync instead).
fn requeue(md: &MachineDeployment, expires_in: Option<Duration>, now: Timestamp) -> Requeue {
    let rollout_after = md
        .spec
        .rollout
        .as_ref()
        .and_then(|r| r.after.as_ref())
        .filter(|t| t.0 > now)
        .and_then(|t| Duration::try_from(t.0.duration_since(now)).ok())
        .map(|d| d + Duration::from_millis(100));
    Requeue::after_opt([expires_in, rollout_after].into_iter().flatten().min())
}

/// Ensures the templates belong to the Cluster; returns the ones that do not exist
/// (existing sets can still scale without them; a new set cannot be created).
async fn ensure_templates(st: &State, md: &MachineDeployment, cluster: &Cluster) -> Result<Vec<String>> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let tpl = &md.spec.template.spec;
    let mut missing = Vec::new();
    for r in [Some(&tpl.infrastructure_ref), tpl.bootstrap.config_ref.as_ref()].into_iter().flatten() {
        if templates::is_template(r) && !st.templates.ensure_versioned(&st.ctx, NAME, ns, r, cluster).await? {
            missing.push(format!("{} {ns}/{}", r.kind, r.name));
        }
    }
    Ok(missing)
}

/// The deployment's sets: those it controls, and orphans matching its (non-empty)
/// selector, which it adopts.
fn sets_of(st: &State, md: &MachineDeployment, selector: &Selector) -> (Vec<Arc<MachineSet>>, Vec<Arc<MachineSet>>) {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let Some(controller_ref) = owner::controller_ref(md) else {
        return (Vec::new(), Vec::new());
    };
    let empty = Default::default();
    let (mut owned, mut orphans) = (Vec::new(), Vec::new());
    for ms in st.sets.list(ns, &md.spec.cluster_name) {
        match owner::get_controller(&ms.metadata) {
            Some(c) if c.uid == controller_ref.uid => owned.push(ms),
            Some(_) => {}
            None => {
                let labels = ms.metadata.labels.as_ref().unwrap_or(&empty);
                if !selector.is_empty() && selector.matches(labels) && ms.metadata.deletion_timestamp.is_none() {
                    orphans.push(ms);
                }
            }
        }
    }
    (owned, orphans)
}

/// Propagates the deployment's in-place fields and revision to the current set.
fn update_current(md: &MachineDeployment, plan: &mut Plan, max_replicas: i32) -> Result<()> {
    let new_revision = revision::next_revision(plan.old().map(|ms| ms.metadata.annotations.as_ref()));
    let desired = rollout::replicas(md);
    let Some(current) = plan.current_mut() else {
        return Ok(());
    };
    let name = current.metadata.name.clone().unwrap_or_default();
    let hash = build::existing_hash(current)
        .ok_or_else(|| Error::inconsistent(format!("MachineSet {name}"), "no machine-template-hash label"))?;
    build::apply_in_place(md, current, &hash);
    let owned = build::in_place_config(md, current, &hash);
    revision::set_current(current.metadata.annotations.get_or_insert_with(Default::default), new_revision)
        .map_err(|e| Error::inconsistent(format!("MachineSet {name}"), e))?;
    plan::set_replica_annotations(current, desired, max_replicas);
    plan.set_current_owned(owned);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{
        MachineDeploymentRolloutSpec, MachineDeploymentRolloutStrategy, MachineDeploymentSpec,
    };
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher::Event;

    #[test]
    fn a_deleting_machine_wakes_an_on_delete_deployment() {
        let mut writer: Writer<MachineDeployment> = Writer::default();
        let md = |name: &str, strategy: MachineDeploymentStrategyType| {
            let mut md = MachineDeployment::new(
                name,
                MachineDeploymentSpec {
                    rollout: Some(MachineDeploymentRolloutSpec {
                        after: None,
                        strategy: Some(MachineDeploymentRolloutStrategy { type_: strategy, rolling_update: None }),
                    }),
                    ..Default::default()
                },
            );
            md.metadata.namespace = Some("ns".into());
            md
        };
        writer.apply_watcher_event(&Event::Apply(md("manual", MachineDeploymentStrategyType::OnDelete)));
        writer.apply_watcher_event(&Event::Apply(md("rolling", MachineDeploymentStrategyType::RollingUpdate)));
        let store = writer.as_reader();
        let machine = |deployment: &str, deleting: bool| {
            let mut m = Machine::new("m", Default::default());
            m.metadata.namespace = Some("ns".into());
            m.metadata.labels = Some([(DEPLOYMENT_NAME_LABEL.to_string(), deployment.to_string())].into());
            if deleting {
                m.metadata.deletion_timestamp = Some(time_at(jiff::Timestamp::now()));
            }
            m
        };
        let refs = on_delete_deployment_of_deleting_machine(&machine("manual", true), &store);
        assert_eq!(refs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["manual"]);
        assert!(on_delete_deployment_of_deleting_machine(&machine("manual", false), &store).is_empty());
        assert!(on_delete_deployment_of_deleting_machine(&machine("rolling", true), &store).is_empty());
        assert!(on_delete_deployment_of_deleting_machine(&machine("gone", true), &store).is_empty());
    }
}
