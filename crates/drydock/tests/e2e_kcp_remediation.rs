//! KubeadmControlPlane remediation end to end, with every drydock controller in process.
//! The tests mark Machines as a MachineHealthCheck would (`HealthCheckSucceeded` and
//! `OwnerRemediated` False):
//! - a marked control plane Machine is replaced while etcd keeps quorum without it;
//! - with one etcd member already unhealthy, a marked Machine whose removal would break
//!   quorum is kept, and the control plane says why; once the member recovers, it goes;
//! - before kubeadm init finished, a first Machine that never comes up is replaced;
//! - a replacement marked again waits out `remediationStrategy.retryPeriod` (on a paused
//!   clock) and is then remediated as a retry;
//! - with a real MachineHealthCheck, a control plane Machine whose Node goes NotReady (the
//!   provider's fault injection) is marked and then replaced;
//! - an etcd member that fails (the provider's `etcd-member-down`) hands its leadership to a
//!   healthy member, and a v1beta2 health check on the Machines' `EtcdMemberHealthy` has the
//!   control plane replace its Machine.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{Env, eventually, kubectl_ok, logs, v1beta1};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::Machine;
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::capi::keys::{REMEDIATION_FOR_ANNOTATION, REMEDIATION_IN_PROGRESS_ANNOTATION};
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use drydock_api::tenancy::LogicalClusterName;
use drydock_controllers::etcd::{self, Membership};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(180);

fn manifest(cluster: &str, replicas: u8, vm_startup: &str) -> String {
    manifest_with(cluster, replicas, vm_startup, "")
}

/// [`manifest`] with more lines of the control plane's spec.
fn manifest_with(cluster: &str, replicas: u8, vm_startup: &str, spec: &str) -> String {
    let kubeadm = "{clusterConfiguration: {}, initConfiguration: {nodeRegistration: {}}, joinConfiguration: {nodeRegistration: {}}}";
    format!(
        "{}---\n{}---\n{}",
        common::cluster_preamble(cluster, NS),
        common::machine_template(&format!("{cluster}-cp"), NS, vm_startup),
        common::control_plane(cluster, NS, (replicas, "v1.31.2"), &format!("{cluster}-cp"), kubeadm, spec)
    )
}

fn machines_api(client: &kube::Client) -> Api<Machine> {
    Api::namespaced(client.clone(), NS)
}

async fn control_plane(client: &kube::Client, cluster: &str) -> Option<KubeadmControlPlane> {
    Api::<KubeadmControlPlane>::namespaced(client.clone(), NS).get(&format!("{cluster}-cp")).await.ok()
}

async fn control_plane_machines(client: &kube::Client, cluster: &str) -> Option<Vec<Machine>> {
    let lp = ListParams::default()
        .labels(&format!("cluster.x-k8s.io/control-plane,cluster.x-k8s.io/cluster-name={cluster}"));
    Some(machines_api(client).list(&lp).await.ok()?.items)
}

async fn etcd_pods(workload: &kube::Client) -> Option<Vec<Pod>> {
    let api: Api<Pod> = Api::namespaced(workload.clone(), "kube-system");
    Some(api.list(&ListParams::default().labels(etcd::ETCD_SELECTOR)).await.ok()?.items)
}

/// `n` Ready Machines, none deleting, and etcd made of exactly their Nodes, all healthy.
async fn settled(mgmt: &kube::Client, workload: &kube::Client, cluster: &str, n: usize) -> Option<Vec<Machine>> {
    let s = control_plane(mgmt, cluster).await?.status?;
    let want = i32::try_from(n).ok();
    if s.replicas != want || s.ready_replicas != want || s.initialized != Some(true) {
        return None;
    }
    let machines = control_plane_machines(mgmt, cluster).await?;
    if machines.len() != n
        || machines.iter().any(|m| m.metadata.deletion_timestamp.is_some() || !m.is_condition_true("Ready"))
    {
        return None;
    }
    let nodes: BTreeSet<String> =
        machines.iter().filter_map(|m| m.status.as_ref()?.node_ref.as_ref()?.name.clone()).collect();
    let membership = Membership::from_pods(&etcd_pods(workload).await?);
    let members: BTreeSet<String> = membership.members.iter().map(|m| m.node.clone()).collect();
    (nodes.len() == n && members == nodes && membership.healthy() == n).then_some(machines)
}

fn node_of(m: &Machine) -> String {
    m.status.as_ref().and_then(|s| s.node_ref.as_ref()).and_then(|r| r.name.clone()).expect("a Node")
}

/// Adds the conditions a MachineHealthCheck sets on an unhealthy Machine it leaves to its
/// owner, retrying on conflicts with the Machine controller.
async fn mark_unhealthy(client: &kube::Client, name: &str, reason: &str) {
    let api = machines_api(client);
    eventually("the Machine to be marked unhealthy", WAIT, || async {
        let mut m = api.get(name).await.ok()?;
        let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let mut conditions: Vec<Value> = m
            .conditions()
            .iter()
            .filter(|c| c.type_ != "HealthCheckSucceeded" && c.type_ != "OwnerRemediated")
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect();
        conditions.push(json!({"type": "HealthCheckSucceeded", "status": "False", "severity": "Warning",
            "reason": reason, "lastTransitionTime": now}));
        conditions.push(json!({"type": "OwnerRemediated", "status": "False", "severity": "Warning",
            "reason": "WaitingForRemediation", "lastTransitionTime": now}));
        let p = json!({"metadata": {"resourceVersion": m.metadata.resource_version.take()},
            "status": {"conditions": conditions}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&p)).await.ok().map(|_| ())
    })
    .await;
}

/// Makes a Node's etcd pod (not) Ready, as a failing member would report.
async fn set_etcd_ready(workload: &kube::Client, node: &str, ready: bool) {
    let api: Api<Pod> = Api::namespaced(workload.clone(), "kube-system");
    let status = if ready { "True" } else { "False" };
    let p = json!({"status": {"conditions": [{"type": "Ready", "status": status}, {"type": "ContainersReady", "status": status}]}});
    api.patch_status(&etcd::pod_name(node), &PatchParams::default(), &Patch::Merge(&p)).await.expect("etcd pod status");
}

/// Sets the provider's fault annotation on infrastructure machine `infra`.
async fn inject_fault(mgmt: &kube::Client, infra: &str, fault: &str) {
    let patch = json!({"metadata": {"annotations": {"infrastructure.drydock.dev/fault": fault}}});
    Api::<InMemoryMachine>::namespaced(mgmt.clone(), NS)
        .patch(infra, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("inject the fault");
}

fn remediation_for(m: &Machine) -> Option<Value> {
    serde_json::from_str(m.annotations().get(REMEDIATION_FOR_ANNOTATION)?).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn marked_machine_is_replaced_while_quorum_holds() {
    logs();
    let env = Env::start(true).await;
    let mgmt = env.client();
    let cluster = "rem";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&manifest(cluster, 3, "0s")));
    let before = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, 3)).await;

    let victim = before[1].name_any();
    mark_unhealthy(&mgmt, &victim, "UnhealthyNode").await;
    let after = eventually("the marked Machine replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.iter().all(|m| m.name_any() != victim).then_some(now)
    })
    .await;
    let kept: BTreeSet<String> = after.iter().map(|m| m.name_any()).collect();
    let others: BTreeSet<String> = before.iter().map(|m| m.name_any()).filter(|n| *n != victim).collect();
    assert!(others.is_subset(&kept), "only the marked Machine went: {kept:?}");
    let replacement = after.iter().find(|m| !others.contains(&m.name_any())).expect("a replacement");
    let origin = remediation_for(replacement).expect("the replacement records what it replaces");
    assert_eq!(origin["machine"], victim.as_str());
    assert_eq!(origin["retryCount"], 0);

    let kcp = eventually("the remediation in the status", WAIT, || async {
        let kcp = control_plane(&mgmt, cluster).await?;
        (kcp.status.as_ref()?.last_remediation.as_ref()?.machine == victim).then_some(kcp)
    })
    .await;
    assert!(!kcp.annotations().contains_key(REMEDIATION_IN_PROGRESS_ANNOTATION), "the remediation is over");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_waits_for_the_retry_period() {
    logs();
    let env = Env::start_paused().await;
    let mgmt = env.client();
    let cluster = "retry";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    let strategy = "  remediationStrategy: {retryPeriod: 10m, minHealthyPeriod: 1h, maxRetry: 3}\n";
    kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&manifest_with(cluster, 3, "0s", strategy)));
    let before = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, 3)).await;

    // The first remediation goes ahead at once.
    let first = before[0].name_any();
    mark_unhealthy(&mgmt, &first, "UnhealthyNode").await;
    let replaced = eventually("the first marked Machine replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.into_iter().find(|m| remediation_for(m).is_some_and(|o| o["machine"] == first.as_str()))
    })
    .await;
    let replacement = replaced.name_any();

    // Its replacement, marked within the retry period, is kept and the control plane says why.
    mark_unhealthy(&mgmt, &replacement, "UnhealthyNode").await;
    let why = eventually("the retry to be held", WAIT, || async {
        let m = machines_api(&mgmt).get(&replacement).await.ok()?;
        let message = m.get_condition("OwnerRemediated")?.message.clone()?;
        message.contains("retryPeriod").then_some(message)
    })
    .await;
    assert!(why.contains(&first) && why.contains("10m"), "{why}");
    env.clock.advance(Duration::from_secs(9 * 60));
    // A spec change makes the control plane reconcile; once it has observed it, its
    // decision about the replacement is made.
    let kcp_api: Api<KubeadmControlPlane> = Api::namespaced(mgmt.clone(), NS);
    let touched = kcp_api
        .patch(
            &format!("{cluster}-cp"),
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"remediationStrategy": {"maxRetry": 4}}})),
        )
        .await
        .expect("touch the control plane");
    eventually("the control plane to observe its new generation", WAIT, || async {
        let kcp = control_plane(&mgmt, cluster).await?;
        (kcp.status?.observed_generation == touched.metadata.generation).then_some(())
    })
    .await;
    let kept = machines_api(&mgmt).get(&replacement).await.expect("the marked replacement");
    assert!(kept.metadata.deletion_timestamp.is_none(), "retried before the retry period passed");

    // Past the retry period it is remediated, counted as a retry.
    env.clock.advance(Duration::from_secs(2 * 60));
    let retried = eventually("the replacement remediated as a retry", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.into_iter().find(|m| remediation_for(m).is_some_and(|o| o["machine"] == replacement.as_str()))
    })
    .await;
    assert_eq!(remediation_for(&retried).expect("origin")["retryCount"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remediation_that_would_break_quorum_waits() {
    logs();
    let env = Env::start(true).await;
    let mgmt = env.client();
    let cluster = "quorum";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&manifest(cluster, 3, "0s")));
    let machines = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, 3)).await;
    let (failing, marked) = (&machines[0], machines[1].name_any());

    // One member fails; then a healthy Machine is marked: removing it would leave one
    // healthy member of two.
    set_etcd_ready(&workload, &node_of(failing), false).await;
    mark_unhealthy(&mgmt, &marked, "HasRemediateMachineAnnotation").await;
    let why = eventually("the control plane to say why the Machine stays", WAIT, || async {
        let m = machines_api(&mgmt).get(&marked).await.ok()?;
        let c = m.get_condition("OwnerRemediated")?;
        let message = c.message.clone()?;
        (c.reason.as_deref() == Some("WaitingForRemediation") && message.contains("quorum")).then_some(message)
    })
    .await;
    assert!(why.contains(&marked) && why.contains("lose quorum"), "{why}");
    let events: Api<Event> = Api::namespaced(mgmt.clone(), NS);
    eventually("a RemediationHeld event on the control plane", WAIT, || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("RemediationHeld")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(&format!("{cluster}-cp"))
                    && e.note.as_deref().is_some_and(|n| n.contains("quorum"))
            })
            .then_some(())
    })
    .await;
    // The decision was made (the hold is written in the reconcile that would have deleted).
    let m = machines_api(&mgmt).get(&marked).await.expect("the marked Machine");
    assert!(m.metadata.deletion_timestamp.is_none(), "remediated although quorum would break");
    let pods = etcd_pods(&workload).await.expect("etcd pods");
    assert_eq!(Membership::from_pods(&pods).members.len(), 3, "no etcd member was removed");

    // Once the failing member recovers the marked Machine is replaced.
    set_etcd_ready(&workload, &node_of(failing), true).await;
    eventually("the marked Machine replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.iter().all(|m| m.name_any() != marked).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_machine_that_never_comes_up_is_replaced() {
    logs();
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let mgmt = env.client();
    let cluster = "init";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    // The first Machine's VM takes an hour.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest(cluster, 1, "1h")));
    let first = eventually("the first Machine", WAIT, || async {
        let ms = control_plane_machines(&mgmt, cluster).await?;
        (ms.len() == 1).then(|| ms[0].name_any())
    })
    .await;
    // Templates are immutable: point the control plane at a fast one (before init nothing
    // rolls, so only the replacement uses it), then mark the stuck Machine.
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&common::machine_template(&format!("{cluster}-cp-fast"), NS, "0s")));
    let p = json!({"spec": {"machineTemplate": {"infrastructureRef": {"name": format!("{cluster}-cp-fast")}}}});
    kubectl_ok(
        &kc,
        &["patch", &v1beta1("kcp"), &format!("{cluster}-cp"), "--type", "merge", "-p", &p.to_string()],
        None,
    );
    let kcp = control_plane(&mgmt, cluster).await.expect("control plane");
    assert_ne!(kcp.status.and_then(|s| s.initialized), Some(true));
    mark_unhealthy(&mgmt, &first, "NodeStartupTimeout").await;

    let replaced = eventually("the stuck Machine replaced and the control plane initialized", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 1).await?;
        (now[0].name_any() != first).then(|| now[0].clone())
    })
    .await;
    let origin = remediation_for(&replaced).expect("the replacement records what it replaces");
    assert_eq!(origin["machine"], first.as_str());
    eventually("the remediation in the status", WAIT, || async {
        let s = control_plane(&mgmt, cluster).await?.status?;
        (s.last_remediation?.machine == first).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_check_marks_and_control_plane_replaces() {
    logs();
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let mgmt = env.client();
    let cluster = "mhc";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    let conditions = "  unhealthyConditions:\n  - {type: Ready, status: \"False\", timeout: 1s}\n";
    let labels = r#"{cluster.x-k8s.io/control-plane: ""}"#;
    let mhc = format!("\n---\n{}", common::health_check(&format!("{cluster}-cp"), cluster, NS, labels, conditions));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&(manifest(cluster, 3, "0s") + &mhc)));
    let before = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, 3)).await;

    let sick = &before[2];
    let infra = sick.spec.infrastructure_ref.name.clone().expect("infrastructure machine");
    inject_fault(&mgmt, &infra, "node-not-ready").await;
    let after = eventually("the sick Machine replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.iter().all(|m| m.name_any() != sick.name_any()).then_some(now)
    })
    .await;
    let replacement = after.iter().find(|m| before.iter().all(|b| b.name_any() != m.name_any())).expect("replacement");
    let origin = remediation_for(replacement).expect("the replacement records what it replaces");
    assert_eq!(origin["machine"], sick.name_any().as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_etcd_member_hands_over_leadership_and_is_replaced() {
    logs();
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let mgmt = env.client();
    let cluster = "etcdloss";
    let workload = env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, cluster)));
    let mhc = format!(
        r#"
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata: {{name: {cluster}-cp, namespace: {NS}}}
spec:
  clusterName: {cluster}
  selector: {{matchLabels: {{cluster.x-k8s.io/control-plane: ""}}}}
  checks:
    unhealthyMachineConditions:
    - {{type: EtcdMemberHealthy, status: "False", timeoutSeconds: 1}}
"#
    );
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&(manifest(cluster, 3, "0s") + &mhc)));
    let before = eventually("3 control plane Machines", WAIT, || settled(&mgmt, &workload, cluster, 3)).await;
    let leader = Membership::from_pods(&etcd_pods(&workload).await.expect("etcd pods")).leader.expect("a leader");
    let sick = before.iter().find(|m| node_of(m) == leader).expect("the leader's Machine");
    let infra = sick.spec.infrastructure_ref.name.clone().expect("infrastructure machine");
    inject_fault(&mgmt, &infra, "etcd-member-down").await;
    eventually("a healthy member to lead", WAIT, || async {
        let m = Membership::from_pods(&etcd_pods(&workload).await?);
        let new_leader = m.leader.clone()?;
        (new_leader != leader && m.member(&new_leader)?.healthy).then_some(())
    })
    .await;
    let after = eventually("the Machine of the failed member replaced", WAIT, || async {
        let now = settled(&mgmt, &workload, cluster, 3).await?;
        now.iter().all(|m| m.name_any() != sick.name_any()).then_some(now)
    })
    .await;
    let replacement = after.iter().find(|m| before.iter().all(|b| b.name_any() != m.name_any())).expect("replacement");
    let origin = remediation_for(replacement).expect("the replacement records what it replaces");
    assert_eq!(origin["machine"], sick.name_any().as_str());
}
