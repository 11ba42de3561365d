//! MachineHealthChecks end to end on an in-process drydock with the in-memory provider:
//! sick Nodes are simulated with the provider's fault annotation on InMemoryMachines, and
//! Node changes reach the check through the cross-cluster Node watch. Timeouts are tested
//! on a paused clock: the test moves time past them instead of waiting.
//!
//! - a worker whose Node stays NotReady beyond its timeout is replaced by its MachineSet
//!   (and not a moment before), the check's counters follow, and an idle fleet is not
//!   written to;
//! - with more unhealthy workers than maxUnhealthy nothing is remediated and the check says
//!   why; once one recovers, the other is remediated;
//! - a worker whose Node never registers is flagged after nodeStartupTimeout;
//! - with a remediation template, an external remediation request replaces the hand-over
//!   to the owner, and is withdrawn once the Machine is healthy again.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Env, KUBEADM, eventually, kubectl_ok};
use drydock_api::ResourceDef;
use drydock_api::capi::conditions::{Condition, HasConditions};
use drydock_api::capi::core::{Machine, MachineHealthCheck};
use drydock_api::capi::inmemory::InMemoryMachine;
use drydock_api::tenancy::LogicalClusterName;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::json;

const NS: &str = "default";
const MINUTE: Duration = Duration::from_secs(60);
const FAULT: &str = "infrastructure.drydock.dev/fault";

/// A cluster with one control plane machine and a MachineDeployment `<name>-workers` of
/// `workers` machines (instant provisioning unless `node_startup` is given), plus `mhc`
/// (a MachineHealthCheck spec selecting the workers, as YAML lines under `spec:`).
fn manifest(name: &str, workers: u32, node_startup: Option<&str>, mhc: &str) -> String {
    let behaviour = node_startup.map_or_else(
        || "      {}\n".to_string(),
        |d| format!("      behaviour:\n        node:\n          provisioning:\n            startupDuration: \"{d}\"\n"),
    );
    let selected = format!("{{cluster.x-k8s.io/deployment-name: {name}-workers}}");
    format!(
        r#"{preamble}---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryMachineTemplate
metadata: {{name: {name}-cp, namespace: {NS}}}
spec: {{template: {{spec: {{}}}}}}
---
{control_plane}---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryMachineTemplate
metadata: {{name: {name}-workers, namespace: {NS}}}
spec:
  template:
    spec:
{behaviour}---
{workers}---
{health_check}"#,
        preamble = common::cluster_preamble(name, NS),
        health_check = common::health_check(&format!("{name}-workers"), name, NS, &selected, mhc),
        control_plane = common::control_plane(name, NS, (1, "v1.30.2"), &format!("{name}-cp"), KUBEADM, ""),
        workers = common::workers(
            name,
            NS,
            workers,
            &format!("{name}-workers"),
            r#"{node-role.kubernetes.io/worker: ""}"#,
            ""
        ),
    )
}

struct Fleet {
    env: Env,
    client: kube::Client,
    name: String,
}

impl Fleet {
    async fn start(name: &str, workers: u32, node_startup: Option<&str>, mhc: &str) -> Self {
        Self::start_on(Env::start(true).await, name, workers, node_startup, mhc).await
    }

    /// Like [`Fleet::start`], on a paused clock.
    async fn start_paused(name: &str, workers: u32, node_startup: Option<&str>, mhc: &str) -> Self {
        Self::start_on(Env::start_paused().await, name, workers, node_startup, mhc).await
    }

    async fn start_on(env: Env, name: &str, workers: u32, node_startup: Option<&str>, mhc: &str) -> Self {
        let client = env.client();
        kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&manifest(name, workers, node_startup, mhc)));
        Self { env, client, name: name.to_string() }
    }

    fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), NS)
    }

    /// The workers, by name.
    async fn workers(&self) -> BTreeMap<String, Machine> {
        let lp = ListParams::default().labels(&format!("cluster.x-k8s.io/deployment-name={}-workers", self.name));
        let list = self.api::<Machine>().list(&lp).await.expect("list machines");
        list.items.into_iter().map(|m| (m.name_any(), m)).collect()
    }

    async fn running_workers(&self, n: usize) -> BTreeMap<String, Machine> {
        eventually(&format!("{n} workers Running with healthy Nodes"), 2 * MINUTE, || async {
            let w = self.workers().await;
            let running = w.values().all(|m| {
                m.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    && m.metadata.deletion_timestamp.is_none()
                    && m.is_condition_true("NodeHealthy")
            });
            (w.len() == n && running).then_some(w)
        })
        .await
    }

    async fn check(&self) -> MachineHealthCheck {
        self.api::<MachineHealthCheck>().get(&format!("{}-workers", self.name)).await.expect("mhc")
    }

    /// Waits until the check reports these counters.
    async fn counters(&self, expected: i32, healthy: i32) -> MachineHealthCheck {
        eventually(&format!("check counters {expected}/{healthy}"), 2 * MINUTE, || async {
            let c = self.check().await;
            let s = c.status.clone().unwrap_or_default();
            (s.expected_machines == Some(expected) && s.current_healthy == Some(healthy)).then_some(c)
        })
        .await
    }

    /// Sets (or with `None` removes) the fault annotation of a worker's InMemoryMachine.
    async fn fault(&self, machine: &Machine, fault: Option<&str>) {
        let infra = machine.spec.infrastructure_ref.name.clone().expect("infrastructure ref");
        let patch = json!({"metadata": {"annotations": {FAULT: fault}}});
        self.api::<InMemoryMachine>()
            .patch(&infra, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("annotate InMemoryMachine");
    }

    /// Makes the check reconcile and waits until it has: what it decided is then in place,
    /// so a test can assert that something did not happen. The spec changes (so the
    /// generation moves) and changes back: maxUnhealthy to 100 Machines and back to its
    /// default of 100%.
    async fn reconciled(&self) {
        let name = format!("{}-workers", self.name);
        let api = self.api::<MachineHealthCheck>();
        let mut generation = None;
        for max_unhealthy in [json!(100), json!("100%")] {
            let patch = json!({"spec": {"maxUnhealthy": max_unhealthy}});
            let patched =
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("touch the check");
            generation = patched.metadata.generation;
        }
        eventually("the check to observe its new generation", MINUTE, || async {
            let c = self.check().await;
            (c.status.as_ref()?.observed_generation == generation).then_some(())
        })
        .await;
    }

    fn nodes(&self) -> Api<Node> {
        Api::all(self.env.instance.server.client(Some(&LogicalClusterName::for_cluster(NS, &self.name))))
    }

    async fn events_about(&self, name: &str) -> Vec<Event> {
        let list = self.api::<Event>().list(&ListParams::default()).await.expect("events");
        list.items.into_iter().filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)).collect()
    }
}

fn condition<'a>(obj: &'a impl HasConditions, type_: &str) -> Option<&'a Condition> {
    obj.get_condition(type_)
}

fn node_ready(n: &Node) -> Option<String> {
    let conditions = n.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == "Ready").map(|c| c.status.clone())
}

const READY_TIMEOUTS: &str = "  unhealthyConditions:
  - {type: Ready, status: \"False\", timeout: 2s}
  - {type: Ready, status: Unknown, timeout: 2s}
";

/// Longer than any test takes in real time, so only the paused clock can pass them.
const PAUSED_READY_TIMEOUTS: &str = "  unhealthyConditions:
  - {type: Ready, status: \"False\", timeout: 5m}
  - {type: Ready, status: Unknown, timeout: 5m}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_worker_is_remediated() {
    let f = Fleet::start_paused("sick", 3, None, PAUSED_READY_TIMEOUTS).await;
    let workers = f.running_workers(3).await;
    let c = f.counters(3, 3).await;
    let s = c.status.as_ref().expect("status");
    assert_eq!(s.remediations_allowed, Some(3), "maxUnhealthy defaults to 100%");
    assert_eq!(s.targets.clone().unwrap_or_default(), workers.keys().cloned().collect::<Vec<_>>());
    assert!(condition(&c, "RemediationAllowed").is_some_and(Condition::is_true));
    for m in workers.values() {
        let hc = f.api::<Machine>().get(&m.name_any()).await.expect("machine");
        assert!(condition(&hc, "HealthCheckSucceeded").is_some_and(Condition::is_true), "{:?}", hc.status);
    }

    // The Node goes NotReady: for its 5m timeout the worker is neither healthy nor unhealthy.
    let sick = workers.values().next().expect("a worker").clone();
    let node_name =
        sick.status.as_ref().and_then(|s| s.node_ref.as_ref()).and_then(|r| r.name.clone()).expect("nodeRef");
    f.fault(&sick, Some("node-not-ready")).await;
    eventually("the Node to turn NotReady", MINUTE, || async {
        let n = f.nodes().get_opt(&node_name).await.expect("node");
        n.as_ref().and_then(node_ready).filter(|s| s == "False")
    })
    .await;
    eventually("the Machine to report its Node unhealthy", MINUTE, || async {
        let m = f.api::<Machine>().get_opt(&sick.name_any()).await.expect("get")?;
        condition(&m, "NodeHealthy").filter(|c| c.is_false()).map(|_| ())
    })
    .await;
    f.counters(3, 2).await;
    f.env.clock.advance(4 * MINUTE + Duration::from_secs(50));
    f.reconciled().await;
    let waiting = f.api::<Machine>().get(&sick.name_any()).await.expect("the sick worker");
    assert!(waiting.metadata.deletion_timestamp.is_none(), "remediated before its timeout");
    assert!(condition(&waiting, "OwnerRemediated").is_none(), "handed over before its timeout: {:?}", waiting.status);

    // Beyond the timeout it is handed to its MachineSet, which replaces it.
    f.env.clock.advance(Duration::from_secs(20));
    eventually("the sick worker to be replaced", 2 * MINUTE, || async {
        let w = f.workers().await;
        (!w.contains_key(&sick.name_any()) && w.len() == 3).then_some(())
    })
    .await;
    let replaced = f.running_workers(3).await;
    assert!(!replaced.contains_key(&sick.name_any()));
    let c = f.counters(3, 3).await;
    assert_eq!(c.status.as_ref().and_then(|s| s.remediations_allowed), Some(3));
    let events = f.events_about(&sick.name_any()).await;
    let marked = events.iter().find(|e| e.reason.as_deref() == Some("MachineMarkedUnhealthy")).expect("event");
    let note = marked.note.as_deref().unwrap_or_default();
    assert!(note.contains("Condition Ready on node is reporting status False for more than 5m0s"), "{note}");

    // An idle fleet is not written to by the check (nor by the Machines' controllers).
    let versions = || async {
        let mut v = vec![f.check().await.resource_version()];
        v.extend(f.workers().await.values().map(|m| m.resource_version()));
        v
    };
    let before = versions().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(versions().await, before, "an idle fleet was written to");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_unhealthy_short_circuits_remediation() {
    let spec = format!("  maxUnhealthy: 1\n{READY_TIMEOUTS}");
    let f = Fleet::start("storm", 3, None, &spec).await;
    let workers = f.running_workers(3).await;
    f.counters(3, 3).await;
    let sick: Vec<Machine> = workers.values().take(2).cloned().collect();
    for m in &sick {
        f.fault(m, Some("node-unknown")).await;
    }

    // Both unhealthy, one allowed: nothing is remediated and the check says why.
    let c = eventually("remediation to be restricted", 2 * MINUTE, || async {
        let c = f.check().await;
        let restricted = condition(&c, "RemediationAllowed").is_some_and(Condition::is_false);
        let both = {
            let w = f.workers().await;
            sick.iter().all(|m| {
                w.get(&m.name_any()).is_some_and(|m| {
                    condition(m, "HealthCheckSucceeded").is_some_and(|c| c.reason.as_deref() == Some("UnhealthyNode"))
                })
            })
        };
        (restricted && both).then_some(c)
    })
    .await;
    let cond = condition(&c, "RemediationAllowed").expect("condition");
    assert_eq!(cond.reason.as_deref(), Some("TooManyUnhealthy"));
    assert_eq!(cond.severity.as_deref(), Some("Warning"));
    let msg = cond.message.as_deref().unwrap_or_default();
    assert!(msg.contains("exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 1)"), "{msg}");
    let s = c.status.as_ref().expect("status");
    assert_eq!((s.expected_machines, s.current_healthy, s.remediations_allowed), (Some(3), Some(1), Some(0)));
    let w = f.workers().await;
    assert_eq!(w.len(), 3);
    for m in w.values() {
        assert!(condition(m, "OwnerRemediated").is_none(), "{} handed over: {:?}", m.name_any(), m.status);
        assert!(m.metadata.deletion_timestamp.is_none());
    }
    assert!(
        f.events_about(&c.name_any()).await.iter().any(|e| e.reason.as_deref() == Some("RemediationRestricted")),
        "no RemediationRestricted event"
    );

    // One recovers: the other is now within the limit and gets replaced.
    f.fault(&sick[0], None).await;
    eventually("the still sick worker to be replaced", 2 * MINUTE, || async {
        let w = f.workers().await;
        (!w.contains_key(&sick[1].name_any()) && w.contains_key(&sick[0].name_any())).then_some(())
    })
    .await;
    f.running_workers(3).await;
    let c = f.counters(3, 3).await;
    assert!(condition(&c, "RemediationAllowed").is_some_and(Condition::is_true));
    let healed = f.api::<Machine>().get(&sick[0].name_any()).await.expect("healed machine");
    assert!(condition(&healed, "HealthCheckSucceeded").is_some_and(Condition::is_true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_that_never_starts_is_flagged() {
    // The Node takes an hour to register; the check gives it 10 minutes.
    let spec = format!("  nodeStartupTimeout: 10m\n{PAUSED_READY_TIMEOUTS}");
    let f = Fleet::start_paused("late", 1, Some("1h"), &spec).await;
    // The clock starts once the worker could start its Node: the control plane is
    // initialized and its VM waits for the Node.
    let first = eventually("a worker waiting for its Node", MINUTE, || async {
        let m = f.workers().await.into_values().next()?;
        let infra = condition(&m, "InfrastructureReady")?;
        (infra.reason.as_deref() == Some("WaitingForStartupTimeout")).then_some(m)
    })
    .await;
    let c = f.counters(1, 0).await;
    assert_eq!(c.status.as_ref().and_then(|s| s.remediations_allowed), Some(0), "waiting counts against the limit");

    // The timeout counts from the Machine's creation at the latest, stamped by the API
    // server on the real clock: a margin covers the seconds this test has run.
    f.env.clock.advance(9 * MINUTE + Duration::from_secs(30));
    f.reconciled().await;
    let waiting = f.api::<Machine>().get(&first.name_any()).await.expect("the worker");
    assert!(waiting.metadata.deletion_timestamp.is_none(), "flagged before its start-up timeout");
    assert_eq!(f.check().await.status.and_then(|s| s.current_healthy), Some(0));

    f.env.clock.advance(MINUTE);
    eventually("the worker to be flagged and replaced", 2 * MINUTE, || async {
        let w = f.workers().await;
        (!w.contains_key(&first.name_any())).then_some(())
    })
    .await;
    let events = f.events_about(&first.name_any()).await;
    let marked = events.iter().find(|e| e.reason.as_deref() == Some("MachineMarkedUnhealthy")).expect("event");
    let note = marked.note.as_deref().unwrap_or_default();
    assert!(note.contains("Node failed to report startup in 10m0s"), "{note}");
}

fn paused_reason(obj: &impl HasConditions) -> Option<String> {
    condition(obj, "Paused").filter(|c| c.is_true()).and_then(|c| c.reason.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_checks_and_machines() {
    let f = Fleet::start("held", 2, None, READY_TIMEOUTS).await;
    let workers = f.running_workers(2).await;
    f.counters(2, 2).await;
    let clusters = f.api::<drydock_api::capi::core::Cluster>();
    let patch_cluster = |v: serde_json::Value| {
        let clusters = clusters.clone();
        async move { clusters.patch("held", &PatchParams::default(), &Patch::Merge(&v)).await.expect("patch cluster") }
    };

    // The paused annotation on the Cluster pauses the Cluster object alone.
    patch_cluster(json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}})).await;
    eventually("the Cluster to report AnnotationPaused", MINUTE, || async {
        let c = clusters.get("held").await.ok()?;
        (paused_reason(&c).as_deref() == Some("AnnotationPaused")).then_some(())
    })
    .await;
    let sick = workers.values().next().expect("worker").clone();
    f.fault(&sick, Some("node-not-ready")).await;
    eventually("the check to go on and the worker to be replaced", 2 * MINUTE, || async {
        (!f.workers().await.contains_key(&sick.name_any())).then_some(())
    })
    .await;
    let workers = f.running_workers(2).await;
    for m in workers.values() {
        assert_eq!(paused_reason(m), None, "{} paused by the Cluster's annotation", m.name_any());
    }
    assert_eq!(paused_reason(&f.check().await), None);
    f.counters(2, 2).await;

    // spec.paused pauses everything of the cluster: Cluster, Machines and the check say so,
    // and a sick worker is left alone.
    patch_cluster(json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": null}}, "spec": {"paused": true}}))
        .await;
    eventually("everything to report ClusterPaused", MINUTE, || async {
        let c = clusters.get("held").await.ok()?;
        let check = f.check().await;
        let w = f.workers().await;
        let all = paused_reason(&c).as_deref() == Some("ClusterPaused")
            && paused_reason(&check).as_deref() == Some("ClusterPaused")
            && w.values().all(|m| paused_reason(m).as_deref() == Some("ClusterPaused"));
        all.then_some(())
    })
    .await;
    let sick = workers.values().next().expect("worker").clone();
    let node_name = sick.status.as_ref().and_then(|s| s.node_ref.as_ref()).and_then(|r| r.name.clone()).expect("node");
    f.fault(&sick, Some("node-not-ready")).await;
    eventually("the Node to turn NotReady", MINUTE, || async {
        f.nodes().get_opt(&node_name).await.ok().flatten().as_ref().and_then(node_ready).filter(|s| s == "False")
    })
    .await;
    // For twice the 2s timeout, nothing happens to the paused worker.
    let until = tokio::time::Instant::now() + Duration::from_secs(4);
    while tokio::time::Instant::now() < until {
        let m = f.api::<Machine>().get(&sick.name_any()).await.expect("still there");
        assert!(m.metadata.deletion_timestamp.is_none(), "a paused worker was deleted");
        assert!(condition(&m, "OwnerRemediated").is_none(), "a paused worker was handed over");
        assert!(condition(&m, "HealthCheckSucceeded").is_some_and(Condition::is_true), "judged while paused");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Resumed: the conditions go and the sick worker is replaced.
    patch_cluster(json!({"spec": {"paused": false}})).await;
    eventually("the sick worker to be replaced after resuming", 2 * MINUTE, || async {
        (!f.workers().await.contains_key(&sick.name_any())).then_some(())
    })
    .await;
    let workers = f.running_workers(2).await;
    eventually("the Paused conditions to go", MINUTE, || async {
        let c = clusters.get("held").await.ok()?;
        let none = paused_reason(&c).is_none()
            && paused_reason(&f.check().await).is_none()
            && workers.values().all(|m| paused_reason(m).is_none());
        none.then_some(())
    })
    .await;
}

const REMEDIATION_GROUP: &str = "remediation.example.com";

/// With a `remediationTemplate` the check does not hand an unhealthy Machine to its owner:
/// it creates a request of the template's kind minus `Template`, named after the Machine,
/// owned by it and cloned from the template, and leaves the Machine alone. Once the Machine
/// is healthy again the request is withdrawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_remediation_request_is_made_and_withdrawn() {
    let kinds =
        [("ExampleRemediationTemplate", "exampleremediationtemplates"), ("ExampleRemediation", "exampleremediations")];
    let extra =
        kinds.iter().map(|(kind, plural)| ResourceDef::new(REMEDIATION_GROUP, "v1alpha1", kind, plural)).collect();
    let env = Env::start_serving(true, extra).await;
    // As an external remediation provider does, it lets Cluster API's manager at its kinds.
    let template = format!(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: example-remediation-for-capi
  labels: {{cluster.x-k8s.io/aggregate-to-manager: \"true\"}}
rules:
- {{apiGroups: [{REMEDIATION_GROUP}], resources: [\"*\"], verbs: [get, list, watch, create, patch, update, delete]}}
---
apiVersion: {REMEDIATION_GROUP}/v1alpha1
kind: ExampleRemediationTemplate
metadata: {{name: reboot, namespace: {NS}}}
spec: {{template: {{spec: {{strategy: Reboot, retryLimit: 2}}}}}}
"
    );
    kubectl_ok(&env.kubeconfig(None), &["apply", "-f", "-"], Some(&template));
    let mhc = format!(
        "{READY_TIMEOUTS}  remediationTemplate: {{apiVersion: {REMEDIATION_GROUP}/v1alpha1, kind: ExampleRemediationTemplate, name: reboot, namespace: {NS}}}\n"
    );
    let f = Fleet::start_on(env, "ext", 2, None, &mhc).await;
    let workers = f.running_workers(2).await;
    let requests: Api<DynamicObject> = Api::namespaced_with(
        f.client.clone(),
        NS,
        &ApiResource {
            group: REMEDIATION_GROUP.into(),
            version: "v1alpha1".into(),
            api_version: format!("{REMEDIATION_GROUP}/v1alpha1"),
            kind: "ExampleRemediation".into(),
            plural: "exampleremediations".into(),
        },
    );

    let sick = workers.values().next().expect("a worker").clone();
    let name = sick.name_any();
    f.fault(&sick, Some("node-not-ready")).await;
    let request =
        eventually("the remediation request", 2 * MINUTE, || async { requests.get_opt(&name).await.ok().flatten() })
            .await;
    assert_eq!(request.data["spec"]["strategy"], "Reboot", "cloned from the template: {:?}", request.data);
    assert_eq!(request.data["spec"]["retryLimit"], 2);
    let owners = request.metadata.owner_references.clone().unwrap_or_default();
    assert!(
        owners.iter().any(|o| o.kind == "Machine" && Some(&o.uid) == sick.metadata.uid.as_ref()),
        "the request is owned by its Machine: {owners:?}"
    );
    let m = f.api::<Machine>().get(&name).await.expect("machine");
    assert!(condition(&m, "HealthCheckSucceeded").is_some_and(|c| !c.is_true()), "{:?}", m.status);
    assert!(condition(&m, "OwnerRemediated").is_none(), "handed to its owner: {:?}", m.status);
    assert!(m.metadata.deletion_timestamp.is_none(), "the Machine is the request's to handle");

    // Healthy again: the request goes and the Machine is the same one.
    f.fault(&sick, None).await;
    eventually("the request withdrawn and the Machine healthy", 2 * MINUTE, || async {
        let gone = requests.get_opt(&name).await.ok()?.is_none();
        let m = f.api::<Machine>().get(&name).await.ok()?;
        (gone && condition(&m, "HealthCheckSucceeded").is_some_and(Condition::is_true)).then_some(())
    })
    .await;
    let now: Vec<String> = f.workers().await.into_keys().collect();
    assert_eq!(now, workers.into_keys().collect::<Vec<_>>(), "no Machine was replaced");
}
