//! The Machines of a MachineSet: which cached Machines it owns, adopts or releases, what
//! labels and annotations they carry, and how new ones are named and built.

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::conversion::ref_up;
use drydock_api::capi::core::v1beta2::{Bootstrap, Machine, MachineSet};
use drydock_api::capi::keys::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_FINALIZER, SET_NAME_LABEL};
use drydock_api::capi::naming;
use drydock_api::capi::owner;
use drydock_api::capi::selector::Selector;
use drydock_api::capi::validation::format_label_value;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;

use crate::framework::names::generated_name;

/// The name of a new Machine: the MachineSet's naming template when it has one, else
/// `<machineset>-<random>`.
pub fn machine_name(ms: &MachineSet, suffix: &str) -> Result<String, String> {
    let ms_name = ms.metadata.name.as_deref().unwrap_or_default();
    match ms.spec.machine_naming.as_ref().and_then(|s| s.template.as_deref()) {
        Some(t) => naming::render(
            t,
            &[("cluster.name", ms.spec.cluster_name.as_str()), ("machineSet.name", ms_name), ("random", suffix)],
        ),
        None => Ok(generated_name(ms_name, suffix)),
    }
}

/// Labels every Machine of the set carries: the template's, the set name, the deployment
/// name when the set belongs to one, and the cluster name.
pub fn machine_labels(ms: &MachineSet) -> BTreeMap<String, String> {
    let mut labels = ms.spec.template.metadata.labels.clone().unwrap_or_default();
    labels.insert(SET_NAME_LABEL.to_string(), format_label_value(ms.metadata.name.as_deref().unwrap_or_default()));
    if let Some(md) = ms.metadata.labels.as_ref().and_then(|l| l.get(DEPLOYMENT_NAME_LABEL)) {
        labels.insert(DEPLOYMENT_NAME_LABEL.to_string(), md.clone());
    }
    labels.insert(CLUSTER_NAME_LABEL.to_string(), ms.spec.cluster_name.clone());
    labels
}

/// Annotations every Machine of the set carries: the template's.
pub fn machine_annotations(ms: &MachineSet) -> BTreeMap<String, String> {
    ms.spec.template.metadata.annotations.clone().unwrap_or_default()
}

/// A new Machine of the set, pointing at its freshly cloned infrastructure machine and
/// bootstrap config (or the template's data secret).
pub fn new_machine(
    ms: &MachineSet,
    name: &str,
    infrastructure_ref: ObjectReference,
    bootstrap_ref: Option<ObjectReference>,
) -> Machine {
    let mut spec = ms.spec.template.spec.clone();
    spec.cluster_name = ms.spec.cluster_name.clone();
    spec.infrastructure_ref = ref_up(&infrastructure_ref);
    spec.bootstrap = match bootstrap_ref {
        Some(r) => Bootstrap { config_ref: Some(ref_up(&r)), data_secret_name: None },
        None => Bootstrap { config_ref: None, data_secret_name: spec.bootstrap.data_secret_name.take() },
    };
    let mut m = Machine::new(name, spec);
    m.metadata.namespace = ms.metadata.namespace.clone();
    m.metadata.labels = Some(machine_labels(ms));
    let annotations = machine_annotations(ms);
    m.metadata.annotations = (!annotations.is_empty()).then_some(annotations);
    m.metadata.finalizers = Some(vec![MACHINE_FINALIZER.to_string()]);
    m.metadata.owner_references = owner::controller_ref(ms).map(|r| vec![r]);
    m
}

/// The cached Machines of a MachineSet's cluster, sorted into what the set does with them.
#[derive(Default)]
pub struct Selection {
    /// Controlled by the set and matching its selector (deleting ones included).
    pub owned: Vec<Arc<Machine>>,
    /// Matching, without a controller: to adopt.
    pub adopt: Vec<Arc<Machine>>,
    /// Controlled by the set but no longer matching: to release.
    pub release: Vec<Arc<Machine>>,
}

/// Sorts the candidates (Machines of the set's namespace and cluster). An empty selector
/// selects nothing, as for every Kubernetes controller.
pub fn select(ms: &MachineSet, selector: &Selector, candidates: Vec<Arc<Machine>>) -> Selection {
    let mut s = Selection::default();
    let empty = BTreeMap::new();
    for m in candidates {
        let labels = m.metadata.labels.as_ref().unwrap_or(&empty);
        let matches = !selector.is_empty() && selector.matches(labels);
        let deleting = m.metadata.deletion_timestamp.is_some();
        match owner::get_controller(&m.metadata) {
            Some(c) if Some(c.uid.as_str()) == ms.meta().uid.as_deref() => {
                if matches {
                    s.owned.push(m);
                } else if !deleting {
                    s.release.push(m);
                }
            }
            Some(_) => {}
            None if matches && !deleting => s.adopt.push(m),
            None => {}
        }
    }
    s.owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::admission::FieldPath;
    use drydock_api::capi::common::MachineNamingStrategy;
    use drydock_api::capi::core::v1beta2::MachineSetSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    fn ms() -> MachineSet {
        let mut ms =
            MachineSet::new("workers-abcde", MachineSetSpec { cluster_name: "c1".into(), ..Default::default() });
        ms.metadata.namespace = Some("ns".into());
        ms.metadata.uid = Some("ms-uid".into());
        ms.metadata.labels = Some([(DEPLOYMENT_NAME_LABEL.to_string(), "workers".to_string())].into());
        ms.spec.template.metadata.labels = Some(
            [("role".to_string(), "worker".to_string()), (CLUSTER_NAME_LABEL.to_string(), "c1".to_string())].into(),
        );
        ms.spec.template.metadata.annotations = Some([("a".to_string(), "1".to_string())].into());
        ms.spec.template.spec.bootstrap.data_secret_name = Some("secret".into());
        ms.spec.template.spec.version = Some("v1.30.2".into());
        ms
    }

    #[test]
    fn names() {
        assert_eq!(machine_name(&ms(), "b2c4d").as_deref(), Ok("workers-abcde-b2c4d"));
        let mut named = ms();
        named.spec.machine_naming =
            Some(MachineNamingStrategy { template: Some("{{ .cluster.name }}-w-{{ .random }}".into()) });
        assert_eq!(machine_name(&named, "b2c4d").as_deref(), Ok("c1-w-b2c4d"));
    }

    #[test]
    fn new_machine_carries_labels_owner_and_finalizer() {
        let ms = ms();
        let infra =
            ObjectReference { kind: Some("InMemoryMachine".into()), name: Some("m1".into()), ..Default::default() };
        let m = new_machine(&ms, "m1", infra.clone(), None);
        let labels = m.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels[SET_NAME_LABEL], "workers-abcde");
        assert_eq!(labels[DEPLOYMENT_NAME_LABEL], "workers");
        assert_eq!(labels[CLUSTER_NAME_LABEL], "c1");
        assert_eq!(labels["role"], "worker");
        assert_eq!(m.metadata.annotations.clone().unwrap_or_default()["a"], "1");
        assert_eq!(m.metadata.finalizers, Some(vec![MACHINE_FINALIZER.to_string()]));
        assert!(owner::is_controlled_by(&m.metadata, &ms));
        assert_eq!(m.spec.cluster_name, "c1");
        assert_eq!(m.spec.infrastructure_ref, ref_up(&infra));
        assert_eq!(m.spec.bootstrap.data_secret_name.as_deref(), Some("secret"));
        assert_eq!(m.spec.version.as_deref(), Some("v1.30.2"));
        let with_config = new_machine(&ms, "m1", infra, Some(ObjectReference::default()));
        assert!(with_config.spec.bootstrap.data_secret_name.is_none());
        assert!(with_config.spec.bootstrap.config_ref.is_some());
    }

    #[test]
    fn selection_owns_adopts_and_releases() {
        let ms = ms();
        let sel = Selector::parse(
            &LabelSelector {
                match_labels: Some([("role".to_string(), "worker".to_string())].into()),
                match_expressions: None,
            },
            &FieldPath::new("spec").child("selector"),
        )
        .expect("selector");
        let mk = |name: &str, role: &str, controller: Option<&str>| {
            let mut m = Machine::new(name, Default::default());
            m.metadata.labels = Some([("role".to_string(), role.to_string())].into());
            if let Some(uid) = controller {
                let mut r = owner::controller_ref(&ms).expect("owner ref");
                r.uid = uid.to_string();
                m.metadata.owner_references = Some(vec![r]);
            }
            Arc::new(m)
        };
        let s = select(
            &ms,
            &sel,
            vec![
                mk("b-owned", "worker", Some("ms-uid")),
                mk("a-owned", "worker", Some("ms-uid")),
                mk("orphan", "worker", None),
                mk("other-role-orphan", "db", None),
                mk("relabelled", "db", Some("ms-uid")),
                mk("someone-elses", "worker", Some("other-uid")),
            ],
        );
        let names = |v: &[Arc<Machine>]| -> Vec<String> { v.iter().filter_map(|m| m.metadata.name.clone()).collect() };
        assert_eq!(names(&s.owned), ["a-owned", "b-owned"]);
        assert_eq!(names(&s.adopt), ["orphan"]);
        assert_eq!(names(&s.release), ["relabelled"]);
        // An empty selector selects nothing.
        let s = select(&ms, &Selector::default(), vec![mk("orphan", "worker", None)]);
        assert!(s.adopt.is_empty());
    }
}
