//! DevMachinePools are served (so that manifests with them apply) but nothing provisions
//! them: drydock has no MachinePool controller yet. Rather than leave them silently alone,
//! this controller gives each one `Ready=False` with reason `NotReconciled` and a message
//! saying so (and one Warning Event when it first does), so `kubectl describe` and
//! `drydock describe` show why nothing happens.

use std::sync::Arc;

use drydock_api::capi::condition_types::NOT_RECONCILED;
use drydock_api::capi::conditions::{READY, STATUS_FALSE};
use drydock_api::capi::dev::v1beta2::{DevMachinePool, MACHINE_POOLS_NOT_RECONCILED_MESSAGE};
use drydock_controllers::Running;
use drydock_controllers::framework::runner;
use drydock_controllers::framework::write::Writer;
use drydock_controllers::framework::{Requeue, Result};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::ResourceExt;
use kube::api::Api;

use crate::ProviderContext;

const NAME: &str = "devmachinepool";

struct PoolCtx {
    p: Arc<ProviderContext>,
    writer: Writer,
}

/// The controller. Only it reads DevMachinePools, so it owns their informer.
pub fn controller(pctx: &Arc<ProviderContext>) -> Running {
    let state = Arc::new(PoolCtx { p: pctx.clone(), writer: Writer::new(NAME) });
    runner::run_alone::<DevMachinePool, _, _, _>(NAME, &pctx.ctx, 4, state, reconcile)
}

/// The status a DevMachinePool gets: its Ready condition says nothing reconciles it (the
/// transition time kept while it already said so).
fn not_reconciled(pool: &DevMachinePool, now: Time) -> DevMachinePool {
    let mut want = pool.clone();
    let status = want.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let since = conditions
        .iter()
        .find(|c| c.type_ == READY && c.status == STATUS_FALSE)
        .map_or(now, |c| c.last_transition_time.clone());
    conditions.retain(|c| c.type_ != READY);
    conditions.insert(
        0,
        Condition {
            type_: READY.to_string(),
            status: STATUS_FALSE.to_string(),
            reason: NOT_RECONCILED.to_string(),
            message: MACHINE_POOLS_NOT_RECONCILED_MESSAGE.to_string(),
            last_transition_time: since,
            observed_generation: pool.metadata.generation,
        },
    );
    status.ready = Some(false);
    want
}

async fn reconcile(pool: Arc<DevMachinePool>, c: Arc<PoolCtx>) -> Result<Requeue> {
    if pool.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let p = &c.p;
    let want = not_reconciled(&pool, p.ctx.clock().condition_time());
    let api: Api<DevMachinePool> = p.ctx.api(&pool.namespace().unwrap_or_default());
    let first = pool.status.as_ref().and_then(|s| s.conditions.as_ref()).is_none_or(|c| c.is_empty());
    if c.writer.write_status(&api, &pool, &want).await?.is_some() && first {
        p.ctx.events.warning(pool.as_ref(), NOT_RECONCILED, MACHINE_POOLS_NOT_RECONCILED_MESSAGE.to_string()).await;
    }
    Ok(Requeue::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions::time_at;

    #[test]
    fn pools_say_nothing_reconciles_them_and_keep_saying_it_unchanged() {
        let t = |s| time_at(jiff::Timestamp::from_second(s).expect("time"));
        let mut pool = DevMachinePool::new("p", Default::default());
        pool.metadata.generation = Some(2);
        let once = not_reconciled(&pool, t(100));
        let ready = &once.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default()[0];
        assert_eq!(
            (ready.type_.as_str(), ready.status.as_str(), ready.reason.as_str()),
            ("Ready", "False", NOT_RECONCILED)
        );
        assert_eq!(ready.observed_generation, Some(2));
        let twice = not_reconciled(&once, t(200));
        assert_eq!(twice, once, "the same status later: no write");
    }
}
