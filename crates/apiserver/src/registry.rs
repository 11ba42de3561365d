//! The served resources. A [`Registry`] is an immutable snapshot: the built-in kinds, plus
//! in a logical cluster with CustomResourceDefinitions, one resource per served version of
//! each established CRD. [`Registries`] holds the snapshot of every logical cluster and
//! swaps one when its CRDs change; a request finds its resource with one hash lookup.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use drydock_api::resource::NativeKind;
use drydock_api::{Admission, ResourceDef};
use parking_lot::RwLock;
use serde_json::Value;

use crate::crd::Served;
use crate::managed::MergeType;
use crate::schema;
use crate::store::{ResId, ResIds};

/// Converts objects between a resource's served shape and the shape of the resource whose
/// storage it shares (events.k8s.io/v1 Events are stored as core/v1 Events).
pub struct Conversion {
    pub to_storage: fn(Value) -> Value,
    pub from_storage: fn(Value) -> Value,
    /// Maps a served field-selector path to the stored one.
    pub field: fn(&str) -> String,
}

/// One served resource (one version of a kind).
pub struct Resource {
    /// The interned storage key `group/plural` of this resource.
    pub id: ResId,
    pub def: ResourceDef,
    /// The resource whose table holds this one's objects (itself unless converted).
    pub storage: ResId,
    pub conversion: Option<Conversion>,
    /// How a CRD serves this version (storage version, conversion, lifecycle); `None` for
    /// built-in kinds.
    pub custom: Option<Arc<Served>>,
    /// The compiled schema (`None`: the kind has none, only metadata is checked).
    pub validator: Option<Arc<schema::Validator>>,
    /// How fields merge and are owned, derived from the schema on first write.
    merge_type: OnceLock<MergeType>,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("id", &self.id).field("def", &self.def).finish_non_exhaustive()
    }
}

impl Resource {
    /// The one place a served resource is put together.
    pub fn new(
        id: ResId,
        def: ResourceDef,
        storage: ResId,
        conversion: Option<Conversion>,
        custom: Option<Arc<Served>>,
    ) -> Self {
        // A CRD's schemas are compiled when it is written, so this fails only for a schema
        // stored before a check existed; such a version is served with metadata checks only.
        let validator = schema::Validator::for_def(&def).unwrap_or_else(|e| {
            tracing::error!(error = %e, "schema does not compile; serving without schema validation");
            None
        });
        Self { id, def, storage, conversion, custom, validator, merge_type: OnceLock::new() }
    }

    /// Like [`Resource::new`], failing when the schema does not compile (built-in and
    /// native kinds: a bug, caught at start).
    pub fn try_new(
        id: ResId,
        def: ResourceDef,
        storage: ResId,
        conversion: Option<Conversion>,
        custom: Option<Arc<Served>>,
    ) -> anyhow::Result<Self> {
        let validator = schema::Validator::for_def(&def)?;
        Ok(Self { id, def, storage, conversion, custom, validator, merge_type: OnceLock::new() })
    }

    /// How this resource's fields merge and are owned (server-side apply, managedFields).
    pub fn merge_type(&self) -> &MergeType {
        self.merge_type.get_or_init(|| match &self.validator {
            Some(v) => {
                let builtin = crate::builtin::is_builtin_group(&self.def.group);
                MergeType::from_schema(v.schema(), builtin.then_some(self.def.kind.as_str()))
            }
            None => MergeType::schemaless(),
        })
    }

    pub fn is_core(&self) -> bool {
        self.def.group.is_empty()
    }

    /// Whether objects are stored in this version's shape (built-ins, and a CRD's storage version).
    pub fn is_storage_version(&self) -> bool {
        self.custom.as_ref().is_none_or(|c| c.storage_version == self.def.version)
    }
}

/// All resources served in one logical cluster, immutable once built.
pub struct Registry {
    ids: Arc<ResIds>,
    resources: Vec<Arc<Resource>>,
    by_path: HashMap<(String, String, String), Arc<Resource>>,
    by_kind: HashMap<(String, String), Arc<Resource>>,
    /// The resource objects of an id are read and written as (storage version of a CRD).
    by_id: HashMap<ResId, Arc<Resource>>,
}

impl Registry {
    pub fn builder(ids: Arc<ResIds>) -> RegistryBuilder {
        RegistryBuilder { ids, defs: Vec::new() }
    }

    /// Finds `plural` in `group/version`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<Resource>> {
        self.by_path.get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Finds a kind in a group (any version).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&Arc<Resource>> {
        self.by_kind.get(&(group.to_string(), kind.to_string()))
    }

    /// The resource whose objects are stored under `id` (a CRD's storage version).
    pub fn get(&self, id: ResId) -> Option<&Arc<Resource>> {
        self.by_id.get(&id)
    }

    /// Finds a resource by group and plural (its storage version).
    pub fn by_plural(&self, group: &str, plural: &str) -> Option<&Arc<Resource>> {
        self.resources.iter().find(|r| r.def.group == group && r.def.plural == plural && r.is_storage_version())
    }

    pub fn all(&self) -> &[Arc<Resource>] {
        &self.resources
    }

    pub fn ids(&self) -> &Arc<ResIds> {
        &self.ids
    }

    /// The groups served, in registration order, each with its versions in Kubernetes
    /// version priority across all its kinds (as kube-apiserver orders them), so the first is
    /// the preferred one.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.resources {
            let g = &r.def.group;
            match out.iter_mut().find(|(name, _)| name == g) {
                Some((_, versions)) => {
                    if !versions.contains(&r.def.version) {
                        versions.push(r.def.version.clone());
                    }
                }
                None => out.push((g.clone(), vec![r.def.version.clone()])),
            }
        }
        for (_, versions) in &mut out {
            crate::crd::sort_by_priority(versions);
        }
        out
    }

    /// A snapshot serving this registry's resources and then `extra`.
    pub fn with(&self, extra: Vec<Resource>) -> Registry {
        let mut reg = Registry {
            ids: self.ids.clone(),
            resources: self.resources.clone(),
            by_path: self.by_path.clone(),
            by_kind: self.by_kind.clone(),
            by_id: self.by_id.clone(),
        };
        for r in extra {
            let path = (r.def.group.clone(), r.def.version.clone(), r.def.plural.clone());
            if reg.by_path.contains_key(&path) {
                // A built-in kind wins over a CRD claiming its name.
                continue;
            }
            reg.insert(Arc::new(r));
        }
        reg
    }

    fn insert(&mut self, r: Arc<Resource>) {
        let path = (r.def.group.clone(), r.def.version.clone(), r.def.plural.clone());
        self.by_path.insert(path, r.clone());
        self.by_kind.entry((r.def.group.clone(), r.def.kind.clone())).or_insert_with(|| r.clone());
        if r.is_storage_version() {
            // Built-ins register before the log is read; the CRD controller records (and
            // reindexes) a CRD's.
            if r.custom.is_none() {
                self.ids.set_selectable(r.id, &r.def.selectable_fields);
            }
            self.by_id.insert(r.id, r.clone());
        }
        self.resources.push(r);
    }
}

/// Where a converted resource is stored: (group, plural) of the storage resource.
type StoredAs = (String, String, Conversion);

pub struct RegistryBuilder {
    ids: Arc<ResIds>,
    defs: Vec<(ResourceDef, Option<StoredAs>)>,
}

impl RegistryBuilder {
    /// Serves a resource with its own storage.
    pub fn add(&mut self, def: ResourceDef) -> &mut Self {
        self.defs.push((def, None));
        self
    }

    /// Serves a resource stored in the table of `(storage group, storage plural)`.
    pub fn add_converted(
        &mut self,
        def: ResourceDef,
        storage_group: &str,
        storage_plural: &str,
        c: Conversion,
    ) -> &mut Self {
        self.defs.push((def, Some((storage_group.into(), storage_plural.into(), c))));
        self
    }

    /// Attaches admission to an already added kind (e.g. CRD validation to the
    /// apiextensions kind).
    pub fn set_admission(&mut self, group: &str, kind: &str, admission: Arc<dyn Admission>) -> &mut Self {
        for (def, _) in self.defs.iter_mut().filter(|(d, _)| d.group == group && d.kind == kind) {
            def.admission = Some(admission.clone());
        }
        self
    }

    pub fn build(self) -> anyhow::Result<Registry> {
        let mut reg = Registry {
            ids: self.ids.clone(),
            resources: Vec::new(),
            by_path: HashMap::new(),
            by_kind: HashMap::new(),
            by_id: HashMap::new(),
        };
        for (def, conv) in self.defs {
            let path = (def.group.clone(), def.version.clone(), def.plural.clone());
            anyhow::ensure!(!reg.by_path.contains_key(&path), "resource {path:?} registered twice");
            let id = self.ids.intern(&def.group, &def.plural);
            let (storage, conversion) = match conv {
                Some((g, p, c)) => (self.ids.intern(&g, &p), Some(c)),
                None => (id, None),
            };
            reg.insert(Arc::new(Resource::try_new(id, def, storage, conversion, None)?));
        }
        Ok(reg)
    }
}

/// The registry snapshot of every logical cluster: the built-ins everywhere, plus a
/// snapshot with CRD resources for each cluster that has established CRDs.
pub struct Registries {
    builtin: Arc<Registry>,
    clusters: RwLock<HashMap<Arc<str>, Arc<Registry>>>,
    /// Native admission and conversion of drydock's own kinds, attached by (group, kind)
    /// to the resources their CRDs serve.
    natives: HashMap<(String, String), NativeHooks>,
}

struct NativeHooks {
    admission: Option<Arc<dyn Admission>>,
    conversion: Option<Arc<dyn drydock_api::conversion::Conversion>>,
}

impl Registries {
    pub fn new(builtin: Arc<Registry>, natives: &[NativeKind]) -> Self {
        let natives = natives
            .iter()
            .map(|k| {
                let hooks = NativeHooks { admission: k.admission.clone(), conversion: k.conversion.clone() };
                ((k.group().to_string(), k.kind().to_string()), hooks)
            })
            .collect();
        Self { builtin, clusters: RwLock::new(HashMap::new()), natives }
    }

    /// The built-in kinds, served in every logical cluster.
    pub fn builtin(&self) -> &Arc<Registry> {
        &self.builtin
    }

    /// What logical cluster `cluster` serves (the wildcard cluster reads the root's).
    pub fn for_cluster(&self, cluster: &str) -> Arc<Registry> {
        let key = if cluster == drydock_api::tenancy::LogicalClusterName::WILDCARD {
            drydock_api::tenancy::LogicalClusterName::ROOT
        } else {
            cluster
        };
        self.clusters.read().get(key).cloned().unwrap_or_else(|| self.builtin.clone())
    }

    /// Replaces the CRD resources of a logical cluster (none: back to the built-ins).
    pub fn set(&self, cluster: &str, extra: Vec<Resource>) {
        let mut clusters = self.clusters.write();
        if extra.is_empty() {
            clusters.remove(cluster);
        } else {
            clusters.insert(Arc::from(cluster), Arc::new(self.builtin.with(extra)));
        }
    }

    pub fn native_admission(&self, group: &str, kind: &str) -> Option<Arc<dyn Admission>> {
        self.natives.get(&(group.to_string(), kind.to_string()))?.admission.clone()
    }

    /// drydock's own conversion of a kind it serves in several versions.
    pub fn native_conversion(&self, group: &str, kind: &str) -> Option<Arc<dyn drydock_api::conversion::Conversion>> {
        self.natives.get(&(group.to_string(), kind.to_string()))?.conversion.clone()
    }
}
