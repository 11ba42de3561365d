//! ClusterResourceSet and ClusterResourceSetBinding admission, as upstream's webhooks: the
//! strategy defaults to ApplyOnce; the selector must select something and parse; selector
//! and strategy are immutable, as is a binding's cluster.

use super::v1beta2::{ClusterResourceSet, ClusterResourceSetBinding};
use crate::admission::{FieldError, FieldPath};
use crate::capi::typed::KindAdmission;
use crate::capi::validation::immutable_value;
use crate::selector;

pub(crate) struct ClusterResourceSetAdmission;

impl KindAdmission for ClusterResourceSetAdmission {
    type Object = ClusterResourceSet;

    fn default(&self, s: &mut ClusterResourceSet, _old: Option<&ClusterResourceSet>) -> Result<(), Vec<FieldError>> {
        s.spec.strategy.get_or_insert_default();
        Ok(())
    }

    fn validate(&self, s: &ClusterResourceSet, old: Option<&ClusterResourceSet>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let path = spec.child("clusterSelector");
        let sel = &s.spec.cluster_selector;
        let mut errs = selector::validate(sel, &path);
        let empty = sel.match_labels.as_ref().is_none_or(|m| m.is_empty())
            && sel.match_expressions.as_ref().is_none_or(|e| e.is_empty());
        if empty {
            errs.push(FieldError::invalid(path.as_str(), serde_json::json!({}), "selector must not be empty"));
        }
        if let Some(old) = old {
            errs.extend(immutable_value(&path, sel, &old.spec.cluster_selector));
            if old.spec.strategy.is_some() {
                errs.extend(immutable_value(&spec.child("strategy"), &s.spec.strategy, &old.spec.strategy));
            }
        }
        errs
    }
}

pub(crate) struct ClusterResourceSetBindingAdmission;

impl KindAdmission for ClusterResourceSetBindingAdmission {
    type Object = ClusterResourceSetBinding;

    fn validate(&self, b: &ClusterResourceSetBinding, old: Option<&ClusterResourceSetBinding>) -> Vec<FieldError> {
        let Some(old) = old else { return Vec::new() };
        let path = FieldPath::new("spec").child("clusterName");
        immutable_value(&path, &b.spec.cluster_name, &old.spec.cluster_name).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(spec: serde_json::Value) -> ClusterResourceSet {
        serde_json::from_value(json!({"metadata": {"name": "s"}, "spec": spec})).expect("set")
    }

    #[test]
    fn strategy_defaults_and_selector_and_strategy_are_checked() {
        let mut s = set(json!({"clusterSelector": {"matchLabels": {"a": "b"}}, "resources": []}));
        ClusterResourceSetAdmission.default(&mut s, None).expect("defaults");
        assert_eq!(s.spec.strategy, Some(super::super::ClusterResourceSetStrategy::ApplyOnce));
        assert!(ClusterResourceSetAdmission.validate(&s, None).is_empty());

        let empty = set(json!({"clusterSelector": {}, "resources": []}));
        let errs = ClusterResourceSetAdmission.validate(&empty, None);
        assert!(errs.iter().any(|e| e.body().contains("selector must not be empty")), "{errs:?}");

        let mut changed = s.clone();
        changed.spec.cluster_selector.match_labels = Some([("a".into(), "c".into())].into());
        changed.spec.strategy = Some(super::super::ClusterResourceSetStrategy::Reconcile);
        let errs = ClusterResourceSetAdmission.validate(&changed, Some(&s));
        let bodies: Vec<String> = errs.iter().map(FieldError::body).collect();
        assert_eq!(errs.len(), 2, "{bodies:?}");
        assert!(bodies.iter().all(|b| b.contains("field is immutable")), "{bodies:?}");
    }
}
