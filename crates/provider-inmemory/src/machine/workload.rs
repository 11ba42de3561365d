//! What a simulated machine does in its workload cluster: register the Node, join etcd,
//! start the control plane pods, upload kubeadm-config, and keep the Node in line with
//! the machine's fault annotation.

use std::collections::BTreeMap;

use drydock_controllers::etcd::{self, Membership};
use drydock_controllers::framework::nodes::NodeSync;
use drydock_controllers::framework::{Error, Result};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::ListParams;

use super::steps::Step;
use super::{
    API_SERVER_PROVISIONED, ETCD_PROVISIONED, FAULT_APPLIED, FAULT_DELETED_NODE, JOINED, KUBEADM_CONFIG_UPLOADED,
    MachineCtx, NODE_PROVISIONED,
};
use crate::fabricate::{self, API_SERVER_COMPONENTS, ETCD, KUBE_SYSTEM, MachineFacts};
use crate::fault::{self, FAULT_REASON, Fault};
use crate::logical::LogicalCluster;
use crate::timing::{Deadlines, fnv1a};

/// A machine's view of its workload cluster, for running [`Step`]s.
pub(super) struct Workload<'a> {
    pub lc: LogicalCluster,
    pub lc_name: &'a str,
    pub facts: MachineFacts<'a>,
    /// The machine's `namespace/name` in [`MachineCtx::created`].
    pub key: &'a str,
    pub cluster_name: &'a str,
    pub fault: Option<Fault>,
}

impl Workload<'_> {
    pub async fn run(&self, c: &MachineCtx, step: Step, deadlines: &Deadlines) -> Result<()> {
        let (lc, facts, key) = (&self.lc, &self.facts, self.key);
        let controller = c.writer.controller();
        // A kubelet that never registered runs no static pods: no etcd member, no API
        // server, no `kubeadm init` (so a first control plane machine that failed to
        // provision leaves the control plane uninitialized, as with kubeadm).
        let kubelet_down = c.created(key, FAULT_DELETED_NODE);
        if kubelet_down
            && matches!(step, Step::CreateEtcdMember | Step::CreateControlPlanePods | Step::UploadKubeadmConfig)
        {
            return Ok(());
        }
        match step {
            Step::CreateNode => {
                if self.fault == Some(Fault::NodeDeleted) {
                    c.record(key, FAULT_DELETED_NODE);
                } else {
                    lc.create(controller, &fabricate::node(facts, deadlines.node)?)
                        .await
                        .map_err(|e| context(e, "creating the Node"))?;
                }
                c.record(key, NODE_PROVISIONED);
            }
            Step::ApplyFault => {
                apply_fault(c, lc, self.lc_name, facts, key, self.fault)
                    .await
                    .map_err(|e| context(e, "injecting a fault"))?;
            }
            Step::CreateEtcdMember => {
                let at = deadlines.etcd.unwrap_or(deadlines.node);
                let founded = create_etcd_member(controller, lc, facts, at)
                    .await
                    .map_err(|e| context(e, "creating the etcd member"))?;
                c.record(key, ETCD_PROVISIONED);
                if !founded {
                    c.record(key, JOINED);
                }
            }
            Step::CreateControlPlanePods => {
                let at = deadlines.api_server.unwrap_or(deadlines.node);
                for component in API_SERVER_COMPONENTS {
                    let pod = fabricate::static_pod(facts, component, BTreeMap::new(), at)?;
                    lc.create(controller, &pod).await.map_err(|e| context(e, "creating the control plane pods"))?;
                }
                c.record(key, API_SERVER_PROVISIONED);
            }
            Step::UploadKubeadmConfig if !c.created(key, JOINED) => {
                lc.create(controller, &fabricate::kubeadm_config(self.cluster_name, facts.version))
                    .await
                    .map_err(|e| context(e, "uploading kubeadm-config"))?;
                c.record(key, KUBEADM_CONFIG_UPLOADED);
            }
            Step::UploadKubeadmConfig => {}
        }
        Ok(())
    }
}

/// Brings the Node in line with the machine's fault annotation (see [`crate::fault`]). The
/// Node is read only for machines with a fault (or one just healed), or when the Node store
/// shows a Ready condition a fault set (left over from before a restart).
pub(super) async fn apply_fault(
    c: &MachineCtx,
    lc: &LogicalCluster,
    lc_name: &str,
    facts: &MachineFacts<'_>,
    key: &str,
    fault: Option<Fault>,
) -> Result<()> {
    let deleted_by_fault = c.created(key, FAULT_DELETED_NODE);
    let applied = c.created(key, FAULT_APPLIED);
    let leftover = || {
        let store = c.p.ctx.informers.nodes.as_ref().filter(|n| n.sync() == NodeSync::Synced);
        store.and_then(|s| s.get(lc_name, facts.name)).is_some_and(|n| {
            let conditions = n.status.as_ref().and_then(|s| s.conditions.as_ref());
            conditions.into_iter().flatten().any(|c| c.type_ == "Ready" && c.reason.as_deref() == Some(FAULT_REASON))
        })
    };
    if fault.is_none() && !applied && !deleted_by_fault && !leftover() {
        return Ok(());
    }
    let controller = c.writer.controller();
    let node: Option<Node> = lc.get(None, facts.name).await?;
    match fault::plan(node.as_ref(), fault, deleted_by_fault, c.p.ctx.clock().now())? {
        fault::Action::Nothing => {}
        fault::Action::Delete => {
            lc.delete::<Node>(controller, None, facts.name).await?;
            c.record(key, FAULT_DELETED_NODE);
        }
        fault::Action::Recreate => {
            lc.create(controller, &fabricate::node(facts, c.p.ctx.clock().now())?).await?;
            c.forget(key, FAULT_DELETED_NODE);
        }
        fault::Action::SetConditions(patch) => {
            lc.patch_status::<Node>(controller, None, facts.name, &patch).await?;
        }
    }
    if facts.control_plane {
        let down = fault == Some(Fault::EtcdMemberDown);
        apply_etcd_fault(controller, lc, facts.name, down, c.p.ctx.clock().now()).await?;
    }
    if fault.is_some() {
        c.record(key, FAULT_APPLIED);
    } else if !c.created(key, FAULT_DELETED_NODE) {
        c.forget(key, FAULT_APPLIED);
    }
    Ok(())
}

/// Fails or heals the machine's etcd member (the `etcd-member-down` fault). A failed leader
/// loses the leadership to the first healthy member, as etcd's election would give it.
async fn apply_etcd_fault(controller: &str, lc: &LogicalCluster, node: &str, down: bool, now: Timestamp) -> Result<()> {
    let name = etcd::pod_name(node);
    let Some(pod) = lc.get::<Pod>(Some(KUBE_SYSTEM), &name).await? else {
        return Ok(());
    };
    let Some(patch) = fault::etcd_pod_plan(&pod, down, now) else {
        return Ok(());
    };
    lc.patch_status::<Pod>(controller, Some(KUBE_SYSTEM), &name, &patch).await?;
    if down {
        let pods: Vec<Pod> = lc.list(Some(KUBE_SYSTEM), &ListParams::default().labels(etcd::ETCD_SELECTOR)).await?;
        let members = Membership::from_pods(&pods);
        let next = members.members.iter().find(|m| m.healthy && m.node != node);
        if let (Some(true), Some(next)) = (members.leader.as_deref().map(|l| l == node), next) {
            lc.patch::<Pod>(controller, Some(KUBE_SYSTEM), &etcd::pod_name(&next.node), &etcd::leader_patch()).await?;
        }
    }
    Ok(())
}

pub(super) fn context(e: Error, what: &str) -> Error {
    Error::during(format!("{what} in the workload cluster"))(e)
}

/// Creates the `etcd-<node>` pod. Membership is read from the existing members' pods: the
/// first member founds the cluster and leads it. Returns whether this one founded it.
async fn create_etcd_member(
    controller: &str,
    lc: &LogicalCluster,
    f: &MachineFacts<'_>,
    at: Timestamp,
) -> Result<bool> {
    let pods: Vec<Pod> = match lc.list(Some(KUBE_SYSTEM), &ListParams::default().labels(etcd::ETCD_SELECTOR)).await {
        Ok(p) => p,
        // The namespace may not exist yet in a brand new logical cluster.
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e),
    };
    let existing = Membership::from_pods(&pods);
    let member_id = fnv1a(&[f.name.as_bytes(), b"/etcd-member"]) as u32;
    let annotations = etcd::new_member_annotations(&existing, member_id, rand::random(), at);
    lc.create(controller, &fabricate::static_pod(f, ETCD, annotations, at)?).await?;
    Ok(existing.members.is_empty())
}
