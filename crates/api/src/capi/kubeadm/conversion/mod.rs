//! Conversions of the kubeadm kinds between v1beta1 and v1beta2 (the hub).

mod config;
mod config_spec;
mod control_plane;
mod control_plane_template;
mod kubeadm_spec;

#[cfg(test)]
mod config_tests;
#[cfg(test)]
mod control_plane_tests;

pub use config::{KubeadmConfigConversion, KubeadmConfigTemplateConversion};
pub use control_plane::KubeadmControlPlaneConversion;
pub use control_plane_template::KubeadmControlPlaneTemplateConversion;
pub use kubeadm_spec::cluster_configuration_up;
