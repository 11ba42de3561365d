//! Conversions of the Dev kinds between v1beta1 (stored by drydock) and v1beta2 (the hub).
//!
//! The mechanical rules: `status.ready` ↔ `status.initialization.provisioned`; v1beta1
//! `status.conditions` ↔ `status.deprecated.v1beta1.conditions` and `status.v1beta2.conditions`
//! ↔ `status.conditions`; failure domains as a map by name ↔ a list sorted by name; empty
//! strings and zero ports are unset in v1beta2. What one version cannot hold (a DevMachine's
//! `status.failureDomain`, a DevMachineTemplate's `status.capacity`, an empty endpoint)
//! travels in the lossless layer's annotation.

mod cluster;
mod machine;

pub use cluster::{DevClusterConversion, DevClusterTemplateConversion};
pub use machine::{DevMachineConversion, DevMachineTemplateConversion};

use crate::capi::common::V1Beta2Conditions;
use crate::capi::conditions::Condition;
use crate::capi::dev::v1beta2::{Conditions, DeprecatedStatus, InitializationStatus, V1Beta1DeprecatedStatus};

/// v1beta1 `ready` as v1beta2's initialization.
pub(crate) fn initialization_up(ready: Option<bool>) -> Option<InitializationStatus> {
    ready.map(|r| InitializationStatus { provisioned: Some(r) })
}

pub(crate) fn ready_down(i: Option<InitializationStatus>) -> Option<bool> {
    i.and_then(|i| i.provisioned)
}

/// v1beta1 conditions (with severity) move under `deprecated.v1beta1`.
pub(crate) fn deprecated_up(conditions: Option<Vec<Condition>>) -> Option<DeprecatedStatus> {
    conditions.map(|c| DeprecatedStatus { v1beta1: Some(V1Beta1DeprecatedStatus { conditions: Some(c) }) })
}

pub(crate) fn deprecated_down(d: Option<DeprecatedStatus>) -> Option<Vec<Condition>> {
    d.and_then(|d| d.v1beta1).and_then(|v| v.conditions)
}

/// The v1beta2 conditions a v1beta1 status reports alongside become the conditions.
fn conditions_up(v: Option<V1Beta2Conditions>) -> Option<Conditions> {
    v.and_then(|v| v.conditions)
}

fn conditions_down(c: Option<Conditions>) -> Option<V1Beta2Conditions> {
    c.map(|c| V1Beta2Conditions { conditions: Some(c) })
}
