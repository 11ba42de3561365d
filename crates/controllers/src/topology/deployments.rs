//! The topology's MachineDeployments: the objects applied for each (the MachineDeployment, its two
//! templates and its MachineHealthCheck).

use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::{MachineDeploymentClass, MachineDeploymentTopology};
use drydock_api::capi::keys::CONTROL_PLANE_LABEL;
use serde_json::{Value, json};

use super::blueprint::{Blueprint, Current};
use super::desired::{Common, cloned, keep_or_rotate, prune};
use super::workers;
use super::{DEPLOYMENT_NAME_LABEL, OWNED_LABEL};

/// What is decided for one topology MachineDeployment before the patches run.
pub type Names<'a> = workers::Names<'a, MachineDeploymentTopology, MachineDeploymentClass>;

/// One MachineDeployment's objects.
pub struct DeploymentPlan {
    pub topology_name: String,
    pub object: Value,
    pub bootstrap: Value,
    pub infrastructure: Value,
    pub health_check: Option<Value>,
    pub pending_create: bool,
}

/// The objects of one MachineDeployment, from its patched templates.
pub fn deployment(
    common: &Common<'_>,
    n: &Names<'_>,
    current: &Current,
    bootstrap: &Value,
    infra: &Value,
) -> DeploymentPlan {
    let md = n.topology;
    let existing = current.deployments.get(&md.name);
    let new_name = || common.new_name(Some(&md.name));
    let bootstrap_name =
        keep_or_rotate(existing.and_then(|d| d.bootstrap.as_ref()), bootstrap, n.bootstrap_name.clone(), new_name);
    let infra_name = keep_or_rotate(
        existing.and_then(|d| d.infrastructure.as_ref()),
        infra,
        n.infrastructure_name.clone(),
        new_name,
    );
    let part = BTreeMap::from([(DEPLOYMENT_NAME_LABEL.to_string(), md.name.clone())]);
    let bootstrap = cloned(common, &n.class.bootstrap, bootstrap, &bootstrap_name, part.clone());
    let infrastructure = cloned(common, &n.class.infrastructure, infra, &infra_name, part);

    let object = deployment_object(common, n, &bootstrap, &infrastructure);
    let health_check = deployment_health_check(common, n);
    DeploymentPlan {
        topology_name: md.name.clone(),
        object,
        bootstrap,
        infrastructure,
        health_check,
        pending_create: n.pending_create,
    }
}

/// The MachineDeployment itself: the class's settings with the topology's over them, and
/// the selector labels on it and its Machines.
fn deployment_object(common: &Common<'_>, n: &Names<'_>, bootstrap: &Value, infrastructure: &Value) -> Value {
    let md = n.topology;
    let class = &n.class.class;
    let selector = workers::own_labels::<MachineDeploymentTopology>(common, &md.name);
    let class_deletion = class.deletion.as_ref();
    let deletion = md.deletion.as_ref().or(class_deletion);
    let timeouts = deletion.map(|d| {
        json!({
            "nodeDrainTimeoutSeconds": d.node_drain_timeout_seconds,
            "nodeVolumeDetachTimeoutSeconds": d.node_volume_detach_timeout_seconds,
            "nodeDeletionTimeoutSeconds": d.node_deletion_timeout_seconds,
        })
    });
    let strategy = md
        .rollout
        .as_ref()
        .and_then(|r| r.strategy.as_ref())
        .or_else(|| class.rollout.as_ref().and_then(|r| r.strategy.as_ref()));
    let remediation = md
        .health_check
        .as_ref()
        .and_then(|h| h.remediation.as_ref())
        .or_else(|| class.health_check.as_ref().and_then(|h| h.remediation.as_ref()));
    let spec = json!({
        "selector": {"matchLabels": selector},
        "rollout": {
            "after": md.rollout.as_ref().and_then(|r| r.after.as_ref()),
            "strategy": strategy,
        },
        "deletion": {"order": deletion.and_then(|d| d.order.as_ref())},
        "remediation": {"maxInFlight": remediation.and_then(|r| r.max_in_flight.as_ref())},
    });
    let machine = json!({
        "failureDomain": md.failure_domain.as_ref().or(class.failure_domain.as_ref()),
        "minReadySeconds": md.min_ready_seconds.or(class.min_ready_seconds),
        "readinessGates": md.readiness_gates.as_ref().or(class.readiness_gates.as_ref()),
        "deletion": timeouts,
        "taints": md.taints.as_ref().or(class.taints.as_ref()),
    });
    workers::object(common, n, [bootstrap, infrastructure], spec, machine)
}

/// A topology's health check (enabled unless it says otherwise) replaces the class's whole.
fn deployment_health_check(common: &Common<'_>, n: &Names<'_>) -> Option<Value> {
    let topology = n.topology.health_check.as_ref();
    if topology.and_then(|h| h.enabled) == Some(false) {
        return None;
    }
    let (checks, remediation) = match topology.filter(|h| h.checks.is_some() || h.remediation.is_some()) {
        Some(h) => (
            json!(h.checks),
            h.remediation.as_ref().map(|r| json!({"triggerIf": r.trigger_if, "templateRef": r.template_ref})),
        ),
        None => {
            let h = n.class.class.health_check.as_ref()?;
            (
                json!(h.checks),
                h.remediation.as_ref().map(|r| json!({"triggerIf": r.trigger_if, "templateRef": r.template_ref})),
            )
        }
    };
    let selector = BTreeMap::from([
        (OWNED_LABEL.to_string(), String::new()),
        (DEPLOYMENT_NAME_LABEL.to_string(), n.topology.name.clone()),
    ]);
    Some(health_check(common, &n.name, selector, checks, remediation))
}

/// The control plane's health check, from the topology or the class.
pub fn control_plane_health_check(common: &Common<'_>, bp: &Blueprint, name: &str) -> Option<Value> {
    let topology = common.topology.control_plane.as_ref().and_then(|c| c.health_check.as_ref());
    if topology.and_then(|h| h.enabled) == Some(false) {
        return None;
    }
    let (checks, remediation) = match topology.filter(|h| h.checks.is_some() || h.remediation.is_some()) {
        Some(h) => (json!(h.checks), json!(h.remediation)),
        None => {
            let h = bp.class.spec.control_plane.health_check.as_ref()?;
            (json!(h.checks), json!(h.remediation))
        }
    };
    let selector =
        BTreeMap::from([(OWNED_LABEL.to_string(), String::new()), (CONTROL_PLANE_LABEL.to_string(), String::new())]);
    Some(health_check(common, name, selector, checks, Some(remediation)))
}

fn health_check(
    common: &Common<'_>,
    name: &str,
    selector: BTreeMap<String, String>,
    checks: Value,
    remediation: Option<Value>,
) -> Value {
    prune(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineHealthCheck",
        "metadata": {
            "name": name,
            "namespace": common.namespace,
            "labels": common.owned_labels(),
            "ownerReferences": [common.plain_owner],
        },
        "spec": {
            "clusterName": common.name(),
            "selector": {"matchLabels": selector},
            "checks": checks,
            "remediation": remediation,
        },
    }))
}
