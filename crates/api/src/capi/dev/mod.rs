//! `infrastructure.cluster.x-k8s.io` Dev kinds: upstream's test provider (v1.14), whose
//! `spec.backend.inMemory` is the in-memory provider and `spec.backend.docker` runs
//! containers. drydock simulates both in memory (the docker backend with a warning).
//!
//! - [`v1beta1`]: DevCluster, DevClusterTemplate, DevMachine, DevMachineTemplate, served
//!   deprecated and stored; the provider reads and writes these types.
//! - [`v1beta2`]: the same kinds (the hub of [`conversion`]), plus DevMachinePool and
//!   DevMachinePoolTemplate, served in v1beta2 only.
//! - [`backend`]: the backend settings both versions share.

mod admission;
pub mod backend;
pub mod conversion;
pub mod v1beta1;
pub mod v1beta2;

pub(crate) use admission::{
    DevClusterAdmission, DevClusterTemplateAdmission, DevMachineAdmission, DevMachinePoolAdmission,
    DevMachinePoolTemplateAdmission, DevMachineTemplateAdmission, template_spec_path, validate_endpoint,
};
