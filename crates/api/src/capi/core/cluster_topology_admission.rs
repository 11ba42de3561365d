//! The Cluster checks that read its ClusterClass, as upstream's webhook makes them: the
//! variable values are defaulted from the class and validated against its schemas (422
//! with the path of the value), the MachineDeployment classes must exist, and the version
//! may move more than one minor at once only through versions the class lists (or when
//! the class's upgrade plan extension plans the steps).
//!
//! A class that does not exist yet is not an error (manifests are applied in any order):
//! the topology controller reports it until it appears.

use super::v1beta2::{Cluster, ClusterClass, ClusterVariable};
use crate::admission::{FieldError, FieldPath};
use crate::capi::common::VersionedTemplateReference;
use crate::capi::keys::{DISABLE_UPDATE_VERSION_CHECK_ANNOTATION, has_annotation};
use crate::capi::version;
use crate::conversion::RefVersions;

const GROUP: &str = "cluster.x-k8s.io";

pub(super) fn admit(c: &mut Cluster, old: Option<&Cluster>, refs: &dyn RefVersions) -> Vec<FieldError> {
    let Some(topology) = c.spec.topology.as_ref() else {
        return Vec::new();
    };
    let path = FieldPath::new("spec").child("topology");
    let ns = topology.class_ref.namespace.clone().or_else(|| c.metadata.namespace.clone()).unwrap_or_default();
    let class: Option<ClusterClass> =
        refs.stored(GROUP, "ClusterClass", &ns, &topology.class_ref.name).and_then(|v| serde_json::from_value(v).ok());
    let mut errs = version_change(c, old, class.as_ref(), &path.child("version"));
    errs.extend(rebase(c, old, class.as_ref(), refs, &path.child("classRef")));
    // Writes that leave the topology as it was (controllers' metadata and finalizer writes)
    // are not judged again against a class that may have changed since.
    let unchanged = old.and_then(|o| o.spec.topology.as_ref()) == c.spec.topology.as_ref();
    let Some(class) = class.filter(|_| !unchanged) else {
        return errs;
    };
    let definitions = &class.variable_definitions();
    if let Some(t) = c.spec.topology.as_mut() {
        // Defaults first: a missing variable whose schema has a top-level default gets it,
        // appended, so defaulting again changes nothing.
        let values = t.variables.get_or_insert_with(Vec::new);
        for d in definitions {
            let default = d.schema.open_api_v3_schema.default.clone();
            if let Some(value) = default.filter(|_| !values.iter().any(|v| v.name == d.name)) {
                values.push(ClusterVariable { name: d.name.clone(), value });
            }
        }
        if values.is_empty() {
            t.variables = None;
        }
    }
    let Some(t) = c.spec.topology.as_ref() else {
        return errs;
    };
    let class_name = format!("{ns}/{}", topology_class_name(c));
    let vars = path.child("variables");
    errs.extend(check_values(refs, &class, t.variables.as_deref().unwrap_or_default(), &vars, &class_name));
    for d in definitions.iter().filter(|d| d.required) {
        if !t.variables.iter().flatten().any(|v| v.name == d.name) {
            errs.push(FieldError::required(vars.as_str(), format!("required variable {:?} must be set", d.name)));
        }
    }
    if let Some(cp) = &t.control_plane {
        let p = path.child("controlPlane").child("variables").child("overrides");
        let overrides = cp.variables.as_ref().and_then(|v| v.overrides.as_deref()).unwrap_or_default();
        errs.extend(check_values(refs, &class, overrides, &p, &class_name));
    }
    let classes: Vec<&str> = class
        .spec
        .workers
        .iter()
        .flat_map(|w| w.machine_deployments.iter().flatten())
        .map(|m| m.class.as_str())
        .collect();
    let mds = path.child("workers").child("machineDeployments");
    for (i, md) in t.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()).enumerate() {
        let p = mds.index(i);
        if !classes.contains(&md.class.as_str()) {
            let detail = format!("MachineDeployment class {:?} is not defined in ClusterClass {class_name}", md.class);
            errs.push(FieldError::invalid(p.child("class"), md.class.as_str(), detail));
        }
        let overrides = md.variables.as_ref().and_then(|v| v.overrides.as_deref()).unwrap_or_default();
        errs.extend(check_values(refs, &class, overrides, &p.child("variables").child("overrides"), &class_name));
    }
    errs
}

fn topology_class_name(c: &Cluster) -> &str {
    c.spec.topology.as_ref().map_or("", |t| t.class_ref.name.as_str())
}

/// Each value names a variable of the class and matches its schema.
fn check_values(
    refs: &dyn RefVersions,
    class: &ClusterClass,
    values: &[ClusterVariable],
    path: &FieldPath,
    class_name: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let p = path.index(i);
        let Some(d) = class.variable_definitions().into_iter().find(|d| d.name == v.name) else {
            let detail = format!("variable {:?} is not defined in ClusterClass {class_name}", v.name);
            errs.push(FieldError::invalid(p.child("name"), v.name.as_str(), detail));
            continue;
        };
        let schema = serde_json::to_value(&d.schema.open_api_v3_schema).unwrap_or_default();
        errs.extend(refs.check_schema(&schema, &v.value, &p.child("value")));
    }
    errs
}

/// Versions never go down (checked without the class); more than one minor at once only
/// when the class lists the versions to pass through and the new one among them, or names
/// an upgrade plan extension.
fn version_change(
    c: &Cluster,
    old: Option<&Cluster>,
    class: Option<&ClusterClass>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let (Some(new), Some(prev)) = (c.spec.topology.as_ref(), old.and_then(|o| o.spec.topology.as_ref())) else {
        return Vec::new();
    };
    if has_annotation(c.metadata.annotations.as_ref(), DISABLE_UPDATE_VERSION_CHECK_ANNOTATION) {
        return Vec::new();
    }
    let (Ok(o), Ok(n)) = (version::parse(&prev.version), version::parse(&new.version)) else {
        return Vec::new();
    };
    // A class with an upgrade plan extension leaves the steps to the extension.
    let planned = class.and_then(|cc| cc.spec.upgrade.as_ref()).and_then(|u| u.external.as_ref());
    if !version::skips_minor(&o, &n) || planned.is_some_and(|e| e.generate_upgrade_plan_extension.is_some()) {
        return Vec::new();
    }
    let listed = class.and_then(|cc| cc.spec.kubernetes_versions.as_ref()).filter(|v| !v.is_empty());
    match listed {
        Some(versions) if versions.contains(&new.version) => Vec::new(),
        Some(_) => vec![FieldError::forbidden(
            path.as_str(),
            format!("version {} is not one of the ClusterClass's kubernetesVersions", new.version),
        )],
        None => vec![FieldError::forbidden(
            path.as_str(),
            format!(
                "version cannot be increased from {} to {}: upgrade one minor version at a time \
                 (or list the versions to pass through in the ClusterClass's kubernetesVersions)",
                prev.version, new.version
            ),
        )],
    }
}

/// Moving a Cluster to another ClusterClass: the new class must exist and make the same
/// kinds of objects (infrastructure cluster, control plane, its machines, each worker
/// class both define), since the topology replaces templates but never changes the kind
/// of an object it made.
fn rebase(
    c: &Cluster,
    old: Option<&Cluster>,
    class: Option<&ClusterClass>,
    refs: &dyn RefVersions,
    path: &FieldPath,
) -> Vec<FieldError> {
    let (Some(new), Some(prev)) = (c.spec.topology.as_ref(), old.and_then(|o| o.spec.topology.as_ref())) else {
        return Vec::new();
    };
    let own_ns = || c.metadata.namespace.clone().unwrap_or_default();
    let (new_ns, prev_ns) = (
        new.class_ref.namespace.clone().unwrap_or_else(own_ns),
        prev.class_ref.namespace.clone().unwrap_or_else(own_ns),
    );
    if (new.class_ref.name.as_str(), new_ns.as_str()) == (prev.class_ref.name.as_str(), prev_ns.as_str()) {
        return Vec::new();
    }
    let Some(class) = class else {
        let detail = format!(
            "ClusterClass {new_ns}/{} not found: a Cluster moves only to an existing class",
            new.class_ref.name
        );
        return vec![FieldError::invalid(path.as_str(), new.class_ref.name.as_str(), detail)];
    };
    let Some(previous) = refs
        .stored(GROUP, "ClusterClass", &prev_ns, &prev.class_ref.name)
        .and_then(|v| serde_json::from_value::<ClusterClass>(v).ok())
    else {
        return Vec::new();
    };
    let (from, to) = (format!("{prev_ns}/{}", prev.class_ref.name), format!("{new_ns}/{}", new.class_ref.name));
    incompatibilities(&previous, class)
        .into_iter()
        .map(|(what, x, y)| {
            FieldError::forbidden(
                path.as_str(),
                format!("ClusterClass {to} is not compatible with {from}: {what} is a {x} in {from} and a {y} in {to}"),
            )
        })
        .collect()
}

/// The parts `next` makes of another kind than `prev` does: `(what, kind in prev, kind in
/// next)`, for the infrastructure cluster, the control plane, its machines and the
/// machines of each worker class both define. The topology replaces templates but never
/// changes the kind of an object it made.
pub(super) fn incompatibilities(prev: &ClusterClass, next: &ClusterClass) -> Vec<(String, String, String)> {
    let gk = |r: &VersionedTemplateReference| {
        let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
        format!("{}.{group}", r.kind)
    };
    let (a, b) = (&prev.spec, &next.spec);
    let mut pairs = vec![
        (
            "the infrastructure cluster template".to_string(),
            Some(gk(&a.infrastructure.template_ref)),
            Some(gk(&b.infrastructure.template_ref)),
        ),
        (
            "the control plane template".to_string(),
            Some(gk(&a.control_plane.template_ref)),
            Some(gk(&b.control_plane.template_ref)),
        ),
        (
            "the control plane's machine template".to_string(),
            a.control_plane.machine_infrastructure.as_ref().map(|m| gk(&m.template_ref)),
            b.control_plane.machine_infrastructure.as_ref().map(|m| gk(&m.template_ref)),
        ),
    ];
    let workers = |s: &super::v1beta2::ClusterClassSpec| -> Vec<(String, String)> {
        s.workers
            .iter()
            .flat_map(|w| w.machine_deployments.iter().flatten())
            .map(|m| (m.class.clone(), gk(&m.infrastructure.template_ref)))
            .collect()
    };
    let later = workers(b);
    for (class_name, kind) in workers(a) {
        if let Some((_, other)) = later.iter().find(|(n, _)| *n == class_name) {
            pairs.push((format!("worker class {class_name:?}'s machine template"), Some(kind), Some(other.clone())));
        }
    }
    let show = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    pairs.into_iter().filter(|(_, x, y)| x != y).map(|(what, x, y)| (what, show(x), show(y))).collect()
}

/// An update of a ClusterClass keeps what the Clusters using it use: every worker class
/// they name and, when the class lists versions, the version each runs.
pub(super) fn class_in_use(cc: &ClusterClass, refs: &dyn RefVersions) -> Vec<FieldError> {
    let (ns, name) = (cc.metadata.namespace.clone().unwrap_or_default(), cc.metadata.name.clone().unwrap_or_default());
    let classes: Vec<&str> =
        cc.spec.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()).map(|m| m.class.as_str()).collect();
    let versions = cc.spec.kubernetes_versions.as_ref().filter(|v| !v.is_empty());
    let mut errs: Vec<FieldError> = Vec::new();
    for c in
        refs.stored_list(GROUP, "Cluster", None).into_iter().filter_map(|v| serde_json::from_value::<Cluster>(v).ok())
    {
        let Some(t) = &c.spec.topology else { continue };
        let cluster_ns = c.metadata.namespace.clone().unwrap_or_default();
        if t.class_ref.name != name || t.class_ref.namespace.as_deref().unwrap_or(&cluster_ns) != ns {
            continue;
        }
        let cluster = format!("{cluster_ns}/{}", c.metadata.name.as_deref().unwrap_or_default());
        for md in t.workers.iter().flat_map(|w| w.machine_deployments.iter().flatten()) {
            if !classes.contains(&md.class.as_str()) {
                let detail = format!("worker class {:?} is used by Cluster {cluster}", md.class);
                errs.push(FieldError::forbidden("spec.workers.machineDeployments", detail));
            }
        }
        if let Some(list) = versions.filter(|v| !v.contains(&t.version)) {
            let detail =
                format!("Cluster {cluster} runs {}, which the list ({}) no longer holds", t.version, list.join(", "));
            errs.push(FieldError::forbidden("spec.kubernetesVersions", detail));
        }
    }
    errs.dedup();
    errs
}
