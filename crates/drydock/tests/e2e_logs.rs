//! `drydock up`'s logs, read from the real binary's stderr redirected to a file: startup
//! lines at info, request and reconcile lines at debug (`RUST_LOG` overriding
//! `--log-level`), `--log-level warn` hiding info, JSON lines with `--log-format json`,
//! and no colour escapes when stderr is not a terminal.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{cluster_preamble, eventually, kubectl, kubectl_ok};

const WAIT: Duration = Duration::from_secs(60);

/// A `drydock up` process on a temporary data dir whose stderr goes to a file.
struct Drydock {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drydock {
    /// Starts `drydock up ARGS` with only the log variables in `env` set.
    fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let stderr = std::fs::File::create(dir.path().join("stderr.log")).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("DRYDOCK_LOG")
            .env_remove("NO_COLOR")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn drydock");
        Self { child, dir }
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("data").join("kubeconfig")
    }

    /// The complete lines written so far (a line being written is left out).
    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default();
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete.lines().map(str::to_string).collect()
    }

    /// Waits for a line matching `matches` and returns it.
    async fn line(&self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        eventually(what, WAIT, || async { self.lines().into_iter().find(|l| matches(l)) }).await
    }

    /// Waits until the server answers kubectl.
    async fn answering(&self) {
        let kc = self.kubeconfig();
        eventually("drydock answering kubectl", WAIT, || async {
            let (ok, _, _) = kubectl(&kc, &["get", "namespace", "default"], None);
            ok.then_some(())
        })
        .await;
    }
}

impl Drop for Drydock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn has(line: &str, parts: &[&str]) -> bool {
    parts.iter().all(|p| line.contains(p))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_log_debug_shows_requests_watches_and_reconciles() {
    // RUST_LOG wins over --log-level.
    let d = Drydock::start(&["--log-level", "warn"], &[("RUST_LOG", "debug")]);
    d.line("the listening line", |l| l.contains("drydock API server listening")).await;
    let kc = d.kubeconfig();
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&cluster_preamble("logs", "default")));

    let create = d
        .line("the Cluster's create request", |l| {
            has(l, &["DEBUG", "drydock_apiserver::http::access", "request", "method=POST", "status=201"])
                && l.contains("path=\"/apis/cluster.x-k8s.io/v1beta1/namespaces/default/clusters?")
        })
        .await;
    assert!(has(&create, &["verb=\"POST\"", "cluster=root", "user_agent=\"kubectl", "latency="]), "{create}");
    d.line("a request answered 404", |l| has(l, &["drydock_apiserver::http::access", "status=404"])).await;
    d.line("an informer's watch", |l| has(l, &["watch started", "verb=\"WATCH\"", "watch=true"])).await;

    let started = |l: &str| has(l, &["reconcile started", "controller=\"cluster\"", "object=default/logs"]);
    d.line("a Cluster reconcile starting", started).await;
    let finished = d
        .line("a Cluster reconcile finishing", |l| {
            has(l, &["reconcile finished", "controller=\"cluster\"", "object=default/logs", "outcome=", "duration="])
        })
        .await;
    assert!(finished.contains("requeue_after="), "{finished}");
    let event = d
        .line("the Cluster's event logged", |l| {
            has(l, &["drydock_controllers::framework::events", "kind=\"Cluster\"", "object=default/logs", "reason="])
        })
        .await;
    assert!(event.contains(" INFO ") || event.contains(" WARN "), "{event}");

    // A watch the server ends is logged when it starts and when it ends.
    // (kubectl sorts the query.)
    let path = "/api/v1/namespaces/default/configmaps?timeoutSeconds=1&watch=true";
    kubectl_ok(&kc, &["get", "--raw", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1"], None);
    d.line("the raw watch ending", |l| has(l, &["watch ended", path, "duration="])).await;
    d.line("the raw watch starting", |l| has(l, &["watch started", path, "user_agent=\"kubectl"])).await;

    let lines = d.lines();
    assert!(lines.iter().all(|l| !l.contains("\x1b[")), "colour escapes written to a file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_level_logs_startup_at_info_without_colour() {
    let d = Drydock::start(&[], &[]);
    d.line("the listening line", |l| has(l, &[" INFO ", "drydock API server listening", "addr=127.0.0.1:"])).await;
    d.answering().await;
    let lines = d.lines();
    let find = |parts: &[&str]| {
        lines
            .iter()
            .find(|l| has(l, parts))
            .unwrap_or_else(|| panic!("no line with {parts:?} in:\n{}", lines.join("\n")))
    };
    find(&[" INFO ", "starting drydock", "version=", "data_dir=", "listen=127.0.0.1:0"]);
    find(&[" INFO ", "store loaded", "revision=", "objects="]);
    find(&[" INFO ", "controllers started", "controllers="]);
    assert!(lines.iter().all(|l| !l.contains("DEBUG")), "debug lines at the default level:\n{}", lines.join("\n"));
    assert!(lines.iter().all(|l| !l.contains("\x1b[")), "colour escapes written to a file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_level_warn_hides_info() {
    let d = Drydock::start(&["--log-level", "warn"], &[]);
    d.answering().await;
    // "starting drydock" and the listening line are written before the kubeconfig is.
    let lines = d.lines();
    assert!(
        lines.iter().all(|l| !l.contains(" INFO ") && !l.contains("DEBUG")),
        "info or debug lines at --log-level warn:\n{}",
        lines.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_format_writes_one_object_per_line_and_log_level_debug_is_drydocks() {
    let d = Drydock::start(&["--log-format", "json", "--log-level", "debug"], &[]);
    d.line("the listening line", |l| l.contains("drydock API server listening")).await;
    let kc = d.kubeconfig();
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&cluster_preamble("logs", "default")));
    let finished = ["reconcile finished", "\"controller\":\"cluster\"", "\"object\":\"default/logs\""];
    d.line("a Cluster reconcile finishing", |l| has(l, &finished)).await;
    d.line("a line inside a reconcile span", |l| has(l, &["\"spans\":[", "\"name\":\"reconcile\""])).await;

    let lines = d.lines();
    assert!(!lines.is_empty());
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["timestamp"].is_string(), "{line}");
        assert!(["ERROR", "WARN", "INFO", "DEBUG", "TRACE"].contains(&v["level"].as_str().unwrap_or("")), "{line}");
        assert!(v["target"].as_str().is_some_and(|t| !t.is_empty()), "{line}");
        assert!(v["fields"].is_object(), "{line}");
        // --log-level debug is drydock's debug: libraries stay at warn.
        let target = v["target"].as_str().unwrap_or("");
        assert!(
            target.starts_with("drydock") || ["WARN", "ERROR"].contains(&v["level"].as_str().unwrap_or("")),
            "{line}"
        );
    }
    let request = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["target"] == "drydock_apiserver::http::access" && v["fields"]["method"] == "POST")
        .expect("a request line");
    assert_eq!(request["level"], "DEBUG");
    assert_eq!(request["fields"]["status"], 201);
    assert!(request["fields"]["path"].as_str().is_some_and(|p| p.contains("/clusters?")), "{request}");
    let reconcile = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["fields"]["message"] == "reconcile finished" && v["fields"]["controller"] == "cluster")
        .expect("a reconcile line");
    assert_eq!(reconcile["fields"]["object"], "default/logs");
    assert!(reconcile["fields"]["outcome"].is_string(), "{reconcile}");
}

#[test]
fn an_invalid_rust_log_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("RUST_LOG", "drydock=loud")
        .output()
        .expect("drydock up");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("RUST_LOG=\"drydock=loud\" is not a valid log filter"), "{stderr}");
    assert!(!dir.path().join("kubeconfig").exists(), "started anyway");
}

/// Runs `drydock up` on a terminal (`script` gives it one) with a data dir that is a file,
/// so that it logs its first line and exits; returns what the terminal showed.
fn on_a_terminal(no_color: Option<&str>) -> String {
    // `script` (util-linux, in Debian's essential bsdutils) gives the process a terminal.
    Command::new("script").arg("--version").output().expect("`script` from util-linux is needed for this test");
    let dir = tempfile::tempdir().expect("tempdir");
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "").expect("file");
    let shown = dir.path().join("terminal");
    let command =
        format!("{} up --listen 127.0.0.1:0 --data-dir {}", env!("CARGO_BIN_EXE_drydock"), not_a_dir.display());
    let mut script = Command::new("script");
    script.args(["-q", "-e", "-c", &command]).arg(&shown).stdin(Stdio::null()).stdout(Stdio::null());
    script.env_remove("RUST_LOG").env_remove("DRYDOCK_LOG").env_remove("NO_COLOR");
    if let Some(v) = no_color {
        script.env("NO_COLOR", v);
    }
    let mut child = script.spawn().expect("script");
    let deadline = std::time::Instant::now() + WAIT;
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("drydock up on a file as data dir did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&shown).expect("terminal output");
    assert!(text.contains("starting drydock"), "{text}");
    text
}

#[test]
fn colours_on_a_terminal_unless_no_color() {
    let coloured = on_a_terminal(None);
    assert!(coloured.contains("\x1b["), "no colours on a terminal:\n{coloured}");
    let plain = on_a_terminal(Some("1"));
    assert!(!plain.contains("\x1b["), "colours despite NO_COLOR:\n{plain}");
}
