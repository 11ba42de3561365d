//! `drydock bench --clusterclass` provisions, upgrades and deletes a fleet of topology
//! Clusters (tiny here): every phase completes and reports real figures.

use std::process::Command;

use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusterclass_fleet_provisions_upgrades_and_deletes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("fleet.json");
    let out = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["bench", "--clusters", "3", "--workers", "2", "--clusterclass", "--upgrade", "--delete", "--json"])
            .arg(&json)
            .output()
            .expect("run drydock")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("as topologies of one ClusterClass"), "{stdout}");
    assert!(stdout.contains("topology"), "the topology controller reconciled: {stdout}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).expect("results")).expect("json");
    let phases: Vec<&str> = doc["phases"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(phases, ["provision", "upgrade", "delete"]);
    for p in doc["phases"].as_array().into_iter().flatten() {
        assert!(p["clusters_per_second"].as_f64().is_some_and(|v| v > 0.0), "{p}");
    }
    assert_eq!(doc["machines"], 9);
}
