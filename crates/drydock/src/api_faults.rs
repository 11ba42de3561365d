//! Faults on the controllers' API calls, for chaos runs (`drydock bench --chaos`): a share
//! of their requests, to the management cluster and to workload clusters, is answered 503
//! (as an overloaded API server answers), and a share is delayed. The draws come from a
//! seeded generator, but which requests they hit depends on the order requests arrive in:
//! the rates repeat from run to run, the victims do not.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

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
    pub errors: AtomicU64,
    pub delays: AtomicU64,
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
            errors: AtomicU64::new(0),
            delays: AtomicU64::new(0),
        })
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

    /// `client`, its requests going through these faults.
    pub fn wrap(self: &Arc<Self>, client: kube::Client) -> kube::Client {
        let ns = client.default_namespace().to_string();
        kube::Client::new(Faulty { inner: client, faults: self.clone() }, ns)
    }
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
}

impl tower::Service<Request<Body>> for Faulty {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let (inner, faults) = (self.inner.clone(), self.faults.clone());
        Box::pin(async move {
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
}
