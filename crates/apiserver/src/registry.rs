//! The served resources: built-in kinds plus whatever [`ResourceDef`]s drydock registers
//! (the Cluster API kinds), looked up by URL segments or by group and kind.

use std::collections::HashMap;
use std::sync::Arc;

use drydock_api::ResourceDef;
use serde_json::Value;

use crate::schema;
use crate::store::{ResId, ResourceNames};

/// Converts objects between a resource's served shape and the shape of the resource whose
/// storage it shares (events.k8s.io/v1 Events are stored as core/v1 Events).
pub struct Conversion {
    pub to_storage: fn(Value) -> Value,
    pub from_storage: fn(Value) -> Value,
    /// Maps a served field-selector path to the stored one.
    pub field: fn(&str) -> String,
}

/// One served resource.
pub struct Resource {
    pub id: ResId,
    pub def: ResourceDef,
    /// The resource whose table holds this one's objects (itself unless converted).
    pub storage: ResId,
    pub conversion: Option<Conversion>,
    /// The compiled schema (`None`: the kind has none, only metadata is checked).
    pub validator: Option<Arc<schema::Validator>>,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("id", &self.id).field("def", &self.def).finish_non_exhaustive()
    }
}

impl Resource {
    pub fn is_core(&self) -> bool {
        self.def.group.is_empty()
    }
}

/// All served resources, immutable once the server starts.
pub struct Registry {
    resources: Vec<Arc<Resource>>,
    by_path: HashMap<(String, String, String), ResId>,
    by_kind: HashMap<(String, String), ResId>,
    by_log_prefix: HashMap<String, ResId>,
    log_prefixes: Vec<String>,
}

impl Registry {
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Finds `plural` in `group/version`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<Resource>> {
        let id = self.by_path.get(&(group.to_string(), version.to_string(), plural.to_string()))?;
        self.resources.get(*id as usize)
    }

    /// Finds a kind in a group (any version).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&Arc<Resource>> {
        let id = self.by_kind.get(&(group.to_string(), kind.to_string()))?;
        self.resources.get(*id as usize)
    }

    pub fn get(&self, id: ResId) -> Option<&Arc<Resource>> {
        self.resources.get(id as usize)
    }

    pub fn all(&self) -> &[Arc<Resource>] {
        &self.resources
    }

    /// The groups served, in registration order, each with its versions.
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
        out
    }
}

impl ResourceNames for Registry {
    fn log_prefix(&self, res: ResId) -> String {
        self.log_prefixes.get(res as usize).cloned().unwrap_or_default()
    }
    fn resolve(&self, group_plural: &str) -> Option<ResId> {
        self.by_log_prefix.get(group_plural).copied()
    }
    fn count(&self) -> usize {
        self.resources.len()
    }
    fn selectable(&self, res: ResId) -> &[String] {
        self.resources.get(res as usize).map(|r| r.def.selectable_fields.as_slice()).unwrap_or(&[])
    }
}

/// Where a converted resource is stored: (group, plural) of the storage resource.
type StoredAs = (String, String, Conversion);

#[derive(Default)]
pub struct RegistryBuilder {
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

    pub fn build(self) -> anyhow::Result<Registry> {
        let mut reg = Registry {
            resources: Vec::new(),
            by_path: HashMap::new(),
            by_kind: HashMap::new(),
            by_log_prefix: HashMap::new(),
            log_prefixes: Vec::new(),
        };
        let mut pending = Vec::new();
        for (i, (def, conv)) in self.defs.into_iter().enumerate() {
            let id = i as ResId;
            let path = (def.group.clone(), def.version.clone(), def.plural.clone());
            anyhow::ensure!(!reg.by_path.contains_key(&path), "resource {path:?} registered twice");
            reg.by_path.insert(path, id);
            reg.by_kind.entry((def.group.clone(), def.kind.clone())).or_insert(id);
            let prefix = format!("{}/{}", def.group, def.plural);
            reg.by_log_prefix.entry(prefix.clone()).or_insert(id);
            reg.log_prefixes.push(prefix);
            let conversion = match conv {
                Some((g, p, c)) => {
                    pending.push((id, format!("{g}/{p}")));
                    Some(c)
                }
                None => None,
            };
            let validator = schema::Validator::for_def(&def)?;
            reg.resources.push(Arc::new(Resource { id, def, storage: id, conversion, validator }));
        }
        for (id, storage) in pending {
            let target = *reg
                .by_log_prefix
                .get(&storage)
                .ok_or_else(|| anyhow::anyhow!("storage resource {storage} is not registered"))?;
            let r = &mut reg.resources[id as usize];
            let r = Arc::get_mut(r).ok_or_else(|| anyhow::anyhow!("registry shared while building"))?;
            r.storage = target;
        }
        Ok(reg)
    }
}
