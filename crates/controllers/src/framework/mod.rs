//! The toolkit every controller is built from. No controller module imports another; what
//! two controllers share lives here.
//!
//! - Running: [`runner`] (queue, workers, metrics), [`informer`] (shared watches and
//!   stores), [`error`] (typed errors and backoff), [`requeue`] (when to look again),
//!   [`clock`] (the one clock, which tests pause), [`coalesce`] (one reconcile for a burst
//!   of triggers that only refresh a summary).
//! - Reading: [`index`] (small indexes beside the stores, change detection),
//!   [`cluster_index`] (objects by cluster), [`nodes`] (Nodes of every workload cluster
//!   through one watch), [`referenced`] (infrastructure, bootstrap and control plane
//!   objects a Cluster or Machine references), [`contract`] (the version of a provider
//!   kind that implements the Cluster API contract), [`fresh`] (skipping reconciles of copies
//!   older than this controller's own last write).
//! - Writing: [`write`] (the one writer: diff, write object then status, count writes),
//!   [`apply`] (server-side apply of the fields a controller owns, skipped when it would
//!   change nothing),
//!   [`diff`] (merge patches), [`serialized`] (objects serialized member by member, for diffing), [`expectations`] (creations and deletions not yet seen),
//!   [`events`], [`propagate`] (labels, annotations and node timeouts to referenced
//!   objects), [`templates`] (owner references on templates), [`names`] (generated names),
//!   [`cascade`] (an owner's finalizer held until its children are deleted).
//! - Shared models: [`pause`] (the pause model of every controller), [`objects`] (small
//!   facts about Cluster API objects), [`certificates`] (the cluster certificate secrets the
//!   kubeadm control plane and bootstrap providers generate and read).
//! - Tests: `fake_api` (an in-memory Secrets API behind a `kube::Client`).

pub mod apply;
pub mod cascade;
pub mod certificates;
pub mod clock;
pub mod cluster_index;
pub mod coalesce;
pub mod contract;
pub mod diff;
pub mod error;
pub mod events;
pub mod expectations;
#[cfg(test)]
pub mod fake_api;
pub mod fresh;
pub mod index;
pub mod informer;
pub mod machine_template;
pub mod metrics;
pub mod names;
pub mod node_patch;
pub mod node_reader;
pub mod nodes;
pub mod objects;
pub mod pause;
pub mod propagate;
pub mod referenced;
pub mod requeue;
pub mod runner;
pub mod scaling;
pub mod select;
pub mod serialized;
pub mod templates;
pub mod write;

pub use clock::Clock;
pub use error::{Error, Result};
pub use requeue::Requeue;
