//! The Cluster API contract labels on provider CRDs: `cluster.x-k8s.io/<contract>: <versions
//! joined by _>`. A v1beta2 reference names only a kind's API group; the version to use is
//! the newest one the label of the newest contract the CRD implements lists.

use std::collections::BTreeMap;

/// The contract labels, newest contract first.
pub const CONTRACT_LABELS: [&str; 2] = ["cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1"];

/// The version the contract labels name: the last version listed by the newest contract's
/// label. `None` when the CRD implements no contract drydock knows.
pub fn version_from_labels(labels: &BTreeMap<String, String>) -> Option<&str> {
    CONTRACT_LABELS.iter().find_map(|l| labels.get(*l)?.split('_').rfind(|v| !v.is_empty()))
}

/// The resource name of a kind by the Kubernetes convention (lower case, English plural),
/// as a CRD's `names.plural` is conventionally chosen.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('y') && !lower.ends_with("ey") {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if lower.ends_with('s') || lower.ends_with("sh") || lower.ends_with("ch") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

/// The name of the CRD that serves `kind` in `group` (`<plural>.<group>`).
pub fn crd_name(group: &str, kind: &str) -> String {
    format!("{}.{group}", plural(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_newest_contract_and_its_last_version_win() {
        let both = labels(&[("cluster.x-k8s.io/v1beta1", "v1alpha4_v1beta1"), ("cluster.x-k8s.io/v1beta2", "v1beta2")]);
        assert_eq!(version_from_labels(&both), Some("v1beta2"));
        let old = labels(&[("cluster.x-k8s.io/v1beta1", "v1alpha3_v1alpha4")]);
        assert_eq!(version_from_labels(&old), Some("v1alpha4"));
        assert_eq!(version_from_labels(&labels(&[("app", "x")])), None);
        assert_eq!(version_from_labels(&labels(&[("cluster.x-k8s.io/v1beta2", "")])), None);
    }

    #[test]
    fn crd_names_follow_the_plural_convention() {
        assert_eq!(
            crd_name("infrastructure.cluster.x-k8s.io", "InMemoryMachine"),
            "inmemorymachines.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(
            crd_name("bootstrap.cluster.x-k8s.io", "KubeadmConfig"),
            "kubeadmconfigs.bootstrap.cluster.x-k8s.io"
        );
        assert_eq!(plural("Policy"), "policies");
        assert_eq!(plural("Address"), "addresses");
        assert_eq!(plural("Key"), "keys");
    }
}
