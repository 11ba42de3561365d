//! Scale hygiene: an idle, fully provisioned fleet makes no API writes for 30 s, and the
//! Prometheus metrics users know (`kubectl get --raw /metrics`) move while it provisions.

mod common;

use std::time::{Duration, Instant};

use common::{Env, kubectl_ok};

/// Sum of a metric family's samples in Prometheus text, optionally only lines containing `filter`.
fn sum(text: &str, family: &str, filter: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(family) && (l.len() == family.len() || l[family.len()..].starts_with(['{', ' '])))
        .filter(|l| l.contains(filter))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_fleet_makes_no_writes_and_metrics_move() {
    let env = Env::start(true).await;
    let kc = env.kubeconfig(None);
    let before = kubectl_ok(&kc, &["get", "--raw", "/metrics"], None);

    let manifest = common::generated_fleet(10, 3, |i| format!("idle{i}"));
    kubectl_ok(&kc, &["apply", "-f", "-"], Some(&manifest));
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let out = kubectl_ok(&kc, &["get", "machines", "-o", "jsonpath={.items[*].status.phase}"], None);
        if out.split_whitespace().filter(|p| *p == "Running").count() == 40 {
            break;
        }
        assert!(Instant::now() < deadline, "fleet did not provision: {out}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The metrics moved while the fleet provisioned.
    let during = kubectl_ok(&kc, &["get", "--raw", "/metrics"], None);
    for (family, filter) in [
        ("apiserver_request_total", "verb=\"POST\""),
        ("apiserver_request_duration_seconds_count", ""),
        ("controller_runtime_reconcile_total", "controller=\"machine\""),
        ("controller_runtime_reconcile_time_seconds_count", ""),
        ("drydock_store_commit_batch_size_count", ""),
        ("apiserver_watch_events_total", ""),
    ] {
        assert!(sum(&during, family, filter) > sum(&before, family, filter), "{family}{{{filter}}} did not move");
    }
    assert!(during.contains("workqueue_depth{"), "workqueue_depth missing");
    assert!(during.contains("controller_runtime_reconcile_errors_total"), "errors counter missing");

    // Let the last status updates settle: wait for a quiet second, then watch 30 s of idleness.
    let store = env.instance.server.api.store.clone();
    let mut last = store.revision();
    let mut quiet_since = Instant::now();
    while quiet_since.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = store.revision();
        if now != last {
            last = now;
            quiet_since = Instant::now();
        }
        assert!(Instant::now() < deadline + Duration::from_secs(60), "the fleet never went quiet");
    }
    let start = store.revision();
    let writes_before =
        sum(&kubectl_ok(&kc, &["get", "--raw", "/metrics"], None), "drydock_controller_writes_total", "");
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(store.revision(), start, "an idle fleet wrote to the store");
    let writes_after =
        sum(&kubectl_ok(&kc, &["get", "--raw", "/metrics"], None), "drydock_controller_writes_total", "");
    assert_eq!(writes_after, writes_before, "controllers issued writes while idle");
}
