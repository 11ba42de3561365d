//! GenerateUpgradePlan: when the class names an upgrade plan extension, an upgrade of the
//! control plane goes through the versions the extension answers (the newest of each
//! minor, one minor at a time, as through a class's `kubernetesVersions`). The workers
//! follow the control plane to the target as without an extension: a workers' plan in the
//! answer is not used.

use drydock_api::capi::core::v1beta2::Cluster;

use super::blueprint::{Blueprint, Current};
use super::external::Extensions;
use super::upgrade::ControlPlaneState;
use crate::framework::{Error, Result};
use crate::runtime_sdk::wire::{GenerateUpgradePlanRequest, Hook};
use crate::runtime_sdk::{self};

/// Asks the class's upgrade plan extension, if it has one and an upgrade is under way, and
/// makes its control plane steps the versions the blueprint's class lists.
pub async fn apply(bp: &mut Blueprint, cluster: &Cluster, current: &Current, ext: &Extensions) -> Result<()> {
    let external = bp.class.spec.upgrade.as_ref().and_then(|u| u.external.as_ref());
    let Some(handler) = external.and_then(|e| e.generate_upgrade_plan_extension.clone()) else {
        return Ok(());
    };
    let Some(target) = cluster.spec.topology.as_ref().map(|t| t.version.clone()) else {
        return Ok(());
    };
    let cp = ControlPlaneState::of(current.control_plane.as_ref());
    let Some(from) = cp.spec_version.filter(|v| cp.exists && *v != target) else {
        return Ok(());
    };
    let step = || format!("upgrade plan of {handler:?}");
    let resolved = ext.resolve(&handler, Hook::GenerateUpgradePlan).map_err(Error::during(step()))?;
    let request = GenerateUpgradePlanRequest {
        cluster: serde_json::to_value(cluster)?,
        from_control_plane_kubernetes_version: from,
        from_workers_kubernetes_version: String::new(),
        to_kubernetes_version: target.clone(),
    };
    let answer = runtime_sdk::call(&ext.client, &resolved, None, &request).await.map_err(Error::during(step()))?;
    let steps: Vec<String> = answer.control_plane_upgrades.into_iter().map(|s| s.version).collect();
    if steps.last() != Some(&target) {
        let why = format!("the control plane's plan {steps:?} does not end at the target version {target}");
        return Err(Error::during(step())(Error::InvalidSpec(why)));
    }
    bp.class.spec.kubernetes_versions = Some(steps);
    Ok(())
}
