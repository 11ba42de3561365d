//! Faults on the controllers' API calls, for chaos runs (`drydock bench --chaos`): a share
//! of their requests, to the management cluster and to workload clusters, is answered 503
//! (as an overloaded API server answers), and a share is delayed. The draws come from a
//! seeded generator, but which requests they hit depends on the order requests arrive in:
//! the rates repeat from run to run, the victims do not. A workload cluster can also be
//! cut off for a while: every call to it then fails as a refused connection does.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::client::Body;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What a chaos run does to API calls, and what it did.
#[derive(Debug)]
pub struct ApiFaults {
    error_rate: f64,
    latency_rate: f64,
    latency: Duration,
    rng: Mutex<StdRng>,
    /// Logical cluster → until when its API server cannot be reached.
    cut_off: Mutex<HashMap<String, Instant>>,
    pub errors: AtomicU64,
    pub delays: AtomicU64,
    /// Calls refused because their workload cluster was cut off.
    pub unreachable: AtomicU64,
}

enum Draw {
    Pass,
    Fail,
    Delay,
}

impl ApiFaults {
    pub fn new(error_rate: f64, latency_rate: f64, latency: Duration, seed: u64) -> Arc<Self> {
        Arc::new(Self {
            error_rate,
            latency_rate,
            latency,
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
            cut_off: Mutex::new(HashMap::new()),
            errors: AtomicU64::new(0),
            delays: AtomicU64::new(0),
            unreachable: AtomicU64::new(0),
        })
    }

    /// Makes the API server of logical cluster `cluster` unreachable for `spell`.
    pub fn cut_off(&self, cluster: &str, spell: Duration) {
        self.cut_off.lock().insert(cluster.to_string(), Instant::now() + spell);
    }

    fn reachable(&self, cluster: Option<&str>) -> bool {
        let Some(cluster) = cluster else { return true };
        let mut cut = self.cut_off.lock();
        match cut.get(cluster) {
            Some(until) if Instant::now() < *until => {
                self.unreachable.fetch_add(1, Ordering::Relaxed);
                false
            }
            Some(_) => {
                cut.remove(cluster);
                true
            }
            None => true,
        }
    }

    fn draw(&self) -> Draw {
        let u: f64 = self.rng.lock().random();
        if u < self.error_rate {
            self.errors.fetch_add(1, Ordering::Relaxed);
            Draw::Fail
        } else if u < self.error_rate + self.latency_rate {
            self.delays.fetch_add(1, Ordering::Relaxed);
            Draw::Delay
        } else {
            Draw::Pass
        }
    }

    /// `client` (of the management cluster), its requests going through these faults.
    pub fn wrap(self: &Arc<Self>, client: kube::Client) -> kube::Client {
        let ns = client.default_namespace().to_string();
        kube::Client::new(Faulty { inner: client, faults: self.clone(), cluster: None }, ns)
    }

    /// `client` of the workload cluster hosted as logical cluster `cluster`, its requests
    /// going through these faults (and refused while the cluster is cut off).
    pub fn wrap_cluster(self: &Arc<Self>, client: kube::Client, cluster: &str) -> kube::Client {
        let ns = client.default_namespace().to_string();
        kube::Client::new(Faulty { inner: client, faults: self.clone(), cluster: Some(cluster.to_string()) }, ns)
    }
}

/// The error of a call to an API server that cannot be reached.
fn refused(cluster: &str) -> kube::Error {
    let e = std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("connection refused: the API server of {cluster} is out of reach (injected by drydock bench --chaos)"),
    );
    kube::Error::Service(Box::new(e))
}

/// The 503 an overloaded API server answers, as a Kubernetes Status.
fn unavailable() -> Response<Body> {
    let status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 503,
        "reason": "ServiceUnavailable",
        "message": "the server is currently unable to handle the request (injected by drydock bench --chaos)",
    });
    let mut r = Response::new(Body::from(serde_json::to_vec(&status).unwrap_or_default()));
    *r.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    r.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    r
}

#[derive(Clone)]
struct Faulty {
    inner: kube::Client,
    faults: Arc<ApiFaults>,
    /// The workload cluster the client calls (`None`: the management cluster).
    cluster: Option<String>,
}

impl tower::Service<Request<Body>> for Faulty {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let (inner, faults, cluster) = (self.inner.clone(), self.faults.clone(), self.cluster.clone());
        Box::pin(async move {
            if !faults.reachable(cluster.as_deref()) {
                return Err(refused(cluster.as_deref().unwrap_or_default()));
            }
            match faults.draw() {
                Draw::Fail => Ok(unavailable()),
                Draw::Delay => {
                    tokio::time::sleep(faults.latency).await;
                    inner.send(req).await
                }
                Draw::Pass => inner.send(req).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_rates() {
        let f = ApiFaults::new(0.1, 0.2, Duration::from_millis(1), 7);
        for _ in 0..10_000 {
            f.draw();
        }
        let (errors, delays) = (f.errors.load(Ordering::Relaxed), f.delays.load(Ordering::Relaxed));
        assert!((800..1200).contains(&errors), "{errors} errors of 10,000 at 10%");
        assert!((1700..2300).contains(&delays), "{delays} delays of 10,000 at 20%");
        assert_eq!(unavailable().status(), 503);
    }

    #[test]
    fn a_cut_off_cluster_is_unreachable_for_its_spell_only() {
        let f = ApiFaults::new(0.0, 0.0, Duration::ZERO, 1);
        f.cut_off("default-a", Duration::from_millis(200));
        assert!(!f.reachable(Some("default-a")));
        assert!(f.reachable(Some("default-b")), "other clusters answer");
        assert!(f.reachable(None), "the management cluster answers");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !f.reachable(Some("default-a")) {
            assert!(Instant::now() < deadline, "still unreachable after its spell");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(f.unreachable.load(Ordering::Relaxed) >= 1);
        assert!(refused("default-a").to_string().contains("out of reach"));
    }
}
