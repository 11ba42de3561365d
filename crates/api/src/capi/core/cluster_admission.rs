//! Cluster admission, on v1beta2 whatever version a client writes: topology version
//! default; name, network, reference, topology and update (references keep their target, no
//! topology removal, one minor at a time) checks.

use std::collections::BTreeSet;

use super::checks::{validate_name_is_label_value, validate_replicas, validate_version};
use super::clusterclass_admission::{settings, validate_rollout_strategy};
use super::healthcheck_checks::validate_health_check_v1beta2;
use super::v1beta2::{Cluster, ClusterNetwork, ClusterVariable, Topology};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::ContractVersionedObjectReference;
use crate::capi::keys::{DISABLE_UPDATE_VERSION_CHECK_ANNOTATION, has_annotation};
use crate::capi::typed::KindAdmission;
use crate::capi::{intstr, refs, version};
use crate::names::dns1123_subdomain_errors;

pub(crate) struct ClusterAdmission;

impl KindAdmission for ClusterAdmission {
    type Object = Cluster;

    fn default(&self, c: &mut Cluster, _old: Option<&Cluster>) -> Result<(), Vec<FieldError>> {
        if let Some(t) = c.spec.topology.as_mut() {
            t.version = version::with_v_prefix(&t.version);
        }
        Ok(())
    }

    fn admit_against(
        &self,
        c: &mut Cluster,
        old: Option<&Cluster>,
        refs: &dyn crate::conversion::RefVersions,
    ) -> Vec<FieldError> {
        super::cluster_topology_admission::admit(c, old, refs)
    }

    fn validate(&self, c: &Cluster, old: Option<&Cluster>) -> Vec<FieldError> {
        let spec = FieldPath::new("spec");
        let mut errs = validate_name_is_label_value(&c.metadata);
        for (field, r) in
            [("infrastructureRef", &c.spec.infrastructure_ref), ("controlPlaneRef", &c.spec.control_plane_ref)]
        {
            errs.extend(r.as_ref().into_iter().flat_map(|r| validate_ref(r, &spec.child(field))));
        }
        if let Some(net) = &c.spec.cluster_network {
            errs.extend(validate_network(net, &spec.child("clusterNetwork")));
        }
        let mut gates = BTreeSet::new();
        for (i, g) in c.spec.availability_gates.iter().flatten().enumerate() {
            if !gates.insert(g.condition_type.as_str()) {
                let p = spec.child("availabilityGates").index(i).child("conditionType");
                errs.push(FieldError::duplicate(p, g.condition_type.as_str()));
            }
        }
        if let Some(t) = &c.spec.topology {
            errs.extend(validate_topology(t, &spec.child("topology")));
        }
        if let Some(old) = old {
            errs.extend(validate_update(c, old, &spec));
        }
        errs
    }
}

/// A v1beta2 reference names a group, kind and name, in the Cluster's namespace.
fn validate_ref(r: &ContractVersionedObjectReference, path: &FieldPath) -> Vec<FieldError> {
    refs::validate_fields_set([("apiGroup", &*r.api_group), ("kind", &r.kind), ("name", &r.name)], path)
}

fn validate_network(net: &ClusterNetwork, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (name, ranges) in [("pods", &net.pods), ("services", &net.services)] {
        for (i, cidr) in ranges.iter().flat_map(|r| r.cidr_blocks.iter()).enumerate() {
            if cidr.parse::<ipnet::IpNet>().is_err() {
                let p = path.child(name).child("cidrBlocks").index(i);
                errs.push(FieldError::invalid(p, cidr.as_str(), "must be a valid CIDR block"));
            }
        }
    }
    if let Some(port) = net.api_server_port.filter(|p| !(1..=65535).contains(p)) {
        errs.push(FieldError::invalid(path.child("apiServerPort"), port, "must be between 1 and 65535"));
    }
    errs
}

fn validate_topology(t: &Topology, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let class = path.child("classRef");
    if t.class_ref.name.is_empty() {
        errs.push(FieldError::required(class.child("name"), "must be set"));
    }
    if let Some(cns) = &t.class_ref.namespace {
        errs.extend(
            dns1123_subdomain_errors(cns)
                .into_iter()
                .map(|e| FieldError::invalid(class.child("namespace"), cns.as_str(), e)),
        );
    }
    if t.version.is_empty() {
        errs.push(FieldError::required(path.child("version"), "must be set"));
    } else {
        errs.extend(validate_version(Some(&t.version), &path.child("version")));
    }
    errs.extend(validate_variables(t.variables.as_deref(), &path.child("variables")));
    if let Some(cp) = &t.control_plane {
        let p = path.child("controlPlane");
        errs.extend(validate_replicas(cp.replicas, &p.child("replicas")));
        if let Some(h) = &cp.health_check {
            let trigger = h.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
            errs.extend(validate_health_check_v1beta2(&settings(h.checks.as_ref(), trigger), &p.child("healthCheck")));
        }
        errs.extend(validate_variables(
            cp.variables.as_ref().and_then(|v| v.overrides.as_deref()),
            &p.child("variables").child("overrides"),
        ));
    }
    let workers = path.child("workers");
    let mut names = BTreeSet::new();
    for (i, md) in t.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()).enumerate() {
        let p = workers.child("machineDeployments").index(i);
        errs.extend(validate_worker_identity(&md.name, &md.class, &mut names, &p));
        errs.extend(validate_replicas(md.replicas, &p.child("replicas")));
        if let Some(h) = &md.health_check {
            let trigger = h.remediation.as_ref().and_then(|r| r.trigger_if.as_ref());
            let hp = p.child("healthCheck");
            errs.extend(validate_health_check_v1beta2(&settings(h.checks.as_ref(), trigger), &hp));
            let in_flight = h.remediation.as_ref().and_then(|r| r.max_in_flight.as_ref());
            errs.extend(intstr::validate_field(in_flight, &hp.child("remediation").child("maxInFlight")));
        }
        if let Some(s) = md.rollout.as_ref().and_then(|r| r.strategy.as_ref()) {
            errs.extend(validate_rollout_strategy(s, &p.child("rollout").child("strategy")));
        }
        errs.extend(validate_variables(
            md.variables.as_ref().and_then(|v| v.overrides.as_deref()),
            &p.child("variables").child("overrides"),
        ));
    }
    let mut names = BTreeSet::new();
    for (i, mp) in t.workers.iter().flat_map(|w| w.machine_pools.iter().flatten()).enumerate() {
        let p = workers.child("machinePools").index(i);
        errs.extend(validate_worker_identity(&mp.name, &mp.class, &mut names, &p));
        errs.extend(validate_replicas(mp.replicas, &p.child("replicas")));
        errs.extend(validate_variables(
            mp.variables.as_ref().and_then(|v| v.overrides.as_deref()),
            &p.child("variables").child("overrides"),
        ));
    }
    errs
}

/// Worker topologies need a class and a unique name (used in generated object names).
fn validate_worker_identity<'a>(
    name: &'a str,
    class: &str,
    seen: &mut BTreeSet<&'a str>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if class.is_empty() {
        errs.push(FieldError::required(path.child("class"), "must be set"));
    }
    if name.is_empty() {
        errs.push(FieldError::required(path.child("name"), "must be set"));
    } else if !seen.insert(name) {
        errs.push(FieldError::duplicate(path.child("name"), name));
    }
    errs
}

/// Variable values need a name and may appear once.
fn validate_variables(vars: Option<&[ClusterVariable]>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, v) in vars.into_iter().flatten().enumerate() {
        let p = path.index(i).child("name");
        if v.name.is_empty() {
            errs.push(FieldError::required(p, "must be set"));
        } else if !seen.insert(v.name.as_str()) {
            errs.push(FieldError::duplicate(p, v.name.as_str()));
        }
    }
    errs
}

fn validate_update(c: &Cluster, old: &Cluster, spec: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (field, new, prev) in [
        ("infrastructureRef", &c.spec.infrastructure_ref, &old.spec.infrastructure_ref),
        ("controlPlaneRef", &c.spec.control_plane_ref, &old.spec.control_plane_ref),
    ] {
        if let (Some(new), Some(prev)) = (new, prev)
            && new != prev
        {
            errs.push(FieldError::forbidden(spec.child(field), "cannot point to another object"));
        }
    }
    match (&c.spec.topology, &old.spec.topology) {
        (None, Some(_)) => {
            errs.push(FieldError::forbidden(spec.child("topology"), "cannot be removed from an existing Cluster"))
        }
        (Some(new), Some(prev))
            if !has_annotation(c.metadata.annotations.as_ref(), DISABLE_UPDATE_VERSION_CHECK_ANNOTATION) =>
        {
            errs.extend(validate_version_change(&prev.version, &new.version, &spec.child("topology").child("version")));
        }
        _ => {}
    }
    errs
}

/// Topology versions never go down.
fn validate_version_change(old: &str, new: &str, path: &FieldPath) -> Option<FieldError> {
    let (Ok(o), Ok(n)) = (version::parse(old), version::parse(new)) else { return None };
    if version::is_downgrade(&o, &n) {
        return Some(FieldError::forbidden(path.as_str(), format!("version cannot be decreased from {old} to {new}")));
    }
    // More than one minor at once is for classes that list the versions to pass through,
    // which only the check against the class can tell (`cluster_topology_admission`).
    None
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::capi::testutil::{admit, error_fields, merged};
    use crate::capi::typed::Typed;

    fn cluster() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": { "name": "c1", "namespace": "ns" },
            "spec": {
                "clusterNetwork": { "pods": { "cidrBlocks": ["192.168.0.0/16"] }, "services": { "cidrBlocks": ["10.128.0.0/12"] } },
                "infrastructureRef": { "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "InMemoryCluster", "name": "c1" },
                "controlPlaneRef": { "apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "c1" }
            }
        })
    }

    fn topology() -> Value {
        json!({ "spec": { "topology": {
            "classRef": { "name": "quick-start" },
            "version": "1.30.2",
            "workers": { "machineDeployments": [ { "class": "default-worker", "name": "md-0", "replicas": 3 } ] }
        } } })
    }

    #[test]
    fn defaults() {
        let out = admit(&Typed(ClusterAdmission), merged(&cluster(), &topology()), None).unwrap();
        assert_eq!(out["spec"]["topology"]["version"], "v1.30.2");
    }

    #[test]
    fn invalid_objects_are_rejected_at_the_right_field() {
        let cases = [
            (json!({ "metadata": { "name": "Bad_Name_" } }), vec!["metadata.name"]),
            (
                json!({ "spec": { "clusterNetwork": { "pods": { "cidrBlocks": ["192.168.0.0/16", "10.0.0.0/33"] } } } }),
                vec!["spec.clusterNetwork.pods.cidrBlocks[1]"],
            ),
            (
                json!({ "spec": { "clusterNetwork": { "services": { "cidrBlocks": ["not-a-cidr"] } } } }),
                vec!["spec.clusterNetwork.services.cidrBlocks[0]"],
            ),
            (
                json!({ "spec": { "clusterNetwork": { "apiServerPort": 70000 } } }),
                vec!["spec.clusterNetwork.apiServerPort"],
            ),
            (json!({ "spec": { "controlPlaneRef": { "name": "" } } }), vec!["spec.controlPlaneRef.name"]),
            (
                json!({ "spec": { "availabilityGates": [ { "conditionType": "A" }, { "conditionType": "A" } ] } }),
                vec!["spec.availabilityGates[1].conditionType"],
            ),
            (json!({ "spec": { "topology": { "version": "one.thirty" } } }), vec!["spec.topology.version"]),
            (json!({ "spec": { "topology": { "classRef": { "name": "" } } } }), vec!["spec.topology.classRef.name"]),
            (
                json!({ "spec": { "topology": { "classRef": { "namespace": "Not_A_Namespace" } } } }),
                vec!["spec.topology.classRef.namespace"],
            ),
            (
                json!({ "spec": { "topology": { "workers": { "machineDeployments": [
                    { "class": "a", "name": "md-0" }, { "class": "a", "name": "md-0" }, { "class": "", "name": "" }
                ] } } } }),
                vec![
                    "spec.topology.workers.machineDeployments[1].name",
                    "spec.topology.workers.machineDeployments[2].class",
                    "spec.topology.workers.machineDeployments[2].name",
                ],
            ),
            (
                json!({ "spec": { "topology": { "controlPlane": { "healthCheck": { "checks": { "nodeStartupTimeoutSeconds": 1 } } } } } }),
                vec!["spec.topology.controlPlane.healthCheck.checks.nodeStartupTimeoutSeconds"],
            ),
            (
                json!({ "spec": { "topology": { "workers": { "machineDeployments": [ { "class": "a", "name": "md-0",
                    "rollout": { "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": "ten" } } } } ] } } } }),
                vec!["spec.topology.workers.machineDeployments[0].rollout.strategy.rollingUpdate.maxSurge"],
            ),
            (
                json!({ "spec": { "topology": { "variables": [ { "name": "a", "value": 1 }, { "name": "a", "value": 2 } ] } } }),
                vec!["spec.topology.variables[1].name"],
            ),
        ];
        for (patch, want) in cases {
            let base = merged(&cluster(), &topology());
            let r = admit(&Typed(ClusterAdmission), merged(&base, &patch), None);
            assert_eq!(error_fields(&r), want, "{patch}");
        }
    }

    #[test]
    fn topology_version_updates() {
        let a = Typed(ClusterAdmission);
        let old = admit(&a, merged(&cluster(), &topology()), None).unwrap();
        let with_version = |v: &str| merged(&old, &json!({ "spec": { "topology": { "version": v } } }));
        for ok in ["v1.30.2", "v1.30.9", "v1.31.0"] {
            assert!(admit(&a, with_version(ok), Some(old.clone())).is_ok(), "{ok}");
        }
        for bad in ["v1.32.0", "v1.30.1", "v1.29.9"] {
            assert_eq!(
                error_fields(&admit(&a, with_version(bad), Some(old.clone()))),
                ["spec.topology.version"],
                "{bad}"
            );
        }
        let unsafe_skip = merged(
            &with_version("v1.32.0"),
            &json!({ "metadata": { "annotations": { "unsafe.topology.cluster.x-k8s.io/disable-update-version-check": "" } } }),
        );
        assert!(admit(&a, unsafe_skip, Some(old.clone())).is_ok());
        let removed = merged(&old, &json!({ "spec": { "topology": null } }));
        assert_eq!(error_fields(&admit(&a, removed, Some(old))), ["spec.topology"]);
    }

    #[test]
    fn refs_keep_their_target() {
        let a = Typed(ClusterAdmission);
        let old = admit(&a, cluster(), None).unwrap();
        let bumped = merged(&old, &json!({ "spec": { "paused": true } }));
        assert!(admit(&a, bumped, Some(old.clone())).is_ok());
        let swapped = merged(&old, &json!({ "spec": { "controlPlaneRef": { "name": "other" } } }));
        assert_eq!(error_fields(&admit(&a, swapped, Some(old))), ["spec.controlPlaneRef"]);
    }
}
