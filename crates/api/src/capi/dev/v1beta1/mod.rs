//! `infrastructure.cluster.x-k8s.io/v1beta1` Dev kinds: served deprecated, as upstream, and
//! the version drydock stores (the provider works on these types).

mod cluster;
mod machine;

pub use cluster::*;
pub use machine::*;
