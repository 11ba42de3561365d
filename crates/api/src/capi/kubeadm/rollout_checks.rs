//! Rollout and remediation settings shared by KubeadmControlPlane and its template.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::control_plane::{RemediationStrategy, RollingUpdate, RolloutBefore, RolloutStrategy};
use crate::admission::{FieldError, FieldPath};
use crate::capi::duration;
use crate::capi::validation::to_value;

/// The only rollout strategy type.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// Shortest certificate horizon for `rolloutBefore.certificatesExpiryDays`.
pub const MIN_CERTIFICATES_EXPIRY_DAYS: i32 = 7;

/// `{type: RollingUpdate, rollingUpdate: {maxSurge: 1}}`, filling what is missing.
pub(crate) fn default_rollout_strategy(s: &mut Option<RolloutStrategy>) {
    let s = s.get_or_insert_with(Default::default);
    let type_ = s.type_.get_or_insert_with(|| ROLLING_UPDATE.to_string());
    if type_ == ROLLING_UPDATE {
        s.rolling_update.get_or_insert_with(RollingUpdate::default).max_surge.get_or_insert(IntOrString::Int(1));
    }
}

/// Type RollingUpdate with maxSurge 0 or 1; scaling in (maxSurge 0) needs 3 replicas so that
/// etcd keeps quorum while a member is replaced. `replicas` is unknown for templates.
pub(crate) fn validate_rollout_strategy(
    s: &RolloutStrategy,
    replicas: Option<i32>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(t) = s.type_.as_deref().filter(|t| *t != ROLLING_UPDATE) {
        errs.push(FieldError::not_supported(path.child("type"), t, &[ROLLING_UPDATE]));
    }
    if let Some(surge) = s.rolling_update.as_ref().and_then(|r| r.max_surge.as_ref()) {
        let p = path.child("rollingUpdate").child("maxSurge");
        match surge {
            IntOrString::Int(0) => {
                if let Some(r) = replicas.filter(|r| *r < 3) {
                    errs.push(FieldError::forbidden(
                        p.as_str(),
                        format!("when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3 (is {r})"),
                    ));
                }
            }
            IntOrString::Int(1) => {}
            other => errs.push(FieldError::invalid(p.as_str(), to_value(other), "must be the integer 0 or 1")),
        }
    }
    errs
}

/// Durations of the remediation strategy must parse; maxRetry may not be negative.
pub(crate) fn validate_remediation_strategy(r: &RemediationStrategy, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    errs.extend(duration::validate_field(r.retry_period.as_deref(), &path.child("retryPeriod")));
    errs.extend(duration::validate_field(r.min_healthy_period.as_deref(), &path.child("minHealthyPeriod")));
    if let Some(m) = r.max_retry.filter(|m| *m < 0) {
        errs.push(FieldError::invalid(path.child("maxRetry"), m, "must be greater than or equal to 0"));
    }
    errs
}

/// Certificates must be renewed at least a week before they expire.
pub(crate) fn validate_rollout_before(r: &RolloutBefore, path: &FieldPath) -> Option<FieldError> {
    let days = r.certificates_expiry_days.filter(|d| *d < MIN_CERTIFICATES_EXPIRY_DAYS)?;
    Some(FieldError::invalid(
        path.child("certificatesExpiryDays"),
        days,
        format!("must be greater than or equal to {MIN_CERTIFICATES_EXPIRY_DAYS}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        let mut s = None;
        default_rollout_strategy(&mut s);
        let s = s.unwrap();
        assert_eq!(s.type_.as_deref(), Some(ROLLING_UPDATE));
        assert_eq!(s.rolling_update.as_ref().unwrap().max_surge, Some(IntOrString::Int(1)));
        let p = FieldPath::new("spec").child("rolloutStrategy");
        assert!(validate_rollout_strategy(&s, Some(1), &p).is_empty());
        let scale_in = RolloutStrategy {
            type_: Some(ROLLING_UPDATE.into()),
            rolling_update: Some(RollingUpdate { max_surge: Some(IntOrString::Int(0)) }),
        };
        assert!(validate_rollout_strategy(&scale_in, Some(3), &p).is_empty());
        assert!(validate_rollout_strategy(&scale_in, None, &p).is_empty());
        assert_eq!(
            validate_rollout_strategy(&scale_in, Some(1), &p)[0].field,
            "spec.rolloutStrategy.rollingUpdate.maxSurge"
        );
        let two = RolloutStrategy {
            rolling_update: Some(RollingUpdate { max_surge: Some(IntOrString::Int(2)) }),
            ..s.clone()
        };
        assert_eq!(validate_rollout_strategy(&two, Some(3), &p).len(), 1);
        let percent = RolloutStrategy {
            rolling_update: Some(RollingUpdate { max_surge: Some(IntOrString::String("1".into())) }),
            ..s
        };
        assert_eq!(validate_rollout_strategy(&percent, Some(3), &p).len(), 1);
        assert!(validate_rollout_before(&RolloutBefore { certificates_expiry_days: Some(6) }, &p).is_some());
        assert!(validate_rollout_before(&RolloutBefore { certificates_expiry_days: Some(7) }, &p).is_none());
    }
}
