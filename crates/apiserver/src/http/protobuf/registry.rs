//! Which protobuf message encodes which (apiVersion, kind): every top-level message of the
//! Kubernetes 1.33 API packages, keyed by the group/version its package serves. Built once,
//! on the first protobuf request.

use std::collections::HashMap;
use std::sync::LazyLock;

use protobuf::Message as _;
use protobuf::descriptor::FileDescriptorSet;
use protobuf::reflect::{FileDescriptor, MessageDescriptor};

/// apiVersion -> kind -> message.
type Table = HashMap<String, HashMap<String, MessageDescriptor>>;

static TABLE: LazyLock<Table> = LazyLock::new(build);

/// The group of each API package directory (the proto packages are named after the Go
/// directories, not the API groups).
const GROUPS: &[(&str, &str)] = &[
    ("admission", "admission.k8s.io"),
    ("admissionregistration", "admissionregistration.k8s.io"),
    ("apidiscovery", "apidiscovery.k8s.io"),
    ("apiextensions", "apiextensions.k8s.io"),
    ("apiregistration", "apiregistration.k8s.io"),
    ("apiserverinternal", "internal.apiserver.k8s.io"),
    ("apps", "apps"),
    ("authentication", "authentication.k8s.io"),
    ("authorization", "authorization.k8s.io"),
    ("autoscaling", "autoscaling"),
    ("batch", "batch"),
    ("certificates", "certificates.k8s.io"),
    ("coordination", "coordination.k8s.io"),
    ("core", ""),
    ("custom_metrics", "custom.metrics.k8s.io"),
    ("discovery", "discovery.k8s.io"),
    ("events", "events.k8s.io"),
    ("extensions", "extensions"),
    ("external_metrics", "external.metrics.k8s.io"),
    ("flowcontrol", "flowcontrol.apiserver.k8s.io"),
    ("imagepolicy", "imagepolicy.k8s.io"),
    ("meta", "meta.k8s.io"),
    ("metrics", "metrics.k8s.io"),
    ("networking", "networking.k8s.io"),
    ("node", "node.k8s.io"),
    ("policy", "policy"),
    ("rbac", "rbac.authorization.k8s.io"),
    ("resource", "resource.k8s.io"),
    ("scheduling", "scheduling.k8s.io"),
    ("storage", "storage.k8s.io"),
    ("storagemigration", "storagemigration.k8s.io"),
];

/// The descriptor set compiled by build.rs from the Kubernetes 1.33 .proto files.
static DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kubernetes-1.33.fds"));

fn files() -> Vec<FileDescriptor> {
    let built =
        FileDescriptorSet::parse_from_bytes(DESCRIPTORS).and_then(|set| FileDescriptor::new_dynamic_fds(set.file, &[]));
    match built {
        Ok(files) => files,
        Err(e) => {
            // Built at compile time, so only a broken build gets here; every kind then answers JSON.
            tracing::error!("the embedded protobuf descriptors do not load: {e}");
            Vec::new()
        }
    }
}

/// The apiVersion a package serves: `api.apps.v1` -> `apps/v1`, `api.core.v1` -> `v1`.
fn api_version(package: &str) -> Option<String> {
    let mut segments = package.rsplit('.');
    let version = segments.next()?;
    let dir = segments.next()?;
    let group = GROUPS.iter().find(|(d, _)| *d == dir)?.1;
    Some(if group.is_empty() { version.to_string() } else { format!("{group}/{version}") })
}

fn build() -> Table {
    let mut table = Table::new();
    for file in files() {
        let Some(av) = api_version(file.package()) else { continue };
        let kinds = table.entry(av).or_default();
        for m in file.messages() {
            kinds.insert(m.name().to_string(), m);
        }
    }
    // meta/v1 kinds (Status, DeleteOptions, WatchEvent...) are served by every group version;
    // errors name Status "v1".
    if let Some(meta) = table.get("meta.k8s.io/v1").cloned() {
        for (av, kinds) in &mut table {
            if av.as_str() != "meta.k8s.io/v1" {
                for (kind, m) in &meta {
                    kinds.entry(kind.clone()).or_insert_with(|| m.clone());
                }
            }
        }
    }
    table
}

/// The message of (apiVersion, kind), if Kubernetes defines one.
pub fn message(api_version: &str, kind: &str) -> Option<&'static MessageDescriptor> {
    TABLE.get(api_version)?.get(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_package_maps_to_a_group_version() {
        let files = files();
        assert!(files.len() > 60, "{} descriptor files", files.len());
        for file in files.iter().filter(|f| f.package().starts_with("api.")) {
            assert!(api_version(file.package()).is_some(), "{} has no group", file.package());
        }
        assert_eq!(message("v1", "ConfigMap").map(|m| m.full_name()), Some("api.core.v1.ConfigMap"));
        assert_eq!(message("apps/v1", "DeploymentList").map(|m| m.full_name()), Some("api.apps.v1.DeploymentList"));
        assert!(message("rbac.authorization.k8s.io/v1", "ClusterRole").is_some());
        assert_eq!(message("v1", "Status").map(|m| m.full_name()), Some("apimachinery.pkg.apis.meta.v1.Status"));
        assert!(message("cluster.x-k8s.io/v1beta1", "Cluster").is_none());
    }
}
