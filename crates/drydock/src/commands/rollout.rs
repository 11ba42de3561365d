//! `drydock rollout history|undo|pause|resume|restart|status` for MachineDeployments and
//! KubeadmControlPlanes. Unlike upstream's clusterctl: a history exists, with one row per
//! revision (numbers kept only in a MachineSet's revision-history annotation included);
//! undo reaches any revision it shows; pause/resume/restart are idempotent with a message.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, bail};
use drydock_api::capi::keys::{
    MACHINE_TEMPLATE_HASH_LABEL, PAUSED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::resolve::resolve;
use super::{Connection, Global, ObjectOutput, OutputFormat, connect, print_objects, table};

/// Annotations read as a revision's change cause.
const CHANGE_CAUSE: &[&str] = &["cluster.x-k8s.io/change-cause", "kubernetes.io/change-cause"];

#[derive(clap::Subcommand, Debug, Clone)]
pub enum RolloutCommand {
    /// Revisions of a MachineDeployment, or one revision's machine template.
    History {
        /// machinedeployment/NAME (or md/NAME).
        target: String,
        /// Print this revision's machine template.
        #[arg(long)]
        revision: Option<u64>,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Roll a MachineDeployment back to a revision (default: the previous one).
    Undo {
        /// machinedeployment/NAME (or md/NAME).
        target: String,
        /// Revision to go back to; 0 means the previous one.
        #[arg(long, default_value_t = 0)]
        to_revision: u64,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Pause rollouts (MachineDeployment spec.paused; KubeadmControlPlane paused annotation).
    Pause {
        /// machinedeployment/NAME or kubeadmcontrolplane/NAME (md/, kcp/ accepted).
        target: String,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Resume paused rollouts.
    Resume {
        /// machinedeployment/NAME or kubeadmcontrolplane/NAME (md/, kcp/ accepted).
        target: String,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Replace every machine (sets spec.rollout.after, v1beta1's spec.rolloutAfter, to the
    /// next whole second).
    Restart {
        /// machinedeployment/NAME or kubeadmcontrolplane/NAME (md/, kcp/ accepted).
        target: String,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Follow a rollout until it completes, including one just requested by `restart` or by
    /// another client; exits non-zero on timeout.
    Status {
        /// machinedeployment/NAME or kubeadmcontrolplane/NAME (md/, kcp/ accepted).
        target: String,
        /// Give up after this long (e.g. 5m, 30s).
        #[arg(long, default_value = "10m")]
        timeout: String,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    MachineDeployment,
    KubeadmControlPlane,
}

fn parse_target(t: &str) -> anyhow::Result<(Kind, String)> {
    let Some((kind, name)) = t.split_once('/') else {
        bail!("expected KIND/NAME, e.g. machinedeployment/my-md or kubeadmcontrolplane/my-cp (got {t:?})");
    };
    let kind = match kind.to_ascii_lowercase().as_str() {
        "machinedeployment" | "machinedeployments" | "md" => Kind::MachineDeployment,
        "kubeadmcontrolplane" | "kubeadmcontrolplanes" | "kcp" => Kind::KubeadmControlPlane,
        other => bail!("rollout supports machinedeployment and kubeadmcontrolplane, not {other:?}"),
    };
    if name.is_empty() || name.contains('/') {
        bail!("invalid name in {t:?}");
    }
    Ok((kind, name.to_string()))
}

pub(super) struct Target {
    pub(super) api: Api<DynamicObject>,
    pub(super) kind: Kind,
    pub(super) name: String,
    pub(super) server: String,
    pub(super) client: kube::Client,
    pub(super) ns: String,
}

pub(super) async fn target(g: &Global, t: &str) -> anyhow::Result<(Target, Value)> {
    let (kind, name) = parse_target(t)?;
    let (client, server) = connect::client(g.kubeconfig.as_deref()).await?;
    let ns = g.namespace.clone().unwrap_or_else(|| "default".into());
    let plural = if kind == Kind::MachineDeployment { "machinedeployments" } else { "kubeadmcontrolplanes" };
    let r = resolve(&client, plural, &server).await?;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &r.resource);
    let obj = api.get_opt(&name).await.map_err(|e| connect::explain(e, &server))?;
    let Some(obj) = obj else { bail!("{} {ns}/{name} not found", r.resource.kind) };
    let v = serde_json::to_value(obj)?;
    Ok((Target { api, kind, name, server, client, ns }, v))
}

impl Target {
    /// Merge-patches the object; returns it as written.
    async fn patch(&self, patch: &Value) -> anyhow::Result<Value> {
        let obj = self
            .api
            .patch(&self.name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(|e| connect::explain(e, &self.server))?;
        Ok(serde_json::to_value(obj)?)
    }

    pub(super) fn label(&self) -> String {
        let k = if self.kind == Kind::MachineDeployment { "machinedeployment" } else { "kubeadmcontrolplane" };
        format!(
            "{k}.{}/{}",
            if self.kind == Kind::MachineDeployment { "cluster.x-k8s.io" } else { "controlplane.cluster.x-k8s.io" },
            self.name
        )
    }

    /// What a change prints: the object with `-o yaml|json`, else `<label> <what>`.
    fn done(&self, g: &Global, obj: &Value, what: &str) -> anyhow::Result<(String, bool)> {
        if g.output.objects() {
            return Ok((print_objects(std::slice::from_ref(obj), g.output, false)?, true));
        }
        Ok((format!("{} {what}\n", self.label()), true))
    }

    /// MachineSets controlled by this MachineDeployment.
    async fn machine_sets(&self, md: &Value) -> anyhow::Result<Vec<Value>> {
        let r = resolve(&self.client, "machinesets", &self.server).await?;
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), &self.ns, &r.resource);
        let uid = md["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let all = api.list(&ListParams::default()).await.map_err(|e| connect::explain(e, &self.server))?.items;
        Ok(all
            .into_iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .map(|o| super::with_type(o, &r.resource))
            .filter(|o| {
                o["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["uid"] == uid.as_str() && r["controller"] == true))
            })
            .collect())
    }
}

/// One revision as the history shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub number: u64,
    pub machine_set: String,
    /// The MachineSet's current revision, when this number survives only in its history.
    pub now_revision: Option<u64>,
    pub created: String,
    pub replicas: i64,
    pub change_cause: String,
}

fn revision_numbers(ms: &Value) -> (Option<u64>, Vec<u64>) {
    let ann = &ms["metadata"]["annotations"];
    let current = ann[REVISION_ANNOTATION].as_str().and_then(|s| s.parse().ok());
    let history = ann[REVISION_HISTORY_ANNOTATION]
        .as_str()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default();
    (current, history)
}

/// Every revision the MachineSets know, ascending, each mapped to the MachineSet holding it.
pub fn history(sets: &[Value]) -> Vec<Revision> {
    let mut rows: BTreeMap<u64, Revision> = BTreeMap::new();
    for ms in sets {
        let (current, older) = revision_numbers(ms);
        let Some(current) = current else { continue };
        let ann = &ms["metadata"]["annotations"];
        let base = Revision {
            number: current,
            machine_set: ms["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            now_revision: None,
            created: ms["metadata"]["creationTimestamp"].as_str().unwrap_or_default().to_string(),
            replicas: ms["spec"]["replicas"].as_i64().unwrap_or(0),
            change_cause: CHANGE_CAUSE.iter().find_map(|k| ann[*k].as_str()).unwrap_or_default().to_string(),
        };
        for n in older {
            rows.insert(n, Revision { number: n, now_revision: Some(current), ..base.clone() });
        }
        rows.insert(current, base);
    }
    rows.into_values().collect()
}

fn find(sets: &[Value], revision: u64) -> Option<&Value> {
    sets.iter().find(|ms| {
        let (c, h) = revision_numbers(ms);
        c == Some(revision) || h.contains(&revision)
    })
}

pub async fn run(conn: &Connection, cmd: &RolloutCommand) -> anyhow::Result<(String, bool)> {
    let g = |o: &ObjectOutput| Global::new(conn, o.format());
    match cmd {
        RolloutCommand::History { target: t, revision, output } => run_history(&g(output), t, *revision).await,
        RolloutCommand::Undo { target: t, to_revision, output } => run_undo(&g(output), t, *to_revision).await,
        RolloutCommand::Pause { target: t, output } => run_pause(&g(output), t, true).await,
        RolloutCommand::Resume { target: t, output } => run_pause(&g(output), t, false).await,
        RolloutCommand::Restart { target: t, output } => run_restart(&g(output), t).await,
        RolloutCommand::Status { target: t, timeout } => {
            let limit = drydock_api::capi::duration::parse(timeout)
                .ok()
                .and_then(|d| Duration::try_from(d).ok())
                .with_context(|| format!("invalid --timeout {timeout:?}"))?;
            super::rollout_status::status(&Global::new(conn, OutputFormat::Table), t, limit).await
        }
    }
}

/// `rollout history`: the revisions of a MachineDeployment, or one revision's template.
async fn run_history(g: &Global, t: &str, revision: Option<u64>) -> anyhow::Result<(String, bool)> {
    let (tg, md) = target(g, t).await?;
    if tg.kind != Kind::MachineDeployment {
        bail!("rollout history is kept by MachineDeployments; a KubeadmControlPlane replaces machines in place");
    }
    let sets = tg.machine_sets(&md).await?;
    if let Some(n) = revision {
        let ms = find(&sets, n).with_context(|| format!("revision {n} not found in the history of {}", tg.label()))?;
        // As kubectl: -o prints the revision's MachineSet, else its machine template.
        if g.output.objects() {
            return Ok((print_objects(std::slice::from_ref(ms), g.output, false)?, true));
        }
        let tpl = &ms["spec"]["template"];
        return Ok((print_objects(std::slice::from_ref(tpl), OutputFormat::Yaml, false)?, true));
    }
    let revs = history(&sets);
    if g.output.objects() {
        let mut sets = sets.clone();
        sets.sort_by_key(|ms| revision_numbers(ms).0);
        return Ok((print_objects(&sets, g.output, true)?, true));
    }
    let mut rows = vec![vec![
        "REVISION".to_string(),
        "MACHINESET".into(),
        "CREATED".into(),
        "REPLICAS".into(),
        "CHANGE-CAUSE".into(),
        "NOTE".into(),
    ]];
    for r in &revs {
        rows.push(vec![
            r.number.to_string(),
            r.machine_set.clone(),
            r.created.clone(),
            r.replicas.to_string(),
            if r.change_cause.is_empty() { "<none>".into() } else { r.change_cause.clone() },
            r.now_revision.map(|c| format!("same MachineSet as revision {c}")).unwrap_or_default(),
        ]);
    }
    Ok((format!("{}\n{}", tg.label(), table::render(&rows)), true))
}

/// `rollout undo`: puts back the template of an earlier revision (0: the one before).
async fn run_undo(g: &Global, t: &str, to_revision: u64) -> anyhow::Result<(String, bool)> {
    let (tg, md) = target(g, t).await?;
    if tg.kind != Kind::MachineDeployment {
        bail!(
            "undo applies to MachineDeployments (roll a KubeadmControlPlane back by setting its version and template)"
        );
    }
    if md["spec"]["paused"] == true {
        bail!("{} is paused: run `drydock rollout resume {}` first", tg.label(), t);
    }
    let sets = tg.machine_sets(&md).await?;
    let revs = history(&sets);
    let current: u64 =
        md["metadata"]["annotations"][REVISION_ANNOTATION].as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
    let wanted = if to_revision == 0 {
        revs.iter().map(|r| r.number).filter(|n| *n < current).max().context("no earlier revision in the history")?
    } else {
        to_revision
    };
    let ms = find(&sets, wanted).with_context(|| {
        let known: Vec<String> = revs.iter().map(|r| r.number.to_string()).collect();
        format!("revision {wanted} not found; the history has {}", known.join(", "))
    })?;
    let mut tpl = ms["spec"]["template"].clone();
    if let Some(labels) = tpl.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
        labels.remove(MACHINE_TEMPLATE_HASH_LABEL);
    }
    // A full replacement of the template: merge patch would keep fields the old template lacked.
    let mut patch_tpl = tpl.clone();
    let current_tpl = &md["spec"]["template"];
    null_missing(current_tpl, &mut patch_tpl);
    let written = tg.patch(&json!({"spec": {"template": patch_tpl}})).await?;
    tg.done(g, &written, &format!("rolled back to revision {wanted}"))
}

/// `rollout pause` (`pause`) and `rollout resume`.
async fn run_pause(g: &Global, t: &str, pause: bool) -> anyhow::Result<(String, bool)> {
    let (tg, obj) = target(g, t).await?;
    let paused = match tg.kind {
        Kind::MachineDeployment => obj["spec"]["paused"] == true,
        Kind::KubeadmControlPlane => obj["metadata"]["annotations"][PAUSED_ANNOTATION].is_string(),
    };
    if paused == pause {
        return tg.done(g, &obj, &format!("is already {}", if pause { "paused" } else { "resumed" }));
    }
    let patch = match tg.kind {
        Kind::MachineDeployment => json!({"spec": {"paused": pause}}),
        Kind::KubeadmControlPlane => {
            json!({"metadata": {"annotations": {PAUSED_ANNOTATION: if pause { json!("true") } else { Value::Null }}}})
        }
    };
    let written = tg.patch(&patch).await?;
    tg.done(g, &written, if pause { "paused" } else { "resumed" })
}

/// `rollout restart`: replaces every Machine created before the next whole second.
async fn run_restart(g: &Global, t: &str) -> anyhow::Result<(String, bool)> {
    let (tg, obj) = target(g, t).await?;
    let paused = obj["spec"]["paused"] == true || obj["metadata"]["annotations"][PAUSED_ANNOTATION].is_string();
    if paused {
        bail!("{} is paused: run `drydock rollout resume {t}` first", tg.label());
    }
    // Timestamps have whole seconds: the next whole second is after every Machine
    // and set that exists now, even one created within the current second.
    let next_second =
        jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + 1).context("computing the restart time")?;
    let after = drydock_api::time::rfc3339(next_second);
    let written = tg.patch(&super::rollout_status::rollout_after_patch(&obj, &after)).await?;
    tg.done(g, &written, "restarted")
}

/// Sets to null every key of `current` absent from `wanted`, so a merge patch replaces.
fn null_missing(current: &Value, wanted: &mut Value) {
    if let (Value::Object(c), Value::Object(w)) = (current, wanted) {
        for (k, cv) in c {
            match w.get_mut(k) {
                Some(wv) => null_missing(cv, wv),
                None => {
                    w.insert(k.clone(), Value::Null);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(name: &str, rev: &str, hist: Option<&str>) -> Value {
        let mut ann = json!({REVISION_ANNOTATION: rev});
        if let Some(h) = hist {
            ann[REVISION_HISTORY_ANNOTATION] = json!(h);
        }
        json!({"metadata": {"name": name, "annotations": ann, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"replicas": 1}})
    }

    #[test]
    fn history_has_no_holes_and_marks_reused_sets() {
        // Templates A, B, A, C: A's MachineSet was reused as revision 3 (history "1").
        let sets = vec![ms("a", "3", Some("1")), ms("b", "2", None), ms("c", "4", None)];
        let h = history(&sets);
        let numbers: Vec<u64> = h.iter().map(|r| r.number).collect();
        assert_eq!(numbers, vec![1, 2, 3, 4]);
        assert_eq!(h[0].machine_set, "a");
        assert_eq!(h[0].now_revision, Some(3));
        assert_eq!(h[2].now_revision, None);
        assert_eq!(find(&sets, 1).and_then(|m| m["metadata"]["name"].as_str()), Some("a"));
    }

    #[test]
    fn parses_targets() {
        assert_eq!(parse_target("md/x").map(|t| t.0).ok(), Some(Kind::MachineDeployment));
        assert!(parse_target("machine/x").is_err());
        assert!(parse_target("x").is_err());
    }

    #[test]
    fn null_missing_replaces_whole_templates() {
        let cur = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"version": "v1"}});
        let mut want = json!({"metadata": {"labels": {"a": "1"}}});
        null_missing(&cur, &mut want);
        assert_eq!(want, json!({"metadata": {"labels": {"a": "1", "b": null}}, "spec": null}));
    }
}
