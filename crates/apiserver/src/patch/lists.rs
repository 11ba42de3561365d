//! How each list field of the built-in kinds merges under strategic merge patch: the
//! `patchStrategy` and `patchMergeKey` of the Kubernetes 1.33 types, as a table of path
//! suffixes (list indices elided), so a pod spec's lists merge the same way inside a Pod,
//! a Deployment's template or a CronJob's job template.

/// How a list merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListStrategy {
    /// Atomic: the patch's list replaces the object's.
    Replace,
    /// A set of primitives: union.
    Primitives,
    /// Objects merged by the named key.
    ByKey(&'static str),
}

use ListStrategy::{ByKey, Primitives};

/// Lists whose merge depends on the kind ("" for any kind), matched on the end of the path.
/// Kind-specific rows come first.
const LISTS: &[(&str, &str, ListStrategy)] = &[
    ("Service", "spec.ports", ByKey("port")),
    ("ServiceAccount", "secrets", ByKey("name")),
    ("Node", "spec.taints", ByKey("key")),
    ("Node", "spec.podCIDRs", Primitives),
    ("Node", "status.addresses", ByKey("type")),
    ("", "metadata.finalizers", Primitives),
    ("", "metadata.ownerReferences", ByKey("uid")),
    ("", "status.conditions", ByKey("type")),
    ("", "status.podIPs", ByKey("ip")),
    ("", "status.hostIPs", ByKey("ip")),
    ("", "status.containerStatuses", ByKey("name")),
    ("", "status.initContainerStatuses", ByKey("name")),
    // Pod specs, wherever they are embedded.
    ("", "spec.containers", ByKey("name")),
    ("", "spec.initContainers", ByKey("name")),
    ("", "spec.ephemeralContainers", ByKey("name")),
    ("", "spec.volumes", ByKey("name")),
    ("", "spec.imagePullSecrets", ByKey("name")),
    ("", "spec.hostAliases", ByKey("ip")),
    ("", "spec.topologySpreadConstraints", ByKey("topologyKey")),
    ("", "spec.schedulingGates", ByKey("name")),
    ("", "spec.resourceClaims", ByKey("name")),
    ("", "Containers.ports", ByKey("containerPort")),
    ("", "Containers.env", ByKey("name")),
    ("", "Containers.volumeMounts", ByKey("mountPath")),
    ("", "Containers.volumeDevices", ByKey("devicePath")),
];

/// The container lists of a pod spec, which `Containers` in [`LISTS`] stands for.
const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

/// Whether dotted `path` ends with the segments of `suffix`.
fn ends_with(path: &str, suffix: &str) -> bool {
    path == suffix || path.strip_suffix(suffix).is_some_and(|head| head.ends_with('.'))
}

fn matches(path: &str, suffix: &str) -> bool {
    match suffix.strip_prefix("Containers.") {
        Some(field) => CONTAINER_LISTS.iter().any(|c| {
            path.strip_suffix(field)
                .and_then(|head| head.strip_suffix('.'))
                .is_some_and(|head| ends_with(head, &format!("spec.{c}")))
        }),
        None => ends_with(path, suffix),
    }
}

/// The strategy of the list at `path` in an object of `kind`.
pub(crate) fn list_strategy(kind: &str, path: &str) -> ListStrategy {
    LISTS
        .iter()
        .find(|(k, suffix, _)| (k.is_empty() || *k == kind) && matches(path, suffix))
        .map_or(ListStrategy::Replace, |(_, _, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_by_kind_and_path() {
        assert_eq!(list_strategy("Deployment", "spec.template.spec.containers"), ByKey("name"));
        assert_eq!(list_strategy("CronJob", "spec.jobTemplate.spec.template.spec.containers.env"), ByKey("name"));
        assert_eq!(list_strategy("Pod", "spec.initContainers.ports"), ByKey("containerPort"));
        assert_eq!(list_strategy("Deployment", "spec.template.spec.containers.volumeMounts"), ByKey("mountPath"));
        assert_eq!(list_strategy("Service", "spec.ports"), ByKey("port"));
        assert_eq!(list_strategy("Deployment", "spec.ports"), ListStrategy::Replace);
        assert_eq!(list_strategy("Pod", "spec.tolerations"), ListStrategy::Replace);
        assert_eq!(list_strategy("ConfigMap", "metadata.finalizers"), Primitives);
        assert_eq!(list_strategy("NetworkPolicy", "spec.ingress.ports"), ListStrategy::Replace);
    }
}
