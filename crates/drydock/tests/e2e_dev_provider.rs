//! The Dev provider end to end: a cluster written as upstream's quick-start templates write
//! it (`data/cluster-template-dev.yaml` in v1beta1, `data/cluster-template-dev-v1beta2.yaml`
//! as upstream v1.14 writes it: a KubeadmControlPlane and a MachineDeployment on a
//! DevCluster and DevMachineTemplates) applies with kubectl and provisions on drydock's
//! in-memory provider: Machines Running, Ready Nodes listed through the workload cluster's
//! kubeconfig, the Dev objects provisioned in both served versions.
//!
//! Each test names the version of the core objects, then of the Dev objects, then the
//! backend: `core_v1beta1_dev_v1beta2_in_memory` and so on. The docker backend is accepted
//! and simulated in memory, with an admission warning, a `BackendSimulated` condition and a
//! Warning Event. (MachinePools on DevMachinePools: `e2e_machine_pool.rs`.)

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{Env, eventually, json, kubectl, kubectl_ok, ready_nodes, running, v1beta1, wait, workload_kubeconfig};
use drydock_api::capi::conditions::HasConditions;
use drydock_api::capi::dev::v1beta1::DevMachine;
use drydock_provider_inmemory::machine::STARTED_ANNOTATION;
use drydock_provider_inmemory::timing::Plan;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use serde_json::Value;

const TEMPLATE: &str = include_str!("data/cluster-template-dev.yaml");
const TEMPLATE_V1BETA2: &str = include_str!("data/cluster-template-dev-v1beta2.yaml");
const NS: &str = "default";
const WAIT: Duration = Duration::from_secs(120);
const DOCKER_WARNING: &str = "drydock runs no containers";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Backend {
    InMemory,
    Docker,
}

/// One way of writing the cluster.
struct Variant {
    /// Version of the Cluster, KubeadmControlPlane, MachineDeployment and KubeadmConfigTemplate.
    core: &'static str,
    /// Version of the DevCluster and DevMachineTemplates.
    dev: &'static str,
    backend: Backend,
    control_plane: u32,
    workers: u32,
    /// Start-up durations of the in-memory backend: the VM's, then the Node's, etcd's and
    /// the API server's (each with 20% jitter, as upstream's templates).
    startup: (&'static str, &'static str),
}

/// Short start-ups, for tests on the system clock.
const QUICK: (&str, &str) = ("1s", "500ms");

impl Variant {
    /// The template with clusterctl's variables substituted.
    fn manifest(&self, cluster: &str) -> String {
        let template = match self.core {
            "v1beta1" => TEMPLATE,
            "v1beta2" => TEMPLATE_V1BETA2,
            other => panic!("no template writes {other} core objects"),
        };
        let component = |d: &str| format!(r#"{{provisioning: {{startupDuration: "{d}", startupJitter: "0.2"}}}}"#);
        let (vm, rest) = (component(self.startup.0), component(self.startup.1));
        let (cluster_backend, machine_backend) = match self.backend {
            Backend::InMemory => (
                "{inMemory: {}}".to_string(),
                format!("{{inMemory: {{vm: {vm}, node: {rest}, apiServer: {rest}, etcd: {rest}}}}}"),
            ),
            // Failure domains as each version writes them: a list, or a map by name.
            Backend::Docker if self.dev == "v1beta2" => (
                "{docker: {failureDomains: [{name: fd-a, controlPlane: true}, {name: fd-b, controlPlane: true}]}}"
                    .to_string(),
                r#"{docker: {extraMounts: [{containerPath: "/var/run/docker.sock", hostPath: "/var/run/docker.sock"}]}}"#
                    .to_string(),
            ),
            Backend::Docker => (
                "{docker: {failureDomains: {fd-a: {controlPlane: true}, fd-b: {controlPlane: true}}}}".to_string(),
                r#"{docker: {extraMounts: [{containerPath: "/var/run/docker.sock", hostPath: "/var/run/docker.sock"}]}}"#
                    .to_string(),
            ),
        };
        let vars = [
            ("${CLUSTER_NAME}", cluster.to_string()),
            ("${NAMESPACE}", NS.to_string()),
            ("${KUBERNETES_VERSION}", "v1.30.2".to_string()),
            ("${CONTROL_PLANE_MACHINE_COUNT}", self.control_plane.to_string()),
            ("${WORKER_MACHINE_COUNT}", self.workers.to_string()),
            ("${DEV_API_VERSION}", self.dev.to_string()),
            ("${DEV_CLUSTER_BACKEND}", cluster_backend),
            ("${DEV_MACHINE_BACKEND}", machine_backend),
        ];
        // The header comment names the variables; only the documents are substituted.
        let body =
            template.split_once("\napiVersion:").map_or(template.to_string(), |(_, b)| format!("apiVersion:{b}"));
        vars.iter().fold(body, |text, (var, value)| text.replace(var, value))
    }

    /// Applies the cluster and checks it provisions.
    async fn provisions(&self, cluster: &str) {
        let env = Env::start(true).await;
        let kc = env.kubeconfig(None);
        let (ok, out, err) = kubectl(&kc, &["apply", "-f", "-"], Some(&self.manifest(cluster)));
        assert!(ok, "kubectl apply failed:\n{out}\n{err}");
        assert_eq!(err.contains(DOCKER_WARNING), self.backend == Backend::Docker, "admission warning:\n{err}");

        let machines = (self.control_plane + self.workers) as usize;
        wait("every Machine Running", WAIT, || running(&kc, cluster) == machines).await;
        wait("Cluster Provisioned and its control plane ready", WAIT, || {
            let c = json(&kc, &["get", &v1beta1("cluster"), cluster]);
            let kcp = json(&kc, &["get", &v1beta1("kcp"), &format!("{cluster}-control-plane")]);
            c["status"]["phase"] == "Provisioned"
                && c["status"]["infrastructureReady"] == true
                && kcp["status"]["ready"] == true
                && kcp["status"]["readyReplicas"] == self.control_plane
        })
        .await;
        let wkc = workload_kubeconfig(&env, &kc, cluster);
        wait("a Ready Node per Machine in the workload cluster", WAIT, || ready_nodes(&wkc) == machines).await;

        if self.backend == Backend::Docker {
            check_failure_domains(&kc, cluster);
        }
        check_dev_objects(&kc, cluster, machines);
        check_backend_reported(&env, &kc, cluster, self.backend).await;
    }
}

/// The Dev objects read in both versions: provisioned (v1beta2, with a v1beta2 `Ready`
/// condition) and ready (v1beta1), each DevMachine with its provider ID.
fn check_dev_objects(kc: &Path, cluster: &str, machines: usize) {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let c2 = json(kc, &["get", "devclusters.v1beta2.infrastructure.cluster.x-k8s.io", cluster]);
    assert_eq!(c2["status"]["initialization"]["provisioned"], true, "{c2:#}");
    let ready = |o: &Value| condition(&o["status"]["conditions"], "Ready").map(|c| c["status"].clone());
    assert_eq!(ready(&c2), Some(Value::from("True")), "{c2:#}");
    assert!(c2["spec"]["controlPlaneEndpoint"]["port"].as_i64().is_some_and(|p| p > 0), "{c2:#}");
    let c1 = json(kc, &["get", "devclusters.v1beta1.infrastructure.cluster.x-k8s.io", cluster]);
    assert_eq!(c1["status"]["ready"], true, "{c1:#}");

    let m2 = json(kc, &["get", "devmachines.v1beta2.infrastructure.cluster.x-k8s.io", "-l", &selector]);
    let m2 = m2["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(m2.len(), machines);
    for m in &m2 {
        let name = m["metadata"]["name"].as_str().unwrap_or_default();
        assert_eq!(m["status"]["initialization"]["provisioned"], true, "{m:#}");
        assert_eq!(ready(m), Some(Value::from("True")), "{m:#}");
        assert_eq!(m["spec"]["providerID"], format!("in-memory://{name}"));
        assert_eq!(m["apiVersion"], "infrastructure.cluster.x-k8s.io/v1beta2");
    }
    let m1 = json(kc, &["get", "devmachines.v1beta1.infrastructure.cluster.x-k8s.io", "-l", &selector]);
    let m1 = m1["items"].as_array().cloned().unwrap_or_default();
    assert!(m1.iter().all(|m| m["status"]["ready"] == true), "{m1:#?}");
}

/// The docker backend's failure domains reach the Cluster, and its control plane Machines
/// are placed in them.
fn check_failure_domains(kc: &Path, cluster: &str) {
    let c = json(kc, &["get", &v1beta1("cluster"), cluster]);
    let offered: Vec<&String> =
        c["status"]["failureDomains"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
    assert_eq!(offered, ["fd-a", "fd-b"], "{c:#}");
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster},cluster.x-k8s.io/control-plane");
    let machines = json(kc, &["get", "machines", "-l", &selector]);
    for m in machines["items"].as_array().into_iter().flatten() {
        let fd = m["spec"]["failureDomain"].as_str().unwrap_or_default();
        assert!(fd == "fd-a" || fd == "fd-b", "control plane Machine outside the failure domains: {m:#}");
    }
}

fn condition<'a>(conditions: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions.as_array()?.iter().find(|c| c["type"] == type_)
}

/// A docker-backed object says it is simulated (condition and Warning Event); an in-memory
/// one says nothing of the kind.
async fn check_backend_reported(env: &Env, kc: &Path, cluster: &str, backend: Backend) {
    let c1 = json(kc, &["get", "devclusters.v1beta1.infrastructure.cluster.x-k8s.io", cluster]);
    let c2 = json(kc, &["get", "devclusters.v1beta2.infrastructure.cluster.x-k8s.io", cluster]);
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let machines = json(kc, &["get", "devmachines.v1beta1.infrastructure.cluster.x-k8s.io", "-l", &selector]);
    let mut reported = vec![
        condition(&c1["status"]["conditions"], "BackendSimulated").cloned(),
        // v1beta2 keeps the v1beta1 conditions under status.deprecated.
        condition(&c2["status"]["deprecated"]["v1beta1"]["conditions"], "BackendSimulated").cloned(),
    ];
    for m in machines["items"].as_array().into_iter().flatten() {
        reported.push(condition(&m["status"]["conditions"], "BackendSimulated").cloned());
    }
    if backend == Backend::InMemory {
        assert!(reported.iter().all(Option::is_none), "{reported:#?}");
        return;
    }
    for c in &reported {
        let c = c.as_ref().expect("BackendSimulated on every docker-backed object");
        assert_eq!((c["status"].as_str(), c["reason"].as_str()), (Some("True"), Some("NoContainerRuntime")));
        assert!(c["message"].as_str().is_some_and(|m| m.contains(DOCKER_WARNING)), "{c}");
    }
    let events: Api<Event> = Api::namespaced(env.client(), NS);
    eventually("a NoContainerRuntime Warning Event on the DevCluster", WAIT, || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("NoContainerRuntime")
                    && e.type_.as_deref() == Some("Warning")
                    && e.regarding
                        .as_ref()
                        .is_some_and(|r| r.kind.as_deref() == Some("DevCluster") && r.name.as_deref() == Some(cluster))
            })
            .then_some(())
    })
    .await;
}

/// Upstream v1.14's templates as they are: everything in v1beta2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta2_dev_v1beta2_in_memory() {
    let v = Variant {
        core: "v1beta2",
        dev: "v1beta2",
        backend: Backend::InMemory,
        control_plane: 3,
        workers: 2,
        startup: QUICK,
    };
    v.provisions("all-v1beta2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta2_dev_v1beta2_docker() {
    let v = Variant {
        core: "v1beta2",
        dev: "v1beta2",
        backend: Backend::Docker,
        control_plane: 1,
        workers: 1,
        startup: QUICK,
    };
    v.provisions("all-v1beta2-docker").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta1_dev_v1beta2_in_memory() {
    let v = Variant {
        core: "v1beta1",
        dev: "v1beta2",
        backend: Backend::InMemory,
        control_plane: 3,
        workers: 2,
        startup: QUICK,
    };
    v.provisions("dev-v1beta2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta1_dev_v1beta1_in_memory() {
    let v = Variant {
        core: "v1beta1",
        dev: "v1beta1",
        backend: Backend::InMemory,
        control_plane: 1,
        workers: 1,
        startup: QUICK,
    };
    v.provisions("dev-v1beta1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta1_dev_v1beta2_docker() {
    let v = Variant {
        core: "v1beta1",
        dev: "v1beta2",
        backend: Backend::Docker,
        control_plane: 1,
        workers: 2,
        startup: QUICK,
    };
    v.provisions("docker-v1beta2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta1_dev_v1beta1_docker() {
    let v = Variant {
        core: "v1beta1",
        dev: "v1beta1",
        backend: Backend::Docker,
        control_plane: 1,
        workers: 1,
        startup: QUICK,
    };
    v.provisions("docker-v1beta1").await;
}

/// Upstream's in-memory timing knobs on a DevMachine written in v1beta2 (its e2e values:
/// VM 10s, then Node, etcd and API server 2s, 20% jitter): each component is up at its
/// instant on the controllers' clock, paused here and moved by the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_v1beta1_dev_v1beta2_in_memory_startup_timings() {
    let env = Env::start_paused().await;
    let kc = env.kubeconfig(None);
    let v = Variant {
        core: "v1beta1",
        dev: "v1beta2",
        backend: Backend::InMemory,
        control_plane: 1,
        workers: 0,
        startup: ("10s", "2s"),
    };
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&v.manifest("timed")));
    let machines: Api<DevMachine> = Api::namespaced(env.client(), NS);
    let m = eventually("the control plane DevMachine started provisioning", WAIT, || async {
        let list = machines.list(&ListParams::default()).await.ok()?;
        list.items.into_iter().find(|m| m.annotations().contains_key(STARTED_ANNOTATION))
    })
    .await;
    let name = m.name_any();
    let started: jiff::Timestamp = m.annotations()[STARTED_ANNOTATION].parse().expect("start annotation");
    let d = Plan::new(&name, m.spec.backend.in_memory.as_ref(), true).deadlines(started);
    assert!(d.vm.duration_since(started) >= jiff::SignedDuration::from_secs(10), "the VM's 10s and its jitter");
    let condition_of = |type_: &'static str| {
        let (machines, name) = (machines.clone(), name.clone());
        async move { machines.get(&name).await.ok()?.get_condition(type_).cloned() }
    };
    let advance_to = |t: jiff::Timestamp| env.clock.advance(env.clock.until(t));

    // The start annotation and the conditions are two writes: wait for the second.
    advance_to(d.vm - jiff::SignedDuration::from_secs(1));
    let vm = eventually("VMProvisioned waiting for its startup", WAIT, || async {
        condition_of("VMProvisioned").await.filter(|c| c.reason.as_deref() == Some("WaitingForStartupTimeout"))
    })
    .await;
    assert_eq!(vm.status, "False", "a second before its instant the VM is not up");
    advance_to(d.vm);
    let vm =
        eventually("the VM up", WAIT, || async { condition_of("VMProvisioned").await.filter(|c| c.is_true()) }).await;
    assert_eq!(vm.last_transition_time.0.as_second(), d.vm.as_second(), "up at its instant");
    let up = d.etcd.max(d.api_server).expect("control plane deadlines");
    advance_to(up);
    let ready = eventually("the DevMachine ready", WAIT, || async {
        machines.get(&name).await.ok().filter(|m| m.status.as_ref().and_then(|s| s.ready) == Some(true))
    })
    .await;
    let api_server = ready.get_condition("APIServerProvisioned").expect("APIServerProvisioned");
    assert_eq!(api_server.last_transition_time.0.as_second(), d.api_server.expect("API server").as_second());
    wait("the control plane Machine Running", WAIT, || running(&kc, "timed") == 1).await;
}
