//! The scaling conditions (`ScalingUp`, `ScalingDown`) every replica-managing kind reports
//! in v1beta2, with upstream's messages.

use drydock_api::capi::condition_types::{MACHINES_CREATED, PREFLIGHT_CHECK_FAILED};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::v1beta2_conditions::{Observed, Status, names};

/// `n` and the noun for it: "1 Machine", "3 Machines".
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the preflight checks say while they hold Machine creation (from the v1beta1
/// `MachinesCreated`, which a deployment mirrors from its sets).
pub fn creation_blocked<K: HasConditions>(obj: &K) -> Option<String> {
    let c = obj.get_condition(MACHINES_CREATED).filter(|c| c.is_false())?;
    (c.reason.as_deref() == Some(PREFLIGHT_CHECK_FAILED)).then(|| c.message.clone().unwrap_or_default())
}

/// `ScalingUp` of a set or deployment wanting `desired` replicas (`None`: not set yet) and
/// having `current`; `blocked` says what holds creation.
pub fn scaling_up_of(desired: Option<i32>, current: usize, blocked: Option<String>) -> Observed {
    let Some(desired) = desired else {
        return Observed::unknown(names::SCALING_UP, names::WAITING_FOR_REPLICAS_SET_REASON, WAITING_FOR_REPLICAS);
    };
    let desired = desired.max(0) as usize;
    if current >= desired {
        return Observed::false_(names::SCALING_UP, names::NOT_SCALING_UP_REASON, "");
    }
    let mut message = format!("Scaling up from {current} to {desired} replicas");
    if let Some(blocked) = blocked {
        message.push_str(" is blocked because:\n* ");
        message.push_str(&blocked);
    }
    Observed::new(names::SCALING_UP, Status::True, names::SCALING_UP_REASON, message)
}

/// `ScalingDown` of a set or deployment wanting `desired` replicas and having `current`.
pub fn scaling_down_of(desired: Option<i32>, current: usize) -> Observed {
    let Some(desired) = desired else {
        return Observed::unknown(names::SCALING_DOWN, names::WAITING_FOR_REPLICAS_SET_REASON, WAITING_FOR_REPLICAS);
    };
    let desired = desired.max(0) as usize;
    if current <= desired {
        return Observed::false_(names::SCALING_DOWN, names::NOT_SCALING_DOWN_REASON, "");
    }
    let message = format!("Scaling down from {current} to {desired} replicas");
    Observed::new(names::SCALING_DOWN, Status::True, names::SCALING_DOWN_REASON, message)
}

const WAITING_FOR_REPLICAS: &str = "Waiting for spec.replicas set";
