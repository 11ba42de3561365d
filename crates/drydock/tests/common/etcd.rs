//! Real etcd clusters on loopback for the tests of the etcd store (Debian's `etcd-server`
//! package; `.ci/run` installs it).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Process, eventually, free_port};

/// The members of one etcd cluster, each a process on its own loopback ports, killed when
/// dropped.
pub struct EtcdCluster {
    pub members: Vec<Option<Process>>,
    /// Client URLs, `host:port`, in member order.
    pub clients: Vec<String>,
    _dir: tempfile::TempDir,
}

impl EtcdCluster {
    /// Starts `n` members forming one cluster and waits until it has a leader.
    pub async fn start(n: usize) -> Self {
        Self::start_with(n, None).await
    }

    /// [`EtcdCluster::start`] serving clients over TLS only, to clients with a certificate
    /// signed by the CA of `tls`.
    pub async fn start_with(n: usize, tls: Option<&Tls>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let ports = |_| free_port();
        let (peers, clients, metrics): (Vec<u16>, Vec<u16>, Vec<u16>) =
            ((0..n).map(ports).collect(), (0..n).map(ports).collect(), (0..n).map(ports).collect());
        let initial: Vec<String> =
            peers.iter().enumerate().map(|(i, p)| format!("m{i}=http://127.0.0.1:{p}")).collect();
        let members = (0..n)
            .map(|i| {
                let ports = Ports { peer: peers[i], client: clients[i], metrics: metrics[i] };
                Some(spawn_member(dir.path(), i, ports, &initial.join(","), tls))
            })
            .collect();
        let cluster = Self { members, clients: clients.iter().map(|c| format!("127.0.0.1:{c}")).collect(), _dir: dir };
        for port in metrics {
            eventually("etcd member healthy", Duration::from_secs(30), || {
                let ok = healthy(port);
                async move { ok.then_some(()) }
            })
            .await;
        }
        cluster
    }

    /// `etcd://` URL of every member, as `drydock up --store` takes it.
    pub fn store_url(&self) -> String {
        format!("etcd://{}", self.clients.join(","))
    }

    /// SIGKILLs member `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut m) = self.members[i].take() {
            m.kill().expect("SIGKILL etcd member");
            let _ = m.wait();
        }
    }
}

/// A member's loopback ports: raft peers, clients, and plain-HTTP metrics and health.
struct Ports {
    peer: u16,
    client: u16,
    metrics: u16,
}

fn spawn_member(dir: &Path, i: usize, ports: Ports, initial: &str, tls: Option<&Tls>) -> Process {
    let etcd = which_etcd();
    let log = std::fs::File::create(dir.join(format!("m{i}.log"))).expect("etcd log file");
    let Ports { peer, client, metrics } = ports;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut cmd = Command::new(etcd);
    cmd.args(["--name", &format!("m{i}")])
        .arg("--data-dir")
        .arg(dir.join(format!("m{i}")))
        .args(["--listen-client-urls", &format!("{scheme}://127.0.0.1:{client}")])
        .args(["--advertise-client-urls", &format!("{scheme}://127.0.0.1:{client}")])
        .args(["--listen-metrics-urls", &format!("http://127.0.0.1:{metrics}")])
        .args(["--listen-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-cluster", initial, "--initial-cluster-state", "new"])
        .args(["--initial-cluster-token", "drydock-test", "--logger", "zap", "--log-level", "warn"]);
    if let Some(tls) = tls {
        cmd.arg("--cert-file").arg(&tls.server_cert).arg("--key-file").arg(&tls.server_key);
        cmd.arg("--trusted-ca-file").arg(&tls.ca).arg("--client-cert-auth");
    }
    cmd.stdout(Stdio::null()).stderr(log).spawn().map(Process).expect("spawn etcd")
}

/// A CA, a serving certificate for 127.0.0.1 and localhost, and a client certificate,
/// as PEM files in a directory of their own.
pub struct Tls {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tls {
    pub fn generate() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, pem: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, pem).expect("write PEM");
            path
        };
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "etcd-ca");
        let ca = write("ca.crt", ca_params.self_signed(&ca_key).expect("CA").pem());
        let issuer = Issuer::new(ca_params, ca_key);
        let sign = |names: Vec<String>, cn: &str, base: &str| {
            let key = KeyPair::generate().expect("key");
            let mut params = CertificateParams::new(names).expect("params");
            params.distinguished_name.push(DnType::CommonName, cn);
            let cert = params.signed_by(&key, &issuer).expect("signed");
            (write(&format!("{base}.crt"), cert.pem()), write(&format!("{base}.key"), key.serialize_pem()))
        };
        let (server_cert, server_key) = sign(vec!["localhost".into(), "127.0.0.1".into()], "etcd", "server");
        let (client_cert, client_key) = sign(Vec::new(), "drydock", "client");
        Self { ca, server_cert, server_key, client_cert, client_key, _dir: dir }
    }
}

/// The etcd server binary: `etcd` on the PATH, or Debian's.
fn which_etcd() -> String {
    for dir in std::env::var("PATH").unwrap_or_default().split(':').chain(["/usr/bin", "/usr/sbin"]) {
        let p = Path::new(dir).join("etcd");
        if p.is_file() {
            return p.display().to_string();
        }
    }
    panic!("the etcd tests need an etcd server binary on the PATH (Debian: apt-get install etcd-server)")
}

/// Whether the member whose metrics are on loopback `port` answers `/health` with a leader.
fn healthy(port: u16) -> bool {
    let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    if conn.write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}
