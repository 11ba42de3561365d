//! The Machine's v1beta2 summary conditions, computed last in every status write from what
//! the reconcile observed: `Deleting` (which deletion step holds the Machine), `Updating`,
//! `Ready` (the summary, with the readiness gates) and `Available`.
//!
//! `BootstrapConfigReady` and `InfrastructureReady` are set where the provider objects are
//! read (`contract`), `NodeReady` and `NodeHealthy` where the Node is (`node`);
//! `HealthCheckSucceeded` and `OwnerRemediated` by the MachineHealthCheck. `UpToDate` is
//! set with them in each status write for Machines of a MachineDeployment
//! (`framework::machine_template`), by the KubeadmControlPlane for its own.

use std::time::Duration;

use drydock_api::capi::condition_types::{
    BOOTSTRAP_READY, DELETED, DRAINING_SUCCEEDED, INFRASTRUCTURE_READY, NODE_HEALTHY, PRE_DRAIN_HOOK_SUCCEEDED,
    PRE_TERMINATE_HOOK_SUCCEEDED, VOLUME_DETACH_SUCCEEDED,
};
use drydock_api::capi::conditions::{self, HasConditions};
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::v1beta2_conditions::names::{
    AVAILABLE, AVAILABLE_REASON, BOOTSTRAP_CONFIG_READY, DELETING, DELETING_NODE_REASON, DELETING_REASON,
    DRAINING_NODE_REASON, HEALTH_CHECK_SUCCEEDED, INFRASTRUCTURE_READY as V1BETA2_INFRASTRUCTURE_READY,
    NODE_HEALTHY as V1BETA2_NODE_HEALTHY, NOT_DELETING_REASON, NOT_READY_REASON, NOT_UPDATING_REASON, READY, UPDATING,
    WAITING_FOR_BOOTSTRAP_DELETION_REASON, WAITING_FOR_INFRASTRUCTURE_DELETION_REASON,
    WAITING_FOR_MIN_READY_SECONDS_REASON, WAITING_FOR_PRE_DRAIN_HOOK_REASON, WAITING_FOR_PRE_TERMINATE_HOOK_REASON,
    WAITING_FOR_VOLUME_DETACH_REASON,
};
use drydock_api::capi::v1beta2_conditions::{
    self as v1beta2, Condition, HasV1Beta2Conditions, Input, Observed, Reasons,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The inputs of `Ready` besides the readiness gates.
const READY_INPUTS: &[Input<'static>] = &[
    Input::negative(DELETING),
    Input::negative(UPDATING),
    Input::positive(BOOTSTRAP_CONFIG_READY),
    Input::positive(V1BETA2_INFRASTRUCTURE_READY),
    Input::positive(V1BETA2_NODE_HEALTHY),
    Input::positive(HEALTH_CHECK_SUCCEEDED).optional(),
];

/// Sets `Deleting`, `Updating`, `Ready` and `Available`. Returns when `Available` is due
/// (a Ready Machine waiting out `spec.minReadySeconds`).
pub(crate) fn finish(m: &mut Machine, now: &Time) -> Option<Duration> {
    m.set_v1beta2(deleting(m), now);
    // drydock updates Machines by replacing them, never in place.
    m.set_v1beta2(Observed::false_(UPDATING, NOT_UPDATING_REASON, ""), now);
    let ready = ready(m);
    m.set_v1beta2(ready, now);
    let (available, due) = available(m, now);
    m.set_v1beta2(available, now);
    due
}

/// `Available`: Ready for at least `spec.minReadySeconds`, and when that is still to come,
/// how long until it is.
fn available(m: &Machine, now: &Time) -> (Observed, Option<Duration>) {
    let Some(ready) = m.v1beta2_condition(READY).filter(|c| c.status == conditions::STATUS_TRUE) else {
        return (Observed::false_(AVAILABLE, NOT_READY_REASON, ""), None);
    };
    let min_ready = u64::try_from(m.spec.min_ready_seconds.unwrap_or(0)).unwrap_or(0);
    let due = ready.last_transition_time.0.checked_add(Duration::from_secs(min_ready)).ok();
    match due.filter(|due| *due > now.0) {
        Some(due) => (
            Observed::false_(AVAILABLE, WAITING_FOR_MIN_READY_SECONDS_REASON, ""),
            Some(now.0.duration_until(due).unsigned_abs()),
        ),
        None => (Observed::true_(AVAILABLE, AVAILABLE_REASON), None),
    }
}

/// `Ready`: the summary of [`READY_INPUTS`] and `spec.readinessGates`. A gate's condition is
/// read from the v1beta2 conditions, else from the v1beta1 ones (where a controller writing
/// only those reports it).
fn ready(m: &Machine) -> Observed {
    let gates: Vec<&str> = m.spec.readiness_gates.iter().flatten().map(|g| g.condition_type.as_str()).collect();
    if gates.is_empty() {
        return v1beta2::summary(READY, m.v1beta2_conditions(), READY_INPUTS, Reasons::READY);
    }
    let mut all = m.v1beta2_conditions().to_vec();
    for gate in &gates {
        if v1beta2::get(&all, gate).is_none()
            && let Some(c) = conditions::get(m.conditions(), gate)
        {
            all.push(Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
                last_transition_time: c.last_transition_time.clone(),
                observed_generation: None,
            });
        }
    }
    let mut inputs = READY_INPUTS.to_vec();
    inputs.extend(gates.iter().filter(|g| !READY_INPUTS.iter().any(|i| i.type_ == **g)).map(|g| Input::positive(g)));
    v1beta2::summary(READY, &all, &inputs, Reasons::READY)
}

/// `Deleting`: False while the Machine is not being deleted, else True with the step that
/// holds it, read from the deletion steps' v1beta1 conditions (each is False while its step
/// waits; the steps run in this order).
fn deleting(m: &Machine) -> Observed {
    if m.metadata.deletion_timestamp.is_none() {
        return Observed::false_(DELETING, NOT_DELETING_REASON, "");
    }
    let own = m.conditions();
    let waiting = |type_: &str| conditions::get(own, type_).filter(|c| c.is_false());
    let message = |c: &conditions::Condition| c.message.clone().unwrap_or_default();
    let steps = [
        (PRE_DRAIN_HOOK_SUCCEEDED, WAITING_FOR_PRE_DRAIN_HOOK_REASON),
        (DRAINING_SUCCEEDED, DRAINING_NODE_REASON),
        (VOLUME_DETACH_SUCCEEDED, WAITING_FOR_VOLUME_DETACH_REASON),
        (PRE_TERMINATE_HOOK_SUCCEEDED, WAITING_FOR_PRE_TERMINATE_HOOK_REASON),
    ];
    for (type_, reason) in steps {
        if let Some(c) = waiting(type_) {
            return Observed::true_(DELETING, reason).with_message(message(c));
        }
    }
    // The provider objects go after the pre-terminate hooks: until then their conditions
    // still say whether they are ready, not whether they are gone.
    if conditions::is_true(own, PRE_TERMINATE_HOOK_SUCCEEDED) {
        for (type_, reason, what) in [
            (INFRASTRUCTURE_READY, WAITING_FOR_INFRASTRUCTURE_DELETION_REASON, "infrastructure"),
            (BOOTSTRAP_READY, WAITING_FOR_BOOTSTRAP_DELETION_REASON, "bootstrap config"),
        ] {
            if conditions::get(own, type_).is_some_and(|c| c.reason.as_deref() != Some(DELETED)) {
                return Observed::true_(DELETING, reason).with_message(format!("Waiting for the {what} to be deleted"));
            }
        }
        let node = conditions::get(own, NODE_HEALTHY).map(message).unwrap_or_default();
        return Observed::true_(DELETING, DELETING_NODE_REASON).with_message(node);
    }
    Observed::true_(DELETING, DELETING_REASON)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::conditions::Severity;

    fn at(secs: i64) -> Time {
        Time(jiff::Timestamp::from_second(secs).unwrap())
    }

    fn provisioned() -> Machine {
        let mut m = Machine::new("m", Default::default());
        for type_ in [BOOTSTRAP_CONFIG_READY, V1BETA2_INFRASTRUCTURE_READY, V1BETA2_NODE_HEALTHY] {
            m.set_v1beta2(Observed::true_(type_, "Ready"), &at(1));
        }
        m
    }

    fn get<'a>(m: &'a Machine, type_: &str) -> (&'a str, &'a str, &'a str) {
        let c = m.v1beta2_condition(type_).unwrap();
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
    }

    #[test]
    fn ready_and_available_follow_the_inputs() {
        let mut m = provisioned();
        finish(&mut m, &at(2));
        assert_eq!(get(&m, READY), ("True", "Ready", ""));
        assert_eq!(get(&m, AVAILABLE), ("True", "Available", ""));
        assert_eq!(get(&m, DELETING), ("False", "NotDeleting", ""));
        let types: Vec<_> = m.v1beta2_conditions().iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(
            types,
            [
                "Available",
                "Ready",
                "BootstrapConfigReady",
                "InfrastructureReady",
                "NodeHealthy",
                "Updating",
                "Deleting"
            ]
        );

        m.set_v1beta2(
            Observed::false_(V1BETA2_NODE_HEALTHY, "NodeNotHealthy", "Node condition Ready is False"),
            &at(3),
        );
        finish(&mut m, &at(3));
        assert_eq!(get(&m, READY), ("False", "NotReady", "* NodeHealthy: Node condition Ready is False"));
        assert_eq!(get(&m, AVAILABLE).0, "False");
        assert_eq!(m.v1beta2_condition(READY).unwrap().last_transition_time, at(3));

        // A health check counts once it exists.
        let mut m = provisioned();
        m.set_v1beta2(Observed::false_(HEALTH_CHECK_SUCCEEDED, "UnhealthyNode", "unhealthy"), &at(1));
        finish(&mut m, &at(2));
        assert_eq!(get(&m, READY), ("False", "NotReady", "* HealthCheckSucceeded: unhealthy"));
    }

    #[test]
    fn available_waits_out_min_ready_seconds() {
        let mut m = provisioned();
        m.spec.min_ready_seconds = Some(30);
        assert_eq!(finish(&mut m, &at(2)), Some(std::time::Duration::from_secs(30)));
        assert_eq!(get(&m, AVAILABLE), ("False", WAITING_FOR_MIN_READY_SECONDS_REASON, ""));
        assert_eq!(finish(&mut m, &at(22)), Some(std::time::Duration::from_secs(10)), "Ready since 2");
        assert_eq!(finish(&mut m, &at(32)), None);
        assert_eq!(get(&m, AVAILABLE), ("True", "Available", ""));
    }

    #[test]
    fn readiness_gates_count_from_either_condition_list() {
        use drydock_api::capi::core::v1beta2::MachineReadinessGate;
        let mut m = provisioned();
        m.spec.readiness_gates =
            Some(vec![MachineReadinessGate { condition_type: "example.com/Attached".into(), polarity: None }]);
        finish(&mut m, &at(2));
        assert_eq!(get(&m, READY), ("Unknown", "ReadyUnknown", "* example.com/Attached: Condition not yet reported"));
        m.mark_false("example.com/Attached", "Waiting", Severity::Info, "volume not attached", at(2));
        finish(&mut m, &at(3));
        assert_eq!(get(&m, READY), ("False", "NotReady", "* example.com/Attached: volume not attached"));
        m.set_v1beta2(Observed::true_("example.com/Attached", "Attached"), &at(4));
        finish(&mut m, &at(4));
        assert_eq!(get(&m, READY).0, "True");
    }

    #[test]
    fn deleting_names_the_step_that_holds_the_machine() {
        let mut m = provisioned();
        m.metadata.deletion_timestamp = Some(at(5));
        m.mark_true(PRE_DRAIN_HOOK_SUCCEEDED, at(5));
        m.mark_false(DRAINING_SUCCEEDED, "Draining", Severity::Info, "Draining Node n: 2 Pods left", at(5));
        finish(&mut m, &at(5));
        assert_eq!(get(&m, DELETING), ("True", "DrainingNode", "Draining Node n: 2 Pods left"));
        assert_eq!(get(&m, READY).0, "False");

        m.mark_true(DRAINING_SUCCEEDED, at(6));
        m.mark_true(PRE_TERMINATE_HOOK_SUCCEEDED, at(6));
        m.mark_false(INFRASTRUCTURE_READY, "Deleting", Severity::Info, "", at(6));
        finish(&mut m, &at(6));
        assert_eq!(get(&m, DELETING).1, "WaitingForInfrastructureDeletion");

        m.mark_false(INFRASTRUCTURE_READY, DELETED, Severity::Info, "", at(7));
        m.mark_false(NODE_HEALTHY, "Deleting", Severity::Info, "Waiting for the Node to be deleted", at(7));
        finish(&mut m, &at(7));
        assert_eq!(get(&m, DELETING), ("True", "DeletingNode", "Waiting for the Node to be deleted"));
    }
}
