//! CustomResourceDefinitions served at runtime, as kube-apiserver's apiextensions server
//! serves them: a CRD is validated on write ([`validate`]), a controller in the server
//! accepts its names, marks it Established and publishes the resources its served
//! versions define into the registry snapshot of its logical cluster ([`controller`]);
//! objects are stored at the storage version and converted on read and write
//! ([`convert`]). Deleting a CRD deletes its instances before the CRD goes away.

pub mod controller;
pub mod convert;
pub mod validate;
mod version_order;
mod webhook;

use std::sync::Arc;

use drydock_api::ResourceDef;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

pub use convert::{Converter, RefLookup, contract_version};
pub use version_order::sort_by_priority;

use crate::registry::{Registries, Resource};
use crate::store::ResIds;

pub const GROUP: &str = "apiextensions.k8s.io";
pub const VERSION: &str = "v1";
pub const KIND: &str = "CustomResourceDefinition";
pub const PLURAL: &str = "customresourcedefinitions";
/// Held by a deleted CRD until its instances are gone.
pub const FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The finalizer a delete of `res`'s objects adds: a deleted CRD stays (terminating) until
/// its instances are gone.
pub fn deletion_finalizer(res: &Resource) -> Option<&'static str> {
    (res.def.group == GROUP && res.def.kind == KIND).then_some(FINALIZER)
}

/// How a CRD serves one of its versions.
pub struct Served {
    /// The CRD's name (`<plural>.<group>`).
    pub crd_name: String,
    pub storage_version: String,
    pub converter: Arc<Converter>,
    /// The `Warning` header of a request to a deprecated version.
    pub warning: Option<String>,
    /// The CRD is being deleted: creates are refused.
    pub terminating: bool,
    /// Selectable fields of the storage version (extracted when objects are stored).
    pub storage_selectable: Vec<String>,
    /// Whether reads of this version rewrite the stored object (defaults of the storage
    /// schema, or a conversion); otherwise the stored bytes are served as they are.
    pub rewrites_reads: bool,
    /// The version its Cluster API contract labels name (provider kinds).
    pub contract_version: Option<String>,
}

/// The resources one established CRD serves, one per served version (in version priority).
/// Native admission of drydock's own kinds is attached by group and kind.
pub fn resources(
    ids: &ResIds,
    registries: &Arc<Registries>,
    cluster: &str,
    crd: &CustomResourceDefinition,
    terminating: bool,
) -> Result<Vec<Resource>, drydock_api::resource::CrdError> {
    let spec = &crd.spec;
    let crd_name = crd.metadata.name.clone().unwrap_or_default();
    let storage = spec.versions.iter().find(|v| v.storage).ok_or(drydock_api::resource::CrdError::NoVersion)?;
    let native_conversion =
        registries.native_conversion(&spec.group, &spec.names.kind).map(|c| (c, RefLookup::new(registries, cluster)));
    let converter = Arc::new(Converter::new(crd, native_conversion)?);
    let contract_version = contract_version(crd);
    // Objects written before the storage version changed stay in their version until
    // rewritten (`drydock migrate storage`): reads must look at each object's version.
    let holds_older_versions = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.as_ref())
        .is_some_and(|v| v.iter().any(|v| *v != storage.name));
    let id = ids.intern(&spec.group, &spec.names.plural);
    let native = registries.native_admission(&spec.group, &spec.names.kind);
    let mut served: Vec<_> = spec.versions.iter().filter(|v| v.served).collect();
    let mut names: Vec<String> = served.iter().map(|v| v.name.clone()).collect();
    // Versions in kube-apiserver's priority: the first is the preferred one.
    sort_by_priority(&mut names);
    served.sort_by_key(|v| names.iter().position(|n| *n == v.name));
    let storage_selectable: Vec<String> =
        storage.selectable_fields.iter().flatten().map(|f| f.json_path.trim_start_matches('.').to_string()).collect();
    let mut out = Vec::new();
    for v in &served {
        let mut def = ResourceDef::from_crd_version(crd, v)?;
        def.admission = native.clone();
        let warning = deprecation_warning(crd, v, &names);
        let rewrites_reads = v.name != storage.name || converter.storage_has_defaults() || holds_older_versions;
        let custom = Served {
            crd_name: crd_name.clone(),
            storage_version: storage.name.clone(),
            converter: converter.clone(),
            warning,
            terminating,
            storage_selectable: storage_selectable.clone(),
            rewrites_reads,
            contract_version: contract_version.clone(),
        };
        out.push(Resource::new(id, def, id, None, Some(Arc::new(custom))));
    }
    Ok(out)
}

/// `<group>/<v> <Kind> is deprecated; use <group>/<newest served, not deprecated> <Kind>`,
/// unless the version words its own warning.
fn deprecation_warning(
    crd: &CustomResourceDefinition,
    v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion,
    by_priority: &[String],
) -> Option<String> {
    if v.deprecated != Some(true) {
        return None;
    }
    if let Some(w) = &v.deprecation_warning {
        return Some(w.clone());
    }
    let (group, kind) = (&crd.spec.group, &crd.spec.names.kind);
    let mut text = format!("{group}/{} {kind} is deprecated", v.name);
    let replacement = by_priority
        .iter()
        .find(|name| crd.spec.versions.iter().any(|o| &o.name == *name && o.served && o.deprecated != Some(true)));
    if let Some(r) = replacement {
        text.push_str(&format!("; use {group}/{r} {kind}"));
    }
    Some(text)
}
