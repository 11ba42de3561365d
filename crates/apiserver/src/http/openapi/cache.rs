//! The published documents of a registry, built once per registry and shared by every
//! request and logical cluster serving that registry.
//!
//! Registries are immutable; a change of the served kinds is a new `Arc<Registry>`, so the
//! registry's identity is the cache key. Entries hold the registry weakly: a replaced
//! registry's documents are dropped at the next build.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Weak};

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::Value;

use super::{v2, v3};
use crate::error::{ApiError, ApiResult};
use crate::registry::Registry;

/// One serialized document and its hash (uppercase hex SHA-512, kube-apiserver's ETag).
pub struct Published {
    pub body: Bytes,
    pub hash: String,
}

impl Published {
    fn new(doc: &Value) -> ApiResult<Self> {
        let body =
            serde_json::to_vec(doc).map_err(|e| ApiError::internal(format!("encoding OpenAPI document: {e}")))?;
        let digest = ring::digest::digest(&ring::digest::SHA512, &body);
        let hash = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        Ok(Self { body: body.into(), hash })
    }
}

/// Everything `/openapi/v2` and `/openapi/v3` serve for one registry.
pub struct Documents {
    /// Group-version documents keyed like the v3 index (`api/v1`, `apis/<g>/<v>`).
    pub v3: BTreeMap<String, Published>,
    pub v2: Published,
}

/// Builds the documents of a registry (a pure function of it).
pub fn build(reg: &Registry) -> ApiResult<Documents> {
    let v3_docs = v3::documents(reg);
    let v2 = Published::new(&v2::document(&v3_docs))?;
    let mut v3 = BTreeMap::new();
    for (key, doc) in &v3_docs {
        v3.insert(key.clone(), Published::new(doc)?);
    }
    Ok(Documents { v3, v2 })
}

type Entries = Vec<(Weak<Registry>, Arc<Documents>)>;

static CACHE: LazyLock<Mutex<Entries>> = LazyLock::new(|| Mutex::new(Vec::new()));
/// Held while building, so concurrent first requests build once.
static BUILDING: LazyLock<Mutex<()>> = LazyLock::new(|| Mutex::new(()));

fn cached(reg: &Arc<Registry>) -> Option<Arc<Documents>> {
    let cache = CACHE.lock();
    // A weak pointer keeps its allocation, so an address held here is never reused by
    // another registry: equal addresses mean the same registry.
    cache.iter().find(|(r, _)| std::ptr::eq(r.as_ptr(), Arc::as_ptr(reg))).map(|(_, d)| d.clone())
}

fn cached_or_build(reg: &Arc<Registry>) -> ApiResult<Arc<Documents>> {
    let _building = BUILDING.lock();
    if let Some(docs) = cached(reg) {
        return Ok(docs);
    }
    let docs = Arc::new(build(reg)?);
    let mut cache = CACHE.lock();
    cache.retain(|(r, _)| r.strong_count() > 0);
    cache.push((Arc::downgrade(reg), docs.clone()));
    Ok(docs)
}

/// The documents of `reg`, built off the async workers the first time they are asked for.
pub async fn documents(reg: &Arc<Registry>) -> ApiResult<Arc<Documents>> {
    if let Some(docs) = cached(reg) {
        return Ok(docs);
    }
    let reg = reg.clone();
    tokio::task::spawn_blocking(move || cached_or_build(&reg))
        .await
        .map_err(|e| ApiError::internal(format!("building OpenAPI documents: {e}")))?
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// Every kind drydock serves: the built-in kinds and the Cluster API kinds.
    fn full_registry() -> Registry {
        let mut b = Registry::builder(crate::store::ResIds::new());
        crate::builtin::register(&mut b);
        for def in drydock_api::capi::resources() {
            b.add(def);
        }
        b.build().expect("registry")
    }

    #[test]
    fn documents_of_the_full_registry_build_quickly_and_once() {
        let reg = Arc::new(full_registry());
        let started = Instant::now();
        let docs = cached_or_build(&reg).expect("build");
        let took = started.elapsed();
        let bytes: usize = docs.v3.values().map(|d| d.body.len()).sum::<usize>() + docs.v2.body.len();
        println!("built {} v3 documents and v2 ({bytes} bytes) in {took:?}", docs.v3.len());
        assert!(took.as_secs_f64() < 5.0, "building took {took:?}");
        assert!(docs.v3.contains_key("apis/cluster.x-k8s.io/v1beta1"), "{:?}", docs.v3.keys().collect::<Vec<_>>());
        // The same registry is served from the cache; another registry gets its own.
        assert!(Arc::ptr_eq(&docs, &cached_or_build(&reg).expect("cached")));
        let other = Arc::new(full_registry());
        assert!(!Arc::ptr_eq(&docs, &cached_or_build(&other).expect("other")));
        assert_eq!(
            docs.v2.hash,
            cached_or_build(&other).expect("other").v2.hash,
            "documents are a function of the kinds"
        );
    }
}
