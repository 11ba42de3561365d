//! v1beta2 conditions (`metav1.Condition`: no severity, an `observedGeneration`): the helpers
//! controllers use to set, summarise and aggregate them, and [`HasV1Beta2Conditions`], which
//! says where a kind keeps them.
//!
//! Rules (Cluster API v1beta2 conventions):
//! - `lastTransitionTime` moves only when `status` changes; `observedGeneration` is the
//!   object's generation when the condition was computed.
//! - Lists are kept in one order: `Available`, `Ready`, `UpToDate` first, then by type,
//!   `Paused` and `Deleting` last, so recomputing them never reorders (no spurious writes).
//! - A summary (`Ready` of a Machine, `Available` of a Cluster) is False when any input has
//!   an issue (False, or True for a negative-polarity input such as `Deleting`), else Unknown
//!   when any is Unknown or missing, else True; its message lists each input that is not
//!   fine, `* Type: message`.
//! - An aggregate (`MachinesReady` of a MachineSet) does the same over one condition of many
//!   objects, naming the objects.

pub mod names;

use std::cmp::Ordering;

pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::capi::conditions::{STATUS_FALSE, STATUS_TRUE, STATUS_UNKNOWN};

/// A condition's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    True,
    False,
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::True => STATUS_TRUE,
            Status::False => STATUS_FALSE,
            Status::Unknown => STATUS_UNKNOWN,
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            STATUS_TRUE => Status::True,
            STATUS_FALSE => Status::False,
            _ => Status::Unknown,
        }
    }

    fn from_bool(b: bool) -> Self {
        if b { Status::True } else { Status::False }
    }
}

/// What a controller observed, before it is set (which stamps the time and generation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub type_: String,
    pub status: Status,
    pub reason: String,
    pub message: String,
}

impl Observed {
    pub fn new(type_: &str, status: Status, reason: &str, message: impl Into<String>) -> Self {
        Self { type_: type_.to_string(), status, reason: reason.to_string(), message: message.into() }
    }

    pub fn true_(type_: &str, reason: &str) -> Self {
        Self::new(type_, Status::True, reason, "")
    }

    pub fn false_(type_: &str, reason: &str, message: impl Into<String>) -> Self {
        Self::new(type_, Status::False, reason, message)
    }

    pub fn unknown(type_: &str, reason: &str, message: impl Into<String>) -> Self {
        Self::new(type_, Status::Unknown, reason, message)
    }

    /// True or False by `b`, with the reason for either.
    pub fn when(type_: &str, b: bool, reason_true: &str, reason_false: &str, message: impl Into<String>) -> Self {
        let reason = if b { reason_true } else { reason_false };
        Self::new(type_, Status::from_bool(b), reason, message)
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// A v1beta1 condition as a v1beta2 one: same type, status and message; a v1beta2
    /// condition needs a reason, so one without takes its type when True (`Ready`) and
    /// `Not<Type>` otherwise.
    pub fn from_v1beta1(c: &crate::capi::conditions::Condition) -> Self {
        let status = Status::parse(&c.status);
        let reason = match c.reason.as_deref().filter(|r| !r.is_empty()) {
            Some(r) => r.to_string(),
            None if status == Status::True => c.type_.clone(),
            None => format!("Not{}", c.type_),
        };
        Self { type_: c.type_.clone(), status, reason, message: c.message.clone().unwrap_or_default() }
    }
}

/// The reasons of a summary or aggregate: all fine, an issue, unknown.
#[derive(Clone, Copy, Debug)]
pub struct Reasons {
    pub fine: &'static str,
    pub issue: &'static str,
    pub unknown: &'static str,
}

impl Reasons {
    pub const READY: Reasons =
        Reasons { fine: names::READY_REASON, issue: names::NOT_READY_REASON, unknown: names::READY_UNKNOWN_REASON };
    pub const AVAILABLE: Reasons = Reasons {
        fine: names::AVAILABLE_REASON,
        issue: names::NOT_AVAILABLE_REASON,
        unknown: names::AVAILABLE_UNKNOWN_REASON,
    };
    /// Remediating names the Machines under way whatever their state.
    pub const REMEDIATING: Reasons = Reasons {
        fine: names::REMEDIATING_REASON,
        issue: names::REMEDIATING_REASON,
        unknown: names::REMEDIATING_REASON,
    };
    pub const UP_TO_DATE: Reasons = Reasons {
        fine: names::UP_TO_DATE_REASON,
        issue: names::NOT_UP_TO_DATE_REASON,
        unknown: names::UP_TO_DATE_UNKNOWN_REASON,
    };
}

/// Whether True is good (`Ready`) or bad (`Deleting`, `Paused`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    Positive,
    Negative,
}

/// How one condition counts in a summary or aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Fine,
    Unknown,
    Issue,
}

fn verdict(status: Status, polarity: Polarity) -> Verdict {
    match (status, polarity) {
        (Status::Unknown, _) => Verdict::Unknown,
        (Status::True, Polarity::Positive) | (Status::False, Polarity::Negative) => Verdict::Fine,
        _ => Verdict::Issue,
    }
}

fn rank(type_: &str) -> (u8, &str) {
    match type_ {
        names::AVAILABLE => (0, ""),
        names::READY => (1, ""),
        names::UP_TO_DATE => (2, ""),
        names::PAUSED => (4, ""),
        names::DELETING => (5, ""),
        other => (3, other),
    }
}

fn type_order(a: &str, b: &str) -> Ordering {
    rank(a).cmp(&rank(b))
}

pub fn get<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_some_and(|c| c.status == STATUS_TRUE)
}

pub fn is_false(conditions: &[Condition], type_: &str) -> bool {
    get(conditions, type_).is_some_and(|c| c.status == STATUS_FALSE)
}

/// Sets `observed` in `conditions` as of `generation`: the transition time is `now` unless
/// the status is unchanged. The list stays in [its order](self).
pub fn set(conditions: &mut Vec<Condition>, observed: Observed, generation: Option<i64>, now: &Time) {
    let Observed { type_, status, reason, message } = observed;
    let status = status.as_str();
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            if c.status != status {
                c.status = status.to_string();
                c.last_transition_time = now.clone();
            }
            c.reason = reason;
            c.message = message;
            c.observed_generation = generation;
        }
        None => {
            let at = conditions.partition_point(|c| type_order(&c.type_, &type_) == Ordering::Less);
            conditions.insert(
                at,
                Condition {
                    type_,
                    status: status.to_string(),
                    reason,
                    message,
                    last_transition_time: now.clone(),
                    observed_generation: generation,
                },
            );
        }
    }
}

pub fn delete(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

/// `type_` mirroring a referenced object's condition (its `Ready`, say) when it reports
/// one, else `fallback` (computed from the contract's fields).
pub fn mirror(type_: &str, source: Option<&Condition>, fallback: Observed) -> Observed {
    match source {
        Some(c) => Observed {
            type_: type_.to_string(),
            status: Status::parse(&c.status),
            reason: c.reason.clone(),
            message: c.message.clone(),
        },
        None => Observed { type_: type_.to_string(), ..fallback },
    }
}

/// One input of a [`summary`].
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub type_: &'a str,
    pub polarity: Polarity,
    /// A missing condition is ignored rather than counted as Unknown (`HealthCheckSucceeded`
    /// exists only while a MachineHealthCheck watches the Machine).
    pub optional: bool,
}

impl<'a> Input<'a> {
    pub const fn positive(type_: &'a str) -> Self {
        Self { type_, polarity: Polarity::Positive, optional: false }
    }

    pub const fn negative(type_: &'a str) -> Self {
        Self { type_, polarity: Polarity::Negative, optional: false }
    }

    pub const fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
}

/// `type_` summarising `inputs` of `conditions` (see [the rules](self)).
pub fn summary(type_: &str, conditions: &[Condition], inputs: &[Input<'_>], reasons: Reasons) -> Observed {
    let mut worst = Verdict::Fine;
    let mut lines = Vec::new();
    for input in inputs {
        let (v, detail) = match get(conditions, input.type_) {
            Some(c) => {
                let v = verdict(Status::parse(&c.status), input.polarity);
                let detail = if c.message.is_empty() { c.reason.clone() } else { c.message.clone() };
                (v, detail)
            }
            None if input.optional => continue,
            None => (Verdict::Unknown, "Condition not yet reported".to_string()),
        };
        worst = worst.max(v);
        if v != Verdict::Fine {
            lines.push(bullet(input.type_, &detail));
        }
    }
    let (status, reason) = match worst {
        Verdict::Fine => (Status::True, reasons.fine),
        Verdict::Unknown => (Status::Unknown, reasons.unknown),
        Verdict::Issue => (Status::False, reasons.issue),
    };
    Observed::new(type_, status, reason, lines.join("\n"))
}

/// `* Subject: detail`, a multi-line detail indented under it.
fn bullet(subject: &str, detail: &str) -> String {
    let mut out = format!("* {subject}:");
    let mut details = detail.lines();
    match (details.next(), details.clone().next()) {
        (Some(one), None) => {
            out.push(' ');
            out.push_str(one);
        }
        (Some(first), Some(_)) => {
            for line in std::iter::once(first).chain(details) {
                out.push_str("\n  ");
                out.push_str(line);
            }
        }
        (None, _) => {}
    }
    out
}

/// At most this many objects are named per line of an aggregate's message, and this many
/// lines are written.
const NAMES_PER_LINE: usize = 3;
const LINES: usize = 3;

/// `type_` aggregating the `source` condition of many objects of one kind (`kind` as
/// `("Machine", "Machines")`), each given by name and its conditions. No objects is
/// True with `empty_reason` (upstream's `NoReplicas`), so callers need not special-case it.
pub fn aggregate<'a>(
    type_: &str,
    source: &str,
    polarity: Polarity,
    kind: (&str, &str),
    objects: impl IntoIterator<Item = (&'a str, &'a [Condition])>,
    reasons: Reasons,
    empty_reason: &str,
) -> Observed {
    // Objects grouped by verdict and detail, in first-seen order.
    let mut groups: Vec<(Verdict, String, Vec<&str>)> = Vec::new();
    let mut worst = Verdict::Fine;
    let mut any = false;
    for (name, conditions) in objects {
        any = true;
        let (v, detail) = match get(conditions, source) {
            Some(c) => {
                let v = verdict(Status::parse(&c.status), polarity);
                (v, if c.message.is_empty() { c.reason.clone() } else { c.message.clone() })
            }
            None => (Verdict::Unknown, format!("Condition {source} not yet reported")),
        };
        worst = worst.max(v);
        if v == Verdict::Fine {
            continue;
        }
        match groups.iter_mut().find(|(gv, gd, _)| *gv == v && *gd == detail) {
            Some((_, _, names)) => names.push(name),
            None => groups.push((v, detail, vec![name])),
        }
    }
    if !any {
        return Observed::true_(type_, empty_reason);
    }
    // Issues before unknowns; each group's names sorted for a stable message.
    groups.sort_by_key(|g| std::cmp::Reverse(g.0));
    let mut lines = Vec::new();
    for (_, detail, mut names) in groups.iter().take(LINES).cloned() {
        names.sort_unstable();
        let subject = if names.len() == 1 {
            format!("{} {}", kind.0, names[0])
        } else if names.len() <= NAMES_PER_LINE {
            format!("{} {}", kind.1, names.join(", "))
        } else {
            format!("{} {}, ... ({} more)", kind.1, names[..NAMES_PER_LINE].join(", "), names.len() - NAMES_PER_LINE)
        };
        lines.push(bullet(&subject, &detail));
    }
    let rest: usize = groups.iter().skip(LINES).map(|g| g.2.len()).sum();
    if rest > 0 {
        lines.push(format!("And {rest} {} with other issues", if rest == 1 { kind.0 } else { kind.1 }));
    }
    let (status, reason) = match worst {
        Verdict::Fine => (Status::True, reasons.fine),
        Verdict::Unknown => (Status::Unknown, reasons.unknown),
        Verdict::Issue => (Status::False, reasons.issue),
    };
    Observed::new(type_, status, reason, lines.join("\n"))
}

/// A kind whose objects carry v1beta2 conditions. While v1beta1 is the storage version they
/// live in `status.v1beta2.conditions`; controllers reach them only through this trait.
pub trait HasV1Beta2Conditions: kube::Resource {
    fn v1beta2_conditions(&self) -> &[Condition];

    /// The list, created empty when the object has none.
    fn v1beta2_conditions_mut(&mut self) -> &mut Vec<Condition>;

    /// Sets `observed` as of the object's generation (see [`set`]).
    fn set_v1beta2(&mut self, observed: Observed, now: &Time) {
        let generation = self.meta().generation;
        set(self.v1beta2_conditions_mut(), observed, generation, now);
    }

    fn v1beta2_condition(&self, type_: &str) -> Option<&Condition> {
        get(self.v1beta2_conditions(), type_)
    }

    fn is_v1beta2_true(&self, type_: &str) -> bool {
        is_true(self.v1beta2_conditions(), type_)
    }
}

/// Implements [`HasV1Beta2Conditions`] for a kind keeping them in `status.v1beta2.conditions`.
macro_rules! impl_has_v1beta2_conditions {
    ($kind:ty) => {
        impl $crate::capi::v1beta2_conditions::HasV1Beta2Conditions for $kind {
            fn v1beta2_conditions(&self) -> &[$crate::capi::v1beta2_conditions::Condition] {
                self.status
                    .as_ref()
                    .and_then(|s| s.v1beta2.as_ref())
                    .and_then(|v| v.conditions.as_deref())
                    .unwrap_or(&[])
            }

            fn v1beta2_conditions_mut(&mut self) -> &mut Vec<$crate::capi::v1beta2_conditions::Condition> {
                self.status
                    .get_or_insert_with(Default::default)
                    .v1beta2
                    .get_or_insert_with(Default::default)
                    .conditions
                    .get_or_insert_with(Vec::new)
            }
        }
    };
}
pub(crate) use impl_has_v1beta2_conditions;

/// Implements [`HasV1Beta2Conditions`] for a v1beta2 kind, which keeps them in
/// `status.conditions`.
macro_rules! impl_has_hub_conditions {
    ($kind:ty) => {
        impl $crate::capi::v1beta2_conditions::HasV1Beta2Conditions for $kind {
            fn v1beta2_conditions(&self) -> &[$crate::capi::v1beta2_conditions::Condition] {
                self.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or(&[])
            }

            fn v1beta2_conditions_mut(&mut self) -> &mut Vec<$crate::capi::v1beta2_conditions::Condition> {
                self.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new)
            }
        }
    };
}
pub(crate) use impl_has_hub_conditions;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        Time(jiff::Timestamp::from_second(secs).unwrap())
    }

    fn list(items: &[(&str, Status, &str)]) -> Vec<Condition> {
        let mut out = Vec::new();
        for (t, s, m) in items {
            set(&mut out, Observed::new(t, *s, "R", *m), Some(1), &at(1));
        }
        out
    }

    #[test]
    fn set_keeps_transition_time_while_status_is_unchanged_and_orders_types() {
        let mut c = Vec::new();
        set(&mut c, Observed::false_("Zeta", "A", "m"), Some(1), &at(10));
        set(&mut c, Observed::true_(names::DELETING, "x"), Some(1), &at(10));
        set(&mut c, Observed::true_(names::READY, "x"), Some(1), &at(10));
        set(&mut c, Observed::true_(names::AVAILABLE, "x"), Some(1), &at(10));
        set(&mut c, Observed::true_("Alpha", "x"), Some(1), &at(10));
        set(&mut c, Observed::true_(names::PAUSED, "x"), Some(1), &at(10));
        let types: Vec<_> = c.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Available", "Ready", "Alpha", "Zeta", "Paused", "Deleting"]);
        set(&mut c, Observed::false_("Zeta", "B", "other"), Some(2), &at(20));
        let z = get(&c, "Zeta").unwrap();
        assert_eq!((z.reason.as_str(), z.last_transition_time.clone(), z.observed_generation), ("B", at(10), Some(2)));
        set(&mut c, Observed::true_("Zeta", "C"), Some(2), &at(30));
        assert_eq!(get(&c, "Zeta").unwrap().last_transition_time, at(30));
    }

    #[test]
    fn summary_ranks_issues_over_unknown_and_honours_polarity() {
        let inputs = [
            Input::negative(names::DELETING),
            Input::positive(names::INFRASTRUCTURE_READY),
            Input::positive(names::NODE_HEALTHY),
            Input::positive(names::HEALTH_CHECK_SUCCEEDED).optional(),
        ];
        let fine = list(&[
            (names::DELETING, Status::False, ""),
            (names::INFRASTRUCTURE_READY, Status::True, ""),
            (names::NODE_HEALTHY, Status::True, ""),
        ]);
        let s = summary(names::READY, &fine, &inputs, Reasons::READY);
        assert_eq!((s.status, s.reason.as_str(), s.message.as_str()), (Status::True, "Ready", ""));

        let mut unknown = fine.clone();
        delete(&mut unknown, names::NODE_HEALTHY);
        let s = summary(names::READY, &unknown, &inputs, Reasons::READY);
        assert_eq!((s.status, s.reason.as_str()), (Status::Unknown, "ReadyUnknown"));
        assert_eq!(s.message, "* NodeHealthy: Condition not yet reported");

        let mut deleting = unknown.clone();
        set(
            &mut deleting,
            Observed::true_(names::DELETING, "Deleting").with_message("Draining\nnode"),
            Some(1),
            &at(2),
        );
        let s = summary(names::READY, &deleting, &inputs, Reasons::READY);
        assert_eq!((s.status, s.reason.as_str()), (Status::False, "NotReady"));
        assert_eq!(s.message, "* Deleting:\n  Draining\n  node\n* NodeHealthy: Condition not yet reported");
    }

    #[test]
    fn aggregate_names_objects_by_issue() {
        let ready = list(&[(names::READY, Status::True, "")]);
        let not_ready = list(&[(names::READY, Status::False, "booting")]);
        let objects: Vec<(&str, &[Condition])> = vec![
            ("m4", &not_ready),
            ("m1", &ready),
            ("m3", &not_ready),
            ("m2", &[]),
            ("m5", &not_ready),
            ("m0", &not_ready),
        ];
        let a = aggregate(
            names::MACHINES_READY,
            names::READY,
            Polarity::Positive,
            ("Machine", "Machines"),
            objects,
            Reasons::READY,
            names::NO_REPLICAS_REASON,
        );
        assert_eq!((a.status, a.reason.as_str()), (Status::False, "NotReady"));
        assert_eq!(
            a.message,
            "* Machines m0, m3, m4, ... (1 more): booting\n* Machine m2: Condition Ready not yet reported"
        );
        let none = aggregate(
            names::MACHINES_READY,
            names::READY,
            Polarity::Positive,
            ("Machine", "Machines"),
            Vec::<(&str, &[Condition])>::new(),
            Reasons::READY,
            names::NO_REPLICAS_REASON,
        );
        assert_eq!((none.status, none.reason.as_str()), (Status::True, "NoReplicas"));
    }
}
