//! The disk filling up under `drydock up`: the data dir is a small tmpfs in a private mount
//! namespace, filled until commits fail. No write that failed is ever served (by get or
//! list, then or after a restart), the server says why (the write's Status and /readyz),
//! and after space is freed and drydock restarted every acknowledged write is there.
//!
//! Needs root and `unshare`/`nsenter` (util-linux); fails, rather than skips, without them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

/// tmpfs size, and the room left beside the filler file once the server is up.
const TMPFS_SIZE: &str = "16m";
const LEFT_FREE: u64 = 512 * 1024;
/// Each ConfigMap carries this much data, so the room runs out within a few dozen writes.
const VALUE_SIZE: usize = 16 * 1024;
const WRITERS: usize = 4;

/// A process in its own mount namespace (private propagation) that lives until dropped;
/// the tmpfs mounted there is seen by the processes started in it and nowhere else.
struct MountNamespace {
    holder: Child,
}

impl MountNamespace {
    fn new() -> Self {
        let holder = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sleep", "3600"])
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("this test needs `unshare` (util-linux) and root: {e}"));
        let mut ns = Self { holder };
        let mine = std::fs::read_link("/proc/self/ns/mnt").expect("own mount namespace");
        let theirs = format!("/proc/{}/ns/mnt", ns.holder.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        // Wait until unshare has moved itself into the new namespace (then it runs sleep).
        while std::fs::read_link(&theirs).ok().is_none_or(|l| l == mine) {
            if let Some(status) = ns.holder.try_wait().expect("unshare status") {
                panic!("`unshare -m` failed ({status}): this test needs root (CAP_SYS_ADMIN)");
            }
            assert!(Instant::now() < deadline, "unshare did not create a mount namespace");
            std::thread::sleep(Duration::from_millis(10));
        }
        ns
    }

    /// `nsenter` into the namespace, running `program args`.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("nsenter");
        c.arg("-t").arg(self.holder.id().to_string()).arg("-m").arg(program);
        c
    }

    /// Runs a command in the namespace and returns its stdout; panics unless it succeeds.
    fn run(&self, program: &str, args: &[&str]) -> String {
        let out = self
            .command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("this test needs `nsenter` (util-linux): {e}"));
        assert!(out.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Free bytes on the file system holding `dir`, as the namespace sees it.
    fn available(&self, dir: &Path) -> u64 {
        let out = self.run("df", &["-B1", "--output=avail", &dir.to_string_lossy()]);
        out.lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("df output: {out}"))
    }
}

impl Drop for MountNamespace {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// `drydock up` in the namespace; killed when dropped.
struct Drydock {
    child: Child,
    addr: SocketAddr,
}

impl Drydock {
    fn start(ns: &MountNamespace, data_dir: &Path) -> Self {
        // A free port: drydock's kubeconfig lands inside the namespace, out of our sight.
        let addr = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port");
        let child = ns
            .command(env!("CARGO_BIN_EXE_drydock"))
            .args(["up", "--plain-http", "--listen", &addr.to_string(), "--data-dir"])
            .arg(data_dir)
            .env("DRYDOCK_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn drydock");
        let mut d = Self { child, addr };
        let deadline = Instant::now() + Duration::from_secs(60);
        while get(d.addr, "/readyz").is_none() {
            assert!(d.child.try_wait().expect("drydock status").is_none(), "drydock exited while starting");
            assert!(Instant::now() < deadline, "drydock did not start listening");
            std::thread::sleep(Duration::from_millis(50));
        }
        d
    }

    fn client(&self) -> Api<ConfigMap> {
        let config = kube::Config::new(format!("http://{}", self.addr).parse().expect("url"));
        Api::namespaced(kube::Client::try_from(config).expect("client"), "default")
    }

    /// SIGTERM, then SIGKILL if it has not exited within a deadline.
    fn stop(mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().expect("drydock status").is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
    }
}

impl Drop for Drydock {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A plain HTTP GET: (status code, body), or None when nothing answers.
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let code = resp.split_whitespace().nth(1)?.parse().ok()?;
    let body = resp.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    Some((code, body))
}

fn cm(name: &str) -> ConfigMap {
    let filler = "x".repeat(VALUE_SIZE);
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"filler": filler}})).expect("configmap")
}

/// What the writers saw: acknowledged (name, resourceVersion) and failed (name, message).
#[derive(Default)]
struct Outcome {
    acked: Vec<(String, String)>,
    failed: Vec<(String, String)>,
}

/// Writers create ConfigMaps until each has had a write refused.
async fn write_until_full(api: &Api<ConfigMap>) -> Outcome {
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let mut out = Outcome::default();
            for i in 0..5_000 {
                let name = format!("w{w}-{i}");
                match api.create(&PostParams::default(), &cm(&name)).await {
                    Ok(c) => out.acked.push((name, c.resource_version().expect("rv"))),
                    Err(kube::Error::Api(s)) => {
                        out.failed.push((name, s.message));
                        break;
                    }
                    Err(e) => panic!("create {name}: {e}"),
                }
            }
            out
        }));
    }
    let mut all = Outcome::default();
    for t in tasks {
        let out = t.await.expect("writer");
        all.acked.extend(out.acked);
        all.failed.extend(out.failed);
    }
    all
}

fn served(list: &[ConfigMap]) -> std::collections::HashMap<String, String> {
    list.iter().map(|c| (c.name_any(), c.resource_version().unwrap_or_default())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_serves_nothing_that_failed_and_loses_nothing_acknowledged() {
    let ns = MountNamespace::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt: PathBuf = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let size = format!("size={TMPFS_SIZE}");
    ns.run("mount", &["-t", "tmpfs", "-o", &size, "tmpfs", &mnt.to_string_lossy()]);
    let data = mnt.join("data");
    let filler = mnt.join("filler");

    let server = Drydock::start(&ns, &data);
    let api = server.client();
    let room = ns.available(&mnt);
    assert!(room > LEFT_FREE, "tmpfs has only {room} bytes free");
    ns.run("fallocate", &["-l", &(room - LEFT_FREE).to_string(), &filler.to_string_lossy()]);

    let outcome = write_until_full(&api).await;
    assert!(!outcome.acked.is_empty(), "no write was acknowledged before the disk filled");
    assert_eq!(outcome.failed.len(), WRITERS, "every writer ends on a refused write");
    for (name, message) in &outcome.failed {
        assert!(message.contains("read-only") && message.contains("restart"), "{name}: {message}");
    }
    assert!(
        outcome.failed.iter().any(|(_, m)| m.contains("disk is full")),
        "no refusal names the cause: {:?}",
        outcome.failed
    );

    // Nothing that failed is served; everything acknowledged is.
    let listed = served(&api.list(&ListParams::default()).await.expect("list while read-only").items);
    for (name, _) in &outcome.failed {
        assert!(api.get_opt(name).await.expect("get while read-only").is_none(), "failed write {name} is served");
        assert!(!listed.contains_key(name), "failed write {name} is listed");
    }
    for (name, rv) in &outcome.acked {
        assert_eq!(listed.get(name), Some(rv), "acknowledged {name}@{rv} not served");
    }
    let (code, text) = get(server.addr, "/readyz?verbose").expect("readyz");
    assert_eq!(code, 500, "{text}");
    assert!(text.contains("[-]storage failed: ") && text.contains("disk is full"), "{text}");
    let err = api.create(&PostParams::default(), &cm("after")).await.expect_err("writes are refused");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 500 && s.message.contains("read-only")), "{err:?}");

    server.stop();
    ns.run("rm", &[&filler.to_string_lossy()]);
    let server = Drydock::start(&ns, &data);
    let api = server.client();
    assert_eq!(get(server.addr, "/readyz"), Some((200, "ok".into())));
    let listed = served(&api.list(&ListParams::default()).await.expect("list after restart").items);
    for (name, rv) in &outcome.acked {
        assert_eq!(listed.get(name), Some(rv), "acknowledged {name}@{rv} lost across the restart");
    }
    for (name, _) in &outcome.failed {
        assert!(!listed.contains_key(name), "failed write {name} came back after the restart");
    }
    api.create(&PostParams::default(), &cm("after")).await.expect("writes are accepted again");
    server.stop();
}
