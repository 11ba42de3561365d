//! create (POST to a collection): system metadata, the namespace's state, generated names.

use drydock_api::FieldError;
use serde_json::{Map, Value, json};

use super::meta::{self, now_rfc3339};
use super::write::{Track, WriteOptions, Written, is_custom, meta_mut, set_managers, str_field, tracks_generation};
use super::{Api, Target};
use crate::builtin::services;
use crate::error::{ApiError, ApiResult};
use crate::managed::{self, Managers};
use crate::store::{Change, Expect, StoreError};

impl Api {
    /// POST to a collection.
    pub async fn create(&self, t: &Target, obj: Value, opts: &WriteOptions) -> ApiResult<Written> {
        self.create_tracked(t, obj, opts, Track::Update).await
    }

    /// Creates an object, recording its managers as `track` says.
    pub(super) async fn create_tracked(
        &self,
        t: &Target,
        mut obj: Value,
        opts: &WriteOptions,
        track: Track,
    ) -> ApiResult<Written> {
        if t.sub.is_some() {
            return Err(ApiError::method_not_allowed("create is not supported on subresources"));
        }
        self.check_kind(&t.res, &mut obj)?;
        if t.res.custom.as_ref().is_some_and(|c| c.terminating) {
            let name = str_field(&obj, &["metadata", "name"]).unwrap_or_default();
            let why = "create not allowed while custom resource definition is terminating";
            return Err(ApiError::forbidden(&t.res.def, name, why));
        }
        let mut warnings = Vec::new();
        let url_ns = if t.res.def.namespaced { t.namespace.clone() } else { None };
        let sent = managed::take_sent(&mut obj);
        set_create_metadata(t, meta_mut(&mut obj)?, url_ns.as_deref())?;
        if is_custom(&t.res)
            && t.res.def.status_subresource
            && let Some(map) = obj.as_object_mut()
        {
            map.remove("status");
        }
        if t.res.def.kind == "Namespace" && t.res.def.group.is_empty() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        self.apply_schema(t, &mut obj, None, opts, &mut warnings)?;
        let (managers, _) = self.managers_of(t, None, &obj, sent, opts, track, "");
        let name = str_field(&obj, &["metadata", "name"]).unwrap_or_default().to_string();
        let generate = str_field(&obj, &["metadata", "generateName"]).unwrap_or_default().to_string();
        if name.is_empty() && generate.is_empty() {
            return Err(ApiError::invalid(
                &t.res.def,
                "",
                &[FieldError::required("metadata.name", "name or generateName is required")],
            ));
        }
        if let Some(ns) = &url_ns {
            self.check_namespace_open(t, ns)?;
        }
        self.create_named(t, obj, managers.as_ref(), opts, warnings, &name, &generate).await
    }

    /// Refuses creation in a namespace that is missing or terminating.
    fn check_namespace_open(&self, t: &Target, ns: &str) -> ApiResult<()> {
        match self.namespace_state(&t.cluster, ns) {
            None => {
                let nsdef = drydock_api::ResourceDef::new("", "v1", "Namespace", "namespaces");
                Err(ApiError::not_found(&nsdef, ns))
            }
            Some(true) => Err(ApiError::new(
                403,
                "Forbidden",
                format!("unable to create new content in namespace {ns} because it is being terminated"),
            )),
            Some(false) => Ok(()),
        }
    }

    /// Admits and commits a new object called `name`, or, without a name, under names
    /// generated from `generate` until one is free (a few attempts). Admission never sees
    /// the managedFields (`managers`); they are added as the object is encoded.
    #[allow(clippy::too_many_arguments)]
    async fn create_named(
        &self,
        t: &Target,
        obj: Value,
        managers: Option<&Managers>,
        opts: &WriteOptions,
        mut warnings: Vec<String>,
        name: &str,
        generate: &str,
    ) -> ApiResult<Written> {
        let attempts = if name.is_empty() { 8 } else { 1 };
        let mut last = Some(obj);
        for attempt in 1..=attempts {
            // Only a generated name that was taken needs the object again.
            let mut obj = match (attempt < attempts, &mut last) {
                (true, Some(o)) => o.clone(),
                (_, last) => last.take().ok_or_else(|| ApiError::internal("create attempted after its last try"))?,
            };
            let name = if name.is_empty() { format!("{generate}{}", meta::name_suffix()) } else { name.to_string() };
            meta_mut(&mut obj)?.insert("name".into(), json!(name));
            if let Err(e) = self.validate_name(t, &name) {
                return Err(ApiError::invalid(&t.res.def, &name, &[e]));
            }
            self.run_admission(t, (&mut obj, &[]), None, &mut warnings)?;
            super::guard::WriteGuard::check(opts.guard.as_ref(), &obj)?;
            // A Service's addresses are chosen and committed under one lock.
            let _allocating = if services::is_service(t) {
                let guard = self.services.lock().await;
                services::allocate(self, t, &mut obj)?;
                Some(guard)
            } else {
                None
            };
            if opts.dry_run {
                set_managers(&mut obj, managers.cloned())?;
                return self.dry_run(&obj, 201, warnings);
            }
            let enc = self.encode_for_store(t, obj, managers)?;
            match self.store.commit(t.key(&name), Expect::Absent, Change::Put(enc)).await {
                Ok(c) => return self.written(t, 201, &c, warnings),
                Err(StoreError::AlreadyExists) if attempts > 1 => {}
                Err(e) => return Err(self.store_error(t, &name, e)),
            }
        }
        Err(ApiError::new(
            409,
            "AlreadyExists",
            format!("could not generate a free name from generateName \"{generate}\""),
        ))
    }
}

/// System metadata of a new object: the namespace from the URL (a different one in the body
/// is refused), a fresh uid and creation time, generation 1 where tracked, and none of the
/// fields only the server sets.
fn set_create_metadata(t: &Target, m: &mut Map<String, Value>, url_ns: Option<&str>) -> ApiResult<()> {
    if let (Some(body_ns), Some(url)) = (m.get("namespace").and_then(Value::as_str), url_ns)
        && !body_ns.is_empty()
        && body_ns != url
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    match url_ns {
        Some(ns) => {
            m.insert("namespace".into(), json!(ns));
        }
        None => {
            m.remove("namespace");
        }
    }
    for f in ["resourceVersion", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]
    {
        m.remove(f);
    }
    m.insert("uid".into(), json!(meta::new_uid()));
    m.insert("creationTimestamp".into(), json!(now_rfc3339()));
    if tracks_generation(&t.res) {
        m.insert("generation".into(), json!(1));
    } else {
        m.remove("generation");
    }
    Ok(())
}
