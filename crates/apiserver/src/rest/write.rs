//! update (PUT), patch, the status and scale subresources, and what every write shares
//! (kind checks, schema pruning, admission, encoding).

use std::sync::Arc;

use bytes::Bytes;
use drydock_api::tenancy::TENANCY_GROUP;
use drydock_api::{FieldError, Operation, names};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::meta;
use super::prepare::{Prepared, Untouched};
use super::{Api, Subresource, Target, parse_rv};
use crate::builtin;
use crate::error::{ApiError, ApiResult};
use crate::managed::{Live, Managers};
use crate::patch::{self, PatchBody, PatchType};
use crate::registry::Resource;
use crate::schema;
use crate::store::{Change, Committed, Encoded, Expect, StoreError, Stored};

/// `fieldValidation` of a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
    pub validation: FieldValidation,
    /// The field manager the write is recorded under (empty: `unknown`).
    pub manager: String,
    /// Apply only: take the fields other managers own instead of failing with a conflict.
    pub force: bool,
    /// The write comes through `/scale` (recorded with that subresource).
    pub(crate) via_scale: bool,
    /// A check of the caller's, run on the object as it would be stored, after admission.
    pub guard: Option<super::guard::WriteGuard>,
}

impl WriteOptions {
    /// Options of a write by `manager`.
    pub fn by(manager: &str) -> Self {
        Self { manager: manager.to_string(), ..Self::default() }
    }

    pub(super) fn manager(&self) -> &str {
        if self.manager.is_empty() { "unknown" } else { &self.manager }
    }
}

/// How a write records its field manager in managedFields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Track {
    /// The writer takes what it adds or changes (create, PUT, non-apply patches).
    Update,
    /// The object already carries the managedFields its apply computed.
    Applied,
}

/// A successful write: HTTP code, body and warnings for the `Warning` header.
#[derive(Debug)]
pub struct Written {
    pub code: u16,
    pub body: Bytes,
    pub warnings: Vec<String>,
    /// The stored object (absent for dry runs).
    pub stored: Option<Arc<Stored>>,
}

const UPDATE_RETRIES: usize = 16;

/// Whether the server maintains `metadata.generation` for a resource: custom resources
/// and the built-in kinds with a spec a controller acts on.
pub(super) fn tracks_generation(res: &Resource) -> bool {
    match res.def.group.as_str() {
        "" => res.def.kind == "ReplicationController",
        "coordination.k8s.io" | "events.k8s.io" | "rbac.authorization.k8s.io" => false,
        _ => true,
    }
}

pub(super) fn is_custom(res: &Resource) -> bool {
    !builtin::is_builtin_group(&res.def.group) && res.def.group != TENANCY_GROUP
}

pub(super) fn meta_mut(obj: &mut Value) -> ApiResult<&mut Map<String, Value>> {
    let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("the object must be a JSON object"))?;
    let m = map.entry("metadata").or_insert_with(|| json!({}));
    m.as_object_mut().ok_or_else(|| ApiError::bad_request("metadata must be an object"))
}

pub(super) fn str_field<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = obj;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str()
}

/// A copy of the members of `obj` that `keep` accepts.
fn view(obj: &Value, keep: fn(&str) -> bool) -> Value {
    match obj.as_object() {
        Some(m) => Value::Object(m.iter().filter(|(k, _)| keep(k)).map(|(k, v)| (k.clone(), v.clone())).collect()),
        None => obj.clone(),
    }
}

/// Whether `a` and `b` differ outside metadata and (when it is a subresource) status: such
/// a change bumps generation. Compared in place, without copies of either.
pub(super) fn spec_changed(a: &Value, b: &Value, status_sub: bool) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else { return a != b };
    let counted = |k: &String| k != "metadata" && !(status_sub && k == "status");
    a.iter().filter(|(k, _)| counted(k)).any(|(k, v)| b.get(k) != Some(v))
        || b.keys().filter(|k| counted(k)).any(|k| !a.contains_key(k))
}

impl Api {
    /// Checks `apiVersion`/`kind` of a body against the resource (filling them when absent).
    pub(super) fn check_kind(&self, res: &Resource, obj: &mut Value) -> ApiResult<()> {
        let want_av = res.def.api_version();
        let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("the object must be a JSON object"))?;
        match map.get("kind").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("kind".into(), json!(res.def.kind));
            }
            Some(k) if k != res.def.kind => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the object ({k}) does not match the kind of the resource ({}) at this URL",
                    res.def.kind
                )));
            }
            _ => {}
        }
        match map.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("apiVersion".into(), json!(want_av));
            }
            Some(av) if av != want_av => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({av}) does not match the expected API version ({want_av})"
                )));
            }
            _ => {}
        }
        Ok(())
    }

    /// Prunes, defaults and checks against the schema (`old`: the stored object on update);
    /// reports unknown fields per `fieldValidation`.
    pub(super) fn apply_schema(
        &self,
        t: &Target,
        obj: &mut Value,
        old: Option<&Value>,
        opts: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        self.apply_schema_apart(t, (obj, &[]), old, opts, warnings)
    }

    /// [`Api::apply_schema`] of an object whose members named in `apart` are left as stored.
    pub(super) fn apply_schema_apart(
        &self,
        t: &Target,
        (obj, apart): (&mut Value, &[&str]),
        old: Option<&Value>,
        opts: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let out = schema::Validator::or_schemaless(t.res.validator.as_ref()).process_apart(obj, old, apart);
        if !out.unknown.is_empty() {
            match opts.validation {
                FieldValidation::Strict => {
                    let list: Vec<String> = out.unknown.iter().map(|f| format!("unknown field \"{f}\"")).collect();
                    return Err(ApiError::bad_request(format!("strict decoding error: {}", list.join(", "))));
                }
                FieldValidation::Warn => warnings.extend(out.unknown.iter().map(|f| format!("unknown field \"{f}\""))),
                FieldValidation::Ignore => {}
            }
        }
        if !out.errors.is_empty() {
            let name = str_field(obj, &["metadata", "name"]).unwrap_or_default().to_string();
            return Err(ApiError::invalid(&t.res.def, &name, &out.errors));
        }
        Ok(())
    }

    pub(super) fn validate_name(&self, t: &Target, name: &str) -> Result<(), FieldError> {
        let check = if t.res.def.kind == "Namespace" && t.res.def.group.is_empty() {
            meta::first_error(names::dns1123_label_errors(name))
        } else if t.res.def.group == "rbac.authorization.k8s.io" {
            // RBAC names only need to be path segments (`system:discovery`).
            meta::first_error(names::path_segment_name_errors(name))
        } else {
            meta::first_error(names::path_segment_name_errors(name))
                .and_then(|()| meta::first_error(names::dns1123_subdomain_errors(name)))
        };
        check.map_err(|e| FieldError::invalid("metadata.name", name, e))
    }

    /// Runs admission (defaulting, then validation), then the schema's late checks:
    /// required fields and CEL rules, whose ratcheted failures become warnings.
    pub(super) fn run_admission(
        &self,
        t: &Target,
        (obj, apart): (&mut Value, &[&str]),
        old: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let name = str_field(obj, &["metadata", "name"]).unwrap_or_default().to_string();
        let mut errs = meta::validate_metadata(&obj["metadata"]);
        if let Some(adm) = &t.res.def.admission {
            let op = if old.is_some() { Operation::Update } else { Operation::Create };
            let refs = crate::crd::RefLookup::new(&self.registries, &t.cluster).with_store(&self.store);
            match adm.admit_with_refs(obj, old, op, &refs, warnings) {
                Ok(invalid) => errs.extend(invalid),
                Err(e) => return Err(ApiError::invalid(&t.res.def, &name, &e)),
            }
        }
        self.validate_schema(t, (obj, apart), old, &mut errs, warnings);
        if errs.is_empty() { Ok(()) } else { Err(ApiError::invalid(&t.res.def, &name, &errs)) }
    }

    pub(super) fn validate_schema(
        &self,
        t: &Target,
        (obj, apart): (&Value, &[&str]),
        old: Option<&Value>,
        errs: &mut Vec<FieldError>,
        warnings: &mut Vec<String>,
    ) {
        if let Some(v) = &t.res.validator {
            let report = v.validate_apart(obj, old, apart);
            errs.extend(report.errors);
            warnings.extend(report.warnings);
        }
    }

    /// Converts a served object to its stored shape and encodes it, with `managers` as its
    /// managedFields when given.
    pub(super) fn encode_for_store(&self, t: &Target, obj: Value, managers: Option<&Managers>) -> ApiResult<Encoded> {
        self.encode_with(t, obj, managers, &[])
    }

    /// [`Api::encode_for_store`] of an object with members left as stored (`apart`), which
    /// only a kind stored as served leaves.
    fn encode_with(
        &self,
        t: &Target,
        obj: Value,
        managers: Option<&Managers>,
        apart: &[(String, &RawValue)],
    ) -> ApiResult<Encoded> {
        let stored = self.to_storage(&t.res, obj)?;
        Encoded::with_apart(stored, (managers, apart), self.storage_selectable(&t.res))
            .map_err(|e| ApiError::bad_request(e.to_string()))
    }

    pub(super) fn written(&self, t: &Target, code: u16, c: &Committed, warnings: Vec<String>) -> ApiResult<Written> {
        let obj = c.object();
        Ok(Written { code, body: self.encode(&t.res, obj)?, warnings, stored: Some(obj.clone()) })
    }

    pub(super) fn dry_run(&self, obj: &Value, code: u16, warnings: Vec<String>) -> ApiResult<Written> {
        let body = serde_json::to_vec(obj).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Written { code, body: body.into(), warnings, stored: None })
    }

    pub(super) fn store_error(&self, t: &Target, name: &str, e: StoreError) -> ApiError {
        match e {
            StoreError::AlreadyExists => ApiError::already_exists(&t.res.def, name),
            StoreError::NotFound => ApiError::not_found(&t.res.def, name),
            StoreError::Conflict => ApiError::conflict(&t.res.def, name),
            StoreError::Failed(msg) => ApiError::internal(msg),
            StoreError::Unavailable(msg) => ApiError::unavailable(msg),
        }
    }

    /// PUT of an object, its status or its scale.
    pub async fn update(&self, t: &Target, mut body: Value, opts: &WriteOptions) -> ApiResult<Written> {
        let name = t.name()?.to_string();
        if t.sub == Some(Subresource::Scale) {
            return self.update_scale(t, body, opts).await;
        }
        self.check_kind(&t.res, &mut body)?;
        match str_field(&body, &["metadata", "name"]) {
            Some(n) if n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        if t.res.def.namespaced
            && let (Some(body_ns), Some(url_ns)) = (str_field(&body, &["metadata", "namespace"]), &t.namespace)
            && !body_ns.is_empty()
            && body_ns != url_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let precondition = match str_field(&body, &["metadata", "resourceVersion"]).filter(|s| !s.is_empty()) {
            Some(rv) => Some(parse_rv(rv)?),
            None if is_custom(&t.res) => {
                return Err(ApiError::invalid(
                    &t.res.def,
                    &name,
                    &[FieldError::invalid("metadata.resourceVersion", "0x0", "must be specified for an update")],
                ));
            }
            None => None,
        };
        self.write_loop(t, &name, precondition, opts, (Track::Update, Untouched::Nothing), |_current, _| {
            Ok(body.clone())
        })
        .await
    }

    /// PATCH of an object, its status or its scale.
    pub async fn patch(
        &self,
        t: &Target,
        ptype: PatchType,
        mut body: PatchBody,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let name = t.name()?.to_string();
        match ptype {
            PatchType::Apply => return self.apply(t, body.take()?, opts).await,
            PatchType::Strategic if is_custom(&t.res) || t.res.def.group == TENANCY_GROUP => {
                return Err(ApiError::unsupported_media(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            _ => {}
        }
        if opts.force {
            return Err(ApiError::new(422, "Invalid", "force: Forbidden: may not be specified for non-apply patch"));
        }
        let first = body.peek();
        if ptype == PatchType::Merge && !first.is_some_and(Value::is_object) {
            return Err(ApiError::bad_request("a merge patch must be a JSON object"));
        }
        let is_array = first.is_some_and(Value::is_array);
        let mut apply = |doc: &mut Value| -> ApiResult<()> {
            let body = body.take()?;
            match ptype {
                PatchType::Json => patch::json_patch(doc, body).map_err(|e| {
                    if is_array {
                        ApiError::new(
                            422,
                            "Invalid",
                            format!("the server rejected our request due to an error in our request: {e}"),
                        )
                    } else {
                        ApiError::bad_request(e)
                    }
                }),
                PatchType::Merge => {
                    patch::merge_patch(doc, body);
                    Ok(())
                }
                PatchType::Strategic => patch::strategic_merge(doc, &body).map_err(ApiError::bad_request),
                PatchType::Apply => Ok(()),
            }
        };
        if t.sub == Some(Subresource::Scale) {
            let current = self.get(t)?;
            let mut scale = self.scale_of(t, &self.value(&t.res, &current)?)?;
            apply(&mut scale)?;
            return self.update_scale(t, scale, opts).await;
        }
        // A patch that changes resourceVersion makes it a precondition that cannot hold.
        // A status write keeps only the patched status, so a merge patch of it needs no
        // copy of the rest of the object (the resourceVersion check reads the patch's own,
        // the only one that can differ); a write of the main resource keeps the stored
        // status, so a merge patch of it needs no copy of that.
        let copied: Option<fn(&str) -> bool> = match (t.sub, ptype) {
            (Some(Subresource::Status), PatchType::Merge) => Some(|k| k == "status"),
            (None, PatchType::Merge) if t.res.def.status_subresource => Some(|k| k != "status"),
            _ => None,
        };
        let untouched = if ptype == PatchType::Merge { Untouched::of_merge_patch(t, opts) } else { Untouched::Nothing };
        self.write_loop(t, &name, None, opts, (Track::Update, untouched), |current, live_managed| {
            let mut doc = match copied {
                Some(keep) => view(current, keep),
                None => current.clone(),
            };
            // A JSON patch may address the managedFields (kubectl's client-side apply upgrade).
            if ptype == PatchType::Json
                && let Some(m) = live_managed.and_then(|m| m.to_value())
            {
                meta_mut(&mut doc)?.insert("managedFields".into(), m);
            }
            apply(&mut doc)?;
            let before = str_field(current, &["metadata", "resourceVersion"]);
            let after = str_field(&doc, &["metadata", "resourceVersion"]);
            if after.is_some() && after != before {
                return Err(ApiError::conflict(&t.res.def, &name));
            }
            Ok(doc)
        })
        .await
    }

    /// The read-modify-write loop shared by update, patch and apply. `make` builds the
    /// requested object from the current one; without a precondition, conflicts are retried.
    /// `untouched`: the members the write leaves as stored.
    pub(super) async fn write_loop(
        &self,
        t: &Target,
        name: &str,
        precondition: Option<u64>,
        opts: &WriteOptions,
        (track, mut untouched): (Track, Untouched),
        mut make: impl FnMut(&Value, Option<Live<'_>>) -> ApiResult<Value>,
    ) -> ApiResult<Written> {
        for _ in 0..UPDATE_RETRIES {
            let current = self.get(t)?;
            if precondition.is_some_and(|rv| rv != current.rv) {
                return Err(ApiError::conflict(&t.res.def, name));
            }
            // managedFields travel beside the object, unparsed: only tracking reads them.
            let cur = self.current(t, &current, untouched)?;
            let requested = make(&cur.value, cur.managed)?;
            let mut warnings = Vec::new();
            let (mut next, managers) = match self.prepare_update(t, &cur, requested, opts, track, &mut warnings)? {
                Prepared::Ready(next, managers) => (next, managers),
                Prepared::NeedsWhole => {
                    untouched = Untouched::Nothing;
                    continue;
                }
            };
            if opts.dry_run {
                set_managers(&mut next, managers)?;
                return self.dry_run(&next, 200, warnings);
            }
            // Removing the last finalizer of an object being deleted deletes it.
            let finished = next["metadata"]["deletionTimestamp"].is_string()
                && next["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty);
            let change = if finished {
                Change::Delete
            } else {
                Change::Put(self.encode_with(t, next, managers.as_ref(), &cur.apart)?)
            };
            match self.store.commit(t.key(name), Expect::Revision(current.rv), change).await {
                Ok(c) => return self.written(t, 200, &c, warnings),
                Err(StoreError::Conflict) if precondition.is_none() => continue,
                Err(e) => return Err(self.store_error(t, name, e)),
            }
        }
        Err(ApiError::conflict(&t.res.def, name))
    }
}

/// Sets (or, for `None` or no entries, removes) an object's managedFields: what a dry run
/// answers.
pub(super) fn set_managers(obj: &mut Value, managers: Option<Managers>) -> ApiResult<()> {
    let m = meta_mut(obj)?;
    match managers.filter(|l| !l.is_empty()) {
        Some(list) => {
            m.insert("managedFields".into(), list.to_value());
        }
        None => {
            m.remove("managedFields");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn only_changes_outside_metadata_and_status_count_for_generation() {
        let a = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}, "status": {"s": 1}});
        let changed = |b: serde_json::Value, status_sub| super::spec_changed(&a, &b, status_sub);
        assert!(!changed(json!({"metadata": {}, "spec": {"x": 1}, "status": {"s": 2}}), true));
        assert!(changed(json!({"metadata": {}, "spec": {"x": 1}, "status": {"s": 2}}), false));
        assert!(changed(json!({"metadata": {}, "spec": {"x": 2}, "status": {"s": 1}}), true));
        assert!(changed(json!({"metadata": {}, "spec": {"x": 1}, "status": {"s": 1}, "data": {}}), true));
        assert!(changed(json!({"metadata": {}, "status": {"s": 1}}), true));
    }
}
