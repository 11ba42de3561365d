//! The pool controller, one instance per pool kind: keeps `status.ipAddresses` current as
//! addresses come and go, and holds a pool with the `ipam.cluster.x-k8s.io/ProtectPool`
//! finalizer while any IPAddress references it (a pool in use is not deleted: it stays with
//! its deletion timestamp until its last address is gone).

use std::sync::Arc;

use drydock_api::capi::ipam::v1beta2::IPAddress;
use drydock_api::capi::keys::IPAM_PROTECT_POOL_FINALIZER;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;

use super::allocate::Allocatable;
use super::pool_ref::{PoolId, PoolKind, annotated_paused};
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::write::{Writer, add_finalizer, remove_finalizer};
use crate::framework::{Error, Result};
use crate::{Context, Running};

struct State {
    ctx: Arc<Context>,
    writer: Writer,
}

/// The controller of pools of kind `P`, triggered by its pools and by their IPAddresses.
pub fn controller<P: PoolKind>(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State { ctx: ctx.clone(), writer: Writer::tracking(P::CONTROLLER) });
    let queue = Queue::new(P::CONTROLLER);
    let pools = P::informer(&ctx.informers);
    let c = Controller::for_shared_stream(queue.track(pools.subscribe()), pools.store.clone())
        .watches_shared_stream(ctx.informers.ip_addresses.subscribe(), queue.map_to(pool_of::<P>));
    Box::pin(runner::run(
        P::CONTROLLER,
        c,
        queue,
        ctx.settings.ipam_pool_concurrency,
        ctx.clock().clone(),
        state,
        reconcile::<P>,
    ))
}

/// The pool of kind `P` an address was handed out from.
fn pool_of<P: PoolKind>(a: &IPAddress) -> Vec<ObjectRef<P>> {
    let ns = a.metadata.namespace.as_deref().unwrap_or_default();
    PoolId::of_ref(&a.spec.pool_ref, ns).and_then(|id| P::ref_of(&id)).into_iter().collect()
}

async fn reconcile<P: PoolKind>(pool: Arc<P>, state: Arc<State>) -> Result<Requeue> {
    // Before its addresses are listed, a pool would look unused.
    state.ctx.informers.ip_addresses.ready().await;
    if state.writer.is_stale(pool.as_ref()) || annotated_paused(pool.meta()) {
        return Ok(Requeue::await_change());
    }
    let id = PoolId::of_pool(pool.as_ref());
    let addresses = id.addresses(&state.ctx.informers.ip_addresses.store);
    let api = P::api(&state.ctx.client, &pool);
    let mut want = (*pool).clone();
    if pool.meta().deletion_timestamp.is_some() {
        if addresses.is_empty() {
            if remove_finalizer(&mut want, IPAM_PROTECT_POOL_FINALIZER) {
                state.writer.forget(pool.as_ref());
                state.writer.apply(&api, &pool, &want).await?;
            }
            return Ok(Requeue::await_change());
        }
        // Still in use: held, its counts kept current while its addresses go.
    } else {
        add_finalizer(&mut want, IPAM_PROTECT_POOL_FINALIZER);
    }
    let invalid = match Allocatable::from_spec(pool.spec()) {
        Ok(allocatable) => {
            let summary = allocatable.summary(addresses.iter().map(|a| a.spec.address.as_str()));
            want.status_mut().get_or_insert_with(Default::default).ip_addresses = Some(summary);
            None
        }
        Err(e) => Some(e),
    };
    state.writer.apply(&api, &pool, &want).await?;
    match invalid {
        Some(e) => Err(Error::InvalidSpec(format!("{id}: {e}"))),
        None => Ok(Requeue::await_change()),
    }
}
