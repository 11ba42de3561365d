//! Setting a chaos run up: its schedule drawn for the fleet, and the MachineHealthChecks
//! that remediate its faults.

use std::sync::Arc;

use serde_json::{Value, json};

use super::super::FleetArgs;
use super::Chaos;
use crate::api_faults::ApiFaults;

/// The timeouts of a chaos run's MachineHealthChecks, in seconds.
#[derive(Clone, Copy, Debug)]
pub struct HealthCheck {
    pub node_startup: u64,
    pub unhealthy: u64,
}

/// The generated MachineHealthCheck `doc` for MachineDeployment `md`, with `h`'s timeouts.
pub fn health_check(doc: &Value, md: &str, h: &HealthCheck) -> Value {
    let mut d = doc.clone();
    d["metadata"]["name"] = json!(md);
    d["spec"]["selector"] = json!({"matchLabels": {"cluster.x-k8s.io/deployment-name": md}});
    d["spec"]["checks"]["nodeStartupTimeoutSeconds"] = json!(h.node_startup);
    if let Some(conditions) = d["spec"]["checks"]["unhealthyNodeConditions"].as_array_mut() {
        for c in conditions {
            c["timeoutSeconds"] = json!(h.unhealthy);
        }
    }
    d
}

/// The MachineHealthCheck of cluster `cluster`'s control plane (of three machines or
/// more), from the generated check `doc`: Node conditions as the workers', and the etcd
/// member's health the control plane reports on each Machine. A joining machine's Node
/// registers before its etcd member is added, so the member's health gets the startup
/// timeout: a short one would replace healthy machines that were still joining.
pub fn control_plane_health_check(doc: &Value, cluster: &str, h: &HealthCheck) -> Value {
    let mut d = health_check(doc, &format!("{cluster}-control-plane"), h);
    d["spec"]["selector"] = json!({"matchLabels": {"cluster.x-k8s.io/control-plane": ""}});
    d["spec"]["checks"]["unhealthyMachineConditions"] =
        json!([{"type": "EtcdMemberHealthy", "status": "False", "timeoutSeconds": h.node_startup}]);
    d
}

/// Draws the chaos schedule of `profile` for the fleet and says what it holds.
pub fn start_chaos(
    a: &FleetArgs,
    profile: super::schedule::Profile,
    api_faults: Option<Arc<ApiFaults>>,
    client: &kube::Client,
    workload: super::Workload,
) -> anyhow::Result<(Arc<Chaos>, HealthCheck)> {
    use super::schedule::{self, Shape};
    anyhow::ensure!(!a.clusterclass, "--chaos works on the fleet's own objects, not with --clusterclass");
    let clusters: Vec<String> = (0..a.clusters).map(|i| format!("c{i:05}")).collect();
    let shape = Shape {
        clusters: &clusters,
        control_plane_machines: a.control_plane_machines as usize,
        workers: (a.workers * a.machine_deployments) as usize,
    };
    let planned = schedule::draw(&profile, a.seed, &shape)?;
    let restarts = schedule::draw_restarts(&profile, a.seed)?;
    let spells = schedule::draw_spells(&profile, a.seed, &clusters)?;
    let health = HealthCheck {
        node_startup: schedule::seconds(&profile.health_check.node_startup_timeout)?,
        unhealthy: schedule::seconds(&profile.health_check.unhealthy_timeout)?,
    };
    if shape.control_plane_machines < 3
        && (profile.faults.etcd_member_loss > 0.0 || profile.faults.etcd_leader_change > 0.0)
    {
        println!("chaos: etcd faults need control planes of three machines or more (--control-plane-machines 3)");
    }
    println!(
        "chaos: profile {}, seed {}, {} faults, {} unreachable spells and {} controller restarts scheduled (schedule {})",
        profile.name,
        a.seed,
        planned.len(),
        spells.len(),
        restarts.len(),
        schedule::digest(&planned, &restarts, &spells)
    );
    let drawn = super::Drawn { planned, restarts, spells };
    let chaos = Chaos::new(profile, a.seed, drawn, api_faults, client, workload);
    chaos.set_phase(super::Phase::Provision, shape.control_plane_machines, shape.workers);
    Ok((chaos, health))
}
