//! Kubeadm-based bootstrap (`bootstrap.cluster.x-k8s.io/v1beta1`) and control plane
//! (`controlplane.cluster.x-k8s.io/v1beta1`). Both embed [`KubeadmConfigSpec`].

mod cloud_init;
mod cluster_configuration;
mod config;
mod config_template;
mod control_plane;
mod control_plane_template;
mod node_configuration;

pub use cloud_init::*;
pub use cluster_configuration::*;
pub use config::*;
pub use config_template::*;
pub use control_plane::*;
pub use control_plane_template::*;
pub use node_configuration::*;
