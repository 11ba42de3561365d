//! What a drain does with each pod: the pod's `cluster.x-k8s.io/drain` label first
//! (`skip`, `wait-completed`), then the MachineDrainRules of the Machine's namespace that
//! select the Machine, by name, the first whose pod selectors match winning. Without
//! either, a pod is drained at order 0.

use std::collections::BTreeMap;

use drydock_api::admission::FieldPath;
use drydock_api::capi::core::v1beta2::MachineDrainRule;
use drydock_api::capi::core::{
    MachineDrainRuleDrainBehavior, MachineDrainRuleMachineSelector, MachineDrainRulePodSelector,
};
use drydock_api::capi::keys::POD_DRAIN_LABEL;
use drydock_api::capi::selector::Selector;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::ResourceExt;

/// How the drain treats one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Behavior {
    /// Evicted, in groups of increasing order.
    Drain { order: i32 },
    /// Left on the Node.
    Skip,
    /// Not evicted, but waited for until it completes.
    WaitCompleted,
}

/// The rules that apply to one Machine, in name order.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    rules: Vec<Rule>,
}

#[derive(Debug)]
struct Rule {
    behavior: Behavior,
    /// `None`: every pod.
    pods: Option<Vec<PodSelector>>,
}

#[derive(Debug)]
struct PodSelector {
    pods: Selector,
    namespaces: Selector,
}

impl Rules {
    /// The rules among `all` (one namespace's) that select a Machine with these labels in a
    /// Cluster with these.
    pub fn for_machine(
        mut all: Vec<MachineDrainRule>,
        machine: &BTreeMap<String, String>,
        cluster: &BTreeMap<String, String>,
    ) -> Self {
        all.sort_by_key(ResourceExt::name_any);
        let rules = all
            .iter()
            .filter(|r| {
                r.spec.machines.as_ref().is_none_or(|ms| ms.iter().any(|s| selects_machine(s, machine, cluster)))
            })
            .map(|r| {
                // A selector that does not parse (admission refuses them) selects nothing.
                let pods = r.spec.pods.as_ref().map(|list| list.iter().filter_map(pod_selector).collect());
                let behavior = match r.spec.drain.behavior {
                    MachineDrainRuleDrainBehavior::Drain => Behavior::Drain { order: r.spec.drain.order.unwrap_or(0) },
                    MachineDrainRuleDrainBehavior::Skip => Behavior::Skip,
                    MachineDrainRuleDrainBehavior::WaitCompleted => Behavior::WaitCompleted,
                };
                Rule { behavior, pods }
            })
            .collect();
        Self { rules }
    }

    /// Whether a rule looks at the labels of pods' namespaces.
    pub fn needs_namespaces(&self) -> bool {
        self.rules.iter().flat_map(|r| r.pods.iter().flatten()).any(|p| !p.namespaces.is_empty())
    }

    /// The behaviour for `pod`, whose namespace has `namespace_labels`.
    pub fn behavior(&self, pod: &Pod, namespace_labels: &BTreeMap<String, String>) -> Behavior {
        if let Some(b) = label_behavior(pod) {
            return b;
        }
        let empty = BTreeMap::new();
        let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
        self.rules
            .iter()
            .find(|r| {
                r.pods.as_ref().is_none_or(|ps| {
                    ps.iter().any(|p| p.pods.matches(labels) && p.namespaces.matches(namespace_labels))
                })
            })
            .map_or(Behavior::Drain { order: 0 }, |r| r.behavior.clone())
    }
}

/// The pod's own `cluster.x-k8s.io/drain` label: `skip` or `wait-completed`, in any case,
/// the dash optional.
fn label_behavior(pod: &Pod) -> Option<Behavior> {
    let value = pod.metadata.labels.as_ref()?.get(POD_DRAIN_LABEL)?.to_ascii_lowercase();
    match value.as_str() {
        "skip" => Some(Behavior::Skip),
        "wait-completed" | "waitcompleted" => Some(Behavior::WaitCompleted),
        _ => None,
    }
}

/// An unset selector matches everything; one that does not parse, nothing.
fn parse(sel: Option<&LabelSelector>) -> Option<Selector> {
    match sel {
        None => Some(Selector::default()),
        Some(s) => Selector::parse(s, &FieldPath::new("selector")).ok(),
    }
}

fn selects_machine(
    s: &MachineDrainRuleMachineSelector,
    machine: &BTreeMap<String, String>,
    cluster: &BTreeMap<String, String>,
) -> bool {
    let machines = parse(s.selector.as_ref());
    let clusters = parse(s.cluster_selector.as_ref());
    matches!((machines, clusters), (Some(m), Some(c)) if m.matches(machine) && c.matches(cluster))
}

fn pod_selector(s: &MachineDrainRulePodSelector) -> Option<PodSelector> {
    Some(PodSelector { pods: parse(s.selector.as_ref())?, namespaces: parse(s.namespace_selector.as_ref())? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(name: &str, spec: serde_json::Value) -> MachineDrainRule {
        serde_json::from_value(json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDrainRule",
            "metadata": {"name": name, "namespace": "ns"}, "spec": spec}))
        .expect("rule")
    }

    fn pod(labels: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "apps", "labels": labels}})).expect("pod")
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_pod_label_wins_over_rules() {
        let rules = Rules::for_machine(
            vec![rule("a", json!({"drain": {"behavior": "Drain", "order": 5}}))],
            &labels(&[]),
            &labels(&[]),
        );
        let none = labels(&[]);
        assert_eq!(rules.behavior(&pod(json!({"cluster.x-k8s.io/drain": "Skip"})), &none), Behavior::Skip);
        assert_eq!(
            rules.behavior(&pod(json!({"cluster.x-k8s.io/drain": "wait-completed"})), &none),
            Behavior::WaitCompleted
        );
        assert_eq!(
            rules.behavior(&pod(json!({"cluster.x-k8s.io/drain": "WaitCompleted"})), &none),
            Behavior::WaitCompleted
        );
        // An unknown value leaves the pod to the rules.
        assert_eq!(
            rules.behavior(&pod(json!({"cluster.x-k8s.io/drain": "later"})), &none),
            Behavior::Drain { order: 5 }
        );
        assert_eq!(Rules::default().behavior(&pod(json!({})), &none), Behavior::Drain { order: 0 });
    }

    #[test]
    fn rules_select_machines_and_pods_and_the_first_by_name_wins() {
        let all = vec![
            // Listed out of order: "b-wait" comes before "c-skip" by name.
            rule(
                "c-skip",
                json!({"drain": {"behavior": "Skip"}, "pods": [{"selector": {"matchLabels": {"app": "db"}}}]}),
            ),
            rule(
                "b-wait",
                json!({"drain": {"behavior": "WaitCompleted"},
                "pods": [{"selector": {"matchLabels": {"app": "db"}}, "namespaceSelector": {"matchLabels": {"tier": "data"}}}]}),
            ),
            rule(
                "a-other-machines",
                json!({"drain": {"behavior": "Skip"},
                "machines": [{"selector": {"matchLabels": {"pool": "gpu"}}}]}),
            ),
            rule(
                "d-late",
                json!({"drain": {"behavior": "Drain", "order": 10},
                "machines": [{"selector": {"matchLabels": {"pool": "cpu"}}, "clusterSelector": {"matchLabels": {"env": "prod"}}}],
                "pods": [{"selector": {"matchLabels": {"app": "web"}}}]}),
            ),
        ];
        let rules = Rules::for_machine(all, &labels(&[("pool", "cpu")]), &labels(&[("env", "prod")]));
        assert!(rules.needs_namespaces());
        let data = labels(&[("tier", "data")]);
        let plain = labels(&[]);
        let db = pod(json!({"app": "db"}));
        assert_eq!(rules.behavior(&db, &data), Behavior::WaitCompleted);
        assert_eq!(rules.behavior(&db, &plain), Behavior::Skip, "namespace selector unmatched: the next rule");
        assert_eq!(rules.behavior(&pod(json!({"app": "web"})), &plain), Behavior::Drain { order: 10 });
        assert_eq!(rules.behavior(&pod(json!({"app": "cache"})), &plain), Behavior::Drain { order: 0 });

        // In another Cluster the last rule does not apply; on a gpu Machine the first one skips all.
        let rules = Rules::for_machine(
            vec![rule(
                "d-late",
                json!({"drain": {"behavior": "Drain", "order": 10},
                "machines": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}),
            )],
            &labels(&[]),
            &labels(&[("env", "dev")]),
        );
        assert_eq!(rules.behavior(&pod(json!({"app": "web"})), &plain), Behavior::Drain { order: 0 });
        assert!(!rules.needs_namespaces());
        let rules = Rules::for_machine(
            vec![rule(
                "a",
                json!({"drain": {"behavior": "Skip"}, "machines": [{"selector": {"matchLabels": {"pool": "gpu"}}}]}),
            )],
            &labels(&[("pool", "gpu")]),
            &labels(&[]),
        );
        assert_eq!(rules.behavior(&pod(json!({"app": "x"})), &plain), Behavior::Skip);
    }
}
