//! Checks of health-check settings, shared by MachineHealthCheck and the health checks a
//! ClusterClass or Cluster topology declares.

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::clusterclass::MachineHealthCheckClass;
use super::machinehealthcheck::UnhealthyCondition;
use crate::admission::{FieldError, FieldPath};
use crate::capi::{duration, intstr, refs};

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

/// The health-check fields of one object, borrowed.
pub(crate) struct HealthCheckFields<'a> {
    /// Node conditions that make a Machine unhealthy once held for their timeout (ORed).
    pub unhealthy_conditions: Option<&'a [UnhealthyCondition]>,
    /// Remediation stops when more Machines than this are unhealthy (int or percent).
    pub max_unhealthy: Option<&'a IntOrString>,
    /// Remediation happens only while the unhealthy count is within `[min-max]`.
    pub unhealthy_range: Option<&'a str>,
    /// How long a Machine may go without a Node (0 disables the check).
    pub node_startup_timeout: Option<&'a str>,
    /// Template for external remediation requests, instead of owner remediation.
    pub remediation_template: Option<&'a ObjectReference>,
}

impl<'a> From<&'a MachineHealthCheckClass> for HealthCheckFields<'a> {
    fn from(m: &'a MachineHealthCheckClass) -> Self {
        Self {
            unhealthy_conditions: m.unhealthy_conditions.as_deref(),
            max_unhealthy: m.max_unhealthy.as_ref(),
            unhealthy_range: m.unhealthy_range.as_deref(),
            node_startup_timeout: m.node_startup_timeout.as_deref(),
            remediation_template: m.remediation_template.as_ref(),
        }
    }
}

/// Validates the health check a ClusterClass or a Cluster topology generates, if any.
pub(crate) fn validate_generated_health_check(
    m: Option<&MachineHealthCheckClass>,
    namespace: Option<&str>,
    path: &FieldPath,
) -> Vec<FieldError> {
    m.map(|m| validate_health_check(&m.into(), namespace, path)).unwrap_or_default()
}

/// Validates health-check settings under `path` (fields named as in MachineHealthCheck's spec).
pub(crate) fn validate_health_check(
    f: &HealthCheckFields<'_>,
    namespace: Option<&str>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(f.max_unhealthy.and_then(|v| check_max_unhealthy(v, path.child("maxUnhealthy"))));
    errs.extend(f.unhealthy_range.and_then(|r| check_unhealthy_range(r, path.child("unhealthyRange"))));
    if let Some(t) = f.node_startup_timeout {
        let p = path.child("nodeStartupTimeout");
        match duration::parse(t) {
            Err(e) => errs.push(FieldError::invalid(p, t, e.to_string())),
            Ok(d) => errs.extend(check_node_startup_timeout(d, t, p)),
        }
    }
    for (i, c) in f.unhealthy_conditions.into_iter().flatten().enumerate() {
        let p = path.child("unhealthyConditions").index(i);
        if c.type_.is_empty() {
            errs.push(FieldError::required(p.child("type"), "must be set"));
        }
        if c.status.is_empty() {
            errs.push(FieldError::required(p.child("status"), "must be set"));
        }
        errs.extend(duration::validate_field(Some(&c.timeout), &p.child("timeout")));
    }
    errs.extend(refs::validate_namespace(f.remediation_template, namespace, &path.child("remediationTemplate")));
    errs
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
