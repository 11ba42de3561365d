//! `drydock bench compare` runs the fleet bench of two binaries alternately and reports each
//! run and the medians' ratio. Both sides are this build here: the figures must be real
//! runs' (positive, per binary), whatever their values.

use std::process::Command;

use serde_json::Value;

#[test]
fn compare_runs_both_binaries_alternately_and_reports_medians() {
    let exe = env!("CARGO_BIN_EXE_drydock");
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("compare.json");
    let out = Command::new(exe)
        .args(["bench", "compare", "--against", exe, "--rounds", "2", "--json"])
        .arg(&json)
        .args(["--", "--clusters", "2", "--workers", "1"])
        .output()
        .expect("run drydock");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("MEDIAN") && stdout.contains("THIS/OTHER") && stdout.contains("PER ROUND"), "{stdout}");

    let doc: Value = serde_json::from_slice(&std::fs::read(&json).expect("results")).expect("json");
    let runs = doc["runs"].as_array().expect("runs");
    // Two rounds, each binary once per round, the first going first in round 1 only.
    let order: Vec<(u64, &str)> =
        runs.iter().map(|r| (r["round"].as_u64().unwrap_or(0), r["binary"].as_str().unwrap_or(""))).collect();
    assert_eq!(order, [(1, "this"), (1, "other"), (2, "other"), (2, "this")]);
    for r in runs {
        for f in ["seconds", "cpu_seconds", "writes_per_machine", "peak_rss_mib"] {
            assert!(r[f].as_f64().is_some_and(|v| v > 0.0), "{f} of {r}");
        }
    }
    let medians = doc["medians"].as_array().expect("medians");
    let figures: Vec<&str> = medians.iter().filter_map(|m| m["figure"].as_str()).collect();
    assert_eq!(figures, ["seconds", "cpu_seconds", "writes_per_machine", "peak_rss_mib"]);
    for m in medians {
        let (this, other, ratio) = (m["this"].as_f64(), m["other"].as_f64(), m["ratio"].as_f64());
        let (Some(this), Some(other), Some(ratio)) = (this, other, ratio) else { panic!("{m}") };
        assert!(this > 0.0 && other > 0.0 && (ratio - this / other).abs() < 1e-9, "{m}");
        // The median of the rounds' own ratios, read back from the runs.
        let of = |round: u64, side: &str| {
            runs.iter()
                .find(|r| r["round"] == round && r["binary"] == side)
                .and_then(|r| r[m["figure"].as_str()?].as_f64())
        };
        let per_round: Vec<f64> = (1..=2).filter_map(|round| Some(of(round, "this")? / of(round, "other")?)).collect();
        let paired = m["paired_ratio"].as_f64().expect("paired_ratio");
        assert!((paired - (per_round[0] + per_round[1]) / 2.0).abs() < 1e-9, "{m} from {per_round:?}");
    }
}

#[test]
fn compare_refuses_a_json_flag_meant_for_the_runs() {
    let exe = env!("CARGO_BIN_EXE_drydock");
    let out = Command::new(exe)
        .args(["bench", "compare", "--against", exe, "--", "--json", "x.json"])
        .output()
        .expect("run drydock");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--json belongs before `--`"), "{err}");
}
