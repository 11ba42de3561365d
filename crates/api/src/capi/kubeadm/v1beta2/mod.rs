//! `bootstrap.cluster.x-k8s.io/v1beta2` and `controlplane.cluster.x-k8s.io/v1beta2`: the
//! kubeadm kinds as Cluster API v1.11+ serves and stores them (the hub of conversion;
//! [`super::conversion`] converts to and from v1beta1). The embedded kubeadm configuration
//! follows kubeadm's v1beta4 API: argument lists instead of maps, timeouts in seconds.
//!
//! Sub-types whose shape did not change are the v1beta1 ones, re-exported from the parent
//! module.

mod cluster_configuration;
mod config;
mod config_spec;
mod control_plane;
mod control_plane_template;
mod node_configuration;

pub use cluster_configuration::*;
pub use config::*;
pub use config_spec::*;
pub use control_plane::*;
pub use control_plane_template::*;
pub use node_configuration::*;
