//! What a check writes about its targets (upstream's §5.4): `HealthCheckSucceeded` on every
//! judged Machine; for unhealthy ones, when remediation is allowed, either `OwnerRemediated`
//! False (the owner — MachineSet or control plane — replaces the Machine) or, with a
//! remediation template, an external remediation request named after the Machine.
//!
//! The check never deletes Machines and never clears `OwnerRemediated` (its owner does).
//! A request is deleted once its Machine is healthy again.
//!
//! Each condition is written in both lists, v1beta1 and v1beta2, in the same write; the
//! v1beta2 reasons are upstream's (`UnhealthyNode`, `NodeDeleted`, ...).

use drydock_api::capi::condition_types::{HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED, WAITING_FOR_REMEDIATION};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Machine, MachineHealthCheck};
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::{HasV1Beta2Conditions, Observed, names};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject};

use super::CONTROLLER;
use super::judge::Verdict;
use crate::external::{self, CloneSpec};
use crate::framework::write::delete_if_present;
use crate::framework::{Error, Result};

/// The Machine with the conditions the check wants on it. `owner_remediation`: remediation
/// is allowed and done by the owner (no template), so an unhealthy Machine is handed over.
pub(crate) fn desired(m: &Machine, verdict: &Verdict, owner_remediation: bool, now: &Time) -> Machine {
    let mut want = m.clone();
    match verdict {
        Verdict::Healthy => {
            want.mark_true(HEALTH_CHECK_SUCCEEDED, now.clone());
            let ok = Observed::true_(names::HEALTH_CHECK_SUCCEEDED, names::HEALTH_CHECK_SUCCEEDED_REASON);
            want.set_v1beta2(ok, now);
        }
        Verdict::Unhealthy { reason, message } => {
            want.mark_false(HEALTH_CHECK_SUCCEEDED, reason, Severity::Warning, message, now.clone());
            let failed = Observed::false_(names::HEALTH_CHECK_SUCCEEDED, v1beta2_reason(reason), message.clone());
            want.set_v1beta2(failed, now);
            // A False OwnerRemediated is the owner's, mid-remediation; a deleting Machine is
            // already being replaced (its owner may count it as in flight).
            let handed_over = m.is_condition_false(OWNER_REMEDIATED);
            if owner_remediation && !handed_over && m.metadata.deletion_timestamp.is_none() {
                want.mark_false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, "", now.clone());
                let waiting = Observed::false_(
                    names::OWNER_REMEDIATED,
                    names::WAITING_FOR_REMEDIATION_REASON,
                    "Waiting for remediation",
                );
                want.set_v1beta2(waiting, now);
            }
        }
        Verdict::Pending { .. } => {}
    }
    want
}

/// The v1beta2 `HealthCheckSucceeded` reason of a verdict's v1beta1 reason.
fn v1beta2_reason(v1beta1: &str) -> &'static str {
    match v1beta1 {
        "UnhealthyNode" => names::UNHEALTHY_NODE_REASON,
        "NodeStartupTimeout" => names::NODE_STARTUP_TIMEOUT_REASON,
        "NodeNotFound" => names::NODE_DELETED_REASON,
        "HasRemediateMachineAnnotation" => names::HAS_REMEDIATE_ANNOTATION_REASON,
        _ => names::UNHEALTHY_MACHINE_REASON,
    }
}

/// True when `want` carries conditions `m` lacks (in either list): a write is needed.
pub(crate) fn conditions_changed(m: &Machine, want: &Machine) -> bool {
    want.conditions() != m.conditions() || want.v1beta2_conditions() != m.v1beta2_conditions()
}

/// True when the check newly judged the Machine unhealthy (for the event).
pub(crate) fn newly_unhealthy(before: &Machine, verdict: &Verdict) -> bool {
    verdict.is_unhealthy() && !before.is_condition_false(HEALTH_CHECK_SUCCEEDED)
}

/// The kind and API of remediation requests made from `template` (its kind minus `Template`).
async fn request_api(ctx: &crate::Context, template: &ObjectReference, namespace: &str) -> Api<DynamicObject> {
    let kind = template.kind.as_deref().unwrap_or_default();
    let request = ObjectReference {
        api_version: template.api_version.clone(),
        kind: Some(kind.strip_suffix("Template").unwrap_or(kind).to_string()),
        ..Default::default()
    };
    external::api_for(ctx, namespace, &request).await
}

/// Why an external remediation request could not be made.
#[derive(Debug)]
pub(crate) enum RequestError {
    TemplateNotFound(String),
    CreationFailed(String),
}

/// Makes sure the remediation request for `m` exists. Returns true when it was created now.
pub(crate) async fn ensure_request(
    ctx: &crate::Context,
    mhc: &MachineHealthCheck,
    template: &ObjectReference,
    m: &Machine,
) -> std::result::Result<bool, RequestError> {
    let ns = m.namespace().unwrap_or_default();
    let name = m.name_any();
    let api = request_api(ctx, template, &ns).await;
    match api.get_opt(&name).await {
        Ok(Some(_)) => return Ok(false),
        Ok(None) => {}
        Err(e) => return Err(RequestError::CreationFailed(e.to_string())),
    }
    if external::get(ctx, &ns, template).await.map_err(|e| RequestError::CreationFailed(e.to_string()))?.is_none() {
        let t = format!(
            "{} {ns}/{}",
            template.kind.as_deref().unwrap_or_default(),
            template.name.as_deref().unwrap_or_default()
        );
        return Err(RequestError::TemplateNotFound(format!("remediation template {t} not found")));
    }
    let owner = owner::owner_ref(m).ok_or_else(|| RequestError::CreationFailed("Machine has no uid yet".into()))?;
    let spec = CloneSpec {
        template,
        namespace: &ns,
        name: &name,
        cluster_name: &mhc.spec.cluster_name,
        labels: Default::default(),
        annotations: Default::default(),
        owner: Some(owner),
    };
    external::clone_from_template(ctx, CONTROLLER, spec)
        .await
        .map(|_| true)
        .map_err(|e| RequestError::CreationFailed(e.to_string()))
}

/// Deletes the remediation request for `m`, if any. Returns true when one was deleted.
pub(crate) async fn delete_request(ctx: &crate::Context, template: &ObjectReference, m: &Machine) -> Result<bool> {
    let api = request_api(ctx, template, &m.namespace().unwrap_or_default()).await;
    delete_if_present(&api, CONTROLLER, &m.name_any())
        .await
        .map_err(Error::during(format!("deleting the remediation request of Machine {}", m.name_any())))
}

#[cfg(test)]
mod tests {
    use super::*;
    fn now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }

    #[test]
    fn marks_and_hands_over_once() {
        let m = Machine::new("m", Default::default());
        let t = now();
        let sick = Verdict::Unhealthy { reason: "UnhealthyNode", message: "x".into() };
        let w = desired(&m, &sick, true, &t);
        assert!(w.is_condition_false(HEALTH_CHECK_SUCCEEDED));
        let owner = w.get_condition(OWNER_REMEDIATED).expect("handed over");
        assert_eq!(owner.reason.as_deref(), Some(WAITING_FOR_REMEDIATION));
        assert!(newly_unhealthy(&m, &sick));
        assert!(!newly_unhealthy(&w, &sick));
        // Again: nothing changes.
        assert_eq!(desired(&w, &sick, true, &t), w);
        // The owner's own False (with its message) is left alone.
        let mut owned = w.clone();
        owned.mark_false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, Severity::Warning, "preflight", t.clone());
        assert_eq!(desired(&owned, &sick, true, &t), owned);
        // External remediation or a short-circuit: only the health condition.
        let ext = desired(&m, &sick, false, &t);
        assert!(ext.get_condition(OWNER_REMEDIATED).is_none());
        // Recovered: True again, OwnerRemediated untouched.
        let ok = desired(&w, &Verdict::Healthy, true, &t);
        assert!(ok.is_condition_true(HEALTH_CHECK_SUCCEEDED));
        assert!(ok.is_condition_false(OWNER_REMEDIATED));
        assert_eq!(desired(&m, &Verdict::Pending { next: None }, true, &t), m);
    }

    #[test]
    fn v1beta2_conditions_move_with_the_v1beta1_ones() {
        let m = Machine::new("m", Default::default());
        let t = now();
        let reason =
            |w: &Machine, type_: &str| w.v1beta2_condition(type_).map(|c| (c.status.clone(), c.reason.clone()));
        let cases = [
            ("UnhealthyNode", names::UNHEALTHY_NODE_REASON),
            ("NodeStartupTimeout", names::NODE_STARTUP_TIMEOUT_REASON),
            ("NodeNotFound", names::NODE_DELETED_REASON),
            ("HasRemediateMachineAnnotation", names::HAS_REMEDIATE_ANNOTATION_REASON),
            ("MachineHasFailure", names::UNHEALTHY_MACHINE_REASON),
        ];
        for (v1, v2) in cases {
            let sick = Verdict::Unhealthy { reason: v1, message: "why".into() };
            let w = desired(&m, &sick, true, &t);
            assert_eq!(reason(&w, names::HEALTH_CHECK_SUCCEEDED), Some(("False".into(), v2.to_string())));
            assert_eq!(w.v1beta2_condition(names::HEALTH_CHECK_SUCCEEDED).map(|c| c.message.as_str()), Some("why"));
            let owner = w.v1beta2_condition(names::OWNER_REMEDIATED).expect("handed over");
            assert_eq!(
                (owner.status.as_str(), owner.reason.as_str(), owner.message.as_str()),
                ("False", names::WAITING_FOR_REMEDIATION_REASON, "Waiting for remediation")
            );
            assert!(conditions_changed(&m, &w));
            assert!(!conditions_changed(&w, &desired(&w, &sick, true, &t)), "recomputing changes nothing");
        }
        let sick = Verdict::Unhealthy { reason: "UnhealthyNode", message: "why".into() };
        let ext = desired(&m, &sick, false, &t);
        assert!(ext.v1beta2_condition(names::OWNER_REMEDIATED).is_none());
        let ok = desired(&ext, &Verdict::Healthy, true, &t);
        assert_eq!(
            reason(&ok, names::HEALTH_CHECK_SUCCEEDED),
            Some(("True".into(), names::HEALTH_CHECK_SUCCEEDED_REASON.to_string()))
        );
    }
}
