//! Shared helpers for drydock's end-to-end tests: an in-process instance on a temporary
//! data dir, kubectl invocations, and waiting with deadlines.
#![allow(dead_code)]

pub mod etcd;
pub mod watch;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use drydock::instance::{Instance, Options};
use drydock_api::tenancy::LogicalClusterName;
use drydock_apiserver::Config;
use drydock_controllers::Settings;
use drydock_controllers::framework::Clock;
use serde_json::Value;

pub struct Env {
    pub instance: Instance,
    pub dir: tempfile::TempDir,
    /// The clock the controllers and provider read (paused in tests that move time).
    pub clock: Clock,
}

impl Env {
    /// Starts drydock (API server, and controllers when `controllers`) and serves it over TCP.
    pub async fn start(controllers: bool) -> Self {
        Self::start_serving(controllers, Vec::new()).await
    }

    /// Like [`Env::start`], with the controllers on a paused clock that only
    /// [`Clock::advance`] moves.
    pub async fn start_paused() -> Self {
        Self::start_with(true, Vec::new(), Clock::paused()).await
    }

    /// Like [`Env::start`], also serving `extra` kinds.
    pub async fn start_serving(controllers: bool, extra: Vec<drydock_api::ResourceDef>) -> Self {
        Self::start_with(controllers, extra, Clock::system()).await
    }

    /// Like [`Env::start`] with controllers, serving the versions `--runtime-config` names.
    pub async fn start_with_runtime_config(config: &[&str]) -> Self {
        let rc = drydock::runtime_config::RuntimeConfig::parse(config).expect("runtime config");
        Self::start_opts(true, Vec::new(), Clock::system(), rc).await
    }

    async fn start_with(controllers: bool, extra: Vec<drydock_api::ResourceDef>, clock: Clock) -> Self {
        Self::start_opts(controllers, extra, clock, Default::default()).await
    }

    async fn start_opts(
        controllers: bool,
        extra: Vec<drydock_api::ResourceDef>,
        clock: Clock,
        runtime_config: drydock::runtime_config::RuntimeConfig,
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = Options {
            server: Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() },
            controllers,
            extra_resources: extra,
            settings: Settings { clock: clock.clone(), ..Settings::default() },
            runtime_config,
            ..Options::default()
        };
        let mut instance = Instance::start(opts).await.expect("start drydock");
        instance.spawn_serve().expect("serve");
        Self { instance, dir, clock }
    }

    pub fn client(&self) -> kube::Client {
        self.instance.server.client(None)
    }

    /// A kubeconfig for the root cluster (or a logical cluster).
    pub fn kubeconfig(&self, cluster: Option<&str>) -> PathBuf {
        let server = match cluster {
            Some(c) => format!("{}{}", self.instance.url(), LogicalClusterName::new(c).path()),
            None => self.instance.url(),
        };
        let path = self.dir.path().join(format!("kubeconfig-{}", cluster.unwrap_or("root")));
        drydock::kubeconfig::write(&path, &self.instance.kubeconfig(&server, "test")).expect("kubeconfig");
        path
    }
}

/// The versioned kubectl binaries sit beside the real path of `kubectl`.
pub fn kubectl_bin(version: &str) -> PathBuf {
    let out = Command::new("sh").args(["-c", "readlink -f \"$(command -v kubectl)\""]).output().expect("sh");
    let real = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!real.is_empty(), "kubectl is not on PATH");
    Path::new(&real).parent().expect("dir").join(format!("kubectl.{version}"))
}

/// Runs kubectl; returns (success, stdout, stderr).
pub fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let cache = kubeconfig.with_extension("cache");
    let mut c = Command::new(kubectl_bin("1.33"));
    c.arg("--kubeconfig").arg(kubeconfig).arg("--cache-dir").arg(&cache).args(args);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn kubectl");
    let mut pipe = child.stdin.take().expect("stdin");
    if let Some(input) = stdin {
        // kubectl may exit before reading everything (it reports why on stderr).
        let _ = pipe.write_all(input.as_bytes());
    }
    drop(pipe);
    let out = child.wait_with_output().expect("kubectl");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Runs kubectl and panics with its output unless it succeeds.
pub fn kubectl_ok(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let (ok, out, err) = kubectl(kubeconfig, args, stdin);
    assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
    out
}

/// Polls `f` until it returns Some or the deadline passes (then panics naming `what`).
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (up to `timeout`) until what `read` returns stays the same for half a second, and
/// returns it: the baseline of an idle check, taken once the last writes of what the test
/// just caused have landed.
pub async fn quiet<T, F, Fut>(what: &str, timeout: Duration, mut read: F) -> T
where
    T: PartialEq,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last = read().await;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = read().await;
        if now == last {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        last = now;
    }
}

pub const SAMPLE: &str = include_str!("../data/cluster-in-memory.yaml");

/// `drydock generate cluster NAME --startup-duration 0s ARGS...` without its
/// MachineHealthCheck (tests that mark Machines themselves want no check racing them).
pub fn generated_cluster(name: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["generate", "cluster", name, "--startup-duration", "0s"])
        .args(args)
        .output()
        .expect("drydock generate");
    assert!(out.status.success(), "generate failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split("\n---\n")
        .filter(|doc| !doc.contains("kind: MachineHealthCheck"))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The first documents of a hand-written cluster manifest: a Cluster `name` in `ns` on an
/// InMemoryCluster of the same name, its control plane the KubeadmControlPlane
/// `<name>-cp`. Tests append the control plane and workers they need.
pub fn cluster_preamble(name: &str, ns: &str) -> String {
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {{name: {name}, namespace: {ns}}}
spec:
  clusterNetwork: {{pods: {{cidrBlocks: ["192.168.0.0/16"]}}}}
  infrastructureRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: InMemoryCluster, name: {name}}}
  controlPlaneRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: {name}-cp}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryCluster
metadata: {{name: {name}, namespace: {ns}}}
spec: {{}}
"#
    )
}

/// Controller logs on demand: DRYDOCK_TEST_LOG=debug (or warn, ...).
pub fn logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("DRYDOCK_TEST_LOG"))
        .with_test_writer()
        .try_init();
}

/// A drydock process, killed when dropped unless it already exited: a failing test
/// leaves no server behind.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl std::ops::Deref for Process {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Process {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// Starts `drydock up` as a separate process on `dir`, listening on `listen`
/// (`127.0.0.1:0` for any port). A stale kubeconfig is removed first, so that waiting for
/// the file waits for this process.
pub fn spawn_drydock(dir: &Path, listen: &str) -> Process {
    spawn_drydock_with(dir, listen, &[])
}

/// [`spawn_drydock`] with more `drydock up` flags.
pub fn spawn_drydock_with(dir: &Path, listen: &str, flags: &[&str]) -> Process {
    let _ = std::fs::remove_file(dir.join("kubeconfig"));
    Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["up", "--listen", listen])
        .args(flags)
        .arg("--data-dir")
        .arg(dir)
        .env("DRYDOCK_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map(Process)
        .expect("spawn drydock")
}

/// The kubeconfig `drydock up` writes into `dir`, once the server it names answers.
pub async fn kubeconfig_of(dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    eventually("drydock to listen", Duration::from_secs(60), || {
        let ok = path.exists() && kubectl(&path, &["get", "ns", "default"], None).0;
        async move { ok.then_some(()) }
    })
    .await;
    path
}

/// [`kubeconfig_of`] for the `drydock up` process serving from `dir`, failing at once (with
/// its exit status; its error is on stderr) if the process exits instead of listening.
pub async fn kubeconfig_of_process(process: &mut Process, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    eventually("drydock to listen", Duration::from_secs(60), || {
        if let Ok(Some(status)) = process.try_wait() {
            panic!("drydock up exited before it listened: {status}");
        }
        let ok = path.exists() && kubectl(&path, &["get", "ns", "default"], None).0;
        async move { ok.then_some(()) }
    })
    .await;
    path
}

/// `drydock generate cluster` output for `count` clusters, the i-th named `name(i)`, with
/// `workers` worker machines each and instant startup, as one manifest.
pub fn generated_fleet(count: usize, workers: u32, name: impl Fn(usize) -> String) -> String {
    let mut manifest = String::new();
    for i in 0..count {
        let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["generate", "cluster", &name(i), "--worker-machine-count", &workers.to_string()])
            .args(["--startup-duration", "0s"])
            .output()
            .expect("generate");
        manifest.push_str(&String::from_utf8_lossy(&out.stdout));
        manifest.push_str("---\n");
    }
    manifest
}

/// An InMemoryMachineTemplate `name` in `ns` whose VMs take `vm_startup` to come up and
/// whose Node, API server and etcd then come up at once.
pub fn machine_template(name: &str, ns: &str, vm_startup: &str) -> String {
    format!(
        r#"apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: InMemoryMachineTemplate
metadata: {{name: {name}, namespace: {ns}}}
spec:
  template:
    spec:
      behaviour:
        vm: {{provisioning: {{startupDuration: "{vm_startup}"}}}}
        node: {{provisioning: {{startupDuration: "0s"}}}}
        apiServer: {{provisioning: {{startupDuration: "0s"}}}}
        etcd: {{provisioning: {{startupDuration: "0s"}}}}
"#
    )
}

/// A TCP port free on localhost right now.
/// A loopback port free now and never handed out before by this test process: the kernel
/// may give a just-released port to the next caller, and two processes told the same port
/// would race for it.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let mut given = GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The client configuration of the kubeconfig the drydock process serving from the data
/// dir `dir` writes there, once it answers.
pub async fn process_config(dir: &Path) -> kube::Config {
    let kc = kubeconfig_of(dir).await;
    let kc = kube::config::Kubeconfig::read_from(&kc).expect("kubeconfig");
    kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.expect("config")
}

/// A client of the drydock process serving from the data dir `dir`, once it answers.
pub async fn process_client(dir: &Path) -> kube::Client {
    let client = kube::Client::try_from(process_config(dir).await).expect("client");
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    eventually("drydock answering", Duration::from_secs(60), || async {
        ns.get_opt("default").await.ok()?.map(|_| ())
    })
    .await;
    client
}

/// The KubeadmControlPlane `<cluster>-cp` in `ns`: `replicas` Machines at `version` on the
/// InMemoryMachineTemplate `template`, `kubeadm_config` its kubeadmConfigSpec (a YAML flow
/// mapping), and `extra` more lines of its spec (indented by two spaces).
pub fn control_plane(
    cluster: &str,
    ns: &str,
    (replicas, version): (u8, &str),
    template: &str,
    kubeadm_config: &str,
    extra: &str,
) -> String {
    format!(
        r#"apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {{name: {cluster}-cp, namespace: {ns}}}
spec:
  replicas: {replicas}
  version: {version}
  machineTemplate:
    infrastructureRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: InMemoryMachineTemplate, name: {template}}}
  kubeadmConfigSpec: {kubeadm_config}
{extra}"#
    )
}

/// The workers of `cluster` in `ns`: a KubeadmConfigTemplate and a MachineDeployment, both
/// `<cluster>-workers`, of `replicas` Machines at v1.30.2 on the InMemoryMachineTemplate
/// `template`. `labels` (a YAML flow mapping, or empty) label the Machines; `machine` holds
/// more lines of the Machines' spec (indented by six spaces).
pub fn workers(cluster: &str, ns: &str, replicas: u32, template: &str, labels: &str, machine: &str) -> String {
    let metadata = if labels.is_empty() { String::new() } else { format!("    metadata: {{labels: {labels}}}\n") };
    format!(
        r#"apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {{name: {cluster}-workers, namespace: {ns}}}
spec: {{template: {{spec: {{joinConfiguration: {{}}}}}}}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {{name: {cluster}-workers, namespace: {ns}}}
spec:
  clusterName: {cluster}
  replicas: {replicas}
  template:
{metadata}    spec:
      clusterName: {cluster}
      version: v1.30.2
{machine}      bootstrap:
        configRef: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: {cluster}-workers}}
      infrastructureRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: InMemoryMachineTemplate, name: {template}}}
"#
    )
}

/// The smallest kubeadmConfigSpec of a [`control_plane`].
pub const KUBEADM: &str = "{initConfiguration: {}, joinConfiguration: {}}";

/// A MachineHealthCheck `name` in `ns` for `cluster`'s Machines matching `labels` (a YAML
/// flow mapping), `spec` holding more lines of its spec (indented by two spaces).
pub fn health_check(name: &str, cluster: &str, ns: &str, labels: &str, spec: &str) -> String {
    format!(
        r#"apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
metadata: {{name: {name}, namespace: {ns}}}
spec:
  clusterName: {cluster}
  selector: {{matchLabels: {labels}}}
{spec}"#
    )
}

/// The condition `type_` of an object's `status.conditions` (Null when it has none).
pub fn condition(obj: &Value, type_: &str) -> Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

/// `kubectl ARGS -o json`, parsed (Null when the output is not JSON).
pub fn json(kc: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&kubectl_ok(kc, &a, None)).unwrap_or(Value::Null)
}

/// The v1beta1 resource for what a user types (`kcp`, `md/NAME`, `cluster`...): a plain
/// name gets the preferred version, v1beta2, so tests of v1beta1 fields name v1beta1.
pub fn v1beta1(what: &str) -> String {
    let (kind, name) = what.split_once('/').map_or((what, None), |(k, n)| (k, Some(n)));
    let resource = match kind {
        "cluster" | "clusters" => "clusters.v1beta1.cluster.x-k8s.io",
        "machine" | "machines" => "machines.v1beta1.cluster.x-k8s.io",
        "md" | "machinedeployment" | "machinedeployments" => "machinedeployments.v1beta1.cluster.x-k8s.io",
        "ms" | "machineset" | "machinesets" => "machinesets.v1beta1.cluster.x-k8s.io",
        "mhc" | "machinehealthcheck" | "machinehealthchecks" => "machinehealthchecks.v1beta1.cluster.x-k8s.io",
        "kcp" | "kubeadmcontrolplane" | "kubeadmcontrolplanes" => {
            "kubeadmcontrolplanes.v1beta1.controlplane.cluster.x-k8s.io"
        }
        "kubeadmconfig" | "kubeadmconfigs" => "kubeadmconfigs.v1beta1.bootstrap.cluster.x-k8s.io",
        other => panic!("no v1beta1 resource known for {other:?}"),
    };
    name.map_or_else(|| resource.to_string(), |n| format!("{resource}/{n}"))
}

/// Machines of a cluster: name → phase.
pub fn machines(kc: &Path, cluster: &str) -> HashMap<String, String> {
    let v = json(kc, &["get", "machines", "-l", &format!("cluster.x-k8s.io/cluster-name={cluster}")]);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                m["status"]["phase"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// How many Machines of a cluster are Running.
pub fn running(kc: &Path, cluster: &str) -> usize {
    machines(kc, cluster).values().filter(|p| *p == "Running").count()
}

/// Ready nodes listed by kubectl through the workload cluster's own kubeconfig.
pub fn ready_nodes(workload_kc: &Path) -> usize {
    let (ok, out, _) = kubectl(workload_kc, &["get", "nodes", "-o", "json"], None);
    if !ok {
        return 0;
    }
    let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| {
            n["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
        })
        .count()
}

/// The workload cluster's kubeconfig, from its `<cluster>-kubeconfig` Secret, written to a
/// file of the test's data dir.
pub fn workload_kubeconfig(env: &Env, kc: &Path, cluster: &str) -> PathBuf {
    let secret = json(kc, &["get", "secret", &format!("{cluster}-kubeconfig")]);
    let data = secret["data"]["value"].as_str().expect("kubeconfig secret value");
    let text = String::from_utf8(base64_decode(data)).expect("utf-8");
    let path = env.dir.path().join(format!("{cluster}.kubeconfig"));
    std::fs::write(&path, text).expect("write kubeconfig");
    path
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).expect("base64")
}

/// Polls a blocking check (kubectl) until it holds or the deadline passes.
pub async fn wait<F: FnMut() -> bool>(what: &str, timeout: Duration, mut f: F) {
    eventually(what, timeout, || {
        let ok = tokio::task::block_in_place(&mut f);
        async move { ok.then_some(()) }
    })
    .await;
}

/// [`wait`], reporting what `report` says when the deadline passes.
pub async fn wait_or_report<F: FnMut() -> bool>(what: &str, timeout: Duration, mut f: F, report: impl Fn() -> String) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !tokio::task::block_in_place(&mut f) {
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}:\n{}", tokio::task::block_in_place(report));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The Machines that are not Running, with the conditions not True of each and of its
/// bootstrap config and infrastructure: what a timed-out wait for Machines reports.
pub fn machines_not_running(kc: &Path) -> String {
    let conditions = |o: &Value| {
        o["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["status"] != "True")
            .map(|c| format!("{}={} {} {}", c["type"], c["status"], c["reason"], c["message"]))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut report = String::new();
    for m in json(kc, &["get", "machines"])["items"].as_array().into_iter().flatten() {
        if m["status"]["phase"] == "Running" {
            continue;
        }
        let name = m["metadata"]["name"].as_str().unwrap_or_default();
        report.push_str(&format!("machine {name} {}: {}\n", m["status"]["phase"], conditions(m)));
        for r in [&m["spec"]["bootstrap"]["configRef"], &m["spec"]["infrastructureRef"]] {
            let kind = r["kind"].as_str().unwrap_or_default().to_lowercase();
            let of = r["name"].as_str().unwrap_or_default();
            let (ok, out, err) = kubectl(kc, &["get", &kind, of, "-o", "json"], None);
            let o: Value = serde_json::from_str(&out).unwrap_or_default();
            report.push_str(&format!("  {kind}: {}\n", if ok { conditions(&o) } else { err }));
        }
    }
    report
}

/// The value of every sample of `metric` in a Prometheus text exposition, summed.
pub fn total(exposition: &str, metric: &str) -> f64 {
    exposition
        .lines()
        .filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Where Prometheus metrics are read: a plain HTTP port (the controllers' own metrics
/// server) or an API server through a kubeconfig (`/metrics` needs credentials).
pub trait Metrics {
    fn try_scrape(&self) -> Option<String>;
}

impl Metrics for u16 {
    fn try_scrape(&self) -> Option<String> {
        let mut conn = TcpStream::connect(("127.0.0.1", *self)).ok()?;
        conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
        let mut answer = String::new();
        conn.read_to_string(&mut answer).ok()?;
        let (head, body) = answer.split_once("\r\n\r\n")?;
        (head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200")).then(|| body.to_string())
    }
}

impl Metrics for PathBuf {
    fn try_scrape(&self) -> Option<String> {
        let (ok, out, _) = kubectl(self, &["get", "--raw", "/metrics"], None);
        ok.then_some(out)
    }
}

pub fn scrape(at: &impl Metrics) -> String {
    at.try_scrape().unwrap_or_else(|| panic!("no metrics answer"))
}

/// Whether the controllers whose metrics are served `at` hold the leader election Lease
/// (`None` while nothing answers there).
pub fn leads(at: &impl Metrics) -> Option<bool> {
    let m = at.try_scrape()?;
    m.lines()
        .any(|l| l.starts_with("leader_election_master_status{"))
        .then(|| total(&m, "leader_election_master_status") == 1.0)
}

/// Waits until exactly one of the two processes whose metrics are served `at` leads;
/// returns which.
pub async fn one_leader(at: [&impl Metrics; 2]) -> usize {
    let mut leader = 0;
    wait("one to lead and the other to stand by", Duration::from_secs(60), || match (leads(at[0]), leads(at[1])) {
        (Some(a), Some(b)) if a != b => {
            leader = if a { 0 } else { 1 };
            true
        }
        _ => false,
    })
    .await;
    leader
}
