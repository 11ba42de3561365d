//! Templates get an owner reference to what uses them: those of MachineSets and
//! MachineDeployments to their Cluster, so deleting the Cluster collects them, those of a
//! ClusterClass to the class. Many objects share a template and reconcile often, so a
//! template seen owned is remembered and not read again.

use std::collections::HashSet;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::owner;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::ResourceExt;
use parking_lot::Mutex;
use serde_json::json;

use crate::context::Context;
use crate::external;
use crate::framework::Result;
use crate::framework::write::merge_patch;

/// True for references to templates (kinds ending in `Template`); other references point
/// at objects that are not shared and are owned elsewhere.
pub fn is_template(r: &ContractVersionedObjectReference) -> bool {
    r.kind.ends_with("Template")
}

/// Templates already known to be owned by their owner.
#[derive(Default)]
pub struct TemplateOwners {
    done: Mutex<HashSet<(String, String, String, String)>>,
}

impl TemplateOwners {
    /// [`Self::ensure`] for a v1beta2 reference (group only), read in the version its CRD
    /// names for the contract; false when the template or its CRD does not exist.
    pub async fn ensure_versioned<K: kube::Resource<DynamicType = ()>>(
        &self,
        ctx: &Context,
        controller: &str,
        namespace: &str,
        r: &ContractVersionedObjectReference,
        owner: &K,
    ) -> Result<bool> {
        let Some(uid) = owner.meta().uid.as_deref() else {
            return Ok(true);
        };
        if self.done.lock().contains(&(namespace.to_string(), r.kind.clone(), r.name.clone(), uid.to_string())) {
            return Ok(true);
        }
        match crate::framework::referenced::resolve(ctx, namespace, r).await? {
            Some(r) => self.ensure(ctx, controller, namespace, &r, owner).await,
            None => Ok(false),
        }
    }

    /// Ensures the template `r` in `namespace` has an owner reference to `owner` (a
    /// Cluster, a ClusterClass). Returns false when the template does not exist.
    pub async fn ensure<K: kube::Resource<DynamicType = ()>>(
        &self,
        ctx: &Context,
        controller: &str,
        namespace: &str,
        r: &ObjectReference,
        owner: &K,
    ) -> Result<bool> {
        let Some(owner_ref) = owner::owner_ref(owner) else {
            return Ok(true);
        };
        let key = (
            namespace.to_string(),
            r.kind.clone().unwrap_or_default(),
            r.name.clone().unwrap_or_default(),
            owner_ref.uid.clone(),
        );
        if self.done.lock().contains(&key) {
            return Ok(true);
        }
        let Some(tpl) = external::get(ctx, namespace, r).await? else {
            return Ok(false);
        };
        let mut meta = tpl.metadata.clone();
        if owner::ensure_owner_ref(&mut meta, owner_ref) {
            let patch = json!({"metadata": {
                "ownerReferences": meta.owner_references,
                "resourceVersion": tpl.resource_version(),
            }});
            merge_patch(&external::api_for(ctx, namespace, r).await, controller, &tpl.name_any(), &patch).await?;
        }
        self.done.lock().insert(key);
        Ok(true)
    }
}
