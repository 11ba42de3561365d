//! The error every reconciler returns, and the per-object backoff applied to it.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("encoding failed: {0}")]
    Json(#[from] serde_json::Error),
    #[error("workload cluster {cluster} is not reachable: {reason}")]
    WorkloadUnreachable { cluster: String, reason: String },
    /// An object being written was deleted meanwhile (a patch answered 404). Its deletion
    /// event brings the next reconcile of whoever watches it, so there is nothing to retry.
    #[error("{0} is gone")]
    Gone(String),
    /// A field of the reconciled object's spec cannot be used as written.
    #[error("invalid spec: {0}")]
    InvalidSpec(String),
    /// Something the reconcile needs does not exist (yet).
    #[error("{0} not found")]
    Missing(String),
    /// An object contradicts what its kind promises (a ready object without the field its
    /// readiness implies, a label its controller always sets).
    #[error("{object}: {reason}")]
    Inconsistent { object: String, reason: String },
    /// One step of a reconcile failed: `step` says which, `source` why.
    #[error("{step}: {source}")]
    Step { step: String, source: Box<Error> },
    /// The workload cluster did not answer in time.
    #[error("{what}: the workload cluster did not answer within {after:?}")]
    Timeout { what: String, after: Duration },
    /// A request could not be built.
    #[error("building a {verb} request: {source}")]
    Request { verb: &'static str, source: kube::core::request::Error },
    /// The task running a reconcile ended abnormally (it panicked or was cancelled).
    #[error("reconcile task failed: {0}")]
    Task(String),
    /// A certificate or key could not be made or read.
    #[error(transparent)]
    Pki(#[from] drydock_api::pki::PkiError),
    /// A Runtime Extension call failed.
    #[error(transparent)]
    Extension(#[from] crate::runtime_sdk::Error),
}

impl Error {
    /// True when a Runtime Extension call failed, in any step.
    pub fn is_extension(&self) -> bool {
        match self {
            Self::Extension(_) => true,
            Self::Step { source, .. } => source.is_extension(),
            _ => false,
        }
    }

    /// Wraps the error of a failed step with what the step was.
    pub fn during<E: Into<Error>>(step: impl Into<String>) -> impl FnOnce(E) -> Error {
        move |e| Error::Step { step: step.into(), source: Box::new(e.into()) }
    }

    pub fn inconsistent(object: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Inconsistent { object: object.into(), reason: reason.into() }
    }

    /// True for 409 Conflict: another writer won; retry soon without alarm.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Kube(kube::Error::Api(s)) if s.code == 409)
    }

    /// True when the reconciled object itself is gone ([`Error::Gone`]).
    pub fn is_gone(&self) -> bool {
        matches!(self, Self::Gone(_))
    }

    /// True for 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Kube(kube::Error::Api(s)) if s.code == 404)
    }

    /// True when something the reconcile needs does not exist ([`Error::Missing`]), at
    /// whatever step.
    pub fn is_missing(&self) -> bool {
        match self {
            Self::Missing(_) => true,
            Self::Step { source, .. } => source.is_missing(),
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Exponential backoff per object, reset when the object reconciles cleanly
/// (kube-rs' error policy is not told about successes, so the runner keeps the count).
#[derive(Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl Backoff {
    /// Records a failure of `key` and returns how long to wait: 50 ms doubling to 30 s, with jitter.
    pub fn fail(&self, key: &str) -> Duration {
        let mut f = self.failures.lock();
        let n = f.entry(key.to_string()).or_insert(0);
        *n = (*n + 1).min(20);
        let base = 50u64.saturating_mul(1 << (*n - 1).min(10)).min(30_000);
        let jitter = rand::random::<u64>() % (base / 5 + 1);
        Duration::from_millis(base + jitter)
    }

    pub fn succeed(&self, key: &str) {
        let mut f = self.failures.lock();
        if !f.is_empty() {
            f.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_resets() {
        let b = Backoff::default();
        let first = b.fail("a");
        let mut last = first;
        for _ in 0..5 {
            last = b.fail("a");
        }
        assert!(last > first);
        b.succeed("a");
        assert!(b.fail("a") < last);
        for _ in 0..30 {
            last = b.fail("b");
        }
        assert!(last <= Duration::from_millis(36_000));
    }
}
