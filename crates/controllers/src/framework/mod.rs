//! What every controller shares: errors and backoff, the patch helper, shared informers,
//! the runner with metrics, and events.

pub mod clock;
pub mod diff;
pub mod error;
pub mod events;
pub mod fresh;
pub mod informer;
pub mod metrics;
pub mod patch;
pub mod requeue;
pub mod runner;

pub use clock::Clock;
pub use error::{Error, Result};
pub use requeue::Requeue;
