//! What one reconcile of a simulated machine does, decided from what it read: the steps due
//! in the workload cluster and the conditions the progress gives the machine.

use drydock_api::capi::conditions::{Condition, time_at};
use jiff::Timestamp;

use super::{
    API_SERVER_PROVISIONED, ETCD_PROVISIONED, KUBEADM_CONFIG_UPLOADED, NODE_PROVISIONED, VM_PROVISIONED,
    WAITING_FOR_NODE_PROVISIONED, WAITING_FOR_STARTUP_TIMEOUT, WAITING_FOR_VM_PROVISIONED, true_at, waiting,
};
use crate::kinds::SimulatedMachine;
use crate::timing::{Deadlines, Progress};

/// What one reconcile does in the workload cluster, decided from what it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Registers the Node (under a deleted-Node fault, a kubelet that never registers).
    CreateNode,
    /// Brings the existing Node in line with the machine's fault annotation.
    ApplyFault,
    /// Joins etcd (or founds it).
    CreateEtcdMember,
    /// Starts the API server, scheduler and controller manager.
    CreateControlPlanePods,
    /// Uploads kubeadm-config, unless this machine joined an existing etcd cluster.
    UploadKubeadmConfig,
}

/// The steps due now: what the progress allows and was not done yet. `done` says whether
/// an object exists (its condition is True, or this process created it); `ready` whether
/// the machine already reported ready.
pub(super) fn steps(
    progress: &Progress,
    deadlines: &Deadlines,
    done: impl Fn(&'static str) -> bool,
    ready: bool,
) -> Vec<Step> {
    let mut out = Vec::new();
    if progress.node {
        out.push(if done(NODE_PROVISIONED) { Step::ApplyFault } else { Step::CreateNode });
    }
    if deadlines.etcd.is_none() || deadlines.api_server.is_none() {
        return out;
    }
    if progress.etcd && !done(ETCD_PROVISIONED) {
        out.push(Step::CreateEtcdMember);
    }
    if progress.api_server && !done(API_SERVER_PROVISIONED) {
        out.push(Step::CreateControlPlanePods);
    }
    // The machine that founded etcd ran `kubeadm init`: once it is up, kubeadm-config is
    // uploaded. (After a restart whether it founded etcd is not known; the create is then
    // idempotent.)
    if progress.all_done() && !ready && !done(KUBEADM_CONFIG_UPLOADED) {
        out.push(Step::UploadKubeadmConfig);
    }
    out
}

/// The conditions the progress at `now` gives the machine, its Ready summary and readiness.
pub(super) fn set_conditions<K: SimulatedMachine>(
    want: &mut K,
    progress: &Progress,
    deadlines: &Deadlines,
    now: Timestamp,
) {
    want.set_condition(if progress.vm {
        true_at(VM_PROVISIONED, deadlines.vm)
    } else {
        waiting(VM_PROVISIONED, WAITING_FOR_STARTUP_TIMEOUT, "Waiting for the VM to start", now)
    });
    want.set_condition(if progress.node {
        true_at(NODE_PROVISIONED, deadlines.node)
    } else if progress.vm {
        waiting(NODE_PROVISIONED, WAITING_FOR_STARTUP_TIMEOUT, "Waiting for the Node to start", now)
    } else {
        waiting(NODE_PROVISIONED, WAITING_FOR_VM_PROVISIONED, "Waiting for the VM", now)
    });
    let mut summary = vec![VM_PROVISIONED, NODE_PROVISIONED];
    if let (Some(etcd_at), Some(api_at)) = (deadlines.etcd, deadlines.api_server) {
        summary.extend([ETCD_PROVISIONED, API_SERVER_PROVISIONED]);
        want.set_condition(if progress.etcd {
            true_at(ETCD_PROVISIONED, etcd_at)
        } else {
            waiting_after_node(ETCD_PROVISIONED, progress.node, "etcd", now)
        });
        want.set_condition(if progress.api_server {
            true_at(API_SERVER_PROVISIONED, api_at)
        } else {
            waiting_after_node(API_SERVER_PROVISIONED, progress.node, "the API server", now)
        });
    }
    want.set_ready_summary(&summary, time_at(now));
    if progress.all_done() {
        want.set_ready();
    }
}

fn waiting_after_node(type_: &str, node_done: bool, what: &str, now: Timestamp) -> Condition {
    if node_done {
        waiting(type_, WAITING_FOR_STARTUP_TIMEOUT, &format!("Waiting for {what} to start"), now)
    } else {
        waiting(type_, WAITING_FOR_NODE_PROVISIONED, "Waiting for the Node", now)
    }
}

#[cfg(test)]
mod tests {
    use drydock_api::capi::conditions::HasConditions;
    use drydock_api::capi::dev::v1beta2::DevMachine;
    use std::time::Duration;

    use super::*;
    use crate::kinds::Simulated;
    use crate::timing::Plan;

    fn plan(control_plane: bool) -> Plan {
        let d = Duration::from_secs(1);
        Plan { vm: d, node: d, etcd: control_plane.then_some(d), api_server: control_plane.then_some(d) }
    }

    #[test]
    fn steps_follow_the_progress_and_skip_what_exists() {
        let t0 = Timestamp::from_second(1_000).expect("time");
        let at = |s: i64| Timestamp::from_second(1_000 + s).expect("time");
        let p = plan(true);
        let d = p.deadlines(t0);
        assert!(steps(&p.progress(t0, at(1)), &d, |_| false, false).is_empty(), "the VM is up, no Node yet");
        assert_eq!(steps(&p.progress(t0, at(2)), &d, |_| false, false), [Step::CreateNode]);
        let all = steps(&p.progress(t0, at(3)), &d, |_| false, false);
        assert_eq!(
            all,
            [Step::CreateNode, Step::CreateEtcdMember, Step::CreateControlPlanePods, Step::UploadKubeadmConfig]
        );
        let done = steps(&p.progress(t0, at(3)), &d, |_| true, false);
        assert_eq!(done, [Step::ApplyFault], "an existing Node only follows its fault");
        let worker = plan(false);
        let wd = worker.deadlines(t0);
        assert_eq!(steps(&worker.progress(t0, at(5)), &wd, |_| false, false), [Step::CreateNode]);
    }

    #[test]
    fn conditions_and_readiness_of_any_simulated_kind() {
        let t0 = Timestamp::from_second(1_000).expect("time");
        let p = plan(false);
        let d = p.deadlines(t0);
        let mut m = DevMachine::new("m", Default::default());
        set_conditions(&mut m, &p.progress(t0, t0), &d, t0);
        assert_eq!(
            m.get_condition(VM_PROVISIONED).and_then(|c| c.reason.as_deref()),
            Some(WAITING_FOR_STARTUP_TIMEOUT)
        );
        assert!(!m.is_ready());
        let later = Timestamp::from_second(1_010).expect("time");
        set_conditions(&mut m, &p.progress(t0, later), &d, later);
        assert!(m.is_ready() && m.is_condition_true("Ready"));
    }
}
