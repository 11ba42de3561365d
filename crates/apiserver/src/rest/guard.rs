//! Checks a caller adds to a write, run on the object as it would be stored.

use serde_json::Value;

use crate::error::ApiResult;

/// A check the caller adds to a write (the API server's: that an RBAC object grants no more
/// than its writer holds), given the object as it would be stored.
#[derive(Clone)]
pub struct WriteGuard(pub std::sync::Arc<GuardFn>);

/// What a [`WriteGuard`] runs.
pub type GuardFn = dyn Fn(&Value) -> ApiResult<()> + Send + Sync;

impl std::fmt::Debug for WriteGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteGuard")
    }
}

impl WriteGuard {
    pub(super) fn check(guard: Option<&Self>, obj: &Value) -> ApiResult<()> {
        guard.map_or(Ok(()), |g| (g.0)(obj))
    }
}
