//! Label selectors: validation with apimachinery's messages, matching against label maps, and
//! the query-string form (`a=b,c in (x,y)`) that status.selector and `kubectl -l` use.
//!
//! Semantics follow `metav1.LabelSelectorAsSelector`: an empty selector (no matchLabels, no
//! matchExpressions) matches everything.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::validation::{label_value_errors, qualified_name_errors};
use crate::admission::{FieldError, FieldPath};

/// Operators of a matchExpressions requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Operator {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "In" => Some(Self::In),
            "NotIn" => Some(Self::NotIn),
            "Exists" => Some(Self::Exists),
            "DoesNotExist" => Some(Self::DoesNotExist),
            _ => None,
        }
    }
}

/// One parsed requirement; matchLabels entries become `In` with a single value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// How the label is compared.
    pub operator: Operator,
    /// Values for In/NotIn (sorted, unique).
    pub values: Vec<String>,
}

impl Requirement {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// A validated selector: all requirements must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// All must match.
    pub requirements: Vec<Requirement>,
}

impl Selector {
    /// Parses and validates; every problem is reported with a path under `path`.
    pub fn parse(sel: &LabelSelector, path: &FieldPath) -> Result<Self, Vec<FieldError>> {
        let errs = validate(sel, path);
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut requirements: Vec<Requirement> = sel
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| Requirement { key: k.clone(), operator: Operator::In, values: vec![v.clone()] })
            .collect();
        for e in sel.match_expressions.iter().flatten() {
            let Some(operator) = Operator::parse(&e.operator) else { continue };
            let mut values = e.values.clone().unwrap_or_default();
            values.sort();
            values.dedup();
            requirements.push(Requirement { key: e.key.clone(), operator, values });
        }
        Ok(Self { requirements })
    }

    /// True when every requirement matches; an empty selector matches everything.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Query-string form, requirements sorted by key: `a=b,c in (x,y),!d`.
    pub fn to_query(&self) -> String {
        let mut reqs: Vec<&Requirement> = self.requirements.iter().collect();
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        let parts: Vec<String> = reqs
            .iter()
            .map(|r| match r.operator {
                Operator::In if r.values.len() == 1 => format!("{}={}", r.key, r.values[0]),
                Operator::In => format!("{} in ({})", r.key, r.values.join(",")),
                Operator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
            })
            .collect();
        parts.join(",")
    }
}

/// True if the selector has neither matchLabels nor matchExpressions.
pub fn is_empty(sel: &LabelSelector) -> bool {
    sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty) && sel.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// Validates a selector the way apimachinery's `ValidateLabelSelector` does.
pub fn validate(sel: &LabelSelector, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels_path = path.child("matchLabels");
    for (k, v) in sel.match_labels.iter().flatten() {
        for e in qualified_name_errors(k) {
            errs.push(FieldError::invalid(labels_path.as_str(), k.as_str(), e));
        }
        for e in label_value_errors(v) {
            errs.push(FieldError::invalid(labels_path.key(k), v.as_str(), e));
        }
    }
    for (i, e) in sel.match_expressions.iter().flatten().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let n_values = e.values.as_ref().map_or(0, Vec::len);
        match Operator::parse(&e.operator) {
            Some(Operator::In | Operator::NotIn) if n_values == 0 => errs
                .push(FieldError::required(p.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")),
            Some(Operator::Exists | Operator::DoesNotExist) if n_values > 0 => errs.push(FieldError::forbidden(
                p.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            Some(_) => {}
            None => errs.push(FieldError::invalid(
                p.child("operator"),
                e.operator.as_str(),
                "not a valid selector operator",
            )),
        }
        for err in qualified_name_errors(&e.key) {
            errs.push(FieldError::invalid(p.child("key"), e.key.as_str(), err));
        }
        for (j, v) in e.values.iter().flatten().enumerate() {
            for err in label_value_errors(v) {
                errs.push(FieldError::invalid(p.child("values").index(j), v.as_str(), err));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn matches_and_renders() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![
                expr("tier", "In", &["b", "a"]),
                expr("gone", "DoesNotExist", &[]),
                expr("role", "Exists", &[]),
                expr("env", "NotIn", &["prod"]),
            ]),
        };
        let s = Selector::parse(&sel, &FieldPath::new("spec").child("selector")).unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("tier", "a"), ("role", "")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "a"), ("role", ""), ("env", "prod")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "a"), ("role", ""), ("gone", "x")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "c"), ("role", "")])));
        assert_eq!(s.to_query(), "app=web,env notin (prod),!gone,role,tier in (a,b)");
        assert!(Selector::parse(&LabelSelector::default(), &FieldPath::new("s")).unwrap().matches(&labels(&[])));
        assert!(is_empty(&LabelSelector { match_labels: Some(BTreeMap::new()), match_expressions: None }));
    }

    #[test]
    fn validation_paths() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("bad key!", "v"), ("k", "bad value")])),
            match_expressions: Some(vec![
                expr("a", "Equals", &["x"]),
                expr("b", "In", &[]),
                expr("c", "Exists", &["x"]),
            ]),
        };
        let errs = validate(&sel, &FieldPath::new("spec").child("selector"));
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.selector.matchLabels",
                "spec.selector.matchLabels[k]",
                "spec.selector.matchExpressions[0].operator",
                "spec.selector.matchExpressions[1].values",
                "spec.selector.matchExpressions[2].values",
            ]
        );
    }
}
