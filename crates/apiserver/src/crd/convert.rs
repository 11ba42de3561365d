//! Conversion of custom resources between a CRD's versions. Objects are stored at the
//! storage version; a read of another version converts, a write converts to storage.
//! `None` rewrites `apiVersion` and prunes by the target version's schema; `Webhook`
//! asks the CRD's conversion webhook ([`super::webhook`]), unless the kind is one drydock
//! converts itself (its own Cluster API kinds), which is then converted in process.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use drydock_api::admission::{FieldError, FieldPath};
use drydock_api::conversion::{Conversion, RefVersions};
use drydock_api::resource::CrdError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use super::webhook::Webhook;
use crate::error::{ApiError, ApiResult};
use crate::registry::Registries;
use crate::schema;

/// How a CRD's objects change version.
enum Strategy {
    /// `None`: only `apiVersion` changes.
    Rename,
    Webhook(Webhook),
    /// drydock's own conversion, with the referenced kinds' versions from `refs`.
    Native(Arc<dyn Conversion>, RefLookup),
}

/// Answers which version a reference to a kind names, from the CRDs a logical cluster
/// serves: the version their Cluster API contract label lists, else the preferred one.
pub struct RefLookup {
    registries: Weak<Registries>,
    cluster: String,
    /// For admission's reads of other objects (absent: nothing is found).
    store: Option<Weak<crate::store::Store>>,
}

/// The version a CRD's contract labels name, if any.
pub fn contract_version(crd: &CustomResourceDefinition) -> Option<String> {
    drydock_api::capi::contract::version_from_labels(crd.metadata.labels.as_ref()?).map(str::to_string)
}

impl RefLookup {
    pub fn new(registries: &Arc<Registries>, cluster: &str) -> Self {
        Self { registries: Arc::downgrade(registries), cluster: cluster.to_string(), store: None }
    }

    /// Also answers [`RefVersions::stored`] from `store`.
    pub fn with_store(mut self, store: &Arc<crate::store::Store>) -> Self {
        self.store = Some(Arc::downgrade(store));
        self
    }
}

impl RefVersions for RefLookup {
    fn api_version(&self, group: &str, kind: &str) -> Option<String> {
        let registry = self.registries.upgrade()?.for_cluster(&self.cluster);
        let mut same_kind = registry.all().iter().filter(|r| r.def.group == group && r.def.kind == kind).peekable();
        let preferred = same_kind.peek()?.def.api_version();
        let contract = same_kind.find_map(|r| r.custom.as_ref()?.contract_version.clone());
        Some(contract.map_or(preferred, |v| format!("{group}/{v}")))
    }

    fn stored(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let store = self.store.as_ref()?.upgrade()?;
        let registry = self.registries.upgrade()?.for_cluster(&self.cluster);
        let res = registry.all().iter().find(|r| r.def.group == group && r.def.kind == kind)?.storage;
        let key = crate::store::ObjKey {
            cluster: store.cluster_name(&self.cluster),
            res,
            namespace: namespace.to_string(),
            name: name.to_string(),
        };
        store.get(&key)?.to_value().ok()
    }

    fn stored_list(&self, group: &str, kind: &str, namespace: Option<&str>) -> Vec<Value> {
        let (Some(store), Some(registries)) = (self.store.as_ref().and_then(Weak::upgrade), self.registries.upgrade())
        else {
            return Vec::new();
        };
        let registry = registries.for_cluster(&self.cluster);
        let Some(res) = registry.all().iter().find(|r| r.def.group == group && r.def.kind == kind).map(|r| r.storage)
        else {
            return Vec::new();
        };
        let q = crate::store::ListQuery { cluster: &self.cluster, res, namespace, ..Default::default() };
        store.list(&q, &|_, _| true).items.iter().filter_map(|s| s.to_value().ok()).collect()
    }

    fn check_schema(&self, schema: &Value, value: &Value, path: &FieldPath) -> Vec<FieldError> {
        schema::check_value(schema, value, path)
    }
}

/// Converts the objects of one CRD between its versions.
pub struct Converter {
    group: String,
    storage_version: String,
    /// The compiled `openAPIV3Schema` of every version (served or not).
    schemas: HashMap<String, Option<Arc<schema::Validator>>>,
    /// The storage version's schema, when it declares defaults (applied on every read).
    storage_defaults: Option<Arc<schema::Validator>>,
    strategy: Strategy,
}

impl Converter {
    /// `native`: drydock's own conversion of the kind, which takes the place of the CRD's.
    pub fn new(
        crd: &CustomResourceDefinition,
        native: Option<(Arc<dyn Conversion>, RefLookup)>,
    ) -> Result<Self, CrdError> {
        let spec = &crd.spec;
        let storage_version = spec.versions.iter().find(|v| v.storage).ok_or(CrdError::NoVersion)?.name.clone();
        let mut schemas = HashMap::new();
        for v in &spec.versions {
            let schema = match v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) {
                Some(s) => {
                    let value = Arc::new(serde_json::to_value(s).map_err(|e| CrdError::Schema(e.to_string()))?);
                    let compiled = schema::Validator::compile(value).map_err(|errs| {
                        CrdError::Schema(errs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
                    })?;
                    Some(Arc::new(compiled))
                }
                None => None,
            };
            schemas.insert(v.name.clone(), schema);
        }
        let storage_defaults = schemas.get(&storage_version).cloned().flatten().filter(|s| s.has_defaults());
        let strategy = match (native, spec.conversion.as_ref()) {
            (Some((conversion, refs)), _) => Strategy::Native(conversion, refs),
            (None, Some(c)) if c.strategy == "Webhook" => Strategy::Webhook(Webhook::new(c.webhook.as_ref())),
            _ => Strategy::Rename,
        };
        Ok(Self { group: spec.group.clone(), storage_version, schemas, storage_defaults, strategy })
    }

    pub fn storage_has_defaults(&self) -> bool {
        self.storage_defaults.is_some()
    }

    /// A stored object as version `version` serves it: the storage schema's defaults
    /// applied (not written back), then converted. An object stored before the storage
    /// version changed is still in the version it was written in: it is converted too.
    pub fn from_storage(&self, mut obj: Value, version: &str) -> ApiResult<Value> {
        if let Some(s) = &self.storage_defaults
            && self.is_at(&obj, &self.storage_version)
        {
            schema::default_object(s, &mut obj);
        }
        if self.is_at(&obj, version) { Ok(obj) } else { self.convert(obj, version) }
    }

    /// [`Converter::from_storage`] of an object stored and served in the storage version,
    /// whose top-level members named in `apart` are left out (kept as stored, not
    /// defaulted); `None` for an object stored in another version.
    pub fn from_storage_apart(&self, mut obj: Value, version: &str, apart: &[&str]) -> Option<Value> {
        if version != self.storage_version || !self.is_at(&obj, version) {
            return None;
        }
        if let Some(s) = &self.storage_defaults {
            schema::default_object_apart(s, &mut obj, apart);
        }
        Some(obj)
    }

    fn is_at(&self, obj: &Value, version: &str) -> bool {
        obj.get("apiVersion").and_then(Value::as_str).and_then(|av| av.strip_prefix(self.group.as_str()))
            == Some(&format!("/{version}"))
    }

    /// An object written at `version`, converted to the storage version.
    pub fn to_storage(&self, obj: Value, version: &str) -> ApiResult<Value> {
        if version == self.storage_version { Ok(obj) } else { self.convert(obj, &self.storage_version) }
    }

    fn convert(&self, obj: Value, to: &str) -> ApiResult<Value> {
        let api_version = format!("{}/{to}", self.group);
        if obj.get("apiVersion").and_then(Value::as_str) == Some(api_version.as_str()) {
            return Ok(obj);
        }
        let mut out = match &self.strategy {
            Strategy::Webhook(w) => w.convert(obj, &api_version)?,
            Strategy::Native(c, refs) => {
                c.convert(obj, &api_version, refs).map_err(|e| ApiError::internal(e.to_string()))?
            }
            Strategy::Rename => {
                let mut obj = obj;
                obj["apiVersion"] = Value::String(api_version);
                obj
            }
        };
        if let Some(s) = self.schemas.get(to).cloned().flatten() {
            s.process(&mut out, None);
        }
        Ok(out)
    }
}
