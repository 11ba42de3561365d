//! Label selectors (equality- and set-based) and field selectors, parsed from query strings
//! with the grammar and error messages of kube-apiserver.

use std::collections::BTreeSet;

use crate::store::ObjMeta;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    Eq(String, String),
    NotEq(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector: every requirement must hold. Empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<Requirement>);

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part)?);
        }
        Ok(Self(reqs))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Eq(k, v) => get(k).as_deref() == Some(v.as_str()),
            Requirement::NotEq(k, v) => get(k).as_deref() != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(&x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(&x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }

    pub fn matches_meta(&self, meta: &ObjMeta) -> bool {
        self.is_empty() || self.matches(|k| meta.label(k).map(str::to_string))
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

fn parse_requirement(p: &str) -> Result<Requirement, String> {
    if let Some(key) = p.strip_prefix('!') {
        let key = key.trim();
        validate_key(key)?;
        return Ok(Requirement::NotExists(key.to_string()));
    }
    for (op, is_in) in [(" notin ", false), (" in ", true)] {
        if let Some(idx) = p.find(op) {
            let key = p[..idx].trim();
            validate_key(key)?;
            let rest = p[idx + op.len()..].trim();
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("unable to parse requirement: found '{rest}', expected: '('"))?;
            let mut values = BTreeSet::new();
            for v in inner.split(',') {
                let v = v.trim();
                validate_value(v)?;
                values.insert(v.to_string());
            }
            return Ok(if is_in {
                Requirement::In(key.into(), values)
            } else {
                Requirement::NotIn(key.into(), values)
            });
        }
    }
    for (op, neq) in [("!=", true), ("==", false), ("=", false)] {
        if let Some(idx) = p.find(op) {
            let key = p[..idx].trim();
            let value = p[idx + op.len()..].trim();
            validate_key(key)?;
            validate_value(value)?;
            return Ok(if neq {
                Requirement::NotEq(key.into(), value.into())
            } else {
                Requirement::Eq(key.into(), value.into())
            });
        }
    }
    validate_key(p)?;
    Ok(Requirement::Exists(p.to_string()))
}

fn validate_key(k: &str) -> Result<(), String> {
    crate::rest::meta::qualified_name(k)
        .map_err(|e| format!("unable to parse requirement: invalid label key \"{k}\": {e}"))
}

fn validate_value(v: &str) -> Result<(), String> {
    crate::rest::meta::label_value(v)
        .map_err(|e| format!("unable to parse requirement: invalid label value: \"{v}\": {e}"))
}

/// A field selector: `field=value`, `field==value`, `field!=value`, comma-separated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector(pub Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses and checks every field against those the resource supports.
    pub fn parse(s: &str, supported: &dyn Fn(&str) -> bool) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: '{s}'; can't understand '{part}'"));
            };
            let field = field.trim();
            if !supported(field) {
                return Err(format!("field label not supported: {field}"));
            }
            out.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value required for `field` by an equality term, if any (to narrow lookups).
    pub fn equals(&self, field: &str) -> Option<&str> {
        self.0.iter().find(|(f, eq, _)| f == field && *eq).map(|(_, _, v)| v.as_str())
    }

    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|(f, eq, v)| {
            let actual = get(f).unwrap_or_default();
            (actual == *v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(a, _)| *a == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn parses_and_matches_set_based_selectors() {
        let l = [("env", "prod"), ("tier", "web"), ("cluster.x-k8s.io/cluster-name", "c1")];
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
            ("cluster.x-k8s.io/cluster-name=c1,env in (prod),!gone", true),
            ("", true),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(labels(&l)), want, "{sel}");
        }
    }

    #[test]
    fn rejects_bad_selectors() {
        for bad in ["env in prod", "a=b=c d", "-bad=x", "env=in valid"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn field_selectors_check_support() {
        let sup = |f: &str| f == "metadata.name";
        let s = FieldSelector::parse("metadata.name=foo", &sup).unwrap();
        assert_eq!(s.equals("metadata.name"), Some("foo"));
        assert!(s.matches(|_| Some("foo".into())));
        assert_eq!(FieldSelector::parse("spec.x=1", &sup).unwrap_err(), "field label not supported: spec.x");
        assert!(FieldSelector::parse("metadata.name!=foo", &sup).unwrap().matches(|_| Some("bar".into())));
    }
}
