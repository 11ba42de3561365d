//! The Cluster's phase, computed from its references, initialization, endpoint, failure
//! and deletion, with an Event for each change; and its v1beta1 Ready summary.

use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::cluster_phase;
use drydock_api::capi::core::v1beta2::Cluster;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::READY_SUMMARY;
use crate::framework::events::PendingEvents;

/// What the phase of a Cluster is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PhaseInputs {
    pub(super) has_refs: bool,
    pub(super) infrastructure_ready: bool,
    pub(super) endpoint_valid: bool,
    pub(super) failed: bool,
    pub(super) deleting: bool,
}

impl PhaseInputs {
    fn of(c: &Cluster) -> Self {
        Self {
            has_refs: c.spec.infrastructure_ref.is_some() || c.spec.control_plane_ref.is_some(),
            infrastructure_ready: c.infrastructure_provisioned(),
            endpoint_valid: c.spec.control_plane_endpoint.as_ref().is_some_and(|e| e.is_valid()),
            failed: c.failure().is_some(),
            deleting: c.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// The phase after `previous`: rules in order, later ones overriding earlier ones.
/// Control plane readiness is not required for Provisioned (as upstream).
pub(super) fn phase(previous: Option<&str>, i: PhaseInputs) -> &str {
    let mut p = match previous {
        None | Some("") => cluster_phase::PENDING,
        Some(p) => p,
    };
    if i.has_refs {
        p = cluster_phase::PROVISIONING;
    }
    if i.infrastructure_ready && i.endpoint_valid {
        p = cluster_phase::PROVISIONED;
    }
    if i.failed {
        p = cluster_phase::FAILED;
    }
    if i.deleting {
        p = cluster_phase::DELETING;
    }
    p
}

/// Phase (with an event when it changes) and Ready; observedGeneration is set when writing.
pub(super) fn finish(before: &Cluster, c: &mut Cluster, now: Time, events: &mut PendingEvents) {
    let previous = before.status.as_ref().and_then(|s| s.phase.clone());
    let next = phase(previous.as_deref(), PhaseInputs::of(c)).to_string();
    c.set_ready_summary(READY_SUMMARY, now);
    let failure = c.failure().and_then(|f| f.failure_message.clone()).unwrap_or_default();
    let s = c.status.get_or_insert_with(Default::default);
    if previous.as_deref() != Some(next.as_str()) {
        let note = format!("Cluster {} is {next}", before.name_any());
        if next == cluster_phase::FAILED {
            let reason = failure;
            events.warning("Failed", format!("{note}: {reason}"));
        } else {
            events.normal(phase_reason(&next), note);
        }
        s.phase = Some(next);
    }
}

fn phase_reason(phase: &str) -> &'static str {
    match phase {
        cluster_phase::PENDING => "Pending",
        cluster_phase::PROVISIONING => "Provisioning",
        cluster_phase::PROVISIONED => "Provisioned",
        cluster_phase::DELETING => "Deleting",
        _ => "PhaseChanged",
    }
}
