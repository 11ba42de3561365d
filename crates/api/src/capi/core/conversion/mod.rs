//! Conversions of the core kinds between v1beta1 and v1beta2 (the hub).

mod cluster;
mod clusterclass;
#[cfg(test)]
mod fixtures;
mod machine;
mod machinedeployment;
mod machinedrainrule;
mod machinehealthcheck;
mod machinepool;
mod machineset;
mod topology;

pub use cluster::ClusterConversion;
pub use clusterclass::ClusterClassConversion;
pub use machine::MachineConversion;
pub use machinedeployment::{DEFAULT_REVISION_HISTORY_LIMIT, MachineDeploymentConversion, revision_history_limit};
pub use machinedrainrule::MachineDrainRuleConversion;
pub use machinehealthcheck::MachineHealthCheckConversion;
pub use machinepool::MachinePoolConversion;
pub use machineset::MachineSetConversion;
