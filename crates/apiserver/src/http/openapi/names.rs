//! How kube-apiserver names things in its OpenAPI documents: schema names from the Go
//! package of built-in kinds and from the reversed group of custom resources, and the
//! operation IDs built from group, version and kind.

/// The name prefix of a group-version's schemas, e.g. `io.k8s.api.apps.v1` or
/// `io.x-k8s.cluster.v1beta1`.
pub fn package(group: &str, version: &str) -> String {
    let pkg = match group {
        "" => "io.k8s.api.core".to_string(),
        "apiextensions.k8s.io" => "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_string(),
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis.apiregistration".to_string(),
        "internal.apiserver.k8s.io" => "io.k8s.api.apiserverinternal".to_string(),
        // Groups without a dot are Kubernetes' own (apps, batch, policy, autoscaling), as
        // are the `*.k8s.io` groups, whose Go package is the first label.
        g if !g.contains('.') => format!("io.k8s.api.{g}"),
        g if g.ends_with(".k8s.io") => {
            format!("io.k8s.api.{}", g.split('.').next().unwrap_or(g))
        }
        g => g.rsplit('.').collect::<Vec<_>>().join("."),
    };
    format!("{pkg}.{version}")
}

/// The schema name of a kind, e.g. `io.k8s.api.apps.v1.Deployment`.
pub fn definition(group: &str, version: &str, kind: &str) -> String {
    format!("{}.{kind}", package(group, version))
}

/// The part of an operation ID naming the group-version, e.g. `AppsV1`, `CoreV1`,
/// `ClusterXK8sIoV1beta1`.
pub fn operation_group(group: &str, version: &str) -> String {
    let group = match group {
        "" => "core",
        g => g.strip_suffix(".k8s.io").unwrap_or(g),
    };
    let mut out: String = group.split(['.', '-']).map(upper_first).collect();
    out.push_str(&upper_first(version));
    out
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// The `$ref` target of a schema in a v3 document.
pub fn ref_v3(name: &str) -> String {
    format!("#/components/schemas/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kube_apiserver() {
        assert_eq!(definition("apps", "v1", "Deployment"), "io.k8s.api.apps.v1.Deployment");
        assert_eq!(definition("", "v1", "ConfigMap"), "io.k8s.api.core.v1.ConfigMap");
        assert_eq!(definition("coordination.k8s.io", "v1", "Lease"), "io.k8s.api.coordination.v1.Lease");
        assert_eq!(
            definition("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
        );
        assert_eq!(definition("cluster.x-k8s.io", "v1beta1", "Cluster"), "io.x-k8s.cluster.v1beta1.Cluster");
        assert_eq!(operation_group("", "v1"), "CoreV1");
        assert_eq!(operation_group("cluster.x-k8s.io", "v1beta1"), "ClusterXK8sIoV1beta1");
        assert_eq!(operation_group("events.k8s.io", "v1"), "EventsV1");
    }
}
