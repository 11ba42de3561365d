//! Rollout arithmetic of a MachineDeployment: surge and unavailability bounds, and how
//! many replicas the current ("new") MachineSet gets while older sets still hold
//! Machines. The old sets' side is in [`super::rolling`] (RollingUpdate) and
//! [`super::ondelete`] (OnDelete).

use drydock_api::capi::core::MachineDeploymentStrategyType;
use drydock_api::capi::core::v1beta2::{
    MachineDeployment, MachineDeploymentRolloutStrategy, MachineDeploymentRolloutStrategyRollingUpdate, MachineSet,
};
use drydock_api::capi::intstr::{self, IntOrPercentError};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::plan::{Plan, scale};

fn strategy(md: &MachineDeployment) -> Option<&MachineDeploymentRolloutStrategy> {
    md.spec.rollout.as_ref()?.strategy.as_ref()
}

fn rolling_update(md: &MachineDeployment) -> Option<&MachineDeploymentRolloutStrategyRollingUpdate> {
    strategy(md)?.rolling_update.as_ref()
}

pub fn strategy_type(md: &MachineDeployment) -> MachineDeploymentStrategyType {
    strategy(md).map_or(MachineDeploymentStrategyType::RollingUpdate, |s| s.type_)
}

pub fn replicas(md: &MachineDeployment) -> i32 {
    md.spec.replicas.unwrap_or(1).max(0)
}

/// `(surge, unavailable)` for the deployment's replicas: maxSurge rounded up,
/// maxUnavailable rounded down, and at least one of them non-zero so a rollout can move.
pub fn fenceposts(md: &MachineDeployment) -> Result<(i32, i32), IntOrPercentError> {
    let ru = rolling_update(md);
    let desired = replicas(md);
    let surge = intstr::scaled_value_or(
        ru.and_then(|r| r.max_surge.as_ref()),
        IntOrString::Int(drydock_api::capi::core::DEFAULT_MAX_SURGE),
        desired,
        true,
    )?;
    let unavailable = intstr::scaled_value_or(
        ru.and_then(|r| r.max_unavailable.as_ref()),
        IntOrString::Int(drydock_api::capi::core::DEFAULT_MAX_UNAVAILABLE),
        desired,
        false,
    )?;
    Ok(if surge == 0 && unavailable == 0 { (0, 1) } else { (surge, unavailable) })
}

/// Machines a rolling update may create above the desired count (0 for OnDelete).
pub fn max_surge(md: &MachineDeployment) -> Result<i32, IntOrPercentError> {
    if strategy_type(md) != MachineDeploymentStrategyType::RollingUpdate {
        return Ok(0);
    }
    Ok(fenceposts(md)?.0)
}

/// Machines a rolling update may leave unavailable (0 for OnDelete or no replicas).
pub fn max_unavailable(md: &MachineDeployment) -> Result<i32, IntOrPercentError> {
    let desired = replicas(md);
    if strategy_type(md) != MachineDeploymentStrategyType::RollingUpdate || desired == 0 {
        return Ok(0);
    }
    Ok(fenceposts(md)?.1.min(desired))
}

/// Replicas a set accounts for: its spec, or more while Machines beyond it still exist
/// (created but not counted yet, or deleting).
fn accounted(ms: &MachineSet) -> i32 {
    let spec = ms.spec.replicas.unwrap_or(0);
    let status = ms.status.as_ref().and_then(|s| s.replicas).unwrap_or(0);
    spec.max(status)
}

/// The new set's replicas given every set (`sets`, the new one included or not):
/// RollingUpdate grows it within `replicas + surge` Machines in total; OnDelete fills
/// what the deployment lacks.
pub fn new_set_replicas<'a>(
    md: &MachineDeployment,
    sets: impl IntoIterator<Item = &'a MachineSet>,
    new_replicas: i32,
) -> Result<i32, IntOrPercentError> {
    let desired = replicas(md);
    let current: i32 = sets.into_iter().map(accounted).sum();
    Ok(match strategy_type(md) {
        MachineDeploymentStrategyType::RollingUpdate => {
            let max_total = desired
                + intstr::scaled_value_or(
                    rolling_update(md).and_then(|r| r.max_surge.as_ref()),
                    IntOrString::Int(drydock_api::capi::core::DEFAULT_MAX_SURGE),
                    desired,
                    true,
                )?;
            if current >= max_total {
                new_replicas
            } else {
                new_replicas + (max_total - current).min(desired - new_replicas)
            }
        }
        MachineDeploymentStrategyType::OnDelete => {
            if current < desired {
                new_replicas + (desired - current)
            } else {
                new_replicas
            }
        }
    })
}

/// The new set's step of a rollout: scaled down to the deployment's replicas when above
/// them, else grown within the bounds of [`new_set_replicas`].
pub fn reconcile_new(md: &MachineDeployment, plan: &mut Plan, max_replicas: i32) -> Result<(), IntOrPercentError> {
    let desired = replicas(md);
    let Some(new) = plan.current() else {
        return Ok(());
    };
    let spec = new.spec.replicas.unwrap_or(0);
    let wanted = if spec >= desired { desired } else { new_set_replicas(md, plan.wanted(), spec)? };
    if let Some(new) = plan.current_mut()
        && wanted != spec
    {
        scale(new, wanted, desired, max_replicas);
    }
    Ok(())
}

/// A RollingUpdate deployment named `md`, for the planners' tests.
#[cfg(test)]
pub(crate) fn rolling_md(replicas: i32, surge: IntOrString, unavailable: IntOrString) -> MachineDeployment {
    use drydock_api::capi::core::v1beta2::{MachineDeploymentRolloutSpec, MachineDeploymentSpec};
    let rolling_update =
        MachineDeploymentRolloutStrategyRollingUpdate { max_surge: Some(surge), max_unavailable: Some(unavailable) };
    let strategy = MachineDeploymentRolloutStrategy {
        type_: MachineDeploymentStrategyType::RollingUpdate,
        rolling_update: Some(rolling_update),
    };
    MachineDeployment::new(
        "md",
        MachineDeploymentSpec {
            replicas: Some(replicas),
            rollout: Some(MachineDeploymentRolloutSpec { after: None, strategy: Some(strategy) }),
            ..MachineDeploymentSpec::default()
        },
    )
}

/// Makes a test deployment OnDelete.
#[cfg(test)]
pub(crate) fn set_on_delete(md: &mut MachineDeployment) {
    let rollout = md.spec.rollout.get_or_insert_with(Default::default);
    let strategy = rollout.strategy.get_or_insert(MachineDeploymentRolloutStrategy {
        type_: MachineDeploymentStrategyType::OnDelete,
        rolling_update: None,
    });
    strategy.type_ = MachineDeploymentStrategyType::OnDelete;
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::{MachineSetSpec, MachineSetStatus};

    fn md(replicas: i32, surge: IntOrString, unavailable: IntOrString) -> MachineDeployment {
        rolling_md(replicas, surge, unavailable)
    }

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.into())
    }

    fn ms(spec: i32, status: i32) -> MachineSet {
        let mut ms = MachineSet::new("ms", MachineSetSpec { replicas: Some(spec), ..Default::default() });
        ms.status = Some(MachineSetStatus { replicas: Some(status), ..Default::default() });
        ms
    }

    #[test]
    fn fencepost_examples() {
        let m = md(10, pct("25%"), pct("25%"));
        assert_eq!(fenceposts(&m), Ok((3, 2)));
        let m = md(1, pct("0%"), pct("0%"));
        assert_eq!((max_surge(&m), max_unavailable(&m)), (Ok(0), Ok(1)));
        let m = md(3, IntOrString::Int(1), IntOrString::Int(0));
        assert_eq!((max_surge(&m), max_unavailable(&m)), (Ok(1), Ok(0)));
        let m = md(0, IntOrString::Int(1), IntOrString::Int(5));
        assert_eq!(max_unavailable(&m), Ok(0));
        let mut on_delete = md(3, IntOrString::Int(2), IntOrString::Int(1));
        set_on_delete(&mut on_delete);
        assert_eq!((max_surge(&on_delete), max_unavailable(&on_delete)), (Ok(0), Ok(0)));
        assert!(fenceposts(&md(3, pct("x"), IntOrString::Int(0))).is_err());
    }

    #[test]
    fn new_set_grows_within_surge() {
        // replicas 3, surge 1: a new set next to a full old set starts at 1 ...
        let m = md(3, IntOrString::Int(1), IntOrString::Int(0));
        assert_eq!(new_set_replicas(&m, [&ms(3, 3)], 0), Ok(1));
        // ... and cannot grow while the old set's Machine is still deleting.
        assert_eq!(new_set_replicas(&m, [&ms(2, 3), &ms(1, 1)], 1), Ok(1));
        // Once it is gone the new set grows by one.
        assert_eq!(new_set_replicas(&m, [&ms(2, 2), &ms(1, 1)], 1), Ok(2));
        // A single set scales straight to the replicas.
        let m = md(10, IntOrString::Int(1), IntOrString::Int(0));
        assert_eq!(new_set_replicas(&m, [&ms(3, 3)], 3), Ok(10));
    }

    #[test]
    fn on_delete_fills_the_gap() {
        let mut m = md(3, IntOrString::Int(1), IntOrString::Int(0));
        set_on_delete(&mut m);
        assert_eq!(new_set_replicas(&m, [&ms(3, 3)], 0), Ok(0));
        assert_eq!(new_set_replicas(&m, [&ms(2, 2)], 0), Ok(1));
    }
}
