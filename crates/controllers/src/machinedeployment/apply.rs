//! The apply step of a MachineDeployment reconcile: the writes its plan asks for.

use std::borrow::Cow;

use drydock_api::capi::core::conversion::revision_history_limit;
use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineSet};
use kube::api::Api;

use super::plan::{Plan, Planned, Write};
use super::{MANAGER, NAME, State, WRITER, build, cleanup};
use crate::framework::Result;
use crate::framework::apply::{self, carry_removals};
use crate::framework::write::{self, delete_if_present};

/// Creates the new set first (nothing else is written if that fails), then writes every
/// other set that changed, adopting orphans; a set whose replicas changed gets a scaling
/// event.
pub(super) async fn write_sets(st: &State, md: &MachineDeployment, plan: &Plan, key: &str) -> Result<()> {
    for p in plan.iter().filter(|p| p.write == Write::Create) {
        create(st, md, &p.want, key).await?;
    }
    for p in plan.iter().filter(|p| p.write != Write::Create && (p.want != *p.before || needs_apply(p))) {
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

/// Whether applying what the deployment owns would change the set.
fn needs_apply(p: &Planned) -> bool {
    p.owned
        .as_ref()
        .is_some_and(|c| apply::would_change(&build::in_place_current(&p.before), &p.before.metadata, MANAGER, c))
}

/// Writes what differs of one set: first what the deployment owns, server-side applied,
/// then the rest as a merge patch. Returns false when the set is gone.
async fn update(st: &State, md: &MachineDeployment, p: &Planned) -> Result<bool> {
    let ns = p.want.metadata.namespace.as_deref().unwrap_or_default();
    let name = p.want.metadata.name.as_deref().unwrap_or_default();
    let api: Api<MachineSet> = st.ctx.api(ns);
    let (mut base, mut want) = (Cow::Borrowed(&*p.before), Cow::Borrowed(&p.want));
    if let Some(config) = p.owned.as_ref().filter(|_| needs_apply(p)) {
        match apply::apply(&api, NAME, &p.before.metadata, MANAGER, config).await {
            Ok(written) => {
                want = Cow::Owned(rebased(p, &written));
                base = Cow::Owned(written);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(false),
            Err(e) => return Err(e.into()),
        }
    }
    match WRITER.apply(&api, &base, &want).await {
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

/// The planned set on top of what an apply wrote: the server's bookkeeping, and the keys
/// the apply removed, taken over, so the merge patch that follows carries only the rest.
fn rebased(p: &Planned, written: &MachineSet) -> MachineSet {
    let mut want = p.want.clone();
    let (w, b) = (&written.metadata, &p.before.metadata);
    carry_removals(&mut want.metadata.labels, b.labels.as_ref(), w.labels.as_ref());
    carry_removals(&mut want.metadata.annotations, b.annotations.as_ref(), w.annotations.as_ref());
    want.metadata.resource_version = w.resource_version.clone();
    want.metadata.generation = w.generation;
    want.metadata.managed_fields = w.managed_fields.clone();
    want
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
    for name in cleanup::to_delete(plan, revision_history_limit(md)) {
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
