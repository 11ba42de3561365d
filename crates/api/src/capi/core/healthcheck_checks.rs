//! Checks of health-check settings, shared by MachineHealthCheck and the health checks a
//! ClusterClass or Cluster topology declares.

use jiff::SignedDuration;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::admission::{FieldError, FieldPath};
use crate::capi::intstr;

/// Shortest node start-up timeout accepted (0 disables the check instead).
pub const MIN_NODE_STARTUP_TIMEOUT: SignedDuration = SignedDuration::from_secs(30);

/// Parses `[min-max]` into its bounds.
pub fn parse_unhealthy_range(s: &str) -> Option<(u32, u32)> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let (min, max) = inner.split_once('-')?;
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(min) || !digits(max) {
        return None;
    }
    Some((min.parse().ok()?, max.parse().ok()?))
}

/// A maximum of unhealthy Machines must be an int or a percentage.
fn check_max_unhealthy(v: &IntOrString, path: FieldPath) -> Option<FieldError> {
    let e = intstr::scaled_value(v, 0, false).err()?;
    Some(FieldError::invalid(
        path,
        crate::capi::validation::to_value(v),
        format!("must be either an int or a percentage: {e}"),
    ))
}

/// A range of unhealthy Machines is `[min-max]` with `min <= max`.
fn check_unhealthy_range(r: &str, path: FieldPath) -> Option<FieldError> {
    match parse_unhealthy_range(r) {
        None => Some(FieldError::invalid(path, r, "must match the format [min-max], e.g. [3-5]")),
        // Upstream only fails at reconcile time; a range that can never hold is refused here.
        Some((min, max)) if max < min => Some(FieldError::invalid(path, r, "max must be greater than or equal to min")),
        Some(_) => None,
    }
}

/// A node start-up timeout is 0 (no check) or at least [`MIN_NODE_STARTUP_TIMEOUT`];
/// `shown` is the value as the client wrote it.
fn check_node_startup_timeout(
    d: SignedDuration,
    shown: impl Into<serde_json::Value>,
    path: FieldPath,
) -> Option<FieldError> {
    (d != SignedDuration::ZERO && d < MIN_NODE_STARTUP_TIMEOUT)
        .then(|| FieldError::invalid(path, shown, "must be at least 30s (or 0 to disable the check)"))
}

/// The v1beta2 health-check settings the schema alone does not check (MachineHealthCheck,
/// and the health checks of ClusterClasses and topologies).
pub(crate) struct HealthCheckV1Beta2<'a> {
    pub node_startup_timeout_seconds: Option<i32>,
    pub unhealthy_less_than_or_equal_to: Option<&'a IntOrString>,
    pub unhealthy_in_range: Option<&'a str>,
}

/// Validates v1beta2 health-check settings under `path` (`checks.nodeStartupTimeoutSeconds`,
/// `remediation.triggerIf.*`).
pub(crate) fn validate_health_check_v1beta2(h: &HealthCheckV1Beta2<'_>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(secs) = h.node_startup_timeout_seconds {
        let d = SignedDuration::from_secs(i64::from(secs));
        errs.extend(check_node_startup_timeout(d, secs, path.child("checks").child("nodeStartupTimeoutSeconds")));
    }
    let trigger = path.child("remediation").child("triggerIf");
    errs.extend(
        h.unhealthy_less_than_or_equal_to
            .and_then(|v| check_max_unhealthy(v, trigger.child("unhealthyLessThanOrEqualTo"))),
    );
    errs.extend(h.unhealthy_in_range.and_then(|r| check_unhealthy_range(r, trigger.child("unhealthyInRange"))));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhealthy_range_format() {
        assert_eq!(parse_unhealthy_range("[3-5]"), Some((3, 5)));
        assert_eq!(parse_unhealthy_range("[0-0]"), Some((0, 0)));
        for bad in ["3-5", "[3-]", "[-5]", "[a-5]", "[3-5", "[3 - 5]", "[+3-5]"] {
            assert_eq!(parse_unhealthy_range(bad), None, "{bad}");
        }
    }
}
