//! What a reconcile writes last: the phase, the Ready summary (with the Machine's readiness
//! gates) and observedGeneration, plus the certificate expiry of control plane Machines.

use drydock_api::capi::conditions::{self, Condition, HasConditions, READY, Severity};
use drydock_api::capi::core::machine_phase;
use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::CERTIFICATES_EXPIRY_ANNOTATION;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::framework::objects::is_control_plane;
use crate::framework::referenced::Referenced;
use crate::framework::{Error, Result};
use drydock_api::capi::condition_types::BOOTSTRAP_READY;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;

/// Conditions summarised into a Machine's Ready, in priority order.
const READY_SUMMARY: &[&str] =
    &[INFRASTRUCTURE_READY, BOOTSTRAP_READY, "HealthCheckSucceeded", "OwnerRemediated", "DrainingSucceeded"];

/// What the phase of a Machine is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PhaseInputs {
    pub bootstrap_ready: bool,
    pub infrastructure_ready: bool,
    pub has_provider_id: bool,
    pub has_node_ref: bool,
    pub failed: bool,
    pub deleting: bool,
}

impl PhaseInputs {
    pub fn of(m: &Machine) -> Self {
        Self {
            bootstrap_ready: m.bootstrap_data_secret_created(),
            infrastructure_ready: m.infrastructure_provisioned(),
            has_provider_id: m.spec.provider_id.is_some(),
            has_node_ref: m.node_name().is_some(),
            failed: m.failure().is_some(),
            deleting: m.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// The phase after `previous`: rules applied in order, later ones overriding earlier ones.
/// Without a rule that applies, the previous phase stays.
pub(crate) fn phase(previous: Option<&str>, i: PhaseInputs) -> String {
    let mut p = match previous {
        None | Some("") => machine_phase::PENDING,
        Some(p) => p,
    };
    if i.bootstrap_ready && !i.infrastructure_ready {
        p = machine_phase::PROVISIONING;
    }
    if i.has_provider_id {
        p = machine_phase::PROVISIONED;
    }
    if i.has_node_ref && i.infrastructure_ready {
        p = machine_phase::RUNNING;
    }
    if i.failed {
        p = machine_phase::FAILED;
    }
    if i.deleting {
        p = machine_phase::DELETING;
    }
    p.to_string()
}

/// Reason of a readiness gate's condition that nobody has reported yet.
const GATE_NOT_REPORTED: &str = "ReadinessGateNotReported";

/// The conditions `spec.readinessGates` name, as the summary reads them: each from the
/// Machine's v1beta1 conditions, else from its v1beta2 ones (where other controllers report
/// them). A gate holds Ready back until its condition is True: one not True, or not
/// reported yet, counts as False (v1beta1 summaries rank Unknown below True).
fn gate_conditions(m: &Machine, now: &Time) -> Vec<Condition> {
    let gates = m.spec.readiness_gates.iter().flatten();
    let v1beta2 = m.v1beta2_conditions();
    let own = m.conditions();
    gates
        .map(|g| {
            let type_ = g.condition_type.as_str();
            if let Some(c) = conditions::get(own, type_) {
                return if c.is_true() {
                    c.clone()
                } else {
                    held_back(type_, c.reason.as_deref(), c.message.as_deref(), now)
                };
            }
            match v1beta2.iter().find(|c| c.type_ == type_) {
                Some(c) if c.status == conditions::STATUS_TRUE => {
                    Condition::true_(type_, c.last_transition_time.clone())
                }
                Some(c) => held_back(type_, Some(c.reason.as_str()), Some(c.message.as_str()), now),
                None => held_back(
                    type_,
                    Some(GATE_NOT_REPORTED),
                    Some(&format!("readiness gate {type_} has not been reported")),
                    now,
                ),
            }
        })
        .collect()
}

fn held_back(type_: &str, reason: Option<&str>, message: Option<&str>, now: &Time) -> Condition {
    let reason = reason.filter(|r| !r.is_empty()).unwrap_or(GATE_NOT_REPORTED);
    let message =
        message.filter(|m| !m.is_empty()).map_or_else(|| format!("readiness gate {type_} is not true"), str::to_string);
    Condition::false_(type_, reason, Severity::Info, &message, now.clone())
}

/// Sets Ready to the summary of [`READY_SUMMARY`] and the readiness gates.
fn set_ready(m: &mut Machine, now: &Time) {
    let gates: Vec<&str> = m.spec.readiness_gates.iter().flatten().map(|g| g.condition_type.as_str()).collect();
    if gates.is_empty() {
        m.set_ready_summary(READY_SUMMARY, now.clone());
        return;
    }
    let mut types: Vec<&str> = READY_SUMMARY.to_vec();
    types.extend(gates.iter().filter(|g| !READY_SUMMARY.contains(g)));
    let mut all: Vec<Condition> =
        m.conditions().iter().filter(|c| !gates.contains(&c.type_.as_str())).cloned().collect();
    all.extend(gate_conditions(m, now));
    if let Some(ready) = conditions::summary(&all, &types, now.clone()) {
        conditions::set(m.conditions_mut(), ready);
    }
}

/// Sets phase (and lastUpdated when it changes) and Ready; returns when `Available` is due.
/// observedGeneration is set when writing (see [`crate::framework::write::Status`]).
pub(crate) fn finish(
    before: &Machine,
    m: &mut Machine,
    up_to_date: Option<Observed>,
    now: Time,
) -> Option<std::time::Duration> {
    let previous = before.status.as_ref().and_then(|s| s.phase.as_deref());
    let next = phase(previous, PhaseInputs::of(m));
    set_ready(m, &now);
    if let Some(u) = up_to_date {
        m.set_v1beta2(u, &now);
    }
    let available_due = super::v1beta2::finish(m, &now);
    let s = m.status.get_or_insert_with(Default::default);
    if previous != Some(next.as_str()) {
        s.phase = Some(next);
        s.last_updated = Some(now);
    }
    debug_assert!(m.get_condition(READY).is_none() || m.conditions()[0].type_ == READY);
    available_due
}

/// `status.certificatesExpiryDate` of control plane Machines: from the Machine's
/// annotation, else from the bootstrap config's, else none.
pub(crate) fn certificates_expiry(m: &mut Machine, config: Option<&Referenced>) -> Result<()> {
    if !is_control_plane(m) {
        return Ok(());
    }
    let own = m.metadata.annotations.as_ref().and_then(|a| a.get(CERTIFICATES_EXPIRY_ANNOTATION)).cloned();
    let value = own.or_else(|| config.and_then(|c| c.annotation(CERTIFICATES_EXPIRY_ANNOTATION)).map(String::from));
    let expiry = match value {
        None => None,
        Some(v) => Some(Time(v.parse().map_err(|e| {
            Error::inconsistent(
                format!("annotation {CERTIFICATES_EXPIRY_ANNOTATION}={v:?}"),
                format!("not an RFC 3339 time: {e}"),
            )
        })?)),
    };
    let s = m.status.get_or_insert_with(Default::default);
    if s.certificates_expiry_date != expiry {
        s.certificates_expiry_date = expiry;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> PhaseInputs {
        PhaseInputs::default()
    }

    #[test]
    fn phases_follow_the_rules_in_order() {
        assert_eq!(phase(None, inputs()), "Pending");
        let boot = PhaseInputs { bootstrap_ready: true, ..inputs() };
        assert_eq!(phase(Some("Pending"), boot), "Provisioning");
        let provisioned = PhaseInputs { has_provider_id: true, infrastructure_ready: true, ..boot };
        assert_eq!(phase(Some("Provisioning"), provisioned), "Provisioned");
        let running = PhaseInputs { has_node_ref: true, ..provisioned };
        assert_eq!(phase(Some("Provisioned"), running), "Running");
        assert_eq!(phase(Some("Running"), PhaseInputs { failed: true, ..running }), "Failed");
        assert_eq!(phase(Some("Failed"), PhaseInputs { deleting: true, failed: true, ..running }), "Deleting");
        // No rule applies: the previous phase stays.
        assert_eq!(phase(Some("Running"), inputs()), "Running");
        // Without a bootstrap config the Machine skips Provisioning.
        assert_eq!(phase(Some("Pending"), PhaseInputs { has_provider_id: true, ..inputs() }), "Provisioned");
    }

    #[test]
    fn finish_touches_last_updated_only_on_phase_change() {
        let mut before = Machine::new("m", Default::default());
        before.metadata.generation = Some(3);
        let mut m = before.clone();
        let t1 = drydock_api::capi::conditions::time_at(jiff::Timestamp::now());
        finish(&before, &mut m, None, t1.clone());
        let s = m.status.clone().unwrap();
        assert_eq!(s.phase.as_deref(), Some("Pending"));
        assert_eq!(s.last_updated, Some(t1));
        let mut again = m.clone();
        finish(&m, &mut again, None, Time(jiff::Timestamp::from_second(1).unwrap()));
        assert_eq!(again.status, m.status);
    }

    #[test]
    fn up_to_date_goes_out_with_the_status_write_and_stays_when_not_known() {
        use drydock_api::capi::v1beta2_conditions::names::{NOT_UP_TO_DATE_REASON, UP_TO_DATE};
        let before = Machine::new("m", Default::default());
        let mut m = before.clone();
        let now = Time(jiff::Timestamp::from_second(5).unwrap());
        let outdated = Observed::false_(UP_TO_DATE, NOT_UP_TO_DATE_REASON, "* Version v1.30.2 (v1.31.0 wanted)");
        finish(&before, &mut m, Some(outdated), now.clone());
        let c = m.v1beta2_condition(UP_TO_DATE).cloned().expect("UpToDate set");
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", NOT_UP_TO_DATE_REASON));
        // A write that does not know (a deleting Machine) keeps what the Machine carries.
        let mut again = m.clone();
        finish(&m, &mut again, None, now);
        assert_eq!(again.v1beta2_condition(UP_TO_DATE), Some(&c));
    }

    #[test]
    fn readiness_gates_hold_ready_back_until_their_conditions_are_true() {
        use drydock_api::capi::core::v1beta2::MachineReadinessGate;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition as MetaCondition;
        let now = Time(jiff::Timestamp::from_second(100).unwrap());
        let mut m = Machine::new("m", Default::default());
        m.spec.readiness_gates =
            Some(vec![MachineReadinessGate { condition_type: "example.com/Attached".into(), polarity: None }]);
        for t in READY_SUMMARY.iter().take(2) {
            conditions::mark_true(m.conditions_mut(), t, now.clone());
        }
        let ready = |m: &Machine| m.get_condition(READY).cloned().unwrap();
        set_ready(&mut m, &now);
        let r = ready(&m);
        assert_eq!((r.status.as_str(), r.reason.as_deref()), ("False", Some(GATE_NOT_REPORTED)));
        assert_eq!(r.severity.as_deref(), Some("Info"));
        let gate = |status: &str| MetaCondition {
            type_: "example.com/Attached".into(),
            status: status.into(),
            reason: "Volume".into(),
            message: "volume not attached".into(),
            last_transition_time: now.clone(),
            observed_generation: None,
        };
        let report = |m: &mut Machine, status: &str| {
            m.status.get_or_insert_with(Default::default).conditions = Some(vec![gate(status)]);
        };
        report(&mut m, "False");
        set_ready(&mut m, &now);
        let r = ready(&m);
        assert_eq!((r.status.as_str(), r.message.as_deref()), ("False", Some("volume not attached")));
        report(&mut m, "True");
        set_ready(&mut m, &now);
        assert!(ready(&m).is_true());
        // Without gates Ready is the plain summary.
        m.spec.readiness_gates = None;
        m.status.as_mut().unwrap().conditions = None;
        set_ready(&mut m, &now);
        assert!(ready(&m).is_true());
    }

    #[test]
    fn certificate_expiry_from_annotations() {
        let mut m = Machine::new("m", Default::default());
        m.metadata.labels = Some([("cluster.x-k8s.io/control-plane".to_string(), String::new())].into());
        m.metadata.annotations =
            Some([(CERTIFICATES_EXPIRY_ANNOTATION.to_string(), "2030-01-01T00:00:00Z".to_string())].into());
        certificates_expiry(&mut m, None).unwrap();
        assert!(m.status.as_ref().unwrap().certificates_expiry_date.is_some());
        m.metadata.annotations = Some([(CERTIFICATES_EXPIRY_ANNOTATION.to_string(), "soon".to_string())].into());
        assert!(certificates_expiry(&mut m, None).is_err());
        m.metadata.annotations = None;
        certificates_expiry(&mut m, None).unwrap();
        assert!(m.status.as_ref().unwrap().certificates_expiry_date.is_none());
    }
}
