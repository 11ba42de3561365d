//! The one way controllers write: a reconciler computes the object it wants from the object
//! it read, and its [`Writer`] sends what differs, metadata and spec first, then the
//! status, each only when something differs, counting every write in the controller's
//! metrics and remembering the versions it superseded (see [`super::fresh`]).
//!
//! Main-resource patches carry the resourceVersion they were computed from, so a concurrent
//! change makes them conflict (and the reconcile retry) instead of silently overwriting it.
//! Status patches carry it too where other controllers write conditions of the same list
//! ([`Status::IfUnchanged`]); a patch computed from an older copy would drop theirs.

use std::fmt::Debug;
use std::marker::PhantomData;

use drydock_api::capi::owner;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::diff::diff;
use super::error::{Error, Result};
use super::fresh::Superseded;
use super::metrics;
use super::runner::key_of;
use super::serialized::Serialized;

/// How deep objects are split into members for diffing: the object's own members, and
/// theirs (metadata, spec and status are compared field by field without a second scan).
const LEVELS: usize = 2;

/// How a write treats the status subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Merged without precondition: the controller is the status's only writer.
    Merge,
    /// Written only while the object is still at the version it was computed from. With
    /// `observe_generation`, `status.observedGeneration` records the generation the object
    /// has after the spec write, so a reconcile that changes the spec needs no other write
    /// just to catch it up.
    IfUnchanged { observe_generation: bool },
}

impl Status {
    /// [`Status::IfUnchanged`], recording observedGeneration when `observe_generation`.
    pub fn observing(observe_generation: bool) -> Self {
        Self::IfUnchanged { observe_generation }
    }
}

/// What one write did.
#[derive(Debug)]
pub struct WriteOutcome<K> {
    pub main: bool,
    pub status: bool,
    /// The metadata the server answered to the last write (a write is answered with
    /// metadata only), and the status that write sent when it is not the wanted object's
    /// own (observedGeneration caught up). Few callers want the object written: it is
    /// put together only when asked for.
    written: Option<(Answer, Option<Serialized>)>,
    kind: PhantomData<fn() -> K>,
}

impl<K> WriteOutcome<K> {
    fn nothing() -> Self {
        Self { main: false, status: false, written: None, kind: PhantomData }
    }
}

impl<K: Resource + Clone + Serialize + DeserializeOwned> WriteOutcome<K> {
    /// The object as last written: `after`, what the write wanted, with the metadata the
    /// server answered and the status sent; `after` itself when nothing was written.
    pub fn or_wanted(self, after: &K) -> Result<K> {
        let Some((answer, status)) = self.written else { return Ok(after.clone()) };
        let mut object = match status {
            Some(s) => with_status(after, &s)?,
            None => after.clone(),
        };
        *object.meta_mut() = answer.meta()?;
        Ok(object)
    }
}

/// Writes the objects a controller reconciles, counts its writes, and (when tracking)
/// remembers what it superseded so a later reconcile of an older copy can be skipped.
pub struct Writer {
    controller: &'static str,
    fresh: Option<Superseded>,
}

impl Writer {
    /// A writer that does not track staleness.
    pub const fn new(controller: &'static str) -> Self {
        Self { controller, fresh: None }
    }

    /// A writer that remembers the versions its writes superseded ([`Writer::is_stale`]).
    pub fn tracking(controller: &'static str) -> Self {
        Self { controller, fresh: Some(Superseded::default()) }
    }

    pub fn controller(&self) -> &'static str {
        self.controller
    }

    /// True when `read` is a copy from before this writer's last write of it.
    pub fn is_stale<K: Resource>(&self, read: &K) -> bool {
        self.fresh.as_ref().is_some_and(|f| f.is_stale(read))
    }

    /// Forgets an object (it goes away with this write).
    pub fn forget<K: Resource>(&self, o: &K) {
        if let Some(f) = &self.fresh {
            f.forget(o);
        }
    }

    fn superseded(&self, key: &str, base: Option<&str>, produced: Option<&str>) {
        if let Some(f) = &self.fresh {
            f.wrote_key(key.to_string(), base, produced);
        }
    }

    /// Writes what differs between `before` (as read) and `after` (as wanted), the status
    /// merged as is.
    pub async fn apply<K>(&self, api: &Api<K>, before: &K, after: &K) -> Result<WriteOutcome<K>>
    where
        K: Resource + Serialize + DeserializeOwned + Clone + Debug + PartialEq,
    {
        self.write(api, before, after, Status::Merge).await
    }

    /// Writes what differs between `before` (as read) and `after` (as wanted): metadata and
    /// spec first, then the status as `status` says.
    pub async fn write<K>(&self, api: &Api<K>, before: &K, after: &K, status: Status) -> Result<WriteOutcome<K>>
    where
        K: Resource + Serialize + DeserializeOwned + Clone + Debug + PartialEq,
    {
        // Most reconciles want what they read. Unless it records observedGeneration, such a
        // write sends nothing; otherwise the status read serves as both sides, and only a
        // status behind its generation can still make a write.
        let observe_generation = status == (Status::IfUnchanged { observe_generation: true });
        let same = before == after;
        if same && !observe_generation {
            return Ok(WriteOutcome::nothing());
        }
        // What is equal on both sides is not serialized: unchanged metadata (managedFields
        // are a large part of a busy object's bytes) or, when nothing changed, all but the
        // status.
        let keep: fn(&str) -> bool = match (same, before.meta() == after.meta()) {
            (true, _) => is_status,
            (false, true) => |k| k != "metadata",
            (false, false) => |_| true,
        };
        let mut old = Serialized::of_members(before, LEVELS, keep)?;
        let old_status = old.take("status");
        let mut new = if same { None } else { Some(Serialized::of_members(after, LEVELS, keep)?) };
        let new_status = new.as_mut().map(|n| n.take("status"));
        let new_status = match &new_status {
            Some(s) => s.as_ref(),
            None => old_status.as_ref(),
        };
        let name = before.meta().name.clone().unwrap_or_default();
        let key = key_of(before);
        let mut out = WriteOutcome::nothing();
        // The answers carry the metadata only: the rest of what was written is `after`.
        let mut written: Option<Answer> = None;
        if let Some(new) = &new
            && let Some(mut patch) = diff(Some(&old), Some(new))?
        {
            patch["metadata"]["resourceVersion"] = json!(before.meta().resource_version);
            let answer = patch_for_metadata(api, &name, false, &patch).await.map_err(gone(&name))?;
            metrics::write(self.controller);
            self.superseded(&key, before.meta().resource_version.as_deref(), answer.resource_version.as_deref());
            out.main = true;
            written = Some(answer);
        }
        let (base_rv, generation) = match &written {
            Some(a) => (a.resource_version.clone(), a.generation),
            None => (before.meta().resource_version.clone(), before.meta().generation),
        };
        let observed = observed_status(new_status, observe_generation, before.meta().generation, generation)?;
        if let Some(diff) = diff(old_status.as_ref(), observed.as_ref().or(new_status))? {
            let mut body = json!({ "status": diff });
            if status != Status::Merge {
                body["metadata"] = json!({"resourceVersion": base_rv});
            }
            let answer = patch_for_metadata(api, &name, true, &body).await.map_err(gone(&name))?;
            metrics::write(self.controller);
            self.superseded(&key, base_rv.as_deref(), answer.resource_version.as_deref());
            out.status = true;
            written = Some(answer);
        }
        out.written = written.map(|answer| (answer, observed.filter(|_| out.status)));
        Ok(out)
    }

    /// Writes only the status of `after`, if it differs from `before`'s, while the object
    /// is still at `before`'s version. Returns the object written, if any.
    pub async fn write_status<K>(&self, api: &Api<K>, before: &K, after: &K) -> Result<Option<K>>
    where
        K: Resource + Serialize + DeserializeOwned + Clone + Debug,
    {
        let (mut old, mut new) =
            (Serialized::of_members(before, LEVELS, is_status)?, Serialized::of_members(after, LEVELS, is_status)?);
        let Some(diff) = diff(old.take("status").as_ref(), new.take("status").as_ref())? else {
            return Ok(None);
        };
        let body = json!({
            "metadata": {"resourceVersion": before.meta().resource_version},
            "status": diff,
        });
        let name = before.meta().name.clone().unwrap_or_default();
        let answer = patch_for_metadata(api, &name, true, &body).await.map_err(gone(&name))?;
        metrics::write(self.controller);
        self.superseded(&key_of(before), before.meta().resource_version.as_deref(), answer.resource_version.as_deref());
        let mut written = after.clone();
        *written.meta_mut() = answer.meta()?;
        Ok(Some(written))
    }

    /// Sends a merge patch computed by the caller (objects the controller does not
    /// reconcile: Nodes, Secrets, referenced objects), counting the write.
    pub async fn patch<K>(&self, api: &Api<K>, name: &str, body: &Value) -> Result<K, kube::Error>
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        merge_patch(api, self.controller, name, body).await
    }

    /// Creates `obj`, treating "already exists" as success (creation is idempotent across
    /// retries).
    pub async fn create_if_absent<K>(&self, api: &Api<K>, obj: &K) -> Result<()>
    where
        K: Resource + Serialize + DeserializeOwned + Clone + Debug,
    {
        create_if_absent(api, self.controller, obj).await
    }

    /// Deletes `name` unless it is already gone. Returns true if a delete was issued.
    pub async fn delete_if_present<K>(&self, api: &Api<K>, name: &str) -> Result<bool>
    where
        K: Resource + Clone + DeserializeOwned + Debug,
    {
        delete_if_present(api, self.controller, name).await
    }
}

/// Whether an object's member is its status.
fn is_status(member: &str) -> bool {
    member == "status"
}

/// The status `new` with `status.observedGeneration` set to `generation` (when
/// `observe_generation`) and its conditions moved from generation `old` to `generation`
/// (when the write's own spec change moved it), or `None` when neither changes anything.
fn observed_status(
    new: Option<&Serialized>,
    observe_generation: bool,
    old: Option<i64>,
    generation: Option<i64>,
) -> Result<Option<Serialized>> {
    // Only a write that records observedGeneration reads the one the status holds.
    let behind = |s: &Serialized| -> Result<bool> {
        let recorded = match s.members() {
            Some(_) => s.get("observedGeneration").map(Serialized::text),
            None => s.to_value()?.get("observedGeneration").map(Value::to_string),
        };
        Ok(recorded != generation.map(|g| g.to_string()))
    };
    let catch_up = observe_generation && new.map_or(Ok(true), behind)?;
    if !catch_up && old == generation {
        return Ok(None);
    }
    let mut status: Value = match new {
        Some(s) => s.to_value()?,
        None => Value::Null,
    };
    if observe_generation {
        observe(&mut status, generation);
    }
    if old != generation {
        observe_conditions(&mut status, old, generation);
    }
    Ok(Some(Serialized::of(&status, 1)?))
}

/// The answer to a write: the written object's metadata, its resourceVersion and
/// generation read at once and the rest (managedFields are most of it) decoded only when
/// the written object is asked for.
#[derive(Debug)]
struct Answer {
    metadata: Box<RawValue>,
    resource_version: Option<String>,
    generation: Option<i64>,
}

impl Answer {
    fn meta(&self) -> Result<ObjectMeta> {
        Ok(serde_json::from_str(self.metadata.get())?)
    }
}

/// Sends a merge patch of `name` (of its status when `status`) asking for the object's
/// metadata only in the answer: the writer knows the rest, and decoding a whole object
/// (most of whose bytes are its status) for a resourceVersion costs more than the write.
async fn patch_for_metadata<K>(api: &Api<K>, name: &str, status: bool, body: &Value) -> Result<Answer, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    #[derive(Deserialize)]
    struct Answered {
        metadata: Box<RawValue>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Versions {
        resource_version: Option<String>,
        generation: Option<i64>,
    }
    let (params, patch) = (PatchParams::default(), Patch::Merge(body));
    let req = kube::core::Request::new(api.resource_url());
    let mut req = match status {
        true => req.patch_subresource("status", name, &params, &patch),
        false => req.patch(name, &params, &patch),
    }
    .map_err(kube::Error::BuildRequest)?;
    req.headers_mut().insert(http::header::ACCEPT, http::HeaderValue::from_static(METADATA_ONLY));
    let Answered { metadata } = api.clone().into_client().request(req).await?;
    let Versions { resource_version, generation } =
        serde_json::from_str(metadata.get()).map_err(kube::Error::SerdeError)?;
    Ok(Answer { metadata, resource_version, generation })
}

/// What a write asks to be answered with: the object's metadata.
const METADATA_ONLY: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/// `obj` with the status `status`.
fn with_status<K: Serialize + DeserializeOwned>(obj: &K, status: &Serialized) -> Result<K> {
    let mut v = serde_json::to_value(obj)?;
    v["status"] = status.to_value()?;
    Ok(serde_json::from_value(v)?)
}

/// Sets `observedGeneration` in a status (creating it when absent).
fn observe(status: &mut Value, generation: Option<i64>) {
    if !status.is_object() {
        *status = json!({});
    }
    if let Some(s) = status.as_object_mut() {
        match generation {
            Some(g) => s.insert("observedGeneration".into(), json!(g)),
            None => s.remove("observedGeneration"),
        };
    }
}

/// The v1beta2 conditions computed as of `old` observed the spec this write just gave
/// generation `new` (the controller's own change): recording `old` would make the next
/// reconcile rewrite every condition only to catch the generation up. They are in
/// `status.conditions` of a v1beta2 kind, `status.v1beta2.conditions` of a v1beta1 one
/// (whose `status.conditions`, v1beta1's, carry no generation).
fn observe_conditions(status: &mut Value, old: Option<i64>, new: Option<i64>) {
    let pointer = if status.pointer("/v1beta2/conditions").is_some() { "/v1beta2/conditions" } else { "/conditions" };
    let Some(conditions) = status.pointer_mut(pointer).and_then(Value::as_array_mut) else {
        return;
    };
    for c in conditions {
        if let Some(g) = c.get_mut("observedGeneration")
            && g.as_i64() == old
        {
            *g = json!(new);
        }
    }
}

/// A 404 while writing: the object was deleted meanwhile.
fn gone(name: &str) -> impl Fn(kube::Error) -> Error + '_ {
    move |e| match e {
        kube::Error::Api(s) if s.code == 404 => Error::Gone(name.to_string()),
        e => Error::Kube(e),
    }
}

/// Creates `obj`, counting the write for `controller` (callers handle "already exists").
pub async fn create<K>(api: &Api<K>, controller: &str, obj: &K) -> Result<K, kube::Error>
where
    K: Resource + Serialize + DeserializeOwned + Clone + Debug,
{
    let created = api.create(&Default::default(), obj).await?;
    metrics::write(controller);
    Ok(created)
}

/// Sends a merge patch computed by the caller, counting the write for `controller`.
pub async fn merge_patch<K>(api: &Api<K>, controller: &str, name: &str, body: &Value) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let written = api.patch(name, &PatchParams::default(), &Patch::Merge(body)).await?;
    metrics::write(controller);
    Ok(written)
}

/// A reference to `owner` as the controller of the objects it adopts.
pub fn controller_ref_of<K: Resource<DynamicType = ()>>(owner: &K) -> Result<OwnerReference> {
    owner::controller_ref(owner).ok_or_else(|| Error::inconsistent("owner", "no name or uid yet"))
}

/// Creates `obj`, treating "already exists" as success (creation is idempotent across retries).
pub async fn create_if_absent<K>(api: &Api<K>, controller: &str, obj: &K) -> Result<()>
where
    K: Resource + Serialize + DeserializeOwned + Clone + Debug,
{
    match create(api, controller, obj).await {
        Ok(_) => Ok(()),
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

/// Adds a finalizer to a copy of the object's metadata (written by a [`Writer`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_of_the_written_generation_follow_the_spec_write() {
        let mut status = json!({"v1beta2": {"conditions": [
            {"type": "Ready", "observedGeneration": 3},
            {"type": "UpToDate", "observedGeneration": 2},
            {"type": "Paused"},
        ]}});
        observe_conditions(&mut status, Some(3), Some(4));
        let gens: Vec<_> = status["v1beta2"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["observedGeneration"].clone())
            .collect();
        assert_eq!(gens, [json!(4), json!(2), Value::Null]);
        let mut none = json!({"phase": "Running"});
        observe_conditions(&mut none, Some(3), Some(4));
        assert_eq!(none, json!({"phase": "Running"}));
        // A v1beta2 kind keeps them in status.conditions.
        let mut hub = json!({"conditions": [{"type": "Ready", "observedGeneration": 3}]});
        observe_conditions(&mut hub, Some(3), Some(4));
        assert_eq!(hub["conditions"][0]["observedGeneration"], 4);
    }

    #[tokio::test]
    async fn an_object_wanted_as_read_is_not_written_and_a_change_is_written_once() {
        use k8s_openapi::api::core::v1::Secret;

        let fake = crate::framework::fake_api::FakeSecrets::new();
        let mut s = Secret::default();
        s.metadata.name = Some("s".into());
        s.metadata.namespace = Some("ns".into());
        fake.insert(s);
        let read = fake.get("ns", "s").expect("stored");
        let api: Api<Secret> = Api::namespaced(fake.client(), "ns");
        let writer = Writer::new("test");

        let out = writer.write(&api, &read, &read.clone(), Status::Merge).await.expect("no write");
        assert!(!out.main && !out.status && out.written.is_none());
        assert_eq!(fake.count("PATCH"), 0);

        let mut want = read.clone();
        want.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
        let out = writer.write(&api, &read, &want, Status::Merge).await.expect("a write");
        assert!(out.main && !out.status);
        assert_eq!(fake.count("PATCH"), 1);
        let written = fake.get("ns", "s").expect("stored");
        assert_eq!(written.metadata.labels, want.metadata.labels);

        // Unchanged metadata is left out of the comparison, not out of the write.
        let read = written;
        let mut want = read.clone();
        want.string_data = Some([("k".to_string(), "v".to_string())].into());
        let out = writer.write(&api, &read, &want, Status::Merge).await.expect("a write");
        assert!(out.main);
        let written = fake.get("ns", "s").expect("stored");
        assert_eq!(written.string_data, want.string_data);
        assert_eq!(written.metadata.labels, want.metadata.labels);
        let object = out.or_wanted(&want).expect("the object written");
        assert_eq!(object.metadata.resource_version, written.metadata.resource_version);
        assert_eq!(object.string_data, want.string_data);
    }

    fn raw(v: Value) -> Serialized {
        Serialized::of(&v, 1).unwrap()
    }

    #[test]
    fn observed_generation_is_caught_up_only_when_behind() {
        let current = raw(json!({"observedGeneration": 4, "phase": "Running"}));
        assert!(observed_status(Some(&current), true, Some(4), Some(4)).unwrap().is_none());
        assert!(observed_status(Some(&current), false, Some(4), Some(4)).unwrap().is_none());
        let behind = raw(json!({"observedGeneration": 3, "phase": "Running"}));
        let caught = observed_status(Some(&behind), true, Some(4), Some(4)).unwrap().unwrap();
        assert_eq!(caught.to_value().unwrap(), json!({"observedGeneration": 4, "phase": "Running"}));
        let created = observed_status(None, true, Some(1), Some(1)).unwrap().unwrap();
        assert_eq!(created.text(), r#"{"observedGeneration":1}"#);
        // The write's own spec change moves the conditions computed at the old generation.
        let hub = raw(json!({"conditions": [{"type": "Ready", "observedGeneration": 3}]}));
        let moved = observed_status(Some(&hub), false, Some(3), Some(4)).unwrap().unwrap();
        assert_eq!(moved.to_value().unwrap()["conditions"][0]["observedGeneration"], 4);
    }
}
