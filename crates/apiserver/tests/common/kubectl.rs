//! Running the versioned kubectl binaries (`kubectl.1.NN`, installed beside the real
//! `kubectl`) against a test server.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The directory holding `kubectl.1.NN`, found from the real path of `kubectl`.
pub fn kubectl_dir() -> PathBuf {
    let out = Command::new("sh").args(["-c", "readlink -f \"$(command -v kubectl)\""]).output().expect("sh");
    let real = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        !real.is_empty(),
        "kubectl is not on PATH; the kubectl compatibility tests need the versioned kubectl binaries"
    );
    Path::new(&real).parent().expect("kubectl dir").to_path_buf()
}

pub struct Kubectl {
    pub bin: PathBuf,
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

impl Kubectl {
    pub fn new(version: &str, kubeconfig: PathBuf) -> Self {
        let bin = kubectl_dir().join(format!("kubectl.{version}"));
        assert!(bin.exists(), "{} is missing", bin.display());
        Self { bin, kubeconfig, cache: tempfile::tempdir().expect("tempdir") }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--kubeconfig").arg(&self.kubeconfig).arg("--cache-dir").arg(self.cache.path()).args(args);
        c
    }

    /// Runs kubectl to completion, feeding it `stdin`.
    pub fn output(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        let mut c = self.cmd(args);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn kubectl");
        if let Some(input) = stdin {
            child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
        } else {
            drop(child.stdin.take());
        }
        child.wait_with_output().expect("kubectl output")
    }

    /// Runs kubectl, feeding `stdin`, and returns stdout; panics with stderr on failure.
    pub fn run_in(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.output(args, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{} {args:?} failed:\nstdout: {stdout}\nstderr: {}",
            self.bin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    pub fn run(&self, args: &[&str]) -> String {
        self.run_in(args, None)
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        serde_json::from_str(&self.run(&a)).expect("kubectl -o json output")
    }

    pub fn fails(&self, args: &[&str]) -> String {
        self.fails_in(args, None)
    }

    /// Runs kubectl expecting failure; returns stderr.
    pub fn fails_in(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.output(args, stdin);
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).to_string()
    }

    /// Runs kubectl, which must succeed and print nothing on stderr (no warnings); returns
    /// stdout.
    pub fn clean(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.output(args, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success() && stderr.trim().is_empty(),
            "{} {args:?}: {}\nstdout: {stdout}\nstderr: {stderr}",
            self.bin.display(),
            out.status
        );
        stdout
    }
}
