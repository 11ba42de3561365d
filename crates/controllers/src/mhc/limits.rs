//! The short-circuit (upstream's §5.4): when too many targets are not healthy, something
//! larger than single Machines is wrong (a network partition, a broken control plane), and
//! replacing Machines would only make it worse, so nothing is remediated.
//!
//! `remediation.triggerIf.unhealthyInRange` (`[min-max]`) wins over
//! `unhealthyLessThanOrEqualTo` (int or percentage of the targets, rounded down; default
//! 100%), v1beta1's `unhealthyRange` and `maxUnhealthy`. Targets that are neither healthy nor unhealthy yet
//! (waiting for their Node) count as unhealthy here.

use drydock_api::capi::core::v1beta2::MachineHealthCheckSpec;
use drydock_api::capi::core::{DEFAULT_MAX_UNHEALTHY, parse_unhealthy_range};
use drydock_api::capi::intstr;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Whether remediation may go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Allowance {
    pub allowed: bool,
    /// For `status.remediationsAllowed` (0 when not allowed).
    pub remediations_allowed: i32,
    /// Why not, when not allowed.
    pub message: Option<String>,
}

/// Parses `[min-max]`.
fn parse_range(s: &str) -> Result<(i32, i32), String> {
    let bad = || format!("spec.remediation.triggerIf.unhealthyInRange {s:?} is not of the form [min-max]");
    let (min, max) = parse_unhealthy_range(s).ok_or_else(bad)?;
    let (min, max) = (i32::try_from(min).map_err(|_| bad())?, i32::try_from(max).map_err(|_| bad())?);
    if max < min {
        return Err(format!("spec.remediation.triggerIf.unhealthyInRange {s:?}: max is lower than min"));
    }
    Ok((min, max))
}

pub(crate) fn allowance(spec: &MachineHealthCheckSpec, expected: i32, healthy: i32) -> Result<Allowance, String> {
    let unhealthy = expected - healthy;
    let trigger = spec.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
    let range = trigger.and_then(|t| t.unhealthy_in_range.as_deref());
    let (allowed, room, limit) = match range {
        Some(range) => {
            let (min, max) = parse_range(range)?;
            ((min..=max).contains(&unhealthy), max - unhealthy, format!("unhealthyRange: {range}"))
        }
        None => {
            let max = trigger
                .and_then(|t| t.unhealthy_less_than_or_equal_to.clone())
                .unwrap_or_else(|| IntOrString::String(DEFAULT_MAX_UNHEALTHY.into()));
            let limit = intstr::scaled_value(&max, expected, false)
                .map_err(|e| format!("spec.remediation.triggerIf.unhealthyLessThanOrEqualTo: {e}"))?;
            (unhealthy <= limit, limit - unhealthy, format!("maxUnhealthy: {}", intstr::display(&max)))
        }
    };
    if allowed {
        return Ok(Allowance { allowed, remediations_allowed: room.max(0), message: None });
    }
    let what = if range.is_some() { "does not fall within the range" } else { "exceeds maxUnhealthy" };
    let message = format!(
        "Remediation is not allowed, the number of not started or unhealthy machines {what} \
         (total: {expected}, unhealthy: {unhealthy}, {limit})"
    );
    Ok(Allowance { allowed, remediations_allowed: 0, message: Some(message) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{MachineHealthCheckRemediation, MachineHealthCheckRemediationTriggerIf};

    fn spec(max: Option<IntOrString>, range: Option<&str>) -> MachineHealthCheckSpec {
        let trigger_if = MachineHealthCheckRemediationTriggerIf {
            unhealthy_less_than_or_equal_to: max,
            unhealthy_in_range: range.map(String::from),
        };
        let remediation = MachineHealthCheckRemediation { trigger_if: Some(trigger_if), template_ref: None };
        MachineHealthCheckSpec { remediation: Some(remediation), ..Default::default() }
    }

    #[test]
    fn max_unhealthy() {
        let one = spec(Some(IntOrString::Int(1)), None);
        assert_eq!(
            allowance(&one, 3, 3).expect("ok"),
            Allowance { allowed: true, remediations_allowed: 1, message: None }
        );
        assert!(allowance(&one, 3, 2).expect("ok").allowed);
        let no = allowance(&one, 3, 1).expect("ok");
        assert!(!no.allowed);
        assert_eq!(no.remediations_allowed, 0);
        assert_eq!(
            no.message.as_deref(),
            Some(
                "Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy \
                 (total: 3, unhealthy: 2, maxUnhealthy: 1)"
            )
        );
        // Percentages round down: 40% of 3 is 1.
        let pct = spec(Some(IntOrString::String("40%".into())), None);
        assert!(!allowance(&pct, 3, 1).expect("ok").allowed);
        // Default 100%.
        assert!(allowance(&spec(None, None), 3, 0).expect("ok").allowed);
        assert!(allowance(&spec(Some(IntOrString::String("x".into())), None), 3, 0).is_err());
    }

    #[test]
    fn unhealthy_range_wins() {
        let s = spec(Some(IntOrString::Int(0)), Some("[1-2]"));
        assert!(!allowance(&s, 5, 5).expect("ok").allowed, "below the range");
        let a = allowance(&s, 5, 4).expect("ok");
        assert_eq!((a.allowed, a.remediations_allowed), (true, 1));
        let no = allowance(&s, 5, 2).expect("ok");
        assert!(
            no.message
                .expect("message")
                .ends_with("does not fall within the range (total: 5, unhealthy: 3, unhealthyRange: [1-2])")
        );
        assert!(allowance(&spec(None, Some("[3-1]")), 5, 5).is_err());
        assert!(allowance(&spec(None, Some("3-5")), 5, 5).is_err());
    }
}
