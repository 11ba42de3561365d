//! delete and deletecollection: finalizers, deletionTimestamp and the propagation policy
//! (the garbage collector does the rest).

use std::sync::Arc;

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
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` body (query parameters already applied take precedence).
    pub fn merge_body(&mut self, body: &Value) -> ApiResult<()> {
        if let Some(p) = body.get("propagationPolicy").and_then(Value::as_str) {
            self.propagation = Propagation::parse(p)?;
        } else if body.get("orphanDependents").and_then(Value::as_bool) == Some(true) {
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
    /// DELETE of one object.
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
                return self.deleted(t, &current);
            }
            let mut obj = self.value(&t.res, &current)?;
            let change = self.deletion(t, &current, &mut obj, opts)?;
            if opts.dry_run {
                return Ok(Written {
                    code: 200,
                    body: serde_json::to_vec(&obj).map_err(|e| ApiError::internal(e.to_string()))?.into(),
                    warnings: vec![],
                    stored: None,
                });
            }
            match self.store.commit(t.key(&name), Expect::Revision(current.rv), change).await {
                Ok(c) => return self.deleted(t, c.object()),
                Err(StoreError::Conflict) => {}
                Err(StoreError::NotFound) => return Err(ApiError::not_found(&t.res.def, &name)),
                Err(StoreError::AlreadyExists) => {
                    return Err(ApiError::internal("unexpected store state"));
                }
                Err(StoreError::Failed(m)) => return Err(ApiError::internal(m)),
            }
        }
        Err(ApiError::conflict(&t.res.def, &name))
    }

    /// The answer to a delete: the object as it now is (or was, when gone).
    fn deleted(&self, t: &Target, obj: &Arc<Stored>) -> ApiResult<Written> {
        Ok(Written { code: 200, body: self.encode(&t.res, obj)?, warnings: vec![], stored: Some(obj.clone()) })
    }

    /// What deleting `current` writes: removal when nothing holds it, else the object (`obj`,
    /// updated in place) marked for deletion with the propagation policy's finalizer.
    fn deletion(&self, t: &Target, current: &Stored, obj: &mut Value, opts: &DeleteOptions) -> ApiResult<Change> {
        let mut finalizers = current.meta.finalizers.clone();
        if let Some(f) = opts.propagation.finalizer()
            && !finalizers.iter().any(|x| x == f)
        {
            finalizers.push(f.to_string());
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
        let stored = match &t.res.conversion {
            Some(c) => (c.to_storage)(obj.clone()),
            None => obj.clone(),
        };
        let enc =
            Encoded::new(stored, self.storage_selectable(&t.res)).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Change::Put(enc))
    }

    /// DELETE of a collection: deletes every selected object; answers with the list of what was deleted.
    pub async fn delete_collection(
        &self,
        t: &Target,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<Vec<bytes::Bytes>> {
        let items = self.list(t, &ListOptions { limit: None, continue_token: None, ..list.clone() })?.items;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let v = self.value(&t.res, &item)?;
            let name = v["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let ns = v["metadata"]["namespace"].as_str().map(str::to_string);
            let one = Target { name: Some(name), namespace: ns.or(t.namespace.clone()), ..t.clone() };
            match self.delete(&one, opts).await {
                Ok(w) => out.push(w.body),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
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
