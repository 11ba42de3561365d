//! Real etcd clusters on loopback for the tests of the etcd store (Debian's `etcd-server`
//! package; `.ci/run` installs it).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
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
        let dir = tempfile::tempdir().expect("tempdir");
        let peers: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let clients: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let initial: Vec<String> =
            peers.iter().enumerate().map(|(i, p)| format!("m{i}=http://127.0.0.1:{p}")).collect();
        let members =
            (0..n).map(|i| Some(spawn_member(dir.path(), i, peers[i], clients[i], &initial.join(",")))).collect();
        let cluster = Self { members, clients: clients.iter().map(|c| format!("127.0.0.1:{c}")).collect(), _dir: dir };
        for url in &cluster.clients {
            eventually("etcd member healthy", Duration::from_secs(30), || {
                let ok = healthy(url);
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

fn spawn_member(dir: &Path, i: usize, peer: u16, client: u16, initial: &str) -> Process {
    let etcd = which_etcd();
    let log = std::fs::File::create(dir.join(format!("m{i}.log"))).expect("etcd log file");
    Command::new(etcd)
        .args(["--name", &format!("m{i}")])
        .arg("--data-dir")
        .arg(dir.join(format!("m{i}")))
        .args(["--listen-client-urls", &format!("http://127.0.0.1:{client}")])
        .args(["--advertise-client-urls", &format!("http://127.0.0.1:{client}")])
        .args(["--listen-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-cluster", initial, "--initial-cluster-state", "new"])
        .args(["--initial-cluster-token", "drydock-test", "--logger", "zap", "--log-level", "warn"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map(Process)
        .expect("spawn etcd")
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

/// Whether the member at `host:port` answers `/health` with a leader.
fn healthy(addr: &str) -> bool {
    let Ok(mut conn) = TcpStream::connect(addr) else { return false };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    if conn.write_all(b"GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}
