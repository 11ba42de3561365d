//! Resolving what users type (`machines`, `md`, `machinedeployment/foo`, `kcp`) to API
//! resources through discovery, as kubectl does.

use anyhow::bail;
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{ApiCapabilities, Discovery, Scope};

/// A resolved resource type.
pub struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
}

/// Looks `name` up by plural, singular, kind or short name (case-insensitive).
pub async fn resolve(client: &kube::Client, name: &str, server: &str) -> anyhow::Result<Resolved> {
    let discovery =
        Discovery::new(client.clone()).run_aggregated().await.map_err(|e| super::connect::explain(e, server))?;
    let want = name.to_ascii_lowercase();
    let want = want.split('.').next().unwrap_or_default().to_string();
    for group in discovery.groups() {
        // As kubectl: the group's preferred version, then for kinds it does not serve (the
        // in-memory kinds beside the Dev kinds in one group) their most stable version.
        let preferred = group.recommended_resources();
        for (ar, caps) in preferred.into_iter().chain(group.resources_by_stability()) {
            if matches(&ar, &caps, &want) {
                return Ok(Resolved { namespaced: caps.scope == Scope::Namespaced, resource: ar });
            }
        }
    }
    bail!("the server doesn't have a resource type \"{name}\" (try `drydock get crds` or `kubectl api-resources`)")
}

/// Looks up the resource serving exactly `gvk` (what a manifest's apiVersion and kind name).
pub async fn resolve_gvk(client: &kube::Client, gvk: &GroupVersionKind, server: &str) -> anyhow::Result<Resolved> {
    let discovery = Discovery::new(client.clone())
        .filter(&[gvk.group.as_str()])
        .run_aggregated()
        .await
        .map_err(|e| super::connect::explain(e, server))?;
    match discovery.resolve_gvk(gvk) {
        Some((resource, caps)) => Ok(Resolved { namespaced: caps.scope == Scope::Namespaced, resource }),
        None => bail!(
            "no matches for kind \"{}\" in version \"{}\" (is its CRD installed?)",
            gvk.kind,
            if gvk.group.is_empty() { gvk.version.clone() } else { format!("{}/{}", gvk.group, gvk.version) }
        ),
    }
}

fn matches(ar: &ApiResource, _caps: &ApiCapabilities, want: &str) -> bool {
    ar.plural == want || ar.kind.to_ascii_lowercase() == want || short_names(&ar.kind).contains(&want)
}

/// Short names of the kinds drydock users type most (as upstream's CRDs declare them).
fn short_names(kind: &str) -> Vec<&'static str> {
    match kind {
        "MachineDeployment" => vec!["md"],
        "MachineSet" => vec!["ms"],
        "Machine" => vec!["ma"],
        "Cluster" => vec!["cl"],
        "MachineHealthCheck" => vec!["mhc", "mhcs"],
        "KubeadmControlPlane" => vec!["kcp"],
        "ConfigMap" => vec!["cm"],
        "Namespace" => vec!["ns"],
        "Node" => vec!["no"],
        "Pod" => vec!["po"],
        "CustomResourceDefinition" => vec!["crd", "crds"],
        "LogicalCluster" => vec!["lc"],
        _ => vec![],
    }
}

/// The GVK of an object in a manifest.
pub fn gvk_of(obj: &serde_json::Value) -> anyhow::Result<GroupVersionKind> {
    let av = obj["apiVersion"].as_str().unwrap_or_default();
    let kind = obj["kind"].as_str().unwrap_or_default();
    if av.is_empty() || kind.is_empty() {
        bail!("object has no apiVersion or kind");
    }
    let (g, v) = av.split_once('/').unwrap_or(("", av));
    Ok(GroupVersionKind::gvk(g, v, kind))
}
