//! The topology's MachinePools: the objects applied for each. Unlike a MachineDeployment, a
//! MachinePool references a bootstrap config and an infrastructure machine pool, not
//! templates: both are made from
//! the `spec.template` of the class's templates (a KubeadmConfig from a
//! KubeadmConfigTemplate, a DevMachinePool from a DevMachinePoolTemplate), keep their
//! names, and are updated in place when the class's templates change.

use std::collections::BTreeMap;

use drydock_api::capi::core::v1beta2::{MachinePoolClass, MachinePoolTopology};
use serde_json::{Value, json};

use super::POOL_NAME_LABEL;
use super::blueprint::Template;
use super::desired::{Common, cloned_from, made_from};
use super::workers;

/// What is decided for one topology MachinePool before the patches run.
pub type Names<'a> = workers::Names<'a, MachinePoolTopology, MachinePoolClass>;

/// One MachinePool's objects.
pub struct PoolPlan {
    pub topology_name: String,
    pub object: Value,
    pub bootstrap: Value,
    pub infrastructure: Value,
    pub pending_create: bool,
}

/// The objects of one MachinePool, from its patched templates.
pub fn pool(common: &Common<'_>, n: &Names<'_>, bootstrap: &Value, infra: &Value) -> PoolPlan {
    let name = &n.topology.name;
    let bootstrap = from_template(common, &n.class.bootstrap, bootstrap, &n.bootstrap_name, name);
    let infrastructure = from_template(common, &n.class.infrastructure, infra, &n.infrastructure_name, name);
    let object = pool_object(common, n, &bootstrap, &infrastructure);
    PoolPlan { topology_name: name.clone(), object, bootstrap, infrastructure, pending_create: n.pending_create }
}

/// A pool's bootstrap config or infrastructure machine pool: the class template's
/// `spec.template`, labelled for the topology and the pool, annotated with the template
/// it was cloned from, and owned (not controlled) by the Cluster; the MachinePool becomes
/// its controller when it adopts it.
fn from_template(common: &Common<'_>, t: &Template, patched: &Value, name: &str, topology_name: &str) -> Value {
    let part = BTreeMap::from([(POOL_NAME_LABEL.to_string(), topology_name.to_string())]);
    let mut obj = made_from(common, t, patched, name, Some(part));
    let mut annotations: BTreeMap<String, String> =
        serde_json::from_value(obj["metadata"]["annotations"].clone()).unwrap_or_default();
    annotations.extend(cloned_from(t));
    obj["metadata"]["annotations"] = json!(annotations);
    obj["metadata"]["ownerReferences"] = json!([common.plain_owner]);
    obj
}

/// The MachinePool itself: the class's settings with the topology's over them.
fn pool_object(common: &Common<'_>, n: &Names<'_>, bootstrap: &Value, infrastructure: &Value) -> Value {
    let (mp, class) = (n.topology, &n.class.class);
    let spec = json!({"failureDomains": mp.failure_domains.as_ref().or(class.failure_domains.as_ref())});
    let machine = json!({
        "minReadySeconds": mp.min_ready_seconds.or(class.min_ready_seconds),
        "deletion": mp.deletion.as_ref().or(class.deletion.as_ref()),
        "taints": mp.taints.as_ref().or(class.taints.as_ref()),
    });
    workers::object(common, n, [bootstrap, infrastructure], spec, machine)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use drydock_api::capi::common::VersionedTemplateReference;
    use drydock_api::capi::core::v1beta2::{Cluster, ClusterClass, MachinePool};
    use serde_json::json;

    use super::*;
    use crate::framework::Result;
    use crate::topology::blueprint::{Blueprint, Current, CurrentWorker, WorkerClass};
    use crate::topology::upgrade::ControlPlaneState;
    use crate::topology::upgrade::DEFER_UPGRADE_ANNOTATION;

    fn template(api_version: &str, kind: &str, name: &str) -> Template {
        let reference =
            VersionedTemplateReference { api_version: api_version.into(), kind: kind.into(), name: name.into() };
        let object = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name},
            "spec": {"template": {"metadata": {"labels": {"from-template": "yes"}}, "spec": {"backend": {"inMemory": {}}}}}});
        Template { reference, object }
    }

    fn cluster(annotations: serde_json::Value) -> Cluster {
        serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c", "namespace": "ns", "uid": "u-1"},
            "spec": {"topology": {"classRef": {"name": "cc"}, "version": "v1.33.0", "workers": {"machinePools": [
                {"class": "pool", "name": "mp-0", "replicas": 2, "failureDomains": ["a"],
                 "metadata": {"labels": {"mine": "x"}, "annotations": annotations}}]}}},
        }))
        .expect("cluster")
    }

    fn blueprint() -> Blueprint {
        let class = MachinePoolClass { class: "pool".into(), min_ready_seconds: Some(5), ..Default::default() };
        let pool = WorkerClass {
            class,
            bootstrap: template("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", "boot"),
            infrastructure: template("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachinePoolTemplate", "infra"),
        };
        let unused = template("x/v1", "XTemplate", "x");
        Blueprint {
            class: ClusterClass::new("cc", Default::default()),
            infrastructure: unused.clone(),
            control_plane: unused,
            control_plane_machine: None,
            deployments: Default::default(),
            pools: [("pool".to_string(), pool)].into(),
        }
    }

    fn decide<'a>(
        common: &Common<'a>,
        bp: &'a Blueprint,
        current: &Current,
        cp: &ControlPlaneState,
    ) -> Result<Vec<Names<'a>>> {
        let entries = workers::entries(common.topology.workers.as_ref().and_then(|w| w.machine_pools.as_ref()));
        workers::decide(common, entries, &bp.pools, &current.pools, cp)
    }

    fn control_plane(initialized: bool) -> ControlPlaneState {
        ControlPlaneState { exists: true, spec_version: Some("v1.33.0".into()), initialized, busy: false }
    }

    #[test]
    fn a_new_pool_waits_for_the_control_plane_then_gets_a_config_and_a_machine_pool() {
        let (c, bp) = (cluster(json!({})), blueprint());
        let common = Common::of(&c).expect("common");
        let current = Current::default();
        let names = decide(&common, &bp, &current, &control_plane(false)).expect("decide");
        assert!(names[0].pending_create);
        let names = decide(&common, &bp, &current, &control_plane(true)).expect("decide");
        let n = &names[0];
        assert!(!n.pending_create && n.name.starts_with("c-mp-0-"), "{}", n.name);
        let plan = pool(&common, n, &n.class.bootstrap.object, &n.class.infrastructure.object);
        let (mp, config, infra) = (&plan.object, &plan.bootstrap, &plan.infrastructure);
        assert_eq!(config["kind"], "KubeadmConfig");
        assert_eq!(infra["kind"], "DevMachinePool");
        assert_eq!(infra["spec"], json!({"backend": {"inMemory": {}}}));
        for o in [mp, config, infra] {
            assert_eq!(o["metadata"]["labels"][POOL_NAME_LABEL], "mp-0", "{o}");
            assert_eq!(o["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"], "", "{o}");
            assert_eq!(o["metadata"]["ownerReferences"][0]["kind"], "Cluster", "{o}");
            assert!(o["metadata"]["ownerReferences"][0].get("controller").is_none(), "{o}");
        }
        assert_eq!(config["metadata"]["labels"]["from-template"], "yes");
        assert_eq!(infra["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"], "infra");
        assert_eq!(
            infra["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-groupkind"],
            "DevMachinePoolTemplate.infrastructure.cluster.x-k8s.io"
        );
        let spec = &mp["spec"];
        assert_eq!((&spec["replicas"], &spec["failureDomains"]), (&json!(2), &json!(["a"])));
        assert_eq!(mp["metadata"]["labels"]["mine"], "x");
        let machine = &spec["template"]["spec"];
        assert_eq!(machine["version"], "v1.33.0");
        assert_eq!(machine["minReadySeconds"], 5, "the class's, as the topology sets none");
        assert_eq!(
            machine["bootstrap"]["configRef"],
            json!({"apiGroup": "bootstrap.cluster.x-k8s.io",
            "kind": "KubeadmConfig", "name": config["metadata"]["name"]})
        );
        assert_eq!(machine["infrastructureRef"]["name"], infra["metadata"]["name"]);
    }

    fn existing(version: &str) -> Current {
        let mp: MachinePool = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "c-mp-0-abcde", "namespace": "ns"},
            "spec": {"clusterName": "c", "template": {"spec": {"clusterName": "c", "version": version,
                "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "b"}},
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachinePool", "name": "i"}}}},
        }))
        .expect("pool");
        let pool = CurrentWorker { object: Arc::new(mp), upgrading: false, bootstrap: None, infrastructure: None };
        Current { pools: [("mp-0".to_string(), pool)].into(), ..Default::default() }
    }

    #[test]
    fn an_existing_pool_follows_a_settled_control_plane_unless_deferred() {
        let bp = blueprint();
        let current = existing("v1.32.0");
        let c = cluster(json!({}));
        let names = decide(&Common::of(&c).expect("common"), &bp, &current, &control_plane(true)).expect("decide");
        let n = &names[0];
        assert_eq!((n.name.as_str(), n.version.as_str(), n.held), ("c-mp-0-abcde", "v1.33.0", false));
        assert_eq!((n.bootstrap_name.as_str(), n.infrastructure_name.as_str()), ("b", "i"));
        let deferred = cluster(json!({DEFER_UPGRADE_ANNOTATION: ""}));
        let common = Common::of(&deferred).expect("common");
        let names = decide(&common, &bp, &current, &control_plane(true)).expect("decide");
        assert_eq!((names[0].version.as_str(), names[0].held), ("v1.32.0", true));
        let plan = pool(&common, &names[0], &names[0].class.bootstrap.object, &names[0].class.infrastructure.object);
        assert!(plan.object["metadata"]["annotations"].is_null(), "the steering annotation stays off the pool");
    }
}
