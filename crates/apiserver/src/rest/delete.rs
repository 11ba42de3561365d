//! delete and deletecollection: finalizers, deletionTimestamp and the propagation policy
//! (the garbage collector does the rest), and what kube-apiserver answers to each.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::meta::now_rfc3339;
use super::{Api, ListOptions, Target, Written, parse_rv};
use crate::error::{ApiError, ApiResult};
use crate::store::{Change, Encoded, Expect, StoreError, Stored};

/// `propagationPolicy` of a delete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Propagation {
    #[default]
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    pub fn parse(s: &str) -> ApiResult<Self> {
        match s {
            "Background" => Ok(Self::Background),
            "Foreground" => Ok(Self::Foreground),
            "Orphan" => Ok(Self::Orphan),
            other => Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            ))),
        }
    }

    fn finalizer(self) -> Option<&'static str> {
        match self {
            Self::Background => None,
            Self::Foreground => Some("foregroundDeletion"),
            Self::Orphan => Some("orphan"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    pub propagation: Propagation,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub dry_run: bool,
    /// `orphanDependents` as sent (deprecated, but it picks the 202 of a pending delete).
    pub orphan_dependents: Option<bool>,
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` body (query parameters already applied take precedence).
    pub fn merge_body(&mut self, body: &Value) -> ApiResult<()> {
        let orphan = body.get("orphanDependents").and_then(Value::as_bool);
        if orphan.is_some() {
            self.orphan_dependents = orphan;
        }
        if let Some(p) = body.get("propagationPolicy").and_then(Value::as_str) {
            self.propagation = Propagation::parse(p)?;
        } else if orphan == Some(true) {
            self.propagation = Propagation::Orphan;
        }
        if let Some(pre) = body.get("preconditions") {
            if let Some(uid) = pre.get("uid").and_then(Value::as_str) {
                self.precondition_uid = Some(uid.to_string());
            }
            if let Some(rv) = pre.get("resourceVersion").and_then(Value::as_str) {
                self.precondition_rv = Some(rv.to_string());
            }
        }
        if body.get("dryRun").and_then(Value::as_array).is_some_and(|a| a.iter().any(|v| v == "All")) {
            self.dry_run = true;
        }
        Ok(())
    }
}

impl Api {
    /// DELETE of one object. Answers like kube-apiserver: the object while its deletion is
    /// pending (finalizers), and once it is gone a `Status` (or, for the kinds that return
    /// the deleted object, the object as it was).
    pub async fn delete(&self, t: &Target, opts: &DeleteOptions) -> ApiResult<Written> {
        let name = t.name()?.to_string();
        if t.sub.is_some() {
            return Err(ApiError::method_not_allowed("delete is not supported on subresources"));
        }
        for _ in 0..16 {
            let current = self.get(t)?;
            check_preconditions(t, &name, &current, opts)?;
            if current.meta.deleting {
                // Already terminating: deleting again changes nothing.
                return self.deleted(t, &current, opts, false);
            }
            let mut obj = self.value(&t.res, &current)?;
            let change = self.deletion(t, &current, &mut obj, opts)?;
            let removed = matches!(change, Change::Delete);
            if opts.dry_run {
                let body = if removed && !returns_deleted_object(t) {
                    deleted_status(t, &current)?
                } else {
                    serde_json::to_vec(&obj).map_err(|e| ApiError::internal(e.to_string()))?.into()
                };
                return Ok(Written { code: delete_code(opts, removed), body, warnings: vec![], stored: None });
            }
            match self.store.commit(t.key(&name), Expect::Revision(current.rv), change).await {
                Ok(c) => return self.deleted(t, c.object(), opts, removed),
                Err(StoreError::Conflict) => {}
                Err(StoreError::NotFound) => return Err(ApiError::not_found(&t.res.def, &name)),
                Err(StoreError::AlreadyExists) => {
                    return Err(ApiError::internal("unexpected store state"));
                }
                Err(StoreError::Failed(m)) => return Err(ApiError::internal(m)),
                Err(StoreError::Unavailable(m)) => return Err(ApiError::unavailable(m)),
            }
        }
        Err(ApiError::conflict(&t.res.def, &name))
    }

    /// The answer to a delete of `obj`, which is now gone (`removed`) or marked for deletion.
    fn deleted(&self, t: &Target, obj: &Arc<Stored>, opts: &DeleteOptions, removed: bool) -> ApiResult<Written> {
        let body =
            if removed && !returns_deleted_object(t) { deleted_status(t, obj)? } else { self.encode(&t.res, obj)? };
        Ok(Written { code: delete_code(opts, removed), body, warnings: vec![], stored: Some(obj.clone()) })
    }

    /// What deleting `current` writes: removal when nothing holds it, else the object (`obj`,
    /// updated in place) marked for deletion with the propagation policy's finalizer.
    fn deletion(&self, t: &Target, current: &Stored, obj: &mut Value, opts: &DeleteOptions) -> ApiResult<Change> {
        let mut finalizers = current.meta.finalizers.clone();
        for f in opts.propagation.finalizer().into_iter().chain(crate::crd::deletion_finalizer(&t.res)) {
            if !finalizers.iter().any(|x| x == f) {
                finalizers.push(f.to_string());
            }
        }
        let is_namespace = t.res.def.kind == "Namespace" && t.res.def.group.is_empty();
        if finalizers.is_empty() && !is_namespace {
            return Ok(Change::Delete);
        }
        let m = &mut obj["metadata"];
        m["deletionTimestamp"] = json!(now_rfc3339());
        m["deletionGracePeriodSeconds"] = json!(0);
        if !finalizers.is_empty() {
            m["finalizers"] = json!(finalizers);
        }
        if let Some(g) = m.get("generation").and_then(Value::as_i64) {
            m["generation"] = json!(g + 1);
        }
        if is_namespace {
            obj["status"]["phase"] = json!("Terminating");
        }
        let stored = self.to_storage(&t.res, obj.clone())?;
        let enc = Encoded::new(stored, None, self.storage_selectable(&t.res))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Change::Put(enc))
    }

    /// DELETE of a collection: deletes every selected object; answers with the list of what
    /// was deleted.
    pub async fn delete_collection(
        &self,
        t: &Target,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<Vec<Bytes>> {
        let items = self.list(t, &ListOptions { limit: None, continue_token: None, ..list.clone() }).await?.items;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let v = self.value(&t.res, &item)?;
            let name = v["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let ns = v["metadata"]["namespace"].as_str().map(str::to_string);
            let one = Target { name: Some(name), namespace: ns.or(t.namespace.clone()), ..t.clone() };
            // Like kube-apiserver, the list holds each object as listed, before its deletion.
            let listed = self.encode(&t.res, &item)?;
            match self.delete(&one, opts).await {
                Ok(_) => out.push(listed),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// Whether a kind answers an immediate delete with the deleted object instead of a `Status`
/// (kube-apiserver's `ReturnDeletedObject`): of the kinds served, core Pods and Namespaces.
/// Everything else, custom resources included, answers with a `Status`.
fn returns_deleted_object(t: &Target) -> bool {
    t.res.def.group.is_empty() && matches!(t.res.def.kind.as_str(), "Pod" | "Namespace")
}

/// 202 for a deletion left pending when the client asked `orphanDependents: false`, else 200.
fn delete_code(opts: &DeleteOptions, removed: bool) -> u16 {
    if !removed && opts.orphan_dependents == Some(false) { 202 } else { 200 }
}

/// The `Status` of an object deleted at once. As in kube-apiserver, `details.kind` holds the
/// resource (plural), not the kind.
fn deleted_status(t: &Target, obj: &Stored) -> ApiResult<Bytes> {
    let mut details =
        json!({"name": t.name.clone().unwrap_or_default(), "kind": t.res.def.plural, "uid": obj.meta.uid});
    if !t.res.def.group.is_empty() {
        details["group"] = json!(t.res.def.group);
    }
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details});
    serde_json::to_vec(&status).map(Bytes::from).map_err(|e| ApiError::internal(e.to_string()))
}

/// The uid and resourceVersion preconditions of a delete.
fn check_preconditions(t: &Target, name: &str, current: &Stored, opts: &DeleteOptions) -> ApiResult<()> {
    if let Some(uid) = &opts.precondition_uid
        && current.meta.uid != *uid
    {
        return Err(ApiError::conflict_msg(
            &t.res.def,
            name,
            &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {}", current.meta.uid),
        ));
    }
    if let Some(rv) = &opts.precondition_rv
        && parse_rv(rv)? != current.rv
    {
        return Err(ApiError::conflict_msg(
            &t.res.def,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                current.rv
            ),
        ));
    }
    Ok(())
}
