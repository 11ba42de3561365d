//! Creating and deleting Machines until a MachineSet has `spec.replicas` of them.
//!
//! Deleting Machines count as existing, so no replacement is created before a deleting
//! Machine is really gone. Creating waits for the preflight checks (see
//! [`super::preflight`]); deleting never does. Creations and deletions not yet visible in
//! the cache count as done (see [`crate::framework::expectations`]).

use std::sync::Arc;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::condition_types::{
    BOOTSTRAP_TEMPLATE_CLONING_FAILED, INFRASTRUCTURE_TEMPLATE_CLONING_FAILED, MACHINE_CREATION_FAILED,
    MACHINES_CREATED, PREFLIGHT_CHECK_FAILED,
};
use drydock_api::capi::conditions::{HasConditions, Severity, time_at};
use drydock_api::capi::core::MachineSetDeletePolicy;
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineSet};
use drydock_api::capi::keys::{DISABLE_MACHINE_CREATE_ANNOTATION, has_annotation};
use drydock_api::capi::owner;
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;

use super::State;
use super::delete_policy;
use super::machines::{machine_annotations, machine_labels, machine_name, new_machine};
use super::preflight::{self, Verdict};
use crate::framework::names::random_suffix;

use crate::context::Context;
use crate::external::{self, CloneSpec};
use crate::framework::expectations::Outstanding;
use crate::framework::{Error, Result, referenced, write};

/// Machines created at once by one reconcile; each takes three API calls.
const CREATE_CONCURRENCY: usize = 8;
/// Random names tried before giving up on finding an unused one.
const NAME_ATTEMPTS: usize = 5;

/// What scaling a set decided, for the caller's requeue.
#[derive(Debug, Default, PartialEq, Eq)]
pub enum Scale {
    #[default]
    Steady,
    /// Machines were created or are being created.
    Up,
    /// Machines were deleted or are being deleted.
    Down,
    /// Machines are missing but the preflight checks hold their creation.
    Held,
}

/// How many Machines to create (negative: delete) given the set's Machines.
/// Creations in flight count as Machines; a scale down waits for them to show up so it
/// can choose among them.
pub fn replica_diff(desired: usize, owned: usize, pending_creates: usize) -> isize {
    let total = owned + pending_creates;
    if total < desired {
        desired as isize - total as isize
    } else if owned > desired {
        desired as isize - owned as isize
    } else {
        0
    }
}

/// Brings the number of Machines to `spec.replicas`. Creating needs the preflight checks
/// to pass (`read` is the set as read, whose annotations and template they look at).
/// Failures to create are recorded in the MachinesCreated condition of `ms` and returned
/// after the other Machines were tried.
pub async fn sync(
    st: &State,
    ms: &mut MachineSet,
    read: &MachineSet,
    cluster: &Cluster,
    owned: &[Arc<Machine>],
    pending: &Outstanding,
    now: Timestamp,
) -> Result<Scale> {
    let desired = ms.spec.replicas.unwrap_or(1).max(0) as usize;
    let diff = replica_diff(desired, owned.len(), pending.creates.len());
    if diff > 0 {
        if has_annotation(ms.metadata.annotations.as_ref(), DISABLE_MACHINE_CREATE_ANNOTATION) {
            tracing::debug!(machineset = ?ms.metadata.name, "machine creation is disabled by annotation");
            return Ok(Scale::Steady);
        }
        // Checks that cannot run (no control plane yet, a bad version) hold the scale up
        // like failing ones: the control plane's or the set's next change wakes it, which
        // beats retrying on an error backoff.
        let verdict = preflight::check(st, cluster, read, preflight::ACTION_SCALE_UP).await;
        if let Verdict::Error(e) = &verdict {
            tracing::warn!(machineset = ?ms.metadata.name, error = %e, "preflight checks cannot run");
        }
        if let Some(message) = verdict.message() {
            ms.mark_false(MACHINES_CREATED, PREFLIGHT_CHECK_FAILED, Severity::Error, message, time_at(now));
            return Ok(Scale::Held);
        }
        if let Err(f) = create(st, ms, diff as usize).await {
            let message = f.error.to_string();
            ms.mark_false(MACHINES_CREATED, f.reason, Severity::Error, &message, time_at(now));
            return Err(f.error);
        }
        ms.mark_true(MACHINES_CREATED, time_at(now));
        return Ok(Scale::Up);
    }
    if diff < 0 {
        delete(st, ms, owned, pending, (-diff) as usize, now).await?;
        return Ok(Scale::Down);
    }
    Ok(Scale::Steady)
}

struct CreateFailure {
    reason: &'static str,
    error: Error,
}

/// Creates `count` Machines; the last failure is returned after all were tried.
async fn create(st: &State, ms: &MachineSet, count: usize) -> Result<(), CreateFailure> {
    let results: Vec<Result<String, CreateFailure>> = futures::stream::iter(0..count)
        .map(|_| create_one(st, ms))
        .buffer_unordered(CREATE_CONCURRENCY)
        .collect()
        .await;
    let mut failure = None;
    for r in results {
        match r {
            Ok(name) => {
                let note = format!("Created machine {name:?}");
                st.ctx.events.normal(ms, "SuccessfulCreate", note).await;
            }
            Err(f) => {
                let note = format!("Failed to create machine: {}", f.error);
                st.ctx.events.warning(ms, "FailedCreate", note).await;
                failure = Some(f);
            }
        }
    }
    failure.map_or(Ok(()), Err)
}

/// A new Machine name no cached Machine and no pending creation uses (the infrastructure
/// machine and bootstrap config are named after it, so a clash would share them). The
/// name is recorded as a pending creation.
fn unused_name(st: &State, ms: &MachineSet, ns: &str, key: &str) -> Result<String> {
    for _ in 0..NAME_ATTEMPTS {
        let name = machine_name(ms, &random_suffix())
            .map_err(|e| Error::InvalidSpec(format!("machine naming template: {e}")))?;
        let cached = st.ctx.informers.machines.store.get(&ObjectRef::new(&name).within(ns)).is_some();
        if !cached && st.expectations.expect_create(key, &name) {
            return Ok(name);
        }
    }
    Err(Error::InvalidSpec(format!(
        "machine naming template: no unused Machine name after {NAME_ATTEMPTS} attempts (does it use {{{{ .random }}}}?)"
    )))
}

/// Clones the bootstrap config and the infrastructure machine, then creates the Machine.
/// Clones of a failed creation are deleted (best effort; they are owned by the set, so
/// garbage collection removes leftovers with it).
async fn create_one(st: &State, ms: &MachineSet) -> Result<String, CreateFailure> {
    let fail = |reason, error| CreateFailure { reason, error };
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let key = super::key(ms);
    let name = unused_name(st, ms, ns, &key).map_err(|e| fail(MACHINE_CREATION_FAILED, e))?;
    let result = clone_and_create(st, ms, ns, &name).await;
    if result.is_err() {
        st.expectations.cancel_create(&key, &name);
    }
    result.map(|_| name)
}

async fn clone_and_create(st: &State, ms: &MachineSet, ns: &str, name: &str) -> Result<(), CreateFailure> {
    let fail = |reason, error| CreateFailure { reason, error };
    let ctx = &st.ctx;
    let tpl = &ms.spec.template.spec;
    let bootstrap = match tpl.bootstrap.config_ref.as_ref() {
        Some(t) => {
            Some(clone_versioned(ctx, ms, t, name).await.map_err(|e| fail(BOOTSTRAP_TEMPLATE_CLONING_FAILED, e))?)
        }
        None => None,
    };
    let infra = match clone_versioned(ctx, ms, &tpl.infrastructure_ref, name).await {
        Ok(r) => r,
        Err(e) => {
            delete_clones(ctx, ns, [bootstrap.as_ref()]).await;
            return Err(fail(INFRASTRUCTURE_TEMPLATE_CLONING_FAILED, e));
        }
    };
    let machine = new_machine(ms, name, infra.clone(), bootstrap.clone());
    let api: Api<Machine> = st.ctx.api(ns);
    if let Err(e) = write::create_if_absent(&api, super::NAME, &machine).await {
        delete_clones(ctx, ns, [bootstrap.as_ref(), Some(&infra)]).await;
        return Err(fail(MACHINE_CREATION_FAILED, e));
    }
    Ok(())
}

/// Clones the template a v1beta2 reference (group only) names for the Machine `name` of the
/// set, in the version the kind's CRD names for the contract.
async fn clone_versioned(
    ctx: &Context,
    ms: &MachineSet,
    template: &ContractVersionedObjectReference,
    name: &str,
) -> Result<ObjectReference> {
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let Some(r) = referenced::resolve(ctx, ns, template).await? else {
        return Err(Error::Missing(format!("the CustomResourceDefinition of {}", template.kind)));
    };
    let spec = CloneSpec {
        template: &r,
        namespace: ns,
        name,
        cluster_name: &ms.spec.cluster_name,
        labels: machine_labels(ms),
        annotations: machine_annotations(ms),
        owner: owner::owner_ref(ms),
    };
    external::clone_from_template(ctx, super::NAME, spec).await
}

/// Deletes the clones of a failed creation, retrying a few times: the failure that made
/// them useless is often a passing one (an API server answering 503), and a clone left
/// behind is a machine nothing manages until its set goes.
async fn delete_clones<'a>(ctx: &Context, ns: &str, refs: impl IntoIterator<Item = Option<&'a ObjectReference>>) {
    for r in refs.into_iter().flatten() {
        let name = r.name.as_deref().unwrap_or_default();
        let api = external::api_for(ctx, ns, r).await;
        for attempt in 0..CLEANUP_ATTEMPTS {
            match api.delete(name, &Default::default()).await {
                Ok(_) => break,
                Err(kube::Error::Api(s)) if s.code == 404 => break,
                Err(e) if attempt + 1 == CLEANUP_ATTEMPTS => {
                    tracing::warn!(object = name, error = %e, "could not delete the clone of a failed machine creation");
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,
            }
        }
    }
}

/// Tries to delete the clones of a failed creation.
const CLEANUP_ATTEMPTS: u32 = 5;

async fn delete(
    st: &State,
    ms: &MachineSet,
    owned: &[Arc<Machine>],
    pending: &Outstanding,
    count: usize,
    now: Timestamp,
) -> Result<()> {
    let policy = ms.spec.deletion.as_ref().and_then(|d| d.order).unwrap_or(MachineSetDeletePolicy::Random);
    let deleting = |m: &Machine| {
        m.metadata.deletion_timestamp.is_some() || m.metadata.name.as_ref().is_some_and(|n| pending.deletes.contains(n))
    };
    let victims = delete_policy::pick(owned, policy, count, now, deleting);
    let ns = ms.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<Machine> = st.ctx.api(ns);
    let key = super::key(ms);
    let mut error = None;
    for m in victims {
        if deleting(m) {
            continue;
        }
        let name = m.metadata.name.as_deref().unwrap_or_default();
        match write::delete_if_present(&api, super::NAME, name).await {
            Ok(_) => {
                st.expectations.expect_delete(&key, name);
                st.ctx.events.normal(ms, "SuccessfulDelete", format!("Deleted machine {name:?}")).await;
            }
            Err(e) => {
                st.ctx.events.warning(ms, "FailedDelete", format!("Failed to delete machine {name:?}: {e}")).await;
                error = Some(e);
            }
        }
    }
    error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_counts_pending_creations_but_deletes_only_visible_machines() {
        assert_eq!(replica_diff(3, 0, 0), 3);
        assert_eq!(replica_diff(3, 1, 2), 0);
        assert_eq!(replica_diff(3, 1, 1), 1);
        assert_eq!(replica_diff(1, 3, 0), -2);
        // Scaled down while creations are in flight: wait for them to be visible.
        assert_eq!(replica_diff(1, 1, 4), 0);
        assert_eq!(replica_diff(1, 2, 4), -1);
        assert_eq!(replica_diff(0, 0, 0), 0);
    }
}
