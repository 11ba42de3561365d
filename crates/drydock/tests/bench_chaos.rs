//! `drydock bench --chaos`: a small fleet of three-machine control planes under a harsh
//! profile provisions, upgrades and is deleted. About half the workers get a fault (failed
//! provisioning, Nodes NotReady and Unknown, slow starts, flapping Nodes), control plane
//! machines lose their etcd member or win an etcd election, half the clusters' API servers
//! are out of reach for a spell, the controllers restart twice, and 2% of their API calls
//! fail and 5% are slow. Every scheduled fault strikes (or its Machine went before it could,
//! which the report counts apart), every lastingly faulted Machine is replaced by its health
//! check, and every invariant holds and was checked. (That a seed always draws the same
//! schedule is the schedule's unit test.)

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const HARSH: &str = r"name: harsh
faults: {failedProvisioning: 0.1, nodeNotReady: 0.1, nodeUnknown: 0.1, slowStart: 0.1, nodeFlapping: 0.1,
         etcdMemberLoss: 0.2, etcdLeaderChange: 0.2}
strikeAfter: {min: 0s, max: 2s}
slowStart: 3s
flapping: {times: 2, spell: 300ms}
healthCheck: {nodeStartupTimeout: 30s, unhealthyTimeout: 2s}
controllerRestarts: {count: 2, within: 6s}
apiFaults: {errorRate: 0.02, latencyRate: 0.05, latency: 50ms}
unreachable: {share: 0.5, spell: 3s}
";

fn bench(profile: &Path, json: &Path, extra: &[&str]) -> (String, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_drydock"))
        .args([
            "bench",
            "--clusters",
            "4",
            "--control-plane-machines",
            "3",
            "--workers",
            "3",
            "--seed",
            "8",
            "--timeout",
            "600",
            "--chaos",
        ])
        .arg(profile)
        .args(extra)
        .arg("--json")
        .arg(json)
        .output()
        .expect("run drydock");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(json).expect("results")).expect("json");
    (stdout, doc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_under_chaos_converges_with_every_invariant_holding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("harsh.yaml");
    std::fs::write(&profile, HARSH).expect("profile");
    let json = dir.path().join("fleet.json");
    let (stdout, doc) = tokio::task::block_in_place(|| bench(&profile, &json, &["--upgrade", "--delete"]));

    let chaos = &doc["chaos"];
    let total = |m: &Value| m.as_object().into_iter().flatten().filter_map(|(_, n)| n.as_u64()).sum::<u64>();
    let scheduled = total(&chaos["scheduled"]);
    assert!(scheduled >= 2, "the seed schedules faults: {chaos}");
    let count = |what: &str, kind: &str| chaos[what][kind].as_u64().unwrap_or(0);
    for (kind, n) in chaos["scheduled"].as_object().into_iter().flatten() {
        let n = n.as_u64().unwrap_or(0);
        assert_eq!(count("injected", kind) + count("moot", kind), n, "every {kind} struck or went moot: {chaos}");
        assert!(count("injected", kind) > 0, "{kind} struck: {chaos}");
    }
    for kind in ["etcd-member-loss", "etcd-leader-change"] {
        assert!(count("scheduled", kind) > 0, "the seed schedules {kind}: {chaos}");
    }
    let lasting: u64 = ["failed-provisioning", "node-not-ready", "node-unknown", "etcd-member-loss"]
        .iter()
        .map(|k| count("injected", k))
        .sum();
    assert!(lasting >= 1, "{chaos}");
    assert_eq!(chaos["remediated"].as_u64(), Some(lasting), "every lastingly faulted Machine was replaced");
    assert_eq!(chaos["controllerRestarts"], serde_json::json!([2, 2]), "the controllers restarted twice");
    assert!(chaos["apiCallsFailed"].as_u64().is_some_and(|n| n > 0), "API calls failed: {chaos}");
    assert!(chaos["apiCallsDelayed"].as_u64().is_some_and(|n| n > 0), "API calls delayed: {chaos}");
    let spells = &chaos["unreachableSpells"];
    assert!(spells[0].as_u64().is_some_and(|n| n > 0), "clusters out of reach: {chaos}");
    assert_eq!(spells[0], spells[1], "every spell ended");
    assert!(chaos["unreachableCalls"].as_u64().is_some_and(|n| n > 0), "calls refused: {chaos}");
    for i in chaos["invariants"].as_array().into_iter().flatten() {
        assert_eq!(i["violations"], 0, "{i}");
        assert!(i["checks"].as_u64().is_some_and(|n| n > 0), "exercised: {i}");
    }
    assert_eq!(chaos["invariants"].as_array().map(Vec::len), Some(6));
    let digest = chaos["scheduleDigest"].as_str().expect("digest");
    assert!(stdout.contains(&format!("schedule {digest}")), "{stdout}");
    let phases: Vec<&str> = doc["phases"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(phases, ["provision", "upgrade", "delete"]);
}
