use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use http::{Request, Response, StatusCode};
use kube::client::Body;

use super::*;
use crate::framework::fake_api::FakeSecrets;

fn at(start: Timestamp, secs: i64) -> Timestamp {
    start + jiff::SignedDuration::from_secs(secs)
}

#[test]
fn verdicts_follow_the_grace_period_and_the_failure_threshold() {
    let t0 = Timestamp::UNIX_EPOCH;
    let fresh = Health::default();
    assert_eq!(fresh.verdict(t0), Verdict::NotYet, "never probed");
    let failing = Health { last_probe: Some(t0), last_success: None, failures: 4 };
    assert_eq!(failing.verdict(t0), Verdict::NotYet, "fewer than 5 failures and no success yet");
    let failed = Health { failures: 5, ..failing };
    assert_eq!(failed.verdict(t0), Verdict::Failed { last_success: None });
    let ok = Health { last_probe: Some(t0), last_success: Some(t0), failures: 0 };
    assert_eq!(ok.verdict(at(t0, 50)), Verdict::Succeeded, "within the grace period");
    let since = Health { failures: 3, ..ok };
    assert_eq!(since.verdict(at(t0, 50)), Verdict::Succeeded, "failures within the grace period do not count");
    assert_eq!(since.verdict(at(t0, 51)), Verdict::Failed { last_success: Some(t0) });
}

/// A workload API server that answers `/api` while `up`, counting the requests.
struct Server {
    up: Arc<AtomicBool>,
    asked: Arc<AtomicUsize>,
}

impl Server {
    fn client(&self) -> kube::Client {
        let (up, asked) = (self.up.clone(), self.asked.clone());
        let service = tower::service_fn(move |req: Request<Body>| {
            let (up, asked) = (up.clone(), asked.clone());
            async move {
                asked.fetch_add(1, Ordering::SeqCst);
                let ok = up.load(Ordering::SeqCst) && req.uri().path() == "/api";
                let (code, body) = if ok {
                    (StatusCode::OK, r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}"#)
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "{}")
                };
                Ok::<_, Infallible>(
                    Response::builder().status(code).body(Body::from(body.as_bytes().to_vec())).expect("response"),
                )
            }
        });
        kube::Client::new(service, "default")
    }
}

#[tokio::test]
async fn the_cluster_is_woken_when_the_verdict_changes_and_only_then() {
    let fake = FakeSecrets::new();
    let server = Server { up: Arc::new(AtomicBool::new(true)), asked: Arc::default() };
    let ctx = fake.workload_context("ns", "c1", server.client());
    let probes = Probes::new(ctx.clone());
    let c1 = || vec![("ns".to_string(), "c1".to_string())];
    let asked = || server.asked.load(Ordering::SeqCst);
    let t0 = ctx.clock().now();

    // The reconcile that finds the control plane initialized probes at once.
    assert_eq!(probes.verdict("ns", "c1").await, Verdict::Succeeded);
    assert_eq!(asked(), 1);
    assert_eq!(probes.verdict("ns", "c1").await, Verdict::Succeeded);
    assert!(probes.round(c1()).await.is_empty(), "not due, nothing changed");
    assert_eq!(asked(), 1, "known: not probed again");

    // Down: True for the grace period, then False once, naming the last success.
    server.up.store(false, Ordering::SeqCst);
    for step in 1..=5 {
        ctx.clock().advance(INTERVAL);
        assert!(probes.round(c1()).await.is_empty(), "still within the grace period");
        assert_eq!(asked(), 1 + step);
    }
    ctx.clock().advance(INTERVAL);
    assert_eq!(probes.round(c1()).await, c1(), "past the grace period: woken");
    assert_eq!(probes.verdict("ns", "c1").await, Verdict::Failed { last_success: Some(t0) });
    ctx.clock().advance(INTERVAL);
    assert!(probes.round(c1()).await.is_empty(), "still failed: not woken again");

    // Up again: woken at the next probe.
    server.up.store(true, Ordering::SeqCst);
    ctx.clock().advance(INTERVAL);
    assert_eq!(probes.round(c1()).await, c1());
    assert_eq!(probes.verdict("ns", "c1").await, Verdict::Succeeded);

    // A Cluster no longer initialized (or gone) is forgotten.
    assert!(probes.round(Vec::new()).await.is_empty());
    let before = asked();
    assert_eq!(probes.verdict("ns", "c1").await, Verdict::Succeeded);
    assert_eq!(asked(), before + 1, "probed afresh");
}
