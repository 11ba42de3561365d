//! The topology's MachineDeployments: which exist and which version each runs
//! ([`decide`]), the variables their templates see, and the objects applied for each (the
//! MachineDeployment, its two templates and its MachineHealthCheck).

use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::MachineDeploymentTopology;
use drydock_api::capi::keys::CONTROL_PLANE_LABEL;
use serde_json::{Map, Value, json};

use super::blueprint::{Blueprint, Current, DeploymentClass};
use super::desired::{Common, class_of, cloned, deployment_selector, keep_or_rotate, merged, prune};
use super::upgrade::{self, ControlPlaneState, DEFER_UPGRADE_ANNOTATION, HOLD_UPGRADE_SEQUENCE_ANNOTATION};
use super::{DEPLOYMENT_NAME_LABEL, OWNED_LABEL, variables};
use crate::framework::Result;

/// What is decided for one topology MachineDeployment before the patches run.
pub struct Names<'a> {
    pub topology: &'a MachineDeploymentTopology,
    pub class: &'a DeploymentClass,
    pub name: String,
    pub version: String,
    pub bootstrap_name: String,
    pub infrastructure_name: String,
    /// Not created yet: it waits for the control plane.
    pub pending_create: bool,
    /// Behind the topology's version and deferred or held there.
    pub held: bool,
}

/// One MachineDeployment's objects.
pub struct DeploymentPlan {
    pub topology_name: String,
    pub object: Value,
    pub bootstrap: Value,
    pub infrastructure: Value,
    pub health_check: Option<Value>,
    pub pending_create: bool,
}

/// Names and versions of the topology's MachineDeployments, in topology order. New ones
/// wait for an initialized control plane at the topology's version; existing ones move
/// to the topology's version once the control plane is settled there, no more at once
/// than the upgrade concurrency, skipping deferred ones and stopping at a held one.
pub fn decide<'a>(
    common: &Common<'a>,
    bp: &'a Blueprint,
    current: &Current,
    cp: &ControlPlaneState,
) -> Result<Vec<Names<'a>>> {
    let target = common.topology.version.as_str();
    let limit = upgrade::concurrency(common.cluster);
    let mut upgrading = current
        .deployments
        .values()
        .filter(|d| d.object.spec.template.spec.version.as_deref() == Some(target) && d.upgrading)
        .count();
    let mut holding = false;
    let mut out = Vec::new();
    for md in common.topology.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()) {
        let class = class_of(bp, md)?;
        let annotations = md.metadata.as_ref().and_then(|m| m.annotations.as_ref());
        let has = |a: &str| annotations.is_some_and(|m| m.contains_key(a));
        holding |= has(HOLD_UPGRADE_SEQUENCE_ANNOTATION);
        let deferred = has(DEFER_UPGRADE_ANNOTATION);
        let names = match current.deployments.get(&md.name) {
            None => Names {
                topology: md,
                class,
                name: common.object_name(class.class.naming.as_ref(), Some(&md.name))?,
                version: target.to_string(),
                bootstrap_name: common.new_name(Some(&md.name)),
                infrastructure_name: common.new_name(Some(&md.name)),
                pending_create: !(cp.initialized && cp.spec_version.as_deref() == Some(target)),
                held: false,
            },
            Some(d) => {
                let spec = &d.object.spec.template.spec;
                let now = spec.version.clone().unwrap_or_else(|| target.to_string());
                let held = now != target && (deferred || holding);
                let version = if now != target && !held && cp.stable_at(target) && upgrading < limit {
                    upgrading += 1;
                    target.to_string()
                } else {
                    now
                };
                Names {
                    topology: md,
                    class,
                    name: d.object.metadata.name.clone().unwrap_or_default(),
                    version,
                    bootstrap_name: spec.bootstrap.config_ref.as_ref().map(|r| r.name.clone()).unwrap_or_default(),
                    infrastructure_name: spec.infrastructure_ref.name.clone(),
                    pending_create: false,
                    held,
                }
            }
        };
        out.push(names);
    }
    Ok(out)
}

/// The variables a MachineDeployment's templates see: the Cluster's values with its
/// overrides, and `builtin.cluster` and `builtin.machineDeployment`.
pub fn variables(user: &Map<String, Value>, builtin_cluster: &Value, n: &Names<'_>) -> Map<String, Value> {
    let overrides = n.topology.variables.as_ref().and_then(|v| v.overrides.as_deref()).unwrap_or_default();
    let mut vars = variables::with_overrides(user, overrides);
    let md = prune(json!({
        "version": n.version,
        "class": n.topology.class,
        "name": n.name,
        "topologyName": n.topology.name,
        "replicas": n.topology.replicas,
        "metadata": n.topology.metadata,
        "bootstrap": {"configRef": {"name": n.bootstrap_name}},
        "infrastructureRef": {"name": n.infrastructure_name},
    }));
    vars.insert("builtin".into(), json!({"cluster": builtin_cluster, "machineDeployment": md}));
    vars
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
    let selector = deployment_selector(common, md);
    let mut labels = merged(
        class.metadata.as_ref().and_then(|m| m.labels.as_ref()),
        md.metadata.as_ref().and_then(|m| m.labels.as_ref()),
    );
    labels.extend(selector.clone());
    let mut annotations = merged(
        class.metadata.as_ref().and_then(|m| m.annotations.as_ref()),
        md.metadata.as_ref().and_then(|m| m.annotations.as_ref()),
    );
    annotations.remove(DEFER_UPGRADE_ANNOTATION);
    annotations.remove(HOLD_UPGRADE_SEQUENCE_ANNOTATION);
    let annotations = (!annotations.is_empty()).then_some(annotations);
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
    let ref_of = |t: &Value, group: &str| json!({"apiGroup": group, "kind": t["kind"], "name": t["metadata"]["name"]});
    prune(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineDeployment",
        "metadata": {
            "name": n.name,
            "namespace": common.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [common.plain_owner],
        },
        "spec": {
            "clusterName": common.name(),
            "replicas": md.replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": {
                    "clusterName": common.name(),
                    "version": n.version,
                    "bootstrap": {"configRef": ref_of(bootstrap, n.class.bootstrap.group())},
                    "infrastructureRef": ref_of(infrastructure, n.class.infrastructure.group()),
                    "failureDomain": md.failure_domain.as_ref().or(class.failure_domain.as_ref()),
                    "minReadySeconds": md.min_ready_seconds.or(class.min_ready_seconds),
                    "readinessGates": md.readiness_gates.as_ref().or(class.readiness_gates.as_ref()),
                    "deletion": timeouts,
                    "taints": md.taints.as_ref().or(class.taints.as_ref()),
                },
            },
            "rollout": {
                "after": md.rollout.as_ref().and_then(|r| r.after.as_ref()),
                "strategy": strategy,
            },
            "deletion": {"order": deletion.and_then(|d| d.order.as_ref())},
            "remediation": {"maxInFlight": remediation.and_then(|r| r.max_in_flight.as_ref())},
        },
    }))
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
