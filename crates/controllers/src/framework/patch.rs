//! One way to write changes: reconcilers compute the object they want from the object they
//! read, and [`apply_changes`] issues a merge patch of the main resource and one of the
//! status subresource, each only when something differs. Main-resource patches carry the
//! resourceVersion they were computed from, so a concurrent change makes them conflict
//! (and the reconcile retry) instead of silently overwriting it.

use std::fmt::Debug;

use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::diff::merge_diff;
use super::error::{Error, Result};
use super::metrics;

/// What a call to [`apply_changes`] wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub main: bool,
    pub status: bool,
}

fn split(v: &mut Value) -> Value {
    v.as_object_mut().and_then(|m| m.remove("status")).unwrap_or(Value::Null)
}

/// Writes what differs between `before` (as read) and `after` (as wanted). Returns the
/// object as last written (or `after` when nothing was written) and what was written.
pub async fn apply_changes<K>(api: &Api<K>, controller: &str, before: &K, after: &K) -> Result<(K, Written)>
where
    K: Resource + Serialize + DeserializeOwned + Clone + Debug,
{
    let mut old = serde_json::to_value(before)?;
    let mut new = serde_json::to_value(after)?;
    let old_status = split(&mut old);
    let new_status = split(&mut new);
    let name = before.name_any();
    let gone = |e: kube::Error| match e {
        kube::Error::Api(s) if s.code == 404 => Error::Gone(name.clone()),
        e => Error::Kube(e),
    };
    let mut current = after.clone();
    let mut written = Written::default();
    if let Some(mut patch) = merge_diff(&old, &new) {
        patch["metadata"]["resourceVersion"] = json!(before.resource_version());
        current = api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await.map_err(gone)?;
        metrics::write(controller);
        written.main = true;
    }
    if let Some(diff) = merge_diff(&old_status, &new_status) {
        let status = if new_status.is_null() { Value::Null } else { diff };
        current = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&json!({"status": status})))
            .await
            .map_err(gone)?;
        metrics::write(controller);
        written.status = true;
    }
    Ok((current, written))
}

/// Creates `obj`, treating "already exists" as success (creation is idempotent across retries).
pub async fn create_if_absent<K>(api: &Api<K>, controller: &str, obj: &K) -> Result<()>
where
    K: Resource + Serialize + DeserializeOwned + Clone + Debug,
{
    match api.create(&Default::default(), obj).await {
        Ok(_) => {
            metrics::write(controller);
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::Kube(e)),
    }
}

/// Deletes `name` unless it is already gone or going. Returns true if a delete was issued.
pub async fn delete_if_present<K>(api: &Api<K>, controller: &str, name: &str) -> Result<bool>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.delete(name, &Default::default()).await {
        Ok(_) => {
            metrics::write(controller);
            Ok(true)
        }
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(Error::Kube(e)),
    }
}

/// Adds a finalizer to a copy of the object's metadata (written by [`apply_changes`]).
pub fn add_finalizer<K: Resource>(obj: &mut K, finalizer: &str) -> bool {
    let f = obj.meta_mut().finalizers.get_or_insert_with(Vec::new);
    if f.iter().any(|x| x == finalizer) {
        return false;
    }
    f.push(finalizer.to_string());
    true
}

/// Removes a finalizer from a copy of the object's metadata.
pub fn remove_finalizer<K: Resource>(obj: &mut K, finalizer: &str) -> bool {
    let Some(f) = obj.meta_mut().finalizers.as_mut() else {
        return false;
    };
    let before = f.len();
    f.retain(|x| x != finalizer);
    let changed = f.len() != before;
    if f.is_empty() {
        obj.meta_mut().finalizers = None;
    }
    changed
}
