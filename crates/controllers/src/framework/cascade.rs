//! Deletion held by an owner's finalizer until its children are gone, as upstream's
//! MachineDeployment (`cluster.x-k8s.io/machinedeployment`) and MachineSet
//! (`cluster.x-k8s.io/machineset`) finalizers do: every child not yet being deleted is
//! deleted, and the finalizer is removed once none remains.

use std::fmt::Debug;
use std::sync::Arc;

use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::Api;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::Result;
use super::requeue::Requeue;
use super::write::{Writer, remove_finalizer};

/// What deleting an owner does next, decided from its children.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Delete these children (by name) and wait for them.
    DeleteChildren(Vec<String>),
    /// Children are still going: wait for them.
    Wait,
    /// None remains: remove the finalizer.
    RemoveFinalizer,
    /// The owner does not carry the finalizer: nothing to do.
    Nothing,
}

/// The plan for `owner`, being deleted; its children are those of `candidates` (cached
/// objects of its namespace and cluster) it controls.
pub fn plan<O: Resource, C: Resource>(owner: &O, finalizer: &str, candidates: &[Arc<C>]) -> Plan {
    if !owner.meta().finalizers.iter().flatten().any(|f| f == finalizer) {
        return Plan::Nothing;
    }
    let children: Vec<&Arc<C>> = candidates.iter().filter(|c| owner::is_controlled_by(c.meta(), owner)).collect();
    if children.is_empty() {
        return Plan::RemoveFinalizer;
    }
    let live: Vec<String> =
        children.iter().filter(|c| c.meta().deletion_timestamp.is_none()).map(|c| c.name_any()).collect();
    if live.is_empty() { Plan::Wait } else { Plan::DeleteChildren(live) }
}

/// Carries out [`plan`]. Children's deletions are seen through their watch, which triggers
/// the owner again.
pub async fn finalize<O, C>(
    writer: &Writer,
    owners: &Api<O>,
    owner: &Arc<O>,
    finalizer: &str,
    children_api: &Api<C>,
    candidates: &[Arc<C>],
) -> Result<Requeue>
where
    O: Resource + Serialize + DeserializeOwned + Clone + Debug + PartialEq,
    C: Resource + Clone + DeserializeOwned + Debug,
{
    match plan(owner.as_ref(), finalizer, candidates) {
        Plan::DeleteChildren(names) => {
            for name in names {
                writer.delete_if_present(children_api, &name).await?;
            }
        }
        Plan::RemoveFinalizer => {
            let mut done = (**owner).clone();
            remove_finalizer(&mut done, finalizer);
            writer.forget(owner.as_ref());
            writer.apply(owners, owner, &done).await?;
        }
        Plan::Wait | Plan::Nothing => {}
    }
    Ok(Requeue::await_change())
}

/// Writes the v1beta2 `Deleting` condition of `owner`, being deleted, while children it
/// controls are left (`deleting` words it from how many); returns the owner as written, the
/// version its finalizer is then removed from. With none left nothing is written: the owner
/// would not outlive the write.
pub async fn report_deleting<O, C>(
    writer: &Writer,
    owners: &Api<O>,
    owner: &Arc<O>,
    candidates: &[Arc<C>],
    deleting: impl Fn(usize) -> Observed,
    now: &Time,
) -> Result<Arc<O>>
where
    O: Resource + HasV1Beta2Conditions + Serialize + DeserializeOwned + Clone + Debug + PartialEq,
    C: Resource,
{
    let left = candidates.iter().filter(|c| owner::is_controlled_by(c.meta(), owner.as_ref())).count();
    if left == 0 {
        return Ok(owner.clone());
    }
    let mut want = (**owner).clone();
    want.set_v1beta2(deleting(left), now);
    if want == **owner {
        return Ok(owner.clone());
    }
    let out = writer.apply(owners, owner, &want).await?;
    Ok(Arc::new(out.or_wanted(&want)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::Machine;
    use drydock_api::capi::core::v1beta2::MachineSet;

    fn set(finalizers: &[&str]) -> MachineSet {
        let mut ms = MachineSet::new("ms", Default::default());
        ms.metadata.uid = Some("ms-uid".into());
        ms.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
        ms
    }

    fn machine(name: &str, deleting: bool) -> Arc<Machine> {
        let mut m = Machine::new(name, Default::default());
        m.metadata.owner_references = Some(vec![owner::controller_ref(&set(&[])).expect("owner")]);
        if deleting {
            m.metadata.deletion_timestamp = Some(drydock_api::capi::conditions::time_at(jiff::Timestamp::now()));
        }
        Arc::new(m)
    }

    #[test]
    fn children_go_first_then_the_finalizer() {
        const F: &str = "cluster.x-k8s.io/machineset";
        let ms = set(&[F, "other"]);
        let children = [machine("a", false), machine("b", true), machine("c", false)];
        assert_eq!(plan(&ms, F, &children), Plan::DeleteChildren(vec!["a".into(), "c".into()]));
        assert_eq!(plan(&ms, F, &[machine("b", true)]), Plan::Wait);
        assert_eq!(plan::<_, Machine>(&ms, F, &[]), Plan::RemoveFinalizer);
        assert_eq!(plan(&set(&["other"]), F, &children), Plan::Nothing, "not ours to hold");
        let stranger = Arc::new(Machine::new("x", Default::default()));
        assert_eq!(plan(&ms, F, &[stranger]), Plan::RemoveFinalizer, "only controlled children count");
    }
}
