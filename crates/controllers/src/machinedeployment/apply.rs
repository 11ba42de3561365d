//! The apply step of a MachineDeployment reconcile: the writes its plan asks for.

use drydock_api::capi::core::{MachineDeployment, MachineSet};
use kube::api::Api;

use super::plan::{Plan, Planned, Write};
use super::{NAME, State, WRITER, cleanup};
use crate::framework::Result;
use crate::framework::write::{self, delete_if_present};

/// Creates the new set first (nothing else is written if that fails), then writes every
/// other set that changed, adopting orphans; a set whose replicas changed gets a scaling
/// event.
pub(super) async fn write_sets(st: &State, md: &MachineDeployment, plan: &Plan, key: &str) -> Result<()> {
    for p in plan.iter().filter(|p| p.write == Write::Create) {
        create(st, md, &p.want, key).await?;
    }
    for p in plan.iter().filter(|p| p.write != Write::Create && p.want != *p.before) {
        if !update(st, md, p).await? {
            continue;
        }
        let ns = p.want.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.want.metadata.name.as_deref().unwrap_or_default();
        let (from, to) = (p.before.spec.replicas.unwrap_or(0), p.want.spec.replicas.unwrap_or(0));
        if from != to {
            let note = format!("Scaled MachineSet {ns}/{name}: {from} -> {to}");
            st.ctx.events.normal(&p.want, "SuccessfulScale", note).await;
        }
    }
    Ok(())
}

/// Writes what differs of one set. Returns false when the set is gone.
async fn update(st: &State, md: &MachineDeployment, p: &Planned) -> Result<bool> {
    let ns = p.want.metadata.namespace.as_deref().unwrap_or_default();
    let name = p.want.metadata.name.as_deref().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    match WRITER.apply(&api, &p.before, &p.want).await {
        Ok(_) if p.write == Write::Adopt => {
            st.ctx.events.normal(md, "SuccessfulAdopt", format!("Adopted MachineSet {name:?}")).await;
            Ok(true)
        }
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => {
            if p.want.spec.replicas != p.before.spec.replicas {
                let note = format!("Failed to scale MachineSet {ns}/{name}: {e}");
                st.ctx.events.warning(&p.want, "FailedScale", note).await;
            }
            Err(e)
        }
    }
}

/// Creates the set for the deployment's current template.
async fn create(st: &State, md: &MachineDeployment, ms: &MachineSet, key: &str) -> Result<()> {
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let name = ms.metadata.name.clone().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    match write::create(&api, NAME, ms).await {
        Ok(_) => {
            st.expectations.expect_create(key, &name);
            st.ctx.events.normal(md, "SuccessfulCreate", format!("Created MachineSet {ns}/{name}")).await;
            Ok(())
        }
        Err(e) => {
            st.ctx.events.warning(md, "FailedCreate", format!("Failed to create MachineSet {ns}/{name}: {e}")).await;
            Err(e.into())
        }
    }
}

/// Deletes old empty sets beyond the revision history limit.
pub(super) async fn cleanup(st: &State, md: &MachineDeployment, plan: &Plan) -> Result<()> {
    let ns = md.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    for name in cleanup::to_delete(plan, md.spec.revision_history_limit) {
        match delete_if_present(&api, NAME, &name).await {
            Ok(_) => {
                st.ctx.events.normal(md, "SuccessfulDelete", format!("Deleted MachineSet {ns}/{name}")).await;
            }
            Err(e) => {
                let note = format!("Failed to delete MachineSet {ns}/{name}: {e}");
                st.ctx.events.warning(md, "FailedDelete", note).await;
                return Err(e);
            }
        }
    }
    Ok(())
}
