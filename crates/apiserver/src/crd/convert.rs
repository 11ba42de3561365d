//! Conversion of custom resources between a CRD's versions. Objects are stored at the
//! storage version; a read of another version converts, a write converts to storage.
//! `None` rewrites `apiVersion` and prunes by the target version's schema; `Webhook`
//! asks the CRD's conversion webhook ([`super::webhook`]).

use std::collections::HashMap;
use std::sync::Arc;

use drydock_api::resource::CrdError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use super::webhook::Webhook;
use crate::error::ApiResult;
use crate::schema;

/// Converts the objects of one CRD between its versions.
pub struct Converter {
    group: String,
    storage_version: String,
    /// The compiled `openAPIV3Schema` of every version (served or not).
    schemas: HashMap<String, Option<Arc<schema::Validator>>>,
    /// The storage version's schema, when it declares defaults (applied on every read).
    storage_defaults: Option<Arc<schema::Validator>>,
    webhook: Option<Webhook>,
}

impl Converter {
    pub fn new(crd: &CustomResourceDefinition) -> Result<Self, CrdError> {
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
        let webhook = match spec.conversion.as_ref() {
            Some(c) if c.strategy == "Webhook" => Some(Webhook::new(c.webhook.as_ref())),
            _ => None,
        };
        Ok(Self { group: spec.group.clone(), storage_version, schemas, storage_defaults, webhook })
    }

    pub fn storage_has_defaults(&self) -> bool {
        self.storage_defaults.is_some()
    }

    /// A stored object as version `version` serves it: the storage schema's defaults
    /// applied (not written back), then converted.
    pub fn from_storage(&self, mut obj: Value, version: &str) -> ApiResult<Value> {
        if let Some(s) = &self.storage_defaults {
            schema::default_object(s, &mut obj);
        }
        if version == self.storage_version { Ok(obj) } else { self.convert(obj, version) }
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
        let mut out = match &self.webhook {
            Some(w) => w.convert(obj, &api_version)?,
            None => {
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
