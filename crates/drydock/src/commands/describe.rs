//! `drydock describe cluster NAME`: clusterctl's tree of a cluster's objects, machines
//! with the same state grouped, optional per-kind conditions, colours on a terminal.
//!
//! By default each row shows the object's replica counters and its v1beta2 `Available`
//! (Cluster, control plane, MachineDeployments) or `Ready` condition, as clusterctl v1.11+
//! does ([`v1beta2`]); objects without v1beta2 conditions show their v1beta1 Ready.
//! `--v1beta1` shows the older view: each object's v1beta1 Ready condition (READY,
//! SEVERITY, REASON, SINCE, MESSAGE).

mod v1beta2;

use std::io::IsTerminal;

use anyhow::bail;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Value, json};

use super::resolve::resolve;
use super::table;
use super::{Global, OutputFormat, connect, print_objects};
use drydock_controllers::framework::clock::Clock;
use drydock_controllers::framework::contract::ContractVersions;

#[derive(clap::Args, Debug, Clone)]
pub struct DescribeArgs {
    /// What to describe: `cluster`.
    pub kind: String,
    /// Name of the Cluster.
    pub name: String,
    /// Show the conditions of these kinds (comma-separated, e.g. `Machine,KubeadmControlPlane`) or `all`.
    #[arg(long)]
    pub show_conditions: Option<String>,
    /// Group machines in the same state into one row.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub grouping: bool,
    /// Show Ready conditions even when they repeat the parent's.
    #[arg(long)]
    pub echo: bool,
    /// Show the v1beta1 conditions (with severity) instead of the v1beta2 ones.
    #[arg(long)]
    pub v1beta1: bool,
    /// Add a ClusterResourceSets node listing the sets bound to the Cluster.
    #[arg(long)]
    pub show_resourcesets: bool,
}

/// One row of the tree.
struct Node {
    label: String,
    kind: String,
    /// The v1beta1 Ready condition and the v1beta1 conditions.
    ready: Option<Value>,
    conditions: Vec<Value>,
    children: Vec<Node>,
    /// The object (`Null` for a group such as Workers).
    obj: Value,
    /// The Machines a grouped row stands for (empty for a single object).
    members: Vec<Value>,
}

impl Node {
    fn of(obj: &Value, prefix: &str) -> Self {
        let kind = obj["kind"].as_str().unwrap_or_default().to_string();
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        let conds = v1beta2::v1beta1_conditions(obj);
        let ready = conds.iter().find(|c| c["type"] == "Ready").cloned();
        let label = if prefix.is_empty() { format!("{kind}/{name}") } else { format!("{prefix} - {kind}/{name}") };
        Self { label, kind, ready, conditions: conds, children: Vec::new(), obj: obj.clone(), members: Vec::new() }
    }

    fn group(label: &str) -> Self {
        Self {
            label: label.into(),
            kind: String::new(),
            ready: None,
            conditions: Vec::new(),
            children: Vec::new(),
            obj: Value::Null,
            members: Vec::new(),
        }
    }
}

async fn list_by_cluster(
    client: &kube::Client,
    server: &str,
    ns: &str,
    kind: &str,
    cluster: &str,
) -> anyhow::Result<Vec<Value>> {
    let r = resolve(client, kind, server).await?;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &r.resource);
    let lp = ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={cluster}"));
    let items = api.list(&lp).await.map_err(|e| connect::explain(e, server))?.items;
    let mut out: Vec<Value> = items.into_iter().map(|o| serde_json::to_value(o).unwrap_or(Value::Null)).collect();
    for o in &mut out {
        if o["kind"].is_null() {
            o["kind"] = json!(r.resource.kind);
        }
    }
    out.sort_by(|a, b| a["metadata"]["name"].as_str().cmp(&b["metadata"]["name"].as_str()));
    Ok(out)
}

/// The ClusterResourceSets the Cluster's binding lists, as they are now.
async fn resource_sets(client: &kube::Client, server: &str, ns: &str, cluster: &str) -> anyhow::Result<Vec<Value>> {
    let bindings = resolve(client, "clusterresourcesetbindings", server).await?;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &bindings.resource);
    let Some(binding) = api.get_opt(cluster).await.map_err(|e| connect::explain(e, server))? else {
        return Ok(Vec::new());
    };
    let sets = resolve(client, "clusterresourcesets", server).await?;
    let sets_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &sets.resource);
    let mut out = Vec::new();
    for b in binding.data["spec"]["bindings"].as_array().into_iter().flatten() {
        let Some(name) = b["clusterResourceSetName"].as_str() else { continue };
        if let Some(set) = sets_api.get_opt(name).await.map_err(|e| connect::explain(e, server))? {
            let mut v = serde_json::to_value(set)?;
            v["kind"] = json!("ClusterResourceSet");
            out.push(v);
        }
    }
    Ok(out)
}

/// Reads a referenced object; a v1beta2 reference names only the API group, and the
/// version comes from the CRD's contract labels, as core looks it up.
async fn get_ref(client: &kube::Client, ns: &str, r: &Value) -> Option<Value> {
    let (kind, name) = (r["kind"].as_str()?, r["name"].as_str()?);
    let av = match r["apiVersion"].as_str() {
        Some(av) => av.to_string(),
        None => ContractVersions::new(client.clone(), Clock::system())
            .api_version(r["apiGroup"].as_str()?, kind)
            .await
            .ok()?,
    };
    let ar = drydock_controllers::external::api_resource(&av, kind);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ar);
    let obj = api.get_opt(name).await.ok()??;
    let mut v = serde_json::to_value(obj).ok()?;
    v["kind"] = json!(kind);
    Some(v)
}

fn controller_uid(obj: &Value) -> Option<&str> {
    obj["metadata"]["ownerReferences"].as_array()?.iter().find(|o| o["controller"] == true)?["uid"].as_str()
}

/// Machines under one parent, grouped by identical state when `grouping`: their v1beta1
/// Ready (`v1beta1`), else their v1beta2 Ready, Available and UpToDate.
fn machine_rows(machines: &[&Value], grouping: bool, v1beta1: bool) -> Vec<Node> {
    if !grouping || machines.len() < 2 {
        return machines.iter().map(|m| Node::of(m, "")).collect();
    }
    let mut groups: Vec<(String, Vec<&Value>)> = Vec::new();
    for m in machines {
        let key = if v1beta1 {
            let conds = v1beta2::v1beta1_conditions(m);
            let r = conds.iter().find(|c| c["type"] == "Ready").cloned().unwrap_or(Value::Null);
            format!("{}|{}|{}", r["status"], r["severity"], r["reason"])
        } else {
            v1beta2::machine_group_key(m)
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(m),
            None => groups.push((key, vec![m])),
        }
    }
    groups
        .into_iter()
        .map(|(_, ms)| {
            if ms.len() == 1 {
                return Node::of(ms[0], "");
            }
            let mut n = Node::of(ms[0], "");
            let names: Vec<&str> = ms.iter().filter_map(|m| m["metadata"]["name"].as_str()).collect();
            n.label = format!("{} Machines...", ms.len());
            n.members = ms.iter().map(|m| (*m).clone()).collect();
            if let Some(r) = n.ready.as_mut() {
                r["message"] = json!(format!("See {}", names.join(", ")));
            }
            n
        })
        .collect()
}

fn since(c: &Value) -> String {
    c["lastTransitionTime"].as_str().map(crate::commands::age).unwrap_or_default()
}

struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, text: &str, status: &str, severity: &str) -> String {
        if !self.color || text.is_empty() {
            return text.to_string();
        }
        let code = match (status, severity) {
            ("True", _) => "32",
            ("False", "Warning") => "33",
            ("False", "Info") => "37",
            ("False", _) => "31",
            _ => "37",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

fn render(root: &Node, show: &[String], echo: bool, style: &Style) -> String {
    let mut rows = vec![vec![
        "NAME".to_string(),
        "READY".into(),
        "SEVERITY".into(),
        "REASON".into(),
        "SINCE".into(),
        "MESSAGE".into(),
    ]];
    let at = Place { prefix: "", last: true, top: true, parent_ready: None };
    walk(root, &at, (show, echo, style), &mut rows);
    table::render(&rows)
}

/// Where a node sits in the tree.
struct Place<'a> {
    prefix: &'a str,
    last: bool,
    top: bool,
    parent_ready: Option<&'a Value>,
}

impl Place<'_> {
    /// The tree drawing before the node's own name, and the prefix of its children.
    fn prefixes(&self) -> (String, String) {
        let p = self.prefix;
        match (self.top, self.last) {
            (true, _) => (String::new(), String::new()),
            (false, true) => (format!("{p}└─"), format!("{p}  ")),
            (false, false) => (format!("{p}├─"), format!("{p}│ ")),
        }
    }
}

/// Adds the rows of `n` (its Ready condition, the other conditions when asked for) and of
/// its children.
fn walk(n: &Node, at: &Place<'_>, ctx: (&[String], bool, &Style), rows: &mut Vec<Vec<String>>) {
    let (show, echo, style) = ctx;
    let (branch, child_prefix) = at.prefixes();
    let mut cells = vec![format!("{branch}{}", n.label)];
    cells.extend(ready_cells(n, at.parent_ready, echo, style));
    rows.push(cells);
    let show_conds =
        !n.kind.is_empty() && show.iter().any(|s| s.eq_ignore_ascii_case("all") || s.eq_ignore_ascii_case(&n.kind));
    let conds: Vec<&Value> =
        if show_conds { n.conditions.iter().filter(|c| c["type"] != "Ready").collect() } else { Vec::new() };
    let total = conds.len() + n.children.len();
    for (i, c) in conds.iter().enumerate() {
        let last = i + 1 == total;
        let status = c["status"].as_str().unwrap_or_default();
        let sev = c["severity"].as_str().unwrap_or_default();
        rows.push(vec![
            format!("{child_prefix}{}{}", if last { "└─" } else { "├─" }, c["type"].as_str().unwrap_or_default()),
            style.paint(status, status, sev),
            style.paint(sev, status, sev),
            c["reason"].as_str().unwrap_or_default().to_string(),
            since(c),
            c["message"].as_str().unwrap_or_default().to_string(),
        ]);
    }
    for (i, ch) in n.children.iter().enumerate() {
        let place = Place {
            prefix: &child_prefix,
            last: conds.len() + i + 1 == total,
            top: false,
            parent_ready: n.ready.as_ref().or(at.parent_ready),
        };
        walk(ch, &place, ctx, rows);
    }
}

/// The READY..MESSAGE cells of a node: its Ready condition, or "Same as parent" when it
/// says what the parent's does (unless `echo`).
fn ready_cells(n: &Node, parent_ready: Option<&Value>, echo: bool, style: &Style) -> Vec<String> {
    match &n.ready {
        Some(r)
            if echo
                || parent_ready.is_none_or(|p| {
                    p["status"] != r["status"] || p["reason"] != r["reason"] || n.label.contains("Machines...")
                })
                || n.kind.is_empty() =>
        {
            let status = r["status"].as_str().unwrap_or_default();
            let sev = r["severity"].as_str().unwrap_or_default();
            vec![
                style.paint(status, status, sev),
                style.paint(sev, status, sev),
                r["reason"].as_str().unwrap_or_default().to_string(),
                since(r),
                r["message"].as_str().unwrap_or_default().to_string(),
            ]
        }
        Some(_) => vec![String::new(), String::new(), String::new(), String::new(), "Same as parent".to_string()],
        None => vec![String::new(); 5],
    }
}

pub async fn describe(g: &Global, a: &DescribeArgs) -> anyhow::Result<String> {
    if !a.kind.eq_ignore_ascii_case("cluster") && !a.kind.eq_ignore_ascii_case("clusters") {
        bail!("describe supports `cluster` (got {:?})", a.kind);
    }
    let (client, server) = connect::client(g.kubeconfig.as_deref()).await?;
    let ns = g.namespace.as_deref().unwrap_or("default");
    let r = resolve(&client, "clusters", &server).await?;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &r.resource);
    let Some(cluster) = api.get_opt(&a.name).await.map_err(|e| connect::explain(e, &server))? else {
        bail!("cluster {ns}/{} not found (list them with `drydock get clusters -A`)", a.name);
    };
    let mut cluster = serde_json::to_value(cluster)?;
    cluster["kind"] = json!("Cluster");
    let infra = get_ref(&client, ns, &cluster["spec"]["infrastructureRef"]).await;
    let cp = get_ref(&client, ns, &cluster["spec"]["controlPlaneRef"]).await;
    let machines = list_by_cluster(&client, &server, ns, "machines", &a.name).await?;
    let sets = list_by_cluster(&client, &server, ns, "machinesets", &a.name).await?;
    let deployments = list_by_cluster(&client, &server, ns, "machinedeployments", &a.name).await?;
    let pools = list_by_cluster(&client, &server, ns, "machinepools", &a.name).await?;

    let mut everything = vec![cluster.clone()];
    let mut root = Node::of(&cluster, "");
    if let Some(i) = &infra {
        root.children.push(Node::of(i, "ClusterInfrastructure"));
        everything.push(i.clone());
    }
    let owned_by = |uid: Option<&str>| -> Vec<&Value> {
        machines.iter().filter(|m| uid.is_some() && controller_uid(m) == uid).collect()
    };
    if let Some(c) = &cp {
        let mut n = Node::of(c, "ControlPlane");
        n.children = machine_rows(&owned_by(c["metadata"]["uid"].as_str()), a.grouping, a.v1beta1);
        root.children.push(n);
        everything.push(c.clone());
    }
    let mut workers = Node::group("Workers");
    for md in &deployments {
        let mut n = Node::of(md, "");
        for ms in sets.iter().filter(|s| controller_uid(s) == md["metadata"]["uid"].as_str()) {
            let mut sn = Node::of(ms, "");
            sn.children = machine_rows(&owned_by(ms["metadata"]["uid"].as_str()), a.grouping, a.v1beta1);
            n.children.push(sn);
        }
        workers.children.push(n);
    }
    workers.children.extend(pools.iter().map(|p| Node::of(p, "")));
    let claimed: Vec<&str> =
        deployments.iter().chain(sets.iter()).chain(cp.iter()).filter_map(|o| o["metadata"]["uid"].as_str()).collect();
    for ms in sets.iter().filter(|s| controller_uid(s).is_none_or(|u| !claimed.contains(&u))) {
        let mut sn = Node::of(ms, "");
        sn.children = machine_rows(&owned_by(ms["metadata"]["uid"].as_str()), a.grouping, a.v1beta1);
        workers.children.push(sn);
    }
    let standalone: Vec<&Value> =
        machines.iter().filter(|m| controller_uid(m).is_none_or(|u| !claimed.contains(&u))).collect();
    workers.children.extend(machine_rows(&standalone, a.grouping, a.v1beta1));
    if !workers.children.is_empty() {
        root.children.push(workers);
    }
    if a.show_resourcesets {
        let sets = resource_sets(&client, &server, ns, &a.name).await?;
        if !sets.is_empty() {
            let mut node = Node::group("ClusterResourceSets");
            node.children = sets.iter().map(|s| Node::of(s, "")).collect();
            root.children.push(node);
            everything.extend(sets);
        }
    }
    everything.extend(deployments.iter().cloned());
    everything.extend(pools.iter().cloned());
    everything.extend(sets.iter().cloned());
    everything.extend(machines.iter().cloned());
    match g.output {
        OutputFormat::Yaml | OutputFormat::Json => print_objects(&everything, g.output, true),
        _ => {
            let topology_workers: Vec<Value> = deployments.into_iter().chain(pools).collect();
            Ok(tree(a, &root) + &topology_lines(&cluster, cp.as_ref(), &topology_workers))
        }
    }
}

/// The tree as text, in the view `a` asks for.
fn tree(a: &DescribeArgs, root: &Node) -> String {
    let show: Vec<String> =
        a.show_conditions.as_deref().map(|s| s.split(',').map(|x| x.trim().to_string()).collect()).unwrap_or_default();
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let style = Style { color };
    if a.v1beta1 { render(root, &show, a.echo, &style) } else { v1beta2::render(root, &show, a.echo, &style) }
}

/// Where a topology Cluster stands: its class and version, `TopologyReconciled`, and
/// during an upgrade the sequence still ahead (the control plane's steps, then the
/// workers': MachineDeployments and MachinePools).
fn topology_lines(cluster: &Value, cp: Option<&Value>, workers: &[Value]) -> String {
    let topology = &cluster["spec"]["topology"];
    if topology.is_null() {
        return String::new();
    }
    let cond = cluster["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "TopologyReconciled"))
        .map(|c| {
            let (reason, message) =
                (c["reason"].as_str().unwrap_or_default(), c["message"].as_str().unwrap_or_default());
            if message.is_empty() { format!(" ({reason})") } else { format!(" ({reason}: {message})") }
        })
        .unwrap_or_default();
    let class = topology["classRef"]["name"].as_str().or(topology["class"].as_str()).unwrap_or_default();
    let target = topology["version"].as_str().unwrap_or_default();
    let mut out = format!("\nTopology: ClusterClass {class}, version {target}{cond}\n");
    let plan = |part: &str| -> Vec<String> {
        cluster["status"][part]["upgradePlan"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["version"].as_str().map(str::to_string))
            .collect()
    };
    let (cp_plan, workers_plan) = (plan("controlPlane"), plan("workers"));
    if cp_plan.is_empty() && workers_plan.is_empty() {
        return out;
    }
    out.push_str("Upgrade sequence:\n");
    let running = cp.and_then(|c| c["status"]["version"].as_str()).unwrap_or("?");
    let asked = cp.and_then(|c| c["spec"]["version"].as_str()).unwrap_or("?");
    let mut steps = vec![format!("{running} (running)")];
    if asked != running {
        steps.push(format!("{asked} (rolling out)"));
    }
    steps.extend(cp_plan);
    out.push_str(&format!("  1. control plane: {}\n", steps.join(" -> ")));
    let workers: Vec<String> = workers
        .iter()
        .map(|w| {
            let labels = &w["metadata"]["labels"];
            let name = labels["topology.cluster.x-k8s.io/deployment-name"]
                .as_str()
                .or(labels["topology.cluster.x-k8s.io/pool-name"].as_str())
                .or(w["metadata"]["name"].as_str())
                .unwrap_or_default();
            format!("{name} {}", w["spec"]["template"]["spec"]["version"].as_str().unwrap_or("?"))
        })
        .collect();
    let to = workers_plan.last().cloned().unwrap_or_else(|| target.to_string());
    out.push_str(&format!("  2. workers, once the control plane is at {to}: {} -> {to}\n", workers.join(", ")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(name: &str, status: &str, reason: &str) -> Value {
        json!({"kind": "Machine", "metadata": {"name": name}, "status": {"conditions": [
            {"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    }

    #[test]
    fn groups_machines_in_the_same_state() {
        let (a, b, c) = (machine("a", "True", ""), machine("b", "True", ""), machine("c", "False", "Boom"));
        let rows = machine_rows(&[&a, &b, &c], true, true);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].label, "2 Machines...");
        assert_eq!(rows[0].ready.as_ref().map(|r| r["message"].clone()), Some(json!("See a, b")));
        assert_eq!(rows[1].label, "Machine/c");
        assert_eq!(machine_rows(&[&a, &b, &c], false, true).len(), 3);
    }

    #[test]
    fn renders_a_tree_without_colour() {
        let mut root = Node::of(
            &json!({"kind": "Cluster", "metadata": {"name": "x"}, "status": {"conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "InfrastructureReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
            "",
        );
        let mut workers = Node::group("Workers");
        workers.children.push(Node::of(&machine("m", "False", "Waiting"), ""));
        root.children.push(workers);
        let out = render(&root, &["Cluster".to_string()], false, &Style { color: false });
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("NAME") && lines[0].contains("SEVERITY") && lines[0].contains("MESSAGE"));
        assert!(lines[1].starts_with("Cluster/x") && lines[1].contains("True"));
        assert!(lines[2].starts_with("├─InfrastructureReady"));
        assert!(lines[3].starts_with("└─Workers"));
        assert!(lines[4].starts_with("  └─Machine/m") && lines[4].contains("Waiting"));
    }
}
