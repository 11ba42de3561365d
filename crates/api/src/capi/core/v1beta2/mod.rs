//! `cluster.x-k8s.io/v1beta2`: the core kinds as Cluster API v1.11+ serves and stores them
//! (the hub of conversion; [`super::conversion`] converts to and from v1beta1).

mod cluster;
mod clusterclass;
mod clusterclass_variables;
mod machine;
mod machinedeployment;
mod machinedrainrule;
mod machinehealthcheck;
mod machinepool;
mod machineset;
mod topology;

pub use cluster::*;
pub use clusterclass::*;
pub use clusterclass_variables::*;
pub use machine::*;
pub use machinedeployment::*;
pub use machinedrainrule::*;
pub use machinehealthcheck::*;
pub use machinepool::*;
pub use machineset::*;
pub use topology::*;
