//! Rollout and remediation settings shared by KubeadmControlPlane and its template (v1beta2
//! `rollout` and `remediation`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::v1beta2::{
    KubeadmControlPlaneRemediation, KubeadmControlPlaneRollingUpdate, KubeadmControlPlaneRollout,
    KubeadmControlPlaneRolloutStrategy,
};
use crate::admission::{FieldError, FieldPath};
use crate::capi::validation::to_value;

/// The only rollout strategy type.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// Shortest certificate horizon for `rollout.before.certificatesExpiryDays`.
pub const MIN_CERTIFICATES_EXPIRY_DAYS: i32 = 7;

/// `rollout.strategy` becomes `{type: RollingUpdate, rollingUpdate: {maxSurge: 1}}`, filling
/// what is missing (RollingUpdate is the only type v1beta2 can express).
pub(crate) fn default_rollout(r: &mut Option<KubeadmControlPlaneRollout>) {
    let strategy = r.get_or_insert_with(Default::default).strategy.get_or_insert_with(Default::default);
    strategy
        .rolling_update
        .get_or_insert_with(KubeadmControlPlaneRollingUpdate::default)
        .max_surge
        .get_or_insert(IntOrString::Int(1));
}

/// Checks of `rollout` at `path`; `replicas` is unknown for templates, `validity_days` is how
/// long the control plane's certificates are valid.
pub(crate) fn validate_rollout(
    r: &KubeadmControlPlaneRollout,
    replicas: Option<i32>,
    validity_days: i32,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(days) = r.before.as_ref().and_then(|b| b.certificates_expiry_days) {
        let p = path.child("before").child("certificatesExpiryDays");
        errs.extend(validate_certificates_expiry_days(days, validity_days, &p));
    }
    if let Some(s) = &r.strategy {
        errs.extend(validate_rollout_strategy(s, replicas, &path.child("strategy")));
    }
    errs
}

/// maxSurge is 0 or 1; scaling in (maxSurge 0) needs 3 replicas so that etcd keeps quorum
/// while a member is replaced.
fn validate_rollout_strategy(
    s: &KubeadmControlPlaneRolloutStrategy,
    replicas: Option<i32>,
    path: &FieldPath,
) -> Option<FieldError> {
    let surge = s.rolling_update.as_ref().and_then(|r| r.max_surge.as_ref())?;
    let p = path.child("rollingUpdate").child("maxSurge");
    match surge {
        IntOrString::Int(0) => replicas.filter(|r| *r < 3).map(|r| {
            FieldError::forbidden(
                p.as_str(),
                format!(
                    "when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3 (is {r})"
                ),
            )
        }),
        IntOrString::Int(1) => None,
        other => Some(FieldError::invalid(p.as_str(), to_value(other), "must be the integer 0 or 1")),
    }
}

/// Certificates must be renewed at least a week before they expire, and a horizon as long
/// as their validity would replace every Machine as soon as it is created.
fn validate_certificates_expiry_days(days: i32, validity_days: i32, path: &FieldPath) -> Option<FieldError> {
    if days < MIN_CERTIFICATES_EXPIRY_DAYS {
        let msg = format!("must be greater than or equal to {MIN_CERTIFICATES_EXPIRY_DAYS}");
        return Some(FieldError::invalid(path.as_str(), days, msg));
    }
    (days >= validity_days).then(|| {
        let msg = format!("must be less than certificateValidityPeriodDays ({validity_days})");
        FieldError::invalid(path.as_str(), days, msg)
    })
}

/// maxRetry may not be negative (the waits are whole seconds, bounded by the schema).
pub(crate) fn validate_remediation(r: &KubeadmControlPlaneRemediation, path: &FieldPath) -> Option<FieldError> {
    let m = r.max_retry.filter(|m| *m < 0)?;
    Some(FieldError::invalid(path.child("maxRetry"), m, "must be greater than or equal to 0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::kubeadm::v1beta2::KubeadmControlPlaneRolloutBefore;

    fn surge(v: IntOrString) -> KubeadmControlPlaneRollout {
        KubeadmControlPlaneRollout {
            strategy: Some(KubeadmControlPlaneRolloutStrategy {
                rolling_update: Some(KubeadmControlPlaneRollingUpdate { max_surge: Some(v) }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_and_bounds() {
        let mut r = None;
        default_rollout(&mut r);
        let r = r.unwrap();
        assert_eq!(
            to_value(&r),
            serde_json::json!({ "strategy": { "type": ROLLING_UPDATE, "rollingUpdate": { "maxSurge": 1 } } })
        );
        let p = FieldPath::new("spec").child("rollout");
        assert!(validate_rollout(&r, Some(1), 365, &p).is_empty());
        let scale_in = surge(IntOrString::Int(0));
        assert!(validate_rollout(&scale_in, Some(3), 365, &p).is_empty());
        assert!(validate_rollout(&scale_in, None, 365, &p).is_empty());
        assert_eq!(
            validate_rollout(&scale_in, Some(1), 365, &p)[0].field,
            "spec.rollout.strategy.rollingUpdate.maxSurge"
        );
        assert_eq!(validate_rollout(&surge(IntOrString::Int(2)), Some(3), 365, &p).len(), 1);
        assert_eq!(validate_rollout(&surge(IntOrString::String("1".into())), Some(3), 365, &p).len(), 1);
        let before = |days| KubeadmControlPlaneRollout {
            before: Some(KubeadmControlPlaneRolloutBefore { certificates_expiry_days: Some(days) }),
            ..Default::default()
        };
        assert_eq!(validate_rollout(&before(6), None, 365, &p)[0].field, "spec.rollout.before.certificatesExpiryDays");
        assert!(validate_rollout(&before(7), None, 365, &p).is_empty());
        // A horizon as long as the certificates' validity would replace Machines at once.
        let too_long = validate_rollout(&before(30), None, 30, &p);
        assert_eq!(too_long[0].detail, "must be less than certificateValidityPeriodDays (30)", "{too_long:?}");
        assert!(validate_rollout(&before(29), None, 30, &p).is_empty());
        let retry = |n| KubeadmControlPlaneRemediation { max_retry: Some(n), ..Default::default() };
        let rp = FieldPath::new("spec").child("remediation");
        assert_eq!(validate_remediation(&retry(-1), &rp).map(|e| e.field), Some("spec.remediation.maxRetry".into()));
        assert!(validate_remediation(&retry(0), &rp).is_none());
    }
}
