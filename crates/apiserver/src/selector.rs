//! Field selectors, parsed from query strings with the grammar and error messages of
//! kube-apiserver. (Label selectors are [`drydock_api::selector::Selector`], shared with
//! admission.)

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
