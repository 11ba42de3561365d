//! What applying a topology would do, computed as the controller computes it but written
//! nowhere: each object the plan creates, changes or deletes, in the order the controller
//! applies them, and the order in which an upgrade moves the parts (`drydock topology plan`).

use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass};
use kube::ResourceExt;
use serde::Serialize;
use serde_json::Value;

use super::blueprint::{self, Blueprint, Current, Listed};
use super::desired::{self, Plan, contains};
use super::external::Extensions;
use super::upgrade::{self, ControlPlaneState};
use crate::framework::Result;
use crate::runtime_sdk::Registry;

/// What would happen to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    Create,
    Update,
    Unchanged,
    Delete,
    /// Not created yet: it waits for the control plane.
    Wait,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Unchanged => "unchanged",
            Self::Delete => "delete",
            Self::Wait => "wait",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub action: Action,
    pub kind: String,
    pub name: String,
    /// The fields that change (`spec.version: v1.33.0 -> v1.34.0`), or why it waits.
    pub detail: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Preview {
    /// In the order the controller applies them.
    pub steps: Vec<Step>,
    /// The upgrade, part by part, in the order the parts move.
    pub upgrade: Vec<String>,
}

/// Plans `cluster` (as it would be admitted) against what exists now; `overlay` holds
/// templates given beside a class not applied yet.
pub async fn preview(
    client: &kube::Client,
    cluster: &Cluster,
    class: &ClusterClass,
    overlay: &[Value],
) -> Result<Preview> {
    let mut bp = Blueprint::load(client, class, cluster, overlay).await?;
    let listed = Listed::fetch(client, cluster).await?;
    let current = Current::load(client, cluster, &bp, &listed).await?;
    let registry =
        if super::external::calls_extensions(class) { Registry::list(client).await? } else { Registry::default() };
    let ext = Extensions::load(client, registry, class, &cluster.namespace().unwrap_or_default()).await;
    super::upgrade_plan::apply(&mut bp, cluster, &current, &ext).await?;
    let plan = desired::plan(cluster, &bp, &current, &ext).await?;
    let mut steps = Vec::new();
    for obj in [Some(&plan.infrastructure), plan.control_plane_machine.as_ref(), Some(&plan.control_plane)]
        .into_iter()
        .chain([plan.control_plane_health_check.as_ref()])
        .flatten()
    {
        steps.push(step(client, obj, false).await?);
    }
    for d in &plan.deployments {
        for obj in [Some(&d.bootstrap), Some(&d.infrastructure), Some(&d.object), d.health_check.as_ref()]
            .into_iter()
            .flatten()
        {
            steps.push(step(client, obj, d.pending_create).await?);
        }
    }
    for p in &plan.pools {
        for obj in [&p.bootstrap, &p.infrastructure, &p.object] {
            steps.push(step(client, obj, p.pending_create).await?);
        }
    }
    let gone_deployments = current
        .deployments
        .iter()
        .filter(|(name, _)| !plan.deployments.iter().any(|p| &p.topology_name == *name))
        .map(|(name, d)| ("MachineDeployment", name, &d.object.metadata));
    let gone_pools = current
        .pools
        .iter()
        .filter(|(name, _)| !plan.pools.iter().any(|p| &p.topology_name == *name))
        .map(|(name, p)| ("MachinePool", name, &p.object.metadata));
    for (kind, name, meta) in gone_deployments.chain(gone_pools) {
        steps.push(Step {
            action: Action::Delete,
            kind: kind.into(),
            name: meta.name.clone().unwrap_or_default(),
            detail: format!("{name} is no longer in the topology"),
        });
    }
    Ok(Preview { steps, upgrade: upgrade_order(cluster, &bp, &current, &plan) })
}

async fn step(client: &kube::Client, obj: &Value, pending: bool) -> Result<Step> {
    let meta = &obj["metadata"];
    let (kind, name) =
        (obj["kind"].as_str().unwrap_or_default().to_string(), meta["name"].as_str().unwrap_or_default().to_string());
    let ns = meta["namespace"].as_str().unwrap_or_default();
    let existing = blueprint::get(client, ns, obj["apiVersion"].as_str().unwrap_or_default(), &kind, &name).await?;
    let Some(have) = existing else {
        if pending {
            let detail = "created once the control plane is initialized at the topology's version".to_string();
            return Ok(Step { action: Action::Wait, kind, name, detail });
        }
        let detail = meta["annotations"][drydock_api::capi::keys::CLONED_FROM_NAME_ANNOTATION]
            .as_str()
            .map(|t| format!("copy of {t}"))
            .unwrap_or_default();
        return Ok(Step { action: Action::Create, kind, name, detail });
    };
    let mut changes = Vec::new();
    for part in ["spec", "metadata"] {
        let want = if part == "metadata" {
            serde_json::json!({"labels": meta["labels"], "annotations": meta["annotations"]})
        } else {
            obj[part].clone()
        };
        differences(&have[part], &desired::prune(want), part, &mut changes);
    }
    let action = if changes.is_empty() { Action::Unchanged } else { Action::Update };
    Ok(Step { action, kind, name, detail: changes.join("; ") })
}

/// The leaves of `want` that `have` does not hold, as `path: old -> new`.
fn differences(have: &Value, want: &Value, path: &str, out: &mut Vec<String>) {
    if contains(have, want) {
        return;
    }
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => {
            for (k, wv) in w {
                differences(h.get(k).unwrap_or(&Value::Null), wv, &format!("{path}.{k}"), out);
            }
        }
        _ => {
            let show = |v: &Value| match v {
                Value::Null => "(none)".to_string(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push(format!("{path}: {} -> {}", show(have), show(want)));
        }
    }
}

/// The control plane's steps to the topology's version, then each MachineDeployment's and
/// each MachinePool's.
fn upgrade_order(cluster: &Cluster, bp: &Blueprint, current: &Current, plan: &Plan) -> Vec<String> {
    let Some(target) = cluster.spec.topology.as_ref().map(|t| t.version.clone()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let cp = ControlPlaneState::of(current.control_plane.as_ref());
    if let Some(from) = cp.spec_version.clone().filter(|v| *v != target) {
        let mut path = vec![from.clone()];
        let mut at = from;
        while at != target && path.len() < 16 {
            at = upgrade::next_step(&bp.class, &at, &target);
            path.push(at.clone());
        }
        out.push(format!("control plane: {}", path.join(" -> ")));
    }
    let deployments = plan.deployments.iter().filter_map(|d| {
        let now = current.deployments.get(&d.topology_name)?;
        Some(("MachineDeployment", &d.topology_name, now.object.spec.template.spec.version.as_deref()))
    });
    let pools = plan.pools.iter().filter_map(|p| {
        let now = current.pools.get(&p.topology_name)?;
        Some(("MachinePool", &p.topology_name, now.object.spec.template.spec.version.as_deref()))
    });
    for (kind, name, from) in deployments.chain(pools) {
        let from = from.unwrap_or_default();
        if from != target {
            out.push(format!("{kind} {name}: {from} -> {target}, once the control plane is at {target}"));
        }
    }
    out
}
