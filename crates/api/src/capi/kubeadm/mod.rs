//! Kubeadm-based bootstrap (`bootstrap.cluster.x-k8s.io`) and control plane
//! (`controlplane.cluster.x-k8s.io`). Both embed a `KubeadmConfigSpec`. The types here are
//! v1beta1 (still served, deprecated); [`v1beta2`] holds the v1beta2 types of both groups,
//! the stored version, which the admission of all four kinds is written for;
//! [`conversion`] converts between the versions.

mod cloud_init;
mod cluster_configuration;
mod config;
mod config_admission;
mod config_template;
mod control_plane;
mod control_plane_admission;
mod control_plane_template;
mod control_plane_update;
pub mod conversion;
mod node_configuration;
mod rollout_checks;
mod spec_checks;
pub mod v1beta2;

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
