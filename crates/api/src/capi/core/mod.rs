//! `cluster.x-k8s.io/v1beta1`: the core Cluster API kinds.

mod checks;
mod cluster;
mod clusterclass;
mod machine;
mod machine_admission;
mod machinedeployment;
mod machinedeployment_admission;
mod machinedrainrule;
mod machinehealthcheck;
mod machinepool;
mod machineset;
mod machineset_admission;
mod replicas;
mod topology;
mod variable_schema;

pub use cluster::*;
pub use clusterclass::*;
pub use machine::*;
pub use machine_admission::DEFAULT_NODE_DELETION_TIMEOUT;
pub(crate) use machine_admission::MachineAdmission;
pub use machinedeployment::*;
pub(crate) use machinedeployment_admission::MachineDeploymentAdmission;
pub use machinedeployment_admission::{
    DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, DEFAULT_PROGRESS_DEADLINE_SECONDS, DEFAULT_REVISION_HISTORY_LIMIT,
};
pub use machinedrainrule::*;
pub use machinehealthcheck::*;
pub use machinepool::*;
pub use machineset::*;
pub(crate) use machineset_admission::MachineSetAdmission;
pub use topology::*;
pub use variable_schema::*;
