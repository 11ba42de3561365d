//! `drydock bench apiserver` over plain HTTP and over HTTPS with client certificates: both
//! complete every phase and report their figures.

use std::process::Command;

use serde_json::Value;

fn bench(tls: bool) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("bench.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_drydock"));
    cmd.args(["bench", "apiserver", "--objects", "400", "--writers", "8", "--watchers", "2"])
        .args(["--watch-writes", "100", "--sync", "normal", "--json"])
        .arg(&json);
    if tls {
        cmd.arg("--tls");
    }
    let out = cmd.output().expect("drydock bench apiserver");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let over = if tls { "HTTPS with client certificates" } else { "plain HTTP" };
    assert!(stdout.contains(over), "{stdout}");
    serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parses")
}

#[test]
fn the_api_server_bench_runs_over_plain_http_and_over_tls() {
    for tls in [false, true] {
        let doc = bench(tls);
        assert_eq!(doc["args"]["tls"], tls);
        let phases = doc["phases"].as_array().expect("phases");
        for name in ["create", "update", "get", "list"] {
            let p = phases
                .iter()
                .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with(name)))
                .unwrap_or_else(|| panic!("no {name} phase: {doc}"));
            assert!(p["ops"].as_u64() > Some(0) && p["per_second"].as_f64() > Some(0.0), "{name}: {p}");
        }
    }
}
