//! Applying a plan, in upstream's order: infrastructure cluster, control plane (its
//! machine template first, its health check after), the Cluster's references, then each
//! MachineDeployment (templates first), then each MachinePool (its bootstrap config and
//! infrastructure machine pool first). Everything but the Cluster goes through
//! server-side apply as `capi-topology` with `force`; the intent holds only what the
//! topology sets, so other managers keep their fields. A template whose spec must change
//! is replaced by a new one (new name) and the old one deleted once nothing uses it.

use std::collections::BTreeSet;

use drydock_api::capi::core::v1beta2::{Cluster, MachinePool};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL as SET_DEPLOYMENT_LABEL};
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use super::blueprint::{self, Blueprint, Current, CurrentWorker, Template};
use super::desired::{Plan, contains};
use super::{CONTROLLER, DEPLOYMENT_NAME_LABEL, FIELD_MANAGER, OWNED_LABEL};
use crate::context::Context;
use crate::framework::informer::Informer;
use crate::framework::write::{delete_if_present, merge_patch};
use crate::framework::{Error, Result, metrics};

pub async fn apply(ctx: &Context, cluster: &Cluster, bp: &Blueprint, current: &Current, plan: &Plan) -> Result<()> {
    ssa_if_changed(ctx, &plan.infrastructure, current.infrastructure.as_ref()).await?;
    if let Some(t) = &plan.control_plane_machine {
        ssa_if_changed(ctx, t, current.control_plane_machine.as_ref()).await?;
    }
    ssa_if_changed(ctx, &plan.control_plane, current.control_plane.as_ref()).await?;
    if let (Some(old), Some(new)) = (&current.control_plane_machine, &plan.control_plane_machine)
        && old["metadata"]["name"] != new["metadata"]["name"]
    {
        delete(ctx, old).await?;
    }
    if let Some(h) = &plan.control_plane_health_check {
        ssa_if_changed(ctx, h, health_check(ctx, h).as_ref()).await?;
    }
    set_cluster_refs(ctx, cluster, plan).await?;
    for d in plan.deployments.iter().filter(|d| !d.pending_create) {
        let now = current.deployments.get(&d.topology_name);
        let informer = &ctx.informers.machine_deployments;
        apply_worker(ctx, informer, [&d.bootstrap, &d.infrastructure, &d.object], now).await?;
        if let Some(h) = &d.health_check {
            ssa_if_changed(ctx, h, health_check(ctx, h).as_ref()).await?;
        }
    }
    apply_pools(ctx, current, plan).await?;
    let ns = cluster.namespace().unwrap_or_default();
    for (name, d) in &current.deployments {
        if plan.deployments.iter().any(|p| &p.topology_name == name) {
            continue;
        }
        let md_name = d.object.name_any();
        delete_if_present(&ctx.api::<drydock_api::capi::core::v1beta2::MachineDeployment>(&ns), CONTROLLER, &md_name)
            .await?;
        delete_if_present(&ctx.api::<drydock_api::capi::core::v1beta2::MachineHealthCheck>(&ns), CONTROLLER, &md_name)
            .await?;
    }
    // Old template copies go once nothing uses them; looked for when a copy was replaced.
    for d in &plan.deployments {
        let now = current.deployments.get(&d.topology_name);
        let rotated = now.is_some_and(|n| {
            [(&n.bootstrap, &d.bootstrap), (&n.infrastructure, &d.infrastructure)]
                .iter()
                .any(|(old, new)| old.as_ref().is_some_and(|o| name(o) != name(new)))
        });
        let Some(class) = class_of(bp, cluster, &d.topology_name).filter(|_| rotated) else {
            continue;
        };
        let md_name = d.object["metadata"]["name"].as_str().unwrap_or_default();
        let mut used = machine_set_templates(ctx, &ns, md_name);
        used.insert(name(&d.bootstrap).to_string());
        used.insert(name(&d.infrastructure).to_string());
        for t in [&class.bootstrap, &class.infrastructure] {
            collect_unused(ctx, &ns, &cluster.name_any(), &d.topology_name, t, &used).await?;
        }
    }
    Ok(())
}

/// Each MachinePool after its bootstrap config and infrastructure machine pool (updated in
/// place, as upstream's); the MachinePools of pools gone from the topology are deleted, and
/// with them (by the MachinePool controller) their config and machine pool.
async fn apply_pools(ctx: &Context, current: &Current, plan: &Plan) -> Result<()> {
    for p in plan.pools.iter().filter(|p| !p.pending_create) {
        let (informer, now) = (&ctx.informers.machine_pools, current.pools.get(&p.topology_name));
        apply_worker(ctx, informer, [&p.bootstrap, &p.infrastructure, &p.object], now).await?;
    }
    for (name, p) in &current.pools {
        if !plan.pools.iter().any(|d| &d.topology_name == name) {
            let api = ctx.api::<MachinePool>(&p.object.namespace().unwrap_or_default());
            delete_if_present(&api, CONTROLLER, &p.object.name_any()).await?;
        }
    }
    Ok(())
}

/// A worker's bootstrap and infrastructure objects, then the worker, each against what
/// exists now. A new worker is waited for in `informer`'s store: it has a generated name,
/// and a reconcile that does not see it would make another.
async fn apply_worker<K>(
    ctx: &Context,
    informer: &Informer<K>,
    [bootstrap, infrastructure, object]: [&Value; 3],
    now: Option<&CurrentWorker<K>>,
) -> Result<()>
where
    K: serde::Serialize
        + serde::de::DeserializeOwned
        + kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    ssa_if_changed(ctx, bootstrap, now.and_then(|n| n.bootstrap.as_ref())).await?;
    ssa_if_changed(ctx, infrastructure, now.and_then(|n| n.infrastructure.as_ref())).await?;
    let existing = now.map(|n| serde_json::to_value(&*n.object)).transpose()?;
    ssa_if_changed(ctx, object, existing.as_ref()).await?;
    if now.is_none() {
        let (ns, name) = (object["metadata"]["namespace"].as_str(), name(object));
        if !informer.wait_for(ns.unwrap_or_default(), name, CACHE_WAIT).await {
            tracing::warn!(name, "a new topology worker did not reach the cache in time");
        }
    }
    Ok(())
}

/// How long a reconcile waits for a worker it created to reach the shared cache.
const CACHE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

fn name(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap_or_default()
}

fn class_of<'a>(
    bp: &'a Blueprint,
    cluster: &Cluster,
    topology_name: &str,
) -> Option<&'a super::blueprint::DeploymentClass> {
    let mds = cluster.spec.topology.as_ref()?.workers.as_ref()?.machine_deployments.as_ref()?;
    let md = mds.iter().find(|m| m.name == topology_name)?;
    bp.deployments.get(&md.class)
}

/// Applies `obj` unless `current` (the object as read, same name) already holds every
/// field it sets: most reconciles are woken by status changes and change nothing, and an
/// apply costs the server a managedFields merge even when it writes nothing.
async fn ssa_if_changed(ctx: &Context, obj: &Value, current: Option<&Value>) -> Result<()> {
    let unchanged = current.is_some_and(|c| {
        c["metadata"]["name"] == obj["metadata"]["name"]
            && contains(&c["spec"], &obj["spec"])
            && contains(&c["metadata"]["labels"], &obj["metadata"]["labels"])
            && contains(&c["metadata"]["annotations"], &obj["metadata"]["annotations"])
    });
    if unchanged { Ok(()) } else { ssa(ctx, obj).await }
}

/// A MachineHealthCheck of the topology as the informer holds it.
fn health_check(ctx: &Context, h: &Value) -> Option<Value> {
    let key = kube::runtime::reflector::ObjectRef::new(name(h))
        .within(h["metadata"]["namespace"].as_str().unwrap_or_default());
    ctx.informers.machine_health_checks.store.get(&key).and_then(|m| serde_json::to_value(&*m).ok())
}

/// Server-side apply of `obj` as the topology.
async fn ssa(ctx: &Context, obj: &Value) -> Result<()> {
    let api = blueprint::api_of(&ctx.client, obj);
    let name = name(obj);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let kind = obj["kind"].as_str().unwrap_or_default();
    api.patch(name, &params, &Patch::Apply(obj)).await.map_err(|e| match e {
        // The API server's message names the object and the field.
        kube::Error::Api(s) if s.code == 422 => Error::InvalidSpec(s.message),
        e => Error::during(format!("applying {kind} {name}"))(e),
    })?;
    metrics::write(CONTROLLER);
    Ok(())
}

async fn delete(ctx: &Context, obj: &Value) -> Result<()> {
    let api = blueprint::api_of(&ctx.client, obj);
    delete_if_present(&api, CONTROLLER, name(obj)).await?;
    Ok(())
}

/// Points the Cluster at its infrastructure cluster and control plane (a merge patch with
/// only the two references, as upstream's).
async fn set_cluster_refs(ctx: &Context, cluster: &Cluster, plan: &Plan) -> Result<()> {
    let reference = |obj: &Value| {
        let group = obj["apiVersion"].as_str().and_then(|v| v.rsplit_once('/')).map_or("", |(g, _)| g);
        json!({"apiGroup": group, "kind": obj["kind"], "name": obj["metadata"]["name"]})
    };
    let (infra, cp) = (reference(&plan.infrastructure), reference(&plan.control_plane));
    let have = |r: Option<&drydock_api::capi::common::ContractVersionedObjectReference>| r.map(|r| json!(r));
    if have(cluster.spec.infrastructure_ref.as_ref()).as_ref() == Some(&infra)
        && have(cluster.spec.control_plane_ref.as_ref()).as_ref() == Some(&cp)
    {
        return Ok(());
    }
    let body = json!({"spec": {"infrastructureRef": infra, "controlPlaneRef": cp}});
    let api = ctx.api::<Cluster>(&cluster.namespace().unwrap_or_default());
    merge_patch(&api, CONTROLLER, &cluster.name_any(), &body)
        .await
        .map_err(Error::during("setting the Cluster's references"))?;
    Ok(())
}

/// Templates the MachineSets of a MachineDeployment still reference.
fn machine_set_templates(ctx: &Context, ns: &str, md: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for ms in ctx.informers.machine_sets.store.state() {
        if ms.namespace().as_deref() != Some(ns)
            || ms.labels().get(SET_DEPLOYMENT_LABEL).map(String::as_str) != Some(md)
        {
            continue;
        }
        let spec = &ms.spec.template.spec;
        used.insert(spec.infrastructure_ref.name.clone());
        if let Some(r) = &spec.bootstrap.config_ref {
            used.insert(r.name.clone());
        }
    }
    used
}

/// Deletes the templates the topology made for a MachineDeployment that nothing uses.
async fn collect_unused(
    ctx: &Context,
    ns: &str,
    cluster: &str,
    topology_name: &str,
    t: &Template,
    used: &BTreeSet<String>,
) -> Result<()> {
    let selector = format!("{CLUSTER_NAME_LABEL}={cluster},{OWNED_LABEL},{DEPLOYMENT_NAME_LABEL}={topology_name}");
    for old in blueprint::list(&ctx.client, ns, &t.reference.api_version, &t.reference.kind, &selector).await? {
        if !used.contains(name(&old)) {
            let api = blueprint::api(&ctx.client, ns, &t.reference.api_version, &t.reference.kind);
            delete_if_present(&api, CONTROLLER, name(&old)).await?;
        }
    }
    Ok(())
}
