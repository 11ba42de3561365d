//! MachineSet preflight checks end to end: while the control plane upgrades, workers at the
//! old version are neither created nor remediated, the sets and their deployment say why,
//! and the skip annotation (on the deployment, or on the Cluster) lets them through.
//!
//! The upgrade window is held open by pausing the KubeadmControlPlane before raising its
//! `spec.version`: its `status.version` stays behind, which is exactly what the checks read.

use crate::common;

use std::time::Duration;

use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::core::{Cluster, Machine, MachineDeployment, MachineSet};
use drydock_api::capi::keys::{DEPLOYMENT_NAME_LABEL, PAUSED_ANNOTATION, SKIP_PREFLIGHT_CHECKS_ANNOTATION};
use drydock_api::capi::kubeadm::KubeadmControlPlane;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde_json::{Value, json};

use common::{Env, eventually, kubectl_ok};

const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(180);
const CLUSTER: &str = "pf";
const MD: &str = "pf-md-0";
const KCP: &str = "pf-control-plane";

fn manifest() -> String {
    // No MachineHealthCheck: the test marks the unhealthy Machine itself.
    common::generated_cluster(CLUSTER, &["--kubernetes-version", "v1.31.2"])
}

fn api<K>(client: &kube::Client) -> Api<K>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    Api::namespaced(client.clone(), NS)
}

async fn patch<K>(client: &kube::Client, name: &str, v: Value)
where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    api::<K>(client).patch(name, &PatchParams::default(), &Patch::Merge(&v)).await.expect("patch");
}

async fn workers(client: &kube::Client) -> Vec<Machine> {
    let lp = ListParams::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={MD}"));
    api::<Machine>(client).list(&lp).await.expect("list machines").items
}

fn available(m: &Machine) -> bool {
    m.metadata.deletion_timestamp.is_none()
        && m.status.as_ref().is_some_and(|s| s.node_ref.is_some())
        && m.is_condition_true("NodeHealthy")
}

/// The deployment's set, once it has exactly one.
async fn the_set(client: &kube::Client) -> Option<MachineSet> {
    let lp = ListParams::default().labels(&format!("{DEPLOYMENT_NAME_LABEL}={MD}"));
    let sets = api::<MachineSet>(client).list(&lp).await.ok()?.items;
    (sets.len() == 1).then(|| sets.into_iter().next())?
}

/// The MachinesCreated condition's (reason, message) when False.
fn held<K: HasConditions>(obj: &K) -> Option<(String, String)> {
    let c = obj.get_condition("MachinesCreated")?;
    c.is_false().then(|| (c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()))
}

/// Waits until the set and its deployment report the scale up held by the checks named.
async fn wait_held(client: &kube::Client, checks: &[&str]) -> String {
    eventually("the scale up to be held by preflight checks", WAIT, || async {
        let ms = the_set(client).await?;
        let md: MachineDeployment = api(client).get(MD).await.ok()?;
        let (reason, message) = held(&ms)?;
        let (md_reason, md_message) = held(&md)?;
        let named = checks.iter().all(|c| message.contains(&format!("{c:?}")));
        (reason == "PreflightCheckFailed"
            && md_reason == "PreflightCheckFailed"
            && named
            && md_message.contains(&message))
        .then_some(message)
    })
    .await
}

/// Waits for `n` available workers and both MachinesCreated conditions True.
async fn wait_created(client: &kube::Client, n: usize) -> Vec<Machine> {
    eventually(&format!("{n} available workers"), WAIT, || async {
        let machines = workers(client).await;
        let ms = the_set(client).await?;
        let md: MachineDeployment = api(client).get(MD).await.ok()?;
        (machines.len() == n
            && machines.iter().all(available)
            && ms.is_condition_true("MachinesCreated")
            && md.is_condition_true("MachinesCreated"))
        .then_some(machines)
    })
    .await
}

/// Adds conditions to a Machine's status as a MachineHealthCheck would, retrying on
/// conflicts with the Machine controller.
async fn mark_unhealthy(client: &kube::Client, name: &str) {
    let machines = api::<Machine>(client);
    eventually("the Machine to be marked unhealthy", WAIT, || async {
        let mut m = machines.get(name).await.ok()?;
        let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let mut conditions: Vec<Value> = m
            .conditions()
            .iter()
            .filter(|c| c.type_ != "HealthCheckSucceeded" && c.type_ != "OwnerRemediated")
            .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
            .collect();
        conditions.push(json!({"type": "HealthCheckSucceeded", "status": "False", "severity": "Warning",
            "reason": "UnhealthyNode", "lastTransitionTime": now}));
        conditions.push(json!({"type": "OwnerRemediated", "status": "False", "severity": "Warning",
            "reason": "WaitingForRemediation", "lastTransitionTime": now}));
        let p = json!({"metadata": {"resourceVersion": m.metadata.resource_version.take()},
            "status": {"conditions": conditions}});
        machines.patch_status(name, &PatchParams::default(), &Patch::Merge(&p)).await.ok().map(|_| ())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_checks_hold_workers_while_the_control_plane_upgrades() {
    let env = Env::start(true).await;
    let client = env.client();
    let kubeconfig = env.kubeconfig(None);
    kubectl_ok(&kubeconfig, &["apply", "-f", "-"], Some(&manifest()));
    let first = wait_created(&client, 1).await;
    let unhealthy = first[0].name_any();
    eventually("the control plane at v1.31.2", WAIT, || async {
        let kcp: KubeadmControlPlane = api(&client).get(KCP).await.ok()?;
        (kcp.status?.version.as_deref() == Some("v1.31.2")).then_some(())
    })
    .await;

    // The control plane "upgrades" to the next minor and stays in the middle of it.
    patch::<KubeadmControlPlane>(&client, KCP, json!({"metadata": {"annotations": {PAUSED_ANNOTATION: "true"}}})).await;
    patch::<KubeadmControlPlane>(&client, KCP, json!({"spec": {"version": "v1.32.0"}})).await;

    // Scaling up workers at the old version is held, and says which checks failed.
    patch::<MachineDeployment>(&client, MD, json!({"spec": {"replicas": 3}})).await;
    let message = wait_held(&client, &["ControlPlaneIsStable", "KubeadmVersionSkew"]).await;
    assert!(message.contains("is upgrading"), "{message}");
    assert_eq!(workers(&client).await.len(), 1, "a held scale up created Machines");

    // An unhealthy worker is not deleted either, and learns why.
    mark_unhealthy(&client, &unhealthy).await;
    eventually("the remediation hold on the unhealthy Machine", WAIT, || async {
        let m: Machine = api(&client).get(&unhealthy).await.ok()?;
        let c = m.get_condition("OwnerRemediated")?;
        (c.is_false() && c.message.as_deref()?.contains("\"ControlPlaneIsStable\"")).then_some(())
    })
    .await;
    let m: Machine = api(&client).get(&unhealthy).await.expect("machine");
    assert!(m.metadata.deletion_timestamp.is_none(), "remediated despite failing checks");
    assert_eq!(workers(&client).await.len(), 1);

    // Skipping the failing checks on the deployment lets both through: the unhealthy
    // Machine is replaced and the set grows.
    let skip = "ControlPlaneIsStable, KubeadmVersionSkew";
    patch::<MachineDeployment>(
        &client,
        MD,
        json!({"metadata": {"annotations": {SKIP_PREFLIGHT_CHECKS_ANNOTATION: skip}}}),
    )
    .await;
    let machines = wait_created(&client, 3).await;
    assert!(machines.iter().all(|m| m.name_any() != unhealthy), "the unhealthy Machine was not replaced");
    let ms = the_set(&client).await.expect("one MachineSet");
    assert_eq!(
        ms.annotations().get(SKIP_PREFLIGHT_CHECKS_ANNOTATION).map(String::as_str),
        Some(skip),
        "the deployment's opt-out reaches its set"
    );

    // Without the opt-out the checks apply again ...
    patch::<MachineDeployment>(
        &client,
        MD,
        json!({"metadata": {"annotations": {SKIP_PREFLIGHT_CHECKS_ANNOTATION: null}}}),
    )
    .await;
    eventually("the opt-out to leave the set", WAIT, || async {
        let ms = the_set(&client).await?;
        (!ms.annotations().contains_key(SKIP_PREFLIGHT_CHECKS_ANNOTATION)).then_some(())
    })
    .await;
    patch::<MachineDeployment>(&client, MD, json!({"spec": {"replicas": 4}})).await;
    wait_held(&client, &["ControlPlaneIsStable", "KubeadmVersionSkew"]).await;
    assert_eq!(workers(&client).await.len(), 3);

    // ... until the Cluster opts all its sets out.
    patch::<Cluster>(&client, CLUSTER, json!({"metadata": {"annotations": {SKIP_PREFLIGHT_CHECKS_ANNOTATION: "All"}}}))
        .await;
    wait_created(&client, 4).await;
}
