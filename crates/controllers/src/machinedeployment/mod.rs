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

pub mod build;
pub mod cleanup;
pub mod ondelete;
pub mod plan;
pub mod revision;
pub mod rolling;
pub mod rollout;
pub mod status;
pub mod sync;
pub mod template;

use std::sync::Arc;
use std::time::Duration;

use drydock_api::admission::FieldPath;
use drydock_api::capi::conditions::now as cond_now;
use drydock_api::capi::core::{Cluster, Machine, MachineDeployment, MachineDeploymentStrategyType, MachineSet};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, REVISION_ANNOTATION};
use drydock_api::capi::owner;
use drydock_api::capi::selector::Selector;
use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{Api, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};

use self::ondelete::Counted;
use self::plan::Plan;
use crate::framework::cluster_index::ClusterIndex;
use crate::framework::expectations::{Expectations, Outstanding};
use crate::framework::names::random_suffix;
use crate::framework::objects::CAPI_GROUP;
use crate::framework::pause::{self, ClusterPauses, Pause};
use crate::framework::runner::{self, Queue, key_of};
use crate::framework::templates::{self, TemplateOwners};
use crate::framework::write::{Writer, delete_if_present};
use crate::framework::{Error, Result, metrics};
use crate::{Context, Running};

pub const NAME: &str = "machinedeployment";

/// Writes MachineDeployments and their MachineSets.
static WRITER: Writer = Writer::new(NAME);

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
        sets: ClusterIndex::new(ctx.informers.machine_sets.store.clone()),
        deployments: ClusterIndex::new(ctx.informers.machine_deployments.store.clone()),
        machines: ClusterIndex::new(ctx.informers.machines.store.clone()),
        expectations: Expectations::default(),
        templates: TemplateOwners::default(),
    });
    let deployments = st.deployments.clone();
    let trigger = queue.track(ctx.informers.machine_deployments.subscribe()).map(move |md| {
        deployments.observe(&md);
        md
    });
    let (sets, deployments) = (st.sets.clone(), st.deployments.clone());
    let on_set = queue.map_to(move |ms: &MachineSet| {
        sets.observe(ms);
        deployments_for_set(ms, &deployments)
    });
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
    Box::pin(runner::run(NAME, c, queue, concurrency, st, reconcile))
}

/// The deployment a MachineSet event concerns: its controller, or for a set without one,
/// the deployments of its cluster that select it (to adopt it).
fn deployments_for_set(
    ms: &MachineSet,
    deployments: &ClusterIndex<MachineDeployment>,
) -> Vec<ObjectRef<MachineDeployment>> {
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(c) = owner::get_controller(&ms.metadata) {
        let is_md = c.kind == "MachineDeployment" && owner::api_group(&c.api_version) == CAPI_GROUP;
        return if is_md { vec![ObjectRef::new(&c.name).within(ns)] } else { Vec::new() };
    }
    if ms.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    let empty = Default::default();
    let labels = ms.metadata.labels.as_ref().unwrap_or(&empty);
    deployments
        .list(ns, &ms.spec.cluster_name)
        .iter()
        .filter(|md| parse_selector(md).is_ok_and(|s| !s.is_empty() && s.matches(labels)))
        .map(|md| ObjectRef::from_obj(&**md))
        .collect()
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

fn parse_selector(md: &MachineDeployment) -> Result<Selector> {
    Selector::parse(&md.spec.selector, &FieldPath::new("spec").child("selector")).map_err(|errs| {
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        Error::other(format!("invalid selector: {}", msgs.join("; ")))
    })
}

fn other<E: std::fmt::Display>(context: &str) -> impl Fn(E) -> Error + '_ {
    move |e| Error::other(format!("{context}: {e}"))
}

async fn reconcile(md: Arc<MachineDeployment>, st: Arc<State>) -> Result<Action> {
    let key = key_of(&*md);
    if md.metadata.deletion_timestamp.is_some() {
        st.expectations.forget(&key);
        return Ok(Action::await_change());
    }
    let ns = md.metadata.namespace.clone().unwrap_or_default();
    st.sets.ensure_seeded().await;
    st.ctx.informers.clusters.ready().await;
    let cluster = st
        .ctx
        .informers
        .clusters
        .store
        .get(&ObjectRef::new(&md.spec.cluster_name).within(&ns))
        .ok_or_else(|| Error::other(format!("Cluster {ns}/{} not found", md.spec.cluster_name)))?;
    let api: Api<MachineDeployment> = st.ctx.api(&ns);
    let mut want = (*md).clone();
    let paused = Pause::of(&cluster, &md.metadata, md.spec.paused == Some(true));
    pause::set_condition(&mut want, paused, &cluster, cond_now());
    if paused.is_some_and(Pause::stops_everything) {
        if want != *md {
            WRITER.apply(&api, &md, &want).await?;
        }
        return Ok(Action::await_change());
    }
    let rollout_paused = paused.is_some();

    want.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(CLUSTER_NAME_LABEL.into(), want.spec.cluster_name.clone());
    if let Some(r) = owner::owner_ref(&*cluster) {
        owner::ensure_owner_ref(&mut want.metadata, r);
    }
    let missing_templates = ensure_templates(&st, &want, &cluster).await?;
    let selector = parse_selector(&want)?;
    let owned = owned_sets(&st, &want, &selector).await?;
    let pending = st.expectations.outstanding(
        &key,
        |name| owned.iter().any(|ms| ms.metadata.name.as_deref() == Some(name)),
        |_| true,
    );
    let now = Timestamp::now();
    let mut plan = Plan::new(&want, owned, now);
    let desired = rollout::replicas(&want);
    let max_replicas = desired + rollout::max_surge(&want).map_err(other("spec.strategy.rollingUpdate.maxSurge"))?;
    let strategy = rollout::strategy_type(&want);
    // Judged on the sets as read, before this reconcile records the replicas on them.
    let scaling = !rollout_paused
        && strategy == MachineDeploymentStrategyType::RollingUpdate
        && sync::is_scaling_event(&plan, desired);
    let md_name = want.metadata.name.clone().unwrap_or_default();
    for p in plan.iter_mut() {
        p.want
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(DEPLOYMENT_NAME_LABEL.into(), md_name.clone());
    }

    let mut deferred: Option<Error> = None;
    if plan.current().is_none() {
        if rollout_paused || scaling || !pending.creates.is_empty() {
            // Paused: no rollout. Scaling: first resize what exists. Pending: the new set
            // is created, not yet cached.
        } else if !missing_templates.is_empty() {
            deferred = Some(Error::other(format!(
                "cannot create a new MachineSet when templates do not exist: {}",
                missing_templates.join(", ")
            )));
        } else {
            create_set(&st, &want, &mut plan, &key, max_replicas).await?;
        }
    } else {
        update_current(&want, &mut plan, max_replicas)?;
    }
    if let Some(rev) = plan.current().and_then(|ms| ms.metadata.annotations.as_ref()?.get(REVISION_ANNOTATION).cloned())
    {
        want.metadata.annotations.get_or_insert_with(Default::default).insert(REVISION_ANNOTATION.into(), rev);
    }

    let max_unavailable =
        rollout::max_unavailable(&want).map_err(other("spec.strategy.rollingUpdate.maxUnavailable"))?;
    // The current set must always be able to create Machines (an earlier OnDelete
    // rollout may have frozen it while it was old).
    if let Some(current) = plan.current_mut() {
        ondelete::allow_creation(current);
    }
    if rollout_paused || scaling {
        sync::scale(&want, &mut plan, max_replicas);
    } else {
        rollout::reconcile_new(&want, &mut plan, max_replicas).map_err(other("rollout"))?;
        match strategy {
            MachineDeploymentStrategyType::RollingUpdate => {
                rolling::reconcile_old(&want, &mut plan, max_unavailable, max_replicas)
            }
            MachineDeploymentStrategyType::OnDelete => {
                st.machines.ensure_seeded().await;
                let machines = st.machines.list(&ns, &want.spec.cluster_name);
                ondelete::reconcile_old(&want, &mut plan, max_replicas, |ms| count_machines(ms, &machines));
            }
        }
    }
    write_sets(&st, &plan).await?;

    let mut status = status::compute(&want, &plan, selector.to_query());
    if deferred.is_some() {
        status.observed_generation = md.status.as_ref().and_then(|s| s.observed_generation);
    }
    want.status = Some(status);
    status::set_conditions(&mut want, &plan, max_unavailable, cond_now());
    if !rollout_paused && status::is_complete(&want) {
        cleanup(&st, &want, &plan).await?;
    }
    // Comparing is much cheaper than the serialisation a diff needs; most reconciles
    // change nothing.
    if want != *md {
        WRITER.apply(&api, &md, &want).await?;
    }
    if let Some(e) = deferred {
        return Err(e);
    }
    Ok(requeue(&want, &pending, now))
}

/// The Machines an old set's selector matches (whoever owns them), and how many of those
/// are being deleted.
fn count_machines(ms: &MachineSet, machines: &[Arc<Machine>]) -> Counted {
    let Ok(selector) = Selector::parse(&ms.spec.selector, &FieldPath::new("spec").child("selector")) else {
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
fn requeue(md: &MachineDeployment, pending: &Outstanding, now: Timestamp) -> Action {
    let rollout_after = md
        .spec
        .rollout_after
        .as_ref()
        .filter(|t| t.0 > now)
        .and_then(|t| Duration::try_from(t.0.duration_since(now)).ok())
        .map(|d| d + Duration::from_millis(100));
    [pending.expires_in, rollout_after].into_iter().flatten().min().map_or_else(Action::await_change, Action::requeue)
}

/// Ensures the templates belong to the Cluster; returns the ones that do not exist
/// (existing sets can still scale without them; a new set cannot be created).
async fn ensure_templates(st: &State, md: &MachineDeployment, cluster: &Cluster) -> Result<Vec<String>> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let tpl = &md.spec.template.spec;
    let mut missing = Vec::new();
    for r in [Some(&tpl.infrastructure_ref), tpl.bootstrap.config_ref.as_ref()].into_iter().flatten() {
        if templates::is_template(r) && !st.templates.ensure(&st.ctx.client, NAME, ns, r, cluster).await? {
            missing.push(format!(
                "{} {ns}/{}",
                r.kind.as_deref().unwrap_or_default(),
                r.name.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(missing)
}

/// The deployment's sets: those it controls, plus orphans matching its (non-empty)
/// selector, which it adopts.
async fn owned_sets(st: &State, md: &MachineDeployment, selector: &Selector) -> Result<Vec<Arc<MachineSet>>> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let Some(controller_ref) = owner::controller_ref(md) else {
        return Ok(Vec::new());
    };
    let api: Api<MachineSet> = st.ctx.api(ns);
    let empty = Default::default();
    let mut owned = Vec::new();
    for ms in st.sets.list(ns, &md.spec.cluster_name) {
        match owner::get_controller(&ms.metadata) {
            Some(c) if c.uid == controller_ref.uid => owned.push(ms),
            Some(_) => {}
            None => {
                let labels = ms.metadata.labels.as_ref().unwrap_or(&empty);
                if selector.is_empty() || !selector.matches(labels) || ms.metadata.deletion_timestamp.is_some() {
                    continue;
                }
                let mut adopted = (*ms).clone();
                owner::ensure_owner_ref(&mut adopted.metadata, controller_ref.clone());
                let name = ms.metadata.name.clone().unwrap_or_default();
                let written = WRITER.apply(&api, &ms, &adopted).await?.or_wanted(&adopted);
                st.ctx.events.normal(md, "SuccessfulAdopt", format!("Adopted MachineSet {name:?}")).await;
                owned.push(Arc::new(written));
            }
        }
    }
    Ok(owned)
}

/// Creates the set for the deployment's current template and makes it the plan's current
/// set. It starts with the replicas a rollout allows next to the old sets.
async fn create_set(st: &State, md: &MachineDeployment, plan: &mut Plan, key: &str, max_replicas: i32) -> Result<()> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let revision = revision::next_revision(plan.old().map(|ms| ms.metadata.annotations.as_ref()));
    let replicas = rollout::new_set_replicas(md, plan.old(), 0).map_err(other("new MachineSet replicas"))?;
    let ms = build::new_machine_set(md, &random_suffix(), revision, replicas, max_replicas);
    let name = ms.metadata.name.clone().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    match api.create(&PostParams::default(), &ms).await {
        Ok(created) => {
            metrics::write(NAME);
            st.expectations.expect_create(key, &name);
            st.ctx.events.normal(md, "SuccessfulCreate", format!("Created MachineSet {ns}/{name}")).await;
            plan.push_current(created);
            Ok(())
        }
        Err(e) => {
            st.ctx.events.warning(md, "FailedCreate", format!("Failed to create MachineSet {ns}/{name}: {e}")).await;
            Err(e.into())
        }
    }
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
        .ok_or_else(|| Error::other(format!("MachineSet {name} has no machine-template-hash label")))?;
    build::apply_in_place(md, current, &hash);
    revision::set_current(current.metadata.annotations.get_or_insert_with(Default::default), new_revision)
        .map_err(|e| Error::other(format!("MachineSet {name}: {e}")))?;
    plan::set_replica_annotations(current, desired, max_replicas);
    Ok(())
}

/// Writes every set that changed; a set whose replicas changed gets a scaling event.
async fn write_sets(st: &State, plan: &Plan) -> Result<()> {
    for p in plan.iter() {
        if p.want == *p.before {
            continue;
        }
        let ns = p.want.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.want.metadata.name.as_deref().unwrap_or_default();
        let api: Api<MachineSet> = st.ctx.api(ns);
        match WRITER.apply(&api, &p.before, &p.want).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                if p.want.spec.replicas != p.before.spec.replicas {
                    st.ctx
                        .events
                        .warning(&p.want, "FailedScale", format!("Failed to scale MachineSet {ns}/{name}: {e}"))
                        .await;
                }
                return Err(e);
            }
        }
        let (from, to) = (p.before.spec.replicas.unwrap_or(0), p.want.spec.replicas.unwrap_or(0));
        if from != to {
            st.ctx
                .events
                .normal(&p.want, "SuccessfulScale", format!("Scaled MachineSet {ns}/{name}: {from} -> {to}"))
                .await;
        }
    }
    Ok(())
}

/// Deletes old empty sets beyond the revision history limit.
async fn cleanup(st: &State, md: &MachineDeployment, plan: &Plan) -> Result<()> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    for name in cleanup::to_delete(plan, md.spec.revision_history_limit) {
        match delete_if_present(&api, NAME, &name).await {
            Ok(_) => {
                st.ctx.events.normal(md, "SuccessfulDelete", format!("Deleted MachineSet {ns}/{name}")).await;
            }
            Err(e) => {
                st.ctx
                    .events
                    .warning(md, "FailedDelete", format!("Failed to delete MachineSet {ns}/{name}: {e}"))
                    .await;
                return Err(e);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::{MachineDeploymentSpec, MachineDeploymentStrategy, MachineSpec};
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher::Event;

    #[test]
    fn a_deleting_machine_wakes_an_on_delete_deployment() {
        let mut writer: Writer<MachineDeployment> = Writer::default();
        let md = |name: &str, strategy: MachineDeploymentStrategyType| {
            let mut md = MachineDeployment::new(
                name,
                MachineDeploymentSpec {
                    strategy: Some(MachineDeploymentStrategy { type_: Some(strategy), ..Default::default() }),
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
            let mut m = Machine::new("m", MachineSpec::default());
            m.metadata.namespace = Some("ns".into());
            m.metadata.labels = Some([(DEPLOYMENT_NAME_LABEL.to_string(), deployment.to_string())].into());
            if deleting {
                m.metadata.deletion_timestamp = Some(cond_now());
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
