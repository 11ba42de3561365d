//! ClusterResourceSetBindings: one per Cluster (named after it, owned by it, so it goes with
//! the Cluster), with an entry per set listing each resource as applied. The entry is what
//! tells a set what a cluster already has.

use drydock_api::capi::addons::v1beta2::{
    ClusterResourceSet, ClusterResourceSetBinding, ClusterResourceSetBindingSpec,
};
use drydock_api::capi::addons::{ClusterResourceSetStrategy, ResourceBinding, ResourceSetBinding};
use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::owner;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::apply::apply_all;
use super::resources::Resource;
use super::{CONTROLLER, State};
use crate::framework::write::{self, delete_if_present};
use crate::framework::{Error, Result};

/// Applies to `cluster` what of `resources` its binding does not record as applied (or, for
/// Reconcile, applied with other data), and records the outcome. Returns the failures.
pub(super) async fn apply_to(
    state: &State,
    set: &ClusterResourceSet,
    cluster: &Cluster,
    resources: &[Resource],
) -> Result<Vec<String>> {
    let ns = cluster.namespace().unwrap_or_default();
    let api: Api<ClusterResourceSetBinding> = state.ctx.api(&ns);
    let before = match api.get_opt(&cluster.name_any()).await? {
        Some(b) => b,
        None => write::create(&api, CONTROLLER, &new_binding(cluster)?).await?,
    };
    let strategy = set.spec.strategy.unwrap_or_default();
    let mut after = before.clone();
    let entry = entry_mut(&mut after, &set.name_any());
    let mut failures = Vec::new();
    let todo: Vec<&Resource> = resources.iter().filter(|r| needs_applying(entry, r, strategy)).collect();
    if !todo.is_empty() {
        let client = match state.ctx.workload.get(&ns, &cluster.name_any()).await {
            Ok(c) => c,
            Err(e) => return Ok(vec![format!("Cluster {}: {e}", cluster.name_any())]),
        };
        for r in todo {
            let outcome = match &r.objects {
                Ok(objects) => apply_all(&client, objects, strategy).await,
                Err(e) => Err(e.clone()),
            };
            let now = state.ctx.clock().condition_time();
            let record = entry.resources.iter_mut().find(|b| b.is(&r.r));
            let record = match record {
                Some(b) => b,
                None => {
                    entry.resources.push(ResourceBinding {
                        name: r.r.name.clone(),
                        kind: r.r.kind,
                        ..Default::default()
                    });
                    entry.resources.last_mut().expect("just pushed")
                }
            };
            record.hash = Some(r.hash.clone());
            record.applied = outcome.is_ok();
            match outcome {
                Ok(()) => record.last_applied_time = Some(now),
                Err(e) => {
                    failures.push(format!("{} {} to Cluster {}: {e}", r.r.kind.as_str(), r.r.name, cluster.name_any()))
                }
            }
        }
    }
    state.writer.apply(&api, &before, &after).await?;
    Ok(failures)
}

/// Whether `r` must be applied again given what the binding records.
fn needs_applying(entry: &ResourceSetBinding, r: &Resource, strategy: ClusterResourceSetStrategy) -> bool {
    let Some(done) = entry.resources.iter().find(|b| b.is(&r.r)).filter(|b| b.applied) else { return true };
    strategy == ClusterResourceSetStrategy::Reconcile && done.hash.as_deref() != Some(r.hash.as_str())
}

fn entry_mut<'a>(binding: &'a mut ClusterResourceSetBinding, set: &str) -> &'a mut ResourceSetBinding {
    let bindings = &mut binding.spec.bindings;
    let i = match bindings.iter().position(|b| b.cluster_resource_set_name == set) {
        Some(i) => i,
        None => {
            bindings.push(ResourceSetBinding { cluster_resource_set_name: set.to_string(), resources: Vec::new() });
            bindings.len() - 1
        }
    };
    &mut bindings[i]
}

fn new_binding(cluster: &Cluster) -> Result<ClusterResourceSetBinding> {
    let owner = owner::owner_ref(cluster).ok_or_else(|| Error::inconsistent("Cluster", "no name or uid yet"))?;
    let mut b = ClusterResourceSetBinding::new(
        &cluster.name_any(),
        ClusterResourceSetBindingSpec { bindings: Vec::new(), cluster_name: cluster.name_any() },
    );
    b.metadata.namespace = cluster.namespace();
    b.metadata.owner_references = Some(vec![owner]);
    Ok(b)
}

/// Takes a deleted set out of every binding of its namespace; a binding left with no set is
/// deleted. What the set applied stays in the workload clusters, as upstream leaves it.
pub(super) async fn release(state: &State, set: &ClusterResourceSet) -> Result<()> {
    let ns = set.namespace().unwrap_or_default();
    let api: Api<ClusterResourceSetBinding> = state.ctx.api(&ns);
    for before in api.list(&ListParams::default()).await? {
        let mut after = before.clone();
        after.spec.bindings.retain(|b| b.cluster_resource_set_name != set.name_any());
        if after.spec.bindings.len() == before.spec.bindings.len() {
            continue;
        }
        if after.spec.bindings.is_empty() {
            delete_if_present(&api, CONTROLLER, &before.name_any()).await?;
        } else {
            state.writer.apply(&api, &before, &after).await?;
        }
    }
    Ok(())
}
