//! The ClusterResourceSet controller: applies the manifests of a set's Secrets and
//! ConfigMaps into every workload cluster of its namespace that its selector matches, once
//! the cluster's control plane is initialized, and records what it applied in the Cluster's
//! ClusterResourceSetBinding. ApplyOnce sets apply each resource once per cluster;
//! Reconcile sets apply it again whenever its data changes.
//!
//! - `resources`: reading a set's Secrets and ConfigMaps (their data, hash and manifests).
//! - `apply`: applying manifests into a workload cluster.
//! - `binding`: the per-Cluster record, and releasing a deleted set from it.
//!
//! A set is reconciled when it changes, when a Cluster of its namespace changes (labels,
//! control plane initialized) and when one of its resources changes. Its resources get the
//! set as an owner, as upstream does (so `clusterctl move` takes them along).

mod apply;
mod binding;
mod resources;

use std::sync::Arc;

use drydock_api::admission::FieldPath;
use drydock_api::capi::addons::v1beta2::ClusterResourceSet;
use drydock_api::capi::addons::{FINALIZER, ResourceKind};
use drydock_api::capi::condition_types as v1beta1;
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::v1beta2_conditions::names;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use drydock_api::selector::Selector;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use serde_json::json;

use crate::framework::pause;
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::write::{Writer, add_finalizer, remove_finalizer};
use crate::framework::{Error, Result};
use crate::{Context, Running};
use resources::{Resource, Unavailable};

pub const CONTROLLER: &str = "clusterresourceset";

struct State {
    ctx: Arc<Context>,
    writer: Writer,
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State { ctx: ctx.clone(), writer: Writer::tracking(CONTROLLER) });
    let queue = Queue::new(CONTROLLER);
    let sets = &ctx.informers.cluster_resource_sets;
    let (s1, s2, s3) = (sets.store.clone(), sets.store.clone(), sets.store.clone());
    let c = Controller::for_shared_stream(queue.track(sets.subscribe()), sets.store.clone())
        .watches_shared_stream(ctx.informers.clusters.subscribe(), queue.map_to(move |c: &Cluster| matching(&s1, c)))
        .watches_shared_stream(
            ctx.informers.addon_config_maps.subscribe(),
            queue.map_to(move |cm: &ConfigMap| listing(&s2, ResourceKind::ConfigMap, &cm.metadata)),
        )
        .watches_shared_stream(
            ctx.informers.addon_secrets.subscribe(),
            queue.map_to(move |s: &Secret| listing(&s3, ResourceKind::Secret, &s.metadata)),
        );
    Box::pin(runner::run(
        CONTROLLER,
        c,
        queue,
        ctx.settings.clusterresourceset_concurrency,
        ctx.clock().clone(),
        state,
        reconcile,
    ))
}

/// The sets of the Cluster's namespace whose selector matches it.
fn matching(sets: &Store<ClusterResourceSet>, cluster: &Cluster) -> Vec<ObjectRef<ClusterResourceSet>> {
    let labels = cluster.metadata.labels.clone().unwrap_or_default();
    sets.state()
        .iter()
        .filter(|s| s.namespace() == cluster.namespace())
        .filter(|s| selector(s).is_some_and(|sel| sel.matches(&labels)))
        .map(|s| ObjectRef::from_obj(s.as_ref()))
        .collect()
}

/// The sets of the resource's namespace that list it.
fn listing(
    sets: &Store<ClusterResourceSet>,
    kind: ResourceKind,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Vec<ObjectRef<ClusterResourceSet>> {
    let name = meta.name.as_deref().unwrap_or_default();
    sets.state()
        .iter()
        .filter(|s| s.metadata.namespace == meta.namespace)
        .filter(|s| s.spec.resources.iter().any(|r| r.kind == kind && r.name == name))
        .map(|s| ObjectRef::from_obj(s.as_ref()))
        .collect()
}

/// A set's selector; an empty one selects nothing (admission refuses it anyway).
fn selector(set: &ClusterResourceSet) -> Option<Selector> {
    let sel = Selector::parse(&set.spec.cluster_selector, &FieldPath::new("spec.clusterSelector")).ok()?;
    (!sel.is_empty()).then_some(sel)
}

async fn reconcile(set: Arc<ClusterResourceSet>, state: Arc<State>) -> Result<Requeue> {
    if state.writer.is_stale(set.as_ref()) {
        return Ok(Requeue::await_change());
    }
    let ns = set.namespace().unwrap_or_default();
    let api: Api<ClusterResourceSet> = state.ctx.api(&ns);
    let now = state.ctx.clock().condition_time();
    let mut want = (*set).clone();
    if set.metadata.deletion_timestamp.is_some() {
        binding::release(&state, &set).await?;
        if remove_finalizer(&mut want, FINALIZER) {
            state.writer.forget(set.as_ref());
            state.writer.apply(&api, &set, &want).await?;
        }
        return Ok(Requeue::await_change());
    }
    if pause::set_condition_unowned(&mut want, &set.metadata, now.clone()) {
        state.writer.apply(&api, &set, &want).await?;
        return Ok(Requeue::await_change());
    }
    add_finalizer(&mut want, FINALIZER);

    let mut read = Vec::new();
    let mut unavailable = Vec::new();
    for r in &set.spec.resources {
        match resources::read(&state.ctx, &ns, r).await {
            Ok(res) => read.push(res),
            Err(e) => unavailable.push(e),
        }
    }
    adopt(&state, &set, &ns, &read).await?;

    let mut failures = Vec::new();
    // Nothing to apply (every resource missing or refused) leaves the bindings alone.
    let clusters = if read.is_empty() { Vec::new() } else { state.ctx.informers.clusters.store.state() };
    let sel = selector(&set);
    for cluster in clusters.iter().filter(|c| c.namespace().as_deref() == Some(ns.as_str())) {
        let labels = cluster.metadata.labels.clone().unwrap_or_default();
        let selected = sel.as_ref().is_some_and(|s| s.matches(&labels));
        if !selected || cluster.metadata.deletion_timestamp.is_some() || !cluster.control_plane_initialized() {
            continue;
        }
        failures.extend(binding::apply_to(&state, &set, cluster, &read).await?);
    }

    set_conditions(&mut want, &unavailable, &failures, now);
    want.status.get_or_insert_default().observed_generation = set.metadata.generation;
    state.writer.apply(&api, &set, &want).await?;
    match (unavailable.first(), failures.first()) {
        // A missing resource is waited for: its creation triggers the set.
        (Some(Unavailable::Missing(_)), None) | (None, None) => Ok(Requeue::await_change()),
        (Some(u), _) => Err(Error::Missing(u.message().to_string())),
        (None, Some(f)) => {
            Err(Error::Step { step: "applying resources".into(), source: Box::new(Error::Missing(f.clone())) })
        }
    }
}

/// Names the set among the owners of each of its resources.
async fn adopt(state: &State, set: &ClusterResourceSet, ns: &str, read: &[Resource]) -> Result<()> {
    let Some(owner) = drydock_api::capi::owner::owner_ref(set) else { return Ok(()) };
    for r in read.iter().filter(|r| !r.owners.iter().any(|o| o.uid == owner.uid)) {
        // A merge patch replaces the whole list.
        let owners: Vec<_> = r.owners.iter().chain([&owner]).collect();
        let patch = json!({"metadata": {"ownerReferences": owners}});
        let patched = match r.r.kind {
            ResourceKind::ConfigMap => {
                state.writer.patch(&state.ctx.api::<ConfigMap>(ns), &r.r.name, &patch).await.map(drop)
            }
            ResourceKind::Secret => state.writer.patch(&state.ctx.api::<Secret>(ns), &r.r.name, &patch).await.map(drop),
        };
        match patched {
            // Gone since the read: its deletion triggers the set again.
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            other => other?,
        }
    }
    Ok(())
}

/// ResourcesApplied, v1beta1 and v1beta2: what could not be read comes first, then what
/// could not be applied.
fn set_conditions(
    set: &mut ClusterResourceSet,
    unavailable: &[Unavailable],
    failures: &[String],
    now: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) {
    let wrong_type = unavailable.iter().find(|u| matches!(u, Unavailable::WrongSecretType(_)));
    let (v1_reason, v2_reason, message) = if let Some(w) = wrong_type {
        (v1beta1::WRONG_SECRET_TYPE, names::WRONG_SECRET_TYPE_REASON, w.message().to_string())
    } else if let Some(u) = unavailable.first() {
        (v1beta1::RETRIEVING_RESOURCE_FAILED, names::NOT_APPLIED_REASON, u.message().to_string())
    } else if !failures.is_empty() {
        (v1beta1::APPLY_FAILED, names::NOT_APPLIED_REASON, failures.join("; "))
    } else {
        set.mark_true(v1beta1::RESOURCES_APPLIED, now.clone());
        set.set_v1beta2(Observed::true_(names::RESOURCES_APPLIED, names::APPLIED_REASON), &now);
        return;
    };
    set.mark_false(v1beta1::RESOURCES_APPLIED, v1_reason, Severity::Warning, &message, now.clone());
    set.set_v1beta2(Observed::false_(names::RESOURCES_APPLIED, v2_reason, message), &now);
}
