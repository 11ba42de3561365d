//! A Cluster's deletion in upstream's order (§7.4), one stage per reconcile while something
//! remains: its MachineDeployments, MachineSets, MachinePools and worker Machines, then the
//! control plane, then the infrastructure cluster, then the kubeconfig and the finalizer.

use std::sync::Arc;

use crate::framework::requeue::Requeue;
use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::cluster_phase;
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeployment, MachinePool, MachineSet};
use drydock_api::capi::keys::{CLUSTER_FINALIZER, CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL};
use drydock_api::capi::owner;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::{CONTROL_PLANE_READY, CONTROLLER, GONE_RECHECK, Seen, State, finish, in_store, mirror_ready, namespace};
use crate::framework::Result;
use crate::framework::events::PendingEvents;
use crate::framework::referenced::{self, Referenced};
use crate::framework::runner;
use crate::framework::write::{Status, delete_if_present, remove_finalizer};
use crate::workload::kubeconfig_secret_name;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;
use drydock_api::capi::v1beta2_conditions::names::{
    DELETING_REASON, WAITING_FOR_CONTROL_PLANE_DELETION_REASON, WAITING_FOR_INFRASTRUCTURE_DELETION_REASON,
    WAITING_FOR_WORKERS_DELETION_REASON,
};
use k8s_openapi::api::core::v1::ObjectReference;

/// Stage of a Cluster's deletion, decided from what still exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// Descendants remain; the ones listed (owned by the Cluster, not deleting) are deleted now.
    Descendants {
        remaining: usize,
    },
    ControlPlane,
    Infrastructure,
    Finalize,
}

/// The stage from what remains, in upstream's order.
pub(super) fn stage(descendants: usize, control_plane_exists: bool, infrastructure_exists: bool) -> Stage {
    if descendants > 0 {
        Stage::Descendants { remaining: descendants }
    } else if control_plane_exists {
        Stage::ControlPlane
    } else if infrastructure_exists {
        Stage::Infrastructure
    } else {
        Stage::Finalize
    }
}

/// A descendant found in the stores: what deleting it needs.
struct Descendant {
    api: DescendantApi,
    name: String,
    deleting: bool,
    owned: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DescendantApi {
    Deployment,
    Set,
    Pool,
    Machine,
}

fn owned_by(meta: &ObjectMeta, c: &Cluster) -> bool {
    owner::is_owned_by(meta, c)
        || meta.owner_references.iter().flatten().any(|r| r.kind == "Cluster" && r.name == c.name_any())
}

fn describe(meta: &ObjectMeta, c: &Cluster, api: DescendantApi) -> Descendant {
    Descendant {
        api,
        name: meta.name.clone().unwrap_or_default(),
        deleting: meta.deletion_timestamp.is_some(),
        owned: owned_by(meta, c),
    }
}

/// MachineDeployments, MachineSets, MachinePools and Machines of the Cluster; control
/// plane Machines only when no control plane object manages them. MachinePools have no
/// informer: they are listed on the first pass (to delete them along with the rest) and
/// once nothing else remains, not on every recheck.
async fn descendants(state: &State, c: &Cluster) -> Result<Vec<Descendant>> {
    let ns = namespace(c);
    let name = c.name_any();
    let i = &state.ctx.informers;
    let mut out = Vec::new();
    let labelled = |meta: &ObjectMeta| meta.labels.as_ref().and_then(|l| l.get(CLUSTER_NAME_LABEL)) == Some(&name);
    for md in
        state.machine_deployments.members(&ns, &name, |n| in_store(&i.machine_deployments.store, &ns, n).is_some())
    {
        if let Some(o) = in_store(&i.machine_deployments.store, &ns, &md).filter(|o| o.spec.cluster_name == name) {
            out.push(describe(&o.metadata, c, DescendantApi::Deployment));
        }
    }
    for ms in state.machine_sets.members(&ns, &name, |n| in_store(&i.machine_sets.store, &ns, n).is_some()) {
        if let Some(o) = in_store(&i.machine_sets.store, &ns, &ms).filter(|o| o.spec.cluster_name == name) {
            out.push(describe(&o.metadata, c, DescendantApi::Set));
        }
    }
    let managed_control_plane = c.spec.control_plane_ref.is_some();
    for m in state.machines.members(&ns, &name, |n| in_store(&i.machines.store, &ns, n).is_some()) {
        if let Some(o) = in_store(&i.machines.store, &ns, &m).filter(|o| o.spec.cluster_name == name) {
            let cp = o.metadata.labels.as_ref().is_some_and(|l| l.contains_key(CONTROL_PLANE_LABEL));
            if !(cp && managed_control_plane) {
                out.push(describe(&o.metadata, c, DescendantApi::Machine));
            }
        }
    }
    let key = runner::key_of(c);
    let first_pass = c.status.as_ref().and_then(|s| s.phase.as_deref()) != Some(cluster_phase::DELETING);
    if !first_pass && (!out.is_empty() || state.pools_gone.lock().contains(&key)) {
        return Ok(out);
    }
    let pools: Api<MachinePool> = state.ctx.api(&ns);
    let lp = ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={name}"));
    let before = out.len();
    for p in pools.list(&lp).await?.items.iter().filter(|p| labelled(&p.metadata)) {
        out.push(describe(&p.metadata, c, DescendantApi::Pool));
    }
    if out.len() == before && !first_pass {
        // Nothing creates MachinePools for a deleting Cluster: no need to look again.
        state.pools_gone.lock().insert(key);
    }
    Ok(out)
}

/// At most three names, then how many more: `a, b, c, ... (2 more)`.
fn name_list(mut names: Vec<&str>) -> String {
    names.sort_unstable();
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, ... ({} more)", names[..3].join(", "), n - 3),
    }
}

/// The `Deleting` message while descendants remain: one line per kind, in deletion order.
fn waiting_for_descendants(descendants: &[Descendant]) -> String {
    let kinds = [
        (DescendantApi::Deployment, "MachineDeployments"),
        (DescendantApi::Set, "MachineSets"),
        (DescendantApi::Pool, "MachinePools"),
        (DescendantApi::Machine, "Machines"),
    ];
    let mut lines = Vec::new();
    for (api, label) in kinds {
        let names: Vec<&str> = descendants.iter().filter(|d| d.api == api).map(|d| d.name.as_str()).collect();
        if !names.is_empty() {
            lines.push(format!("* {label}: {}", name_list(names)));
        }
    }
    lines.join("\n")
}

/// The `Deleting` message while the control plane or infrastructure cluster goes.
fn waiting_for(r: &ObjectReference) -> String {
    let (kind, name) = (r.kind.as_deref().unwrap_or_default(), r.name.as_deref().unwrap_or_default());
    format!("* {kind} {name}: deletion in progress")
}

async fn delete_descendant(state: &State, ns: &str, d: &Descendant) -> Result<()> {
    let ctx = &state.ctx;
    match d.api {
        DescendantApi::Deployment => delete_if_present(&ctx.api::<MachineDeployment>(ns), CONTROLLER, &d.name).await,
        DescendantApi::Set => delete_if_present(&ctx.api::<MachineSet>(ns), CONTROLLER, &d.name).await,
        DescendantApi::Pool => delete_if_present(&ctx.api::<MachinePool>(ns), CONTROLLER, &d.name).await,
        DescendantApi::Machine => delete_if_present(&ctx.api::<Machine>(ns), CONTROLLER, &d.name).await,
    }
    .map(|_| ())
}

pub(super) async fn reconcile(state: &State, cluster: &Arc<Cluster>) -> Result<Requeue> {
    if !cluster.finalizers().iter().any(|f| f == CLUSTER_FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let ctx = &state.ctx;
    let ns = namespace(cluster);
    let now = ctx.clock().condition_time();
    let mut c = (**cluster).clone();
    crate::framework::pause::set_condition(&mut c, None, cluster, now.clone());
    let descendants = descendants(state, cluster).await?;
    let mut cp = read_ref(state, cluster, c.spec.control_plane_ref.as_ref(), "controlPlaneRef").await?;
    let mut infra = read_ref(state, cluster, c.spec.infrastructure_ref.as_ref(), "infrastructureRef").await?;
    let seen = Seen {
        infra: infra.as_ref().map(|(_, o)| o.clone()),
        control_plane: cp.as_ref().map(|(_, o)| o.clone()),
        ..Seen::default()
    };
    let mut why: Option<(&str, String)> = None;
    // Each stage that finishes at once (an object without finalizers) moves on to the next.
    loop {
        if cp.is_none() && c.spec.control_plane_ref.is_some() {
            c.mark_false(CONTROL_PLANE_READY, "Deleted", Severity::Info, "", now.clone());
        }
        if infra.is_none() && c.spec.infrastructure_ref.is_some() {
            c.mark_false(INFRASTRUCTURE_READY, "Deleted", Severity::Info, "", now.clone());
        }
        match stage(descendants.len(), cp.is_some(), infra.is_some()) {
            Stage::Descendants { remaining } => {
                for d in descendants.iter().filter(|d| d.owned && !d.deleting) {
                    delete_descendant(state, &ns, d).await?;
                }
                tracing::debug!(cluster = %cluster.name_any(), remaining, "waiting for descendants to be deleted");
                why = Some((WAITING_FOR_WORKERS_DELETION_REASON, waiting_for_descendants(&descendants)));
                break;
            }
            Stage::ControlPlane => {
                let Some((r, obj)) = cp.take() else {
                    break;
                };
                if referenced::delete(ctx, CONTROLLER, &ns, &r, &obj).await? {
                    continue;
                }
                mirror_ready(&mut c, &obj, CONTROL_PLANE_READY, false, "Deleting", &now);
                why = Some((WAITING_FOR_CONTROL_PLANE_DELETION_REASON, waiting_for(&r)));
                break;
            }
            Stage::Infrastructure => {
                let Some((r, obj)) = infra.take() else {
                    break;
                };
                if referenced::delete(ctx, CONTROLLER, &ns, &r, &obj).await? {
                    continue;
                }
                mirror_ready(&mut c, &obj, INFRASTRUCTURE_READY, false, "Deleting", &now);
                why = Some((WAITING_FOR_INFRASTRUCTURE_DELETION_REASON, waiting_for(&r)));
                break;
            }
            Stage::Finalize => return finalize(state, cluster).await,
        }
    }
    let mut events = PendingEvents::default();
    finish(cluster, &mut c, now.clone(), &mut events);
    let why = why.unwrap_or((DELETING_REASON, String::new()));
    state.set_v1beta2(&mut c, &seen, Some(why), &now);
    state.writer.write(&ctx.api::<Cluster>(&ns), cluster, &c, Status::observing(true)).await?;
    events.publish(ctx, cluster.as_ref()).await;
    Ok(Requeue::after(GONE_RECHECK))
}

/// The object a reference points at, with the reference resolved; none when it is gone,
/// or its kind's CRD is (nothing of that kind can be left to delete).
async fn read_ref(
    state: &State,
    cluster: &Cluster,
    r: Option<&ContractVersionedObjectReference>,
    field: &str,
) -> Result<Option<(ObjectReference, Referenced)>> {
    let Some(r) = r else { return Ok(None) };
    let r = match super::resolve(state, cluster, r, field).await {
        Ok(r) => r,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(referenced::read(&state.ctx, &namespace(cluster), &r).await?.map(|obj| (r, obj)))
}

/// Everything else is gone: the kubeconfig (secrets owned by the Cluster follow it through
/// garbage collection), the cached workload client, then the finalizer.
async fn finalize(state: &State, cluster: &Arc<Cluster>) -> Result<Requeue> {
    let ctx = &state.ctx;
    let ns = namespace(cluster);
    let name = cluster.name_any();
    let secrets: Api<Secret> = ctx.api(&ns);
    delete_if_present(&secrets, CONTROLLER, &kubeconfig_secret_name(&name)).await?;
    ctx.workload.forget(&ns, &name);
    let mut done = (**cluster).clone();
    remove_finalizer(&mut done, CLUSTER_FINALIZER);
    state.writer.forget(cluster.as_ref());
    state.pools_gone.lock().remove(&runner::key_of(cluster.as_ref()));
    state.writer.apply(&ctx.api::<Cluster>(&ns), cluster, &done).await?;
    ctx.events.normal(cluster.as_ref(), "Deleted", format!("Cluster {name} has been deleted")).await;
    Ok(Requeue::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(api: DescendantApi, name: &str) -> Descendant {
        Descendant { api, name: name.into(), deleting: false, owned: true }
    }

    #[test]
    fn deleting_message_names_what_remains_by_kind() {
        let remaining = [
            d(DescendantApi::Machine, "w3"),
            d(DescendantApi::Deployment, "md"),
            d(DescendantApi::Machine, "w1"),
            d(DescendantApi::Machine, "w4"),
            d(DescendantApi::Machine, "w2"),
        ];
        assert_eq!(
            waiting_for_descendants(&remaining),
            "* MachineDeployments: md\n* Machines: w1, w2, w3, ... (1 more)"
        );
        let r =
            ObjectReference { kind: Some("KubeadmControlPlane".into()), name: Some("cp".into()), ..Default::default() };
        assert_eq!(waiting_for(&r), "* KubeadmControlPlane cp: deletion in progress");
    }
}
