//! Compiles the Kubernetes 1.33 `.proto` files shipped in the `k8s-rs-pb` package into one
//! descriptor set that the server embeds for its protobuf codec. Only the package's `.proto`
//! sources are used: its generated reflection code lists each file as its own dependency and
//! deadlocks on first use.

use std::path::{Path, PathBuf};
use std::process::Command;

use protobuf::Message as _;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let root = package_dir("k8s-rs-pb").join("src").join("v1_33");
    let mut inputs = Vec::new();
    collect(&root, &mut inputs);
    inputs.retain(|p| !p.to_string_lossy().contains("testapigroup"));
    inputs.sort();
    assert!(!inputs.is_empty(), "no .proto files under {}", root.display());
    let set = protobuf_parse::Parser::new()
        .pure()
        .include(&root)
        .inputs(&inputs)
        .file_descriptor_set()
        .unwrap_or_else(|e| panic!("parsing the Kubernetes .proto files: {e:#}"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("kubernetes-1.33.fds");
    std::fs::write(&out, set.write_to_bytes().expect("encode descriptor set")).expect("write descriptor set");
}

/// The source directory of a package of this build, from `cargo metadata`.
///
/// Offline first: the package is a dependency, so cargo has it. But `cargo metadata` wants
/// every package of the lock file, and a build of one binary only fetches what that build
/// needs (not, say, the test dependencies); then it is asked again, allowed to fetch them.
fn package_dir(name: &str) -> PathBuf {
    let meta = cargo_metadata(true).or_else(|offline| {
        cargo_metadata(false).map_err(|online| format!("{offline}\nand then, allowed to fetch: {online}"))
    });
    let meta = meta.unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    let pkg = meta["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("package {name} is not in the build"));
    let path = pkg["manifest_path"].as_str().expect("manifest_path");
    Path::new(path).parent().expect("package dir").to_path_buf()
}

fn cargo_metadata(offline: bool) -> Result<serde_json::Value, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut cmd = Command::new(cargo);
    cmd.args(["metadata", "--format-version", "1", "--manifest-path"]).arg(&manifest);
    if let Ok(target) = std::env::var("TARGET") {
        cmd.args(["--filter-platform", &target]);
    }
    if offline {
        cmd.arg("--offline");
    }
    let out = cmd.output().map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("reading its output: {e}"))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read proto dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}
