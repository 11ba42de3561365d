//! `drydock bench stores` runs the API server bench and the fleet bench on each store and
//! reports them side by side: here SQLite and a real one-member etcd, with tiny loads. The
//! figures must be real runs' (positive), whatever their values.

use crate::common;

use std::process::Command;

use serde_json::Value;

use common::etcd::EtcdCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_benches_run_on_every_store_and_are_reported_side_by_side() {
    let etcd = EtcdCluster::start(1).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("stores.json");
    let url = etcd.store_url();
    let out = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_drydock"))
            .args(["bench", "stores", "--store", "sqlite", "--store", &url, "--objects", "300", "--json"])
            .arg(&json)
            .args(["--", "--clusters", "2", "--workers", "1"])
            .output()
            .expect("run drydock")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("FLEET CLUSTERS/S") && stdout.contains(&url), "{stdout}");

    let doc: Value = serde_json::from_slice(&std::fs::read(&json).expect("results")).expect("json");
    let stores = doc["stores"].as_array().expect("stores");
    let names: Vec<&str> = stores.iter().filter_map(|s| s["store"].as_str()).collect();
    assert_eq!(names, ["sqlite", url.as_str()]);
    for s in stores {
        for (phase, figure) in
            [("create", "per_second"), ("create", "p99_ms"), ("update", "per_second"), ("fleet", "clusters_per_second")]
        {
            assert!(s[phase][figure].as_f64().is_some_and(|v| v > 0.0), "{phase}.{figure} of {s}");
        }
    }
}

#[test]
fn stores_refuses_a_store_flag_meant_for_the_runs() {
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args(["bench", "stores", "--store", "sqlite", "--", "--store", "etcd://127.0.0.1:1"])
        .output()
        .expect("run drydock");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("belong before `--`"), "{out:?}");
}
