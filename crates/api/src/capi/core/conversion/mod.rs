//! Conversions of the core kinds between v1beta1 and v1beta2 (the hub).

mod cluster;
mod clusterclass;
mod machinedrainrule;
mod topology;

pub use cluster::ClusterConversion;
pub use clusterclass::ClusterClassConversion;
pub use machinedrainrule::MachineDrainRuleConversion;
