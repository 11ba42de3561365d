//! Label selectors, one model for the API server and admission: built from a
//! `metav1.LabelSelector` (validated with apimachinery's messages) or parsed from the
//! query-string form (`a=b,c in (x,y),!d`, what `?labelSelector=`, status.selector and
//! `kubectl -l` use, with kube-apiserver's grammar and messages), matched against labels,
//! and rendered back to the query-string form.
//!
//! Semantics follow `metav1.LabelSelectorAsSelector`: an empty selector (no matchLabels, no
//! matchExpressions) matches everything. `a=b` is `a in (b)` and `a!=b` is `a notin (b)`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::admission::{FieldError, FieldPath};
use crate::names::{label_value_errors, qualified_name_errors};

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
    fn new(key: &str, operator: Operator, mut values: Vec<String>) -> Self {
        values.sort();
        values.dedup();
        Self { key: key.to_string(), operator, values }
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_value(labels.get(&self.key).map(String::as_str))
    }

    /// Whether a label whose value is `value` (`None`: absent) satisfies the requirement.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        let listed = |v: &str| self.values.binary_search_by(|x| x.as_str().cmp(v)).is_ok();
        match self.operator {
            Operator::In => value.is_some_and(listed),
            Operator::NotIn => value.is_none_or(|v| !listed(v)),
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
            .map(|(k, v)| Requirement::new(k, Operator::In, vec![v.clone()]))
            .collect();
        for e in sel.match_expressions.iter().flatten() {
            let Some(operator) = Operator::parse(&e.operator) else { continue };
            requirements.push(Requirement::new(&e.key, operator, e.values.clone().unwrap_or_default()));
        }
        Ok(Self { requirements })
    }

    /// Parses the query-string form (`?labelSelector=`), with kube-apiserver's grammar and
    /// messages. The empty string selects everything.
    pub fn parse_query(s: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for part in split_top_level(s) {
            let part = part.trim();
            if !part.is_empty() {
                requirements.push(parse_requirement(part)?);
            }
        }
        Ok(Self { requirements })
    }

    /// True when every requirement matches; an empty selector matches everything.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Like [`Self::matches`], reading labels through `get`.
    pub fn matches_by<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches_value(get(&r.key)))
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

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// One requirement of the query-string form: `!k`, `k in (..)`, `k notin (..)`, `k=v`,
/// `k==v`, `k!=v` or `k`.
fn parse_requirement(p: &str) -> Result<Requirement, String> {
    if let Some(key) = p.strip_prefix('!') {
        let key = query_key(key.trim())?;
        return Ok(Requirement::new(key, Operator::DoesNotExist, Vec::new()));
    }
    for (op, operator) in [(" notin ", Operator::NotIn), (" in ", Operator::In)] {
        if let Some(idx) = p.find(op) {
            let key = query_key(p[..idx].trim())?;
            let rest = p[idx + op.len()..].trim();
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("unable to parse requirement: found '{rest}', expected: '('"))?;
            let values =
                inner.split(',').map(|v| query_value(v.trim()).map(str::to_string)).collect::<Result<_, _>>()?;
            return Ok(Requirement::new(key, operator, values));
        }
    }
    for (op, operator) in [("!=", Operator::NotIn), ("==", Operator::In), ("=", Operator::In)] {
        if let Some(idx) = p.find(op) {
            let key = query_key(p[..idx].trim())?;
            let value = query_value(p[idx + op.len()..].trim())?;
            return Ok(Requirement::new(key, operator, vec![value.to_string()]));
        }
    }
    Ok(Requirement::new(query_key(p)?, Operator::Exists, Vec::new()))
}

fn query_key(k: &str) -> Result<&str, String> {
    checked(k, qualified_name_errors(k), &format!("invalid label key \"{k}\""))
}

fn query_value(v: &str) -> Result<&str, String> {
    checked(v, label_value_errors(v), &format!("invalid label value: \"{v}\""))
}

/// `s` when `errs` is empty, else kube-apiserver's parse error naming `what`.
fn checked<'a>(s: &'a str, errs: Vec<String>, what: &str) -> Result<&'a str, String> {
    if errs.is_empty() { Ok(s) } else { Err(format!("unable to parse requirement: {what}: {}", errs.join("; "))) }
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

    #[test]
    fn parses_and_matches_query_strings() {
        let l = labels(&[("env", "prod"), ("tier", "web"), ("cluster.x-k8s.io/cluster-name", "c1")]);
        let cases = [
            ("env=prod", true),
            ("env==prod,tier=web", true),
            ("env!=prod", false),
            ("env in (prod, dev)", true),
            ("env notin (prod)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("missing notin (x)", true),
            ("missing!=x", true),
            ("cluster.x-k8s.io/cluster-name=c1,env in (prod),!gone", true),
            ("", true),
        ];
        for (sel, want) in cases {
            let s = Selector::parse_query(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&l), want, "{sel}");
            assert_eq!(s.matches_by(|k| l.get(k).map(String::as_str)), want, "{sel}");
        }
        assert_eq!(Selector::parse_query("b in (y,x),a=1,!c").unwrap().to_query(), "a=1,b in (x,y),!c");
    }

    #[test]
    fn rejects_bad_query_strings() {
        for bad in ["env in prod", "a=b=c d", "-bad=x", "env=in valid"] {
            assert!(Selector::parse_query(bad).is_err(), "{bad} should be rejected");
        }
        assert_eq!(
            Selector::parse_query("env in prod").unwrap_err(),
            "unable to parse requirement: found 'prod', expected: '('"
        );
    }

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
