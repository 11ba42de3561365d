//! Deleting a simulated machine: its Node and static pods leave the workload cluster (when
//! it still exists), then the finalizer goes.

use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::framework::write::remove_finalizer;
use drydock_controllers::framework::{Requeue, Result};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::ResourceExt;
use kube::api::Api;

use super::workload::context;
use super::{API_SERVER_PROVISIONED, ETCD_PROVISIONED, MachineCtx, NODE_PROVISIONED, cluster_of};
use crate::fabricate::{self, API_SERVER_COMPONENTS, ETCD, KUBE_SYSTEM};
use crate::kinds::SimulatedMachine;
use crate::logical::LogicalCluster;

pub(super) async fn reconcile_delete<K: SimulatedMachine>(imm: &K, c: &MachineCtx, api: &Api<K>) -> Result<Requeue> {
    if !imm.finalizers().iter().any(|f| f == K::FINALIZER) {
        return Ok(Requeue::await_change());
    }
    let ns = imm.namespace().unwrap_or_default();
    let name = imm.name_any();
    let controller = c.writer.controller();
    let machines = &c.p.ctx.informers.machines.store;
    if let Some(cluster) = cluster_of(imm, |r| machines.get(r)) {
        let lc = LogicalCluster::new(&c.p.host.client, &LogicalClusterName::for_cluster(&ns, &cluster));
        if imm.get_condition(ETCD_PROVISIONED).is_some() || imm.get_condition(API_SERVER_PROVISIONED).is_some() {
            for component in std::iter::once(ETCD).chain(API_SERVER_COMPONENTS) {
                lc.delete::<Pod>(controller, Some(KUBE_SYSTEM), &fabricate::pod_name(component, &name))
                    .await
                    .map_err(|e| context(e, "deleting the control plane pods"))?;
            }
        }
        if imm.get_condition(NODE_PROVISIONED).is_some() {
            lc.delete::<Node>(controller, None, &name).await.map_err(|e| context(e, "deleting the Node"))?;
        }
        c.index.forget(&ns, &cluster, &name);
    }
    c.created.lock().remove(&format!("{ns}/{name}"));
    c.writer.forget(imm);
    let mut want = imm.clone();
    remove_finalizer(&mut want, K::FINALIZER);
    c.writer.apply(api, imm, &want).await?;
    Ok(Requeue::await_change())
}
