//! `infrastructure.cluster.x-k8s.io/v1alpha1`: the in-memory infrastructure provider's kinds.

mod cluster;
mod machine;

pub use cluster::*;
pub use machine::*;
