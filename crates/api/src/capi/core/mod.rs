//! `cluster.x-k8s.io/v1beta1`: the core Cluster API kinds.

mod checks;
mod cluster;
mod cluster_admission;
mod clusterclass;
mod clusterclass_admission;
pub mod conversion;
mod healthcheck_checks;
mod machine;
mod machine_admission;
mod machinedeployment;
mod machinedeployment_admission;
mod machinedrainrule;
mod machinedrainrule_admission;
mod machinehealthcheck;
mod machinehealthcheck_admission;
mod machinepool;
mod machinepool_admission;
mod machineset;
mod machineset_admission;
mod replicas;
mod topology;
pub mod v1beta2;
mod variable_schema;

pub use cluster::*;
pub(crate) use cluster_admission::ClusterAdmission;
pub use clusterclass::*;
pub(crate) use clusterclass_admission::ClusterClassAdmission;
pub use healthcheck_checks::{MIN_NODE_STARTUP_TIMEOUT, parse_unhealthy_range};
pub use machine::*;
pub use machine_admission::DEFAULT_NODE_DELETION_TIMEOUT_SECONDS;
pub(crate) use machine_admission::MachineAdmission;
pub use machinedeployment::*;
pub(crate) use machinedeployment_admission::MachineDeploymentAdmission;
pub use machinedeployment_admission::{
    DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, DEFAULT_PROGRESS_DEADLINE_SECONDS, DEFAULT_REVISION_HISTORY_LIMIT,
};
pub use machinedrainrule::*;
pub(crate) use machinedrainrule_admission::MachineDrainRuleAdmission;
pub use machinehealthcheck::*;
pub(crate) use machinehealthcheck_admission::MachineHealthCheckAdmission;
pub use machinehealthcheck_admission::{DEFAULT_MAX_UNHEALTHY, DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS};
pub use machinepool::*;
pub(crate) use machinepool_admission::MachinePoolAdmission;
pub use machineset::*;
pub(crate) use machineset_admission::MachineSetAdmission;
pub use topology::*;
pub use variable_schema::*;
