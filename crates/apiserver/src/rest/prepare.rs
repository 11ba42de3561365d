//! What an update stores: the object built from the current one and the requested one,
//! checked, with its managedFields. A write that cannot change some top-level members
//! leaves them as stored ([`Untouched`]): never parsed, walked or encoded again.

use drydock_api::FieldError;
use serde_json::{Map, Value, json};

use super::write::{Track, WriteOptions, meta_mut, spec_changed, str_field, tracks_generation};
use super::{Api, Subresource, Target, meta, not_parsed};
use crate::builtin::services;
use crate::error::{ApiError, ApiResult};
use crate::managed::{self, Apart, Live, Managers, Writer};
use crate::registry::Resource;
use crate::schema;
use crate::store::Stored;

/// Top-level members a write leaves as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Untouched {
    /// None: the whole object is parsed.
    Nothing,
    /// Those a status write cannot change: all but `apiVersion`, `kind`, `metadata` and
    /// `status`.
    AllButStatus,
    /// The status, which a write of the main resource of a kind with a status subresource
    /// cannot change.
    Status,
}

impl Untouched {
    /// The members a merge patch of `t` leaves as stored, when `t` is a custom resource's
    /// storage version (objects are read as stored, bar the read defaults) and nothing
    /// needs the whole object (a dry run answers it, a guard or the scale subresource
    /// reads it).
    pub fn of_merge_patch(t: &Target, opts: &WriteOptions) -> Self {
        let as_stored =
            t.res.conversion.is_none() && t.res.custom.as_ref().is_some_and(|c| c.storage_version == t.res.def.version);
        if !as_stored || opts.dry_run || opts.guard.is_some() || opts.via_scale {
            return Self::Nothing;
        }
        match t.sub {
            Some(Subresource::Status) => Self::AllButStatus,
            None if t.res.def.status_subresource => Self::Status,
            _ => Self::Nothing,
        }
    }

    fn filter(self) -> fn(&str) -> bool {
        match self {
            Self::Nothing => |_| false,
            Self::AllButStatus => |k| !matches!(k, "apiVersion" | "kind" | "metadata" | "status"),
            Self::Status => |k| k == "status",
        }
    }
}

/// The object a write starts from: parsed, but for the members it leaves as stored.
pub(super) struct Current<'a> {
    pub value: Value,
    pub managed: Option<Live<'a>>,
    pub apart: Apart<'a>,
}

impl Current<'_> {
    /// The names of the members left as stored.
    pub fn apart_keys(&self) -> Vec<&str> {
        names(&self.apart)
    }
}

fn names<'k>(apart: &'k Apart<'_>) -> Vec<&'k str> {
    apart.iter().map(|(k, _)| k.as_str()).collect()
}

/// What [`Api::prepare_update`] came to.
pub(super) enum Prepared {
    /// The object to store and its managedFields.
    Ready(Value, Option<Managers>),
    /// The write must start again from the whole object: a manager recorded in another
    /// version sees the write in that version's shape, converted from the whole object.
    NeedsWhole,
}

impl Api {
    /// Parses the current object for a write to `t` (in its storage version), as `t`
    /// serves it, leaving `untouched` members as stored unless the schema or the selectable
    /// fields need to see them, or the object is stored in another version.
    pub(super) fn current<'a>(&self, t: &Target, obj: &'a Stored, untouched: Untouched) -> ApiResult<Current<'a>> {
        if let (Some(c), false) = (&t.res.custom, untouched == Untouched::Nothing) {
            let (value, managed, apart) =
                managed::parse_object_apart(&obj.bytes, untouched.filter()).map_err(not_parsed)?;
            let keys = names(&apart);
            if self.can_leave_apart(&t.res, &keys)
                && let Some(value) = c.converter.from_storage_apart(value, &t.res.def.version, &keys)
            {
                return Ok(Current { value, managed, apart });
            }
        }
        let (value, managed) = self.value_and_managed(&t.res, obj)?;
        Ok(Current { value, managed, apart: Vec::new() })
    }

    /// Whether the writes' checks and indexes can do without `apart`'s members.
    fn can_leave_apart(&self, res: &Resource, apart: &[&str]) -> bool {
        let schema = schema::Validator::or_schemaless(res.validator.as_ref());
        let selectable = self.storage_selectable(res);
        apart.iter().all(|k| {
            schema.walks_apart(k) && !selectable.iter().any(|p| p.trim_start_matches('.').split('.').next() == Some(*k))
        })
    }

    /// Builds the object to store from the current one and the requested one, and its
    /// managedFields; [`Prepared::NeedsWhole`] when members left as stored turn out to be
    /// needed.
    pub(super) fn prepare_update(
        &self,
        t: &Target,
        cur: &Current<'_>,
        mut requested: Value,
        opts: &WriteOptions,
        track: Track,
        warnings: &mut Vec<String>,
    ) -> ApiResult<Prepared> {
        let sent = managed::take_sent(&mut requested);
        if t.sub == Some(Subresource::Status) {
            return self.prepare_status(t, cur, (requested, sent), (opts, track), warnings);
        }
        let (current, live_managed) = (&cur.value, cur.managed);
        let apart = cur.apart_keys();
        self.check_kind(&t.res, &mut requested)?;
        let status_sub = t.res.def.status_subresource;
        {
            let cur_meta = &current["metadata"];
            let m = meta_mut(&mut requested)?;
            for f in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ] {
                match cur_meta.get(f) {
                    Some(v) => m.insert(f.into(), v.clone()),
                    None => m.remove(f),
                };
            }
            m.remove("resourceVersion");
        }
        if status_sub && let Some(map) = requested.as_object_mut() {
            // A status left as stored stays so; otherwise the stored one is kept.
            match current.get("status") {
                Some(s) => map.insert("status".into(), s.clone()),
                None => map.remove("status"),
            };
        }
        self.apply_schema_apart(t, (&mut requested, &apart), Some(current), opts, warnings)?;
        let (managers, other_versions) =
            self.managers_of(t, Some((current, live_managed)), &requested, sent, opts, track, "");
        if other_versions && !apart.is_empty() {
            return Ok(Prepared::NeedsWhole);
        }
        if current["metadata"]["deletionTimestamp"].is_string() {
            let old: Vec<&Value> =
                current["metadata"]["finalizers"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
            let added =
                requested["metadata"]["finalizers"].as_array().is_some_and(|a| a.iter().any(|f| !old.contains(&f)));
            if added {
                let name = str_field(current, &["metadata", "name"]).unwrap_or_default();
                return Err(ApiError::invalid(
                    &t.res.def,
                    name,
                    &[FieldError::forbidden(
                        "metadata.finalizers",
                        "no new finalizers can be added if the object is being deleted",
                    )],
                ));
            }
        }
        self.run_admission(t, (&mut requested, &apart), Some(current), warnings)?;
        super::guard::WriteGuard::check(opts.guard.as_ref(), &requested)?;
        if services::is_service(t) {
            // Updates are not serialized with creates: a node port taken by a concurrent
            // create could be handed out twice (a type change to NodePort is rare).
            services::allocate(self, t, &mut requested)?;
        }
        if tracks_generation(&t.res) && spec_changed(&requested, current, status_sub) {
            let generation = current["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            meta_mut(&mut requested)?.insert("generation".into(), json!(generation));
        }
        Ok(Prepared::Ready(requested, managers))
    }

    /// [`Api::prepare_update`] of a status write: the stored object with the requested
    /// status.
    fn prepare_status(
        &self,
        t: &Target,
        cur: &Current<'_>,
        (mut requested, sent): (Value, Option<Value>),
        (opts, track): (&WriteOptions, Track),
        warnings: &mut Vec<String>,
    ) -> ApiResult<Prepared> {
        let (current, live_managed) = (&cur.value, cur.managed);
        let apart = cur.apart_keys();
        // Everything but the status as stored, and the requested status moved in: the
        // current status (most of a busy object's bytes) is not copied to be replaced.
        let stored = current.as_object().ok_or_else(|| ApiError::internal("stored object is not an object"))?;
        let mut map: Map<String, Value> =
            stored.iter().filter(|(k, _)| *k != "status").map(|(k, v)| (k.clone(), v.clone())).collect();
        if let Some(s) = requested.as_object_mut().and_then(|m| m.remove("status")) {
            map.insert("status".into(), s);
        }
        let mut next = Value::Object(map);
        self.apply_schema_apart(t, (&mut next, &apart), Some(current), opts, warnings)?;
        let (managers, other_versions) =
            self.managers_of(t, Some((current, live_managed)), &next, sent, opts, track, "status");
        if other_versions && !apart.is_empty() {
            return Ok(Prepared::NeedsWhole);
        }
        let mut errs = Vec::new();
        self.validate_schema(t, (&next, &apart), Some(current), &mut errs, warnings);
        if !errs.is_empty() {
            let name = str_field(current, &["metadata", "name"]).unwrap_or_default();
            return Err(ApiError::invalid(&t.res.def, name, &errs));
        }
        Ok(Prepared::Ready(next, managers))
    }

    /// The managedFields of `obj` as written from `current` (`None`: created): computed
    /// here for updates (after defaulting, before admission, as kube-apiserver does),
    /// carried over from the apply that built `obj` otherwise. They are kept apart from the
    /// object, which admission so never decodes, and serialized into its encoding.
    /// Also says whether the tracking looked at the write in another version (for a
    /// manager recorded there).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn managers_of(
        &self,
        t: &Target,
        current: Option<(&Value, Option<Live<'_>>)>,
        obj: &Value,
        sent: Option<Value>,
        opts: &WriteOptions,
        track: Track,
        subresource: &str,
    ) -> (Option<Managers>, bool) {
        match track {
            Track::Applied => (sent.map(Managers::Json), false),
            Track::Update => {
                let now = meta::now_rfc3339();
                let av = t.res.def.api_version();
                let subresource = if opts.via_scale { "scale" } else { subresource };
                let w = self.writer(t, opts.manager(), &av, subresource, &now);
                let (live, live_managed) = current.map_or((None, None), |(c, m)| (Some(c), m));
                let versions = super::versions::ServedVersions::new(self, t);
                let managers =
                    managed::track_update((t.res.merge_type(), &versions), live, live_managed, obj, sent.as_ref(), &w);
                (managers, versions.asked())
            }
        }
    }

    /// The writer of a request to `t` through `subresource` ("" for the main resource).
    pub(super) fn writer<'a>(
        &self,
        t: &Target,
        manager: &'a str,
        api_version: &'a str,
        subresource: &'a str,
        now: &'a str,
    ) -> Writer<'a> {
        const STATUS: &[&str] = &["status"];
        const SPEC_AND_METADATA: &[&str] = &["metadata", "spec"];
        let ignored: &[&str] = match subresource {
            "status" => SPEC_AND_METADATA,
            "" if t.res.def.status_subresource => STATUS,
            _ => &[],
        };
        Writer { manager, api_version, subresource, ignored, now }
    }
}
