//! Waiting, once the Node is drained, until its volumes are detached (upstream's step 2c):
//! while `status.volumesAttached` of the Node lists a volume, or a VolumeAttachment on it is
//! attached. Volumes of pods the drain left in place are not waited for: they stay with
//! those pods.
//!
//! Not waited for with the `machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach`
//! annotation, when the Node is gone or unreachable, and once `spec.nodeVolumeDetachTimeout`
//! (when positive) has passed since the wait started
//! (`status.deletion.waitForNodeVolumeDetachStartTime`).

use std::collections::BTreeSet;
use std::time::Duration;

use drydock_api::capi::condition_types::{VOLUME_DETACH_SUCCEEDED, WAITING_FOR_VOLUME_DETACH};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine, MachineDeletionStatus};
use drydock_api::capi::keys::{EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION, has_annotation};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::State;
use super::drain::{Judge, PodAction, timeout_left, unreachable};
use crate::framework::Result;
use crate::framework::node_reader::NodeReader;

/// How often the wait looks again (upstream: 20 s; drydock's simulated volumes detach at
/// once, so a wait is usually a test or a user holding one).
const DETACH_RETRY: Duration = Duration::from_secs(5);

/// Whether deletion may go on.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Detach {
    Done,
    /// Look again after this long.
    Wait(Duration),
}

/// Time left before the wait gives up, `None` without a timeout.
fn time_left(m: &Machine, now: Timestamp) -> Option<Duration> {
    let started = m.status.as_ref()?.deletion.as_ref()?.wait_for_node_volume_detach_start_time.as_ref();
    timeout_left(m.spec.deletion.as_ref()?.node_volume_detach_timeout_seconds, started, now)
}

/// Waits for the Node's volumes; see the module documentation.
pub(super) async fn run(state: &State, m: &mut Machine, cluster: &Cluster, now: &Time) -> Result<Detach> {
    if has_annotation(m.metadata.annotations.as_ref(), EXCLUDE_WAIT_FOR_NODE_VOLUME_DETACH_ANNOTATION)
        || m.is_condition_true(VOLUME_DETACH_SUCCEEDED)
    {
        return Ok(Detach::Done);
    }
    let precise_now = state.ctx.clock().now();
    let left = time_left(m, precise_now);
    if left == Some(Duration::ZERO) {
        tracing::info!(machine = %m.name_any(), "volume detach timed out; deleting the machine anyway");
        return Ok(Detach::Done);
    }
    let Some(node) = NodeReader::of(&state.ctx, cluster).await?.of_machine(m).await? else {
        return Ok(Detach::Done);
    };
    if unreachable(&node) {
        return Ok(Detach::Done);
    }
    let attached = attached_volumes(state, m, cluster, &node, precise_now).await?;
    if attached.is_empty() {
        m.mark_true(VOLUME_DETACH_SUCCEEDED, now.clone());
        return Ok(Detach::Done);
    }
    let status = m.status.get_or_insert_with(Default::default);
    let deletion = status.deletion.get_or_insert_with(MachineDeletionStatus::default);
    if deletion.wait_for_node_volume_detach_start_time.is_none() {
        deletion.wait_for_node_volume_detach_start_time = Some(now.clone());
    }
    let shown: Vec<&str> = attached.iter().take(5).map(String::as_str).collect();
    let more = if attached.len() > shown.len() { ", ..." } else { "" };
    let msg = format!("Waiting for Node volumes to be detached: {}{more}", shown.join(", "));
    m.mark_false(VOLUME_DETACH_SUCCEEDED, WAITING_FOR_VOLUME_DETACH, Severity::Info, &msg, now.clone());
    Ok(Detach::Wait(DETACH_RETRY.min(left.unwrap_or(DETACH_RETRY))))
}

/// The volumes still attached to `node`, but for those of pods the drain skipped: the
/// Node's `volumesAttached` names and the persistent volumes of attached VolumeAttachments.
async fn attached_volumes(
    state: &State,
    m: &Machine,
    cluster: &Cluster,
    node: &Node,
    now: Timestamp,
) -> Result<Vec<String>> {
    let client = state.ctx.workload.get(&cluster.namespace().unwrap_or_default(), &cluster.name_any()).await?;
    let node_name = node.name_any();
    let on_node: Vec<String> = node
        .status
        .as_ref()
        .and_then(|s| s.volumes_attached.as_ref())
        .into_iter()
        .flatten()
        .map(|v| v.name.clone())
        .collect();
    let attachments: Vec<String> = Api::<VolumeAttachment>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|va| va.spec.node_name == node_name && va.status.as_ref().is_some_and(|s| s.attached))
        .map(|va| va.spec.source.persistent_volume_name.clone().unwrap_or_else(|| va.name_any()))
        .collect();
    if on_node.is_empty() && attachments.is_empty() {
        return Ok(Vec::new());
    }
    let kept = skipped_pods_volumes(state, m, cluster, node, &client, now).await?;
    let mut waiting: BTreeSet<String> = on_node.into_iter().filter(|n| !kept.attached_names.contains(n)).collect();
    waiting.extend(attachments.into_iter().filter(|pv| !kept.volumes.contains(pv)));
    Ok(waiting.into_iter().collect())
}

/// The persistent volumes of the pods the drain left on the Node, by name and as the Node
/// lists CSI volumes in `volumesAttached` (`kubernetes.io/csi/<driver>^<handle>`).
#[derive(Default)]
struct Kept {
    volumes: BTreeSet<String>,
    attached_names: BTreeSet<String>,
}

async fn skipped_pods_volumes(
    state: &State,
    m: &Machine,
    cluster: &Cluster,
    node: &Node,
    client: &kube::Client,
    now: Timestamp,
) -> Result<Kept> {
    let plan = Judge::of(state, m, cluster, node, now).await?.plan().await?;
    let skipped = plan.pods.iter().zip(&plan.actions).filter(|(_, (_, a, _))| *a == PodAction::Skip).map(|(p, _)| p);
    let mut kept = Kept::default();
    for (ns, claim) in skipped.flat_map(claims) {
        let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
        let Some(volume) = pvcs.get_opt(&claim).await?.and_then(|c| c.spec?.volume_name) else { continue };
        if let Some(csi) =
            Api::<PersistentVolume>::all(client.clone()).get_opt(&volume).await?.and_then(|v| v.spec?.csi)
        {
            kept.attached_names.insert(format!("kubernetes.io/csi/{}^{}", csi.driver, csi.volume_handle));
        }
        kept.volumes.insert(volume);
    }
    Ok(kept)
}

/// `(namespace, claim name)` of every PersistentVolumeClaim a pod mounts.
fn claims(p: &Pod) -> Vec<(String, String)> {
    let ns = p.namespace().unwrap_or_default();
    let volumes = p.spec.as_ref().and_then(|s| s.volumes.as_ref());
    volumes
        .into_iter()
        .flatten()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| (ns.clone(), c.claim_name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{MachineDeletionSpec, MachineStatus};
    use serde_json::json;

    #[test]
    fn detach_deadline() {
        let mut m = Machine::new("m", Default::default());
        let at = |s| Timestamp::from_second(s).expect("ts");
        m.spec.deletion =
            Some(MachineDeletionSpec { node_volume_detach_timeout_seconds: Some(30), ..Default::default() });
        assert_eq!(time_left(&m, at(10)), None, "not started");
        let deletion =
            MachineDeletionStatus { wait_for_node_volume_detach_start_time: Some(Time(at(100))), ..Default::default() };
        m.status = Some(MachineStatus { deletion: Some(deletion), ..Default::default() });
        assert_eq!(time_left(&m, at(110)), Some(Duration::from_secs(20)));
        assert_eq!(time_left(&m, at(200)), Some(Duration::ZERO));
        m.spec.deletion =
            Some(MachineDeletionSpec { node_volume_detach_timeout_seconds: Some(0), ..Default::default() });
        assert_eq!(time_left(&m, at(200)), None, "zero waits forever");
    }

    #[test]
    fn claims_of_a_pod() {
        let p: Pod = serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "apps"}, "spec": {
            "containers": [],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}},
                        {"name": "tmp", "emptyDir": {}}]}}))
        .expect("pod");
        assert_eq!(claims(&p), [("apps".to_string(), "data-0".to_string())]);
    }
}
