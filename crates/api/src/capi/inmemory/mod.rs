//! `infrastructure.cluster.x-k8s.io/v1alpha1`: the in-memory infrastructure provider's kinds.

mod admission;
mod cluster;
mod machine;

pub(crate) use admission::{
    InMemoryClusterAdmission, InMemoryClusterTemplateAdmission, InMemoryMachineAdmission,
    InMemoryMachineTemplateAdmission, validate_components,
};
pub use cluster::*;
pub use machine::*;
