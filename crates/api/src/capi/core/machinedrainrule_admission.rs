//! MachineDrainRule admission: the rules its CRD states (order only with Drain, 1-32
//! non-empty, distinct selectors per list) plus selector syntax.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::machinedrainrule::MachineDrainRuleDrainBehavior;
use super::v1beta2::MachineDrainRule;
use crate::admission::{FieldError, FieldErrorKind, FieldPath};
use crate::capi::typed::KindAdmission;
use crate::selector;

const MAX_SELECTORS: usize = 32;

pub(crate) struct MachineDrainRuleAdmission;

impl KindAdmission for MachineDrainRuleAdmission {
    type Object = MachineDrainRule;

    fn validate(&self, r: &MachineDrainRule, _old: Option<&MachineDrainRule>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = Vec::new();
        if let Some(order) = r.spec.drain.order
            && r.spec.drain.behavior != MachineDrainRuleDrainBehavior::Drain
        {
            errs.push(FieldError::invalid(
                spec.child("drain").child("order"),
                order,
                "order can only be set if behavior is set to \"Drain\"",
            ));
        }
        if let Some(machines) = &r.spec.machines {
            let pairs: Vec<_> = machines
                .iter()
                .map(|m| [("selector", &m.selector), ("clusterSelector", &m.cluster_selector)])
                .collect();
            errs.extend(validate_selector_list(&pairs, &spec.child("machines")));
        }
        if let Some(pods) = &r.spec.pods {
            let pairs: Vec<_> = pods
                .iter()
                .map(|p| [("selector", &p.selector), ("namespaceSelector", &p.namespace_selector)])
                .collect();
            errs.extend(validate_selector_list(&pairs, &spec.child("pods")));
        }
        errs
    }
}

/// A list of selector pairs: 1 to 32 entries, each with at least one valid selector, no two
/// alike.
fn validate_selector_list(items: &[[(&str, &Option<LabelSelector>); 2]], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if items.is_empty() {
        errs.push(FieldError::required(path.as_str(), "must contain at least one entry when set"));
    }
    if items.len() > MAX_SELECTORS {
        errs.push(FieldError::new(
            FieldErrorKind::TooLong,
            path.as_str(),
            format!("must have at most {MAX_SELECTORS} items"),
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, pair) in items.iter().enumerate() {
        let p = path.index(i);
        if pair.iter().all(|(_, s)| s.is_none()) {
            errs.push(FieldError::required(
                p.as_str(),
                format!("at least one of {} or {} must be set", pair[0].0, pair[1].0),
            ));
        }
        for (name, sel) in pair {
            if let Some(sel) = sel {
                errs.extend(selector::validate(sel, &p.child(name)));
            }
        }
        let key = serde_json::to_string(pair.map(|(_, s)| s).as_slice()).unwrap_or_default();
        if !seen.insert(key) {
            errs.push(FieldError::new(FieldErrorKind::Duplicate, p.as_str(), "entries must be unique"));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn rule() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDrainRule",
            "metadata": { "name": "r", "namespace": "ns" },
            "spec": {
                "drain": { "behavior": "Drain", "order": 10 },
                "machines": [ { "selector": { "matchExpressions": [ { "key": "cluster.x-k8s.io/control-plane", "operator": "Exists" } ] } } ],
                "pods": [ { "selector": { "matchLabels": { "app": "logging" } }, "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": "monitoring" } } } ]
            }
        })
    }

    #[test]
    fn rules() {
        let a = Typed(MachineDrainRuleAdmission);
        assert!(admit(&a, rule(), None).is_ok());
        let cases = [
            (json!({ "spec": { "drain": { "behavior": "Skip" } } }), vec!["spec.drain.order"]),
            (json!({ "spec": { "drain": { "behavior": "Evict", "order": null } } }), vec!["spec.drain.behavior"]),
            (json!({ "spec": { "machines": [] } }), vec!["spec.machines"]),
            (json!({ "spec": { "machines": [ {} ] } }), vec!["spec.machines[0]"]),
            (
                json!({ "spec": { "pods": [ { "selector": { "matchLabels": { "a": "b" } } }, { "selector": { "matchLabels": { "a": "b" } } } ] } }),
                vec!["spec.pods[1]"],
            ),
            (
                json!({ "spec": { "pods": [ { "namespaceSelector": { "matchExpressions": [ { "key": "k", "operator": "In" } ] } } ] } }),
                vec!["spec.pods[0].namespaceSelector.matchExpressions[0].values"],
            ),
        ];
        for (patch, want) in cases {
            assert_eq!(error_fields(&admit(&a, merged(&rule(), &patch), None)), want, "{patch}");
        }
        let too_many = json!({ "spec": { "machines": (0..33).map(|i| json!({ "selector": { "matchLabels": { "n": i.to_string() } } })).collect::<Vec<_>>() } });
        assert_eq!(error_fields(&admit(&a, merged(&rule(), &too_many), None)), ["spec.machines"]);
        let wait = merged(&rule(), &json!({ "spec": { "drain": { "behavior": "WaitCompleted", "order": null } } }));
        assert!(admit(&a, wait, None).is_ok());
    }
}
