//! The v1beta2 view of `drydock describe cluster` (clusterctl v1.11+'s default): per row the
//! replica counters (REPLICAS as current/desired, AVAILABLE, READY, UP TO DATE) and one
//! v1beta2 condition as `Type: Status` with its REASON, SINCE and MESSAGE: `Available` for
//! the Cluster, its control plane and MachineDeployments, `Ready` for everything else. An
//! object reporting no v1beta2 conditions shows its v1beta1 Ready instead. Multi-line
//! messages continue on the rows below.
//!
//! Objects are read in whatever version the server prefers: a v1beta1 object keeps its
//! v1beta2 status under `status.v1beta2`, a v1beta2 object keeps its v1beta1 conditions
//! under `status.deprecated.v1beta1`.

use serde_json::Value;

use super::{Node, Place, Style, since};
use crate::commands::table;

/// Whether `obj` is in the v1beta2 shape (its `status.conditions` are v1beta2 conditions).
fn is_v1beta2(obj: &Value) -> bool {
    obj["apiVersion"].as_str().is_some_and(|v| v.ends_with("/v1beta2"))
}

/// The v1beta2 status fields of `obj`: `status.v1beta2` of a v1beta1 object, else `status`.
fn v1beta2_status(obj: &Value) -> Option<&Value> {
    if is_v1beta2(obj) {
        return obj.get("status");
    }
    obj["status"].get("v1beta2")
}

/// The object's v1beta2 conditions (empty when it reports none).
pub(super) fn v1beta2_conditions(obj: &Value) -> Vec<Value> {
    v1beta2_status(obj).and_then(|s| s["conditions"].as_array()).cloned().unwrap_or_default()
}

/// The object's v1beta1 conditions, in either shape.
pub(super) fn v1beta1_conditions(obj: &Value) -> Vec<Value> {
    let list = if is_v1beta2(obj) {
        &obj["status"]["deprecated"]["v1beta1"]["conditions"]
    } else {
        &obj["status"]["conditions"]
    };
    list.as_array().cloned().unwrap_or_default()
}

/// The condition a row shows for a kind.
fn headline(kind: &str) -> &'static str {
    match kind {
        "Cluster" | "KubeadmControlPlane" | "MachineDeployment" | "MachinePool" => "Available",
        "ClusterResourceSet" => "ResourcesApplied",
        _ => "Ready",
    }
}

/// The condition a row shows: `(type, condition)`, the v1beta1 Ready when the object has no
/// v1beta2 condition of that type.
fn shown(n: &Node) -> Option<(String, Value)> {
    let want = headline(&n.kind);
    if let Some(c) = v1beta2_conditions(&n.obj).into_iter().find(|c| c["type"] == want) {
        return Some((want.to_string(), c));
    }
    n.ready.clone().map(|r| ("Ready".to_string(), r))
}

/// Machines in the same state share a row: same Ready (status, reason), Available, UpToDate.
pub(super) fn machine_group_key(m: &Value) -> String {
    let conds = v1beta2_conditions(m);
    if conds.is_empty() {
        let v1 = v1beta1_conditions(m);
        let r = v1.iter().find(|c| c["type"] == "Ready").cloned().unwrap_or(Value::Null);
        return format!("v1beta1|{}|{}|{}", r["status"], r["severity"], r["reason"]);
    }
    let get = |t: &str| conds.iter().find(|c| c["type"] == t).cloned().unwrap_or(Value::Null);
    let (ready, available, up_to_date) = (get("Ready"), get("Available"), get("UpToDate"));
    format!("{}|{}|{}|{}", ready["status"], ready["reason"], available["status"], up_to_date["status"])
}

/// The counter cells of a row: REPLICAS, AVAILABLE, READY, UP TO DATE.
#[derive(Debug, Default, PartialEq)]
struct Counters {
    desired: Option<i64>,
    current: Option<i64>,
    available: Option<i64>,
    ready: Option<i64>,
    up_to_date: Option<i64>,
}

fn add(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

impl Counters {
    fn plus(self, o: Counters) -> Counters {
        Counters {
            desired: add(self.desired, o.desired),
            current: add(self.current, o.current),
            available: add(self.available, o.available),
            ready: add(self.ready, o.ready),
            up_to_date: add(self.up_to_date, o.up_to_date),
        }
    }

    /// A Machine counts as one replica of each condition that is True.
    fn of_machine(m: &Value) -> Counters {
        let conds = v1beta2_conditions(m);
        if conds.is_empty() {
            return Counters::default();
        }
        let one = |t: &str| Some(i64::from(conds.iter().any(|c| c["type"] == t && c["status"] == "True")));
        Counters {
            desired: None,
            current: None,
            available: one("Available"),
            ready: one("Ready"),
            up_to_date: one("UpToDate"),
        }
    }

    /// `status.v1beta2.{controlPlane,workers}` of a Cluster (`status.{..}` in v1beta2).
    fn of_cluster(c: &Value) -> Counters {
        let Some(s) = v1beta2_status(c) else { return Counters::default() };
        let part = |p: &Value| Counters {
            desired: p["desiredReplicas"].as_i64(),
            current: p["replicas"].as_i64(),
            available: p["availableReplicas"].as_i64(),
            ready: p["readyReplicas"].as_i64(),
            up_to_date: p["upToDateReplicas"].as_i64(),
        };
        part(&s["controlPlane"]).plus(part(&s["workers"]))
    }

    /// A replicated object's spec.replicas, status.replicas and v1beta2 counters.
    fn of_replicated(o: &Value) -> Counters {
        let v = v1beta2_status(o).unwrap_or(&Value::Null);
        Counters {
            desired: o["spec"]["replicas"].as_i64(),
            current: o["status"]["replicas"].as_i64(),
            available: v["availableReplicas"].as_i64(),
            ready: v["readyReplicas"].as_i64(),
            up_to_date: v["upToDateReplicas"].as_i64(),
        }
    }

    fn of(n: &Node) -> Counters {
        if !n.members.is_empty() {
            return n.members.iter().map(Counters::of_machine).fold(Counters::default(), Counters::plus);
        }
        match n.kind.as_str() {
            "Cluster" => Counters::of_cluster(&n.obj),
            "Machine" => Counters::of_machine(&n.obj),
            "KubeadmControlPlane" | "MachineDeployment" | "MachineSet" | "MachinePool" => {
                Counters::of_replicated(&n.obj)
            }
            _ => Counters::default(),
        }
    }

    fn cells(&self) -> [String; 4] {
        let n = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        let replicas = match (self.current, self.desired) {
            (Some(c), Some(d)) => format!("{c}/{d}"),
            (c, _) => n(c),
        };
        [replicas, n(self.available), n(self.ready), n(self.up_to_date)]
    }
}

fn paint(style: &Style, text: &str, status: &str) -> String {
    // Severity has no v1beta2 counterpart: False is an issue, Unknown is neither.
    let severity = if status == "False" { "Error" } else { "" };
    style.paint(text, status, severity)
}

/// Renders the tree under `root`, with the other v1beta2 conditions of the kinds in `show`.
pub(super) fn render(root: &Node, show: &[String], echo: bool, style: &Style) -> String {
    let header = ["NAME", "REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE"];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect()];
    let at = Place { prefix: "", last: true, top: true, parent_ready: None };
    walk(root, &at, (show, echo, style), &mut rows);
    table::render(&rows)
}

/// Pushes a row whose MESSAGE may span lines: the first line in the row, each further one
/// alone on a row below, under `continuation` in the NAME column.
fn push(rows: &mut Vec<Vec<String>>, mut cells: Vec<String>, message: &str, continuation: &str) {
    let mut lines = message.lines();
    cells.push(lines.next().unwrap_or_default().to_string());
    rows.push(cells);
    for line in lines {
        let mut more = vec![continuation.to_string()];
        more.extend(std::iter::repeat_n(String::new(), 7));
        more.push(line.to_string());
        rows.push(more);
    }
}

fn walk(n: &Node, at: &Place<'_>, ctx: (&[String], bool, &Style), rows: &mut Vec<Vec<String>>) {
    let (show, echo, style) = ctx;
    let (branch, child_prefix) = at.prefixes();
    let conditions: Vec<Value> = {
        let wants =
            !n.kind.is_empty() && show.iter().any(|s| s.eq_ignore_ascii_case("all") || s.eq_ignore_ascii_case(&n.kind));
        let listed = if wants {
            let v2 = v1beta2_conditions(&n.obj);
            if v2.is_empty() { n.conditions.clone() } else { v2 }
        } else {
            Vec::new()
        };
        let headline = shown(n).map(|(t, _)| t);
        listed.into_iter().filter(|c| Some(c["type"].as_str().unwrap_or_default()) != headline.as_deref()).collect()
    };
    let total = conditions.len() + n.children.len();
    // Message continuation lines sit under the node, beside its tree line.
    let continuation = if total > 0 { format!("{child_prefix}│") } else { child_prefix.clone() };
    let mut cells = vec![format!("{branch}{}", n.label)];
    cells.extend(Counters::of(n).cells());
    let headline = shown(n);
    let same_as_parent = !echo
        && n.members.is_empty()
        && !n.kind.is_empty()
        && headline.as_ref().zip(at.parent_ready).is_some_and(|((t, c), p)| {
            p["type"] == t.as_str() && p["status"] == c["status"] && p["reason"] == c["reason"]
        });
    let mut message = String::new();
    match &headline {
        Some(_) if same_as_parent => {
            cells.extend([String::new(), String::new(), String::new()]);
            message = "Same as parent".to_string();
        }
        Some((t, c)) => {
            let status = c["status"].as_str().unwrap_or_default();
            cells.push(paint(style, &format!("{t}: {status}"), status));
            cells.push(c["reason"].as_str().unwrap_or_default().to_string());
            cells.push(since(c));
            message = if n.members.is_empty() {
                c["message"].as_str().unwrap_or_default().to_string()
            } else {
                let names: Vec<&str> = n.members.iter().filter_map(|m| m["metadata"]["name"].as_str()).collect();
                format!("See {}", names.join(", "))
            };
        }
        None => cells.extend([String::new(), String::new(), String::new()]),
    }
    push(rows, cells, &message, &continuation);
    for (i, c) in conditions.iter().enumerate() {
        let last = i + 1 == total;
        let status = c["status"].as_str().unwrap_or_default();
        let mut cells =
            vec![format!("{child_prefix}{}{}", if last { "└─" } else { "├─" }, c["type"].as_str().unwrap_or_default())];
        cells.extend(std::iter::repeat_n(String::new(), 4));
        cells.push(paint(style, status, status));
        cells.push(c["reason"].as_str().unwrap_or_default().to_string());
        cells.push(since(c));
        let below = if last { format!("{child_prefix}  ") } else { format!("{child_prefix}│ ") };
        push(rows, cells, c["message"].as_str().unwrap_or_default(), &below);
    }
    let parent = headline.map(|(t, mut c)| {
        c["type"] = Value::String(t);
        c
    });
    for (i, ch) in n.children.iter().enumerate() {
        let place = Place {
            prefix: &child_prefix,
            last: conditions.len() + i + 1 == total,
            top: false,
            parent_ready: parent.as_ref().or(at.parent_ready),
        };
        walk(ch, &place, ctx, rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cond(t: &str, status: &str, reason: &str, message: &str) -> Value {
        json!({"type": t, "status": status, "reason": reason, "message": message,
               "lastTransitionTime": "2026-01-01T00:00:00Z"})
    }

    fn machine(name: &str, ready: &str) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "metadata": {"name": name},
               "status": {"conditions": [cond("Ready", ready, "", "")],
                          "v1beta2": {"conditions": [cond("Available", ready, "", ""), cond("Ready", ready, if ready == "True" {"Ready"} else {"NotReady"}, ""),
                                                     cond("UpToDate", "True", "UpToDate", "")]}}})
    }

    fn columns(line: &str, header: &str) -> Vec<String> {
        // Cells start where the header's do.
        let starts: Vec<usize> =
            ["REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE"]
                .iter()
                .map(|h| header.find(&format!("   {h}")).map(|i| i + 3).unwrap_or_else(|| panic!("{h} in {header}")))
                .collect();
        let mut out = vec![line.chars().take(starts[0]).collect::<String>().trim().to_string()];
        for (i, s) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(usize::MAX);
            let cell: String = line.chars().skip(*s).take(end.saturating_sub(*s)).collect();
            out.push(cell.trim().to_string());
        }
        out
    }

    #[test]
    fn shows_available_counters_and_machine_readiness() {
        let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "c1"},
            "status": {"conditions": [cond("Ready", "True", "", "")],
                       "v1beta2": {"conditions": [cond("Available", "False", "NotAvailable", "* WorkersAvailable: waiting\n* Deleting: no")],
                                   "controlPlane": {"desiredReplicas": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 1},
                                   "workers": {"desiredReplicas": 2, "replicas": 2, "readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 2}}}});
        let infra = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "InMemoryCluster",
            "metadata": {"name": "c1"}, "status": {"conditions": [cond("Ready", "True", "", "")]}});
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": {"name": "md"},
            "spec": {"replicas": 2}, "status": {"replicas": 2, "readyReplicas": 2,
                "v1beta2": {"readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 2,
                            "conditions": [cond("Available", "True", "Available", "")]}}});
        let mut root = Node::of(&cluster, "");
        root.children.push(Node::of(&infra, "ClusterInfrastructure"));
        let mut workers = Node::group("Workers");
        let mut mdn = Node::of(&md, "");
        let (a, b, c) = (machine("a", "True"), machine("b", "True"), machine("c", "False"));
        mdn.children = super::super::machine_rows(&[&a, &b, &c], true, false);
        workers.children.push(mdn);
        root.children.push(workers);
        let out = render(&root, &[], false, &Style { color: false });
        let lines: Vec<&str> = out.lines().collect();
        let header = lines[0];
        assert_eq!(
            header.split("   ").map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>(),
            ["NAME", "REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE"]
        );
        let row = |i: usize| columns(lines[i], header);
        assert_eq!(row(1)[..7], ["Cluster/c1", "3/3", "2", "2", "3", "Available: False", "NotAvailable"]);
        assert_eq!(row(1)[8], "* WorkersAvailable: waiting");
        assert_eq!(row(2)[0], "│");
        assert_eq!(row(2)[8], "* Deleting: no", "a message's further lines continue below");
        assert_eq!(row(3)[0], "├─ClusterInfrastructure - InMemoryCluster/c1");
        assert_eq!(row(3)[5], "Ready: True", "no v1beta2 conditions: the v1beta1 Ready");
        assert_eq!(row(4)[0], "└─Workers");
        assert_eq!(row(5)[..6], ["└─MachineDeployment/md", "2/2", "1", "1", "2", "Available: True"]);
        assert_eq!(row(6)[..6], ["├─2 Machines...", "", "2", "2", "2", "Ready: True"]);
        assert_eq!(row(6)[8], "See a, b");
        assert_eq!(row(7)[..7], ["└─Machine/c", "", "0", "0", "1", "Ready: False", "NotReady"]);
    }

    #[test]
    fn conditions_of_the_v1beta2_shape_and_shown_ones() {
        let v2 = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c1"},
            "status": {"conditions": [cond("Available", "True", "Available", ""), cond("Paused", "False", "NotPaused", "")],
                       "deprecated": {"v1beta1": {"conditions": [cond("Ready", "True", "", "")]}}}});
        assert_eq!(v1beta2_conditions(&v2).len(), 2);
        assert_eq!(v1beta1_conditions(&v2)[0]["type"], "Ready");
        let root = Node::of(&v2, "");
        let out = render(&root, &["Cluster".to_string()], false, &Style { color: false });
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1].starts_with("Cluster/c1") && lines[1].contains("Available: True"), "{out}");
        assert!(lines[2].starts_with("└─Paused") && lines[2].contains("NotPaused"), "{out}");
        assert_eq!(lines.len(), 3, "the shown condition is not repeated:\n{out}");
    }
}
