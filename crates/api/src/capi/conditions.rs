//! Cluster API v1beta1 conditions: the [`Condition`] type every kind's status carries, and the
//! helpers controllers use to read, set and summarise them.
//!
//! Rules (see the conditions convention of Cluster API v1beta1):
//! - `status.conditions` is kept sorted: `Ready` first, then by type.
//! - `lastTransitionTime` moves only when `status` changes. Upstream also moves it on reason,
//!   severity or message changes, which silently stretches timeouts measured from it (drain
//!   timeouts, MachineHealthCheck); Kubernetes' own convention is status changes only.
//! - `Ready` summarises other conditions: the worst one wins, in the order
//!   False/Error > False/Warning > False/Info > True > Unknown.

use std::cmp::Ordering;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The condition type every object summarises into.
pub const READY: &str = "Ready";

/// `status` values.
pub const STATUS_TRUE: &str = "True";
pub const STATUS_FALSE: &str = "False";
pub const STATUS_UNKNOWN: &str = "Unknown";

/// One observation about an object, Cluster API v1beta1 style (with a severity).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type, CamelCase (e.g. `InfrastructureReady`).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// How bad a False condition is: `Error`, `Warning` or `Info`; empty otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// When the status last changed.
    #[serde(serialize_with = "crate::time::text::time")]
    pub last_transition_time: Time,
    /// CamelCase machine-readable reason for the last transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Severity of a False condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
            Severity::Info => "Info",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Error" => Some(Severity::Error),
            "Warning" => Some(Severity::Warning),
            "Info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// An instant as conditions record it: UTC, whole seconds. Controllers take the instant
/// from their clock, so tests can pause time.
pub fn time_at(ts: Timestamp) -> Time {
    Time(truncate_to_seconds(ts))
}

fn truncate_to_seconds(ts: Timestamp) -> Timestamp {
    Timestamp::from_second(ts.as_second()).unwrap_or(ts)
}

impl Condition {
    /// A True condition.
    pub fn true_(type_: &str, now: Time) -> Self {
        Self {
            type_: type_.to_string(),
            status: STATUS_TRUE.to_string(),
            severity: None,
            last_transition_time: now,
            reason: None,
            message: None,
        }
    }

    /// A False condition with reason, severity and message.
    pub fn false_(type_: &str, reason: &str, severity: Severity, message: &str, now: Time) -> Self {
        Self {
            type_: type_.to_string(),
            status: STATUS_FALSE.to_string(),
            severity: Some(severity.as_str().to_string()),
            last_transition_time: now,
            reason: non_empty(reason),
            message: non_empty(message),
        }
    }

    /// An Unknown condition with reason and message.
    pub fn unknown(type_: &str, reason: &str, message: &str, now: Time) -> Self {
        Self {
            type_: type_.to_string(),
            status: STATUS_UNKNOWN.to_string(),
            severity: None,
            last_transition_time: now,
            reason: non_empty(reason),
            message: non_empty(message),
        }
    }

    pub fn is_true(&self) -> bool {
        self.status == STATUS_TRUE
    }
    pub fn is_false(&self) -> bool {
        self.status == STATUS_FALSE
    }

    /// Parsed severity; `None` when absent or not one of the three known values.
    pub fn severity(&self) -> Option<Severity> {
        self.severity.as_deref().and_then(Severity::parse)
    }

    /// Merge rank used by summaries: lower is worse.
    fn merge_rank(&self) -> u8 {
        match self.status.as_str() {
            STATUS_FALSE => match self.severity() {
                Some(Severity::Error) => 0,
                Some(Severity::Warning) => 1,
                // Info, or a False condition written without a severity.
                _ => 2,
            },
            STATUS_TRUE => 3,
            _ => 4,
        }
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

/// Order of `status.conditions`: Ready first, then alphabetical by type.
fn type_order(a: &str, b: &str) -> Ordering {
    match (a == READY, b == READY) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// The condition of `type_`, if present.
pub fn get<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// True if the condition is present with status True.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_some_and(Condition::is_true)
}

/// True if the condition is present with status False.
pub fn is_false(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_some_and(Condition::is_false)
}

/// True if the condition is absent or Unknown.
pub fn is_unknown(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_none_or(|c| c.status != STATUS_TRUE && c.status != STATUS_FALSE)
}

/// Adds or replaces the condition of the same type. The previous `lastTransitionTime` is kept
/// when the status does not change; the list stays sorted (Ready first, then by type).
pub fn set(conditions: &mut Vec<Condition>, mut condition: Condition) {
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing) => {
            if existing.status == condition.status {
                condition.last_transition_time = existing.last_transition_time.clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
    conditions.sort_by(|a, b| type_order(&a.type_, &b.type_));
}

/// Sets `type_` True.
pub fn mark_true(conditions: &mut Vec<Condition>, type_: &str, now: Time) {
    set(conditions, Condition::true_(type_, now));
}

/// Sets `type_` False with a reason, severity and message.
pub fn mark_false(
    conditions: &mut Vec<Condition>,
    type_: &str,
    reason: &str,
    severity: Severity,
    message: &str,
    now: Time,
) {
    set(conditions, Condition::false_(type_, reason, severity, message, now));
}

/// Sets `type_` Unknown with a reason and message.
pub fn mark_unknown(conditions: &mut Vec<Condition>, type_: &str, reason: &str, message: &str, now: Time) {
    set(conditions, Condition::unknown(type_, reason, message, now));
}

/// Removes the condition of `type_`.
pub fn delete(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

/// Computes Ready from the conditions of `types` (Ready itself is ignored). The worst group
/// wins (False/Error, False/Warning, False/Info, True, Unknown); its first condition in the
/// order of `types` gives reason and message. `None` when none of `types` is present, in
/// which case Ready should be left as it is.
pub fn summary(conditions: &[Condition], types: &[&str], now: Time) -> Option<Condition> {
    let worst = types
        .iter()
        .filter(|t| **t != READY)
        .filter_map(|t| get(conditions, t))
        // min_by_key keeps the first of equal ranks, i.e. the first in `types` order.
        .min_by_key(|c| c.merge_rank())?;
    Some(match worst.status.as_str() {
        STATUS_TRUE => Condition::true_(READY, now),
        STATUS_FALSE => Condition {
            type_: READY.to_string(),
            status: STATUS_FALSE.to_string(),
            severity: Some(worst.severity().unwrap_or(Severity::Info).as_str().to_string()),
            last_transition_time: now,
            reason: worst.reason.clone(),
            message: worst.message.clone(),
        },
        _ => Condition { type_: READY.to_string(), last_transition_time: now, ..worst.clone() },
    })
}

/// Sets Ready to the [`summary`] of `types`, if there is one.
pub fn set_summary(conditions: &mut Vec<Condition>, types: &[&str], now: Time) {
    if let Some(ready) = summary(conditions, types, now) {
        set(conditions, ready);
    }
}

/// What to write when the mirrored object has no Ready condition.
#[derive(Clone, Debug, PartialEq)]
pub enum MirrorFallback<'a> {
    True,
    False { reason: &'a str, severity: Severity, message: &'a str },
}

/// Copies another object's Ready condition under `target_type` (e.g. the infrastructure
/// cluster's Ready as the Cluster's `InfrastructureReady`), or writes the fallback.
pub fn mirror(source: &[Condition], target_type: &str, fallback: MirrorFallback<'_>, now: Time) -> Condition {
    match get(source, READY) {
        Some(ready) => Condition { type_: target_type.to_string(), ..ready.clone() },
        None => match fallback {
            MirrorFallback::True => Condition::true_(target_type, now),
            MirrorFallback::False { reason, severity, message } => {
                Condition::false_(target_type, reason, severity, message, now)
            }
        },
    }
}

/// Kinds whose status carries v1beta1 conditions.
pub trait HasConditions {
    /// The current conditions (empty when there is no status yet).
    fn conditions(&self) -> &[Condition];
    /// The condition list, creating status and list when missing.
    fn conditions_mut(&mut self) -> &mut Vec<Condition>;

    fn get_condition(&self, type_: &str) -> Option<&Condition> {
        get(self.conditions(), type_)
    }
    fn is_condition_true(&self, type_: &str) -> bool {
        is_true(self.conditions(), type_)
    }
    fn is_condition_false(&self, type_: &str) -> bool {
        is_false(self.conditions(), type_)
    }
    fn set_condition(&mut self, condition: Condition) {
        set(self.conditions_mut(), condition);
    }
    fn mark_true(&mut self, type_: &str, now: Time) {
        mark_true(self.conditions_mut(), type_, now);
    }
    fn mark_false(&mut self, type_: &str, reason: &str, severity: Severity, message: &str, now: Time) {
        mark_false(self.conditions_mut(), type_, reason, severity, message, now);
    }
    fn mark_unknown(&mut self, type_: &str, reason: &str, message: &str, now: Time) {
        mark_unknown(self.conditions_mut(), type_, reason, message, now);
    }
    fn delete_condition(&mut self, type_: &str) {
        delete(self.conditions_mut(), type_);
    }
    /// Sets Ready from the listed conditions (see [`summary`]).
    fn set_ready_summary(&mut self, types: &[&str], now: Time) {
        set_summary(self.conditions_mut(), types, now);
    }
}

/// Implements [`HasConditions`] for kinds whose `status: Option<S>` has
/// `conditions: Option<Vec<Condition>>` and `S: Default`.
macro_rules! impl_has_conditions {
    ($($kind:ty),* $(,)?) => {$(
        impl $crate::capi::conditions::HasConditions for $kind {
            fn conditions(&self) -> &[$crate::capi::conditions::Condition] {
                self.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or(&[])
            }
            fn conditions_mut(&mut self) -> &mut Vec<$crate::capi::conditions::Condition> {
                self.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new)
            }
        }
    )*};
}
pub(crate) use impl_has_conditions;

/// Implements [`HasConditions`] for v1beta2 kinds, which keep the v1beta1 conditions in
/// `status.deprecated.v1beta1.conditions`.
macro_rules! impl_has_deprecated_conditions {
    ($($kind:ty),* $(,)?) => {$(
        impl $crate::capi::conditions::HasConditions for $kind {
            fn conditions(&self) -> &[$crate::capi::conditions::Condition] {
                self.status
                    .as_ref()
                    .and_then(|s| s.deprecated.as_ref())
                    .and_then(|d| d.v1beta1.as_ref())
                    .and_then(|v| v.conditions.as_deref())
                    .unwrap_or(&[])
            }
            fn conditions_mut(&mut self) -> &mut Vec<$crate::capi::conditions::Condition> {
                self.status
                    .get_or_insert_with(Default::default)
                    .deprecated
                    .get_or_insert_with(Default::default)
                    .v1beta1
                    .get_or_insert_with(Default::default)
                    .conditions
                    .get_or_insert_with(Vec::new)
            }
        }
    )*};
}
pub(crate) use impl_has_deprecated_conditions;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        Time(Timestamp::from_second(secs).unwrap())
    }

    #[test]
    fn set_keeps_transition_time_while_status_is_unchanged() {
        let mut c = Vec::new();
        mark_false(&mut c, "A", "Waiting", Severity::Info, "first", at(10));
        mark_false(&mut c, "A", "StillWaiting", Severity::Warning, "second", at(20));
        let a = get(&c, "A").unwrap();
        assert_eq!(a.last_transition_time, at(10));
        assert_eq!(a.reason.as_deref(), Some("StillWaiting"));
        assert_eq!(a.severity(), Some(Severity::Warning));
        mark_true(&mut c, "A", at(30));
        assert_eq!(get(&c, "A").unwrap().last_transition_time, at(30));
        assert!(is_true(&c, "A"));
        assert!(is_unknown(&c, "B"));
    }

    #[test]
    fn list_is_sorted_ready_first() {
        let mut c = Vec::new();
        mark_true(&mut c, "Zeta", at(1));
        mark_true(&mut c, "Alpha", at(1));
        mark_true(&mut c, READY, at(1));
        let types: Vec<_> = c.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Ready", "Alpha", "Zeta"]);
        delete(&mut c, "Alpha");
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn summary_picks_the_worst_in_listed_order() {
        let mut c = Vec::new();
        mark_false(&mut c, "InfrastructureReady", "WaitingForInfrastructure", Severity::Info, "infra", at(1));
        mark_false(&mut c, "BootstrapReady", "WaitingForDataSecret", Severity::Warning, "bootstrap", at(1));
        mark_false(&mut c, "Other", "Broken", Severity::Warning, "other", at(1));
        let ready = summary(&c, &["InfrastructureReady", "BootstrapReady", "Other"], at(5)).unwrap();
        assert_eq!(ready.status, STATUS_FALSE);
        assert_eq!(ready.severity(), Some(Severity::Warning));
        assert_eq!(ready.reason.as_deref(), Some("WaitingForDataSecret"));

        mark_false(&mut c, "Other", "Broken", Severity::Error, "other", at(1));
        let ready = summary(&c, &["InfrastructureReady", "BootstrapReady", "Other"], at(5)).unwrap();
        assert_eq!(ready.severity(), Some(Severity::Error));
        assert_eq!(ready.message.as_deref(), Some("other"));
    }

    #[test]
    fn summary_true_beats_unknown_and_absent_means_none() {
        let mut c = Vec::new();
        assert!(summary(&c, &["A", "B"], at(1)).is_none());
        mark_unknown(&mut c, "A", "Checking", "", at(1));
        mark_true(&mut c, "B", at(1));
        let ready = summary(&c, &["A", "B"], at(2)).unwrap();
        assert!(ready.is_true());
        delete(&mut c, "B");
        let ready = summary(&c, &["A", "B"], at(2)).unwrap();
        assert_eq!(ready.status, STATUS_UNKNOWN);
        assert_eq!(ready.reason.as_deref(), Some("Checking"));
        set_summary(&mut c, &["A"], at(3));
        assert_eq!(c[0].type_, READY);
    }

    #[test]
    fn mirror_copies_ready_or_falls_back() {
        let mut src = Vec::new();
        let fallback =
            MirrorFallback::False { reason: "WaitingForInfrastructure", severity: Severity::Info, message: "" };
        let m = mirror(&src, "InfrastructureReady", fallback.clone(), at(1));
        assert!(m.is_false());
        assert_eq!(m.reason.as_deref(), Some("WaitingForInfrastructure"));
        mark_true(&mut src, READY, at(7));
        let m = mirror(&src, "InfrastructureReady", fallback, at(9));
        assert!(m.is_true());
        assert_eq!(m.type_, "InfrastructureReady");
        assert_eq!(m.last_transition_time, at(7));
    }

    #[test]
    fn condition_times_have_whole_seconds() {
        let precise = Timestamp::from_second(1_700_000_000).expect("instant") + jiff::SignedDuration::from_millis(750);
        assert_eq!(time_at(precise).0, Timestamp::from_second(1_700_000_000).expect("instant"));
    }
}
