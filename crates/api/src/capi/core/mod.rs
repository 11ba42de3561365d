//! `cluster.x-k8s.io/v1beta1`: the core Cluster API kinds.

mod cluster;
mod clusterclass;
mod machine;
mod machinedeployment;
mod machinedrainrule;
mod machinehealthcheck;
mod machinepool;
mod machineset;
mod topology;
mod variable_schema;

pub use cluster::*;
pub use clusterclass::*;
pub use machine::*;
pub use machinedeployment::*;
pub use machinedrainrule::*;
pub use machinehealthcheck::*;
pub use machinepool::*;
pub use machineset::*;
pub use topology::*;
pub use variable_schema::*;
