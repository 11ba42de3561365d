//! The REST semantics of the API server, independent of HTTP: what create, get, list,
//! update, patch, delete and watch do to the store. The HTTP layer parses requests into
//! [`Target`]s and options and renders the results; in-process controllers of the server
//! itself (garbage collection, namespace lifecycle) call the same functions.

mod apply;
mod create;
mod delete;
mod guard;
mod list_options;
pub mod meta;
mod prepare;
mod read;
mod scale;
mod versions;
mod write;

use std::sync::Arc;

use bytes::Bytes;
use drydock_api::tenancy::CLUSTER_ANNOTATION;
use serde_json::Value;

use crate::builtin::services::ServiceAllocations;
use crate::error::{ApiError, ApiResult};
use crate::managed::{self, Live};
use crate::registry::{Registries, Registry, Resource};
use crate::store::{ObjKey, ResId, Store, Stored};

pub use delete::{DeleteOptions, Propagation};
pub use guard::WriteGuard;
pub use list_options::{Continue, ListOptions};
pub use read::{ListResult, WatchStart, is_wildcard};
pub use write::{FieldValidation, WriteOptions, Written};

/// Subresources served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    Status,
    Scale,
}

/// What a request addresses.
#[derive(Clone, Debug)]
pub struct Target {
    pub cluster: Arc<str>,
    pub res: Arc<Resource>,
    /// Namespace of a namespaced request; `None` lists across namespaces.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub sub: Option<Subresource>,
}

impl Target {
    pub fn key(&self, name: &str) -> ObjKey {
        ObjKey {
            cluster: self.cluster.clone(),
            res: self.res.storage,
            namespace: if self.res.def.namespaced { self.namespace.clone().unwrap_or_default() } else { String::new() },
            name: name.to_string(),
        }
    }

    pub fn name(&self) -> ApiResult<&str> {
        self.name.as_deref().ok_or_else(|| ApiError::method_not_allowed("a resource name is required"))
    }
}

/// The API: store plus the registry snapshots of every logical cluster.
#[derive(Clone)]
pub struct Api {
    pub store: Arc<Store>,
    /// The built-in kinds, served in every logical cluster.
    pub registry: Arc<Registry>,
    /// What each logical cluster serves (built-ins plus its established CRDs).
    pub registries: Arc<Registries>,
    /// Serializes Service creates while they allocate cluster IPs and node ports.
    pub(crate) services: Arc<ServiceAllocations>,
}

impl Api {
    /// An API serving only `registry`'s kinds until CRDs are established.
    pub fn new(store: Arc<Store>, registry: Arc<Registry>) -> Self {
        Self::with_registries(store, Arc::new(Registries::new(registry, &[])))
    }

    pub fn with_registries(store: Arc<Store>, registries: Arc<Registries>) -> Self {
        Self { store, registry: registries.builtin().clone(), registries, services: Arc::default() }
    }

    /// The storage id of `group/plural` (allocated on first sight).
    pub fn store_id(&self, group: &str, plural: &str) -> ResId {
        self.registry.ids().intern(group, plural)
    }

    /// The object's bytes as served by `res`: the stored bytes themselves unless `res`
    /// shares another's storage or is a CRD version whose reads rewrite the object.
    pub fn encode(&self, res: &Resource, obj: &Stored) -> ApiResult<Bytes> {
        let rewrites = res.conversion.is_some() || res.custom.as_ref().is_some_and(|c| c.rewrites_reads);
        if !rewrites {
            return Ok(obj.bytes.clone());
        }
        let v = self.value(res, obj)?;
        Ok(Bytes::from(serde_json::to_vec(&v).map_err(|e| ApiError::internal(e.to_string()))?))
    }

    /// Like [`Api::encode`], naming the object's logical cluster in an annotation when
    /// `cluster` is given (objects of wildcard reads).
    pub fn encode_in(&self, res: &Resource, obj: &Stored, cluster: Option<&str>) -> ApiResult<Bytes> {
        let Some(cluster) = cluster else { return self.encode(res, obj) };
        let mut v = self.value(res, obj)?;
        v["metadata"]["annotations"][CLUSTER_ANNOTATION] = Value::String(cluster.to_string());
        Ok(Bytes::from(serde_json::to_vec(&v).map_err(|e| ApiError::internal(e.to_string()))?))
    }

    /// The object as served by `res`, parsed.
    pub fn value(&self, res: &Resource, obj: &Stored) -> ApiResult<Value> {
        let v = obj.to_value().map_err(not_parsed)?;
        self.served(res, v)
    }

    /// Like [`Api::value`], with the managedFields left out of the object and unparsed.
    pub fn value_and_managed<'a>(&self, res: &Resource, obj: &'a Stored) -> ApiResult<(Value, Option<Live<'a>>)> {
        let (v, managed) = managed::parse_object(&obj.bytes).map_err(not_parsed)?;
        Ok((self.served(res, v)?, managed))
    }

    /// A parsed stored object in the shape `res` serves.
    fn served(&self, res: &Resource, v: Value) -> ApiResult<Value> {
        if let Some(c) = &res.custom {
            return if c.rewrites_reads { c.converter.from_storage(v, &res.def.version) } else { Ok(v) };
        }
        Ok(match &res.conversion {
            None => v,
            Some(c) => (c.from_storage)(v),
        })
    }

    /// An object written through `res`, in its stored shape.
    fn to_storage(&self, res: &Resource, obj: Value) -> ApiResult<Value> {
        if let Some(c) = &res.custom {
            return c.converter.to_storage(obj, &res.def.version);
        }
        Ok(match &res.conversion {
            Some(c) => (c.to_storage)(obj),
            None => obj,
        })
    }

    /// Selectable field paths of the storage resource behind `res`.
    fn storage_selectable<'a>(&'a self, res: &'a Resource) -> &'a [String] {
        if let Some(c) = &res.custom {
            return &c.storage_selectable;
        }
        self.registry.get(res.storage).map(|r| r.def.selectable_fields.as_slice()).unwrap_or(&[])
    }

    /// Whether a namespace exists in a logical cluster, and whether it is terminating.
    pub fn namespace_state(&self, cluster: &Arc<str>, ns: &str) -> Option<bool> {
        let res = self.registry.lookup("", "v1", "namespaces")?;
        let key = ObjKey { cluster: cluster.clone(), res: res.id, namespace: String::new(), name: ns.to_string() };
        self.store.get(&key).map(|o| o.meta.deleting)
    }
}

/// Parses a resourceVersion given by a client.
pub fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>().map_err(|_| ApiError::bad_request(format!("invalid resource version: \"{s}\"")))
}

pub(super) fn not_parsed(e: serde_json::Error) -> ApiError {
    ApiError::internal(format!("stored object does not parse: {e}"))
}
