//! What a reconcile writes last: the phase, the Ready summary and observedGeneration, plus
//! the certificate expiry of control plane Machines.

use drydock_api::capi::conditions::{HasConditions, READY};
use drydock_api::capi::core::{Machine, machine_phase};
use drydock_api::capi::keys::CERTIFICATES_EXPIRY_ANNOTATION;
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
        let s = m.status.as_ref();
        Self {
            bootstrap_ready: s.and_then(|s| s.bootstrap_ready).unwrap_or(false),
            infrastructure_ready: s.and_then(|s| s.infrastructure_ready).unwrap_or(false),
            has_provider_id: m.spec.provider_id.is_some(),
            has_node_ref: s.is_some_and(|s| s.node_ref.is_some()),
            failed: s.is_some_and(|s| s.failure_reason.is_some() || s.failure_message.is_some()),
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

/// Sets phase (and lastUpdated when it changes) and Ready. observedGeneration is set when
/// writing (see [`crate::framework::write::Status`]).
pub(crate) fn finish(before: &Machine, m: &mut Machine, now: Time) {
    let previous = before.status.as_ref().and_then(|s| s.phase.as_deref());
    let next = phase(previous, PhaseInputs::of(m));
    m.set_ready_summary(READY_SUMMARY, now.clone());
    let s = m.status.get_or_insert_with(Default::default);
    if previous != Some(next.as_str()) {
        s.phase = Some(next);
        s.last_updated = Some(now);
    }
    debug_assert!(m.get_condition(READY).is_none() || m.conditions()[0].type_ == READY);
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
        // Infrastructure readiness lost after Running: back to Provisioned.
        let lost = PhaseInputs { infrastructure_ready: false, ..running };
        assert_eq!(phase(Some("Running"), lost), "Provisioned");
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
        finish(&before, &mut m, t1.clone());
        let s = m.status.clone().unwrap();
        assert_eq!(s.phase.as_deref(), Some("Pending"));
        assert_eq!(s.last_updated, Some(t1));
        let mut again = m.clone();
        finish(&m, &mut again, Time(jiff::Timestamp::from_second(1).unwrap()));
        assert_eq!(again.status, m.status);
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
