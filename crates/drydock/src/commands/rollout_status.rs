//! `drydock rollout status`: waits for the rollout the object asks for, including one that
//! has not started yet. A rollout is pending while the controller has not observed the
//! latest generation, and while `spec.rollout.after` (v1beta1: `spec.rolloutAfter`; set by
//! `rollout restart`, possibly by another client a moment ago) has not been acted on: for a
//! MachineDeployment, until a
//! MachineSet created at or after it holds every replica; for a KubeadmControlPlane, until
//! every control plane Machine was created after it (the controllers' rules).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Context;
use drydock_api::capi::keys::REVISION_ANNOTATION;
use drydock_api::capi::owner::api_group;
use jiff::Timestamp;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Value, json};

use super::rollout::{Kind, Target, target};
use super::{Global, connect};

/// Where a rollout stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub done: bool,
    pub wanted: i64,
    pub updated: i64,
    pub available: i64,
    /// What is awaited, for the progress line.
    pub waiting_for: String,
    /// What now runs: the current MachineSet, or the control plane Machines.
    pub current: Vec<String>,
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn created(o: &Value) -> Option<Timestamp> {
    o["metadata"]["creationTimestamp"].as_str()?.parse().ok()
}

fn deleting(o: &Value) -> bool {
    !o["metadata"]["deletionTimestamp"].is_null()
}

/// The controller has seen the object's latest spec.
fn observed(o: &Value) -> bool {
    int(&o["status"]["observedGeneration"]) >= int(&o["metadata"]["generation"])
}

/// `spec.rollout.after` (v1beta2) or `spec.rolloutAfter` (v1beta1): the CLI reads whichever
/// version discovery prefers.
fn rollout_after(o: &Value) -> Option<Timestamp> {
    o["spec"]["rollout"]["after"].as_str().or(o["spec"]["rolloutAfter"].as_str())?.parse().ok()
}

/// The path of the rollout-after time in `o`'s version, for messages.
fn rollout_after_field(o: &Value) -> &'static str {
    if o["spec"]["rolloutAfter"].is_string() { "spec.rolloutAfter" } else { "spec.rollout.after" }
}

/// The merge patch setting the rollout-after time of `o`, in `o`'s version.
pub fn rollout_after_patch(o: &Value, after: &str) -> Value {
    if is_v1beta1(o) {
        json!({"spec": {"rolloutAfter": after}})
    } else {
        json!({"spec": {"rollout": {"after": after}}})
    }
}

fn is_v1beta1(o: &Value) -> bool {
    o["apiVersion"].as_str().is_some_and(|v| v.ends_with("/v1beta1"))
}

/// Replicas with the latest spec: `upToDateReplicas` (v1beta2), `updatedReplicas` (v1beta1).
fn up_to_date(status: &Value) -> i64 {
    int(if status.get("upToDateReplicas").is_some() { &status["upToDateReplicas"] } else { &status["updatedReplicas"] })
}

/// The parts of a Machine template that take new Machines to change, in either version's
/// JSON (references by group, kind and name): the controllers' rule for which MachineSet
/// runs the deployment's template. The status counters follow it only once the Machines'
/// `UpToDate` conditions were rewritten, so a finished rollout is also checked here.
fn rollout_fields(template: &Value) -> Value {
    let s = &template["spec"];
    let reference = |r: &Value| {
        let group = r["apiGroup"].as_str().or_else(|| r["apiVersion"].as_str().map(api_group));
        json!([group, r["kind"], r["name"]])
    };
    let b = &s["bootstrap"];
    json!([
        s["version"],
        reference(&b["configRef"]),
        b["dataSecretName"],
        reference(&s["infrastructureRef"]),
        s["failureDomain"]
    ])
}

fn revision(ms: &Value) -> u64 {
    ms["metadata"]["annotations"][REVISION_ANNOTATION].as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A MachineDeployment's rollout, given the MachineSets it controls.
pub fn machine_deployment(md: &Value, sets: &[Value]) -> State {
    let wanted = md["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &md["status"];
    let (updated, available) = (up_to_date(st), int(&st["availableReplicas"]));
    let live: Vec<&Value> = sets.iter().filter(|s| !deleting(s)).collect();
    let current = live.iter().copied().max_by_key(|s| (revision(s), created(s)));
    let mut state = State {
        done: false,
        wanted,
        updated,
        available,
        waiting_for: String::new(),
        current: current.map(|s| vec![name(s)]).unwrap_or_default(),
    };
    let after = rollout_after(md);
    state.waiting_for = if !observed(md) {
        "the controller to observe the latest spec".into()
    } else if let Some(after) = after.filter(|a| current.is_none_or(|c| created(c).is_none_or(|t| t < *a))) {
        format!("a MachineSet created at or after {} ({after})", rollout_after_field(md))
    } else if let Some(c) =
        current.filter(|c| rollout_fields(&c["spec"]["template"]) != rollout_fields(&md["spec"]["template"]))
    {
        format!("a MachineSet with the current template (MachineSet {} runs an older one)", name(c))
    } else if let Some(c) = current.filter(|c| {
        !observed(c)
            || int(&c["spec"]["replicas"]) != wanted
            || int(&c["status"]["replicas"]) != wanted
            || int(&c["status"]["availableReplicas"]) != wanted
    }) {
        format!("MachineSet {}: {} of {wanted} available", name(c), int(&c["status"]["availableReplicas"]))
    } else if let Some(old) = live.iter().find(|s| Some(**s) != current && int(&s["status"]["replicas"]) > 0) {
        format!("old MachineSet {} to scale down", name(old))
    } else if updated != wanted || int(&st["replicas"]) != wanted || available != wanted {
        format!("{updated} of {wanted} updated, {available} available")
    } else {
        String::new()
    };
    state.done = state.waiting_for.is_empty() && current.is_some();
    state
}

/// A KubeadmControlPlane's rollout, given the Machines it controls.
pub fn control_plane(kcp: &Value, machines: &[Value]) -> State {
    let wanted = kcp["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &kcp["status"];
    let (updated, available) = (up_to_date(st), int(&st["readyReplicas"]));
    let mut current: Vec<String> = machines.iter().filter(|m| !deleting(m)).map(name).collect();
    current.sort();
    // Creation times have whole seconds: a Machine created within rolloutAfter's second
    // is replaced, as the controller decides.
    let after = rollout_after(kcp).and_then(|a| Timestamp::from_second(a.as_second()).ok());
    let older = after.and_then(|a| machines.iter().find(|m| created(m).is_none_or(|c| c <= a)));
    let waiting_for = if !observed(kcp) {
        "the controller to observe the latest spec".into()
    } else if let (Some(after), Some(m)) = (after, older) {
        format!("Machine {} (created before {} {after}) to be replaced", name(m), rollout_after_field(kcp))
    } else if let Some(m) = machines.iter().find(|m| deleting(m)) {
        format!("Machine {} to be deleted", name(m))
    } else if updated != wanted
        || int(&st["replicas"]) != wanted
        || available != wanted
        || current.len() as i64 != wanted
    {
        format!("{updated} of {wanted} updated, {available} ready")
    } else {
        String::new()
    };
    State { done: waiting_for.is_empty(), wanted, updated, available, waiting_for, current }
}

/// The objects `tg` controls: MachineSets of a MachineDeployment, Machines of a control plane.
async fn children(tg: &Target, owner: &Value) -> anyhow::Result<Vec<Value>> {
    let plural = if tg.kind == Kind::MachineDeployment { "machinesets" } else { "machines" };
    let r = super::resolve::resolve(&tg.client, plural, &tg.server).await?;
    let api: Api<DynamicObject> = Api::namespaced_with(tg.client.clone(), &tg.ns, &r.resource);
    let uid = owner["metadata"]["uid"].as_str().unwrap_or_default();
    let all = api.list(&ListParams::default()).await.map_err(|e| connect::explain(e, &tg.server))?.items;
    let mut out = Vec::new();
    for o in all {
        let v = super::with_type(serde_json::to_value(o).context("reading a listed object")?, &r.resource);
        let controlled = v["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|rs| rs.iter().any(|r| r["uid"] == uid && r["controller"] == true));
        if controlled {
            out.push(v);
        }
    }
    Ok(out)
}

/// What the finished rollout runs, and what it replaced (seen at the start, gone now).
fn report(tg: &Target, state: &State, before: &BTreeSet<String>) -> String {
    let now: BTreeSet<String> = state.current.iter().cloned().collect();
    let replaced: Vec<&str> = before.difference(&now).map(String::as_str).collect();
    let (what, list) = match tg.kind {
        Kind::MachineDeployment => ("MachineSet", state.current.join(", ")),
        Kind::KubeadmControlPlane => ("control plane Machines", state.current.join(", ")),
    };
    let mut out = format!("{} successfully rolled out\n  {what}: {list}", tg.label());
    if tg.kind == Kind::MachineDeployment {
        out.push_str(&format!(" ({} of {} available)", state.available, state.wanted));
    }
    if !replaced.is_empty() {
        out.push_str(&format!("\n  replaced: {}", replaced.join(", ")));
    }
    out.push('\n');
    out
}

/// Follows the rollout until done (exit 0) or `limit` passes (exit non-zero).
pub async fn status(g: &Global, t: &str, limit: Duration) -> anyhow::Result<(String, bool)> {
    let (tg, _) = target(g, t).await?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} updated, {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let mut before: Option<BTreeSet<String>> = None;
    loop {
        let obj = tg.api.get(&tg.name).await.map_err(|e| connect::explain(e, &tg.server))?;
        let v = serde_json::to_value(obj)?;
        let kids = children(&tg, &v).await?;
        let state = match tg.kind {
            Kind::MachineDeployment => machine_deployment(&v, &kids),
            Kind::KubeadmControlPlane => control_plane(&v, &kids),
        };
        let seen = before.get_or_insert_with(|| match tg.kind {
            Kind::MachineDeployment => kids
                .iter()
                .filter(|s| int(&s["status"]["replicas"]) > 0 || int(&s["spec"]["replicas"]) > 0)
                .map(name)
                .collect(),
            Kind::KubeadmControlPlane => kids.iter().map(name).collect(),
        });
        bar.set_length(state.wanted.max(0) as u64);
        bar.set_position(state.updated.clamp(0, state.wanted.max(0)) as u64);
        bar.set_message(format!("{}: waiting for {}", tg.label(), state.waiting_for));
        if state.done {
            bar.finish_and_clear();
            return Ok((report(&tg, &state, seen), true));
        }
        if started.elapsed() >= limit {
            bar.abandon();
            eprintln!("error: timed out after {limit:?} waiting for {}: {}", tg.label(), state.waiting_for);
            return Ok((String::new(), false));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn md(after: Option<&str>, generation: i64, observed: i64) -> Value {
        json!({"metadata": {"name": "md", "generation": generation},
            "spec": {"replicas": 2, "rolloutAfter": after},
            "status": {"observedGeneration": observed, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2}})
    }

    fn ms(name: &str, rev: &str, created: &str, replicas: i64) -> Value {
        json!({"metadata": {"name": name, "generation": 1, "creationTimestamp": created,
                "annotations": {REVISION_ANNOTATION: rev}},
            "spec": {"replicas": replicas},
            "status": {"observedGeneration": 1, "replicas": replicas, "availableReplicas": replicas}})
    }

    #[test]
    fn v1beta2_objects_are_read_in_their_own_fields() {
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "metadata": {"name": "md", "generation": 2},
            "spec": {"replicas": 2, "rollout": {"after": "2026-01-01T00:10:00Z"}},
            "status": {"observedGeneration": 2, "replicas": 2, "upToDateReplicas": 1, "availableReplicas": 2}});
        let old = ms("old", "1", "2026-01-01T00:00:00Z", 2);
        let s = machine_deployment(&md, std::slice::from_ref(&old));
        assert_eq!(s.updated, 1, "upToDateReplicas");
        assert!(!s.done && s.waiting_for.contains("spec.rollout.after (2026-01-01T00:10:00Z)"), "{s:?}");
        assert_eq!(rollout_after_patch(&md, "t"), json!({"spec": {"rollout": {"after": "t"}}}));
        let v1 = json!({"apiVersion": "cluster.x-k8s.io/v1beta1"});
        assert_eq!(rollout_after_patch(&v1, "t"), json!({"spec": {"rolloutAfter": "t"}}));
    }

    #[test]
    fn a_restart_waits_for_a_set_created_after_rollout_after() {
        let old = ms("old", "1", "2026-01-01T00:00:00Z", 2);
        // Restart just asked for, status already observed: still pending.
        let s = machine_deployment(&md(Some("2026-01-01T00:10:00Z"), 2, 2), std::slice::from_ref(&old));
        assert!(!s.done && s.waiting_for.contains("rolloutAfter"), "{s:?}");
        // Not yet observed.
        assert!(!machine_deployment(&md(None, 2, 1), std::slice::from_ref(&old)).done);
        // The new set exists but the old one still has machines.
        let new = ms("new", "2", "2026-01-01T00:10:00Z", 2);
        let half = json!({"status": {"replicas": 1}});
        let mut old_half = old.clone();
        old_half["status"]["replicas"] = half["status"]["replicas"].clone();
        let s = machine_deployment(&md(Some("2026-01-01T00:10:00Z"), 2, 2), &[old_half, new.clone()]);
        assert!(!s.done && s.waiting_for.contains("old"), "{s:?}");
        let mut old_gone = old;
        old_gone["status"]["replicas"] = json!(0);
        old_gone["spec"]["replicas"] = json!(0);
        let s = machine_deployment(&md(Some("2026-01-01T00:10:00Z"), 2, 2), &[old_gone, new]);
        assert!(s.done, "{s:?}");
        assert_eq!(s.current, vec!["new".to_string()]);
    }

    #[test]
    fn a_template_change_waits_for_a_set_running_it_whatever_the_counters_say() {
        // Paused after a template change: observed, counters not yet moved by the Machines'
        // UpToDate conditions, no new set.
        let mut md = md(None, 3, 3);
        md["spec"]["template"] = json!({"spec": {"infrastructureRef":
            {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "M", "name": "b"}}});
        let mut old = ms("old", "1", "2026-01-01T00:00:00Z", 2);
        old["spec"]["template"] = json!({"spec": {"infrastructureRef":
            {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "M", "name": "a"}}});
        let s = machine_deployment(&md, std::slice::from_ref(&old));
        assert!(!s.done && s.waiting_for.contains("MachineSet old runs an older one"), "{s:?}");
        // The same template read in the other version (group from apiVersion) is current.
        old["spec"]["template"]["spec"]["infrastructureRef"]["name"] = json!("b");
        assert!(machine_deployment(&md, std::slice::from_ref(&old)).done);
    }

    fn machine(name: &str, created: &str) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": created}})
    }

    #[test]
    fn a_control_plane_restart_waits_for_every_machine_to_be_younger() {
        let kcp = json!({"metadata": {"generation": 2}, "spec": {"replicas": 1, "rolloutAfter": "2026-01-01T00:10:00Z"},
            "status": {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1}});
        let s = control_plane(&kcp, &[machine("a", "2026-01-01T00:00:00Z")]);
        assert!(!s.done && s.waiting_for.contains("Machine a"), "{s:?}");
        // Created within rolloutAfter's second: replaced too.
        assert!(!control_plane(&kcp, &[machine("b", "2026-01-01T00:10:00Z")]).done);
        let s = control_plane(&kcp, &[machine("c", "2026-01-01T00:10:01Z")]);
        assert!(s.done, "{s:?}");
        assert_eq!(s.current, vec!["c".to_string()]);
    }
}
