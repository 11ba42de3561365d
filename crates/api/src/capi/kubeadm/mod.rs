//! Kubeadm-based bootstrap (`bootstrap.cluster.x-k8s.io/v1beta1`) and control plane
//! (`controlplane.cluster.x-k8s.io/v1beta1`). Both embed [`KubeadmConfigSpec`].

mod cloud_init;
mod cluster_configuration;
mod config;
mod config_admission;
mod config_template;
mod control_plane;
mod control_plane_admission;
mod control_plane_template;
mod control_plane_update;
mod node_configuration;
mod rollout_checks;
mod spec_checks;

pub use cloud_init::*;
pub use cluster_configuration::*;
pub use config::*;
pub(crate) use config_admission::{KubeadmConfigAdmission, KubeadmConfigTemplateAdmission};
pub use config_template::*;
pub use control_plane::*;
pub(crate) use control_plane_admission::{KubeadmControlPlaneAdmission, KubeadmControlPlaneTemplateAdmission};
pub use control_plane_template::*;
pub use node_configuration::*;
pub use rollout_checks::{MIN_CERTIFICATES_EXPIRY_DAYS, ROLLING_UPDATE};
