//! Server-side apply (PATCH with `application/apply-patch+yaml`): the configuration is
//! checked, merged into the live object under the applier's field ownership
//! ([`crate::managed::apply`]), then written like any update, or created when absent.

use serde_json::{Map, Value, json};

use super::meta::now_rfc3339;
use super::prepare::Untouched;
use super::scale::{pointer_of, set_pointer};
use super::write::{Track, WriteOptions, Written, meta_mut, str_field};
use super::{Api, Subresource, Target, parse_rv};
use crate::error::{ApiError, ApiResult};
use crate::managed::{self, Conflicts};

const RETRIES: usize = 8;

/// The 409 of an apply that would change fields other managers own.
fn conflict_error(c: Conflicts) -> ApiError {
    ApiError::new(409, "Conflict", c.message()).with_details(json!({"causes": c.causes()}))
}

impl Api {
    /// Applies `config` to the object `t` names (its status through `/status`, its replicas
    /// through `/scale`).
    pub(super) async fn apply(&self, t: &Target, mut config: Value, opts: &WriteOptions) -> ApiResult<Written> {
        let name = t.name()?.to_string();
        if t.sub == Some(Subresource::Scale) {
            return self.apply_scale(t, &name, config, opts).await;
        }
        let want = t.res.def.api_version();
        self.check_config(t, &name, &want, &mut config)?;
        let precondition = take_resource_version(&mut config)?;
        let subresource = if t.sub == Some(Subresource::Status) { "status" } else { "" };
        keep_writable(&mut config, subresource, t.res.def.status_subresource);
        self.apply_config(t, &name, &config, precondition, opts, subresource).await
    }

    /// Merges `config` in (or creates the object from it), retrying when the object
    /// appears or disappears meanwhile.
    async fn apply_config(
        &self,
        t: &Target,
        name: &str,
        config: &Value,
        precondition: Option<u64>,
        opts: &WriteOptions,
        subresource: &str,
    ) -> ApiResult<Written> {
        let av = t.res.def.api_version();
        let versions = super::versions::ServedVersions::new(self, t);
        let ty: (_, &dyn managed::Versions) = (t.res.merge_type(), &versions);
        // Merged into the object when it exists, else created from the configuration;
        // retried when it appears or goes meanwhile.
        let creates = subresource.is_empty() && t.sub.is_none();
        for _ in 0..RETRIES {
            let written = self
                .write_loop(
                    t,
                    name,
                    precondition,
                    opts,
                    (Track::Applied, Untouched::Nothing),
                    |current, live_managed| {
                        let now = now_rfc3339();
                        let w = self.writer(t, opts.manager(), &av, subresource, &now);
                        managed::apply(ty, Some(current), live_managed, config, &w, opts.force)
                            .map(|a| a.object)
                            .map_err(conflict_error)
                    },
                )
                .await;
            match written {
                Err(e) if e.code == 404 && creates => {}
                other => return other,
            }
            if precondition.is_some() {
                return Err(ApiError::conflict(&t.res.def, name));
            }
            let now = now_rfc3339();
            let w = self.writer(t, opts.manager(), &av, subresource, &now);
            let applied = managed::apply(ty, None, None, config, &w, opts.force).map_err(conflict_error)?;
            match self.create_tracked(t, applied.object, opts, Track::Applied).await {
                Err(e) if e.reason == "AlreadyExists" => continue,
                other => return other,
            }
        }
        Err(ApiError::conflict(&t.res.def, name))
    }

    /// Apply through `/scale`: the Scale's `spec.replicas` is applied to the object's
    /// replicas path, owned with subresource `scale`.
    async fn apply_scale(&self, t: &Target, name: &str, mut config: Value, opts: &WriteOptions) -> ApiResult<Written> {
        let scale = t.res.def.scale.clone().ok_or_else(ApiError::not_found_path)?;
        let scale_def = drydock_api::ResourceDef::new("autoscaling", "v1", "Scale", "scale");
        check_version(&config, "autoscaling/v1")?;
        reject_managed_fields(&config)?;
        let precondition = take_resource_version(&mut config)?;
        let main = Target { sub: None, ..t.clone() };
        let mut parent = json!({
            "apiVersion": t.res.def.api_version(),
            "kind": t.res.def.kind,
            "metadata": {"name": name},
        });
        if let Some(ns) = &t.namespace {
            parent["metadata"]["namespace"] = json!(ns);
        }
        if let Some(r) = config.pointer("/spec/replicas") {
            if r.as_i64().is_none_or(|r| r < 0) {
                return Err(ApiError::invalid(
                    &scale_def,
                    name,
                    &[drydock_api::FieldError::invalid(
                        "spec.replicas",
                        r.clone(),
                        "must be greater than or equal to 0",
                    )],
                ));
            }
            let pointer =
                pointer_of(&scale.spec_replicas_path).ok_or_else(|| ApiError::internal("invalid specReplicasPath"))?;
            set_pointer(&mut parent, &pointer, r.clone());
        }
        if matches!(self.get(&main), Err(e) if e.code == 404) {
            return Err(ApiError::not_found(&t.res.def, name));
        }
        let written = self.apply_config(&main, name, &parent, precondition, opts, "scale").await?;
        let obj: Value = serde_json::from_slice(&written.body).map_err(|e| ApiError::internal(e.to_string()))?;
        let body = serde_json::to_vec(&self.scale_of(t, &obj)?).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(Written { body: body.into(), ..written })
    }

    /// The checks kube-apiserver makes of an apply configuration; fills in the name.
    fn check_config(&self, t: &Target, name: &str, want: &str, config: &mut Value) -> ApiResult<()> {
        if !config.is_object() {
            return Err(ApiError::bad_request("an apply patch must be an object"));
        }
        check_version(config, want)?;
        reject_managed_fields(config)?;
        self.check_kind(&t.res, config)?;
        match str_field(config, &["metadata", "name"]) {
            Some(n) if !n.is_empty() && n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            Some(n) if !n.is_empty() => {}
            _ => {
                meta_mut(config)?.insert("name".into(), json!(name));
            }
        }
        if t.res.def.namespaced
            && let (Some(body_ns), Some(url_ns)) = (str_field(config, &["metadata", "namespace"]), &t.namespace)
            && !body_ns.is_empty()
            && body_ns != url_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        Ok(())
    }
}

fn check_version(config: &Value, want: &str) -> ApiResult<()> {
    let got = str_field(config, &["apiVersion"]).unwrap_or_default();
    if got != want {
        return Err(ApiError::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {got}, expected: {want}"
        )));
    }
    Ok(())
}

fn reject_managed_fields(config: &Value) -> ApiResult<()> {
    if config.pointer("/metadata/managedFields").is_some_and(|m| !m.is_null()) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    Ok(())
}

/// `metadata.resourceVersion` of a configuration is a precondition, not a field.
fn take_resource_version(config: &mut Value) -> ApiResult<Option<u64>> {
    let rv = config
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("resourceVersion"))
        .and_then(|v| v.as_str().map(str::to_string))
        .filter(|s| !s.is_empty());
    rv.map(|s| parse_rv(&s)).transpose()
}

/// Drops what the endpoint does not write: `status` on the main resource of a kind with a
/// status subresource; all but `status` (and the object's identity) on `/status`.
fn keep_writable(config: &mut Value, subresource: &str, status_subresource: bool) {
    let Some(map) = config.as_object_mut() else { return };
    match subresource {
        "status" => {
            let identity: Map<String, Value> = map
                .get("metadata")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| matches!(k.as_str(), "name" | "namespace"))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            map.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "status"));
            map.insert("metadata".into(), Value::Object(identity));
        }
        "" if status_subresource => {
            map.remove("status");
        }
        _ => {}
    }
}
